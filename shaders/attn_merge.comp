#version 460
// attn_merge.comp - attn_kv.comp's key splits combined (SPLIT, bench/35): split z of column c and
// q head h left its unnormalised output o_z [HD], its maximum score m_z and its sum of
// exp(score - m_z) l_z; out = Σ_z o_z·e^(m_z - M) / Σ_z l_z·e^(m_z - M), M = max_z m_z (a split
// with no key has m_z = -inf, l_z = 0, o_z = 0 and drops out), gated: out ⊙ σ(gate).
// part: f32 [cols][n_h][nspl][HD], then f32 [cols][n_h][nspl][2] (m, l); q (gated: the gates),
// dst f32 [cols][n_h*HD]. Grid: x = q head, y = column; an invocation a vec4 of the head.
#include "kern_common.glsl"

layout(constant_id = 0) const uint HD = 64; // head dim, a multiple of 4
layout(local_size_x = 64) in;

layout(push_constant) uniform Push {
    F32Buf part;
    F32Buf q;
    F32Buf dst;
    uint n_h;
    uint nspl;
    uint gated;
    uint cols;
} p;

void main()
{
    uint h = gl_WorkGroupID.x, c = gl_WorkGroupID.y, hd4 = HD / 4u;
    uint base = (c * p.n_h + h) * p.nspl;
    F32Buf ml = F32Buf(uint64_t(p.part) + 4ul * (uint64_t(p.cols) * p.n_h * p.nspl * HD));
    float mx = -1.0 / 0.0;
    for (uint z = 0u; z < p.nspl; z++) mx = max(mx, ml.v[2u * (base + z)]);
    float tot = 0.0;
    for (uint z = 0u; z < p.nspl; z++) tot += ml.v[2u * (base + z) + 1u] * exp(ml.v[2u * (base + z)] - mx);
    for (uint u = gl_LocalInvocationIndex; u < hd4; u += 64u) {
        vec4 o = vec4(0.0);
        for (uint z = 0u; z < p.nspl; z++)
            o += Vec4Buf(uint64_t(p.part)).v[(base + z) * hd4 + u] * exp(ml.v[2u * (base + z)] - mx);
        o /= tot;
        if (p.gated != 0u) {
            uint go = (c * p.n_h + h) * 2u * HD + HD + 4u * u;
            o /= 1.0 + exp(-vec4(act_get(uint64_t(p.q), go), act_get(uint64_t(p.q), go + 1u),
                                 act_get(uint64_t(p.q), go + 2u), act_get(uint64_t(p.q), go + 3u)));
        }
        act_set4(uint64_t(p.dst), (c * p.n_h + h) * hd4 + u, o);
    }
}
