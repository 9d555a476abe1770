#version 460
// attn_prefill.comp - the wide plan's prefill attention ("attn.prefill"), the same function as
// attention.comp:
//   out[c][h] = Σ_{j <= pos(c)} softmax_j(scale · q[c][h]·k_j) · v_j
// over the keys of column c's slot (attn_prep wrote this step's keys before), kv head
// h / (n_h / n_kv) (GQA), tiled over queries × keys flash-style: a workgroup takes BQ successive
// columns and one q head, walks the slot's KV blocks (16 keys, one block-table entry each) up to
// the tile's last position, and keeps an online softmax (running max m, sum l, accumulator) per
// query row, so each key is read once per tile instead of once per column.
// The columns of a tile may belong to several runs (one slot each, successive positions, one run
// per slot): the tile walks the keys once per run segment, masking the rows outside it.
// q: f32 [cols][n_h*HD]; pools f32 [blocks][16][n_kv*HD]; btab u32 [slots][max_blocks];
// cols: col_meta; out: f32 [cols][n_h*HD]. Online softmax in f32.
// gated (Qwen3.5): q is [cols][n_h][2*HD], each head's q then its gate, and out = o ⊙ σ(gate), as in
// attention.comp.
// Geometry: grid x = tile of BQ columns, y = q head; NT threads. Shared, in vec4s along the head
// dim: the tile's scaled q [BQ][HD/4], one KV block's keys and its values [16][HD/4 + 1] each (the
// extra vec4 shifts rows across banks; KV2 = 0: values in the keys' place once the scores are
// done, where two blocks do not fit), the scores / probabilities [BQ][16/4], per-row m, l and
// correction. Thread t computes the scores of key t % 16 for rows t / 16 + (NT/16)·i; it owns the
// accumulator vec4s of dims 4·(t % HD4) .. +3 for rows t / HD4 + (NT/HD4)·i; the online softmax of
// row r is 4 neighbour lanes (one vec4 of its 16 scores each, max and sum by shuffle butterflies).
// vec4 loads from shared memory: 9 loads serve 32 FMAs in both products. The next KV block's keys
// and values are loaded into registers while this block's products run (KV2 = 0: once its values
// are staged), so a block step does not wait on memory; what bounds a step then is its chain of
// shared loads, FMAs and barriers (bench/24). The host picks BQ to fit the device's shared memory,
// with NT | BQ·16, HD4 | NT, NT | BQ·HD4, at most 8 scores and 8 accumulator vec4s a thread, and a
// subgroup size of at least 4.
// Tiles run in reverse order: the grid's first workgroups take the last columns, whose walks are the
// longest in a prefill, and the short walks fill in at the end (bench/25: 1-1.5 % off the kernel).
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "kern_common.glsl"
#include "lanes4.glsl" // a row's max and sum over its 4 lanes

layout(constant_id = 0) const uint HD = 64; // head dim, a multiple of 4
layout(constant_id = 1) const uint BQ = 32; // query columns a tile
layout(constant_id = 2) const uint NT = 128; // threads
layout(local_size_x_id = 2) in;
layout(constant_id = 3) const uint KV2 = 1; // 1: keys and values in two shared buffers, 0: one

const uint BK = 16u;             // keys a step: one KV block
const uint HD4 = HD / 4u;        // vec4s of a head
const uint KS4 = HD4 + 1u;       // shared row stride of a KV block, vec4s
const uint NS = BQ * BK / NT;    // scores a thread computes (<= 8)
const uint RS = NT / BK;         // row stride of a thread's scores
const uint NA = BQ * HD4 / NT;   // accumulator vec4s a thread owns (<= 8)
const uint RA = NT / HD4;        // row stride of a thread's accumulators
const uint NL = (BK * HD4 + NT - 1u) / NT; // vec4s of a KV block's keys (and of its values) a thread loads
#define MAX_NS 8
#define MAX_NA 8

