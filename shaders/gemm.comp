#version 460
// gemm.comp - the tiled matrix product of the wide plan: y[c][n] (+)= Σ_k W[n][k]·x'[c][k] for
// c < cols, n < rows, x' = x or its RMSNorm g ⊙ x / rms(x) (fused input norm); with SWIGLU a
// second weight W3 of the same shape and y = silu(W x')·(W3 x'). The same function as matmul.comp,
// made for many columns: each workgroup owns a tile of BM weight rows (of each matrix) × BN
// columns and walks k in steps of BK, so a weight tile is read from memory once per BN columns
// (the column tiles of one row tile are neighbours in the grid and meet it in L2).
// W: [rows][k], type WTYPE, device layout of kernels.h; x: f32 [cols][k]; y: f32 [cols][rows].
//
// Two implementations of the inner product, one source (COOPMAT, a compile-time define):
//  - COOPMAT=1: cooperative matrices (16×16×16, f16 × f16 + f32) of GL_NV_cooperative_matrix, or of
//    GL_KHR_cooperative_matrix with COOPMAT_KHR=1 (coopmat.glsl: the same products, loads and
//    stores; the KHR variants' words are prebuilt, shaders/variants.txt), NT / 32 subgroups of 32 in an
//    SGM × (NT/32/SGM) grid, each owning (BM/SGM) × (BN·SGM·32/NT) outputs of each matrix. Activations stay f32-accurate:
//    each x' is split into an f16 high part (its top 11 significant bits) and an f16 low part
//    (x' = hi + lo, |lo| < 2^-10 |x'|, 22 significant bits together) and both are multiplied into
//    one f32 accumulator. F16 and BF16 weights are exact in f16 (BF16 down to 2^-17, below which
//    the absolute error is < 2^-25); F32 and Q8_0 weights (Q8_0's q·d has up to 18 significant
//    bits, and its small blocks fall to f16 subnormals) are split too, and w_lo·x_hi is a third
//    product (w_lo·x_lo, < 2^-20 relative, is dropped). Q4_0's q·d (|q| <= 8: at most 3 bits more
//    than d's) is rounded to f16 once when staged: <= 2^-12 relative a weight, exact where d has at
//    most 8 significant bits (as in files quantized from BF16), and two products, not three, at
//    Q4_0's step of ~2^-4 of its block's range (bench/31: Q4_0 prefill 512 -24 %).
//    |x'| and |w| must stay under 65504. Errors measured against a double reference: bench/06.
//  - COOPMAT=0: the shared-memory FMA twin (devices without cooperative matrices, CI): f32 tiles in
//    shared memory, NT = 256 threads in a 16 × 16 grid, each with (BM/16) rows × (BN/16) columns of
//    f32 sums. Exact f32 arithmetic.
// SERVING=1 (--precision serving, the _serving variants): what llama.cpp and production engines
// compute instead: x' and w each rounded to f16 (to nearest) once, one product per k slice
// (cooperative matrices: x' in the f16 high part alone, no low parts of x or w, so XSPLIT = WSPLIT = 0:
// half the tensor work of F16/BF16/Q4_0 weights, a third of F32/Q8_0's), f32 sums. The FMA twin
// rounds x' and w to f16 as it stages them, so a device without cooperative matrices (CI's
// lavapipe) computes the same numbers and the goldens measure the serving error (bench/41).
// Both stage the tiles the same way: per k step each thread fetches its share of the weight tile
// (units of 16 elements of one row) and of the x tile (units of 8 elements of one column) into
// registers, the next step's fetch is issued before this step's products, and the weight units
// are widened (and split) when stored to shared memory. Rows past the end read the last row,
// columns past the end and k past the end read zeros; nothing past the end is written.
// x comes prepared by gemm_xprep.comp, once per product (the fused norm applied there): 16 bytes
// per 4 elements [cols][k/4], COOPMAT: f16 hi/lo pairs (uvec4(hi01, hi23, lo01, lo23); SERVING:
// the f16 of x' in the hi places, lo 0 and not read), else f32;
// so its staging is a copy. The push block's gain is not read (the host passes the plain x to the
// twin when there is no norm: the same layout). XRAW = 1 (cooperative matrices, a product with no
// norm whose outputs need no zeroing): x is the plain f32 x, split into hi/lo while it is staged,
// so no prep dispatch runs before the product (narrow steps, where a prep costs what a product does).
// Split-k: with z workgroups (gl_NumWorkGroups.z > 1) workgroup z sums k in [z·kper, (z+1)·kper)
// (kper a multiple of BK) and adds its sums into y with atomics (FADD: float atomic add, else a
// compare-and-swap loop); y holds 0 (or the residual) before. Not with SWIGLU (its epilogue is
// not linear).
// Grid: x = ceil(cols / BN) (column tiles of one row tile adjacent), y = ceil(rows / BM), z = splits.
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_GOOGLE_include_directive : require // glslc enables it unasked, glslang 15 (COOPMAT_KHR) does not
#include "kern_common.glsl"

