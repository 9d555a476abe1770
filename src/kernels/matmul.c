/* matmul.c - host side of the matrix products of one step: matmul.comp and the narrow steps'
 * matvec/qmv/xmv kernels, and the dispatch between them and the wide plan's gemm (gemm.c). */
#include "kernels_priv.h"

#include <stddef.h>
#include <stdio.h>

/* ---- matmul */

/* Address of the f16 scales of a Q weight, 0 for the others. */
uint64_t k_scale_addr(const struct gpu_weight *w)
{
    if (!k_is_quant_type(w->dtype)) return 0;
    return w->addr + (uint64_t)w->rows * (uint64_t)(w->k / 32) * k_quant_bytes(w->dtype);
}

/* The context of the kernel choice (select.h) for plan p (NULL: a batch plan) on g. */
struct sel k_sel(const struct gpu *g, enum plan_kind kind)
{
    return (struct sel){.tune = &g->tune,
                        .plan = kind,
                        .subgroup_size = g->subgroup_size,
                        .shared_mem = g->shared_mem,
                        .coopmat_khr = g->gemm_khr,
                        .coopmat_nv = g->gemm_nv,
                        .coopmat2 = g->has_coopmat2,
                        .coopmat2_swiglu = g->has_coopmat2_per_element,
                        .int8 = g->has_int8,
                        .coopmat2_max_nt = g->coopmat2_max_invocations,
                        .float_atomic_add = g->has_float_atomic_add,
                        .precision = g->precision,
                        .device = g->props.deviceName};
}

struct sel k_sel_of(const struct gpu *g, const struct plan *p) { return k_sel(g, p ? p->kind : PLAN_BATCH); }

struct sel_scratch k_matmul_scratch(const struct gpu *g, enum plan_kind kind, int n, const struct gpu_weight *const w[],
                                    bool swiglu, const struct k_norm *norm, bool accumulate, int cols)
{
    struct sel s = k_sel(g, kind);
    struct sel_product m = {.n = MIN(n, SEL_PRODUCT_MAX), .swiglu = swiglu, .norm = norm && norm->w,
                            .accumulate = accumulate, .cols = cols};
    for (int i = 0; i < m.n; i++) m.w[i] = k_sel_w(w[i]);
    return sel_product_scratch(&s, &m);
}

/* The push constants of matmul.comp and gemm.comp (norm: may be NULL; w3 NULL: no SwiGLU). */
struct push_matmul k_matmul_push(const struct gpu_weight *w, const struct gpu_weight *w3,
                                 const struct k_norm *norm, uint64_t x, uint64_t y, bool accumulate)
{
    return (struct push_matmul){
        .w = w->addr,
        .wscale = k_scale_addr(w),
        .w3 = w3 ? w3->addr : 0,
        .w3scale = w3 ? k_scale_addr(w3) : 0,
        .x = x,
        .y = y,
        .gain = norm && norm->w ? norm->w->addr : 0,
        .rows = (uint32_t)w->rows,
        .k = (uint32_t)w->k,
        .accumulate = accumulate,
        .gdtype = norm && norm->w ? (uint32_t)norm->w->dtype : 0,
        .eps = norm ? norm->eps : 0,
        .plus1 = norm && norm->plus1,
    };
}

/* ---- matvec: the narrow steps' matrix-vector kernel (matvec.comp; its header says why this shape) */

#define MATVEC_MAX_WEIGHTS 3

struct push_matvec {
    uint64_t w[MATVEC_MAX_WEIGHTS], ws[MATVEC_MAX_WEIGHTS], y[MATVEC_MAX_WEIGHTS], x, gain;
    uint32_t rows_end[MATVEC_MAX_WEIGHTS], k, flags;
    float eps;
};
_Static_assert(sizeof(struct push_matvec) == 112, "push_matvec layout");

bool k_xmv_serves(const struct gpu *g, const struct plan *p, int cols, const struct gpu_weight *w,
                  bool swiglu, uint64_t rows, bool split_ok)
{
    struct sel s = k_sel_of(g, p);
    struct sel_weight sw = k_sel_w(w);
    return sel_xmv_serves(&s, cols, &sw, swiglu, rows, split_ok);
}

