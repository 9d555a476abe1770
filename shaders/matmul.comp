#version 460
// matmul.comp - y[c][n] (+)= Σ_k W[n][k]·x'[c][k] for the COLS columns of one pass, all rows n;
// x' = x, or its RMSNorm g ⊙ x / rms(x) when a gain is given (fused input norm). With SWIGLU the
// kernel reads a second weight W3 of the same shape and writes silu(W x')·(W3 x').
// W: [rows][k], type WTYPE (compile-time, kern_common.glsl codes), device layout of kernels.h.
// x: f32 [COLS][k], y: f32 [COLS][rows]; accumulation in f32.
//
// Geometry (128 threads): thread t is k-slice ks = t % KSL of row group rg = t / KSL. A row group
// owns RT consecutive rows (RT of W and, with SWIGLU, the same RT of W3); its KSL threads take the
// row's 16-byte weight "slots" (8 bf16/f16, 4 f32, 16 q8_0, 32 q4_0 elements) ks, ks + KSL, ...
// so KSL lanes read KSL·16 contiguous bytes of a row, and every weight byte is read once per pass.
// Why this shape: at 16 columns every weight element costs 16 FMAs, so the kernel is bound by
// FMA issue and by the x traffic, not by DRAM. Each thread keeps its RT rows × COLS sums in
// registers (one x vec4 serves RT rows), and the row groups of one subgroup read the SAME x
// addresses (lanes with equal ks), which the cache serves as one broadcast. KSL (8 .. 128) is
// picked by the host: small KSL = more rows a workgroup = more x reuse; large KSL = more
// workgroups for matrices with few rows.
// After the k loop the partial sums go through shared memory, [value][thread], and the
// workgroup's threads sum the KSL slices of each output. The fused norm's Σx² is computed by
// row group rg for columns rg, rg + NRG, ... (one extra x load per column it owns, not a dot per
// column per row group). Grid: x = ceil(rows / (NRG·RT)).
// CONV = 1 (LFM2's conv.in_proj with its short conv fused, kernels.h k_conv_step; decode steps, one
// column a slot): W is in_proj [3H][k] = [B | C | X], RT = 3 and row group g of workgroup w owns
// channel h = w·NRG + g: its rows h, H + h, 2H + h. The epilogue forms u = B·X and
// y[c][h] = C·(w0·u_{t-2} + w1·u_{t-1} + w2·u) from the slot's state entry (shortconv.comp's math,
// batch mode) and writes y [COLS][H] and the state; each (channel, slot) has one owner.
// Grid: x = ceil(H / NRG).
// CONV = 2 (Qwen3.5's dn.in_proj_qkv with the DeltaNet's conv fused, kernels.h k_dn_conv_step;
// decode steps, one column a slot): row n of the product is conv channel n, so the epilogue of
// output (n, c) runs dn_conv.comp's batch mode for it: y = silu(Σ_{j<K-1} w[n][j]·win[j][n] +
// w[n][K-1]·v) from the slot's window (its K-1 pre-conv rows, oldest first), which then drops its
// oldest row and takes v. y [COLS][rows]; each (channel, slot) has one owner.
#extension GL_EXT_control_flow_attributes : require
#include "kern_common.glsl"

#ifndef WTYPE
#define WTYPE DT_BF16
#endif
#ifndef SWIGLU
#define SWIGLU 0
#endif

#include "wslot.glsl"
#define NT 128u
#if WTYPE == DT_Q8_0 || WTYPE == DT_Q4_0
#define J4_LOOP [[dont_unroll]]
#else
#define J4_LOOP [[unroll]]
#endif

layout(constant_id = 0) const uint SG = 32;  // subgroup size of the device (unused: kept for the cache key)
layout(constant_id = 1) const uint KSL = 8;  // k-slices (threads) per row group: 8 .. 128
layout(constant_id = 2) const uint RT = 2;   // rows per row group (per matrix)
layout(constant_id = 3) const uint COLS = 1; // columns of this pass (<= 16)
layout(local_size_x_id = 4) in;              // NT = 128
layout(constant_id = 5) const uint CONV = 0; // 1: LFM2's short conv fused (RT = 3); 2: the DeltaNet's conv (above)

const uint NRG = NT / KSL;           // row groups per workgroup
#if SWIGLU
const uint NW = 2u;                  // matrices
#else
const uint NW = 1u;
#endif
const uint NACC = NW * RT * COLS;    // partial sums a thread keeps
const uint NSS = (COLS + NRG - 1u) / NRG; // Σx² columns a thread owns

