#version 460
// rmsnorm.comp - y[r][:] = w ⊙ x[src][:] / sqrt(mean(x[src]²) + eps), (1 + w) when plus1;
// src = idx[r] when idx is set (gather of the columns that want logits), else r. With accumulate
// the result is added into y (GLM's post-norms: h += rms(t, w), the residual after the norm).
// x, y: f32 rows of dim; w: [dim] F32/F16/BF16. Grid: one workgroup per output row.
// GATED variant (rmsnorm_gated, the DeltaNet's output norm): y[r][i] also times silu(z[r][i]),
// z f32 rows of dim like y (x may be y: each element is read before it is written).
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "kern_common.glsl"

#ifndef GATED
#define GATED 0
#endif

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
    F32Buf x;
    F32Buf y;
    uint64_t w;
    U32Buf idx; // 0: no gather
    uint dim;
    uint wdtype;
    float eps;
    uint flags; // 1: the gain is (1 + w); 2: accumulate (y += result)
#if GATED
    F32Buf z;
#endif
} p;

shared float partial[256];

void main()
{
    uint r = gl_WorkGroupID.x, t = gl_LocalInvocationIndex;
    uint src = uint64_t(p.idx) != 0ul ? p.idx.v[r] : r;
    F32Buf xr = F32Buf(uint64_t(p.x) + 4ul * uint64_t(src) * p.dim);
    F32Buf yr = F32Buf(uint64_t(p.y) + 4ul * uint64_t(r) * p.dim);
    float ss = 0.0;
    for (uint i = t; i < p.dim; i += 256u) {
        float v = act_get(uint64_t(xr), i);
        ss += v * v;
    }
    ss = subgroupAdd(ss);
    if (gl_SubgroupInvocationID == 0u) partial[gl_SubgroupID] = ss;
    barrier();
    float total = 0.0;
    for (uint s = 0u; s < gl_NumSubgroups; s++) total += partial[s];
    float inv = inversesqrt(total / float(p.dim) + p.eps);
    float one = (p.flags & 1u) != 0u ? 1.0 : 0.0;
    bool acc = (p.flags & 2u) != 0u;
    for (uint i = t; i < p.dim; i += 256u) {
        float v = (one + wget1(p.w, p.wdtype, i)) * act_get(uint64_t(xr), i) * inv;
#if GATED
        float zv = act_get(uint64_t(p.z) + 4ul * uint64_t(r) * p.dim, i);
        v *= zv / (1.0 + exp(-zv));
#endif
        act_set(uint64_t(yr), i, acc ? act_get(uint64_t(yr), i) + v : v);
    }
}