/* One matvec/qmv/xmv dispatch (mk, as sel_mv_pick chose it with split_ok) over n stacked weights
 * w[0..n-1] (same type and k) writing y[i]; with w3 (n == 1) the SwiGLU variant; xmv past
 * K_XMV_COLS columns in passes, and over long k in workgroups along k (sel_xmv_ksplits) where it may
 * split. */
static int matvec_dispatch(struct gpu *g, struct plan *p, int n, const struct gpu_weight *const w[],
                           const struct gpu_weight *w3, const uint64_t y[], const struct k_norm *norm, uint64_t x,
                           int cols, bool accumulate, int layer, const char *op, const char *kind_prefix,
                           enum sel_mv mk, bool split_ok, struct err *e)
{
    struct sel s = k_sel_of(g, p);
    struct sel_weight sw = k_sel_w(w[0]);
    struct push_matvec pc = {.x = x, .k = (uint32_t)w[0]->k, .eps = norm ? norm->eps : 0};
    uint64_t rows = 0, bytes = 0;
    for (int i = 0; i < MATVEC_MAX_WEIGHTS; i++) {
        if (i < n) {
            pc.w[i] = w[i]->addr;
            pc.ws[i] = k_scale_addr(w[i]);
            pc.y[i] = y[i];
            rows += (uint64_t)w[i]->rows;
            bytes += w[i]->bytes;
        }
        pc.rows_end[i] = (uint32_t)rows;
    }
    if (w3) {
        pc.w[1] = w3->addr;
        pc.ws[1] = k_scale_addr(w3);
        bytes += w3->bytes;
    }
    if (rows > UINT32_MAX) return err_set(e, ST_USAGE, "matvec %s: %llu rows, more than 2^32", op, (unsigned long long)rows);
    if (norm && norm->w) {
        pc.gain = norm->w->addr;
        pc.flags = (norm->plus1 ? 2u : 0u) | (uint32_t)norm->w->dtype << 2;
    }
    pc.flags |= accumulate ? 1u : 0u;
    static const char *const kname[] = {[SEL_MV_MATVEC] = "matvec", [SEL_MV_QMV] = "qmv", [SEL_MV_XMV] = "xmv"};
    uint32_t ksplits = mk == SEL_MV_XMV ? sel_xmv_ksplits(&s, &sw, w3 != NULL, split_ok) : 1;
    char name[40], kind[40];
    snprintf(name, sizeof name, "%s%s%s_%s", kname[mk], w3 ? "_swiglu" : "", ksplits > 1 ? "_fadd" : "",
             k_kind_dtype(w[0]->dtype));
    snprintf(kind, sizeof kind, "%smatmul%s.%s", kind_prefix ? kind_prefix : "", w3 ? "_swiglu" : "",
             k_kind_dtype(w[0]->dtype));
    /* one dispatch; xmv in passes of at most K_XMV_COLS columns, pass c0 over columns c0 .. c0+nc-1
     * of x and of each y ([cols][rows_s]), each reading the weights again */
    int pass = mk == SEL_MV_XMV ? sel_xmv_pass_cols(cols) : cols;
    for (int c0 = 0; c0 < cols; c0 += pass) {
        int nc = MIN(pass, cols - c0);
        uint32_t spec[10], n_spec = 0, groups = 0;
        int rc = sel_mv_geometry(&s, mk, &sw, w3 != NULL, rows, nc, ksplits, op, spec, &n_spec, &groups, e);
        const struct gpu_pipeline *pipe = NULL;
        if (!rc) rc = gpu_pipeline(g, name, spec, n_spec, &pipe, e);
        if (rc) return rc;
        struct push_matvec pp = pc;
        pp.x = x + 4 * (uint64_t)c0 * (uint64_t)w[0]->k;
        for (int i = 0; i < n; i++) pp.y[i] = y[i] + 4 * (uint64_t)c0 * (uint64_t)w[i]->rows;
        struct dispatch *d = k_add(p, pipe, &pp, sizeof pp, groups, ksplits, kind, layer, op, bytes);
        dispatch_flops(d, k_product_flops((int64_t)rows, w[0]->k, nc, w3 != NULL), 1);
        size_t y0 = offsetof(struct push_matvec, y);
        dispatch_outputs(d, w3 ? 1 : n, y0, y0 + 8, y0 + 16);
    }
    return ST_OK;
}

