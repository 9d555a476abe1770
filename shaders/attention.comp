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
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "kern_common.glsl"

#define MAXE 32 // HD / SG at most: 256 / 8

layout(constant_id = 0) const uint SG = 32; // subgroup size of the device
layout(constant_id = 1) const uint HD = 64; // head dim, a multiple of SG, <= 256
layout(constant_id = 2) const uint NSG = 4; // subgroups per workgroup
layout(local_size_x_id = 3) in;             // SG * NSG

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
} p;

shared float s_m[NSG];
shared float s_l[NSG];
shared float s_acc[NSG * HD];

// This lane's elements of the k and v rows of key j of a slot (through the block table).
void load_kv(uint j, uint slot, uint kvh, uint kvw, out float kr[MAXE], out float vr[MAXE])
{
    uint lane = gl_SubgroupInvocationID;
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

    float qv[MAXE], acc[MAXE];
    for (uint e = 0u; e < E; e++) {
        qv[e] = p.q.v[qoff + lane + e * SG] * p.scale;
        acc[e] = 0.0;
    }
    float m = -1.0 / 0.0, l = 0.0;
    // the next key's k and v rows load while this key's softmax step runs (keys are few per
    // subgroup, so the loop is latency-bound, not bandwidth-bound)
    float kn[MAXE], vn[MAXE];
    uint j = sg;
    if (j <= pos) load_kv(j, slot, kvh, kvw, kn, vn);
    for (; j <= pos; j += NSG) {
        float kc[MAXE], vc[MAXE];
        for (uint e = 0u; e < E; e++) {
            kc[e] = kn[e];
            vc[e] = vn[e];
        }
        if (j + NSG <= pos) load_kv(j + NSG, slot, kvh, kvw, kn, vn);
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
        if (p.gated != 0u) o /= 1.0 + exp(-p.q.v[qoff + HD + d]);
        p.dst.v[ooff + d] = o;
    }
}
