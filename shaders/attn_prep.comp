#version 460
// attn_prep.comp - attention input preparation of one step, one dispatch:
//   per column c (slot s, position t) and head: q and k heads RMSNormed with gains q_norm / k_norm
//   [hd] (unless flag NORM is off; (1 + g) with PLUS1), then rotated at t (RoPE over the first
//   rope_dims of the head: NeoX pairs (i, i + rope_dims/2), or (2i, 2i+1) with INTERLEAVED;
//   inv_freq_i = theta^(-2i/rope_dims), the angle pos·inv_freq_i in f32 as torch computes it);
//   q is rotated in place; k and v go to the KV pools at
//   (s, t) through the block table.
// q: f32 [cols][n_h*hd] (flag GATED: [cols][n_h][2*hd], each head's q followed by its output
// gate, which stays untouched), k, v: f32 [cols][n_kv*hd]; pools f32 [blocks][16][n_kv*hd];
// btab u32 [slots][max_blocks].
// Grid: x = group of HPW heads of the list [q heads | k heads | v heads] (n_h + 2·n_kv), y = column;
// 256 threads, a head taking LPH = hd/4 lanes of one vec4 each (HPW = 256 / LPH heads a group: LFM2's
// 48 heads of 64 are 3 groups a column). The column's rotary sines and cosines (rope_dims/2 angles)
// are computed once a workgroup, not once a lane of every head (bench/25).
#extension GL_EXT_control_flow_attributes : require
#include "kern_common.glsl"
#include "rope.glsl"

layout(local_size_x = 256) in;

#define FLAG_NORM 1u
#define FLAG_PLUS1 2u
#define FLAG_INTERLEAVED 4u
#define FLAG_GATED 8u

layout(push_constant) uniform Push {
    F32Buf q;
    F32Buf k;
    F32Buf v;
    uint64_t qn; // q gain [hd]
    uint64_t kn; // k gain [hd]
    F32Buf kpool;
    F32Buf vpool;
    U32Buf btab;
    U32Buf cols; // struct col_meta [cols]: token, pos, slot, need_logit
    uint n_h;
    uint n_kv;
    uint hd;
    uint rope_dims;
    uint max_blocks;
    uint flags;
    uint gdtype;
    float eps;
    float r_hi; // theta^(-2/rope_dims) as a float-float pair (hi + lo), so that inv_freq_i = r^i
    float r_lo; // comes out correctly rounded in f32 (pow in f32 is off by several ulps)
} p;

shared vec4 hv[256];   // the group's heads after the norm, a vec4 a lane
shared float red[256]; // a lane's sum of squares
shared vec2 sc[128];   // sin and cos of pair i's angle at the column's position

// Rotates the pairs of the head in slot hs (lane l holding x; dims past rope_dims pass through)
// and stores it at dst (q in place, k into the pool).
void rotate(vec4 x, uint hs, uint l, uint half_rd, uint64_t dst)
{
    uint lph = p.hd / 4u;
    bool inter = (p.flags & FLAG_INTERLEAVED) != 0u;
    vec4 o = x;
    [[unroll]] for (uint e = 0u; e < 4u; e++) {
        uint i = 4u * l + e;
        if (i >= p.rope_dims) continue;
        uint partner = rope_partner(i, half_rd, inter);
        float pv = hv[hs * lph + partner / 4u][partner % 4u];
        o[e] = rope_rotate(x[e], pv, sc[rope_pair(i, half_rd, inter)], rope_first(i, half_rd, inter));
    }
    act_set4(dst, l, o);
}

void main()
{
    uint t = gl_LocalInvocationIndex, c = gl_WorkGroupID.y, hd = p.hd, lph = hd / 4u, hpw = 256u / lph;
    uint hs = t / lph, l = t % lph; // head slot in the group, lane in the head
    uint head = gl_WorkGroupID.x * hpw + hs;
    bool live = hs < hpw && head < p.n_h + 2u * p.n_kv;
    uint pos = p.cols.v[4u * c + 1u], slot = p.cols.v[4u * c + 2u];
    uint half_rd = p.rope_dims / 2u;
    for (uint i = t; i < half_rd; i += 256u) sc[i] = rope_sincos(i, pos, vec2(p.r_hi, p.r_lo));
    uint kvw = p.n_kv * hd;
    uint64_t pool_row = uint64_t(p.btab.v[slot * p.max_blocks + pos / 16u]) * 16ul + uint64_t(pos % 16u);
    uint64_t pool_off = 4ul * (pool_row * kvw); // byte offset of (slot, pos) in a pool
    bool is_q = head < p.n_h, is_v = head >= p.n_h + p.n_kv;
    uint j = is_q ? head : is_v ? head - p.n_h - p.n_kv : head - p.n_h;
    uint qstride = (p.flags & FLAG_GATED) != 0u ? 2u * hd : hd; // floats between q heads
    uint src = is_q ? (c * p.n_h + j) * qstride : c * kvw + j * hd;
    uint64_t srcb = uint64_t(is_q ? p.q : is_v ? p.v : p.k) + 4ul * src;
    vec4 x = live ? act_get4(srcb, l) : vec4(0.0);
    if (live && is_v) act_set4(uint64_t(p.vpool) + pool_off + 4ul * j * hd, l, x); // v: into the pool
    red[t] = live && !is_v ? dot(x, x) : 0.0;
    barrier(); // the sums and the angles
    if (live && !is_v && (p.flags & FLAG_NORM) != 0u) {
        float total = 0.0;
        for (uint i = 0u; i < lph; i++) total += red[hs * lph + i];
        float inv = inversesqrt(total / float(hd) + p.eps);
        float one = (p.flags & FLAG_PLUS1) != 0u ? 1.0 : 0.0;
        x *= inv * (vec4(one) + gain4_at(is_q ? p.qn : p.kn, p.gdtype, l));
    }
    hv[t] = x;
    barrier();
    if (live && !is_v) rotate(x, hs, l, half_rd, is_q ? srcb : uint64_t(p.kpool) + pool_off + 4ul * j * hd);
}
