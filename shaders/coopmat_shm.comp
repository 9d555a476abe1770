#version 460
// coopmat_shm.comp - bench only (bench/gemm_bench.c, bench/25): the cooperative-matrix rate when the
// fragments come from shared memory, as in gemm.comp's product loop, with nothing else in the loop
// (no global loads, no staging, no barriers). A 128-thread workgroup (2 x 2 subgroups of 32) holds
// one k step (64) of an A tile (2·16·FM rows) and of NB B tiles (2·16·FN columns: NB = 2 is the hi/lo
// pair of x) in shared memory, laid out as gemm.comp's (f16, rows 72 halves apart); each subgroup
// runs `iters` rounds over the k step: per 16-wide k slice it loads its FN·NB B fragments, then per
// row block its A fragment and FN·NB products into FM·FN accumulators. LOADS = 0 loads every
// fragment once before the loop (the same products on registers). PAD uvec4s of unused shared
// memory limit the workgroups a multiprocessor holds. FLOP = groups · 4 · iters · 4 · FM·FN·NB · 2·16³.
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#include "common.glsl"

layout(local_size_x = 128) in;
layout(constant_id = 0) const uint FM = 4;    // row blocks a subgroup
layout(constant_id = 1) const uint FN = 2;    // column blocks a subgroup
layout(constant_id = 2) const uint NB = 2;    // B parts (2: hi and lo)
layout(constant_id = 3) const uint LOADS = 1; // 0: fragments loaded once, before the loop
layout(constant_id = 4) const uint PAD = 1;   // unused shared uvec4s (occupancy)
layout(push_constant) uniform Push {
    F32Buf out_;  // [groups · 128]
    uint iters;
    float seed;
} p;

const uint BK = 64u, BKQ = (BK + 8u) / 8u;   // row pitch in uvec4 (72 halves)
const uint BM = 32u * FM, BN = 32u * FN;
shared uvec4 sA[BM * BKQ];
shared uvec4 sB[NB * BN * BKQ];
shared uvec4 sPad[PAD];
shared float sC[4u * 256u];

#define F16MAT fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define F32MAT fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>

F32MAT acc[FM][FN];

void main()
{
    uint tid = gl_LocalInvocationIndex, sg = tid / 32u, wm = sg % 2u, wn = sg / 2u;
    for (uint i = tid; i < BM * BKQ; i += 128u)
        sA[i] = uvec4(packHalf2x16(vec2(p.seed * float(i % 7u), p.seed)));
    for (uint i = tid; i < NB * BN * BKQ; i += 128u)
        sB[i] = uvec4(packHalf2x16(vec2(p.seed, p.seed * float(i % 5u))));
    if (tid < PAD) sPad[tid] = uvec4(tid);
    barrier();
    [[unroll]] for (uint i = 0u; i < FM; i++)
        [[unroll]] for (uint j = 0u; j < FN; j++) acc[i][j] = F32MAT(0.0);
    F16MAT ra[FM], rb[NB][FN];
    if (LOADS == 0u) {
        [[unroll]] for (uint i = 0u; i < FM; i++)
            coopMatLoadNV(ra[i], sA, ((wm * 16u * FM + i * 16u) * BKQ * 8u) / 8u, BKQ, false);
        [[unroll]] for (uint b = 0u; b < NB; b++)
            [[unroll]] for (uint j = 0u; j < FN; j++)
                coopMatLoadNV(rb[b][j], sB, (b * BN + wn * 16u * FN + j * 16u) * BKQ, BKQ, true);
    }
    for (uint it = 0u; it < p.iters; it++)
        [[unroll]] for (uint kk = 0u; kk < BK; kk += 16u) {
            if (LOADS != 0u)
                [[unroll]] for (uint b = 0u; b < NB; b++)
                    [[unroll]] for (uint j = 0u; j < FN; j++)
                        coopMatLoadNV(rb[b][j], sB, (b * BN + wn * 16u * FN + j * 16u) * BKQ + kk / 8u, BKQ, true);
            [[unroll]] for (uint i = 0u; i < FM; i++) {
                if (LOADS != 0u)
                    coopMatLoadNV(ra[i], sA, (wm * 16u * FM + i * 16u) * BKQ + kk / 8u, BKQ, false);
                [[unroll]] for (uint j = 0u; j < FN; j++)
                    [[unroll]] for (uint b = 0u; b < NB; b++) // the low part first, as gemm.comp
                        acc[i][j] = coopMatMulAddNV(ra[i], rb[NB - 1u - b][j], acc[i][j]);
            }
        }
    float s = tid < PAD ? float(sPad[tid].x) : 0.0;
    [[unroll]] for (uint i = 0u; i < FM; i++)
        [[unroll]] for (uint j = 0u; j < FN; j++) {
            coopMatStoreNV(acc[i][j], sC, sg * 256u, 16u, false);
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            s += sC[sg * 256u + tid % 32u];
            subgroupBarrier();
        }
    p.out_.v[gl_GlobalInvocationID.x] = s;
}