#ifndef WTYPE
#define WTYPE DT_BF16
#endif
#ifndef SWIGLU
#define SWIGLU 0
#endif
#ifndef COOPMAT
#define COOPMAT 0
#endif
#ifndef FADD
#define FADD 0 // 1: split-k sums by float atomic add (GL_EXT_shader_atomic_float), else a CAS loop
#endif
#if FADD
#extension GL_EXT_shader_atomic_float : require
#endif
#ifndef SERVING
#define SERVING 0 // 1: serving precision (header)
#endif
#ifndef XSPLIT // x' as f16 hi + lo; 0: x' as one f16 (serving, and the roof bench)
#if SERVING
#define XSPLIT 0
#else
#define XSPLIT 1
#endif
#endif
#if COOPMAT
#include "coopmat.glsl"
#if (WTYPE == DT_F32 || WTYPE == DT_Q8_0) && !SERVING
#define WSPLIT 1
#else
#define WSPLIT 0
#endif
#endif
#if SWIGLU
#define NM 2u
#else
#define NM 1u
#endif

layout(constant_id = 0) const uint SG = 32;  // subgroup size (COOPMAT: 32)
layout(constant_id = 1) const uint BM = 64;  // weight rows a workgroup owns (of each matrix)
layout(constant_id = 2) const uint BN = 64;  // columns a workgroup owns
layout(constant_id = 3) const uint BK = 32;  // k step, a multiple of 32 (one Q block)
layout(local_size_x_id = 4) in;              // NT: 32 a subgroup (COOPMAT: 128 or 256) or 256
layout(constant_id = 5) const uint NBUF = 1; // shared tile buffers: 2 = double-buffered (header)
layout(constant_id = 6) const uint SGM = 2;  // COOPMAT: subgroups along the rows (NT / 32 / SGM along the columns)
// k steps fetched ahead into registers (1 or 2; one buffer only); 0: none, each step's loads are
// issued just before its staging, so no fetched values live through the products: 28-36 registers
// fewer, more workgroups a multiprocessor, and 25 % slower at 64-512 columns on the H200 (bench/25:
// the loads in flight are what the kernel lives on; a tuning hook)
layout(constant_id = 7) const uint PF = 1;
layout(constant_id = 8) const uint XRAW = 0; // COOPMAT: x is plain f32, split while staged
// COOPMAT: how a k step's fragments meet the products (bench/19): 0 each weight fragment loaded
// just before its products; 1 all fragments of a 16-wide k slice loaded, then its products, the
// low parts' products of every output before the high parts'; 2 as 1 with the next slice's
// fragments loaded before this slice's products (two fragment sets). Every output sums the same
// products in the same order in all three.
layout(constant_id = 9) const uint FRAG = 0;
const uint NT = gl_WorkGroupSize.x;

layout(push_constant) uniform Push {
    uint64_t w;       // W quant / plain bytes
    uint64_t wscale;  // f16 scales [rows][k/32] (Q types)
    uint64_t w3;      // SWIGLU: the up weight
    uint64_t w3scale;
    uint64_t x;       // prepared x' (header), 16-byte aligned
    F32Buf y;         // [cols][rows]
    uint64_t gain;    // norm gain [k], 0: no norm
    uint rows;
    uint k;
    uint accumulate;  // y += result
    uint gdtype;      // gain dtype
    float eps;
    uint plus1;       // gain is (1 + g)
    uint cols;
    uint kper;        // k per split (a multiple of BK) when gl_NumWorkGroups.z > 1
} p;

