#version 460
// attn_kv.comp - causal attention of one step over the paged KV pool, by kv head (past
// K_ATTN_KV_KEYS keys a column; attention.comp, by q head, below that):
//   out[c][h] = Σ_{j <= pos(c)} softmax_j(scale · q[c][h]·k_j) · v_j
// over the keys of column c's slot (decode: one column per slot; prefill: the slot's earlier
// columns of this step were written by attn_prep before), kv head h / GQ (GQA, GQ = n_h / n_kv).
// q: f32 [cols][n_h*HD]; pools f32 [blocks][16][n_kv*HD]; btab u32 [slots][max_blocks];
// out: f32 [cols][n_h*HD]. Online softmax in f32.
// gated (Qwen3.5): q is [cols][n_h][2*HD], each head's q then its gate, and out = o ⊙ σ(gate).
//
// Geometry (bench/35): one workgroup per (kv head, column, key split) (grid x = kv head · splits +
// split, y = column), serving the kv head's GQ q heads together, so each key and value row is read
// once for the group. Keys are walked in chunks of NT: in a chunk each invocation takes one key and
// scores it against the GQ heads (its k row as vec4 loads, q from shared memory), the chunk's
// maxima meet in shared memory, and then each invocation accumulates vec4 units of the GQ outputs
// over the chunk's keys (its v rows' units, probabilities from shared memory): every load of a
// chunk is independent of the others, so a chunk's keys are in flight together. With SPLIT, split
// z takes keys [z·kper, (z+1)·kper) and writes its unnormalised output with its maximum and sum to
// p.part (attn_merge.comp combines the splits): long contexts at few columns fill the device.
// PREP = 1 (kind attn.decode_prep, kernels.h k_attn_step): attn_prep.comp's work fused in, for steps
// whose slots hold one column each (decode): the workgroup RMSNorms and rotates its q heads and its
// kv head's k of this column itself (rope.glsl, as attn_prep does), uses them and v for the key at
// pos from shared memory, and the workgroup whose keys hold pos writes k and v into the pools at
// (slot, pos). Every other key j < pos was written by earlier steps, so no workgroup reads what
// another writes. q is not written back.
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "kern_common.glsl"
#include "rope.glsl"

layout(constant_id = 0) const uint SG = 32;  // subgroup size of the device
layout(constant_id = 1) const uint HD = 64;  // head dim, a multiple of 4, <= 4·NT
layout(constant_id = 2) const uint GQ = 4;   // q heads a kv head
layout(local_size_x_id = 3) in;              // NT: keys a chunk
layout(constant_id = 4) const uint PREP = 0; // 1: the prep fused in (above)
layout(constant_id = 5) const uint SPLIT = 0; // 1: partial outputs to p.part (kper keys a split)

const uint NT = gl_WorkGroupSize.x, NSG = NT / SG;
const uint HD4 = HD / 4u;
// The value phase: KL key lanes of HD4 invocations each; invocation (lane, u) takes every KL-th key
// of the chunk and sums unit u (a vec4) of those keys' v rows into all GQ heads' outputs, loading
// up to VB rows before their products (every row is read once for the group, and a full chunk is
// one or a few loads deep); the lanes' sums meet in shared memory at the end, a head at a time.
const uint KL = NT / HD4;

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
    uint kper; // SPLIT: keys a split (a multiple of 16)
    // PREP only (attn_prep.comp's fields): this step's k and v [cols][n_kv*HD], the q/k norm gains
    F32Buf k;
    F32Buf v;
    uint64_t qn;
    uint64_t kn;
    uint pflags; // 1 norm, 2 gain is (1 + g), 4 interleaved pairs; gains' dtype << 4; rope_dims << 8
    float eps;
    float r_hi; // theta^(-2/rope_dims) as hi + lo (rope.glsl)
    float r_lo;
    // SPLIT: f32 [cols][n_h][splits][HD] unnormalised outputs, then f32 [cols][n_h][splits][2] (max, sum)
    F32Buf part;
} p;

const uint PH = PREP != 0u ? HD : 1u;
shared vec4 s_q[GQ * HD4];                 // the group's q heads (normed, rotated), times scale
shared float s_x[PREP != 0u ? (GQ + 2u) * HD : 1u]; // prep: q heads, k (normed) and v of this column
shared float s_k[PH];                       // prep: k rotated (the key at pos)
shared vec2 s_sc[PREP != 0u ? HD / 2u : 1u]; // prep: (sin, cos) of each pair at pos
shared float s_p[2u * GQ * NT];             // a chunk's scores, then probabilities [head][key] (two chunks)
shared float s_red[2u * GQ * NSG];          // subgroups' maxima (two chunks), then sums
shared vec4 s_o[NT];                       // key lanes' partial outputs of one head
shared uint s_row[2u * NT];                 // a chunk's pool rows (two chunks)
const uint VB = 16u; // value rows an invocation has in flight

