/* kernels.c - host side of the compute kernels: the repacked weight layout, and one helper per
 * kernel that makes its pipeline for this device, fills its push constants and appends it to a
 * plan. The push structs mirror the `Push` blocks of shaders/<name>.comp field by field. */
#include "kernels.h"

#include <stddef.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuning.h"

#define MAX_GROUPS 65535u /* guaranteed maxComputeWorkGroupCount in every dimension */

/* ---- weights on the host */

/* Lower-case type names used in kinds ("matmul.bf16"). */
static const char *kind_dtype(enum dtype t)
{
    switch (t) {
    case DT_F32: return "f32";
    case DT_F16: return "f16";
    case DT_BF16: return "bf16";
    case DT_Q8_0: return "q8_0";
    case DT_Q4_0: return "q4_0";
    default: return "?";
    }
}

static bool is_weight_type(enum dtype t) { return t == DT_F32 || t == DT_F16 || t == DT_BF16 || t == DT_Q8_0 || t == DT_Q4_0; }
static bool is_plain_type(enum dtype t) { return t == DT_F32 || t == DT_F16 || t == DT_BF16; }
static bool is_quant_type(enum dtype t) { return t == DT_Q8_0 || t == DT_Q4_0; }

/* Quant bytes per 32-block in the device layout (the file adds the 2-byte scale in front). */
static uint64_t quant_bytes(enum dtype t) { return t == DT_Q8_0 ? 32 : 16; }

uint64_t weight_bytes(enum dtype t, int64_t rows, int64_t k)
{
    return dtype_bytes(t, (uint64_t)rows * (uint64_t)k);
}

void weight_repack(enum dtype t, int64_t rows, int64_t k, const uint8_t *file_blocks, uint64_t at, uint64_t n,
                   uint8_t *out)
{
    if (!is_quant_type(t)) {
        memcpy(out, file_blocks + at, n);
        return;
    }
    uint64_t qb = quant_bytes(t), fb = qb + 2;
    uint64_t n_blocks = (uint64_t)rows * (uint64_t)(k / 32), quant_end = n_blocks * qb;
    uint64_t o = at, end = at + n;
    while (o < end && o < quant_end) { /* quant bytes: runs of one block's bytes */
        uint64_t blk = o / qb, j = o % qb, len = MIN(qb - j, end - o);
        memcpy(out + (o - at), file_blocks + blk * fb + 2 + j, len);
        o += len;
    }
    for (; o < end; o++) { /* scales: byte b of block s's f16 */
        uint64_t s = (o - quant_end) / 2, b = (o - quant_end) % 2;
        out[o - at] = file_blocks[s * fb + b];
    }
}

float weight_get(enum dtype t, int64_t rows, int64_t k, const uint8_t *dev, int64_t row, int64_t i)
{
    uint64_t e = (uint64_t)row * (uint64_t)k + (uint64_t)i;
    switch (t) {
    case DT_F32: {
        float f;
        memcpy(&f, dev + 4 * e, 4);
        return f;
    }
    case DT_F16: return f16_to_f32(rd_u16(dev + 2 * e));
    case DT_BF16: return bf16_to_f32(rd_u16(dev + 2 * e));
    case DT_Q8_0:
    case DT_Q4_0: {
        uint64_t nb = (uint64_t)k / 32, blk = (uint64_t)row * nb + (uint64_t)i / 32, j = (uint64_t)i % 32;
        uint64_t qb = quant_bytes(t);
        float d = f16_to_f32(rd_u16(dev + (uint64_t)rows * nb * qb + 2 * blk));
        if (t == DT_Q8_0) return (float)(int8_t)dev[blk * 32 + j] * d;
        uint8_t b = dev[blk * 16 + j % 16];
        return ((float)(j < 16 ? b & 15 : b >> 4) - 8.0f) * d;
    }
    default: return NAN;
    }
}

/* ---- shared helpers */

/* Appends one dispatch and tags it; the caller declares its outputs (dispatch_outputs). */
static struct dispatch *add(struct plan *p, const struct gpu_pipeline *pipe, const void *push, uint32_t push_size,
                            uint32_t gx, uint32_t gy, const char *kind, int layer, const char *op, uint64_t bytes)
{
    struct dispatch *d = plan_add(p, pipe, push, push_size, gx, gy, 1);
    dispatch_tag(d, kind, layer, op, bytes);
    return d;
}

static uint32_t div_up(uint64_t a, uint64_t b) { return (uint32_t)((a + b - 1) / b); }

/* A 1-D weight (gain) of a plain type and length n. */
static int check_gain(const struct gpu_weight *w, int64_t n, const char *what, struct err *e)
{
    if (!w || !w->addr) return err_set(e, ST_USAGE, "%s: no gain weight given", what);
    if (!is_plain_type(w->dtype))
        return err_set(e, ST_USAGE, "%s: gain of type %s, expected F32, F16 or BF16", what, dtype_name(w->dtype));
    if (w->rows * w->k != n)
        return err_set(e, ST_USAGE, "%s: gain has %lld elements, expected %lld", what, (long long)(w->rows * w->k),
                       (long long)n);
    return ST_OK;
}

/* ---- embed */

struct push_embed {
    uint64_t table, cols, dst;
    uint32_t dim, rows, dtype, n_cols;
};
_Static_assert(sizeof(struct push_embed) == 40, "push_embed layout");

int k_embed(struct gpu *g, struct plan *p, const struct gpu_weight *table, uint64_t cols_meta, uint64_t out,
            int cols, struct err *e)
{
    if (!is_weight_type(table->dtype) || cols < 1 || cols > (int)MAX_GROUPS || table->k < 1)
        return err_set(e, ST_USAGE, "embed: table type %s, %d columns: expected a weight type and 1..65535 columns",
                       dtype_name(table->dtype), cols);
    const struct gpu_pipeline *pipe;
    int rc = gpu_pipeline(g, "embed", NULL, 0, &pipe, e);
    if (rc) return rc;
    struct push_embed pc = {table->addr, cols_meta, out, (uint32_t)table->k, (uint32_t)table->rows,
                            (uint32_t)table->dtype, (uint32_t)cols};
    char kind[40];
    snprintf(kind, sizeof kind, "embed.%s", kind_dtype(table->dtype));
    struct dispatch *d = add(p, pipe, &pc, sizeof pc, div_up((uint64_t)table->k, 256), (uint32_t)cols, kind, -1,
                             "embed", weight_bytes(table->dtype, cols, table->k));
    dispatch_outputs(d, 1, offsetof(struct push_embed, dst));
    return ST_OK;
}

/* ---- rmsnorm */

struct push_rmsnorm {
    uint64_t x, y, w, idx;
    uint32_t dim, wdtype;
    float eps;
    uint32_t flags; /* 1: (1 + w); 2: accumulate */
};
_Static_assert(sizeof(struct push_rmsnorm) == 48, "push_rmsnorm layout");

static int rmsnorm_any(struct gpu *g, struct plan *p, const struct gpu_weight *w, uint64_t x, uint64_t y,
                       uint64_t idx, int n_rows, float eps, bool plus1, bool accumulate, int layer, const char *op,
                       const char *kind, struct err *e)
{
    int rc = check_gain(w, w ? w->rows * w->k : 0, kind, e);
    if (rc) return rc;
    if (n_rows < 1 || n_rows > (int)MAX_GROUPS)
        return err_set(e, ST_USAGE, "%s %s: %d rows, expected 1..65535", kind, op, n_rows);
    const struct gpu_pipeline *pipe;
    if ((rc = gpu_pipeline(g, "rmsnorm", NULL, 0, &pipe, e))) return rc;
    struct push_rmsnorm pc = {x, y, w->addr, idx, (uint32_t)(w->rows * w->k), (uint32_t)w->dtype, eps,
                              (plus1 ? 1u : 0u) | (accumulate ? 2u : 0u)};
    struct dispatch *d = add(p, pipe, &pc, sizeof pc, (uint32_t)n_rows, 1, kind, layer, op, w->bytes);
    dispatch_outputs(d, 1, offsetof(struct push_rmsnorm, y));
    return ST_OK;
}

