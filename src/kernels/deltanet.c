/* deltanet.c - host side of the Gated DeltaNet kernels (Qwen3.5): the conv with its
 * window, the gated delta rule, the gated output norm. Push structs mirror the shaders' blocks. */
#include <stddef.h>
#include <math.h>
#include <stdio.h>

#include "kernels.h"

#define DN_MAX_TAPS 8   /* dn_conv.comp's KMAX */
#define DN_MAX_DK 256   /* dk / DN_LANES state rows a lane of dn_recurrent.comp keeps in registers */
#define DN_LANES 4      /* dn_recurrent.comp's DKS: lanes sharing one state column */

static bool plain(enum dtype t) { return t == DT_F32 || t == DT_F16 || t == DT_BF16; }

static struct dispatch *add(struct plan *p, const struct gpu_pipeline *pipe, const void *push, uint32_t push_size,
                            uint32_t gx, uint32_t gy, const char *kind, int layer, const char *op, uint64_t bytes)
{
    struct dispatch *d = plan_add(p, pipe, push, push_size, gx, gy, 1);
    dispatch_tag(d, kind, layer, op, bytes);
    return d;
}

uint64_t k_dn_channels(const struct k_dn_geom *dn)
{
    return 2 * (uint64_t)dn->nk * (uint64_t)dn->dk + (uint64_t)dn->nv * (uint64_t)dn->dv;
}

uint64_t k_dn_window_offset(const struct k_dn_geom *dn)
{
    return (uint64_t)dn->nv * (uint64_t)dn->dk * (uint64_t)dn->dv * 4;
}

uint64_t k_dn_state_bytes(const struct k_dn_geom *dn)
{
    return k_dn_window_offset(dn) + (uint64_t)(dn->conv - 1) * k_dn_channels(dn) * 4;
}

/* Geometry the kernels serve; slot_stride in floats must fit a u32. */
static int check_dn(const struct k_dn_geom *dn, int n_runs, const char *what, struct err *e)
{
    if (dn->nk < 1 || dn->nv < 1 || dn->nv % dn->nk)
        return err_set(e, ST_USAGE, "%s: %d value heads, %d key heads: expected a multiple", what, dn->nv, dn->nk);
    if (dn->dk < 1 || dn->dk > DN_MAX_DK || dn->dv < 1 || dn->conv < 1 || dn->conv > DN_MAX_TAPS)
        return err_set(e, ST_USAGE, "%s: head dims %d/%d and %d conv taps, expected dk <= %d and 1..%d taps", what,
                       dn->dk, dn->dv, dn->conv, DN_MAX_DK, DN_MAX_TAPS);
    if (k_dn_state_bytes(dn) / 4 > UINT32_MAX)
        return err_set(e, ST_USAGE, "%s: state of %llu bytes a slot is too large", what,
                       (unsigned long long)k_dn_state_bytes(dn));
    if (n_runs < 1 || n_runs > 65535) return err_set(e, ST_USAGE, "%s: %d runs, expected 1..65535", what, n_runs);
    return ST_OK;
}

int k_dn_shape_check(const struct k_dn_geom *dn, struct err *e)
{
    int rc = check_dn(dn, 1, "deltanet", e);
    if (!rc && dn->dk % DN_LANES)
        rc = err_set(e, ST_USAGE, "dn.recurrent: key head dim %d, expected a multiple of %d", dn->dk, DN_LANES);
    return rc;
}

/* ---- dn.conv */

struct push_dn_conv {
    uint64_t x, w, window, y, runs, slots;
    uint32_t C, K, n_runs, wdtype, stride, n_snap, mode, pad;
};
_Static_assert(sizeof(struct push_dn_conv) == 80, "push_dn_conv layout");

int k_dn_conv_check(const struct k_dn_geom *dn, const struct gpu_weight *conv_w, int n_runs, struct err *e)
{
    int rc = check_dn(dn, n_runs, "dn.conv", e);
    if (rc) return rc;
    uint64_t C = k_dn_channels(dn);
    if (!plain(conv_w->dtype) || conv_w->rows != (int64_t)C || conv_w->k != dn->conv)
        return err_set(e, ST_USAGE, "dn.conv: conv weight [%lld, %lld] %s, expected [%llu, %d] F32/F16/BF16",
                       (long long)conv_w->rows, (long long)conv_w->k, dtype_name(conv_w->dtype),
                       (unsigned long long)C, dn->conv);
    return ST_OK;
}