// The prep of column c at position pos: s_q (normed, rotated, scaled), s_k, and v in s_x's last
// row (barriers inside: every invocation calls it). A subgroup a row: its lanes load the row,
// Σx² meets by subgroupAdd, x ⊙ g · rsqrt(mean(x²) + eps) stays in s_x; then every row is rotated.
void prep(uint c, uint kvh, uint pos, uint kvw)
{
    uint t = gl_LocalInvocationIndex, lane = gl_SubgroupInvocationID, sg = gl_SubgroupID;
    uint rope_dims = p.pflags >> 8, half_rd = rope_dims / 2u, gdtype = (p.pflags >> 4) & 15u;
    bool inter = (p.pflags & 4u) != 0u, norm = (p.pflags & 1u) != 0u;
    float one = (p.pflags & 2u) != 0u ? 1.0 : 0.0;
    uint qs = p.gated != 0u ? 2u * HD : HD;
    for (uint r = sg; r < GQ + 2u; r += NSG) { // rows: GQ q heads, k, v
        uint64_t src = r < GQ ? uint64_t(p.q) + 4ul * ((c * p.n_h + kvh * GQ + r) * qs)
                              : uint64_t(r == GQ ? p.k : p.v) + 4ul * (c * kvw + kvh * HD);
        bool normed = norm && r <= GQ;
        float ss = 0.0;
        for (uint d = lane; d < HD; d += SG) {
            float x = act_get(src, d);
            ss += x * x;
            s_x[r * HD + d] = normed ? x * (one + gain4_at(r < GQ ? p.qn : p.kn, gdtype, d / 4u)[d % 4u]) : x;
        }
        ss = subgroupAdd(ss);
        if (normed) {
            float f = inversesqrt(ss / float(HD) + p.eps);
            for (uint d = lane; d < HD; d += SG) s_x[r * HD + d] *= f;
        }
    }
    for (uint i = t; i < half_rd; i += NT) s_sc[i] = rope_sincos(i, pos, vec2(p.r_hi, p.r_lo));
    barrier();
    for (uint i = t; i < (GQ + 1u) * HD; i += NT) {
        uint r = i / HD, d = i % HD;
        float x = s_x[i];
        if (d < rope_dims)
            x = rope_rotate(x, s_x[r * HD + rope_partner(d, half_rd, inter)], s_sc[rope_pair(d, half_rd, inter)],
                            rope_first(d, half_rd, inter));
        if (r < GQ)
            s_q[i / 4u][i % 4u] = x * p.scale;
        else
            s_k[d] = x;
    }
    barrier();
}

// The pool row of key j of a slot, and the byte offset of a kv head's part of a row.
uint kv_row(uint slot, uint j) { return p.btab.v[slot * p.max_blocks + j / 16u] * 16u + j % 16u; }
uint64_t kv_off(uint row, uint kvh, uint kvw) { return 4ul * (uint64_t(row) * kvw + kvh * HD); }

// Σ over the chunk's keys i = kl, kl + KL, ... < nk of p[h][i]·v_i[unit u] added to a[h] for the
// GQ heads, VB rows loaded before their products (the key at pos from shared memory with the prep).
void vsum(inout vec4 a[GQ], uint u, uint kl, uint nk, uint buf, uint j0, uint pos, uint kvh, uint kvw)
{
    for (uint i = kl; i < nk; i += KL * VB) {
        vec4 vv[VB];
        [[unroll]] for (uint b = 0u; b < VB; b++) {
            uint ii = i + b * KL;
            if (PREP != 0u && j0 + ii == pos) {
                uint o = (GQ + 1u) * HD + 4u * u;
                vv[b] = vec4(s_x[o], s_x[o + 1u], s_x[o + 2u], s_x[o + 3u]);
            } else
                vv[b] = ii < nk ? Vec4Buf(p.vpool + kv_off(s_row[buf * NT + ii], kvh, kvw)).v[u] : vec4(0.0);
        }
        [[unroll]] for (uint b = 0u; b < VB; b++) {
            uint ii = i + b * KL;
            if (ii < nk)
                [[unroll]] for (uint h = 0u; h < GQ; h++) a[h] += s_p[(buf * GQ + h) * NT + ii] * vv[b];
        }
    }
}

