/* gemm_cm2.c - host side of shaders/gemm_cm2.comp, the matrix product on VK_NV_cooperative_matrix2
 * (kernels.h says what it computes; the shader's header how). */
#include "kernels_priv.h"

#include <stddef.h>
#include <stdio.h>

/* gemm_cm2.comp's push block */
struct push_gemm_cm2 {
    uint64_t w, w3, x,
        y; /* w3: SwiGLU's up weight, else 0 (Q types' scales: found after their blocks) */
    uint32_t rows, k, cols, accumulate;
    uint64_t part;       /* split k: the planes of ranges 1.., else 0 */
    uint32_t kper, pad;  /* k per split (k without splits) */
};
_Static_assert(sizeof(struct push_gemm_cm2) == 64, "push_gemm_cm2 layout");

/* gemm_reduce.comp's push block */
struct push_gemm_reduce {
    uint64_t y, part;
    uint32_t n, parts;
};
_Static_assert(sizeof(struct push_gemm_reduce) == 24, "push_gemm_reduce layout");

struct sel_cm2_tile k_gemm_cm2_tile(const struct gpu *g, int64_t rows, int64_t k, int cols, bool pair, bool prep)
{
    struct sel s = k_sel(g, PLAN_WIDE);
    return sel_gemm_cm2_tile(&s, rows, k, cols, pair, prep);
}

/* The checks of one product (returns ST_USAGE naming what does not fit). */
static int cm2_check(const struct gpu *g, const struct k_cm2_product *m, const char *op,
                     struct err *e)
{
    const struct gpu_weight *w = m->w, *w3 = m->w3;
    if (!g->has_coopmat2)
        return err_set(
            e, ST_USAGE,
            "gemm_cm2 %s: device %s lacks VK_NV_cooperative_matrix2 with workgroup scope, tensor "
            "addressing and block loads (--list-devices)",
            op, g->props.deviceName);
    bool quant = k_is_quant_type(w->dtype);
    if (w->dtype != DT_F16 && w->dtype != DT_BF16 && !quant)
        return err_set(e, ST_USAGE,
                       "gemm_cm2 %s: weight of type %s, expected F16, BF16, Q8_0 or Q4_0", op,
                       dtype_name(w->dtype));
    if (quant && (w->k % 32 || !g->has_int8))
        return err_set(
            e, ST_USAGE,
            "gemm_cm2 %s: %s weights need k a multiple of 32 (got %lld) and 8-bit integers", op,
            dtype_name(w->dtype), (long long)w->k);
    if (w->rows < 1 || w->k < 1 || w->rows > UINT32_MAX || w->k > UINT32_MAX || m->cols < 1)
        return err_set(e, ST_USAGE, "gemm_cm2 %s: shape [%lld, %lld] x %d columns out of range", op,
                       (long long)w->rows, (long long)w->k, m->cols);
    if (w->addr % 16 || m->x % 16 || m->y % 16 || (w3 && w3->addr % 16))
        return err_set(e, ST_USAGE,
                       "gemm_cm2 %s: weights, x and y must be 16-byte aligned (tensor loads)", op);
    if (m->xmode < K_CM2_X_SERVING || m->xmode > K_CM2_X_PREP)
        return err_set(e, ST_USAGE, "gemm_cm2 %s: unknown activation mode %d", op, (int)m->xmode);
    if (m->xmode == K_CM2_X_PREP && w->k % 4)
        return err_set(e, ST_USAGE, "gemm_cm2 %s: a prepared x needs k a multiple of 4 (got %lld)",
                       op, (long long)w->k);
    /* the aligned variants (all but PREP: shaders/variants.txt, gemm_cm2.comp CM2_ALIGN) declare
     * the row strides of w and x multiples of 8 elements, i.e. each row on 16 bytes */
    if (m->xmode != K_CM2_X_PREP && w->k % 8) {
        const char *x = m->xmode == K_CM2_X_EXACT       ? "split in its load"
                        : m->xmode == K_CM2_X_GIVEN_F16 ? "given as f16"
                                                        : "rounded in its load";
        return err_set(e, ST_USAGE,
                       "gemm_cm2 %s: the aligned kernel (x %s) needs k a multiple of 8 (got %lld): "
                       "rows of w and x on 16 bytes",
                       op, x, (long long)w->k);
    }
    if (!w3) return ST_OK;
    /* SwiGLU pairs: same shape and type, the per-element epilogue, no residual, and no split Q8_0
     * weights (the exact modes of Q8_0) */
    if (w3->dtype != w->dtype || w3->rows != w->rows || w3->k != w->k)
        return err_set(e, ST_USAGE,
                       "gemm_cm2 %s: SwiGLU weights differ ([%lld, %lld] %s and [%lld, %lld] %s)",
                       op, (long long)w->rows, (long long)w->k, dtype_name(w->dtype),
                       (long long)w3->rows, (long long)w3->k, dtype_name(w3->dtype));
    if (!g->has_coopmat2_per_element || m->accumulate)
        return err_set(e, ST_USAGE,
                       "gemm_cm2 %s: a SwiGLU pair needs coopmat2's per-element operations%s", op,
                       m->accumulate ? " and no accumulation" : "");
    if (m->xmode == K_CM2_X_EXACT || (w->dtype == DT_Q8_0 && m->xmode == K_CM2_X_PREP))
        return err_set(e, ST_USAGE,
                       "gemm_cm2 %s: SwiGLU pairs come with x served (f16), given as f16 or "
                       "prepared, and for Q8_0 not prepared",
                       op);
    return ST_OK;
}

