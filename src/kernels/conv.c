/* conv.c - host side of LFM2's short conv: how a kernel writes the recurrent state, the conv
 * kernel (shortconv.comp) and an in_proj with its conv in the epilogue (matmul.comp CONV 1, also
 * serving the Gated DeltaNet conv). */
#include "kernels_priv.h"

#include <stddef.h>
#include <stdio.h>

#include "tuning.h"

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
    if (!k_is_plain_type(conv_w->dtype) || conv_w->k != 3 || conv_w->rows < 1)
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
    struct dispatch *d = plan_add(p, pipe, &pc, sizeof pc, k_div_up((uint64_t)conv_w->rows, 64), (uint32_t)n_runs,
                                  wide ? k_div_up((uint64_t)(cols - n_runs + 1), K_WIDE_CONV_COLS) : 1);
    dispatch_tag(d, spec ? "shortconv.snap" : wide ? "shortconv.wide" : "shortconv", layer, op, conv_w->bytes);
    dispatch_flops(d, k_conv_flops(conv_w->rows, (int)conv_w->k, cols), 1);
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
    struct sel s = k_sel_of(g, p);
    struct sel_weight sw = k_sel_w(w_in);
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
    struct sel s = k_sel_of(g, p);
    sel_matmul_spec(&s, false, (uint32_t)cols, w_in->rows, spec);
    if (conv == 1) spec[2] = 3; /* a row group: one channel's B, C and X rows */
    spec[5] = conv;
    uint64_t rows = conv == 1 ? (uint64_t)conv_w->rows : (uint64_t)w_in->rows;
    uint32_t groups = k_div_up(rows, (SEL_MATMUL_THREADS / spec[1]) * (conv == 1 ? 1 : spec[2]));
    if (groups > MAX_GROUPS)
        return err_set(e, ST_USAGE, "%s: %llu rows need %u workgroups, more than 65535", what,
                       (unsigned long long)rows, groups);
    char name[40], kind[48];
    snprintf(name, sizeof name, "matmul_%s", k_kind_dtype(w_in->dtype));
    snprintf(kind, sizeof kind, "matmul_%s.%s", conv == 1 ? "shortconv" : "dn_conv", k_kind_dtype(w_in->dtype));
    const struct gpu_pipeline *pipe;
    if ((rc = gpu_pipeline(g, name, spec, SEL_MATMUL_SPECS, &pipe, e))) return rc;
    pc->state = state->addr + state_off;
    pc->slots = state->slots;
    pc->wdtype_snap = (uint32_t)conv_w->dtype | state->n_snap << 8;
    struct dispatch *d = k_add(p, pipe, pc, sizeof *pc, groups, 1, kind, layer, op, w_in->bytes + conv_w->bytes);
    dispatch_flops(d, k_product_flops(w_in->rows, w_in->k, cols, false) + k_conv_flops(conv_w->rows, (int)conv_w->k, cols),
                   1);
    dispatch_outputs(d, 2, offsetof(struct push_matmul_conv, m.y), offsetof(struct push_matmul_conv, state));
    return ST_OK;
}

int k_conv_step(struct gpu *g, struct plan *p, const struct gpu_weight *w_in, const struct k_norm *norm, uint64_t x,
                const struct gpu_weight *conv_w, const struct k_state *state, uint64_t bcx, uint64_t y, uint64_t runs,
                uint64_t cols_meta, int cols, int n_runs, int layer, struct err *e)
{
    bool fuse = k_conv_fuses(g, p, w_in, cols, n_runs) && k_is_plain_type(conv_w->dtype) && conv_w->k == 3 &&
                w_in->rows == 3 * conv_w->rows;
    int rc;
    if (!fuse) {
        if ((rc = k_matmul_norm(g, p, w_in, norm, x, bcx, cols, false, layer, "conv.in_proj", "", e))) return rc;
        return k_shortconv(g, p, conv_w, bcx, state, y, runs, cols, n_runs, layer, "conv.conv", e);
    }
    if ((rc = k_matmul_check(w_in, NULL, norm, cols, "conv.in_proj", e))) return rc;
    struct push_matmul_conv pc = {.m = k_matmul_push(w_in, NULL, norm, x, y, false), .conv_w = conv_w->addr,
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
    if (!rc) rc = k_matmul_check(w_qkv, NULL, norm, cols, "dn.in_proj_qkv", e);
    if (rc) return rc;
    uint64_t C = k_dn_channels(dn);
    if (w_qkv->rows != (int64_t)C)
        return err_set(e, ST_USAGE, "dn.in_proj_qkv: %lld rows, expected the conv's %llu channels",
                       (long long)w_qkv->rows, (unsigned long long)C);
    struct push_matmul_conv pc = {.m = k_matmul_push(w_qkv, NULL, norm, x, y, false), .conv_w = conv_w->addr,
                                  .colmeta = cols_meta, .H = (uint32_t)C, .K = (uint32_t)dn->conv,
                                  .stride = (uint32_t)(k_dn_state_bytes(dn) / 4)};
    return matmul_conv(g, p, w_qkv, conv_w, state, k_dn_window_offset(dn), 2, &pc, cols, layer, "dn.in_proj_qkv",
                       "dn.conv", e);
}