/* k (a row's length) of a weight the matrix kernels serve: whole 16-byte slots, a u32 count. */
bool k_matmul_k_served(enum dtype t, int64_t k)
{
    return k >= 1 && k % sel_slot_elems(t) == 0 && k <= UINT32_MAX;
}

/* The shapes and types the matrix kernels serve (w3: SwiGLU's up weight, may be NULL). */
int k_matmul_check(const struct gpu_weight *w, const struct gpu_weight *w3, const struct k_norm *norm, int cols,
                   const char *op, struct err *e)
{
    if (!k_is_weight_type(w->dtype))
        return err_set(e, ST_USAGE, "matmul %s: weight type %s is not served", op, dtype_name(w->dtype));
    if (w->rows < 1 || !k_matmul_k_served(w->dtype, w->k) || w->rows > UINT32_MAX)
        return err_set(e, ST_USAGE, "matmul %s: weight [%lld, %lld] of type %s: k must be a multiple of %lld",
                       op, (long long)w->rows, (long long)w->k, dtype_name(w->dtype),
                       (long long)sel_slot_elems(w->dtype));
    if (w3 && (w3->dtype != w->dtype || w3->rows != w->rows || w3->k != w->k))
        return err_set(e, ST_USAGE, "matmul_swiglu %s: up weight [%lld, %lld] %s differs from gate [%lld, %lld] %s",
                       op, (long long)w3->rows, (long long)w3->k, dtype_name(w3->dtype), (long long)w->rows,
                       (long long)w->k, dtype_name(w->dtype));
    if (cols < 1) return err_set(e, ST_USAGE, "matmul %s: %d columns, expected at least 1", op, cols);
    if (norm && norm->w) return k_check_gain(norm->w, w->k, op, e);
    return ST_OK;
}

static int matmul_any(struct gpu *g, struct plan *p, const struct gpu_weight *w, const struct gpu_weight *w3,
                      const struct k_norm *norm, uint64_t x, uint64_t y, int cols, bool accumulate, int layer,
                      const char *op, const char *kind_prefix, struct err *e)
{
    bool swiglu = w3 != NULL;
    int rc = k_matmul_check(w, w3, norm, cols, op, e);
    if (rc) return rc;

    struct sel s = k_sel_of(g, p);
    struct sel_weight sw = k_sel_w(w);
    bool split_ok = !(norm && norm->w) && accumulate; /* xmv may split k (sel_xmv_ksplits) */
    enum sel_mv mk = sel_mv_pick(&s, cols, &sw, swiglu, (uint64_t)w->rows, 1, split_ok);
    if (mk != SEL_MV_NONE)
        return matvec_dispatch(g, p, 1, &w, w3, &y, norm, x, cols, accumulate, layer, op, kind_prefix, mk, split_ok,
                               e);
    /* the wide plan's steps of many columns go to the tiled matrix product */
    if (sel_gemm_serves(&s, cols, w->dtype))
        return k_gemm_any(g, p, w, w3, norm, x, y, cols, accumulate, layer, op, kind_prefix, e);

    char name[40], kind[40];
    snprintf(name, sizeof name, "matmul%s_%s", swiglu ? "_swiglu" : "", k_kind_dtype(w->dtype));
    snprintf(kind, sizeof kind, "%smatmul%s.%s", kind_prefix ? kind_prefix : "", swiglu ? "_swiglu" : "",
             k_kind_dtype(w->dtype));
    uint64_t bytes = w->bytes + (swiglu ? w3->bytes : 0);
    int pass = sel_matmul_pass_cols(&s);
    for (int c0 = 0; c0 < cols; c0 += pass) {
        uint32_t n = (uint32_t)MIN(pass, cols - c0);
        uint32_t spec[SEL_MATMUL_SPECS];
        uint32_t groups = sel_matmul_spec(&s, swiglu, n, w->rows, spec);
        if (groups > MAX_GROUPS)
            return err_set(e, ST_USAGE, "matmul %s: %lld rows need %u workgroups, more than 65535", op,
                           (long long)w->rows, groups);
        const struct gpu_pipeline *pipe;
        if ((rc = gpu_pipeline(g, name, spec, SEL_MATMUL_SPECS, &pipe, e))) return rc;
        struct push_matmul pc = k_matmul_push(w, w3, norm, x + 4 * (uint64_t)c0 * (uint64_t)w->k,
                                              y + 4 * (uint64_t)c0 * (uint64_t)w->rows, accumulate);
        struct dispatch *d = k_add(p, pipe, &pc, sizeof pc, groups, 1, kind, layer, op, bytes);
        dispatch_flops(d, k_product_flops(w->rows, w->k, n, swiglu), 1);
        dispatch_outputs(d, 1, offsetof(struct push_matmul, y));
    }
    return ST_OK;
}