// ---- staging: units per thread and k step
const uint AU = BK / 16u;                      // weight units a row holds per step
const uint NUA = (NM * BM * AU + NT - 1u) / NT; // weight units a thread fetches
const uint XU = BK / 8u;                       // x units a column holds per step
const uint NUX = (BN * XU + NT - 1u) / NT;     // x units a thread fetches
// 16-byte slots a fetched weight unit of 16 elements needs
#if WTYPE == DT_F32
#define WSLOTS 4u
#elif WTYPE == DT_F16 || WTYPE == DT_BF16
#define WSLOTS 2u
#else
#define WSLOTS 1u
#endif

#if COOPMAT
// f16 tiles as uvec4 (8 halves): widened units are stored 16 bytes at a time; the row pitch keeps
// rows 16-byte aligned and rotates the banks
const uint BKP = BK + 8u; // halves
const uint BKQ = BKP / 8u; // uvec4
const uint SA = NM * BM * BKQ, SX = BN * BKQ; // one buffer's uvec4s
shared uvec4 sA[NBUF * SA];
#if WSPLIT
shared uvec4 sAlo[NBUF * SA];
#endif
shared uvec4 sX[NBUF * SX];
#if XSPLIT
shared uvec4 sXlo[NBUF * SX];
#endif
shared float sC[(NT / 32u) * 256u * NM]; // per subgroup: one 16×16 result of each matrix
#else
const uint BKP = BK + 1u; // f32 row pitch: the 16 rows a thread group reads sit in 16 banks
const uint SA = NM * BM * BKP, SX = BN * BKP; // one buffer's floats
shared float sA[NBUF * SA];
shared float sX[NBUF * SX];
#endif
// Fetched, not yet widened: a weight unit is WSLOTS 16-byte slots and a block scale; an x unit is
// 2 prepared 16-byte units.
struct WRaw { uvec4 s[WSLOTS]; float sc; };

// Weight unit: elements k0 .. k0+15 of row `row` of matrix m (k0 a multiple of 16).
WRaw fetch_w(uint m, uint row, uint k0)
{
    WRaw r;
    r.sc = 1.0;
    UVec4Buf W = UVec4Buf(m == 0u ? p.w : p.w3);
#if WTYPE == DT_F32
    [[unroll]] for (uint j = 0u; j < 4u; j++)
        r.s[j] = k0 + 4u * j < p.k ? W.v[(row * p.k + k0) / 4u + j] : uvec4(0u);
#elif WTYPE == DT_F16 || WTYPE == DT_BF16
    [[unroll]] for (uint j = 0u; j < 2u; j++)
        r.s[j] = k0 + 8u * j < p.k ? W.v[(row * p.k + k0) / 8u + j] : uvec4(0u);
#else
    uint blk = row * (p.k / 32u) + k0 / 32u;
    r.sc = float(F16Buf(m == 0u ? p.wscale : p.w3scale).v[blk]);
#if WTYPE == DT_Q8_0
    r.s[0] = W.v[blk * 2u + (k0 / 16u) % 2u];
#else
    r.s[0] = W.v[blk]; // both halves of the block: low nibbles 0..15, high nibbles 16..31
#endif
#endif
    return r;
}

// Element j (< 16) of a fetched weight unit at k0, widened.
float unit_w(WRaw r, uint k0, uint j)
{
#if WTYPE == DT_F32
    return uintBitsToFloat(r.s[j / 4u][j % 4u]);
#elif WTYPE == DT_F16
    uint u = r.s[j / 8u][(j % 8u) / 2u];
    return unpackHalf2x16(u)[j % 2u];
#elif WTYPE == DT_BF16
    uint u = r.s[j / 8u][(j % 8u) / 2u];
    return j % 2u == 0u ? bf16_lo(u) : bf16_hi(u);
#elif WTYPE == DT_Q8_0
    int q = int(r.s[0][j / 4u]);
    return float(bitfieldExtract(q, int(8u * (j % 4u)), 8)) * r.sc;
#else
    uint q = (r.s[0][j / 4u] >> (8u * (j % 4u) + ((k0 / 16u) % 2u) * 4u)) & 15u;
    return (float(q) - 8.0) * r.sc;
#endif
}

// Fetched units of a k step: two register sets, so that with PF = 2 one step's loads are in flight
// while the previous step's are staged.
WRaw ra[2][NUA];
uvec4 rx[2][NUX][2];