void main()
{
    uint t = gl_LocalInvocationIndex, lane = gl_SubgroupInvocationID, sg = gl_SubgroupID;
    uint nspl = gl_NumWorkGroups.x / p.n_kv;
    uint kvh = gl_WorkGroupID.x / nspl, z = gl_WorkGroupID.x % nspl, c = gl_WorkGroupID.y;
    uint pos = p.cols.v[4u * c + 1u], slot = p.cols.v[4u * c + 2u];
    uint kvw = p.n_kv * HD, qs = p.gated != 0u ? 2u * HD : HD;
    uint kbeg = SPLIT != 0u ? z * p.kper : 0u;
    uint kend = SPLIT != 0u ? min(pos + 1u, kbeg + p.kper) : pos + 1u; // keys [kbeg, kend)

    if (PREP != 0u) {
        prep(c, kvh, pos, kvw);
        if (kbeg <= pos && pos < kend) { // this workgroup's keys hold pos: k and v into the pools
            uint64_t off = kv_off(kv_row(slot, pos), kvh, kvw);
            for (uint d = t; d < HD; d += NT) {
                F32Buf(p.kpool + off).v[d] = s_k[d];
                F32Buf(p.vpool + off).v[d] = s_x[(GQ + 1u) * HD + d];
            }
        }
    } else {
        for (uint i = t; i < GQ * HD; i += NT)
            s_q[i / 4u][i % 4u] = act_get(uint64_t(p.q), (c * p.n_h + kvh * GQ + i / HD) * qs + i % HD) * p.scale;
        barrier();
    }

    float m[GQ], l[GQ];
    vec4 acc[GQ];
    for (uint h = 0u; h < GQ; h++) {
        m[h] = -1.0 / 0.0;
        l[h] = 0.0;
        acc[h] = vec4(0.0);
    }
    uint kl = t / HD4, ku = t % HD4; // the value phase: key lane, unit
    uint buf = 0u;
    for (uint j0 = kbeg; j0 < kend; j0 += NT, buf ^= 1u) {
        // scores: invocation t takes key j0 + t
        uint j = j0 + t;
        float s[GQ];
        for (uint h = 0u; h < GQ; h++) s[h] = -1.0 / 0.0;
        if (j < kend) {
            for (uint h = 0u; h < GQ; h++) s[h] = 0.0;
            bool here = PREP != 0u && j == pos;
            uint row = here ? 0u : kv_row(slot, j);
            s_row[buf * NT + t] = row;
            Vec4Buf kr = Vec4Buf(p.kpool + kv_off(row, kvh, kvw));
            for (uint u = 0u; u < HD4; u++) {
                vec4 kv = here ? vec4(s_k[4u * u], s_k[4u * u + 1u], s_k[4u * u + 2u], s_k[4u * u + 3u]) : kr.v[u];
                for (uint h = 0u; h < GQ; h++) s[h] += dot(s_q[h * HD4 + u], kv);
            }
        }
        for (uint h = 0u; h < GQ; h++) {
            float mx = subgroupMax(s[h]);
            if (lane == 0u) s_red[(buf * GQ + h) * NSG + sg] = mx;
        }
        barrier();
        float corr[GQ];
        for (uint h = 0u; h < GQ; h++) {
            float mc = s_red[(buf * GQ + h) * NSG];
            for (uint i = 1u; i < NSG; i++) mc = max(mc, s_red[(buf * GQ + h) * NSG + i]);
            float mn = max(m[h], mc); // finite: the chunk's first key is live
            corr[h] = exp(m[h] - mn);
            m[h] = mn;
            float pr = exp(s[h] - mn);
            l[h] = l[h] * corr[h] + pr;
            s_p[(buf * GQ + h) * NT + t] = pr;
        }
        barrier();
        // values: unit ku of every head's output over the lane's keys of the chunk
        if (kl < KL) {
            for (uint h = 0u; h < GQ; h++) acc[h] *= corr[h];
            vsum(acc, ku, kl, min(NT, kend - j0), buf, j0, pos, kvh, kvw);
        }
    }

    // the group's sums of probabilities (the chunks read s_red only between their two barriers),
    // then a head at a time the key lanes' outputs meet
    for (uint h = 0u; h < GQ; h++) {
        float sum = subgroupAdd(l[h]);
        if (lane == 0u) s_red[h * NSG + sg] = sum;
    }
    for (uint h = 0u; h < GQ; h++) {
        if (h > 0u) barrier(); // the previous head's sums read
        if (kl < KL) s_o[t] = acc[h];
        barrier();
        if (t < HD4) {
            uint u = t, hg = kvh * GQ + h;
            vec4 o = vec4(0.0);
            for (uint i = 0u; i < KL; i++) o += s_o[i * HD4 + u];
            float tot = 0.0;
            for (uint i = 0u; i < NSG; i++) tot += s_red[h * NSG + i];
            if (SPLIT != 0u) {
                uint pi = (c * p.n_h + hg) * nspl + z;
                Vec4Buf(uint64_t(p.part)).v[pi * HD4 + u] = o; // zeros and sum 0 where the split has no key
                if (u == 0u) {
                    uint64_t ml = uint64_t(p.part) + 4ul * (gl_NumWorkGroups.y * p.n_h * nspl * HD);
                    F32Buf(ml).v[2u * pi] = m[h];
                    F32Buf(ml).v[2u * pi + 1u] = tot;
                }
            } else {
                o /= tot;
                if (p.gated != 0u) {
                    uint go = (c * p.n_h + hg) * qs + HD + 4u * u;
                    vec4 gate = vec4(act_get(uint64_t(p.q), go), act_get(uint64_t(p.q), go + 1u),
                                     act_get(uint64_t(p.q), go + 2u), act_get(uint64_t(p.q), go + 3u));
                    o /= 1.0 + exp(-gate);
                }
                act_set4(uint64_t(p.dst), (c * p.n_h + hg) * HD4 + u, o);
            }
        }
    }
}
