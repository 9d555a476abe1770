#version 460
// gemm_cm2.comp - the wide plan's matrix product on VK_NV_cooperative_matrix2: y[c][n] = Σ_k
// W[n][k]·x[c][k] for c < cols, n < rows, y overwritten or (accumulate) added to (the residual
// epilogue); with SWIGLU a second weight W3 of the same shape and y = silu(W x)·(W3 x) (the gate/up
// pair; needs the per-element operations of cooperative matrix 2). W: [rows][k] F16, BF16, Q8_0 or
// Q4_0 (WTYPE), device layout of kernels.h (Q types: quant blocks [rows][k/32], then the f16 scales
// [rows][k/32]); x: f32 [cols][k] (or f16 [cols][k] with XF16, or prepared with XPREP); y: f32
// [cols][rows]. No norm here: the wide plan's prep (gemm_xprep.comp) applies it (XPREP).
//
// Each workgroup owns a BM × BN tile of y (BM weight rows × BN columns) as one workgroup-scope
// accumulator (f32) and walks k in steps of BK: per step one BM × BK weight matrix (use A) and one
// BK × BN activation matrix (use B) come straight from global memory with tensor-layout loads
// (coopMatLoadTensorNV); the driver stages them through shared memory itself (its reserved shared
// memory, VkPhysicalDeviceCooperativeMatrix2PropertiesNV), so there is no hand-written staging, no
// barrier and no register copy here. Out-of-range rows, columns and k read as 0 (clamp mode
// Constant, clamp value 0) and out-of-range outputs are not written, so any rows, cols and k work.
// Interior tiles (the whole tile inside the matrices, k a multiple of BK·UNROLL) load through
// unclamped layouts, UNROLL k steps an iteration; the edge tiles take the clamped loop.
// x is [cols][k] row-major, i.e. the B matrix (k × cols) column-major: it is read through a
// transposing tensor view, and y is written through the same view.
// Decode functions (block loads) widen what is not f16 as it is loaded:
//  - BF16 weights: bf16 -> f32 -> f16 (exact down to 2^-14, then f16 subnormals: as gemm.comp);
//  - Q8_0 / Q4_0 weights: the tensor layout's block size is (1, 32), so the load hands each element
//    its block (row, block) and its place in it; the decode reads the quant and the block's f16
//    scale and returns q·d rounded to f16. Q4_0's q·d (|q| <= 8) is then exact where d has at most
//    8 significant bits, as gemm.comp's Q4_0 tile; Q8_0's (up to 18 bits) is rounded to 11 bits, so
//    its exact modes split w too (WSPLIT: w = hi + lo, products w_hi·x_hi, w_hi·x_lo, w_lo·x_hi, as
//    gemm.comp's; w_lo·x_lo, < 2^-20 relative, dropped).
//  - f32 x: XSPLIT 0 ("serving"): x rounded to f16, one product; XSPLIT 1 ("exact", f32-accurate as
//    gemm.comp): x = hi + lo, hi its top 11 significant bits (masked), lo = f16(x - hi), two products
//    into the one f32 accumulator (22 significant bits of x together).
//  - XF16 1: x is already f16 [cols][k] (a plain load, no decode; the bench's roof of this kernel).
//  - XPREP 1: x is gemm_xprep.comp's SPLIT output (the wide plan's prepared x, its norm applied):
//    16 bytes per 4 elements [cols][k/4], uvec4(hi01, hi23, lo01, lo23), i.e. f16 [cols][k/4][8]
//    with the high parts at [..][0..3] and the low parts at [..][4..7]. Two plain loads a step
//    (exact: hi + lo) through a 3-D tensor layout and a view that maps the matrix's (k, column) to
//    (column, k/4, k%4) (dimensions BN, BK/4, 4, permutation 1 2 0); k a multiple of 4.
// |x| and |w| must stay under 65504.
// Split k (not with SWIGLU): workgroup z of the grid takes k in [z·kper, min(k, (z + 1)·kper)),
// kper a multiple of BK (only the last range is ragged). z = 0 writes y as above (the residual
// included); z > 0 writes its partial sum into its own plane of part, [z - 1][cols][rows] f32, and
// gemm_reduce.comp adds the planes into y after the product. Without splits kper = k.
// Grid: x = ceil(cols / BN) (the column tiles of one row tile adjacent), y = ceil(rows / BM),
// z = ceil(k / kper).
// Workgroup: NT invocations (a multiple of 32, at most the device's workgroup-scope maximum).
// Switches (bench/39, "Third run": one hypothesis each for the kernel's slowness); the product's
// variants (shaders/variants.txt) take CM2_ALIGN=1 and CM2_UNROLL=8 but where ALIGN cannot apply
// (XPREP), the others are the bench's:
//  - CM2_UNROLL (4): k steps an iteration of the interior loop;
//  - CM2_ALIGN (0): 1 declares the tensors' base addresses 16-byte aligned (the loads' Aligned
//    operand is 16, not the element size) and gives the interior layouts explicit row strides
//    known to be multiples of 8 elements (16 bytes), as a descriptor-bound buffer with a masked
//    stride tells the driver; the caller keeps w, x, y 16-byte aligned and k a multiple of 8
//    (k_gemm_cm2 checks both: rows of w and x start on 16 bytes). y's rows (rows floats each)
//    need not, so y keeps its element alignment (its one load and store a tile cost little);
//  - CM2_ACC16 (0): 1 accumulates in f16 (converted to f32 for the store; one product, no pair);
//  - CM2_PLAIN (0): 1 keeps only the interior path, loads and products (no clamped loop, no
//    residual): the caller guarantees the tile inside the matrices and each k range a multiple of
//    BK·CM2_UNROLL;
//  - CM2_MFAST (0): 1 makes the weight-row tiles of one column tile adjacent in the dispatch order
//    (the linear workgroup index walks the row tiles first) instead of the column tiles.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int32 : require
#include "kern_common.glsl"

