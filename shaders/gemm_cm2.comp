#version 460
// gemm_cm2.comp - the wide plan's matrix product on VK_NV_cooperative_matrix2: y[c][n] = Σ_k
// W[n][k]·x[c][k] for c < cols, n < rows (no norm, no epilogue yet). W: [rows][k] F16 or BF16
// (WTYPE), device layout of kernels.h; x: f32 [cols][k] (or f16 [cols][k] with XF16); y: f32
// [cols][rows], overwritten.
//
// Each workgroup owns a BM × BN tile of y (BM weight rows × BN columns) as one workgroup-scope
// accumulator (f32) and walks k in steps of BK: per step one BM × BK weight matrix (use A) and one
// BK × BN activation matrix (use B) come straight from global memory with tensor-layout loads
// (coopMatLoadTensorNV); the driver stages them through shared memory itself (its reserved shared
// memory, VkPhysicalDeviceCooperativeMatrix2PropertiesNV), so there is no hand-written staging, no
// barrier and no register copy here. Out-of-range rows, columns and k read as 0 (clamp mode
// Constant, clamp value 0) and out-of-range outputs are not written, so any rows, cols and k work.
// x is [cols][k] row-major, i.e. the B matrix (k × cols) column-major: it is read through a
// transposing tensor view, and y is written through the same view.
// Decode functions (block loads) widen what is not f16 as it is loaded:
//  - BF16 weights: bf16 -> f32 -> f16 (exact from 2^-14 down to 2^-24 with f16 subnormals, as gemm.comp);
//  - f32 x: XSPLIT 0 ("serving"): x rounded to f16, one product; XSPLIT 1 ("exact", f32-accurate as
//    gemm.comp): x = hi + lo, hi its top 11 significant bits (masked), lo = f16(x - hi), two products
//    into the one f32 accumulator (22 significant bits of x together).
//  - XF16 1: x is already f16 [cols][k] (a plain load, no decode; the bench's roof of this kernel).
// |x| and |w| must stay under 65504.
// Grid: x = ceil(cols / BN) (the column tiles of one row tile adjacent), y = ceil(rows / BM).
// Workgroup: NT invocations (a multiple of 32, at most the device's workgroup-scope maximum).
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
#if WTYPE != DT_F16 && WTYPE != DT_BF16
#error "gemm_cm2.comp: WTYPE must be DT_F16 or DT_BF16"
#endif
#if XF16 && XSPLIT
#error "gemm_cm2.comp: an f16 x has no low part"
#endif

layout(constant_id = 0) const uint BM = 128; // weight rows a workgroup owns
layout(constant_id = 1) const uint BN = 128; // columns a workgroup owns
layout(constant_id = 2) const uint BK = 32;  // k step
layout(local_size_x_id = 3) in;              // NT

layout(push_constant) uniform Push {
    uint64_t w; // [rows][k] F16 / BF16, 16-byte aligned
    uint64_t x; // f32 [cols][k] (XF16: f16), 16-byte aligned
    uint64_t y; // f32 [cols][rows], 16-byte aligned
    uint rows;
    uint k;
    uint cols;
    uint pad;
} p;

// What a decode function is handed: a pointer to the element (one struct per element).
layout(buffer_reference, std430, buffer_reference_align = 2) buffer Bf16Elem { uint16_t v; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer F32Elem { float v; };

float16_t decode_bf16(const in Bf16Elem e, const in uint32_t block[2], const in uint32_t in_block[2])
{
    return float16_t(uintBitsToFloat(uint(e.v) << 16));
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
#define ACC coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>

void main()
{
    uint n0 = gl_WorkGroupID.y * BM, c0 = gl_WorkGroupID.x * BN;
    tensorLayoutNV<2, CLAMP> lw = createTensorLayoutNV(2, CLAMP);
    lw = setTensorLayoutDimensionNV(lw, p.rows, p.k);
    tensorLayoutNV<2, CLAMP> lx = createTensorLayoutNV(2, CLAMP);
    lx = setTensorLayoutDimensionNV(lx, p.cols, p.k);
    tensorLayoutNV<2, CLAMP> ly = createTensorLayoutNV(2, CLAMP);
    ly = setTensorLayoutDimensionNV(ly, p.cols, p.rows);
    tensorViewNV<2, false, 1, 0> tr = createTensorViewNV(2, false, 1, 0); // (row, col) <-> (col, row)

    ACC acc = ACC(0.0);
    for (uint k0 = 0u; k0 < p.k; k0 += BK) {
        coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> a;
        coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> b;
        tensorLayoutNV<2, CLAMP> sw = sliceTensorLayoutNV(lw, n0, BM, k0, BK);
        tensorLayoutNV<2, CLAMP> sx = sliceTensorLayoutNV(lx, c0, BN, k0, BK);
#if WTYPE == DT_F16
        coopMatLoadTensorNV(a, F16Buf(p.w).v, 0, sw);
#else
        coopMatLoadTensorNV(a, U16Buf(p.w).v, 0, sw, decode_bf16);
#endif
#if XF16
        coopMatLoadTensorNV(b, F16Buf(p.x).v, 0, sx, tr);
#elif XSPLIT
        coopMatLoadTensorNV(b, F32Buf(p.x).v, 0, sx, tr, decode_x_lo);
        acc = coopMatMulAdd(a, b, acc);
        coopMatLoadTensorNV(b, F32Buf(p.x).v, 0, sx, tr, decode_x_hi);
#else
        coopMatLoadTensorNV(b, F32Buf(p.x).v, 0, sx, tr, decode_x);
#endif
        acc = coopMatMulAdd(a, b, acc);
    }
    coopMatStoreTensorNV(acc, F32Buf(p.y).v, 0, sliceTensorLayoutNV(ly, c0, BN, n0, BM), tr);
}
