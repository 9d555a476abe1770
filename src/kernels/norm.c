/* norm.c - host side of the embedding, RMSNorm and weight-init kernels (embed.comp, rmsnorm.comp,
 * winit.comp): pipeline, push constants, groups. */
#include "kernels_priv.h"

#include <stddef.h>

/* ---- embed */

struct push_embed {
    uint64_t table, cols, dst;
    uint32_t dim, rows, dtype, n_cols;
};
_Static_assert(sizeof(struct push_embed) == 40, "push_embed layout");

int k_embed(struct gpu *g, struct plan *p, const struct gpu_weight *table, uint64_t cols_meta, uint64_t out,
            int cols, struct err *e)
{
    if (!k_is_weight_type(table->dtype) || cols < 1 || cols > (int)MAX_GROUPS || table->k < 1)
        return err_set(e, ST_USAGE, "embed: table type %s, %d columns: expected a weight type and 1..65535 columns",
                       dtype_name(table->dtype), cols);
    const struct gpu_pipeline *pipe;
    int rc = gpu_pipeline(g, "embed", NULL, 0, &pipe, e);
    if (rc) return rc;
    struct push_embed pc = {table->addr, cols_meta, out, (uint32_t)table->k, (uint32_t)table->rows,
                            (uint32_t)table->dtype, (uint32_t)cols};
    char kind[40];
    snprintf(kind, sizeof kind, "embed.%s", k_kind_dtype(table->dtype));
    struct dispatch *d = k_add(p, pipe, &pc, sizeof pc, k_div_up((uint64_t)table->k, 256), (uint32_t)cols, kind, -1,
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
    int rc = k_check_gain(w, w ? w->rows * w->k : 0, kind, e);
    if (rc) return rc;
    if (n_rows < 1 || n_rows > (int)MAX_GROUPS)
        return err_set(e, ST_USAGE, "%s %s: %d rows, expected 1..65535", kind, op, n_rows);
    const struct gpu_pipeline *pipe;
    if ((rc = gpu_pipeline(g, "rmsnorm", NULL, 0, &pipe, e))) return rc;
    struct push_rmsnorm pc = {x, y, w->addr, idx, (uint32_t)(w->rows * w->k), (uint32_t)w->dtype, eps,
                              (plus1 ? 1u : 0u) | (accumulate ? 2u : 0u)};
    struct dispatch *d = k_add(p, pipe, &pc, sizeof pc, (uint32_t)n_rows, 1, kind, layer, op, w->bytes);
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
    if (!k_is_weight_type(w->dtype) || w->rows < 1 || w->k < 1 || n > UINT32_MAX ||
        (k_is_quant_type(w->dtype) && w->k % 32))
        return err_set(e, ST_USAGE,
                       "winit: weight [%lld, %lld] %s: expected a weight type, < 2^32 elements, k %% 32 == 0 for Q types",
                       (long long)w->rows, (long long)w->k, dtype_name(w->dtype));
    const struct gpu_pipeline *pipe;
    int rc = gpu_pipeline(g, "winit", NULL, 0, &pipe, e);
    if (rc) return rc;
    uint32_t groups = k_div_up(k_div_up(n, 32), 64);
    uint32_t gx = MIN(groups, MAX_GROUPS), gy = k_div_up(groups, gx);
    struct push_winit pc = {w->addr, (uint32_t)w->rows, (uint32_t)w->k, seed, tensor, (uint32_t)w->dtype,
                            (uint32_t)mode, a, b};
    dispatch_outputs(k_add(p, pipe, &pc, sizeof pc, gx, gy, "winit", -1, "winit", 0), 1,
                     offsetof(struct push_winit, w));
    return ST_OK;
}
