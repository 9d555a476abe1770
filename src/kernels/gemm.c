/* gemm.c - host side of the wide plan's tiled matrix product (gemm.comp, gemm_xprep.comp) and of
 * Q4_0 products through an f16 copy (gemm_wdeq.comp). */
#include "kernels_priv.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

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
    uint64_t flops;      /* useful FLOPs (flops.c) */
    uint32_t exec_mult;  /* products executed per useful one (k_gemm_exec_mult) */
    struct sel_gemm choice; /* its prep reads zero_y (y must start at 0), no_prep and prep */
    struct k_cm2_product cm2; /* choice.cm2: the product gemm_cm2 records (its x set by gemm_append) */
};

_Static_assert((int)SEL_CM2_X_SERVING == (int)K_CM2_X_SERVING && (int)SEL_CM2_X_EXACT == (int)K_CM2_X_EXACT &&
                   (int)SEL_CM2_X_GIVEN_F16 == (int)K_CM2_X_GIVEN_F16 && (int)SEL_CM2_X_PREP == (int)K_CM2_X_PREP,
               "select.h enum sel_cm2_x mirrors kernels.h enum k_cm2_x");

/* The tiles, splits and pipeline of one product (sel_gemm; appends nothing). */
static int gemm_setup(struct gpu *g, const struct gpu_weight *w, const struct gpu_weight *w3, uint64_t y, int cols,
                      bool accumulate, bool plain_x, const char *op, const char *kind_prefix, struct gemm_call *c,
                      struct err *e)
{
    bool swiglu = w3 != NULL;
    struct sel s = k_sel_of(g, NULL);
    struct sel_weight sw = k_sel_w(w);
    struct sel_gemm sg;
    int rc = sel_gemm(&s, &sw, swiglu, cols, accumulate, plain_x, op, &sg, e);
    if (rc) return rc;
    c->choice = sg;
    c->bytes = w->bytes + (swiglu ? w3->bytes : 0);
    c->flops = k_product_flops(w->rows, w->k, cols, swiglu);
    if (sg.cm2) { /* gemm_cm2 (gemm_cm2.c) picks its tile and pipeline when it records */
        c->cm2 = (struct k_cm2_product){.w = w, .w3 = w3, .y = y, .cols = cols, .accumulate = accumulate,
                                        .xmode = (enum k_cm2_x)sg.cm2_x};
        snprintf(c->kind, sizeof c->kind, "%s%s%s%s.%s", kind_prefix ? kind_prefix : "", sg.kernel,
                 sg.cm2_x == SEL_CM2_X_PREP ? "_prep" : "", swiglu ? "_swiglu" : "", k_kind_dtype(w->dtype));
        /* exact: w·x_hi and w·x_lo (Q8_0: and w_lo·x_hi) */
        c->exec_mult = sg.serving ? 1 : k_gemm_exec_mult(sg.coopmat, w->dtype);
        return ST_OK;
    }
    char name[48];
    snprintf(name, sizeof name, "%s%s%s%s_%s", sg.kernel, swiglu ? "_swiglu" : "", sg.fadd ? "_fadd" : "",
             sg.serving ? "_serving" : "", k_kind_dtype(w->dtype));
    snprintf(c->kind, sizeof c->kind, "%s%s%s.%s", kind_prefix ? kind_prefix : "", sg.kernel, swiglu ? "_swiglu" : "",
             k_kind_dtype(w->dtype));
    if ((rc = gpu_pipeline(g, name, sg.spec, SEL_GEMM_SPECS, &c->pipe, e))) return rc;
    c->pc = (struct push_gemm){k_matmul_push(w, w3, NULL, 0, y, accumulate), (uint32_t)cols, sg.kper};
    memcpy(c->groups, sg.groups, sizeof c->groups);
    /* serving: one product, w and x in f16 */
    c->exec_mult = sg.serving ? 1 : k_gemm_exec_mult(sg.coopmat, w->dtype);
    return ST_OK;
}

