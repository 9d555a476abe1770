#version 460
// attention.comp - causal attention of one step over the paged KV pool:
//   out[c][h] = Σ_{j <= pos(c)} softmax_j(scale · q[c][h]·k_j) · v_j
// over the keys of column c's slot (decode: one column per slot; prefill: the slot's earlier
// columns of this step were written by attn_prep before), kv head h / (n_h / n_kv) (GQA).
// q: f32 [cols][n_h*HD]; pools f32 [blocks][16][n_kv*HD]; btab u32 [slots][max_blocks];
// out: f32 [cols][n_h*HD]. Online softmax in f32.
// gated (Qwen3.5): q is [cols][n_h][2*HD], each head's q then its gate, and out = o ⊙ σ(gate).
// Geometry: one workgroup per (q head, column) (grid x = head, y = column); its NSG subgroups take
// keys j = sg, sg + NSG, ...; within a subgroup each lane holds HD/SG elements of q and of the
// output (q·k by subgroupAdd); the subgroups' (max, sum, acc) are merged through shared memory.
// PREP = 1 (kind attn.decode_prep, kernels.h k_attn_step): attn_prep.comp's work fused in, for steps
// whose slots hold one column each (decode): the workgroup RMSNorms and rotates its q head and its
// kv head's k of this column itself (rope.glsl, as attn_prep does), uses them and v for the key at
// pos from shared memory, and the workgroup of the kv head's first q head writes k and v into the
// pools at (slot, pos). Every other key j < pos was written by earlier steps, so no workgroup reads
// what another writes. q is not written back.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "kern_common.glsl"
#include "rope.glsl"

#define MAXE 32 // HD / SG at most: 256 / 8

layout(constant_id = 0) const uint SG = 32; // subgroup size of the device
layout(constant_id = 1) const uint HD = 64; // head dim, a multiple of SG, <= 256
layout(constant_id = 2) const uint NSG = 4; // subgroups per workgroup
layout(local_size_x_id = 3) in;             // SG * NSG
layout(constant_id = 4) const uint PREP = 0; // 1: the prep fused in (above)

const uint E = HD / SG;

layout(push_constant) uniform Push {
    F32Buf q;
    uint64_t kpool;
    uint64_t vpool;
    U32Buf btab;
    U32Buf cols; // struct col_meta [cols]: token, pos, slot, need_logit
    F32Buf dst;
    uint n_h;
    uint n_kv;
    uint max_blocks;
    float scale;
    uint gated;
    uint pad;
    // PREP only (attn_prep.comp's fields): this step's k and v [cols][n_kv*HD], the q/k norm gains
    F32Buf k;
    F32Buf v;
    uint64_t qn;
    uint64_t kn;
    uint pflags; // 1 norm, 2 gain is (1 + g), 4 interleaved pairs; gains' dtype << 4; rope_dims << 8
    float eps;
    float r_hi; // theta^(-2/rope_dims) as hi + lo (rope.glsl)
    float r_lo;
} p;

const uint PH = PREP != 0u ? HD : 1u;
shared float s_q[PH], s_k[PH], s_v[PH], s_qr[PH], s_kr[PH]; // raw q, k, v; q and k normed and rotated
shared vec2 s_sc[PREP != 0u ? HD / 2u : 1u];                // (sin, cos) of each pair at pos
shared float s_ss[2u * NSG];                                 // subgroups' Σq², Σk²

// The prep of head h (kv head kvh) at column c, position pos: s_qr, s_kr, s_v filled (barriers
// inside: every invocation calls it). Every global load (q, k, v and the gains) is issued before
// the first barrier: one memory round trip. norm(x)·g = (x ⊙ g)·f with f = rsqrt(mean(x²) + eps),
// so x ⊙ g is kept and f applied after the sums meet.
void prep(uint c, uint h, uint kvh, uint pos, uint qoff, uint kvw)
{
    uint t = gl_LocalInvocationIndex, nt = SG * NSG, rope_dims = p.pflags >> 8, half_rd = rope_dims / 2u;
    uint gdtype = (p.pflags >> 4) & 15u;
    bool inter = (p.pflags & 4u) != 0u, norm = (p.pflags & 1u) != 0u;
    float one = (p.pflags & 2u) != 0u ? 1.0 : 0.0;
    float sq = 0.0, sk = 0.0;
    for (uint d = t; d < HD; d += nt) {
        float qv = act_get(uint64_t(p.q), qoff + d), kv = act_get(uint64_t(p.k), c * kvw + kvh * HD + d);
        s_v[d] = act_get(uint64_t(p.v), c * kvw + kvh * HD + d);
        float gq = norm ? one + gain4_at(p.qn, gdtype, d / 4u)[d % 4u] : 1.0;
        float gk = norm ? one + gain4_at(p.kn, gdtype, d / 4u)[d % 4u] : 1.0;
        s_q[d] = qv * gq;
        s_k[d] = kv * gk;
        sq += qv * qv;
        sk += kv * kv;
    }
    for (uint i = t; i < half_rd; i += nt) s_sc[i] = rope_sincos(i, pos, vec2(p.r_hi, p.r_lo));
    sq = subgroupAdd(sq);
    sk = subgroupAdd(sk);
    if (gl_SubgroupInvocationID == 0u) {
        s_ss[gl_SubgroupID] = sq;
        s_ss[NSG + gl_SubgroupID] = sk;
    }
    barrier();
    float fq = 1.0, fk = 1.0;
    if (norm) {
        float tq = 0.0, tk = 0.0;
        for (uint s = 0u; s < NSG; s++) {
            tq += s_ss[s];
            tk += s_ss[NSG + s];
        }
        fq = inversesqrt(tq / float(HD) + p.eps);
        fk = inversesqrt(tk / float(HD) + p.eps);
    }
    for (uint d = t; d < HD; d += nt) {
        float q = s_q[d] * fq, k = s_k[d] * fk;
        if (d < rope_dims) {
            uint pd = rope_partner(d, half_rd, inter);
            vec2 a = s_sc[rope_pair(d, half_rd, inter)];
            bool first = rope_first(d, half_rd, inter);
            q = rope_rotate(q, s_q[pd] * fq, a, first);
            k = rope_rotate(k, s_k[pd] * fk, a, first);
        }
        s_qr[d] = q;
        s_kr[d] = k;
    }
    barrier();
}

