#version 460
// matmul.comp - y[c][n] (+)= Σ_k W[n][k]·x'[c][k] for the COLS columns of one pass, all rows n;
// x' = x, or its RMSNorm g ⊙ x / rms(x) when a gain is given (fused input norm). With SWIGLU the
// kernel reads a second weight W3 of the same shape and writes silu(W x')·(W3 x').
// W: [rows][k], type WTYPE (compile-time, kern_common.glsl codes), device layout of kernels.h.
// x: f32 [COLS][k], y: f32 [COLS][rows]; accumulation in f32.
//
// Geometry: a workgroup owns R consecutive rows and is NSG subgroups of SG lanes; the workgroup's
// lanes split k in 16-byte "slots" (8 bf16/f16, 4 f32, 16 q8_0, 32 q4_0 elements), lane i of the
// workgroup taking slots i, i + NSG·SG, ..., so each weight load instruction of a subgroup reads
// contiguous 16-byte vectors and every weight byte is read once per pass. x is read as vec4s
// straight from memory (small, served by the caches to every workgroup); each x vec4 serves the
// R rows (register blocking over rows). No barrier until the end: the lanes' partial sums are
// reduced with subgroupAdd, then across the subgroups through shared memory. With a norm, the
// gain scales the weights as they are widened, each lane also sums x² of its slots (reduced the
// same way), and the inverse rms scales the final sums (one factor per column).
// Grid: x = ceil(rows / R).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "kern_common.glsl"

#ifndef WTYPE
#define WTYPE DT_BF16
#endif
#ifndef SWIGLU
#define SWIGLU 0
#endif

#if WTYPE == DT_F32
#define G 4u
#elif WTYPE == DT_F16 || WTYPE == DT_BF16
#define G 8u
#elif WTYPE == DT_Q8_0
#define G 16u
#else
#define G 32u
#endif
#define G4 (G / 4u)
#define MAXR 8
#define MAXC 16

layout(constant_id = 0) const uint SG = 32;  // subgroup size of the device
layout(constant_id = 1) const uint NSG = 4;  // subgroups per workgroup (they split k)
layout(constant_id = 2) const uint R = 4;    // rows per workgroup (<= MAXR)
layout(constant_id = 3) const uint COLS = 1; // columns of this pass (<= MAXC)
layout(local_size_x_id = 4) in;              // SG * NSG

#if SWIGLU
const uint NACC = 2u * R + 1u; // partial sums kept per column: W rows, W3 rows, x²
#else
const uint NACC = R + 1u;
#endif

layout(push_constant) uniform Push {
    uint64_t w;       // W quant / plain bytes
    uint64_t wscale;  // f16 scales [rows][k/32] (Q types)
    uint64_t w3;      // SWIGLU: the up weight
    uint64_t w3scale;
    uint64_t x;       // f32 [COLS][k], 16-byte aligned
    F32Buf y;         // [COLS][rows]
    uint64_t gain;    // norm gain [k], 0: no norm
    uint rows;
    uint k;
    uint accumulate;  // y += result
    uint gdtype;      // gain dtype
    float eps;
    uint plus1;       // gain is (1 + g)
} p;

shared float red[NSG * NACC * COLS]; // per subgroup: [NACC][COLS] partial sums

// The 4 elements j4*4 .. j4*4+3 of a 16-byte slot, widened (sc: the block scale for Q types).
vec4 unpack4(uvec4 raw, float sc, uint j4)
{
#if WTYPE == DT_F32
    return uintBitsToFloat(raw);
#elif WTYPE == DT_F16
    uvec2 h = j4 == 0u ? raw.xy : raw.zw;
    return vec4(unpackHalf2x16(h.x), unpackHalf2x16(h.y));
#elif WTYPE == DT_BF16
    uvec2 h = j4 == 0u ? raw.xy : raw.zw;
    return vec4(bf16_lo(h.x), bf16_hi(h.x), bf16_lo(h.y), bf16_hi(h.y));
#elif WTYPE == DT_Q8_0
    int q = int(raw[j4]);
    return vec4(bitfieldExtract(q, 0, 8), bitfieldExtract(q, 8, 8), bitfieldExtract(q, 16, 8),
                bitfieldExtract(q, 24, 8)) * sc;
#else
    uint q = raw[j4 & 3u] >> (j4 >= 4u ? 4u : 0u);
    return (vec4(q & 15u, (q >> 8) & 15u, (q >> 16) & 15u, (q >> 24) & 15u) - 8.0) * sc;
#endif
}

float block_scale(uint64_t sbase, uint64_t slot_index)
{
#if WTYPE == DT_Q8_0
    return float(F16Buf(sbase + 2ul * (slot_index / 2ul)).v[0]);
#elif WTYPE == DT_Q4_0
    return float(F16Buf(sbase + 2ul * slot_index).v[0]);
#else
    return 1.0;
#endif
}