// Issues the global loads of step kb into register set s: the weight units, then the x units.
void fetch(uint s, uint row0, uint col0, uint kb)
{
    [[unroll]] for (uint i = 0u; i < NUA; i++) {
        uint u = gl_LocalInvocationIndex + i * NT;
        if (u < NM * BM * AU) {
            uint m = u / (BM * AU), r = (u / AU) % BM;
            ra[s][i] = fetch_w(m, min(row0 + r, p.rows - 1u), kb + (u % AU) * 16u);
        }
    }
    [[unroll]] for (uint i = 0u; i < NUX; i++) {
        uint u = gl_LocalInvocationIndex + i * NT;
        uint c = col0 + u / XU, k0 = kb + (u % XU) * 8u;
        [[unroll]] for (uint j = 0u; j < 2u; j++)
            rx[s][i][j] = u < BN * XU && c < p.cols && k0 + 4u * j < p.k ? act_getu4(p.x, (c * p.k + k0) / 4u + j)
                                                                           : uvec4(0u);
    }
}

#if COOPMAT
// v = hi + lo, hi exact in f16 (sign, exponent and the top 10 mantissa bits: 11 significant bits),
// lo = v - hi exact in f32 and |lo| < 2^-10 |v|, so hi + f16(lo) keeps 22 bits. By masking, not by
// an f16 round trip: the driver folds float(float16_t(v)) into v (measured: lo came out 0).
// |v| must stay under 65504 (f16 range).
vec2 split(float v)
{
    float h = uintBitsToFloat(floatBitsToUint(v) & 0xffffe000u);
    return vec2(h, v - h);
}

// 8 values as f16 hi parts (and lo parts) in two uvec4 (lo only when `lo_too`).
void pack8(float v[8], bool lo_too, out uvec4 hi, out uvec4 lo)
{
    [[unroll]] for (uint e = 0u; e < 4u; e++) {
        vec2 a = lo_too ? split(v[2u * e]) : vec2(v[2u * e], 0.0);
        vec2 b = lo_too ? split(v[2u * e + 1u]) : vec2(v[2u * e + 1u], 0.0);
        hi[e] = packHalf2x16(vec2(a.x, b.x));
        lo[e] = packHalf2x16(vec2(a.y, b.y));
    }
}
#endif

#if !COOPMAT
// The FMA twin's operands: v, or (SERVING) v rounded to f16 to nearest, as the tensor cores take it.
float to_f16(float v)
{
#if SERVING
    return unpackHalf2x16(packHalf2x16(vec2(v, 0.0))).x;
#else
    return v;
#endif
}
#endif

// Tile row mr (= m·BM + r), elements k0 .. k0+15 of this step.
void put_a(uint b, uint mr, uint k0, float v[16])
{
#if COOPMAT
    [[unroll]] for (uint q = 0u; q < 2u; q++) {
        float h[8];
        [[unroll]] for (uint j = 0u; j < 8u; j++) h[j] = v[8u * q + j];
        uvec4 hi, lo;
        pack8(h, WSPLIT != 0, hi, lo);
        uint o = b * SA + (mr * BKP + k0) / 8u + q;
        sA[o] = hi;
#if WSPLIT
        sAlo[o] = lo;
#endif
    }
#else
    [[unroll]] for (uint j = 0u; j < 16u; j++) sA[b * SA + mr * BKP + k0 + j] = to_f16(v[j]);
#endif
}

// Tile column c, elements k0 .. k0+7 of this step: two prepared units, copied (XRAW: 8 f32
// values, split here).
void put_x(uint bf, uint c, uint k0, uvec4 a, uvec4 b)
{
#if COOPMAT
    uint o = bf * SX + (c * BKP + k0) / 8u;
    if (XRAW != 0u) {
        float v[8];
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            v[j] = uintBitsToFloat(a[j]);
            v[4u + j] = uintBitsToFloat(b[j]);
        }
        uvec4 hi, lo;
        pack8(v, XSPLIT != 0, hi, lo);
        sX[o] = hi;
#if XSPLIT
        sXlo[o] = lo;
#endif
        return;
    }
    sX[o] = uvec4(a.xy, b.xy);
#if XSPLIT
    sXlo[o] = uvec4(a.zw, b.zw);