int k_dn_conv(struct gpu *g, struct plan *p, const struct k_dn_geom *dn, const struct gpu_weight *conv_w, uint64_t x,
              const struct k_state *state, uint64_t y, uint64_t runs, int cols, int n_runs, int layer, struct err *e)
{
    uint32_t mode = 0;
    int rc = k_dn_conv_check(dn, conv_w, n_runs, e);
    if (!rc) rc = k_state_mode(p, state, "dn.conv", &mode, e);
    if (rc) return rc;
    if (cols < n_runs || cols - n_runs >= 65535)
        return err_set(e, ST_USAGE, "dn.conv: %d runs over %d columns, expected runs of 1..65535 columns", n_runs, cols);
    uint64_t C = k_dn_channels(dn);
    /* the wide plan's kernel takes a workgroup per K_WIDE_CONV_COLS columns of a run: z spans the
     * longest run possible (as shortconv.wide); batch and spec plans walk a run's columns in one
     * invocation */
    bool wide = p->kind == PLAN_WIDE;
    const struct gpu_pipeline *pipe;
    const uint32_t spec[1] = {K_WIDE_CONV_COLS}; /* the wide kernel's columns an invocation */
    if ((rc = gpu_pipeline(g, wide ? "dn_conv_wide" : "dn_conv", spec, 1, &pipe, e))) return rc;
    struct push_dn_conv pc = {x, conv_w->addr, state->addr + k_dn_window_offset(dn), y, runs, state->slots,
                              (uint32_t)C, (uint32_t)dn->conv, (uint32_t)n_runs, (uint32_t)conv_w->dtype,
                              (uint32_t)(k_dn_state_bytes(dn) / 4), state->n_snap, mode, 0};
    struct dispatch *d = plan_add(p, pipe, &pc, sizeof pc, (uint32_t)((C + 63) / 64), (uint32_t)n_runs,
                                  wide ? (uint32_t)((cols - n_runs + K_WIDE_CONV_COLS) / K_WIDE_CONV_COLS) : 1);
    dispatch_tag(d, p->kind == PLAN_SPEC ? "dn.conv.snap" : wide ? "dn.conv.wide" : "dn.conv", layer, "dn.conv",
                 conv_w->bytes);
    dispatch_flops(d, k_conv_flops((int64_t)C, dn->conv, cols), 1);
    dispatch_outputs(d, 2, offsetof(struct push_dn_conv, y), offsetof(struct push_dn_conv, window));
    return ST_OK;
}

/* dt_bias and A_log (or ssm_a) of the delta rule: nv plain values each. */
static int check_gates(const struct k_dn_geom *dn, const struct gpu_weight *dt, const struct gpu_weight *a_log,
                       const char *what, struct err *e)
{
    if (!plain(dt->dtype) || !plain(a_log->dtype) || dt->rows * dt->k != dn->nv || a_log->rows * a_log->k != dn->nv)
        return err_set(e, ST_USAGE, "%s: dt_bias (%lld, %s) and A (%lld, %s): expected %d values each, "
                       "F32/F16/BF16", what, (long long)(dt->rows * dt->k), dtype_name(dt->dtype),
                       (long long)(a_log->rows * a_log->k), dtype_name(a_log->dtype), dn->nv);
    return ST_OK;
}

/* ---- dn.recurrent */

struct push_dn_recurrent {
    uint64_t qkv, b, a, dt, A, state, o, runs, slots;
    uint32_t nk, nv, n_runs, stride, flags, dtdtype, adtype;
    float scale;
    uint32_t n_snap, mode;
};
_Static_assert(sizeof(struct push_dn_recurrent) == 112, "push_dn_recurrent layout");

