#version 460
// gemm_xprep.comp - the activations of one wide-plan matrix product, made once per product so that
// gemm.comp stages them with a plain copy: x' = x, or its RMSNorm g ⊙ x / rms(x) ((1 + g) with
// plus1), written 16 bytes per 4 elements [cols][k/4]:
//  - SPLIT=1 (the cooperative-matrix gemm): uvec4(hi01, hi23, lo01, lo23), each x' cut into an f16
//    high part (its top 11 significant bits, by masking: gemm.comp's header says why) and the f16
//    of the rest, x' = hi + lo to 22 significant bits;
//  - SERVING=1 (the cooperative-matrix gemm's serving variant): uvec4(x01, x23, 0, 0), x' rounded
//    to f16 (to nearest: packHalf2x16) in the high parts' places, so the gemm's staging is unchanged;
//  - SPLIT=0 (the FMA twin, either precision: it rounds while staging): x' as f32 (vec4);
//  - F16OUT=1 (gemm_cm2.comp's XF16 x, serving precision): x' rounded to f16 (packHalf2x16), plain
//    f16 [cols][k], 8 bytes per 4 elements (bench/39's third run: gemm_cm2 runs 4-8x faster on an
//    f16 x than decoding an f32 one in its load).
// The workgroup of column c also writes 0 to y[i][c][0 .. rows[i]) for each y[i] != 0 (a split-k
// product adds its partial sums into y, so y starts at 0 unless the product accumulates): one prep
// serves up to 4 products of the same x (gemm.c k_gemm_multi), zeroing the outputs of all of them.
// x f32 [cols][k], k a multiple of 4; g [k] F32/F16/BF16. Grid: one workgroup per column.
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "kern_common.glsl"

#ifndef SPLIT
#define SPLIT 1
#endif
#ifndef SERVING
#define SERVING 0
#endif
#ifndef F16OUT
#define F16OUT 0
#endif

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
    uint64_t x;    // f32 [cols][k]
    uint64_t xo;   // [cols][k/4] 16-byte units (F16OUT: 8-byte units)
    uint64_t gain; // 0: no norm
    uint64_t y[4]; // zeroed [cols][rows[i]] where not 0
    uint k;
    uint gdtype;
    float eps;
    uint plus1;
    uint rows[4];
} p;

layout(buffer_reference, std430, buffer_reference_align = 8) buffer UVec2Buf { uvec2 v[]; };

shared float partial[256];

// v = hi + lo with hi exact in f16 (top 11 significant bits); |v| < 65504
vec2 split(float v)
{
    float h = uintBitsToFloat(floatBitsToUint(v) & 0xffffe000u);
    return vec2(h, v - h);
}

void main()
{
    uint c = gl_WorkGroupID.x, t = gl_LocalInvocationIndex, k4 = p.k / 4u;
    uint64_t xr = p.x + 4ul * uint64_t(c) * p.k, xo = p.xo + (F16OUT != 0 ? 8ul : 16ul) * uint64_t(c) * k4;
    bool norm = p.gain != 0ul;
    float inv = 1.0;
    if (norm) {
        float ss = 0.0;
        for (uint i = t; i < k4; i += 256u) {
            vec4 v = act_get4(xr, i);
            ss += dot(v, v);
        }
        ss = subgroupAdd(ss);
        if (gl_SubgroupInvocationID == 0u) partial[gl_SubgroupID] = ss;
        barrier();
        float total = 0.0;
        for (uint s = 0u; s < gl_NumSubgroups; s++) total += partial[s];
        inv = inversesqrt(total / float(p.k) + p.eps);
    }
    float one = p.plus1 != 0u ? 1.0 : 0.0;
    for (uint i = t; i < k4; i += 256u) {
        vec4 v = act_get4(xr, i);
        if (norm) v *= (one + gain4_at(p.gain, p.gdtype, i)) * inv;
#if F16OUT
        UVec2Buf(xo).v[i] = uvec2(packHalf2x16(v.xy), packHalf2x16(v.zw));
#elif SERVING
        act_setu4(xo, i, uvec4(packHalf2x16(v.xy), packHalf2x16(v.zw), 0u, 0u));
#elif SPLIT
        vec2 a = split(v.x), b = split(v.y), cc = split(v.z), d = split(v.w);
        act_setu4(xo, i, uvec4(packHalf2x16(vec2(a.x, b.x)), packHalf2x16(vec2(cc.x, d.x)),
                               packHalf2x16(vec2(a.y, b.y)), packHalf2x16(vec2(cc.y, d.y))));
#else
        act_setu4(xo, i, floatBitsToUint(v));
#endif
    }
    for (uint o = 0u; o < 4u; o++) {
        if (p.y[o] == 0ul) continue;
        uint64_t yc = p.y[o] + 4ul * uint64_t(c) * p.rows[o];
        for (uint i = t; i < p.rows[o]; i += 256u) act_set(yc, i, 0.0);
    }
}