int k_gemm_path(const struct gpu *g, int cols, enum gemm_path *path, struct err *e)
{
    struct sel s = k_sel_of(g, NULL);
    return sel_gemm_path(&s, cols, path, e);
}

const char *k_gemm_path_auto(bool khr, bool nv, bool cm2)
{
    static char line[256];
    struct tune t = tune_default();
    struct sel s = {.tune = &t, .coopmat_khr = khr, .coopmat_nv = nv, .coopmat2 = cm2};
    enum gemm_path p, ps;
    sel_gemm_path(&s, 0, &p, NULL);
    s.precision = PRECISION_SERVING;
    sel_gemm_path(&s, 0, &ps, NULL);
    int n = snprintf(line, sizeof line, "%s (%s: %s; automatic, --tune gemm_path=khr|nv|fma|cm2 picks)",
                     gemm_path_name(p), sel_gemm_path_kernel(p), sel_gemm_path_label(p));
    if (ps != p && n > 0 && (size_t)n < sizeof line)
        snprintf(line + n, sizeof line - (size_t)n, "; serving precision: %s (%s: %s) from %d columns",
                 gemm_path_name(ps), sel_gemm_path_kernel(ps), sel_gemm_path_label(ps), K_CM2_AUTO_COLS);
    return line;
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
        pc.sc[i] = k_scale_addr(w[i]);
        pc.out[i] = out[i];
        pc.start[i + 1] = pc.start[i] + (uint32_t)blocks;
        bytes += w[i]->bytes;
    }
    for (int i = n + 1; i < 5; i++) pc.start[i] = pc.start[n];
    const struct gpu_pipeline *pp;
    struct sel s = k_sel_of(g, p);
    uint32_t bpt = sel_gemm_wdeq_bpt(&s);
    int rc = gpu_pipeline(g, "gemm_wdeq", &bpt, 1, &pp, e);
    if (rc) return rc;
    uint32_t groups = k_div_up(pc.start[4], 64 * bpt), gx = MIN(groups, (uint32_t)MAX_GROUPS), gy = k_div_up(groups, gx);
    char kind[40];
    snprintf(kind, sizeof kind, "%sgemm_wdeq.q4_0", kind_prefix ? kind_prefix : "");
    struct dispatch *d = k_add(p, pp, &pc, sizeof pc, gx, gy, kind, layer, op, bytes);
    d->bytes_again = true; /* the products on the copies carry the same weights' bytes */
    size_t at[4];
    for (int i = 0; i < 4; i++) at[i] = offsetof(struct push_gemm_wdeq, out) + 8 * (size_t)i;
    dispatch_outputs(d, n, at[0], at[1], at[2], at[3]);
    return ST_OK;
}

/* The f16 copies of the weights w[0..n) that sel_gemm_wdeq_serves takes at `cols` columns (f[i] = *w[i]
 * for the others), and the widening of those into them (one dispatch). The copies go into one half
 * of the plan's gemm_w scratch (struct k_scratch), the halves taken in turn, and the widening is
 * moved back to just after the last dispatch that reads a copy (plan_hoist_last): the previous
 * such product, whose copy is in the other half, so that the two run side by side where the
 * engine lets the barriers follow the data (engine.c makes the halves plan buffers). wide[i]:
 * whether w[i] goes through its copy. */