int k_rmsnorm(struct gpu *g, struct plan *p, const struct gpu_weight *w, uint64_t x, uint64_t y, uint64_t idx,
              int n_rows, float eps, bool plus1, int layer, const char *op, const char *kind_prefix, struct err *e)
{
    char kind[40];
    snprintf(kind, sizeof kind, "%srmsnorm", kind_prefix ? kind_prefix : "");
    return rmsnorm_any(g, p, w, x, y, idx, n_rows, eps, plus1, false, layer, op, kind, e);
}

int k_rmsnorm_add(struct gpu *g, struct plan *p, const struct gpu_weight *w, uint64_t x, uint64_t y, int n_rows,
                  float eps, bool plus1, int layer, const char *op, struct err *e)
{
    return rmsnorm_any(g, p, w, x, y, 0, n_rows, eps, plus1, true, layer, op, "rmsnorm_add", e);
}

/* ---- matmul */

struct push_matmul {
    uint64_t w, wscale, w3, w3scale, x, y, gain;
    uint32_t rows, k, accumulate, gdtype;
    float eps;
    uint32_t plus1;
};
_Static_assert(sizeof(struct push_matmul) == 80, "push_matmul layout");

/* Address of the f16 scales of a Q weight, 0 for the others. */
static uint64_t scale_addr(const struct gpu_weight *w)
{
    if (!is_quant_type(w->dtype)) return 0;
    return w->addr + (uint64_t)w->rows * (uint64_t)(w->k / 32) * quant_bytes(w->dtype);
}

/* The context of the kernel choice (select.h) for plan p (NULL: a batch plan) on g. */
static struct sel sel_of(const struct gpu *g, const struct plan *p)
{
    return (struct sel){&g->tune, p ? p->kind : PLAN_BATCH, g->subgroup_size, g->shared_mem, g->gemm_coopmat,
                        g->has_float_atomic_add};
}

static struct sel_weight sel_w(const struct gpu_weight *w) { return (struct sel_weight){w->dtype, w->rows, w->k}; }

/* The push constants of matmul.comp and gemm.comp (norm: may be NULL; w3 NULL: no SwiGLU). */
static struct push_matmul matmul_push(const struct gpu_weight *w, const struct gpu_weight *w3,
                                      const struct k_norm *norm, uint64_t x, uint64_t y, bool accumulate)
{
    return (struct push_matmul){
        .w = w->addr,
        .wscale = scale_addr(w),
        .w3 = w3 ? w3->addr : 0,
        .w3scale = w3 ? scale_addr(w3) : 0,
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

static int gemm_any(struct gpu *g, struct plan *p, const struct gpu_weight *w, const struct gpu_weight *w3,
                    const struct k_norm *norm, uint64_t x, uint64_t y, int cols, bool accumulate, int layer,
                    const char *op, const char *kind_prefix, struct err *e);
static int gemm_multi(struct gpu *g, struct plan *p, int n, const struct gpu_weight *const w[], const uint64_t y[],
                      const struct k_norm *norm, uint64_t x, int cols, int layer, const char *const ops[],
                      const char *fused_op, struct err *e);

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
    struct sel s = sel_of(g, p);
    struct sel_weight sw = sel_w(w);
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
    struct sel s = sel_of(g, p);
    struct sel_weight sw = sel_w(w[0]);
    struct push_matvec pc = {.x = x, .k = (uint32_t)w[0]->k, .eps = norm ? norm->eps : 0};
    uint64_t rows = 0, bytes = 0;
    for (int i = 0; i < MATVEC_MAX_WEIGHTS; i++) {
        if (i < n) {
            pc.w[i] = w[i]->addr;
            pc.ws[i] = scale_addr(w[i]);
            pc.y[i] = y[i];
            rows += (uint64_t)w[i]->rows;
            bytes += w[i]->bytes;
        }
        pc.rows_end[i] = (uint32_t)rows;
    }
    if (w3) {
        pc.w[1] = w3->addr;
        pc.ws[1] = scale_addr(w3);
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
             kind_dtype(w[0]->dtype));
    snprintf(kind, sizeof kind, "%smatmul%s.%s", kind_prefix ? kind_prefix : "", w3 ? "_swiglu" : "",
             kind_dtype(w[0]->dtype));
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
        struct dispatch *d = add(p, pipe, &pp, sizeof pp, groups, ksplits, kind, layer, op, bytes);
        size_t y0 = offsetof(struct push_matvec, y);
        dispatch_outputs(d, w3 ? 1 : n, y0, y0 + 8, y0 + 16);
    }
    return ST_OK;
}

/* k (a row's length) of a weight the matrix kernels serve: whole 16-byte slots, a u32 count. */
static bool matmul_k_served(enum dtype t, int64_t k)
{
    return k >= 1 && k % sel_slot_elems(t) == 0 && k <= UINT32_MAX;
}

/* The shapes and types the matrix kernels serve (w3: SwiGLU's up weight, may be NULL). */
static int matmul_check(const struct gpu_weight *w, const struct gpu_weight *w3, const struct k_norm *norm, int cols,
                        const char *op, struct err *e)
{
    if (!is_weight_type(w->dtype))
        return err_set(e, ST_USAGE, "matmul %s: weight type %s is not served", op, dtype_name(w->dtype));
    if (w->rows < 1 || !matmul_k_served(w->dtype, w->k) || w->rows > UINT32_MAX)
        return err_set(e, ST_USAGE, "matmul %s: weight [%lld, %lld] of type %s: k must be a multiple of %lld",
                       op, (long long)w->rows, (long long)w->k, dtype_name(w->dtype),
                       (long long)sel_slot_elems(w->dtype));
    if (w3 && (w3->dtype != w->dtype || w3->rows != w->rows || w3->k != w->k))
        return err_set(e, ST_USAGE, "matmul_swiglu %s: up weight [%lld, %lld] %s differs from gate [%lld, %lld] %s",
                       op, (long long)w3->rows, (long long)w3->k, dtype_name(w3->dtype), (long long)w->rows,
                       (long long)w->k, dtype_name(w->dtype));
    if (cols < 1) return err_set(e, ST_USAGE, "matmul %s: %d columns, expected at least 1", op, cols);
    if (norm && norm->w) return check_gain(norm->w, w->k, op, e);
    return ST_OK;
}

static int matmul_any(struct gpu *g, struct plan *p, const struct gpu_weight *w, const struct gpu_weight *w3,
                      const struct k_norm *norm, uint64_t x, uint64_t y, int cols, bool accumulate, int layer,
                      const char *op, const char *kind_prefix, struct err *e)
{
    bool swiglu = w3 != NULL;
    int rc = matmul_check(w, w3, norm, cols, op, e);
    if (rc) return rc;

    struct sel s = sel_of(g, p);
    struct sel_weight sw = sel_w(w);
    bool split_ok = !(norm && norm->w) && accumulate; /* xmv may split k (sel_xmv_ksplits) */
    enum sel_mv mk = sel_mv_pick(&s, cols, &sw, swiglu, (uint64_t)w->rows, 1, split_ok);
    if (mk != SEL_MV_NONE)
        return matvec_dispatch(g, p, 1, &w, w3, &y, norm, x, cols, accumulate, layer, op, kind_prefix, mk, split_ok,
                               e);
    /* the wide plan's steps of many columns go to the tiled matrix product */
    if (sel_gemm_serves(&s, cols, w->dtype))
        return gemm_any(g, p, w, w3, norm, x, y, cols, accumulate, layer, op, kind_prefix, e);

    char name[40], kind[40];
    snprintf(name, sizeof name, "matmul%s_%s", swiglu ? "_swiglu" : "", kind_dtype(w->dtype));
    snprintf(kind, sizeof kind, "%smatmul%s.%s", kind_prefix ? kind_prefix : "", swiglu ? "_swiglu" : "",
             kind_dtype(w->dtype));
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
        struct push_matmul pc = matmul_push(w, w3, norm, x + 4 * (uint64_t)c0 * (uint64_t)w->k,
                                            y + 4 * (uint64_t)c0 * (uint64_t)w->rows, accumulate);
        struct dispatch *d = add(p, pipe, &pc, sizeof pc, groups, 1, kind, layer, op, bytes);
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
    struct sel s = sel_of(g, p);
    bool gemm = n > 1;
    for (int i = 0; i < n; i++) gemm = gemm && sel_gemm_serves(&s, cols, w[i]->dtype) && w[i]->k == w[0]->k;
    if (gemm) {
        for (int i = 0; i < n; i++) {
            int rc = matmul_check(w[i], NULL, norm, cols, ops[i], e);
            if (rc) return rc;
        }
        return gemm_multi(g, p, n, w, y, norm, x, cols, layer, ops, fused_op, e);
    }
    uint64_t all_rows = 0;
    for (int i = 0; i < n; i++) all_rows += (uint64_t)w[i]->rows;
    struct sel_weight sw = sel_w(w[0]);
    enum sel_mv mk = sel_mv_pick(&s, cols, &sw, false, all_rows, n, false);
    bool one = n <= MATVEC_MAX_WEIGHTS && mk != SEL_MV_NONE;
    for (int i = 1; i < n; i++) one = one && w[i]->dtype == w[0]->dtype && w[i]->k == w[0]->k;
    if (!one || n == 1) {
        int rc = ST_OK;
        for (int i = 0; !rc && i < n; i++) rc = k_matmul_norm(g, p, w[i], norm, x, y[i], cols, false, layer, ops[i], "", e);
        return rc;
    }
    for (int i = 0; i < n; i++) {
        int rc = matmul_check(w[i], NULL, norm, cols, ops[i], e);
        if (rc) return rc;
    }
    return matvec_dispatch(g, p, n, w, NULL, y, norm, x, cols, false, layer, fused_op, "", mk, false, e);
}

