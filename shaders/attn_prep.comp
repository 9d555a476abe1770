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
// Grid: x = head in [q heads | k heads | v heads] (n_h + 2·n_kv), y = column. 64 lanes a group.
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "kern_common.glsl"

layout(local_size_x = 64) in;

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

shared float hv[256];
shared float partial[64];

// sin and cos of a (an f32 angle, as torch computes it) after reducing a to [-pi, pi] in two steps
// (2*pi = C1 + C2, C1 with few mantissa bits), so large positions keep their accuracy.
vec2 sincos_reduced(float a)
{
    const float C1 = 6.28125, C2 = 1.9353071795864769e-3;
    float n = round(a * 0.15915494309189535);
    float r = (a - n * C1) - n * C2;
    return vec2(sin(r), cos(r));
}

// Float-float product (about 48 bits), kept exact by `precise` (no reassociation).
vec2 ff_mul(vec2 a, vec2 b)
{
    precise float hi = a.x * b.x;
    precise float lo = fma(a.x, b.x, -hi) + (a.x * b.y + a.y * b.x);
    precise float s = hi + lo;
    precise float e = lo - (s - hi);
    return vec2(s, e);
}

// theta^(-2i/rope_dims) = r^i by repeated squaring in float-float.
float inv_freq(uint i)
{
    vec2 acc = vec2(1.0, 0.0), base = vec2(p.r_hi, p.r_lo);
    for (; i != 0u; i >>= 1) {
        if ((i & 1u) != 0u) acc = ff_mul(acc, base);
        base = ff_mul(base, base);
    }
    return acc.x + acc.y;
}

void main()
{
    uint head = gl_WorkGroupID.x, c = gl_WorkGroupID.y, t = gl_LocalInvocationIndex, hd = p.hd;
    uint pos = p.cols.v[4u * c + 1u], slot = p.cols.v[4u * c + 2u];
    uint kvw = p.n_kv * hd;
    uint64_t pool_row = uint64_t(p.btab.v[slot * p.max_blocks + pos / 16u]) * 16ul + uint64_t(pos % 16u);
    uint64_t pool_off = 4ul * (pool_row * kvw); // byte offset of (slot, pos) in a pool
    if (head >= p.n_h + p.n_kv) { // v head: copy into the pool
        uint j = head - p.n_h - p.n_kv;
        F32Buf dst = F32Buf(uint64_t(p.vpool) + pool_off);
        for (uint i = t; i < hd; i += 64u) dst.v[j * hd + i] = p.v.v[c * kvw + j * hd + i];
        return;
    }
    bool is_q = head < p.n_h;
    uint j = is_q ? head : head - p.n_h;
    uint qstride = (p.flags & FLAG_GATED) != 0u ? 2u * hd : hd; // floats between q heads
    uint src = is_q ? (c * p.n_h + j) * qstride : c * kvw + j * hd;
    F32Buf buf = is_q ? p.q : p.k;
    for (uint i = t; i < hd; i += 64u) hv[i] = buf.v[src + i];
    barrier();
    if ((p.flags & FLAG_NORM) != 0u) {
        float ss = 0.0;
        for (uint i = t; i < hd; i += 64u) ss += hv[i] * hv[i];
        ss = subgroupAdd(ss);
        if (gl_SubgroupInvocationID == 0u) partial[gl_SubgroupID] = ss;
        barrier();
        float total = 0.0;
        for (uint s = 0u; s < gl_NumSubgroups; s++) total += partial[s];
        float inv = inversesqrt(total / float(hd) + p.eps);
        float one = (p.flags & FLAG_PLUS1) != 0u ? 1.0 : 0.0;
        uint64_t gain = is_q ? p.qn : p.kn;
        for (uint i = t; i < hd; i += 64u) hv[i] = hv[i] * inv * (one + wget1(gain, p.gdtype, i));
        barrier();
    }
    // rotate the pairs; dims past rope_dims pass through
    uint half_rd = p.rope_dims / 2u;
    bool inter = (p.flags & FLAG_INTERLEAVED) != 0u;
    float out_v[4]; // hd <= 256: at most 4 elements per lane
    for (uint e = 0u; e < 4u; e++) {
        uint i = t + 64u * e;
        if (i >= hd) break;
        float r = hv[i];
        if (i < p.rope_dims) {
            uint pi = inter ? i / 2u : i % half_rd;      // pair index
            bool first = inter ? (i % 2u) == 0u : i < half_rd;
            uint partner = inter ? (i ^ 1u) : (first ? i + half_rd : i - half_rd);
            vec2 sc = sincos_reduced(float(pos) * inv_freq(pi));
            float o = hv[partner];
            r = first ? r * sc.y - o * sc.x : r * sc.y + o * sc.x;
        }
        out_v[e] = r;
    }
    F32Buf kdst = F32Buf(uint64_t(p.kpool) + pool_off);
    for (uint e = 0u; e < 4u; e++) {
        uint i = t + 64u * e;
        if (i >= hd) break;
        if (is_q) p.q.v[src + i] = out_v[e];
        else kdst.v[j * hd + i] = out_v[e];
    }
}