static int gemm_wdeq(struct gpu *g, struct plan *p, int n, const struct gpu_weight *const w[], int cols,
                     struct gpu_weight f[], bool wide[], int layer, const char *op, const char *kind_prefix,
                     struct err *e)
{
    uint64_t at[K_MULTI_MAX], out[K_MULTI_MAX], base;
    struct sel_weight sw[K_MULTI_MAX];
    const struct gpu_weight *q[K_MULTI_MAX];
    int nq = 0;
    CHECK(n <= K_MULTI_MAX);
    for (int i = 0; i < n; i++) {
        f[i] = *w[i];
        sw[i] = k_sel_w(w[i]);
    }
    struct sel s = k_sel_of(g, p);
    uint64_t need = sel_gemm_wdeq_layout(&s, cols, n, sw, wide, at);
    if (!need) return ST_OK;
    struct k_scratch *sc = p->scratch;
    uint64_t half = sc ? k_scratch_half(sc) : 0;
    int rc = k_scratch_take(sc ? &sc->gemm_w : NULL, half, need, "f16 weight copies (half of gemm_w)", op, &base, e);
    if (rc) return rc;
    base += (uint64_t)sc->gemm_w_half * half;
    sc->gemm_w_half ^= 1;
    for (int i = 0; i < n; i++) {
        if (!wide[i]) continue;
        uint64_t bytes = 2 * (uint64_t)w[i]->rows * (uint64_t)w[i]->k;
        f[i] = (struct gpu_weight){base + at[i], DT_F16, w[i]->rows, w[i]->k, bytes};
        q[nq] = w[i];
        out[nq++] = f[i].addr;
    }
    rc = k_gemm_wdeq(g, p, nq, q, out, layer, op, kind_prefix, e);
    if (!rc) plan_hoist_last(p, sc->gemm_w.addr, sc->gemm_w.addr + 2 * half);
    return rc;
}

/* A product set up on an f16 copy keeps the tags of its weights: kind "...gemm[_swiglu].q4_0" and
 * their bytes (the step's weight-bytes floor counts each weight once, figures.c). */
static void gemm_retag(struct gemm_call *c, const struct gpu_weight *w, const struct gpu_weight *w3)
{
    char *dot = strrchr(c->kind, '.');
    if (dot) snprintf(dot + 1, sizeof c->kind - (size_t)(dot + 1 - c->kind), "%s", k_kind_dtype(w->dtype));
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
    bool has_norm = norm && norm->w;
    struct sel s = k_sel_of(g, p);
    struct sel_gemm sg[GEMM_PREP_MAX_Y];
    CHECK(n >= 1 && n <= GEMM_PREP_MAX_Y);
    for (int i = 0; i < n; i++) sg[i] = calls[i].choice;
    uint64_t bytes = sel_gemm_prep_bytes(&s, has_norm, n, sg, k, cols);
    *xg = x;
    if (!bytes) return ST_OK;
    /* the prep of the products that read one (sel_gemm_multi groups only products that agree) */
    const char *shader = NULL;
    for (int i = 0; i < n && !shader; i++) shader = sg[i].no_prep ? NULL : sg[i].prep;
    CHECK(shader);
    struct k_scratch *sc = p->scratch;
    int rc = k_scratch_take(sc ? &sc->gemm_x : NULL, sc ? sc->gemm_x.size : 0, bytes, "prepared activations (gemm_x)",
                            op, xg, e);
    if (rc) return rc;
    const struct gpu_pipeline *pp;
    if ((rc = gpu_pipeline(g, shader, NULL, 0, &pp, e))) return rc;
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
        if (!calls[i].choice.zero_y) continue;
        xp.y[i] = calls[i].pc.m.y;
        xp.rows[i] = calls[i].pc.m.rows;
        out[n_out++] = offsetof(struct push_gemm_xprep, y) + 8 * (size_t)i;
    }
    char pkind[40];
    snprintf(pkind, sizeof pkind, "%sgemm_xprep", kind_prefix ? kind_prefix : "");
    struct dispatch *d = k_add(p, pp, &xp, sizeof xp, (uint32_t)cols, 1, pkind, layer, op, 0);
    dispatch_outputs(d, n_out, out[0], out[1], out[2], out[3], out[4]);
    return ST_OK;
}

/* The split-k planes of the n calls' gemm_cm2 products (sel_gemm_cm2_part_bytes each): product i
 * in slice i of the plan's gemm_part scratch, each slice a plan buffer, so that products of one
 * input (and their reductions) run with no barrier between them. */