#endif
#else
    vec4 fa = uintBitsToFloat(a), fb = uintBitsToFloat(b);
    [[unroll]] for (uint j = 0u; j < 4u; j++) {
        sX[bf * SX + c * BKP + k0 + j] = to_f16(fa[j]);
        sX[bf * SX + c * BKP + k0 + 4u + j] = to_f16(fb[j]);
    }
#endif
}

// Widens the fetched weight units of step kb (register set s) into shared buffer b and copies the
// x units.
void stage(uint s, uint b, uint kb)
{
    [[unroll]] for (uint i = 0u; i < NUA; i++) {
        uint u = gl_LocalInvocationIndex + i * NT;
        if (u < NM * BM * AU) {
            uint k0 = (u % AU) * 16u;
            float v[16];
            [[unroll]] for (uint j = 0u; j < 16u; j++) v[j] = unit_w(ra[s][i], kb + k0, j);
            put_a(b, u / AU, k0, v);
        }
    }
    [[unroll]] for (uint i = 0u; i < NUX; i++) {
        uint u = gl_LocalInvocationIndex + i * NT;
        if (u < BN * XU) put_x(b, u / XU, (u % XU) * 8u, rx[s][i][0], rx[s][i][1]);
    }
}

// The epilogue of one output: SwiGLU, residual, store; a split's partial sum is added atomically.
void put(uint row, uint col, float v, float v3)
{
    if (row >= p.rows || col >= p.cols) return;
#if SWIGLU
    v = v / (1.0 + exp(-v)) * v3;
#endif
    uint oi = col * p.rows + row;
    if (gl_NumWorkGroups.z > 1u) {
#if FADD
        atomicAdd(p.y.v[oi], v);
#else
        U32Buf yu = U32Buf(uint64_t(p.y));
        uint old = yu.v[oi];
        for (;;) {
            uint seen = atomicCompSwap(yu.v[oi], old, floatBitsToUint(uintBitsToFloat(old) + v));
            if (seen == old) break;
            old = seen;
        }
#endif
        return;
    }
    if (p.accumulate != 0u) v += act_get(uint64_t(p.y), oi);
    act_set(uint64_t(p.y), oi, v);
}

#if COOPMAT
const uint SGN = NT / 32u / SGM;          // subgroups along the columns
const uint WM = BM / SGM, WN = BN / SGN; // a subgroup's outputs (of each matrix)
const uint FM = WM / 16u, FN = WN / 16u;
#else
const uint TM = BM / 16u, TN = BN / 16u; // a thread's outputs (of each matrix)
#endif

#if COOPMAT
CM_C acc[NM][FM][FN];
CM_B fxh[2][FN]; // FRAG 1, 2: fragment sets of a k slice
#if XSPLIT
CM_B fxl[2][FN];
#endif
CM_A fa[2][NM * FM];
#if WSPLIT
CM_A fal[2][NM * FM];
#endif

// Where a subgroup's fragments of k slice kk of shared buffer b start: column block j of x, row
// block i of matrix m of the weights (uvec4 units).
uint x_frag(uint b, uint kk, uint wn, uint j)
{
    return b * SX + ((wn * WN + j * 16u) * BKP + kk) / 8u;
}
uint a_frag(uint b, uint kk, uint wm, uint m, uint i)
{
    return b * SA + ((m * BM + wm * WM + i * 16u) * BKP + kk) / 8u;
}

// Loads the fragments of k slice kk of shared buffer b into set s.
void load_frags(uint b, uint kk, uint s, uint wm, uint wn)
{
    [[unroll]] for (uint j = 0u; j < FN; j++) {
        uint o = x_frag(b, kk, wn, j);
        cm_load_cols(fxh[s][j], sX, o, BKQ);
#if XSPLIT
        cm_load_cols(fxl[s][j], sXlo, o, BKQ);
#endif
    }
    [[unroll]] for (uint m = 0u; m < NM; m++)
        [[unroll]] for (uint i = 0u; i < FM; i++) {
            uint o = a_frag(b, kk, wm, m, i);
            cm_load_rows(fa[s][m * FM + i], sA, o, BKQ);
#if WSPLIT
            cm_load_rows(fal[s][m * FM + i], sAlo, o, BKQ);
#endif
        }
}

