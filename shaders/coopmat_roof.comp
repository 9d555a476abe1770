#version 460
// coopmat_roof.comp - the cooperative-matrix rate of the device with no memory traffic: the tensor
// roof the report measures where the wide plan's gemm runs on cooperative matrices (roof.c
// gpu_tensor_roof; also bench/gemm_bench.c). Each subgroup (of 32) of a 128-thread workgroup runs
// `iters` rounds of 8 independent 16×16×16 f16 × f16 + f32 products on fragments held in
// registers, then writes one f32 per invocation (a sum over the 8 results) so that nothing is
// folded away. FLOP = groups · 4 · iters · 8 · 2·16³.
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#include "common.glsl"

layout(local_size_x = 128) in;
layout(push_constant) uniform Push {
    F32Buf out_;  // [groups · 128]
    uint iters;
    float seed;   // nonzero: the fragments' value
} p;

shared float sC[4u * 256u];

#define F16MAT fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define F32MAT fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>

void main()
{
    F16MAT a = F16MAT(float16_t(p.seed)), b = F16MAT(float16_t(p.seed * 0.5));
    F32MAT c[8];
    [[unroll]] for (uint j = 0u; j < 8u; j++) c[j] = F32MAT(float(j));
    for (uint i = 0u; i < p.iters; i++)
        [[unroll]] for (uint j = 0u; j < 8u; j++) c[j] = coopMatMulAddNV(a, b, c[j]);
    uint sg = gl_LocalInvocationIndex / 32u;
    float s = 0.0;
    [[unroll]] for (uint j = 0u; j < 8u; j++) {
        coopMatStoreNV(c[j], sC, sg * 256u, 16u, false);
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        s += sC[sg * 256u + gl_LocalInvocationIndex % 32u];
        subgroupBarrier();
    }
    p.out_.v[gl_GlobalInvocationID.x] = s;
}
