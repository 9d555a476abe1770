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
// parallel over positions. A K-tap causal convolution, not a scan: column j >= K-1 of a run reads
// only x rows j-K+1 .. j of the run, which nothing writes here. Columns 0 .. K-2 need the window:
// all of them are done by the run's first invocation (j = 0), which then writes the new window (the
// run's last K-1 rows), so the window is read and written by one invocation per (run, channel) and
// no other reads it. Grid z = column j of the run; its extent is the longest run the step can hold
// (cols - n_runs + 1), groups past their run's end exit.
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
float silu(float v) { return v / (1.0 + exp(-v)); }

void main()
{
    uint ch = gl_GlobalInvocationID.x, r = gl_WorkGroupID.y, j = gl_WorkGroupID.z;
    if (ch >= p.C || r >= p.n_runs) return;
    uint slot = p.runs.v[4u * r], c0 = p.runs.v[4u * r + 1u], n = p.runs.v[4u * r + 2u];
    uint K = p.K;
    if (j >= n || (j > 0u && j + 1u < K)) return; // columns 1 .. K-2 are the first invocation's
    float w[KMAX];
    for (uint i = 0u; i < K; i++) w[i] = wget(p.w, p.wdtype, p.C, K, ch, i);
    if (j + 1u >= K) { // every tap inside the run
        uint b = c0 + j + 1u - K;
        float acc = 0.0;
        for (uint i = 0u; i < K; i++) acc += w[i] * p.x.v[(b + i) * p.C + ch];
        p.y.v[(c0 + j) * p.C + ch] = silu(acc);
        return;
    }
    // j = 0 (K >= 2): the columns whose taps reach into the window, one after another
    uint cur = uint64_t(p.slots) == 0ul ? 0u : p.slots.v[4u * slot];
    float hist[KMAX];
    F32Buf wc = win(slot, cur, ch);
    for (uint i = 0u; i + 1u < K; i++) hist[i] = wc.v[i * p.C];
    uint head = min(K - 1u, n);
    for (uint c = c0; c < c0 + head; c++) {
        float xv = p.x.v[c * p.C + ch];
        float acc = w[K - 1u] * xv;
        for (uint i = 0u; i + 1u < K; i++) acc += w[i] * hist[i];
        p.y.v[c * p.C + ch] = silu(acc);
        for (uint i = 0u; i + 2u < K; i++) hist[i] = hist[i + 1u];
        hist[K - 2u] = xv;
    }
    // the new window: the run's last K-1 rows (hist already holds them when the run is that short)
    if (n > head)
        for (uint i = 0u; i + 1u < K; i++) hist[i] = p.x.v[(c0 + n + 1u + i - K) * p.C + ch];
    for (uint i = 0u; i + 1u < K; i++) wc.v[i * p.C] = hist[i];
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
    F32Buf wc = win(slot, cur, ch);
    for (uint j = 0u; j + 1u < K; j++) hist[j] = wc.v[j * p.C];
    for (uint c = c0; c < c0 + n; c++) {
        float xv = p.x.v[c * p.C + ch];
        float acc = w[K - 1u] * xv;
        for (uint j = 0u; j + 1u < K; j++) acc += w[j] * hist[j];
        p.y.v[c * p.C + ch] = acc / (1.0 + exp(-acc));
        for (uint j = 0u; j + 2u < K; j++) hist[j] = hist[j + 1u];
        if (K > 1u) hist[K - 2u] = xv;
        if (p.mode == 1u) {
            F32Buf ws = win(slot, (cur + c - c0 + 1u) % p.n_snap, ch);
            for (uint j = 0u; j + 1u < K; j++) ws.v[j * p.C] = hist[j];
        }
    }
    if (p.mode == 0u)
        for (uint j = 0u; j + 1u < K; j++) wc.v[j * p.C] = hist[j];
}
#endif