layout(push_constant) uniform Push {
    uint64_t w;       // W quant / plain bytes
    uint64_t wscale;  // f16 scales [rows][k/32] (Q types)
    uint64_t w3;      // SWIGLU: the up weight
    uint64_t w3scale;
    uint64_t x;       // f32 [COLS][k], 16-byte aligned
    F32Buf y;         // [COLS][rows]
    uint64_t gain;    // norm gain [k], 0: no norm
    uint rows;
    uint k;
    uint accumulate;  // y += result
    uint gdtype;      // gain dtype
    float eps;
    uint plus1;       // gain is (1 + g)
    // CONV only: the conv state (CONV 1: entries [slots][n_snap][2][H]; CONV 2: the window of
    // entry 0 of slot 0, entries `stride` floats apart), taps [H][K] of type wdtype, the columns'
    // struct col_meta (their slots) and struct slot_meta (entry cur; 0: entry 0)
    F32Buf state;
    uint64_t conv_w;
    U32Buf colmeta;
    U32Buf slots;
    uint H;
    uint wdtype_snap; // taps dtype | n_snap << 8
    uint K;           // CONV 2: taps
    uint stride;      // CONV 2: floats between two state entries
} p;

shared float red[(NACC + NSS) * NT]; // [value][thread]

// Norm gain of elements 4·k4 .. 4·k4+3 (F32, F16 or BF16; p.gdtype is uniform).
vec4 gain4(uint k4) { return gain4_at(p.gain, p.gdtype, k4); }

// Row r (of matrix m) of row group g, column c: the sum of its KSL slices in red.
float slices(uint m, uint r, uint c, uint g)
{
    float v = 0.0;
    for (uint j = 0u; j < KSL; j++) v += red[((m * RT + r) * COLS + c) * NT + g * KSL + j];
    return v;
}

// The fused norm's factor of column c: its Σx² sits with row group c % NRG, slot c / NRG.
float norm_factor(uint c)
{
    float sq = 0.0;
    for (uint j = 0u; j < KSL; j++) sq += red[(NACC + c / NRG) * NT + (c % NRG) * KSL + j];
    return inversesqrt(sq / float(p.k) + p.eps);
}

// CONV 2: output v of channel ch in column c through the DeltaNet's conv (dn_conv.comp, batch mode),
// the slot's window moved on by one row. Every load before any store (the stores could alias them
// for all the compiler knows, so interleaved they would wait one on another).
#define KMAX 8u
float dn_conv(uint ch, uint c, float v)
{
    uint slot = p.colmeta.v[4u * c + 2u];
    uint cur = uint64_t(p.slots) == 0ul ? 0u : p.slots.v[4u * slot];
    uint wdt = p.wdtype_snap & 255u, n_snap = p.wdtype_snap >> 8, K = p.K;
    uint64_t win = uint64_t(p.state) + 4ul * (uint64_t(slot * n_snap + cur) * uint64_t(p.stride) + uint64_t(ch));
    float h[KMAX - 1u];
    float acc = wget(p.conv_w, wdt, p.H, K, ch, K - 1u) * v;
    [[unroll]] for (uint j = 0u; j + 1u < KMAX; j++) {
        h[j] = j + 1u < K ? act_get(win, j * p.H) : 0.0;
        acc += j + 1u < K ? wget(p.conv_w, wdt, p.H, K, ch, j) * h[j] : 0.0;
    }
    // row j of the window becomes its row j + 1, the last v
    [[unroll]] for (uint j = 0u; j + 1u < KMAX; j++)
        if (j + 1u < K) act_set(win, j * p.H, j + 2u < K ? h[j + 1u] : v);
    return acc / (1.0 + exp(-acc));
}

