#version 460
// gemm_wdeq.comp - Q4_0 weights widened into an f16 copy for the wide plan's gemm (gemm.c
// gemm_wdeq): from K_GEMM_WDEQ_COLS columns a Q4_0 product is this dispatch and gemm.comp's F16
// product on the copy, so each 32-block is dequantized once a step instead of once per column tile
// (bench/33). q·d (exact in f32) is rounded to f16 to nearest: the rounding gemm.comp's Q4_0 tile
// applies, so both routes give the same weights.
// Up to 4 weights a dispatch: weight j owns the grid's blocks [start[j], start[j + 1]) and its copy,
// f16 [rows][k] row-major (the F16 device layout), is at dst[j]; start[j + 1] = start[j] for
// unused ones. A Q4_0 weight's 32-blocks are consecutive in row-major order (kern_common.glsl's
// layout), so block i of weight j is elements 32 i .. 32 i + 31 of its copy.
// Grid: workgroup g = x + y · groups_x (x is capped at 65535 groups) takes blocks 64 · BPT · g ..
// 64 · BPT · (g + 1) - 1, lane t those at t + 64 r (r < BPT).
#extension GL_EXT_control_flow_attributes : require
#define WTYPE DT_Q4_0
#include "kern_common.glsl"
#include "wslot.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint BPT = 1; // blocks a lane, loads issued together (gemm.c; select.c sel_gemm_wdeq_bpt)

layout(push_constant) uniform Push {
    uint64_t w[4];   // quant bytes
    uint64_t sc[4];  // f16 scales, one a block
    uint64_t dst[4]; // f16 copies
    uint start[5];   // start[4]: blocks in all
} p;

void main()
{
    uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x, b0 = g * 64u * BPT + gl_LocalInvocationID.x;
    uvec4 raw[BPT];
    float sc[BPT];
    uint jw[BPT], iw[BPT];
    [[unroll]] for (uint r = 0u; r < BPT; r++) { // every load first
        uint b = min(b0 + 64u * r, p.start[4] - 1u);
        jw[r] = b < p.start[1] ? 0u : b < p.start[2] ? 1u : b < p.start[3] ? 2u : 3u;
        iw[r] = b - p.start[jw[r]];
        raw[r] = UVec4Buf(p.w[jw[r]]).v[iw[r]];
        sc[r] = float(F16Buf(p.sc[jw[r]]).v[iw[r]]);
    }
    [[unroll]] for (uint r = 0u; r < BPT; r++) {
        if (b0 + 64u * r >= p.start[4]) break;
        UVec4Buf o = UVec4Buf(p.dst[jw[r]] + 64ul * uint64_t(iw[r]));
        // quarters 2q and 2q + 1 of the block (wslot.glsl) are elements 8q .. 8q + 7: one 16-byte
        // store (a lane a store, the subgroup's stores contiguous, took 14 % longer: bench/33)
        [[unroll]] for (uint q = 0u; q < 4u; q++) {
            vec4 a = unpack4(raw[r], sc[r], 2u * q), c = unpack4(raw[r], sc[r], 2u * q + 1u);
            o.v[q] = uvec4(packHalf2x16(a.xy), packHalf2x16(a.zw), packHalf2x16(c.xy), packHalf2x16(c.zw));
        }
    }
}
