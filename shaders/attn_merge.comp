#version 460
// attn_merge.comp - attn_kv.comp's key splits combined (SPLIT, bench/35): split z of column c and
// q head h left its unnormalised output o_z [HD], its maximum score m_z and its sum of
// exp(score - m_z) l_z; out = Σ_z o_z·e^(m_z - M) / Σ_z l_z·e^(m_z - M), M = max_z m_z (a split
// with no key has m_z = -inf, l_z = 0, o_z = 0 and drops out), gated: out ⊙ σ(gate).
// part: f32 [cols][n_h][nspl][HD], then f32 [cols][n_h][nspl][2] (m, l); q (gated: the gates),
// dst f32 [cols][n_h*HD]. Grid: x = q head, y = column. The splits' maxima and sums are taken by
// the workgroup's invocations side by side (subgroup reductions), and the outputs by ZL split
// lanes of HD/4 invocations (a vec4 each), four splits' loads in flight, meeting in shared memory:
// no serial chain of loads over the splits.
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "kern_common.glsl"

layout(constant_id = 0) const uint HD = 64; // head dim, a multiple of 4, <= 256
layout(local_size_x = 64) in;
const uint NT = 64u, HD4 = HD / 4u, ZL = NT / HD4, ZB = 4u;

layout(push_constant) uniform Push {
    F32Buf part;
    F32Buf q;
    F32Buf dst;
    uint n_h;
    uint nspl;
    uint gated;
    uint cols;
} p;

shared float s_r[NT];
shared vec4 s_o[NT];

// The workgroup's max (op 0) or sum (op 1) of v, every invocation gets it.
float wg_reduce(float v, uint op)
{
    v = op == 0u ? subgroupMax(v) : subgroupAdd(v);
    if (gl_SubgroupInvocationID == 0u) s_r[gl_SubgroupID] = v;
    barrier();
    float r = s_r[0];
    for (uint i = 1u; i < gl_NumSubgroups; i++) r = op == 0u ? max(r, s_r[i]) : r + s_r[i];
    barrier();
    return r;
}

void main()
{
    uint t = gl_LocalInvocationIndex, h = gl_WorkGroupID.x, c = gl_WorkGroupID.y;
    uint base = (c * p.n_h + h) * p.nspl;
    F32Buf ml = F32Buf(uint64_t(p.part) + 4ul * (uint64_t(p.cols) * p.n_h * p.nspl * HD));
    float mx = -1.0 / 0.0;
    for (uint z = t; z < p.nspl; z += NT) mx = max(mx, ml.v[2u * (base + z)]);
    mx = wg_reduce(mx, 0u);
    float tot = 0.0;
    for (uint z = t; z < p.nspl; z += NT) tot += ml.v[2u * (base + z) + 1u] * exp(ml.v[2u * (base + z)] - mx);
    tot = wg_reduce(tot, 1u);
    uint zl = t / HD4, u = t % HD4;
    vec4 o = vec4(0.0);
    if (zl < ZL)
        for (uint z0 = zl; z0 < p.nspl; z0 += ZL * ZB) {
            vec4 v[ZB];
            float w[ZB];
            [[unroll]] for (uint b = 0u; b < ZB; b++) {
                uint z = z0 + b * ZL;
                v[b] = z < p.nspl ? Vec4Buf(uint64_t(p.part)).v[(base + z) * HD4 + u] : vec4(0.0);
                w[b] = z < p.nspl ? ml.v[2u * (base + z)] : mx;
            }
            [[unroll]] for (uint b = 0u; b < ZB; b++) o += v[b] * exp(w[b] - mx);
        }
    s_o[t] = o;
    barrier();
    if (t >= HD4) return;
    for (uint i = 1u; i < ZL; i++) o += s_o[i * HD4 + u];
    o /= tot;
    if (p.gated != 0u) {
        uint go = (c * p.n_h + h) * 2u * HD + HD + 4u * u;
        o /= 1.0 + exp(-vec4(act_get(uint64_t(p.q), go), act_get(uint64_t(p.q), go + 1u),
                             act_get(uint64_t(p.q), go + 2u), act_get(uint64_t(p.q), go + 3u)));
    }
    act_set4(uint64_t(p.dst), (c * p.n_h + h) * HD4 + u, o);
}