// The products of fragment set s: every output's low-part products, then the high parts'.
void frag_products(uint s)
{
#if XSPLIT
    [[unroll]] for (uint m = 0u; m < NM; m++)
        [[unroll]] for (uint i = 0u; i < FM; i++)
            [[unroll]] for (uint j = 0u; j < FN; j++)
                acc[m][i][j] = cm_muladd(fa[s][m * FM + i], fxl[s][j], acc[m][i][j]);
#endif
#if WSPLIT
    [[unroll]] for (uint m = 0u; m < NM; m++)
        [[unroll]] for (uint i = 0u; i < FM; i++)
            [[unroll]] for (uint j = 0u; j < FN; j++)
                acc[m][i][j] = cm_muladd(fal[s][m * FM + i], fxh[s][j], acc[m][i][j]);
#endif
    [[unroll]] for (uint m = 0u; m < NM; m++)
        [[unroll]] for (uint i = 0u; i < FM; i++)
            [[unroll]] for (uint j = 0u; j < FN; j++)
                acc[m][i][j] = cm_muladd(fa[s][m * FM + i], fxh[s][j], acc[m][i][j]);
}
#else
float acc[NM][TM][TN];
#endif

// This step's products from shared buffer b into acc.
void products(uint b)
{
    uint tid = gl_LocalInvocationIndex;
#if COOPMAT
    uint sgi = tid / 32u, wm = sgi % SGM, wn = sgi / SGM;
#else
    uint tr = tid % 16u, tc = tid / 16u;
#endif
#if COOPMAT
    if (FRAG != 0u) {
        load_frags(b, 0u, 0u, wm, wn);
        [[unroll]] for (uint kk = 0u; kk < BK; kk += 16u) {
            uint s = FRAG == 2u ? (kk / 16u) % 2u : 0u;
            if (FRAG == 1u && kk > 0u) load_frags(b, kk, 0u, wm, wn);
            if (FRAG == 2u && kk + 16u < BK) load_frags(b, kk + 16u, s ^ 1u, wm, wn);
            frag_products(s);
        }
        return;
    }
    [[unroll]] for (uint kk = 0u; kk < BK; kk += 16u) {
        CM_B xh[FN];
#if XSPLIT
        CM_B xl[FN];
#endif
        [[unroll]] for (uint j = 0u; j < FN; j++) {
            uint o = x_frag(b, kk, wn, j);
            cm_load_cols(xh[j], sX, o, BKQ);
#if XSPLIT
            cm_load_cols(xl[j], sXlo, o, BKQ);
#endif
        }
        [[unroll]] for (uint m = 0u; m < NM; m++)
            [[unroll]] for (uint i = 0u; i < FM; i++) {
                uint o = a_frag(b, kk, wm, m, i);
                CM_A a;
                cm_load_rows(a, sA, o, BKQ);
#if WSPLIT
                CM_A al;
                cm_load_rows(al, sAlo, o, BKQ);
#endif
                [[unroll]] for (uint j = 0u; j < FN; j++) {
#if XSPLIT
                    acc[m][i][j] = cm_muladd(a, xl[j], acc[m][i][j]);
#endif
#if WSPLIT
                    acc[m][i][j] = cm_muladd(al, xh[j], acc[m][i][j]);
#endif
                    acc[m][i][j] = cm_muladd(a, xh[j], acc[m][i][j]);
                }
            }
    }
#else
    for (uint kk = 0u; kk < BK; kk++) {
        float xv[TN];
        [[unroll]] for (uint j = 0u; j < TN; j++) xv[j] = sX[b * SX + (tc + 16u * j) * BKP + kk];
        [[unroll]] for (uint m = 0u; m < NM; m++)
            [[unroll]] for (uint i = 0u; i < TM; i++) {
                float a = sA[b * SA + (m * BM + tr + 16u * i) * BKP + kk];
                [[unroll]] for (uint j = 0u; j < TN; j++) acc[m][i][j] = fma(a, xv[j], acc[m][i][j]);
            }
    }
#endif
}