/* ---- gemm: the wide plan's tiled matrix product (gemm.comp; its header says why this shape) */

struct push_gemm {
    struct push_matmul m; /* as matmul.comp's block (gain not read: gemm_xprep applies the norm) */
    uint32_t cols, kper;  /* kper: k per split when the grid's z > 1 */
};
_Static_assert(sizeof(struct push_gemm) == 88, "push_gemm layout");

#define GEMM_PREP_MAX_Y K_MULTI_MAX /* outputs one prep zeroes (gemm_xprep.comp's y[4]) */

struct push_gemm_xprep {
    uint64_t x, xo, gain;
    uint64_t y[GEMM_PREP_MAX_Y]; /* zeroed [cols][rows[i]] where not 0 */
    uint32_t k, gdtype;
    float eps;
    uint32_t plus1;
    uint32_t rows[GEMM_PREP_MAX_Y];
};
_Static_assert(sizeof(struct push_gemm_xprep) == 88, "push_gemm_xprep layout");

/* One product of the gemm with its geometry chosen (gemm_setup), appended by gemm_append once its
 * prepared activations are known: products of one input share one prep (gemm_prep). */
struct gemm_call {
    const struct gpu_pipeline *pipe;
    struct push_gemm pc; /* pc.m.x: set by gemm_append */
    uint32_t groups[3];  /* column tiles, row tiles, k splits */
    char kind[40];
    uint64_t bytes;
    bool zero_y; /* split sums into a y that does not accumulate: y must start at 0 */
    bool xraw;   /* reads the plain x (no prep needed: gemm.comp XRAW) */
};

/* A device-wide scratch buffer of at least `bytes` (struct gpu gemm_x: the gemm's prepared
 * activations, gemm_xprep.comp; gemm_w: f16 copies of Q4_0 weights, gemm_wdeq.comp; attn_part:
 * attn_kv.comp's split outputs): one per device, shared by every dispatch that needs it. gemm_x is
 * no plan buffer, so recording puts barriers on both sides of a prep (plan_barriers); gemm_w's
 * halves are (engine.c), so a widening and the products around it are ordered by the data they
 * share. When a plan needs more a larger one is made; the old one stays (plans built before keep
 * its address) until gpu_close frees all. */
static int dev_scratch(struct gpu *g, struct gpu_buf *b, uint64_t bytes, uint64_t *addr, struct err *e)
{
    if (b->size < bytes) {
        uint64_t size = MAX(bytes, 2 * b->size);
        int rc = gpu_alloc(g, size, GPU_MEM_DEVICE, b, e);
        if (rc) return rc;
        g->scratch_gen++;
    }
    *addr = b->addr;
    return ST_OK;
}

/* The tiles, splits and pipeline of one product (sel_gemm; appends nothing). */
static int gemm_setup(struct gpu *g, const struct gpu_weight *w, const struct gpu_weight *w3, uint64_t y, int cols,
                      bool accumulate, bool plain_x, const char *op, const char *kind_prefix, struct gemm_call *c,
                      struct err *e)
{
    bool swiglu = w3 != NULL;
    struct sel s = sel_of(g, NULL);
    struct sel_weight sw = sel_w(w);
    struct sel_gemm sg;
    int rc = sel_gemm(&s, &sw, swiglu, cols, accumulate, plain_x, op, &sg, e);
    if (rc) return rc;
    char name[40];
    snprintf(name, sizeof name, "%s%s%s_%s", sg.kernel, swiglu ? "_swiglu" : "", sg.fadd ? "_fadd" : "",
             kind_dtype(w->dtype));
    snprintf(c->kind, sizeof c->kind, "%s%s%s.%s", kind_prefix ? kind_prefix : "", sg.kernel, swiglu ? "_swiglu" : "",
             kind_dtype(w->dtype));
    c->zero_y = sg.zero_y;
    c->xraw = sg.xraw;
    if ((rc = gpu_pipeline(g, name, sg.spec, SEL_GEMM_SPECS, &c->pipe, e))) return rc;
    c->pc = (struct push_gemm){matmul_push(w, w3, NULL, 0, y, accumulate), (uint32_t)cols, sg.kper};
    memcpy(c->groups, sg.groups, sizeof c->groups);
    c->bytes = w->bytes + (swiglu ? w3->bytes : 0);
    return ST_OK;
}

/* ---- Q4_0 products through an f16 copy (gemm_wdeq.comp): from K_GEMM_WDEQ_COLS columns a Q4_0
 * product is one widening of its weights into an f16 copy (the rounding gemm.comp's Q4_0 tile does
 * once a column tile) and the F16 product on it, the widening beside the previous product
 * (gemm_wdeq below; when: select.c sel_gemm_wdeq_serves). */

struct push_gemm_wdeq {
    uint64_t w[4], sc[4], out[4]; /* gemm_wdeq.comp: w, sc, dst */
    uint32_t start[5], pad;
};
_Static_assert(sizeof(struct push_gemm_wdeq) == 120, "push_gemm_wdeq layout");

int k_gemm_wdeq(struct gpu *g, struct plan *p, int n, const struct gpu_weight *const w[], const uint64_t out[],
                int layer, const char *op, const char *kind_prefix, struct err *e)
{
    CHECK(n >= 1 && n <= 4);
    struct push_gemm_wdeq pc;
    memset(&pc, 0, sizeof pc);
    uint64_t bytes = 0;
    for (int i = 0; i < n; i++) {
        if (w[i]->dtype != DT_Q4_0 || w[i]->k % 32 || w[i]->rows < 1 || out[i] % 16)
            return err_set(e, ST_USAGE,
                           "gemm %s: widening needs a Q4_0 weight with k a multiple of 32 and a 16-byte "
                           "aligned copy (got %s [%lld, %lld])",
                           op, dtype_name(w[i]->dtype), (long long)w[i]->rows, (long long)w[i]->k);
        uint64_t blocks = (uint64_t)w[i]->rows * (uint64_t)(w[i]->k / 32);
        if (pc.start[i] + blocks > UINT32_MAX)
            return err_set(e, ST_USAGE, "gemm %s: %llu blocks to widen, too many", op,
                           (unsigned long long)blocks);
        pc.w[i] = w[i]->addr;
        pc.sc[i] = scale_addr(w[i]);
        pc.out[i] = out[i];
        pc.start[i + 1] = pc.start[i] + (uint32_t)blocks;
        bytes += w[i]->bytes;
    }
    for (int i = n + 1; i < 5; i++) pc.start[i] = pc.start[n];
    const struct gpu_pipeline *pp;
    struct sel s = sel_of(g, p);
    uint32_t bpt = sel_gemm_wdeq_bpt(&s);
    int rc = gpu_pipeline(g, "gemm_wdeq", &bpt, 1, &pp, e);
    if (rc) return rc;
    uint32_t groups = div_up(pc.start[4], 64 * bpt), gx = MIN(groups, (uint32_t)MAX_GROUPS), gy = div_up(groups, gx);
    char kind[40];
    snprintf(kind, sizeof kind, "%sgemm_wdeq.q4_0", kind_prefix ? kind_prefix : "");
    struct dispatch *d = add(p, pp, &pc, sizeof pc, gx, gy, kind, layer, op, bytes);
    d->bytes_again = true; /* the products on the copies carry the same weights' bytes */
    size_t at[4];
    for (int i = 0; i < 4; i++) at[i] = offsetof(struct push_gemm_wdeq, out) + 8 * (size_t)i;
    dispatch_outputs(d, n, at[0], at[1], at[2], at[3]);
    return ST_OK;
}

