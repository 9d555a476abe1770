/* kernels_priv.h - what the kernels' host files share (weights.c, kernels_util.c, norm.c,
 * matmul.c, gemm.c, gemm_cm2.c, conv.c, attention.c, model_check.c); no part of the stage's
 * interface, which is kernels.h. */
#ifndef LFM2_KERNELS_PRIV_H
#define LFM2_KERNELS_PRIV_H

#include "kernels.h"

#define MAX_GROUPS 65535u /* guaranteed maxComputeWorkGroupCount in every dimension */

/* ---- weights on the host (weights.c) */

/* Lower-case type names used in kinds ("matmul.bf16"). */
const char *k_kind_dtype(enum dtype t);

static inline bool k_is_weight_type(enum dtype t)
{
    return t == DT_F32 || t == DT_F16 || t == DT_BF16 || t == DT_Q8_0 || t == DT_Q4_0;
}
static inline bool k_is_plain_type(enum dtype t) { return t == DT_F32 || t == DT_F16 || t == DT_BF16; }
static inline bool k_is_quant_type(enum dtype t) { return t == DT_Q8_0 || t == DT_Q4_0; }

/* Quant bytes per 32-block in the device layout (the file adds the 2-byte scale in front). */
static inline uint64_t k_quant_bytes(enum dtype t) { return t == DT_Q8_0 ? 32 : 16; }

/* ---- shared helpers (kernels_util.c) */

/* Appends one dispatch and tags it; the caller declares its outputs (dispatch_outputs). */
struct dispatch *k_add(struct plan *p, const struct gpu_pipeline *pipe, const void *push, uint32_t push_size,
                       uint32_t gx, uint32_t gy, const char *kind, int layer, const char *op, uint64_t bytes);

static inline uint32_t k_div_up(uint64_t a, uint64_t b) { return (uint32_t)((a + b - 1) / b); }

/* A 1-D weight (gain) of a plain type and length n. */
int k_check_gain(const struct gpu_weight *w, int64_t n, const char *what, struct err *e);

/* ---- matmul (matmul.c) */

struct push_matmul {
    uint64_t w, wscale, w3, w3scale, x, y, gain;
    uint32_t rows, k, accumulate, gdtype;
    float eps;
    uint32_t plus1;
};
_Static_assert(sizeof(struct push_matmul) == 80, "push_matmul layout");

/* Address of the f16 scales of a Q weight, 0 for the others. */
uint64_t k_scale_addr(const struct gpu_weight *w);

/* The context of the kernel choice (select.h) for plan p (NULL: a batch plan) on g. */
struct sel k_sel_of(const struct gpu *g, const struct plan *p);

static inline struct sel_weight k_sel_w(const struct gpu_weight *w)
{
    return (struct sel_weight){w->dtype, w->rows, w->k};
}

/* The push constants of matmul.comp and gemm.comp (norm: may be NULL; w3 NULL: no SwiGLU). */
struct push_matmul k_matmul_push(const struct gpu_weight *w, const struct gpu_weight *w3,
                                 const struct k_norm *norm, uint64_t x, uint64_t y, bool accumulate);

/* k (a row's length) of a weight the matrix kernels serve: whole 16-byte slots, a u32 count. */
bool k_matmul_k_served(enum dtype t, int64_t k);

/* The shapes and types the matrix kernels serve (w3: SwiGLU's up weight, may be NULL). */
int k_matmul_check(const struct gpu_weight *w, const struct gpu_weight *w3, const struct k_norm *norm, int cols,
                   const char *op, struct err *e);

/* ---- gemm (gemm.c) */

/* ---- the plan's scratch (scratch.c; kernels.h struct k_scratch) */

/* *addr = the start of scratch buffer b (NULL: the plan has none), of which `have` bytes are this
 * use's, for `bytes`: ST_RUNTIME naming `what`, op and both sizes when they fall short. */
int k_scratch_take(const struct gpu_buf *b, uint64_t have, uint64_t bytes, const char *what, const char *op,
                   uint64_t *addr, struct err *e);
/* Bytes of one half of sc's gemm_w (256-aligned). */
uint64_t k_scratch_half(const struct k_scratch *sc);

/* One product through the gemm: its prep (when needed), then the product. */
int k_gemm_any(struct gpu *g, struct plan *p, const struct gpu_weight *w, const struct gpu_weight *w3,
               const struct k_norm *norm, uint64_t x, uint64_t y, int cols, bool accumulate, int layer,
               const char *op, const char *kind_prefix, struct err *e);
/* n products of one input through the gemm (k_matmul_multi in a wide plan; gemm.c). */
int k_gemm_multi(struct gpu *g, struct plan *p, int n, const struct gpu_weight *const w[], const uint64_t y[],
                 const struct k_norm *norm, uint64_t x, int cols, int layer, const char *const ops[],
                 const char *fused_op, struct err *e);

/* ---- attention (attention.c) */

/* The attention geometry any GPU serves (attention.c's check_geom adds the device's subgroup size). */
int k_check_heads(const struct k_attn_geom *a, struct err *e);

#endif