shared float s_m[NSG];
shared float s_l[NSG];
shared float s_acc[NSG * HD];

// This lane's elements of the k and v rows of key j of a slot (through the block table).
void load_kv(uint j, uint slot, uint kvh, uint kvw, uint pos, out float kr[MAXE], out float vr[MAXE])
{
    uint lane = gl_SubgroupInvocationID;
    if (PREP != 0u && j == pos) {
        for (uint e = 0u; e < E; e++) {
            kr[e] = s_kr[lane + e * SG];
            vr[e] = s_v[lane + e * SG];
        }
        return;
    }
    uint64_t row = uint64_t(p.btab.v[slot * p.max_blocks + j / 16u]) * 16ul + uint64_t(j % 16u);
    uint64_t off = 4ul * (row * kvw + kvh * HD);
    F32Buf kb = F32Buf(p.kpool + off), vb = F32Buf(p.vpool + off);
    for (uint e = 0u; e < E; e++) {
        kr[e] = kb.v[lane + e * SG];
        vr[e] = vb.v[lane + e * SG];
    }
}

void main()
{
    uint h = gl_WorkGroupID.x, c = gl_WorkGroupID.y;
    uint lane = gl_SubgroupInvocationID, sg = gl_SubgroupID;
    uint pos = p.cols.v[4u * c + 1u], slot = p.cols.v[4u * c + 2u];
    uint kvh = h / (p.n_h / p.n_kv), kvw = p.n_kv * HD;
    uint qoff = (c * p.n_h + h) * HD * (p.gated != 0u ? 2u : 1u), ooff = (c * p.n_h + h) * HD;

    // the first key's k and v rows load before the prep (the key at pos comes from the prep)
    float kn[MAXE], vn[MAXE];
    uint j = sg;
    if (j <= pos && (PREP == 0u || j < pos)) load_kv(j, slot, kvh, kvw, pos, kn, vn);
    if (PREP != 0u) {
        prep(c, h, kvh, pos, qoff, kvw);
        if (j == pos) load_kv(j, slot, kvh, kvw, pos, kn, vn);
        if (h % (p.n_h / p.n_kv) == 0u) { // the kv head's first q head: k and v into the pools
            uint64_t row = uint64_t(p.btab.v[slot * p.max_blocks + pos / 16u]) * 16ul + uint64_t(pos % 16u);
            uint64_t off = 4ul * (row * kvw + kvh * HD);
            for (uint d = gl_LocalInvocationIndex; d < HD; d += SG * NSG) {
                F32Buf(p.kpool + off).v[d] = s_kr[d];
                F32Buf(p.vpool + off).v[d] = s_v[d];
            }
        }
    }
    float qv[MAXE], acc[MAXE];
    for (uint e = 0u; e < E; e++) {
        qv[e] = (PREP != 0u ? s_qr[lane + e * SG] : act_get(uint64_t(p.q), qoff + lane + e * SG)) * p.scale;
        acc[e] = 0.0;
    }
    float m = -1.0 / 0.0, l = 0.0;
    // the next key's k and v rows load while this key's softmax step runs (keys are few per
    // subgroup, so the loop is latency-bound, not bandwidth-bound)
    for (; j <= pos; j += NSG) {
        float kc[MAXE], vc[MAXE];
        for (uint e = 0u; e < E; e++) {
            kc[e] = kn[e];
            vc[e] = vn[e];
        }
        if (j + NSG <= pos) load_kv(j + NSG, slot, kvh, kvw, pos, kn, vn);
        float part = 0.0;
        for (uint e = 0u; e < E; e++) part += qv[e] * kc[e];
        float s = subgroupAdd(part);
        float m_new = max(m, s);
        float corr = exp(m - m_new), w = exp(s - m_new);
        l = l * corr + w;
        for (uint e = 0u; e < E; e++) acc[e] = acc[e] * corr + w * vc[e];
        m = m_new;
    }
    if (lane == 0u) {
        s_m[sg] = m;
        s_l[sg] = l;
    }
    for (uint e = 0u; e < E; e++) s_acc[sg * HD + lane + e * SG] = acc[e];
    barrier();
    float mx = s_m[0];
    for (uint s = 1u; s < NSG; s++) mx = max(mx, s_m[s]);
    float tot = 0.0;
    for (uint s = 0u; s < NSG; s++) tot += s_l[s] * exp(s_m[s] - mx);
    for (uint d = gl_LocalInvocationIndex; d < HD; d += SG * NSG) {
        float o = 0.0;
        for (uint s = 0u; s < NSG; s++) o += s_acc[s * HD + d] * exp(s_m[s] - mx);
        o /= tot;
        if (p.gated != 0u) o /= 1.0 + exp(-act_get(uint64_t(p.q), qoff + HD + d));
        act_set(uint64_t(p.dst), ooff + d, o);
    }
}