/* Bytes of one half of gemm_w (256-aligned). */
static uint64_t gemm_w_half_bytes(const struct gpu *g) { return g->gemm_w.size / 2 / 256 * 256; }

int k_scratch_bufs(const struct gpu *g, uint64_t lo[K_SCRATCH_BUFS], uint64_t hi[K_SCRATCH_BUFS])
{
    uint64_t half = gemm_w_half_bytes(g);
    if (!half) return 0;
    for (int i = 0; i < 2; i++) {
        lo[i] = g->gemm_w.addr + (uint64_t)i * half;
        hi[i] = lo[i] + half;
    }
    return 2;
}

/* The f16 copies of the weights w[0..n) that sel_gemm_wdeq_serves takes at `cols` columns (f[i] = *w[i]
 * for the others), and the widening of those into them (one dispatch). The copies go into one half
 * of the device's gemm_w buffer, the halves taken in turn, and the widening is moved back to just
 * after the last dispatch that reads a copy (plan_hoist_last): the previous such product, whose
 * copy is in the other half, so that the two run side by side where the engine lets the barriers
 * follow the data (engine.c makes the halves plan buffers). wide[i]: whether w[i] goes through its
 * copy. */
static int gemm_wdeq(struct gpu *g, struct plan *p, int n, const struct gpu_weight *const w[], int cols,
                     struct gpu_weight f[], bool wide[], int layer, const char *op, const char *kind_prefix,
                     struct err *e)
{
    uint64_t need = 0, at[4] = {0}, base;
    const struct gpu_weight *q[4];
    uint64_t out[4];
    int nq = 0;
    CHECK(n <= 4);
    for (int i = 0; i < n; i++) {
        f[i] = *w[i];
        struct sel s = sel_of(g, p);
        struct sel_weight sw = sel_w(w[i]);
        wide[i] = sel_gemm_wdeq_serves(&s, cols, &sw);
        if (!wide[i]) continue;
        at[i] = need;
        need += (2 * (uint64_t)w[i]->rows * (uint64_t)w[i]->k + 255) / 256 * 256;
    }
    if (!need) return ST_OK;
    if (g->gemm_w.size / 2 < need) g->gemm_w_half = 0;
    int rc = dev_scratch(g, &g->gemm_w, 2 * need, &base, e);
    if (rc) return rc;
    uint64_t half = gemm_w_half_bytes(g);
    base += g->gemm_w_half * half;
    g->gemm_w_half ^= 1;
    for (int i = 0; i < n; i++) {
        if (!wide[i]) continue;
        uint64_t bytes = 2 * (uint64_t)w[i]->rows * (uint64_t)w[i]->k;
        f[i] = (struct gpu_weight){base + at[i], DT_F16, w[i]->rows, w[i]->k, bytes};
        q[nq] = w[i];
        out[nq++] = f[i].addr;
    }
    rc = k_gemm_wdeq(g, p, nq, q, out, layer, op, kind_prefix, e);
    if (!rc) plan_hoist_last(p, g->gemm_w.addr, g->gemm_w.addr + 2 * half);
    return rc;
}

/* A product set up on an f16 copy keeps the tags of its weights: kind "...gemm[_swiglu].q4_0" and
 * their bytes (the step's weight-bytes floor counts each weight once, figures.c). */
static void gemm_retag(struct gemm_call *c, const struct gpu_weight *w, const struct gpu_weight *w3)
{
    char *dot = strrchr(c->kind, '.');
    if (dot) snprintf(dot + 1, sizeof c->kind - (size_t)(dot + 1 - c->kind), "%s", kind_dtype(w->dtype));
    c->bytes = w->bytes + (w3 ? w3->bytes : 0);
}

/* The activations of n products of one input x [cols][k], prepared once (gemm_xprep.comp: norm
 * applied, f16 hi/lo split for cooperative matrices), and the outputs of those with split sums
 * zeroed, in one dispatch (kind "<kind_prefix>gemm_xprep", 0 weight bytes): *xg is what the gemms
 * read. None is needed by the FMA twin when there is no norm and nothing to zero (*xg = x). */
static int gemm_prep(struct gpu *g, struct plan *p, const struct k_norm *norm, uint64_t x, int64_t k, int cols,
                     int n, const struct gemm_call *calls, int layer, const char *op, const char *kind_prefix,
                     uint64_t *xg, struct err *e)
{
    bool has_norm = norm && norm->w, zero = false, raw = true;
    for (int i = 0; i < n; i++) {
        zero = zero || calls[i].zero_y;
        raw = raw && calls[i].xraw;
    }
    *xg = x;
    if ((!g->gemm_coopmat && !has_norm && !zero) || raw) return ST_OK;
    CHECK(n >= 1 && n <= GEMM_PREP_MAX_Y);
    int rc = dev_scratch(g, &g->gemm_x, 4 * (uint64_t)cols * (uint64_t)k, xg, e);
    if (rc) return rc;
    const struct gpu_pipeline *pp;
    if ((rc = gpu_pipeline(g, g->gemm_coopmat ? "gemm_xprep" : "gemm_xprep_f32", NULL, 0, &pp, e))) return rc;
    struct push_gemm_xprep xp = {.x = x,
                                 .xo = *xg,
                                 .gain = has_norm ? norm->w->addr : 0,
                                 .k = (uint32_t)k,
                                 .gdtype = has_norm ? (uint32_t)norm->w->dtype : 0,
                                 .eps = has_norm ? norm->eps : 0,
                                 .plus1 = has_norm && norm->plus1};
    size_t out[1 + GEMM_PREP_MAX_Y] = {offsetof(struct push_gemm_xprep, xo)};
    int n_out = 1;
    for (int i = 0; i < n; i++) {
        if (!calls[i].zero_y) continue;
        xp.y[i] = calls[i].pc.m.y;
        xp.rows[i] = calls[i].pc.m.rows;
        out[n_out++] = offsetof(struct push_gemm_xprep, y) + 8 * (size_t)i;
    }
    char pkind[40];
    snprintf(pkind, sizeof pkind, "%sgemm_xprep", kind_prefix ? kind_prefix : "");
    struct dispatch *d = add(p, pp, &xp, sizeof xp, (uint32_t)cols, 1, pkind, layer, op, 0);
    dispatch_outputs(d, n_out, out[0], out[1], out[2], out[3], out[4]);
    return ST_OK;
}

static void gemm_append(struct plan *p, const struct gemm_call *c, uint64_t xg, int layer, const char *op)
{
    struct push_gemm pc = c->pc;
    pc.m.x = xg;
    struct dispatch *d = plan_add(p, c->pipe, &pc, sizeof pc, c->groups[0], c->groups[1], c->groups[2]);
    dispatch_tag(d, c->kind, layer, op, c->bytes);
    dispatch_outputs(d, 1, offsetof(struct push_gemm, m.y));
}

/* One product through the gemm: its prep (when needed), then the product. */
static int gemm_any(struct gpu *g, struct plan *p, const struct gpu_weight *w, const struct gpu_weight *w3,
                    const struct k_norm *norm, uint64_t x, uint64_t y, int cols, bool accumulate, int layer,
                    const char *op, const char *kind_prefix, struct err *e)
{
    struct gemm_call c;
    uint64_t xg;
    const struct gpu_weight *ws[2] = {w, w3};
    struct gpu_weight f[2];
    bool wide[2] = {false, false};
    int rc = gemm_wdeq(g, p, w3 ? 2 : 1, ws, cols, f, wide, layer, op, kind_prefix, e);
    if (!rc)
        rc = gemm_setup(g, &f[0], w3 ? &f[1] : NULL, y, cols, accumulate, !(norm && norm->w), op, kind_prefix, &c,
                        e);
    if (rc) return rc;
    if (wide[0]) gemm_retag(&c, w, w3);
    rc = gemm_prep(g, p, norm, x, w->k, cols, 1, &c, layer, op, kind_prefix, &xg, e);
    if (rc) return rc;
    gemm_append(p, &c, xg, layer, op);
    return ST_OK;
}

