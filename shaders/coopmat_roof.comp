#version 460
// coopmat_roof.comp - the cooperative-matrix rate of the device with no memory traffic: the tensor
// roof the report measures where the wide plan's gemm runs on cooperative matrices (roof.c
// gpu_tensor_roof; also bench/gemm_bench.c). Each subgroup (of 32) of a 128-thread workgroup runs
// `iters` rounds of 8 independent 16×16×16 f16 × f16 + f32 products on fragments held in
// registers, then writes one f32 per invocation (a sum over the 8 results) so that nothing is
// folded away. FLOP = groups · 4 · iters · 8 · 2·16³.
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#include "common.glsl"
#include "coopmat.glsl" // NV v1, or KHR with COOPMAT_KHR=1 (the gemm's two paths)

layout(local_size_x = 128) in;
layout(push_constant) uniform Push {
    F32Buf out_;  // [groups · 128]
    uint iters;
    float seed;   // nonzero: the fragments' value
} p;

shared float sC[4u * 256u];


void main()
{
    CM_A a = CM_A(float16_t(p.seed));
    CM_B b = CM_B(float16_t(p.seed * 0.5));
    CM_C c[8];
    [[unroll]] for (uint j = 0u; j < 8u; j++) c[j] = CM_C(float(j));
    for (uint i = 0u; i < p.iters; i++)
        [[unroll]] for (uint j = 0u; j < 8u; j++) c[j] = cm_muladd(a, b, c[j]);
    uint sg = gl_LocalInvocationIndex / 32u;
    float s = 0.0;
    [[unroll]] for (uint j = 0u; j < 8u; j++) {
        cm_store_cols(c[j], sC, sg * 256u, 16u);
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        s += sC[sg * 256u + gl_LocalInvocationIndex % 32u];
        subgroupBarrier();
    }
    p.out_.v[gl_GlobalInvocationID.x] = s;
}
