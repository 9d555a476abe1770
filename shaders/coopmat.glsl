// coopmat.glsl - one spelling of the subgroup-scope cooperative matrices gemm.comp uses (16×16×16,
// f16 × f16 + f32), compiled two ways from the same source:
//  - COOPMAT_KHR=0: GL_NV_cooperative_matrix (v1), which Debian 12's glslc compiles (shaders/variants.txt
//    "ship" lines): VK_NV_cooperative_matrix, NVIDIA only;
//  - COOPMAT_KHR=1: GL_KHR_cooperative_matrix, the portable extension (AMD RDNA3, Intel Arc, NVIDIA),
//    which only glslang 15 knows: "prebuilt" lines, words committed under shaders/prebuilt/
//    (tools/spirv_regen.sh; docs/architecture.md).
// NV v1 has one f16 matrix type for both operands; KHR types each by its use, so the weights'
// fragments are CM_A (rows × k, loaded row-major) and the activations' CM_B (k × columns, loaded
// column-major from x's [column][k] rows). Loads and stores take an element index and a stride in
// units of the array's element (the tiles are uvec4 arrays: 8 halves an element) in both.
#ifndef LFM2_COOPMAT_GLSL
#define LFM2_COOPMAT_GLSL

#ifndef COOPMAT_KHR
#define COOPMAT_KHR 0
#endif
#extension GL_KHR_memory_scope_semantics : require
#if COOPMAT_KHR
#extension GL_KHR_cooperative_matrix : require
#define CM_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define CM_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define CM_C coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define cm_load_rows(m, buf, at, stride) coopMatLoad(m, buf, at, stride, gl_CooperativeMatrixLayoutRowMajor)
#define cm_load_cols(m, buf, at, stride) coopMatLoad(m, buf, at, stride, gl_CooperativeMatrixLayoutColumnMajor)
#define cm_store_cols(m, buf, at, stride) coopMatStore(m, buf, at, stride, gl_CooperativeMatrixLayoutColumnMajor)
#define cm_muladd(a, b, c) coopMatMulAdd(a, b, c)
#else
#extension GL_NV_cooperative_matrix : require
#define CM_A fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define CM_B fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define CM_C fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#define cm_load_rows(m, buf, at, stride) coopMatLoadNV(m, buf, at, stride, false)
#define cm_load_cols(m, buf, at, stride) coopMatLoadNV(m, buf, at, stride, true)
#define cm_store_cols(m, buf, at, stride) coopMatStoreNV(m, buf, at, stride, true)
#define cm_muladd(a, b, c) coopMatMulAddNV(a, b, c)
#endif

#endif
