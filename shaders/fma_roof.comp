#version 460
// fma_roof.comp - the f32 FMA rate of the device with no memory traffic: the roof of the wide
// plan's gemm where it runs its FMA twin (no cooperative matrices; gpu_tensor_roof, roof.c). Each
// invocation of a 128-thread workgroup runs `iters` rounds of 8 independent vec4 fused multiply-adds
// on registers, then writes one f32 (a sum over the 8 results) so that nothing is folded away.
// FLOP = groups · 128 · iters · 8 · 4 · 2. Push block as coopmat_roof.comp's.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(local_size_x = 128) in;
layout(push_constant) uniform Push {
    F32Buf out_;  // [groups · 128]
    uint iters;
    float seed;   // nonzero: the multiplier's value
} p;

void main()
{
    vec4 a = vec4(p.seed), b = vec4(1.0 - p.seed * 1e-3);
    vec4 c[8];
    [[unroll]] for (uint j = 0u; j < 8u; j++) c[j] = vec4(float(j + gl_LocalInvocationIndex));
    for (uint i = 0u; i < p.iters; i++)
        [[unroll]] for (uint j = 0u; j < 8u; j++) c[j] = fma(c[j], b, a);
    vec4 s = vec4(0.0);
    [[unroll]] for (uint j = 0u; j < 8u; j++) s += c[j];
    p.out_.v[gl_GlobalInvocationID.x] = s.x + s.y + s.z + s.w;
}