static int gemm_parts(struct plan *p, int n, struct gemm_call *c, const char *op, struct err *e)
{
    struct k_scratch *sc = p->scratch;
    uint64_t slice = sc ? k_scratch_part_slice(sc) : 0;
    for (int i = 0; i < n; i++) {
        if (!c[i].choice.cm2) continue;
        uint64_t bytes =
            sel_gemm_cm2_part_bytes(&c[i].choice.cm2_tile, c[i].cm2.w->rows, c[i].cm2.w->k, c[i].cm2.cols);
        if (!bytes) continue;
        uint64_t base;
        int rc = k_scratch_take(sc ? &sc->gemm_part : NULL, slice, bytes, "split-k partial sums (a slice of gemm_part)",
                                op, &base, e);
        if (rc) return rc;
        c[i].cm2.part = base + (uint64_t)i * slice;
    }
    return ST_OK;
}

/* The reductions of split products recorded since dispatch `from` moved after all of them
 * (order kept within each group): products of one input, then their reductions, so that the
 * barriers (plan_barriers) put one wait between the two groups, not one a product. */
static void gemm_reduces_last(struct plan *p, int from)
{
    for (int i = p->n - 1, end = p->n; i >= from; i--) {
        if (!strstr(p->d[i].kind, "gemm_cm2_reduce")) continue;
        struct dispatch d = p->d[i];
        memmove(&p->d[i], &p->d[i + 1], (size_t)(end - 1 - i) * sizeof *p->d);
        p->d[--end] = d;
    }
}

/* The product of one call on its x: the prepared xg, or x itself where it reads the plain x. */
static int gemm_append(struct gpu *g, struct plan *p, const struct gemm_call *c, uint64_t x, uint64_t xg, int layer,
                       const char *op, const char *kind_prefix, struct err *e)
{
    uint64_t xr = c->choice.no_prep ? x : xg;
    if (c->choice.cm2) {
        struct k_cm2_product m = c->cm2;
        m.x = xr;
        int at = p->n;
        int rc = k_gemm_cm2(g, p, &m, &c->choice.cm2_tile, layer, op, e);
        if (rc) return rc;
        /* the wide plan's tags: its kind prefix ("head."), and the products executed; the split
         * sums' reduction after it (kind "<prefix>gemm_cm2_reduce") */
        struct dispatch *d = &p->d[at];
        dispatch_tag(d, c->kind, layer, op, c->bytes);
        dispatch_flops(d, c->flops, c->exec_mult);
        for (int i = at + 1; i < p->n; i++) {
            char kind[40];
            snprintf(kind, sizeof kind, "%s%s", kind_prefix ? kind_prefix : "", p->d[i].kind);
            dispatch_tag(&p->d[i], kind, layer, op, 0);
        }
        return ST_OK;
    }
    struct push_gemm pc = c->pc;
    pc.m.x = xr;
    struct dispatch *d = plan_add(p, c->pipe, &pc, sizeof pc, c->groups[0], c->groups[1], c->groups[2]);
    dispatch_tag(d, c->kind, layer, op, c->bytes);
    dispatch_flops(d, c->flops, c->exec_mult);
    dispatch_outputs(d, 1, offsetof(struct push_gemm, m.y));
    return ST_OK;
}

/* One product through the gemm: its prep (when needed), then the product. */
int k_gemm_any(struct gpu *g, struct plan *p, const struct gpu_weight *w, const struct gpu_weight *w3,
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
    if (!rc) rc = gemm_parts(p, 1, &c, op, e);
    if (rc) return rc;
    return gemm_append(g, p, &c, x, xg, layer, op, kind_prefix, e);
}

/* n products of one input through the gemm (k_matmul_multi in a wide plan): one prep serves them
 * all (and zeroes every split output), then the n products, which write distinct outputs and so
 * run with no barrier between them (plan_barriers). Weights share k. */
int k_gemm_multi(struct gpu *g, struct plan *p, int n, const struct gpu_weight *const w[], const uint64_t y[],
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
    if (!rc) rc = gemm_parts(p, n, c, fused_op, e);
    if (rc) return rc;
    int from = p->n;
    for (int i = 0; !rc && i < n; i++) rc = gemm_append(g, p, &c[i], x, xg, layer, ops[i], "", e);
    if (!rc) gemm_reduces_last(p, from);
    return rc;
}