#ifndef WTYPE
#define WTYPE DT_F16
#endif
#ifndef XSPLIT
#define XSPLIT 0
#endif
#ifndef XF16
#define XF16 0
#endif
#if WTYPE == DT_F32
#error "gemm_cm2.comp: WTYPE must be DT_F16, DT_BF16, DT_Q8_0 or DT_Q4_0"
#endif
#ifndef XPREP
#define XPREP 0
#endif
#ifndef SWIGLU
#define SWIGLU 0
#endif
#ifndef CM2_UNROLL
#define CM2_UNROLL 4
#endif
#ifndef CM2_ALIGN
#define CM2_ALIGN 0
#endif
#ifndef CM2_ACC16
#define CM2_ACC16 0
#endif
#ifndef CM2_PLAIN
#define CM2_PLAIN 0
#endif
#ifndef CM2_MFAST
#define CM2_MFAST 0
#endif
#define XPARTS (XSPLIT || XPREP) // x as hi + lo: the exact modes
#if CM2_ACC16 && (XPARTS || SWIGLU)
#error "gemm_cm2.comp: f16 accumulators only for one served product"
#endif
#if CM2_ALIGN && XPREP
#error "gemm_cm2.comp: CM2_ALIGN does not cover the prepared x's 3-D layout"
#endif
#if WTYPE == DT_Q8_0 && XPARTS
#define WSPLIT 1
#else
#define WSPLIT 0
#endif
#if XF16 && XSPLIT
#error "gemm_cm2.comp: an f16 x has no low part"
#endif
#if XPREP && (XF16 || XSPLIT)
#error "gemm_cm2.comp: XPREP is its own x mode"
#endif
#if SWIGLU && WSPLIT
#error "gemm_cm2.comp: no SwiGLU pair with split Q8_0 weights"
#endif

layout(constant_id = 0) const uint BM = 128; // weight rows a workgroup owns
layout(constant_id = 1) const uint BN = 128; // columns a workgroup owns
layout(constant_id = 2) const uint BK = 32;  // k step
layout(local_size_x_id = 3) in;              // NT

layout(push_constant) uniform Push {
    uint64_t w;  // [rows][k] F16 / BF16, or Q8_0 / Q4_0 (quant blocks, then scales); 16-byte aligned
    uint64_t w3; // SWIGLU: the up weight, same shape and type
    uint64_t x;  // f32 [cols][k] (XF16: f16; XPREP: gemm_xprep's pairs), 16-byte aligned
    uint64_t y;  // f32 [cols][rows], 16-byte aligned
    uint rows;
    uint k;
    uint cols;
    uint accumulate; // y += W x (not with SWIGLU)
    uint64_t part;   // split k: the planes of ranges 1.. (f32 [z - 1][cols][rows]); else 0
    uint kper;       // k per split: a multiple of BK (k without splits)
    uint pad;
} p;