/* n products of one input through the gemm (k_matmul_multi in a wide plan): one prep serves them
 * all (and zeroes every split output), then the n products, which write distinct outputs and so
 * run with no barrier between them (plan_barriers). Weights share k. */
static int gemm_multi(struct gpu *g, struct plan *p, int n, const struct gpu_weight *const w[], const uint64_t y[],
                      const struct k_norm *norm, uint64_t x, int cols, int layer, const char *const ops[],
                      const char *fused_op, struct err *e)
{
    struct gemm_call c[GEMM_PREP_MAX_Y];
    struct gpu_weight f[GEMM_PREP_MAX_Y];
    bool wide[GEMM_PREP_MAX_Y];
    uint64_t xg;
    CHECK(n >= 1 && n <= GEMM_PREP_MAX_Y);
    int rc = gemm_wdeq(g, p, n, w, cols, f, wide, layer, fused_op, "", e);
    if (rc) return rc;
    for (int i = 0; i < n; i++) {
        rc = gemm_setup(g, &f[i], NULL, y[i], cols, false, !(norm && norm->w), ops[i], "", &c[i], e);
        if (rc) return rc;
        if (wide[i]) gemm_retag(&c[i], w[i], NULL);
    }
    rc = gemm_prep(g, p, norm, x, w[0]->k, cols, n, c, layer, fused_op, "", &xg, e);
    if (rc) return rc;
    for (int i = 0; i < n; i++) gemm_append(p, &c[i], xg, layer, ops[i]);
    return ST_OK;
}

/* ---- recurrent state (struct k_state): how a kernel writes it */

int k_state_mode(const struct plan *p, const struct k_state *state, const char *what, uint32_t *mode, struct err *e)
{
    bool spec = p->kind == PLAN_SPEC;
    if (state->n_snap < 1 || (spec && state->n_snap < 2))
        return err_set(e, ST_USAGE, "%s: %u state entries a slot, expected %s", what, state->n_snap,
                       spec ? "at least 2 in a spec plan (snapshots)" : "at least 1");
    /* test hook: a spec step that writes no snapshots, so the golden rollback check must fail */
    *mode = !spec ? K_STATE_COMMIT : tuning()->test_skip_snapshot ? K_STATE_NO_WRITE : K_STATE_SNAP;
    return ST_OK;
}

/* ---- shortconv */

struct push_shortconv {
    uint64_t bcx, w, state, y, runs, slots;
    uint32_t H, n_runs, wdtype, n_snap, mode, pad;
};
_Static_assert(sizeof(struct push_shortconv) == 72, "push_shortconv layout");

int k_shortconv(struct gpu *g, struct plan *p, const struct gpu_weight *conv_w, uint64_t bcx,
                const struct k_state *state, uint64_t y, uint64_t runs, int cols, int n_runs, int layer,
                const char *op, struct err *e)
{
    bool spec = p->kind == PLAN_SPEC;
    if (!is_plain_type(conv_w->dtype) || conv_w->k != 3 || conv_w->rows < 1)
        return err_set(e, ST_USAGE, "shortconv %s: conv weight [%lld, %lld] %s, expected [H, 3] F32/F16/BF16", op,
                       (long long)conv_w->rows, (long long)conv_w->k, dtype_name(conv_w->dtype));
    if (n_runs < 1 || n_runs > (int)MAX_GROUPS || cols < n_runs || cols - n_runs >= (int)MAX_GROUPS)
        return err_set(e, ST_USAGE, "shortconv %s: %d runs over %d columns, expected 1..65535 runs of 1..65535 columns",
                       op, n_runs, cols);
    char what[64];
    uint32_t mode = 0;
    snprintf(what, sizeof what, "shortconv %s", op);
    int rc = k_state_mode(p, state, what, &mode, e);
    if (rc) return rc;
    /* the wide kernel takes a workgroup per K_WIDE_CONV_COLS columns of a run: z spans the longest
     * run possible */
    bool wide = p->kind == PLAN_WIDE;
    const struct gpu_pipeline *pipe;
    const uint32_t spec_wide[1] = {K_WIDE_CONV_COLS}; /* the wide kernel's columns an invocation */
    if ((rc = gpu_pipeline(g, wide ? "shortconv_wide" : "shortconv", wide ? spec_wide : NULL, wide ? 1 : 0, &pipe, e)))
        return rc;
    struct push_shortconv pc = {bcx, conv_w->addr, state->addr, y, runs, state->slots, (uint32_t)conv_w->rows,
                                (uint32_t)n_runs, (uint32_t)conv_w->dtype, state->n_snap, mode, 0};
    struct dispatch *d = plan_add(p, pipe, &pc, sizeof pc, div_up((uint64_t)conv_w->rows, 64), (uint32_t)n_runs,
                                  wide ? div_up((uint64_t)(cols - n_runs + 1), K_WIDE_CONV_COLS) : 1);
    dispatch_tag(d, spec ? "shortconv.snap" : wide ? "shortconv.wide" : "shortconv", layer, op, conv_w->bytes);
    dispatch_outputs(d, 2, offsetof(struct push_shortconv, y), offsetof(struct push_shortconv, state));
    return ST_OK;
}

/* ---- an in_proj with its conv in the epilogue (decode): matmul.comp CONV 1 (LFM2's short conv)
 * and CONV 2 (Qwen3.5's DeltaNet conv) */

struct push_matmul_conv {
    struct push_matmul m;
    uint64_t state, conv_w, colmeta, slots;
    uint32_t H, wdtype_snap; /* taps dtype | n_snap << 8 */
    uint32_t K, stride;      /* CONV 2: taps, floats between two state entries */
};
_Static_assert(sizeof(struct push_matmul_conv) == 128, "push_matmul_conv layout");

bool k_conv_fuses(const struct gpu *g, const struct plan *p, const struct gpu_weight *w_in, int cols, int n_runs)
{
    struct sel s = sel_of(g, p);
    struct sel_weight sw = sel_w(w_in);
    return sel_conv_fuses(&s, &sw, cols, n_runs);
}

/* One dispatch of matmul.comp CONV `conv` over w_in: pc's m, conv_w, colmeta, H, K and stride set by
 * the caller, its state (state_off bytes into entry 0 of slot 0), slots and types here; row groups
 * of one channel's three rows (CONV 1: the grid over the H channels) or of the usual rows (CONV 2);
 * the epilogue writes y and the state. */
static int matmul_conv(struct gpu *g, struct plan *p, const struct gpu_weight *w_in, const struct gpu_weight *conv_w,
                       const struct k_state *state, uint64_t state_off, uint32_t conv, struct push_matmul_conv *pc,
                       int cols, int layer, const char *op, const char *what, struct err *e)
{
    uint32_t mode = 0;
    int rc = k_state_mode(p, state, what, &mode, e);
    if (rc) return rc;
    CHECK(mode == K_STATE_COMMIT); /* the epilogue writes the state back into entry cur */
    CHECK(state->n_snap < (1u << 24));
    uint32_t spec[SEL_MATMUL_SPECS];
    struct sel s = sel_of(g, p);
    sel_matmul_spec(&s, false, (uint32_t)cols, w_in->rows, spec);
    if (conv == 1) spec[2] = 3; /* a row group: one channel's B, C and X rows */
    spec[5] = conv;
    uint64_t rows = conv == 1 ? (uint64_t)conv_w->rows : (uint64_t)w_in->rows;
    uint32_t groups = div_up(rows, (SEL_MATMUL_THREADS / spec[1]) * (conv == 1 ? 1 : spec[2]));
    if (groups > MAX_GROUPS)
        return err_set(e, ST_USAGE, "%s: %llu rows need %u workgroups, more than 65535", what,
                       (unsigned long long)rows, groups);
    char name[40], kind[48];
    snprintf(name, sizeof name, "matmul_%s", kind_dtype(w_in->dtype));
    snprintf(kind, sizeof kind, "matmul_%s.%s", conv == 1 ? "shortconv" : "dn_conv", kind_dtype(w_in->dtype));
    const struct gpu_pipeline *pipe;
    if ((rc = gpu_pipeline(g, name, spec, SEL_MATMUL_SPECS, &pipe, e))) return rc;
    pc->state = state->addr + state_off;
    pc->slots = state->slots;
    pc->wdtype_snap = (uint32_t)conv_w->dtype | state->n_snap << 8;
    struct dispatch *d = add(p, pipe, pc, sizeof *pc, groups, 1, kind, layer, op, w_in->bytes + conv_w->bytes);
    dispatch_outputs(d, 2, offsetof(struct push_matmul_conv, m.y), offsetof(struct push_matmul_conv, state));
    return ST_OK;
}

