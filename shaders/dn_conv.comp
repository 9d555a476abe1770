#version 460
// dn_conv.comp - the Gated DeltaNet's causal depthwise conv + SiLU over the qkv channels of one
// step. For each run (the columns of one slot, at successive positions) and channel ch:
//   y_t = silu(Σ_{j<K} w[ch][j] · x_{t-K+1+j})        (tap K-1 multiplies the current row)
// with the K-1 rows before the run taken from the slot's committed window (zeros when a slot
// starts, as the engine zeroes state).
// x: f32 [cols][C] (in_proj_qkv output, [q | k | v]); w: [C][K] F32/F16/BF16;
// window: f32 [K-1][C] ([0] = oldest row) of entry e of slot s at window + (s·n_snap + e)·stride
// floats (the DeltaNet state entry, kernels.h); entry cur = slots[s].cur (struct slot_meta, 16
// bytes a slot; slots = 0: entry 0) holds the committed window; y: f32 [cols][C]. K <= 8.
// mode 0 (batch): the run's last K-1 pre-conv rows go back into entry cur.
// mode 1 (spec, kind dn.conv.snap): after column i of the run the window as it stands then goes
//   into entry (cur + i + 1) mod n_snap; entry cur is left as it was.
// mode 2: no window write (test hook LFM2_TEST_SKIP_SNAPSHOT: a broken snapshot).
// Grid: x over channels (64 a group), y = run. One invocation owns (run, channel): race-free.
// WIDE=1 (variant dn_conv_wide, the wide plan's "dn.conv.wide"; mode 0 only): the same function,
// parallel over positions. A K-tap causal convolution, not a scan: an invocation takes J = 8
// successive columns of a run and slides along them, starting from the K-1 x rows before its first
// column, which nothing writes here (so each x row is read ~(J + K - 1)/J times, not K). The run's
// first invocation (columns 0 .. J-1, J >= K-1) starts from the window instead and then writes the
// new window (the run's last K-1 rows), so the window is read and written by one invocation per
// (run, channel) and no other reads it. Grid z = block of J columns of the run; its extent covers the
// longest run the step can hold (cols - n_runs + 1), groups past their run's end exit (bench/25).
#extension GL_EXT_control_flow_attributes : require
#include "kern_common.glsl"

#ifndef WIDE
#define WIDE 0
#endif

#define KMAX 8

layout(local_size_x = 64) in;

layout(push_constant) uniform Push {
    F32Buf x;
    uint64_t w;
    uint64_t window; // window of entry 0 of slot 0
    F32Buf y;
    U32Buf runs;  // struct run_meta [n_runs]: slot, first_col, n_cols, pos0
    U32Buf slots; // struct slot_meta [n_slots]: cur, pos, draft, pad (0: every slot uses entry 0)
    uint C;
    uint K;
    uint n_runs;
    uint wdtype;
    uint stride; // floats between two state entries
    uint n_snap;
    uint mode;
    uint pad;
} p;

// Channel ch of the window of entry e of a slot (64-bit: a ring of big states may pass 4 G floats).
F32Buf win(uint slot, uint e, uint ch)
{
    return F32Buf(p.window + 4ul * (uint64_t(slot * p.n_snap + e) * uint64_t(p.stride) + uint64_t(ch)));
}

#if WIDE
// columns an invocation takes (kernels.h K_WIDE_CONV_COLS, >= KMAX - 1)
layout(constant_id = 0) const uint J = 8;

float silu(float v) { return v / (1.0 + exp(-v)); }