// The base addresses of the tensor loads of w and x: the element types of common.glsl, or
// (CM2_ALIGN) the same arrays declared 16-byte aligned (y: always common.glsl's F32Buf).
#if CM2_ALIGN
layout(buffer_reference, std430, buffer_reference_align = 16) buffer F16Buf16 { float16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer U16Buf16 { uint16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer U8Buf16 { uint8_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer F32Buf16 { float v[]; };
#define F16T F16Buf16
#define U16T U16Buf16
#define U8T U8Buf16
#define F32T F32Buf16
#else
#define F16T F16Buf
#define U16T U16Buf
#define U8T U8Buf
#define F32T F32Buf
#endif

// What a decode function is handed: a pointer to the element (one struct per element).
layout(buffer_reference, std430, buffer_reference_align = 2) buffer Bf16Elem { uint16_t v; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer F32Elem { float v; };

float16_t decode_bf16(const in Bf16Elem e, const in uint32_t block[2], const in uint32_t in_block[2])
{
    return float16_t(uintBitsToFloat(uint(e.v) << 16));
}
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Q8Block { int8_t q[32]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Q4Block { uint8_t q[16]; };
// The f16 scale of the block at b, block (row, blk) of its weight: the scales follow the weight's
// quant blocks (kernels.h), so from the block's own address (the same for W and W3):
// scales + 2·index = b - index·QB + rows·nb·QB + 2·index, index = row·nb + blk.
float block_scale(uint64_t b, const in uint32_t block[2], uint qb)
{
    uint64_t nb = p.k / 32u, index = block[0] * nb + block[1];
    uint64_t at = b - index * qb + uint64_t(p.rows) * nb * qb + 2ul * index;
    return float(F16Buf(at).v[0]);
}
float q8_value(const in Q8Block b, const in uint32_t block[2], const in uint32_t in_block[2])
{
    return float(b.q[in_block[1]]) * block_scale(uint64_t(b), block, 32u);
}
// byte j of a Q4_0 block: element j in its low nibble, element j + 16 in its high one
float16_t decode_q4_0(const in Q4Block b, const in uint32_t block[2], const in uint32_t in_block[2])
{
    uint j = in_block[1], byte = uint(b.q[j % 16u]);
    float q = float(j < 16u ? byte & 15u : byte >> 4) - 8.0;
    return float16_t(q * block_scale(uint64_t(b), block, 16u));
}
float16_t decode_q8_0(const in Q8Block b, const in uint32_t block[2], const in uint32_t in_block[2])
{
    return float16_t(q8_value(b, block, in_block));
}
// Q8_0's q·d = hi + lo: hi its top 11 significant bits (exact in f16), lo the f16 of the rest
float16_t decode_q8_0_hi(const in Q8Block b, const in uint32_t block[2], const in uint32_t in_block[2])
{
    return float16_t(uintBitsToFloat(floatBitsToUint(q8_value(b, block, in_block)) & 0xffffe000u));
}
float16_t decode_q8_0_lo(const in Q8Block b, const in uint32_t block[2], const in uint32_t in_block[2])
{
    float v = q8_value(b, block, in_block);
    return float16_t(v - uintBitsToFloat(floatBitsToUint(v) & 0xffffe000u));
}

// silu(g)·u of one output (coopMatPerElementNV)
float swiglu(const in uint32_t row, const in uint32_t col, const in float g, const in float u)
{
    return g / (1.0 + exp(-g)) * u;
}

// x's high part: its top 11 significant bits, exact in f16 (gemm_xprep.comp's split)
float x_hi(float v) { return uintBitsToFloat(floatBitsToUint(v) & 0xffffe000u); }
float16_t decode_x(const in F32Elem e, const in uint32_t block[2], const in uint32_t in_block[2])
{
    return float16_t(e.v);
}
float16_t decode_x_hi(const in F32Elem e, const in uint32_t block[2], const in uint32_t in_block[2])
{
    return float16_t(x_hi(e.v));
}
float16_t decode_x_lo(const in F32Elem e, const in uint32_t block[2], const in uint32_t in_block[2])
{
    float v = e.v;
    return float16_t(v - x_hi(v));
}

#define CLAMP gl_CooperativeMatrixClampModeConstantNV
// One k step's loads and products, written once for the two layout kinds (the clamped edge tiles,
// the unclamped interior): SW, SX are this step's weight and x slices, K0 its first k.
// the weight tile of the weight at base into the A matrix a
#if WTYPE == DT_F16
#define LOAD_W(a, base, SW) coopMatLoadTensorNV(a, F16T(base).v, 0, SW)
#elif WTYPE == DT_BF16
#define LOAD_W(a, base, SW) coopMatLoadTensorNV(a, U16T(base).v, 0, SW, decode_bf16)
#elif WTYPE == DT_Q4_0
#define LOAD_W(a, base, SW) coopMatLoadTensorNV(a, U8T(base).v, 0, SW, decode_q4_0)
#else
#define LOAD_W(a, base, SW) coopMatLoadTensorNV(a, U8T(base).v, 0, SW, decode_q8_0)
#endif
// x's parts of this k step into the B matrix b
#if XF16
#define LOAD_X(b, SX, K0) coopMatLoadTensorNV(b, F16T(p.x).v, 0, SX, tr)
#elif XPREP
#define LOAD_X_PART(b, K0, at) \
    coopMatLoadTensorNV(b, F16Buf(p.x).v, 0, sliceTensorLayoutNV(lp, c0, BN, (K0) / 4u, BK / 4u, at, 4u), pv)
#define LOAD_X_HI(b, SX, K0) LOAD_X_PART(b, K0, 0)
#define LOAD_X_LO(b, SX, K0) LOAD_X_PART(b, K0, 4)
#elif XSPLIT
#define LOAD_X_HI(b, SX, K0) coopMatLoadTensorNV(b, F32T(p.x).v, 0, SX, tr, decode_x_hi)
#define LOAD_X_LO(b, SX, K0) coopMatLoadTensorNV(b, F32T(p.x).v, 0, SX, tr, decode_x_lo)
#else
#define LOAD_X(b, SX, K0) coopMatLoadTensorNV(b, F32T(p.x).v, 0, SX, tr, decode_x)
#endif
// w (and w3): Q8_0's exact modes first add w_lo·x_hi, then load w_hi
#if WSPLIT
#define STEP_W(SW, SX, K0)                                                                         \
    coopMatLoadTensorNV(a, U8T(p.w).v, 0, SW, decode_q8_0_lo);                                     \
    LOAD_X_HI(b, SX, K0);                                                                          \
    acc = coopMatMulAdd(a, b, acc);                                                                \
    coopMatLoadTensorNV(a, U8T(p.w).v, 0, SW, decode_q8_0_hi);
#elif SWIGLU
#define STEP_W(SW, SX, K0)                                                                         \
    LOAD_W(a, p.w, SW);                                                                            \
    LOAD_W(a3, p.w3, SW);
#else
#define STEP_W(SW, SX, K0) LOAD_W(a, p.w, SW);
#endif
#if SWIGLU
#define MULADD                                                                                     \
    acc = coopMatMulAdd(a, b, acc);                                                                \
    acc3 = coopMatMulAdd(a3, b, acc3);
#else
#define MULADD acc = coopMatMulAdd(a, b, acc);
#endif
// x: the exact modes add w·x_lo, then w·x_hi
#if XPARTS
#define STEP_X(SX, K0)                                                                             \
    LOAD_X_LO(b, SX, K0);                                                                          \
    MULADD                                                                                         \
    LOAD_X_HI(b, SX, K0);                                                                          \
    MULADD
#else
#define STEP_X(SX, K0)                                                                             \
    LOAD_X(b, SX, K0);                                                                             \
    MULADD
#endif
#define STEP(LW, LX, K0)                                                                           \
    {                                                                                              \
        coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> a;                            \
        A3_DECL                                                                                    \
        coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> b;                            \
        STEP_W(sliceTensorLayoutNV(LW, n0, BM, K0, BK), sliceTensorLayoutNV(LX, c0, BN, K0, BK), K0) \
        STEP_X(sliceTensorLayoutNV(LX, c0, BN, K0, BK), K0)                                        \
    }
#if SWIGLU
#define A3_DECL coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> a3;
#else
#define A3_DECL
#endif
#define ACC32 coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>
#if CM2_ACC16
#define ACC coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>
#else
#define ACC ACC32
#endif
// k steps an iteration of the interior tiles' loop (loads of the next steps can be issued while
// the products of the earlier ones run)
const uint UNROLL = CM2_UNROLL;

void main()
{
#if CM2_MFAST
    uint tile = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint n0 = (tile % gl_NumWorkGroups.y) * BM, c0 = (tile / gl_NumWorkGroups.y) * BN;
#else
    uint n0 = gl_WorkGroupID.y * BM, c0 = gl_WorkGroupID.x * BN;
#endif
    tensorLayoutNV<2, CLAMP> lw = createTensorLayoutNV(2, CLAMP);
    tensorLayoutNV<2> uw = createTensorLayoutNV(2); // unclamped: interior tiles
#if WTYPE == DT_Q8_0 || WTYPE == DT_Q4_0
    lw = setTensorLayoutBlockSizeNV(lw, 1, 32); // before the dimensions: strides count blocks
    uw = setTensorLayoutBlockSizeNV(uw, 1, 32);
#endif
    lw = setTensorLayoutDimensionNV(lw, p.rows, p.k);
    uw = setTensorLayoutDimensionNV(uw, p.rows, p.k);
    tensorLayoutNV<2, CLAMP> lx = createTensorLayoutNV(2, CLAMP);
    lx = setTensorLayoutDimensionNV(lx, p.cols, p.k);
    tensorLayoutNV<2> ux = createTensorLayoutNV(2);
    ux = setTensorLayoutDimensionNV(ux, p.cols, p.k);
#if CM2_ALIGN && WTYPE != DT_Q8_0 && WTYPE != DT_Q4_0
    // row strides in elements, known multiples of 8 (16 bytes): the interior needs k % BK == 0
    uw = setTensorLayoutStrideNV(uw, p.k & ~7u, 1);
    ux = setTensorLayoutStrideNV(ux, p.k & ~7u, 1);
#endif
    tensorLayoutNV<2, CLAMP> ly = createTensorLayoutNV(2, CLAMP);
    ly = setTensorLayoutDimensionNV(ly, p.cols, p.rows);
    tensorViewNV<2, false, 1, 0> tr = createTensorViewNV(2, false, 1, 0); // (row, col) <-> (col, row)
#if XPREP
    tensorLayoutNV<3, CLAMP> lp = createTensorLayoutNV(3, CLAMP);
    lp = setTensorLayoutDimensionNV(lp, p.cols, p.k / 4u, 8u);
    tensorViewNV<3, true, 1, 2, 0> pv = createTensorViewNV(3, true, 1, 2, 0);
    pv = setTensorViewDimensionsNV(pv, BN, BK / 4u, 4u);
#endif

    // this workgroup's k range (split k: z > 0 writes a partial plane, not y). kb is written as a
    // multiple of BK so that the compiler knows the slices' k offsets are: the aligned loads'
    // 16-byte vectors depend on it (bench/45: kb = z·kper ran every product at ~30-39 TFLOP/s).
    uint ksteps = p.kper / BK, kb = gl_WorkGroupID.z * ksteps * BK, ke = min(p.k, kb + ksteps * BK);
    uint64_t dst = gl_WorkGroupID.z == 0u ? p.y : p.part + 4ul * (gl_WorkGroupID.z - 1u) * p.cols * p.rows;
    ACC acc = ACC(0.0);
#if SWIGLU
    ACC acc3 = ACC(0.0);
#elif !CM2_PLAIN
    if (p.accumulate != 0u && gl_WorkGroupID.z == 0u) { // the residual: the sums start from y
#if CM2_ACC16
        ACC32 y0;
        coopMatLoadTensorNV(y0, F32Buf(p.y).v, 0, sliceTensorLayoutNV(ly, c0, BN, n0, BM), tr);
        acc = ACC(y0);
#else
        coopMatLoadTensorNV(acc, F32Buf(p.y).v, 0, sliceTensorLayoutNV(ly, c0, BN, n0, BM), tr);
#endif
    }
#endif
    // The tile and every k step inside the matrices: unclamped loads, UNROLL steps an iteration
    // (uniform across the workgroup: it depends on the workgroup's tile only).
#if CM2_PLAIN
    for (uint k0 = kb; k0 < ke; k0 += BK * UNROLL)
        [[unroll]] for (uint j = 0u; j < UNROLL; j++) STEP(uw, ux, k0 + j * BK)
#else
    bool interior = n0 + BM <= p.rows && c0 + BN <= p.cols && (ke - kb) % (BK * UNROLL) == 0u;
    if (interior) {
        for (uint k0 = kb; k0 < ke; k0 += BK * UNROLL)
            [[unroll]] for (uint j = 0u; j < UNROLL; j++) STEP(uw, ux, k0 + j * BK)
    } else {
        for (uint k0 = kb; k0 < ke; k0 += BK) STEP(lw, lx, k0)
    }
#endif
#if SWIGLU
    coopMatPerElementNV(acc, acc, swiglu, acc3);
#endif
#if CM2_ACC16
    ACC32 out32 = ACC32(acc);
    coopMatStoreTensorNV(out32, F32Buf(dst).v, 0, sliceTensorLayoutNV(ly, c0, BN, n0, BM), tr);
#else
    coopMatStoreTensorNV(acc, F32Buf(dst).v, 0, sliceTensorLayoutNV(ly, c0, BN, n0, BM), tr);
#endif
}