int k_conv_step(struct gpu *g, struct plan *p, const struct gpu_weight *w_in, const struct k_norm *norm, uint64_t x,
                const struct gpu_weight *conv_w, const struct k_state *state, uint64_t bcx, uint64_t y, uint64_t runs,
                uint64_t cols_meta, int cols, int n_runs, int layer, struct err *e)
{
    bool fuse = k_conv_fuses(g, p, w_in, cols, n_runs) && is_plain_type(conv_w->dtype) && conv_w->k == 3 &&
                w_in->rows == 3 * conv_w->rows;
    int rc;
    if (!fuse) {
        if ((rc = k_matmul_norm(g, p, w_in, norm, x, bcx, cols, false, layer, "conv.in_proj", "", e))) return rc;
        return k_shortconv(g, p, conv_w, bcx, state, y, runs, cols, n_runs, layer, "conv.conv", e);
    }
    if ((rc = matmul_check(w_in, NULL, norm, cols, "conv.in_proj", e))) return rc;
    struct push_matmul_conv pc = {.m = matmul_push(w_in, NULL, norm, x, y, false), .conv_w = conv_w->addr,
                                  .colmeta = cols_meta, .H = (uint32_t)conv_w->rows};
    return matmul_conv(g, p, w_in, conv_w, state, 0, 1, &pc, cols, layer, "conv.in_proj", "shortconv conv.conv", e);
}

bool k_dn_conv_fuses(const struct gpu *g, const struct plan *p, const struct gpu_weight *w_qkv, int cols, int n_runs)
{
    return cols <= K_DN_CONV_FUSE_COLS && k_conv_fuses(g, p, w_qkv, cols, n_runs);
}

int k_dn_conv_step(struct gpu *g, struct plan *p, const struct k_dn_geom *dn, const struct gpu_weight *w_qkv,
                   const struct k_norm *norm, uint64_t x, const struct gpu_weight *conv_w, const struct k_state *state,
                   uint64_t y, uint64_t cols_meta, int cols, int n_runs, int layer, struct err *e)
{
    if (!k_dn_conv_fuses(g, p, w_qkv, cols, n_runs))
        return err_set(e, ST_USAGE, "dn.in_proj_qkv: the conv does not fuse into %d columns in %d runs here", cols,
                       n_runs);
    int rc = k_dn_conv_check(dn, conv_w, n_runs, e);
    if (!rc) rc = matmul_check(w_qkv, NULL, norm, cols, "dn.in_proj_qkv", e);
    if (rc) return rc;
    uint64_t C = k_dn_channels(dn);
    if (w_qkv->rows != (int64_t)C)
        return err_set(e, ST_USAGE, "dn.in_proj_qkv: %lld rows, expected the conv's %llu channels",
                       (long long)w_qkv->rows, (unsigned long long)C);
    struct push_matmul_conv pc = {.m = matmul_push(w_qkv, NULL, norm, x, y, false), .conv_w = conv_w->addr,
                                  .colmeta = cols_meta, .H = (uint32_t)C, .K = (uint32_t)dn->conv,
                                  .stride = (uint32_t)(k_dn_state_bytes(dn) / 4)};
    return matmul_conv(g, p, w_qkv, conv_w, state, k_dn_window_offset(dn), 2, &pc, cols, layer, "dn.in_proj_qkv",
                       "dn.conv", e);
}

/* ---- attention */

/* The attention geometry any GPU serves (check_geom adds the device's subgroup size). */
static int check_heads(const struct k_attn_geom *a, struct err *e)
{
    if (a->n_h < 1 || a->n_kv < 1 || a->n_h % a->n_kv)
        return err_set(e, ST_USAGE, "attention: %d q heads and %d kv heads, expected a multiple", a->n_h, a->n_kv);
    if (a->hd < 1 || a->hd > K_MAX_HEAD_DIM || a->hd % 4)
        return err_set(e, ST_USAGE, "attention: head dim %d, expected a multiple of 4 up to %d", a->hd, K_MAX_HEAD_DIM);
    if (a->rope_dims < 0 || a->rope_dims > a->hd || a->rope_dims % 2)
        return err_set(e, ST_USAGE, "attention: rope dims %d, expected even and <= head dim %d", a->rope_dims, a->hd);
    return ST_OK;
}

static int check_geom(const struct gpu *g, const struct k_attn_geom *a, int cols, struct err *e)
{
    uint32_t sg = g->subgroup_size ? g->subgroup_size : 32;
    int rc = check_heads(a, e);
    if (rc) return rc;
    if (a->hd % (int)sg)
        return err_set(e, ST_USAGE, "attention: head dim %d, expected a multiple of the subgroup size %u", a->hd, sg);
    if (cols < 1 || cols > (int)MAX_GROUPS || a->max_blocks < 1)
        return err_set(e, ST_USAGE, "attention: %d columns, %d blocks a slot", cols, a->max_blocks);
    return ST_OK;
}

struct push_attn_prep {
    uint64_t q, k, v, qn, kn, kpool, vpool, btab, cols;
    uint32_t n_h, n_kv, hd, rope_dims, max_blocks, flags, gdtype;
    float eps, r_hi, r_lo;
};
_Static_assert(sizeof(struct push_attn_prep) == 112, "push_attn_prep layout");

/* What attn.prep needs beyond the geometry, checked: flags (1 norm, 2 (1 + g) gains, 4
 * interleaved, 8 gated), the gains' type, r = theta^(-2/rope_dims) as hi + lo floats (the shaders
 * form inv_freq_i = r^i in float-float, rope.glsl) and the gains' bytes. */
struct prep_params {
    uint32_t flags, gdtype;
    float r_hi, r_lo;
    uint64_t qn, kn, bytes;
};

static int prep_params(const struct k_attn_geom *a, const struct gpu_weight *q_norm, const struct gpu_weight *k_norm,
                       struct prep_params *pp, struct err *e)
{
    if (!a->no_norm) {
        int rc;
        if ((rc = check_gain(q_norm, a->hd, "attn.prep q_norm", e)) || (rc = check_gain(k_norm, a->hd, "attn.prep k_norm", e)))
            return rc;
        if (q_norm->dtype != k_norm->dtype)
            return err_set(e, ST_USAGE, "attn.prep: q_norm %s and k_norm %s differ in type", dtype_name(q_norm->dtype),
                           dtype_name(k_norm->dtype));
    }
    double r = a->rope_dims ? pow((double)a->theta, -2.0 / a->rope_dims) : 1.0;
    pp->r_hi = (float)r;
    pp->r_lo = (float)(r - (double)pp->r_hi);
    pp->flags = (a->no_norm ? 0u : 1u) | (a->plus1 ? 2u : 0u) | (a->interleaved ? 4u : 0u) | (a->gated ? 8u : 0u);
    pp->gdtype = a->no_norm ? 0u : (uint32_t)q_norm->dtype;
    pp->qn = a->no_norm ? 0 : q_norm->addr;
    pp->kn = a->no_norm ? 0 : k_norm->addr;
    pp->bytes = a->no_norm ? 0 : q_norm->bytes + k_norm->bytes;
    return ST_OK;
}