int k_matmul(struct gpu *g, struct plan *p, const struct gpu_weight *w, uint64_t x, uint64_t y, int cols,
             bool accumulate, int layer, const char *op, const char *kind_prefix, struct err *e)
{
    return matmul_any(g, p, w, NULL, NULL, x, y, cols, accumulate, layer, op, kind_prefix, e);
}

int k_matmul_norm(struct gpu *g, struct plan *p, const struct gpu_weight *w, const struct k_norm *norm, uint64_t x,
                  uint64_t y, int cols, bool accumulate, int layer, const char *op, const char *kind_prefix,
                  struct err *e)
{
    return matmul_any(g, p, w, NULL, norm, x, y, cols, accumulate, layer, op, kind_prefix, e);
}

int k_matmul_swiglu(struct gpu *g, struct plan *p, const struct gpu_weight *w1, const struct gpu_weight *w3,
                    const struct k_norm *norm, uint64_t x, uint64_t y, int cols, int layer, const char *op,
                    const char *kind_prefix, struct err *e)
{
    if (!w3) return err_set(e, ST_USAGE, "matmul_swiglu %s: no up weight", op);
    return matmul_any(g, p, w1, w3, norm, x, y, cols, false, layer, op, kind_prefix, e);
}

int k_matmul_multi(struct gpu *g, struct plan *p, int n, const struct gpu_weight *const w[], const uint64_t y[],
                   const struct k_norm *norm, uint64_t x, int cols, int layer, const char *const ops[],
                   const char *fused_op, struct err *e)
{
    if (n < 1 || n > K_MULTI_MAX)
        return err_set(e, ST_USAGE, "matmul %s: %d weights, expected 1..%d", fused_op, n, K_MULTI_MAX);
    /* the wide plan's gemm: one prep for all when every product goes to it */
    struct sel s = k_sel_of(g, p);
    struct sel_weight sws[K_MULTI_MAX];
    for (int i = 0; i < n; i++) sws[i] = k_sel_w(w[i]);
    if (sel_gemm_multi(&s, n, sws, cols)) {
        for (int i = 0; i < n; i++) {
            int rc = k_matmul_check(w[i], NULL, norm, cols, ops[i], e);
            if (rc) return rc;
        }
        return k_gemm_multi(g, p, n, w, y, norm, x, cols, layer, ops, fused_op, e);
    }
    uint64_t all_rows = 0;
    for (int i = 0; i < n; i++) all_rows += (uint64_t)w[i]->rows;
    struct sel_weight sw = k_sel_w(w[0]);
    enum sel_mv mk = sel_mv_pick(&s, cols, &sw, false, all_rows, n, false);
    bool one = n <= MATVEC_MAX_WEIGHTS && mk != SEL_MV_NONE;
    for (int i = 1; i < n; i++) one = one && w[i]->dtype == w[0]->dtype && w[i]->k == w[0]->k;
    if (!one || n == 1) {
        int rc = ST_OK;
        for (int i = 0; !rc && i < n; i++) rc = k_matmul_norm(g, p, w[i], norm, x, y[i], cols, false, layer, ops[i], "", e);
        return rc;
    }
    for (int i = 0; i < n; i++) {
        int rc = k_matmul_check(w[i], NULL, norm, cols, ops[i], e);
        if (rc) return rc;
    }
    return matvec_dispatch(g, p, n, w, NULL, y, norm, x, cols, false, layer, fused_op, "", mk, false, e);
}