void main()
{
    uint tid = gl_LocalInvocationIndex;
    uint col0 = gl_WorkGroupID.x * BN, row0 = gl_WorkGroupID.y * BM;
    // this workgroup's k range (split-k: kper is a multiple of BK, so only the last range is ragged)
    uint kbeg = 0u, kend = p.k;
    if (gl_NumWorkGroups.z > 1u) {
        kbeg = gl_WorkGroupID.z * p.kper;
        kend = min(p.k, kbeg + p.kper);
    }
#if COOPMAT
    uint sgi = tid / 32u, wm = sgi % SGM, wn = sgi / SGM;
    [[unroll]] for (uint m = 0u; m < NM; m++)
        [[unroll]] for (uint i = 0u; i < FM; i++)
            [[unroll]] for (uint j = 0u; j < FN; j++) acc[m][i][j] = CM_C(0.0);
#else
    uint tr = tid % 16u, tc = tid / 16u; // rows tr + 16i, columns tc + 16j
    [[unroll]] for (uint m = 0u; m < NM; m++)
        [[unroll]] for (uint i = 0u; i < TM; i++)
            [[unroll]] for (uint j = 0u; j < TN; j++) acc[m][i][j] = 0.0;
#endif

    // One buffer: barrier, stage, barrier, fetch ahead, products; PF = 2 keeps two steps of loads
    // in flight (two register sets, the loop unrolled by 2). Two buffers: the next step is
    // fetched, the products read buffer b while the staging of the next step writes the other
    // one, and one barrier a step orders both.
    if (kbeg < kend && PF != 0u) fetch(0u, row0, col0, kbeg);
    if (PF == 0u && NBUF == 1u) {
        for (uint kb = kbeg; kb < kend; kb += BK) {
            barrier(); // the last step's products are done with the tiles
            fetch(0u, row0, col0, kb);
            stage(0u, 0u, kb);
            barrier();
            products(0u);
        }
    } else if (PF == 2u && NBUF == 1u) {
        if (kbeg + BK < kend) fetch(1u, row0, col0, kbeg + BK);
        for (uint kb = kbeg; kb < kend; kb += 2u * BK) {
            barrier(); // the last step's products are done with the tiles
            stage(0u, 0u, kb);
            barrier();
            if (kb + 2u * BK < kend) fetch(0u, row0, col0, kb + 2u * BK);
            products(0u);
            if (kb + BK >= kend) break;
            barrier();
            stage(1u, 0u, kb + BK);
            barrier();
            if (kb + 3u * BK < kend) fetch(1u, row0, col0, kb + 3u * BK);
            products(0u);
        }
    } else {
        uint b = 0u;
        if (NBUF == 2u && kbeg < kend) {
            stage(0u, 0u, kbeg);
            barrier();
        }
        for (uint kb = kbeg; kb < kend; kb += BK) {
            if (NBUF == 1u) {
                barrier(); // the last step's products are done with the tiles
                stage(0u, 0u, kb);
                barrier();
            }
            if (kb + BK < kend) fetch(0u, row0, col0, kb + BK); // in flight during the products
            products(b);
            if (NBUF == 2u) {
                if (kb + BK < kend) stage(0u, b ^ 1u, kb + BK);
                barrier(); // products of b and staging of b ^ 1 done
                b ^= 1u;
            }
        }
    }

#if COOPMAT
    // each subgroup: one 16×16 result (of each matrix) at a time through its slice of sC,
    // column-major, so lane l handles rows l % 16 of columns l / 16 + 2e: coalesced stores
    uint lane = tid % 32u, cb = sgi * 256u * NM;
    [[unroll]] for (uint i = 0u; i < FM; i++)
        [[unroll]] for (uint j = 0u; j < FN; j++) {
            cm_store_cols(acc[0][i][j], sC, cb, 16u);
#if SWIGLU
            cm_store_cols(acc[1][i][j], sC, cb + 256u, 16u);
#endif
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            for (uint e = lane; e < 256u; e += 32u) {
#if SWIGLU
                float v3 = sC[cb + 256u + e];
#else
                float v3 = 0.0;
#endif
                put(row0 + wm * WM + i * 16u + e % 16u, col0 + wn * WN + j * 16u + e / 16u, sC[cb + e], v3);
            }
            subgroupMemoryBarrierShared();
            subgroupBarrier();
        }
#else
    [[unroll]] for (uint i = 0u; i < TM; i++)
        [[unroll]] for (uint j = 0u; j < TN; j++)
            put(row0 + tr + 16u * i, col0 + tc + 16u * j, acc[0][i][j], NM > 1u ? acc[NM - 1u][i][j] : 0.0);
#endif
}