int k_attn_prep(struct gpu *g, struct plan *p, const struct k_attn_geom *a, const struct gpu_weight *q_norm,
                const struct gpu_weight *k_norm, uint64_t q, uint64_t k, uint64_t v, uint64_t kpool,
                uint64_t vpool, uint64_t btab, uint64_t cols_meta, int cols, int layer, struct err *e)
{
    struct prep_params pp = {0};
    int rc = check_geom(g, a, cols, e);
    if (!rc) rc = prep_params(a, q_norm, k_norm, &pp, e);
    if (rc) return rc;
    const struct gpu_pipeline *pipe;
    if ((rc = gpu_pipeline(g, "attn_prep", NULL, 0, &pipe, e))) return rc;
    struct push_attn_prep pc = {
        q, k, v, pp.qn, pp.kn, kpool, vpool, btab, cols_meta,
        (uint32_t)a->n_h, (uint32_t)a->n_kv, (uint32_t)a->hd, (uint32_t)a->rope_dims, (uint32_t)a->max_blocks,
        pp.flags, pp.gdtype, a->eps, pp.r_hi, pp.r_lo,
    };
    /* groups of 256 / (hd / 4) heads (attn_prep.comp) */
    uint32_t hpw = 256u / ((uint32_t)a->hd / 4u);
    struct dispatch *d = add(p, pipe, &pc, sizeof pc, div_up((uint64_t)(a->n_h + 2 * a->n_kv), hpw), (uint32_t)cols,
                             "attn.prep", layer, "attn.prep", pp.bytes);
    dispatch_outputs(d, 3, offsetof(struct push_attn_prep, q), offsetof(struct push_attn_prep, kpool),
                     offsetof(struct push_attn_prep, vpool));
    return ST_OK;
}

struct push_attention {
    uint64_t q, kpool, vpool, btab, cols, dst;
    uint32_t n_h, n_kv, max_blocks;
    float scale;
    uint32_t gated, kper; /* kper: attn_kv.comp's keys a split (0 elsewhere) */
};
_Static_assert(sizeof(struct push_attention) == 72, "push_attention layout");

/* attention.comp's and attn_kv.comp's block: the above, then the fused prep's fields (zero
 * without it), then attn_kv.comp's splits' partial outputs */
struct push_attn_decode {
    struct push_attention a;
    uint64_t k, v, qn, kn;
    uint32_t pflags; /* prep flags | gains' dtype << 4 | rope_dims << 8 */
    float eps, r_hi, r_lo;
    uint64_t part;
};
_Static_assert(sizeof(struct push_attn_decode) == 128, "push_attn_decode layout");

struct push_attn_merge {
    uint64_t part, q, dst;
    uint32_t n_h, nspl, gated, cols;
};
_Static_assert(sizeof(struct push_attn_merge) == 40, "push_attn_merge layout");

/* KV-pool bytes one key costs an attention dispatch: its k and v rows (f32) of every kv head. */
static uint64_t attn_key_bytes(const struct k_attn_geom *a)
{
    return 2ull * (uint64_t)a->n_kv * (uint64_t)a->hd * 4;
}

/* ---- attention tiled over queries × keys (the wide plan's prefill) */

struct push_attn_prefill {
    struct push_attention a;
    uint32_t n_cols, pad;
};
_Static_assert(sizeof(struct push_attn_prefill) == 80, "push_attn_prefill layout");

static int attention_tiled(struct gpu *g, struct plan *p, const struct k_attn_geom *a,
                           const struct push_attention *base, int cols, int layer, struct err *e)
{
    uint32_t hd = (uint32_t)a->hd, bq = 0, nt = 0, kv2 = 0;
    uint64_t need = 0;
    struct sel s = sel_of(g, p);
    if (!sel_attn_prefill_tile(&s, hd, cols, &bq, &nt, &kv2, &need))
        return err_set(e, ST_USAGE,
                       "attn.prefill: head dim %d: no tile of 8..64 columns fits %u bytes of shared memory and %u "
                       "threads (8 columns need %llu bytes)",
                       a->hd, g->shared_mem, nt, (unsigned long long)need);
    uint32_t spec[4] = {hd, bq, nt, kv2};
    const struct gpu_pipeline *pipe;
    int rc = gpu_pipeline(g, "attn_prefill", spec, 4, &pipe, e);
    if (rc) return rc;
    struct push_attn_prefill pc = {*base, (uint32_t)cols, 0};
    struct dispatch *d = add(p, pipe, &pc, sizeof pc, div_up((uint64_t)cols, bq), (uint32_t)a->n_h,
                             a->gated ? "attn.gated.prefill" : "attn.prefill", layer, "attn", 0);
    d->kv_key_bytes = attn_key_bytes(a);
    dispatch_outputs(d, 1, offsetof(struct push_attention, dst));
    return ST_OK;
}

/* The KV bytes and outputs of an attention.comp / attn_kv.comp dispatch: its output at push offset
 * `out`, and with the prep fused the two pools it writes k and v into. */
static void attn_decode_outputs(struct dispatch *d, const struct k_attn_geom *a, bool fused, size_t out)
{
    d->kv_key_bytes = attn_key_bytes(a);
    if (fused)
        dispatch_outputs(d, 3, out, offsetof(struct push_attn_decode, a.kpool), offsetof(struct push_attn_decode, a.vpool));
    else
        dispatch_outputs(d, 1, out);
}

/* attention.comp, a workgroup per (q head, column) whose subgroups walk every NSG-th key one at a
 * time (fused: with the prep, PREP = 1). */
static int attention_by_q_head(struct gpu *g, struct plan *p, const struct k_attn_geom *a,
                               const struct push_attn_decode *pc, int cols, const char *kind, bool fused,
                               uint64_t bytes, int layer, struct err *e)
{
    struct sel s = sel_of(g, p);
    uint32_t sg = g->subgroup_size ? g->subgroup_size : 32, nsg = sel_attn_q_subgroups(&s, (uint32_t)a->hd, fused);
    uint32_t spec[5] = {sg, (uint32_t)a->hd, nsg, sg * nsg, fused};
    const struct gpu_pipeline *pipe;
    int rc = gpu_pipeline(g, "attention", spec, 5, &pipe, e);
    if (rc) return rc;
    struct dispatch *d = add(p, pipe, pc, sizeof *pc, (uint32_t)a->n_h, (uint32_t)cols, kind, layer, "attn", bytes);
    attn_decode_outputs(d, a, fused, offsetof(struct push_attn_decode, a.dst));
    return ST_OK;
}

/* Attention outside the wide plan's prefill: by kv head where sel_attn_by_kv_head says (attn_kv.comp,
 * a workgroup per (kv head, column, key split), its splits merged by attn_merge.comp), else
 * attention.comp (above), which measured faster at short contexts and narrow steps, or where the kv
 * head's group would not fit the shared memory. */
static int attention_decode(struct gpu *g, struct plan *p, const struct k_attn_geom *a, struct push_attn_decode *pc,
                            int cols, bool prefill, bool fused, uint64_t bytes, int layer, struct err *e)
{
    const char *kind = fused ? (a->gated ? "attn.gated.decode_prep" : "attn.decode_prep")
                             : a->gated ? (prefill ? "attn.gated.prefill" : "attn.gated.decode")
                                        : (prefill ? "attn.prefill" : "attn.decode");
    uint32_t keys = (uint32_t)a->max_blocks * K_KV_BLOCK;
    if (!sel_attn_by_kv_head(&g->tune, (int)a->hd, keys, cols, prefill))
        return attention_by_q_head(g, p, a, pc, cols, kind, fused, bytes, layer, e);
    struct sel s = sel_of(g, p);
    uint32_t sg = g->subgroup_size ? g->subgroup_size : 32, hd = (uint32_t)a->hd, gq = (uint32_t)(a->n_h / a->n_kv);
    uint32_t nt = sel_attn_kv_threads(&s, hd, gq, fused);
    if (!nt) /* a group too large for the device's shared memory */
        return attention_by_q_head(g, p, a, pc, cols, kind, fused, bytes, layer, e);
    uint32_t n_kv = (uint32_t)a->n_kv;
    uint32_t nspl = sel_attn_splits(&g->tune, keys, n_kv * (uint32_t)cols, nt), kper = 0;
    if (nspl > 1) {
        kper = div_up(div_up(keys, nspl), K_KV_BLOCK) * K_KV_BLOCK;
        nspl = div_up(keys, kper);
    }
    if ((uint64_t)n_kv * nspl > MAX_GROUPS)
        return err_set(e, ST_USAGE, "attention: %u kv heads × %u key splits pass %u workgroups", n_kv, nspl,
                       (unsigned)MAX_GROUPS);
    if (nspl > 1) {
        uint64_t part = (uint64_t)cols * (uint64_t)a->n_h * nspl * (hd + 2) * 4;
        int rc = dev_scratch(g, &g->attn_part, part, &pc->part, e);
        if (rc) return rc;
        pc->a.kper = kper;
    }
    uint32_t spec[6] = {sg, hd, gq, nt, fused, nspl > 1};
    const struct gpu_pipeline *pipe;
    int rc = gpu_pipeline(g, "attn_kv", spec, 6, &pipe, e);
    if (rc) return rc;
    struct dispatch *d = add(p, pipe, pc, sizeof *pc, n_kv * nspl, (uint32_t)cols, kind, layer, "attn", bytes);
    attn_decode_outputs(d, a, fused,
                        nspl > 1 ? offsetof(struct push_attn_decode, part) : offsetof(struct push_attn_decode, a.dst));
    if (nspl == 1) return ST_OK;
    uint32_t mspec[1] = {hd};
    if ((rc = gpu_pipeline(g, "attn_merge", mspec, 1, &pipe, e))) return rc;
    struct push_attn_merge pm = {pc->part, pc->a.q, pc->a.dst, (uint32_t)a->n_h, nspl, a->gated, (uint32_t)cols};
    d = add(p, pipe, &pm, sizeof pm, (uint32_t)a->n_h, (uint32_t)cols, a->gated ? "attn.gated.merge" : "attn.merge",
            layer, "attn", 0);
    dispatch_outputs(d, 1, offsetof(struct push_attn_merge, dst));
    return ST_OK;
}

