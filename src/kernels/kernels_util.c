/* kernels_util.c - the helpers every kernel's file shares: appending a tagged dispatch, checking a
 * gain weight. */
#include "kernels_priv.h"

/* ---- shared helpers */

/* Appends one dispatch and tags it; the caller declares its outputs (dispatch_outputs). */
struct dispatch *k_add(struct plan *p, const struct gpu_pipeline *pipe, const void *push, uint32_t push_size,
                       uint32_t gx, uint32_t gy, const char *kind, int layer, const char *op, uint64_t bytes)
{
    struct dispatch *d = plan_add(p, pipe, push, push_size, gx, gy, 1);
    dispatch_tag(d, kind, layer, op, bytes);
    return d;
}

/* A 1-D weight (gain) of a plain type and length n. */
int k_check_gain(const struct gpu_weight *w, int64_t n, const char *what, struct err *e)
{
    if (!w || !w->addr) return err_set(e, ST_USAGE, "%s: no gain weight given", what);
    if (!k_is_plain_type(w->dtype))
        return err_set(e, ST_USAGE, "%s: gain of type %s, expected F32, F16 or BF16", what, dtype_name(w->dtype));
    if (w->rows * w->k != n)
        return err_set(e, ST_USAGE, "%s: gain has %lld elements, expected %lld", what, (long long)(w->rows * w->k),
                       (long long)n);
    return ST_OK;
}