int k_dn_recurrent(struct gpu *g, struct plan *p, const struct k_dn_geom *dn, const struct gpu_weight *dt,
                   const struct gpu_weight *a_log, uint64_t qkv, uint64_t b, uint64_t a,
                   const struct k_state *state, uint64_t o, uint64_t runs, int n_runs, int layer, struct err *e)
{
    uint32_t mode = 0;
    int rc = check_dn(dn, n_runs, "dn.recurrent", e);
    if (!rc) rc = k_state_mode(p, state, "dn.recurrent", &mode, e);
    if (rc) return rc;
    if ((rc = check_gates(dn, dt, a_log, "dn.recurrent", e))) return rc;
    /* DN_LANES lanes share a state column (a quarter of dk in registers each); a workgroup owns
     * TILE columns, the largest power of two up to 64 / DN_LANES dividing dv */
    uint32_t sg = g->subgroup_size ? g->subgroup_size : 32, tile = 64 / DN_LANES;
    if (dn->dk % DN_LANES || sg % DN_LANES)
        return err_set(e, ST_USAGE, "dn.recurrent: key head dim %d and subgroup size %u must be multiples of %d",
                       dn->dk, sg, DN_LANES);
    while (tile > 1 && dn->dv % (int)tile) tile /= 2;
    uint32_t spec[3] = {(uint32_t)dn->dk, (uint32_t)dn->dv, DN_LANES * tile};
    const struct gpu_pipeline *pipe;
    if ((rc = gpu_pipeline(g, "dn_recurrent", spec, 3, &pipe, e))) return rc;
    struct push_dn_recurrent pc = {
        qkv, b, a, dt->addr, a_log->addr, state->addr, o, runs, state->slots, (uint32_t)dn->nk, (uint32_t)dn->nv,
        (uint32_t)n_runs, (uint32_t)(k_dn_state_bytes(dn) / 4), dn->gguf ? 3u : 0u, (uint32_t)dt->dtype,
        (uint32_t)a_log->dtype, (float)(1.0 / sqrt((double)dn->dk)), state->n_snap, mode,
    };
    uint32_t gx = (uint32_t)dn->nv * ((uint32_t)dn->dv / tile);
    struct dispatch *d = add(p, pipe, &pc, sizeof pc, gx, (uint32_t)n_runs,
                             p->kind == PLAN_SPEC ? "dn.recurrent.snap" : "dn.recurrent", layer, "dn.delta_rule",
                             dt->bytes + a_log->bytes);
    dispatch_outputs(d, 2, offsetof(struct push_dn_recurrent, o), offsetof(struct push_dn_recurrent, state));
    return ST_OK;
}

/* ---- dn.norm_gate: rmsnorm.comp's GATED variant over rows of dv */

struct push_dn_norm_gate {
    uint64_t x, y, w, idx;
    uint32_t dim, wdtype;
    float eps;
    uint32_t plus1;
    uint64_t z;
};
_Static_assert(sizeof(struct push_dn_norm_gate) == 56, "push_dn_norm_gate layout");

int k_dn_norm_gate(struct gpu *g, struct plan *p, const struct k_dn_geom *dn, const struct gpu_weight *w, uint64_t o,
                   uint64_t z, int cols, float eps, int layer, struct err *e)
{
    uint64_t rows = (uint64_t)cols * (uint64_t)dn->nv;
    if (!plain(w->dtype) || w->rows * w->k != dn->dv)
        return err_set(e, ST_USAGE, "dn.norm_gate: gain of %lld %s, expected %d F32/F16/BF16",
                       (long long)(w->rows * w->k), dtype_name(w->dtype), dn->dv);
    if (cols < 1 || rows > 65535)
        return err_set(e, ST_USAGE, "dn.norm_gate: %d columns x %d heads, expected 1..65535 rows", cols, dn->nv);
    const struct gpu_pipeline *pipe;
    int rc = gpu_pipeline(g, "rmsnorm_gated", NULL, 0, &pipe, e);
    if (rc) return rc;
    struct push_dn_norm_gate pc = {o, o, w->addr, 0, (uint32_t)dn->dv, (uint32_t)w->dtype, eps, 0, z};
    struct dispatch *d = add(p, pipe, &pc, sizeof pc, (uint32_t)rows, 1, "dn.norm_gate", layer, "dn.norm_gate", w->bytes);
    dispatch_outputs(d, 1, offsetof(struct push_dn_norm_gate, y));
    return ST_OK;
}