static struct push_attention attention_push(const struct k_attn_geom *a, uint64_t q, uint64_t kpool, uint64_t vpool,
                                            uint64_t btab, uint64_t cols_meta, uint64_t out)
{
    return (struct push_attention){q, kpool, vpool, btab, cols_meta, out, (uint32_t)a->n_h, (uint32_t)a->n_kv,
                                   (uint32_t)a->max_blocks, a->scale, a->gated, 0};
}

int k_attention(struct gpu *g, struct plan *p, const struct k_attn_geom *a, uint64_t q, uint64_t kpool,
                uint64_t vpool, uint64_t btab, uint64_t cols_meta, uint64_t out, int cols, bool prefill,
                int layer, struct err *e)
{
    int rc = check_geom(g, a, cols, e);
    if (rc) return rc;
    struct push_attention pc = attention_push(a, q, kpool, vpool, btab, cols_meta, out);
    if (prefill && p->kind == PLAN_WIDE) return attention_tiled(g, p, a, &pc, cols, layer, e);
    struct push_attn_decode pd = {.a = pc};
    return attention_decode(g, p, a, &pd, cols, prefill, false, 0, layer, e);
}

int k_attn_step(struct gpu *g, struct plan *p, const struct k_attn_geom *a, const struct gpu_weight *q_norm,
                const struct gpu_weight *k_norm, uint64_t q, uint64_t k, uint64_t v, uint64_t kpool, uint64_t vpool,
                uint64_t btab, uint64_t cols_meta, uint64_t out, int cols, int n_runs, bool prefill, int layer,
                struct err *e)
{
    if (n_runs != cols || p->kind == PLAN_SPEC) {
        int rc = k_attn_prep(g, p, a, q_norm, k_norm, q, k, v, kpool, vpool, btab, cols_meta, cols, layer, e);
        if (rc) return rc;
        return k_attention(g, p, a, q, kpool, vpool, btab, cols_meta, out, cols, prefill, layer, e);
    }
    struct prep_params pp = {0};
    int rc = check_geom(g, a, cols, e);
    if (!rc) rc = prep_params(a, q_norm, k_norm, &pp, e);
    if (rc) return rc;
    struct push_attn_decode pd = {
        .a = attention_push(a, q, kpool, vpool, btab, cols_meta, out),
        .k = k, .v = v, .qn = pp.qn, .kn = pp.kn, .pflags = pp.flags | pp.gdtype << 4 | (uint32_t)a->rope_dims << 8,
        .eps = a->eps, .r_hi = pp.r_hi, .r_lo = pp.r_lo,
    };
    return attention_decode(g, p, a, &pd, cols, prefill, true, pp.bytes, layer, e);
}

/* ---- winit */

struct push_winit {
    uint64_t w;
    uint32_t rows, k, seed, tensor, dtype, mode;
    float a, b;
};
_Static_assert(sizeof(struct push_winit) == 40, "push_winit layout");

int k_winit(struct gpu *g, struct plan *p, const struct gpu_weight *w, uint32_t seed, uint32_t tensor,
            enum winit_mode mode, float a, float b, struct err *e)
{
    uint64_t n = (uint64_t)w->rows * (uint64_t)w->k;
    if (!is_weight_type(w->dtype) || w->rows < 1 || w->k < 1 || n > UINT32_MAX ||
        (is_quant_type(w->dtype) && w->k % 32))
        return err_set(e, ST_USAGE,
                       "winit: weight [%lld, %lld] %s: expected a weight type, < 2^32 elements, k %% 32 == 0 for Q types",
                       (long long)w->rows, (long long)w->k, dtype_name(w->dtype));
    const struct gpu_pipeline *pipe;
    int rc = gpu_pipeline(g, "winit", NULL, 0, &pipe, e);
    if (rc) return rc;
    uint32_t groups = div_up(div_up(n, 32), 64);
    uint32_t gx = MIN(groups, MAX_GROUPS), gy = div_up(groups, gx);
    struct push_winit pc = {w->addr, (uint32_t)w->rows, (uint32_t)w->k, seed, tensor, (uint32_t)w->dtype,
                            (uint32_t)mode, a, b};
    dispatch_outputs(add(p, pipe, &pc, sizeof pc, gx, gy, "winit", -1, "winit", 0), 1,
                     offsetof(struct push_winit, w));
    return ST_OK;
}

/* ---- shapes served, before the GPU opens */

/* Roles whose weight is a matrix product's (k = shape[1], torch order [rows, k]). */
static bool is_matrix_role(int layer, int role, const struct model_desc *d, const struct shard *s)
{
    if (layer < 0) return role == G_HEAD || (role == G_EMBED && d->tied && s->last);
    switch ((enum wrole)role) {
    case W_FFN_GATE: case W_FFN_UP: case W_FFN_DOWN: case W_FFN_GATE_UP:
    case W_Q: case W_K: case W_V: case W_O:
    case W_CONV_IN: case W_CONV_OUT:
    case W_DN_QKV: case W_DN_Z: case W_DN_B: case W_DN_A: case W_DN_OUT:
        return true;
    default:
        return false;
    }
}

static int model_shape_check(const struct model_desc *d, const struct shard *s, struct err *e)
{
    bool attn = false, dn = false;
    for (int l = s->a; l < s->b; l++) {
        attn |= d->kind[l] == LAYER_ATTN;
        dn |= d->kind[l] == LAYER_DELTANET;
    }
    struct k_attn_geom a = {.n_h = d->n_heads, .n_kv = d->n_kv_heads, .hd = d->head_dim, .rope_dims = d->rope_dims};
    int rc = attn ? check_heads(&a, e) : ST_OK;
    if (rc) return rc;
    struct k_dn_geom g = {.nk = d->dn_nk, .nv = d->dn_nv, .dk = d->dn_dk, .dv = d->dn_dv, .conv = d->dn_conv};
    if (dn && (rc = k_dn_shape_check(&g, e))) return rc;
    for (int i = 0; i < s->n; i++) {
        const struct shard_tensor *t = &s->t[i];
        if (t->n_dims != 2 || !is_matrix_role(t->layer, t->role, d, s)) continue;
        if (!is_weight_type(t->dtype))
            return err_set(e, ST_USAGE, "matmul %s: weight type %s is not served", t->name, dtype_name(t->dtype));
        if (!matmul_k_served(t->dtype, t->shape[1]))
            return err_set(e, ST_USAGE, "matmul %s: weight [%lld, %lld] of type %s: k must be a multiple of %lld",
                           t->name, (long long)t->shape[0], (long long)t->shape[1], dtype_name(t->dtype),
                           (long long)sel_slot_elems(t->dtype));
    }
    return ST_OK;
}

int k_model_check(const struct model_desc *d, const struct shard *s, struct err *e)
{
    struct err ke = {{0}};
    int rc = model_shape_check(d, s, &ke);
    if (rc) return err_set(e, rc, "%s: %s (the kernels cannot run this model)", d->source, ke.msg);
    return ST_OK;
}