void main()
{
    uint lane = gl_SubgroupInvocationID, sg = gl_SubgroupID, tid = gl_LocalInvocationIndex;
    uint row0 = gl_WorkGroupID.x * R;
    uint row_slots = p.k / G;
    bool norm = p.gain != 0ul;

    float acc[MAXR][MAXC];
#if SWIGLU
    float acc3[MAXR][MAXC];
#endif
    float ss[MAXC];
    uint64_t slot0[MAXR]; // index of the first slot of each row (rows past the end: the last row)
    for (uint r = 0u; r < R; r++) {
        slot0[r] = uint64_t(min(row0 + r, p.rows - 1u)) * row_slots;
        for (uint c = 0u; c < COLS; c++) {
            acc[r][c] = 0.0;
#if SWIGLU
            acc3[r][c] = 0.0;
#endif
        }
    }
    for (uint c = 0u; c < COLS; c++) ss[c] = 0.0;
    float one = p.plus1 != 0u ? 1.0 : 0.0;

    for (uint s = tid; s < row_slots; s += SG * NSG) {
        uvec4 raw[MAXR];
        float sc[MAXR];
#if SWIGLU
        uvec4 raw3[MAXR];
        float sc3[MAXR];
#endif
        for (uint r = 0u; r < R; r++) {
            uint64_t si = slot0[r] + s;
            raw[r] = UVec4Buf(p.w + 16ul * si).v[0];
            sc[r] = block_scale(p.wscale, si);
#if SWIGLU
            raw3[r] = UVec4Buf(p.w3 + 16ul * si).v[0];
            sc3[r] = block_scale(p.w3scale, si);
#endif
        }
        for (uint j4 = 0u; j4 < G4; j4++) {
            uint k4 = s * G4 + j4; // vec4 index of these 4 elements in a row of x
            vec4 gv = vec4(1.0);
            if (norm) {
                uint k0 = 4u * k4;
                gv = one + vec4(wget1(p.gain, p.gdtype, k0), wget1(p.gain, p.gdtype, k0 + 1u),
                                wget1(p.gain, p.gdtype, k0 + 2u), wget1(p.gain, p.gdtype, k0 + 3u));
            }
            vec4 wv[MAXR];
#if SWIGLU
            vec4 wv3[MAXR];
#endif
            for (uint r = 0u; r < R; r++) {
                wv[r] = unpack4(raw[r], sc[r], j4) * gv;
#if SWIGLU
                wv3[r] = unpack4(raw3[r], sc3[r], j4) * gv;
#endif
            }
            for (uint c = 0u; c < COLS; c++) {
                vec4 xv = Vec4Buf(p.x + 16ul * (uint64_t(c) * (p.k / 4u) + k4)).v[0];
                if (norm) ss[c] += dot(xv, xv);
                for (uint r = 0u; r < R; r++) {
                    acc[r][c] += dot(wv[r], xv);
#if SWIGLU
                    acc3[r][c] += dot(wv3[r], xv);
#endif
                }
            }
        }
    }

    // reduce: lanes by subgroupAdd, subgroups through shared memory
    for (uint c = 0u; c < COLS; c++) {
        for (uint r = 0u; r < R; r++) {
            float v = subgroupAdd(acc[r][c]);
            if (lane == 0u) red[(sg * NACC + r) * COLS + c] = v;
#if SWIGLU
            float v3 = subgroupAdd(acc3[r][c]);
            if (lane == 0u) red[(sg * NACC + R + r) * COLS + c] = v3;
#endif
        }
        if (norm) {
            float v = subgroupAdd(ss[c]);
            if (lane == 0u) red[(sg * NACC + NACC - 1u) * COLS + c] = v;
        }
    }
    barrier();
    for (uint i = tid; i < R * COLS; i += SG * NSG) {
        uint r = i / COLS, c = i % COLS, row = row0 + r;
        if (row >= p.rows) continue;
        float v = 0.0, v3 = 0.0, sq = 0.0;
        for (uint s = 0u; s < NSG; s++) {
            v += red[(s * NACC + r) * COLS + c];
#if SWIGLU
            v3 += red[(s * NACC + R + r) * COLS + c];
#endif
            sq += red[(s * NACC + NACC - 1u) * COLS + c];
        }
        if (norm) {
            float f = inversesqrt(sq / float(p.k) + p.eps);
            v *= f;
            v3 *= f;
        }
#if SWIGLU
        v = v / (1.0 + exp(-v)) * v3;
#endif
        uint o = c * p.rows + row;
        if (p.accumulate != 0u) v += p.y.v[o];
        p.y.v[o] = v;
    }
}