void main()
{
    uint tid = gl_LocalInvocationIndex, ks = tid % KSL, rg = tid / KSL;
    uint row0 = gl_WorkGroupID.x * (NRG * RT) + rg * RT;
    uint row_slots = p.k / G, kv4 = p.k / 4u;
    bool norm = p.gain != 0ul;
    float one = p.plus1 != 0u ? 1.0 : 0.0;
    // 32-bit element indices off typed pointers: one wide multiply-add per address
    UVec4Buf W[2] = UVec4Buf[2](UVec4Buf(p.w), UVec4Buf(p.w3 != 0ul ? p.w3 : p.w));
    uint64_t S[2] = uint64_t[2](p.wscale, p.w3scale);

    float acc[NW][RT][COLS];
    float ss[NSS];
    uint slot0[RT]; // first slot of each row (rows past the end read the last row)
    uint ch = CONV == 1u ? min(gl_WorkGroupID.x * NRG + rg, p.H - 1u) : 0u; // this row group's channel
    [[unroll]] for (uint r = 0u; r < RT; r++) {
        slot0[r] = (CONV == 1u ? r * p.H + ch : min(row0 + r, p.rows - 1u)) * row_slots;
        [[unroll]] for (uint m = 0u; m < NW; m++)
            [[unroll]] for (uint c = 0u; c < COLS; c++) acc[m][r][c] = 0.0;
    }
    [[unroll]] for (uint i = 0u; i < NSS; i++) ss[i] = 0.0;

    // software pipeline: the next slot's weights load while this slot's FMAs run
    uvec4 raw[NW][RT];
    float sc[NW][RT];
    uint s = ks;
    if (s < row_slots)
        [[unroll]] for (uint m = 0u; m < NW; m++)
            [[unroll]] for (uint r = 0u; r < RT; r++) {
                raw[m][r] = W[m].v[slot0[r] + s];
                sc[m][r] = block_scale(S[m], slot0[r] + s);
            }
    for (; s < row_slots; s += KSL) {
        uvec4 cur[NW][RT] = raw;
        float csc[NW][RT] = sc;
        uint sn = s + KSL;
        if (sn < row_slots)
            [[unroll]] for (uint m = 0u; m < NW; m++)
                [[unroll]] for (uint r = 0u; r < RT; r++) {
                    raw[m][r] = W[m].v[slot0[r] + sn];
                    sc[m][r] = block_scale(S[m], slot0[r] + sn);
                }
        // Q types: the 8 (Q4_0) or 4 (Q8_0) quarters stay a loop: unrolled, the compiler hoists
        // all their x loads and spills (measured on the H200, bench/03)
        J4_LOOP for (uint j4 = 0u; j4 < G4; j4++) {
            uint k4 = s * G4 + j4; // vec4 index of these 4 elements in a row of x
            vec4 gv = vec4(1.0);
            if (norm) {
                gv = one + gain4(k4);
                [[unroll]] for (uint i = 0u; i < NSS; i++) {
                    uint c = rg + i * NRG;
                    if (c < COLS) {
                        vec4 xv = act_get4(p.x, c * kv4 + k4);
                        ss[i] += dot(xv, xv);
                    }
                }
            }
            vec4 wv[NW][RT];
            [[unroll]] for (uint m = 0u; m < NW; m++)
                [[unroll]] for (uint r = 0u; r < RT; r++) wv[m][r] = unpack4(cur[m][r], csc[m][r], j4) * gv;
            [[unroll]] for (uint c = 0u; c < COLS; c++) {
                vec4 xv = act_get4(p.x, c * kv4 + k4);
                [[unroll]] for (uint m = 0u; m < NW; m++)
                    [[unroll]] for (uint r = 0u; r < RT; r++) acc[m][r][c] += dot(wv[m][r], xv);
            }
        }
    }

    [[unroll]] for (uint m = 0u; m < NW; m++)
        [[unroll]] for (uint r = 0u; r < RT; r++)
            [[unroll]] for (uint c = 0u; c < COLS; c++) red[((m * RT + r) * COLS + c) * NT + tid] = acc[m][r][c];
    [[unroll]] for (uint i = 0u; i < NSS; i++) red[(NACC + i) * NT + tid] = ss[i];
    barrier();

    // CONV: one (channel, column) per iteration: its three sums, then the short conv
    for (uint o = tid; CONV == 1u && o < NRG * COLS; o += NT) {
        uint c = o % COLS, g = o / COLS, h = gl_WorkGroupID.x * NRG + g;
        if (h >= p.H) continue;
        float f = norm ? norm_factor(c) : 1.0, v[3];
        [[unroll]] for (uint r = 0u; r < 3u; r++) v[r] = slices(0u, r, c, g) * f;
        uint slot = p.colmeta.v[4u * c + 2u];
        uint cur = uint64_t(p.slots) == 0ul ? 0u : p.slots.v[4u * slot];
        uint wdt = p.wdtype_snap & 255u, s = (slot * (p.wdtype_snap >> 8) + cur) * 2u * p.H + h;
        uint64_t st = uint64_t(p.state);
        float u2 = act_get(st, s), u1 = act_get(st, s + p.H), u = v[0] * v[2];
        float w0 = wget(p.conv_w, wdt, p.H, 3u, h, 0u), w1 = wget(p.conv_w, wdt, p.H, 3u, h, 1u);
        float w2 = wget(p.conv_w, wdt, p.H, 3u, h, 2u);
        act_set(uint64_t(p.y), c * p.H + h, v[1] * (w0 * u2 + w1 * u1 + w2 * u));
        act_set(st, s, u1);
        act_set(st, s + p.H, u);
    }

    // one output (row, column) per iteration: sum its KSL slices
    for (uint o = tid; CONV != 1u && o < NRG * RT * COLS; o += NT) {
        uint c = o % COLS, rl = o / COLS, g = rl / RT, r = rl % RT;
        uint row = gl_WorkGroupID.x * (NRG * RT) + rl;
        if (row >= p.rows) continue;
        float v = slices(0u, r, c, g), v3 = NW > 1u ? slices(1u, r, c, g) : 0.0;
        if (norm) {
            float f = norm_factor(c);
            v *= f;
            v3 *= f;
        }
#if SWIGLU
        v = v / (1.0 + exp(-v)) * v3;
#endif
        if (CONV == 2u) v = dn_conv(row, c, v);
        uint oi = c * p.rows + row;
        if (p.accumulate != 0u) v += act_get(uint64_t(p.y), oi);
        act_set(uint64_t(p.y), oi, v);
    }
}