int k_gemm_cm2(struct gpu *g, struct plan *p, const struct k_cm2_product *m,
               const struct sel_cm2_tile *tile, int layer, const char *op, struct err *e)
{
    int rc = cm2_check(g, m, op, e);
    if (rc) return rc;
    const struct gpu_weight *w = m->w;
    bool quant = k_is_quant_type(w->dtype), swiglu = m->w3 != NULL;
    struct sel_cm2_tile t =
        tile ? *tile : k_gemm_cm2_tile(g, w->rows, w->k, m->cols, swiglu, m->xmode == K_CM2_X_PREP);
    uint32_t max_nt = g->coopmat2_max_invocations ? g->coopmat2_max_invocations : 1024;
    if (t.bm % 16 || t.bn % 16 || t.bk % (quant ? 32 : 16) || !t.bm || !t.bn || !t.bk || !t.nt ||
        t.nt % 32 || t.nt > max_nt)
        return err_set(e, ST_USAGE,
                       "gemm_cm2 %s: tile %ux%ux%u with %u invocations; expected multiples of 16 "
                       "(k of 32 for Q "
                       "types) and a multiple of 32 invocations up to %u",
                       op, t.bm, t.bn, t.bk, t.nt, max_nt);
    uint32_t kper = sel_gemm_cm2_kper(&t, w->k), gz = k_div_up((uint64_t)w->k, kper);
    if (gz > 1 && (swiglu || !m->part || m->part % 16))
        return err_set(e, ST_USAGE,
                       "gemm_cm2 %s: %u k splits need %s", op, gz,
                       swiglu ? "a single product (a SwiGLU pair takes none)"
                              : "16-byte aligned scratch for their partial sums (part)");
    uint32_t gx = k_div_up((uint64_t)m->cols, t.bn), gy = k_div_up((uint64_t)w->rows, t.bm);
    if (gx > MAX_GROUPS || gy > MAX_GROUPS)
        return err_set(
            e, ST_USAGE,
            "gemm_cm2 %s: %d columns and %lld rows need %u x %u workgroups, more than 65535", op,
            m->cols, (long long)w->rows, gx, gy);
    static const char *const variant[] = {"gemm_cm2", "gemm_cm2_exact", "gemm_cm2_xf16",
                                          "gemm_cm2_prep"};
    const char *sw = swiglu ? "_swiglu" : "";
    char name[40], kind[40];
    snprintf(name, sizeof name, "%s%s_%s", variant[m->xmode], sw, k_kind_dtype(w->dtype));
    snprintf(kind, sizeof kind, "%s%s.%s", variant[m->xmode], sw, k_kind_dtype(w->dtype));
    uint32_t spec[4] = {t.bm, t.bn, t.bk, t.nt};
    const struct gpu_pipeline *pipe;
    rc = gpu_pipeline(g, name, spec, 4, &pipe, e);
    if (rc) return rc;
    struct push_gemm_cm2 pc = {
        .w = w->addr,
        .w3 = swiglu ? m->w3->addr : 0,
        .x = m->x,
        .y = m->y,
        .rows = (uint32_t)w->rows,
        .k = (uint32_t)w->k,
        .cols = (uint32_t)m->cols,
        .accumulate = m->accumulate,
        .part = gz > 1 ? m->part : 0,
        .kper = kper,
    };
    struct dispatch *d = plan_add(p, pipe, &pc, sizeof pc, gx, gy, gz);
    dispatch_tag(d, kind, layer, op, w->bytes + (swiglu ? m->w3->bytes : 0));
    dispatch_flops(d, k_product_flops(w->rows, w->k, m->cols, swiglu), 1); /* bench only: executed products not told apart */
    if (gz == 1) {
        dispatch_outputs(d, 1, offsetof(struct push_gemm_cm2, y));
        return ST_OK;
    }
    dispatch_outputs(d, 2, offsetof(struct push_gemm_cm2, y), offsetof(struct push_gemm_cm2, part));
    /* the other ranges' planes into y: a 256-wide grid striding over cols x rows (at most 4096
     * workgroups, ~4 outputs an invocation on the largest products) */
    const struct gpu_pipeline *rp;
    if ((rc = gpu_pipeline(g, "gemm_reduce", NULL, 0, &rp, e))) return rc;
    uint64_t n = (uint64_t)m->cols * (uint64_t)w->rows;
    if (n > UINT32_MAX || (gz - 1) * n > UINT32_MAX)
        return err_set(e, ST_USAGE, "gemm_cm2 %s: %llu outputs x %u splits: too many to reduce", op,
                       (unsigned long long)n, gz);
    struct push_gemm_reduce rc_push = {m->y, m->part, (uint32_t)n, gz - 1};
    uint32_t groups = k_div_up(n, 256);
    d = plan_add(p, rp, &rc_push, sizeof rc_push, groups < 4096 ? groups : 4096, 1, 1);
    dispatch_tag(d, "gemm_cm2_reduce", layer, op, 0);
    dispatch_outputs(d, 1, offsetof(struct push_gemm_reduce, y));
    return ST_OK;
}
