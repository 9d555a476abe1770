#version 460
// dn_conv.comp - the Gated DeltaNet's causal depthwise conv + SiLU over the qkv channels of one
// step. For each run (the columns of one slot, at successive positions) and channel ch:
//   y_t = silu(Σ_{j<K} w[ch][j] · x_{t-K+1+j})        (tap K-1 multiplies the current row)
// with the K-1 rows before the run taken from the slot's window, which then keeps the run's last
// K-1 pre-conv rows (zeros when a slot starts, as the engine zeroes state).
// x: f32 [cols][C] (in_proj_qkv output, [q | k | v]); w: [C][K] F32/F16/BF16;
// window: f32 per slot at slot·slot_stride floats, [K-1][C] ([0] = oldest row);
// y: f32 [cols][C]. K <= 8.
// Grid: x over channels (64 a group), y = run. One invocation owns (run, channel): race-free.
#include "kern_common.glsl"

#define KMAX 8

layout(local_size_x = 64) in;

layout(push_constant) uniform Push {
    F32Buf x;
    uint64_t w;
    F32Buf window;
    F32Buf y;
    U32Buf runs; // struct run_meta [n_runs]: slot, first_col, n_cols, pos0
    uint C;
    uint K;
    uint n_runs;
    uint wdtype;
    uint slot_stride; // floats between two slots' windows
    uint pad;
} p;

void main()
{
    uint ch = gl_GlobalInvocationID.x, r = gl_WorkGroupID.y;
    if (ch >= p.C || r >= p.n_runs) return;
    uint slot = p.runs.v[4u * r], c0 = p.runs.v[4u * r + 1u], n = p.runs.v[4u * r + 2u];
    uint K = p.K, base = slot * p.slot_stride + ch;
    float w[KMAX], hist[KMAX]; // hist[j]: the pre-conv row K-1-j before the current one
    for (uint j = 0u; j < K; j++) w[j] = wget(p.w, p.wdtype, p.C, K, ch, j);
    for (uint j = 0u; j + 1u < K; j++) hist[j] = p.window.v[base + j * p.C];
    for (uint c = c0; c < c0 + n; c++) {
        float xv = p.x.v[c * p.C + ch];
        float acc = w[K - 1u] * xv;
        for (uint j = 0u; j + 1u < K; j++) acc += w[j] * hist[j];
        p.y.v[c * p.C + ch] = acc / (1.0 + exp(-acc));
        for (uint j = 0u; j + 2u < K; j++) hist[j] = hist[j + 1u];
        if (K > 1u) hist[K - 2u] = xv;
    }
    for (uint j = 0u; j + 1u < K; j++) p.window.v[base + j * p.C] = hist[j];
}