layout(push_constant) uniform Push {
    Vec4Buf q;
    uint64_t kpool;
    uint64_t vpool;
    U32Buf btab;
    U32Buf cols; // struct col_meta [cols]: token, pos, slot, need_logit
    Vec4Buf dst;
    uint n_h;
    uint n_kv;
    uint max_blocks;
    float scale;
    uint gated;
    uint pad0;
    uint n_cols;
    uint pad;
} p;

shared vec4 s_q[BQ * HD4];
shared vec4 s_k[BK * KS4];
shared vec4 s_v[KV2 != 0u ? BK * KS4 : 1u];
shared vec4 s_p[BQ * BK / 4u];
shared float s_m[BQ];
shared float s_l[BQ];
shared float s_corr[BQ];

// A KV block in flight: this thread's vec4s of its keys and values.
vec4 rk[NL], rv[NL];

// Issues the loads of KV block b of `slot` (keys past `last` are zeros: the pool holds anything
// there), this kv head's part. 64-bit addresses: pools may exceed 2^32 elements.
void fetch_block(uint slot, uint b, uint last, uint kvoff, uint kvw)
{
    uint64_t row0 = uint64_t(p.btab.v[slot * p.max_blocks + b]) * BK;
    [[unroll]] for (uint i = 0u; i < NL; i++) {
        uint e = gl_LocalInvocationIndex + i * NT, k = e / HD4, d4 = e % HD4;
        bool live = e < BK * HD4 && b * BK + k <= last;
        uint64_t at = 4ul * ((row0 + k) * kvw + kvoff);
        rk[i] = live ? act_get4(p.kpool + at, d4) : vec4(0.0);
        rv[i] = live ? act_get4(p.vpool + at, d4) : vec4(0.0);
    }
}

// The block in flight into shared memory: its keys into s_k (`keys`; with KV2 its values into s_v
// too), else its values into s_k.
void stage_block(bool keys)
{
    [[unroll]] for (uint i = 0u; i < NL; i++) {
        uint e = gl_LocalInvocationIndex + i * NT, k = e / HD4, d4 = e % HD4;
        if (e < BK * HD4) {
            s_k[k * KS4 + d4] = keys ? rk[i] : rv[i];
            if (KV2 != 0u) s_v[k * KS4 + d4] = rv[i];
        }
    }
}

// Row k, vec4 d4 of the staged values.
vec4 value(uint k, uint d4) { return KV2 != 0u ? s_v[k * KS4 + d4] : s_k[k * KS4 + d4]; }