// Columns j0 .. j0+J-1 of run r, channel ch, with the taps w.
void conv_wide(uint ch, uint r, uint j0, float w[KMAX])
{
    uint slot = p.runs.v[4u * r], c0 = p.runs.v[4u * r + 1u], n = p.runs.v[4u * r + 2u];
    uint K = p.K;
    if (j0 >= n) return;
    uint64_t x = uint64_t(p.x), wc = 0ul;
    float hist[KMAX]; // hist[i]: the pre-conv row K-1-i before the current one
    if (j0 == 0u) {
        uint cur = uint64_t(p.slots) == 0ul ? 0u : p.slots.v[4u * slot];
        wc = uint64_t(win(slot, cur, ch));
        [[unroll]] for (uint i = 0u; i + 1u < KMAX; i++) hist[i] = i + 1u < K ? act_get(wc, i * p.C) : 0.0;
    } else { // j0 >= J >= K-1: the rows before the block are the run's
        [[unroll]] for (uint i = 0u; i + 1u < KMAX; i++)
            hist[i] = i + 1u < K ? act_get(x, (c0 + j0 + 1u + i - K) * p.C + ch) : 0.0;
    }
    [[unroll]] for (uint b = 0u; b < J; b++) {
        uint c = c0 + j0 + b;
        if (j0 + b >= n) break;
        float xv = act_get(x, c * p.C + ch);
        float acc = w[K - 1u] * xv;
        [[unroll]] for (uint i = 0u; i + 1u < KMAX; i++)
            if (i + 1u < K) acc += w[i] * hist[i];
        act_set(uint64_t(p.y), c * p.C + ch, silu(acc));
        [[unroll]] for (uint i = 0u; i + 2u < KMAX; i++)
            if (i + 2u < K) hist[i] = hist[i + 1u];
        [[unroll]] for (uint i = 0u; i + 1u < KMAX; i++)
            if (i + 2u == K) hist[i] = xv;
    }
    if (j0 != 0u) return;
    // the new window: the run's last K-1 rows (hist holds them when the run ends in this block)
    if (n > J)
        [[unroll]] for (uint i = 0u; i + 1u < KMAX; i++)
            if (i + 1u < K) hist[i] = act_get(x, (c0 + n + 1u + i - K) * p.C + ch);
    [[unroll]] for (uint i = 0u; i + 1u < KMAX; i++)
        if (i + 1u < K) act_set(wc, i * p.C, hist[i]);
}

void main()
{
    uint ch = gl_GlobalInvocationID.x, r = gl_WorkGroupID.y, j0 = gl_WorkGroupID.z * J;
    if (ch >= p.C || r >= p.n_runs) return;
    float w[KMAX];
    [[unroll]] for (uint i = 0u; i < KMAX; i++) w[i] = i < p.K ? wget(p.w, p.wdtype, p.C, p.K, ch, i) : 0.0;
    conv_wide(ch, r, j0, w);
}
#else
void main()
{
    uint ch = gl_GlobalInvocationID.x, r = gl_WorkGroupID.y;
    if (ch >= p.C || r >= p.n_runs) return;
    uint slot = p.runs.v[4u * r], c0 = p.runs.v[4u * r + 1u], n = p.runs.v[4u * r + 2u];
    uint cur = uint64_t(p.slots) == 0ul ? 0u : p.slots.v[4u * slot];
    uint K = p.K;
    float w[KMAX], hist[KMAX]; // hist[j]: the pre-conv row K-1-j before the current one
    for (uint j = 0u; j < K; j++) w[j] = wget(p.w, p.wdtype, p.C, K, ch, j);
    uint64_t wc = uint64_t(win(slot, cur, ch));
    for (uint j = 0u; j + 1u < K; j++) hist[j] = act_get(wc, j * p.C);
    for (uint c = c0; c < c0 + n; c++) {
        float xv = act_get(uint64_t(p.x), c * p.C + ch);
        float acc = w[K - 1u] * xv;
        for (uint j = 0u; j + 1u < K; j++) acc += w[j] * hist[j];
        act_set(uint64_t(p.y), c * p.C + ch, acc / (1.0 + exp(-acc)));
        for (uint j = 0u; j + 2u < K; j++) hist[j] = hist[j + 1u];
        if (K > 1u) hist[K - 2u] = xv;
        if (p.mode == 1u) {
            uint64_t ws = uint64_t(win(slot, (cur + c - c0 + 1u) % p.n_snap, ch));
            for (uint j = 0u; j + 1u < K; j++) act_set(ws, j * p.C, hist[j]);
        }
    }
    if (p.mode == 0u)
        for (uint j = 0u; j + 1u < K; j++) act_set(wc, j * p.C, hist[j]);
}
#endif