void main()
{
    uint t = gl_LocalInvocationIndex, h = gl_WorkGroupID.y;
    uint c0 = (gl_NumWorkGroups.x - 1u - gl_WorkGroupID.x) * BQ, cend = min(c0 + BQ, p.n_cols);
    uint kvw = p.n_kv * HD, kvoff = (h / (p.n_h / p.n_kv)) * HD;
    uint qs4 = p.gated != 0u ? 2u * HD4 : HD4, qw4 = p.n_h * qs4, ow4 = p.n_h * HD4; // q rows hold the gates
    uint64_t q = uint64_t(p.q);
    for (uint e = t; e < BQ * HD4; e += NT) {
        uint r = e / HD4;
        s_q[e] = c0 + r < cend ? act_get4(q, (c0 + r) * qw4 + h * qs4 + e % HD4) * p.scale : vec4(0.0);
    }
    for (uint r = t; r < BQ; r += NT) {
        s_m[r] = -1.0 / 0.0;
        s_l[r] = 0.0;
    }
    vec4 acc[MAX_NA];
    [[unroll]] for (uint i = 0u; i < NA; i++) acc[i] = vec4(0.0);

    uint kk = t % BK, r0 = t / BK, d4 = t % HD4, ra = t / HD4;
    for (uint seg = c0; seg < cend;) { // uniform: every thread reads the same column table
        uint slot = p.cols.v[4u * seg + 2u], seg_end = seg + 1u;
        while (seg_end < cend && p.cols.v[4u * seg_end + 2u] == slot) seg_end++;
        uint last = p.cols.v[4u * (seg_end - 1u) + 1u]; // positions grow along a run
        uint rlo = seg - c0, rhi = seg_end - c0;
        fetch_block(slot, 0u, last, kvoff, kvw);
        for (uint b = 0u; b <= last / BK; b++) {
            barrier(); // the last step's readers of s_k, s_v, s_p and the rows' m, l are done
            stage_block(true);
            barrier();
            if (KV2 != 0u && b < last / BK) // in flight during the products
                fetch_block(slot, b + 1u, last, kvoff, kvw);
            float sc[MAX_NS];
            [[unroll]] for (uint i = 0u; i < NS; i++) sc[i] = 0.0;
            [[unroll]] for (uint j = 0u; j < HD4; j++) {
                vec4 kv = s_k[kk * KS4 + j];
                [[unroll]] for (uint i = 0u; i < NS; i++) sc[i] += dot(s_q[(r0 + RS * i) * HD4 + j], kv);
            }
            [[unroll]] for (uint i = 0u; i < NS; i++) {
                uint r = r0 + RS * i;
                bool live = r >= rlo && r < rhi && b * BK + kk <= p.cols.v[4u * (c0 + r) + 1u];
                s_p[r * 4u + kk / 4u][kk % 4u] = live ? sc[i] : -1.0 / 0.0;
            }
            barrier();
            if (KV2 == 0u) { // the scores are done with the keys: the values take their place
                stage_block(false);
                if (b < last / BK) fetch_block(slot, b + 1u, last, kvoff, kvw);
            }
            // the online softmax: row r by 4 neighbour lanes, one vec4 of scores each
            for (uint e = t; e < BQ * 4u; e += NT) {
                uint r = e / 4u, k4 = e % 4u;
                if (r < rlo || r >= rhi) {
                    if (k4 == 0u) s_corr[r] = 1.0;
                    s_p[r * 4u + k4] = vec4(0.0);
                    continue;
                }
                vec4 v = s_p[r * 4u + k4];
                float m = s_m[r]; // key 0 is live for every row: mx is finite from block 0 on
                float mx = max(m, lanes_max(max(max(v.x, v.y), max(v.z, v.w))));
                vec4 w = exp(v - mx);
                s_p[r * 4u + k4] = w;
                float l = lanes_add(w.x + w.y + w.z + w.w), corr = exp(m - mx);
                if (k4 == 0u) {
                    s_m[r] = mx;
                    s_l[r] = s_l[r] * corr + l;
                    s_corr[r] = corr;
                }
            }
            barrier();
            [[unroll]] for (uint i = 0u; i < NA; i++) acc[i] *= s_corr[ra + RA * i];
            [[unroll]] for (uint k4 = 0u; k4 < 4u; k4++) {
                vec4 v0 = value(4u * k4, d4), v1 = value(4u * k4 + 1u, d4);
                vec4 v2 = value(4u * k4 + 2u, d4), v3 = value(4u * k4 + 3u, d4);
                [[unroll]] for (uint i = 0u; i < NA; i++) {
                    vec4 w = s_p[(ra + RA * i) * 4u + k4];
                    acc[i] += w.x * v0 + w.y * v1 + w.z * v2 + w.w * v3;
                }
            }
        }
        seg = seg_end;
    }
    [[unroll]] for (uint i = 0u; i < NA; i++) {
        uint r = ra + RA * i;
        if (c0 + r >= cend) continue;
        vec4 o = acc[i] / s_l[r];
        if (p.gated != 0u) o /= 1.0 + exp(-act_get4(q, (c0 + r) * qw4 + h * qs4 + HD4 + d4));
        act_set4(uint64_t(p.dst), (c0 + r) * ow4 + h * HD4 + d4, o);
    }
}
