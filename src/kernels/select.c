/* select.c - the kernel choice rules (select.h). Each rule: one line of why, the bench/ note that
 * measured it; the figures are in the notes. A --tune key (tune.h) replaces the choice it names. */
#include "select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t div_up(uint64_t a, uint64_t b)
{
    return (uint32_t)sel_div_up(a, b);
}
static bool is_quant(enum dtype t)
{
    return t == DT_Q8_0 || t == DT_Q4_0;
}
int64_t sel_slot_elems(enum dtype t)
{
    return t == DT_F32 ? 4 : t == DT_F16 || t == DT_BF16 ? 8 : t == DT_Q8_0 ? 16 : 32;
}
/* Elements of a 16-byte quant unit (wslot.glsl's slot: 32 Q4_0, 16 Q8_0). */
static uint64_t quant_elems(enum dtype t)
{
    return t == DT_Q8_0 ? 16 : 32;
}
static uint32_t subgroup(const struct sel *s)
{
    return s->subgroup_size ? s->subgroup_size : 32;
}

/* ---- which kernel serves a product */

/* Below these widths the matrix-vector kernels beat the gemm's tiles; F32 not measured (bench/23
 * run 7). */
int sel_gemm_min_cols(const struct tune *t, enum dtype d)
{
    if (t->gemm_min_cols) return t->gemm_min_cols;
    return d == DT_Q4_0 ? 5 : d == DT_F32 ? 16 : 6;
}

/* The plan a serving engine runs at a width (the auto plan): the wide plan's own line, from which
 * its tiled products serve; below it the wide plan would run the batch plan's kernels anyway. Never
 * spec: a verify is another step, not a faster way to run this one. */
enum plan_kind sel_plan_auto(int cols, int gemm_min_cols)
{
    return cols >= gemm_min_cols ? PLAN_WIDE : PLAN_BATCH;
}

bool sel_wide_as_batch(enum plan_kind plan, int cols, int gemm_min_cols)
{
    return plan == PLAN_WIDE && cols < gemm_min_cols;
}

bool sel_gemm_serves(const struct sel *s, int cols, enum dtype d)
{
    return s->plan == PLAN_WIDE && cols >= sel_gemm_min_cols(s->tune, d);
}

/* qmv.comp: Q4_0 at one column only, where it beat matvec/matmul; slower at 2-8 columns and for
 * Q8_0 (bench/16). tune qmv_cols: every Q type up to that many; matvec_cols names another kernel.
 */
static bool qmv_serves(const struct sel *s, int cols, const struct sel_weight *w)
{
    const struct tune *t = s->tune;
    if (t->matvec_cols || !is_quant(w->dtype) || w->k % 32) return false;
    if (sel_gemm_serves(s, cols, w->dtype)) return false;
    if (t->qmv_cols) return cols <= t->qmv_cols;
    return w->dtype == DT_Q4_0 && cols == 1;
}

/* xmv.comp's geometry (its header says why): k groups and slots a lane so that a lane holds at most
 * 64 x elements, 8 subgroups, 4 / slots rows loaded at once, one batch (bench/22's sweep). */
struct xmv_geo {
    uint32_t sg, nsg, ksg, spl, rb, nb, xv, rows_wg;
};

static bool xmv_geometry(const struct sel *s, const struct sel_weight *w, bool swiglu,
                         uint64_t rows, int cols, int64_t kper, struct xmv_geo *x)
{
    const struct tune *tu = s->tune;
    uint32_t sg = subgroup(s), nw = swiglu ? 2 : 1;
    uint64_t row_slots = (uint64_t)kper / (uint64_t)sel_slot_elems(w->dtype);
    uint64_t xe = tu->xmv_xe ? (uint64_t)tu->xmv_xe : 64;
    uint64_t spl_max = MAX(1, xe / ((uint64_t)sel_slot_elems(w->dtype) * (uint64_t)cols));
    uint32_t nsg_max = MAX(1u, 1024u / sg), ksg = 1;
    while (div_up(row_slots, (uint64_t)ksg * sg) > spl_max && ksg * 2 <= nsg_max)
        ksg *= 2;
    if (div_up(row_slots, (uint64_t)ksg * sg) > spl_max) return false;
    uint32_t nsg = tu->xmv_nsg ? (uint32_t)tu->xmv_nsg : 8;
    nsg = MAX(nsg, ksg) / ksg * ksg; /* a multiple of the k groups */
    if (nsg > nsg_max) return false;
    uint32_t spl = (uint32_t)div_up(row_slots, (uint64_t)ksg * sg);
    uint32_t rb = tu->xmv_rb ? (uint32_t)tu->xmv_rb : MAX(1u, 4u / spl);
    uint32_t nb = tu->xmv_nb ? (uint32_t)tu->xmv_nb : 1;
    rb = MIN(rb, sg);
    uint64_t kv4 = (uint64_t)kper / 4,
             kr4 = (kv4 + 255) / 256 * 256; /* k rounded: fewer pipelines */
    uint32_t rows_wg = nsg / ksg * rb * nb;
    uint64_t part = ksg > 1 ? (uint64_t)ksg * rows_wg * nw * (uint64_t)cols * 4 : 4,
             small = nsg * 4 * (uint64_t)cols + part;
    uint64_t xv = kr4 + kr4 / 8 + 1;
    if (xv * 16 * (uint64_t)cols + small > s->shared_mem) xv = kv4 + kv4 / 8 + 1;
    if (xv * 16 * (uint64_t)cols + small > s->shared_mem || div_up(rows, rows_wg) > SEL_MAX_GROUPS)
        return false;
    *x = (struct xmv_geo){sg, nsg, ksg, spl, rb, nb, (uint32_t)xv, rows_wg};
    return true;
}

/* Q4_0 k past 4096 in slices of <= 2048, summed by float atomic add: ffn_down faster, Q8_0 slower
 * (bench/24). Only where the product may split (no norm, y += result), not SwiGLU, whole slots. */
uint32_t sel_xmv_ksplits(const struct sel *s, const struct sel_weight *w, bool swiglu,
                         bool split_ok)
{
    if (!split_ok || swiglu || !s->float_atomic_add) return 1;
    uint64_t n = 1, k = (uint64_t)w->k,
             unit = (uint64_t)sel_slot_elems(w->dtype) * 4; /* whole slots, whole vec4 */
    if (s->tune->xmv_ksplit)
        n = (uint64_t)s->tune->xmv_ksplit;
    else if (k > 4096 && w->dtype == DT_Q4_0)
        n = div_up(k, 2048);
    while (n > 1 && k % (n * unit))
        n--;
    return (uint32_t)n;
}

int sel_xmv_pass_cols(int cols)
{
    return (int)div_up((uint64_t)cols, div_up((uint64_t)cols, K_XMV_COLS));
}

bool sel_xmv_serves(const struct sel *s, int cols, const struct sel_weight *w, bool swiglu,
                    uint64_t rows, bool split_ok)
{
    const struct tune *tu = s->tune;
    struct xmv_geo x;
    if (tu->matvec_cols || tu->qmv_cols) return false; /* a tune key names another kernel */
    if (sel_gemm_serves(s, cols, w->dtype)) return false;
    int64_t kper = w->k / sel_xmv_ksplits(s, w, swiglu, split_ok);
    if (tu->xmv_cols)
        return cols <= tu->xmv_cols && xmv_geometry(s, w, swiglu, rows, cols, kper, &x);
    /* where it measured faster on the H200 (bench/22 run 2, bench/23, bench/24 run 7):
     * Q4_0 up to 8 columns (passes of <= 4); Q8_0 up to 2 but not the LM head (rows >= 8k); BF16
     * at one column for q/k/v stacked and the LM head only; k <= 4096 a workgroup (ffn_down's
     * 8192 lost unless split, sel_xmv_ksplits) */
    bool tall = rows >= 8 * (uint64_t)w->k, stacked = rows != (uint64_t)w->rows;
    bool q = w->dtype == DT_Q4_0   ? cols <= 8
             : w->dtype == DT_Q8_0 ? cols <= 2 && !tall
                                   : w->dtype == DT_BF16 && cols == 1 && (tall || stacked);
    return q && kper <= 4096 && xmv_geometry(s, w, swiglu, rows, sel_xmv_pass_cols(cols), kper, &x);
}

/* matvec.comp: q/k/v stacked up to K_MATVEC_COLS columns (one dispatch for three), and at one
 * column the matrices with many rows per k: the LM head, Q4_0 from 3k rows, Q8_0 from 3k without
 * SwiGLU (bench/12; matmul.comp kept long k, square matrices and several columns). */
static bool matvec_serves(const struct sel *s, int cols, const struct sel_weight *w, bool swiglu,
                          int n)
{
    if (sel_gemm_serves(s, cols, w->dtype)) return false;
    if (s->tune->matvec_cols) return cols <= s->tune->matvec_cols;
    if (n > 1) return cols <= K_MATVEC_COLS;
    if (cols > 1) return false;
    if (w->rows >= 8 * w->k) return true;
    return w->rows >= 3 * w->k && (w->dtype == DT_Q4_0 || (w->dtype == DT_Q8_0 && !swiglu));
}

enum sel_mv sel_mv_pick(const struct sel *s, int cols, const struct sel_weight *w, bool swiglu,
                        uint64_t rows, int n, bool split_ok)
{
    if (sel_xmv_serves(s, cols, w, swiglu, rows, split_ok)) return SEL_MV_XMV;
    if (qmv_serves(s, cols, w)) return SEL_MV_QMV;
    return matvec_serves(s, cols, w, swiglu, n) ? SEL_MV_MATVEC : SEL_MV_NONE;
}

/* matvec rows a subgroup: Q4_0 4 where >= 256 workgroups remain, else 2 (x reuse pays for its 8
 * bytes of x a weight byte); others 2 where >= 512 remain, else 1; SwiGLU 1 (bench/12).
 * qmv rows 1, 2 or 4, the most that leave >= 512 workgroups (>= 256 at several columns); x staged
 * in chunks of k rounded up to 1024 where it fits, at most 1024 (ffn_down's whole k left too few
 * workgroups a multiprocessor); 2 units a lane ahead (bench/16). xmv: xmv_geometry. */
int sel_mv_geometry(const struct sel *s, enum sel_mv mk, const struct sel_weight *w, bool swiglu,
                    uint64_t rows, int cols, uint32_t ksplits, const char *op, uint32_t spec[10],
                    uint32_t *n_spec, uint32_t *groups, struct err *e)
{
    const struct tune *tu = s->tune;
    uint32_t sg = subgroup(s), nsg = MAX(1u, SEL_MATMUL_THREADS / sg);
    if (mk == SEL_MV_XMV) {
        struct xmv_geo xg;
        if (!xmv_geometry(s, w, swiglu, rows, cols, w->k / ksplits, &xg))
            return err_set(e, ST_USAGE, "xmv %s: no geometry for k %lld, %d columns", op,
                           (long long)w->k, cols);
        *groups = (uint32_t)div_up(rows, xg.rows_wg);
        const uint32_t xs[9] = {xg.sg, xg.nsg, xg.ksg, xg.spl,        xg.sg * xg.nsg,
                                xg.rb, xg.nb,  xg.xv,  (uint32_t)cols};
        memcpy(spec, xs, sizeof xs);
        *n_spec = 9;
        return ST_OK;
    }
    uint32_t rt = 1, kc = 0;
    bool qmv = mk == SEL_MV_QMV;
    if (!qmv) {
        rt = !swiglu && div_up(rows, (uint64_t)nsg * 2) >= 512 ? 2 : 1;
        if (w->dtype == DT_Q4_0) rt = div_up(rows, (uint64_t)nsg * 4) >= 256 ? 4 : 2;
        if (tu->matvec_rt) rt = (uint32_t)tu->matvec_rt;
    } else {
        while (rt < 4 && div_up(rows, (uint64_t)nsg * rt * 2) >= (cols > 1 ? 256u : 512u))
            rt *= 2;
        if (tu->qmv_rt) rt = (uint32_t)tu->qmv_rt;
        /* shared bytes: cols x (KC/4 + KC/32) vec4 of x (144 bytes a 32 elements), and nsg x cols
         * floats of Σx² */
        uint64_t room = s->shared_mem > 4u * nsg * (uint32_t)cols
                            ? s->shared_mem - 4u * nsg * (uint32_t)cols
                            : 0;
        uint64_t cap = room / ((uint64_t)cols * 144) * 32, unit = quant_elems(w->dtype) * sg;
        uint64_t kc_max = tu->qmv_kc ? (uint64_t)tu->qmv_kc : 1024;
        if (kc_max < cap) cap = kc_max;
        uint64_t kr = ((uint64_t)w->k + 1023) / 1024 * 1024; /* k rounded: fewer pipelines */
        kc = (uint32_t)(kr <= cap ? kr : cap >= unit ? cap / unit * unit : cap / 32 * 32);
        if (kc < 32)
            return err_set(e, ST_USAGE,
                           "qmv %s: %d columns need %llu bytes of shared memory, the device has %u",
                           op, cols, (unsigned long long)(cols * 144 + 4 * nsg * cols),
                           s->shared_mem);
    }
    while (rt < 4 && div_up(rows, (uint64_t)nsg * rt) > SEL_MAX_GROUPS)
        rt *= 2; /* a vocabulary of 2^19+ rows */
    *groups = (uint32_t)div_up(rows, (uint64_t)nsg * rt);
    if (*groups > SEL_MAX_GROUPS)
        return err_set(e, ST_USAGE, "matvec %s: %llu rows need %u workgroups, more than 65535", op,
                       (unsigned long long)rows, *groups);
    uint32_t u = tu->qmv_u ? (uint32_t)tu->qmv_u : 2;
    const uint32_t ms[7] = {sg,       nsg, rt, (uint32_t)cols,
                            sg * nsg, kc,  u}; /* matvec.comp: the first 5 */
    memcpy(spec, ms, sizeof ms);
    *n_spec = qmv ? 7 : 5;
    return ST_OK;
}

/* ---- matmul.comp */

int sel_matmul_pass_cols(const struct sel *s)
{
    int pass = s->tune->matmul_pass_cols;
    return pass < 1 || pass > K_MATMUL_MAX_COLS ? K_MATMUL_MAX_COLS : pass;
}

/* The fewest k-slices that still give enough workgroups: fewer slices reuse each x load over more
 * rows (many columns), more slices keep more loads in flight (few rows or columns). Returns the
 * workgroups. */
uint32_t sel_matmul_spec(const struct sel *s, bool swiglu, uint32_t cols, int64_t rows,
                         uint32_t spec[SEL_MATMUL_SPECS])
{
    uint32_t rt = swiglu ? 1 : 2, ksl = 8, min_groups = cols <= 4 ? 1024 : 256;
    while (ksl < SEL_MATMUL_THREADS &&
           div_up((uint64_t)rows, (SEL_MATMUL_THREADS / ksl) * rt) < min_groups)
        ksl *= 2;
    if (s->tune->matmul_ksl) ksl = (uint32_t)s->tune->matmul_ksl;
    if (s->tune->matmul_rt && !swiglu) rt = (uint32_t)s->tune->matmul_rt;
    spec[0] = subgroup(s);
    spec[1] = ksl;
    spec[2] = rt;
    spec[3] = cols;
    spec[4] = SEL_MATMUL_THREADS;
    spec[5] = 0; /* CONV (k_conv_step) */
    return div_up((uint64_t)rows, (SEL_MATMUL_THREADS / ksl) * rt);
}

/* ---- gemm.comp */

/* Shared-memory bytes of gemm.comp at one geometry (mirrors its shared arrays). */
static uint32_t gemm_shared(bool coopmat, bool swiglu, bool wsplit, uint32_t bm, uint32_t bn,
                            uint32_t bk, uint32_t nt, uint32_t nbuf)
{
    uint32_t nm = swiglu ? 2 : 1;
    if (!coopmat) return nbuf * (nm * bm + bn) * (bk + 1) * 4;
    return nbuf * (nm * bm * (bk + 8) * 2 * (wsplit ? 2 : 1) + bn * (bk + 8) * 2 * 2) +
           (nt / 32) * 256 * nm * 4;
}

int sel_gemm(const struct sel *s, const struct sel_weight *w, bool swiglu, int cols,
             bool accumulate, bool plain_x, const char *op, struct sel_gemm *c, struct err *e)
{
    const struct tune *tu = s->tune;
    enum gemm_path path;
    int rc = sel_gemm_path(s, cols, &path, e);
    if (rc) return rc;
    *c = (struct sel_gemm){0};
    bool serving = s->precision == PRECISION_SERVING;
    /* on cm2: gemm_cm2 where it serves the product, else the automatic path's gemm below */
    if (path == GEMM_PATH_CM2 && sel_gemm_on_cm2(s, w, swiglu, cols, accumulate, plain_x, c)) return ST_OK;
    if (path == GEMM_PATH_CM2) path = sel_gemm_v1_path(s);
    bool cm = path != GEMM_PATH_FMA;
    uint32_t smem = s->shared_mem;
    /* weights staged as two f16 parts (F32, Q8_0) keep their own tile rules; Q4_0 kept them
     * although now one f16 part (bench/31) */
    bool wsplit = w->dtype == DT_F32 || is_quant(w->dtype);
    /* cooperative matrices 128 x 64 (64 x 64 with SwiGLU), 4 subgroups; the FMA twin 64 x 64 with
     * 256 threads (bench/06) */
    uint32_t nt = cm ? 128 : 256, bm = cm && !swiglu ? 128 : 64, bn = 64, bk = 32, sgm = 2;
    /* single products past 64 columns keep 128 x 64 and split k: faster than smaller tiles
     * (bench/11, bench/19); quantized ones with 4 x 1 subgroups (bench/21) */
    bool big = cm && !swiglu && cols > 64 && (!wsplit || is_quant(w->dtype));
    if (big && wsplit) sgm = 4;
    /* but Q4_0 2 x 2 with k steps of 32 (bench/33 run 1) */
    bool q4big = big && w->dtype == DT_Q4_0;
    if (q4big) sgm = 2;
    /* 64 rows where 128 leave too few workgroups to fill the device (bench/06) */
    if (cm && bm == 128 && !big &&
        div_up((uint64_t)w->rows, 128) * div_up((uint64_t)cols, bn) < 256)
        bm = 64;
    /* 32 columns under ~4 workgroups a multiprocessor (latency-bound), not for split weights whose
     * tile costs twice to stage (bench/06) */
    if (cm && !swiglu && !wsplit && !big &&
        div_up((uint64_t)w->rows, bm) * div_up((uint64_t)cols, bn) < 512)
        bn = 32;
    /* SwiGLU pairs keep 64 x 64 on small grids (bench/11); quantized pairs from 512 columns 64 x
     * 128 where it fits (bench/21; BF16 lost, bench/18) */
    if (cm && swiglu && is_quant(w->dtype) && cols >= 512 &&
        gemm_shared(cm, swiglu, wsplit, 64, 128, 32, nt, 1) <= smem)
        bn = 128;
    /* unsplit SwiGLU pairs from 128 columns: 64 x 128 of 8 subgroups (2 x 4), k steps of 32
     * (bench/25) */
    if (cm && swiglu && !wsplit && cols >= 128 &&
        gemm_shared(cm, swiglu, wsplit, 64, 128, 32, 256, 1) <= smem) {
        bn = 128;
        nt = 256;
    }
    /* narrow steps (<= 64 columns, bench/18, bench/19, bench/34 runs 4 and 6): up to 16 columns
     * 64 x 16 (4 x 1) so no product runs on padding; 17-32 SwiGLU 64 x 32 and single products 128 x
     * 32 (4 x 1) but the unsplit small grids' 64 x 32 (2 x 2); 33-64 single products on small grids
     * 128 x 64 with 8 splits; SwiGLU and split weights up to 32 columns two k steps in flight */
    bool narrow = cm && cols <= 64;
    uint32_t pf = 1, fixed_splits = 0;
    if (narrow && cols <= 16) {
        bn = 16;
        bm = 64;
        sgm = 4;
        pf = swiglu || wsplit ? 2 : 1;
    } else if (narrow && cols <= 32 && (swiglu || !(bm == 64 && bn == 32))) {
        bm = swiglu ? 64 : 128;
        bn = 32;
        sgm = 4;
        pf = swiglu || wsplit ? 2 : 1;
    } else if (narrow && cols > 32 && !swiglu && bm == 64 && (wsplit || bn == 32)) {
        bm = 128;
        bn = 64;
        fixed_splits = 8;
    }
    /* k steps of 64 where the tiles fit: half the barriers and load latencies a FLOP (bench/06) */
    if (!q4big && gemm_shared(cm, swiglu, wsplit, bm, bn, 64, nt, 1) <= smem) bk = 64;
    /* tune gemm_tile / gemm_tile_swiglu: a tile that does not suit this kernel or the shared memory
     * is ignored (the rule's stays); a forced tile takes the general split rule */
    const int *ft = swiglu ? tu->gemm_tile_sw : tu->gemm_tile;
    uint32_t tm = (uint32_t)ft[0], tn = (uint32_t)ft[1], tk = (uint32_t)ft[2];
    uint32_t sm = (uint32_t)ft[3], sn = (uint32_t)ft[4], tnt = cm ? 32 * sm * sn : 256;
    bool fits = tm && (cm ? sm && sn && tm % (16 * sm) == 0 && tn % (16 * sn) == 0
                          : tm % 16 == 0 && tn % 16 == 0);
    if (fits && gemm_shared(cm, swiglu, wsplit, tm, tn, tk, tnt, 1) <= smem) {
        bm = tm;
        bn = tn;
        bk = tk;
        nt = tnt;
        if (cm) sgm = sm;
        fixed_splits = 0;
    }
#ifdef LFM2_BENCH
    /* bench builds only (gemm_bench, bench/06): LFM2_GEMM_ROOF, F16 weights with x as one f16 (no
     * low part, so not f32-accurate) */
    bool roof = cm && !swiglu && w->dtype == DT_F16 && getenv("LFM2_GEMM_ROOF");
#else
    bool roof = false;
#endif
    /* one buffer of tiles: double-buffered ones were slower at 64 and 512 columns (bench/11) */
    uint32_t nbuf = 1;
    if (tu->gemm_nbuf &&
        gemm_shared(cm, swiglu, wsplit, bm, bn, bk, nt, (uint32_t)tu->gemm_nbuf) <= smem)
        nbuf = (uint32_t)tu->gemm_nbuf;
    uint32_t shared = gemm_shared(cm, swiglu, wsplit, bm, bn, bk, nt, nbuf);
    if (shared > smem)
        return err_set(e, ST_USAGE,
                       "gemm %s: tile %ux%ux%u needs %u bytes of shared memory, the device has %u",
                       op, bm, bn, bk, shared, smem);
    uint32_t gx = div_up((uint64_t)cols, bn), gy = div_up((uint64_t)w->rows, bm);
    if (gx > SEL_MAX_GROUPS || gy > SEL_MAX_GROUPS)
        return err_set(e, ST_USAGE,
                       "gemm %s: %d columns and %lld rows need %u x %u workgroups, more than 65535",
                       op, cols, (long long)w->rows, gx, gy);
    /* split k where under 128 tiles leave most multiprocessors idle, up to ~512 workgroups of >= 4
     * k steps (bench/11) */
    uint32_t steps = div_up((uint64_t)w->k, bk), splits = 1;
    if (cm && !swiglu && gx * gy < 128) splits = MIN(div_up(512, gx * gy), MAX(steps / 4, 1u));
    /* 128 x 64 past 128 columns under 1024 tiles: >= 2 splits, ~128 workgroups (bench/11) */
    if (big && bm == 128 && bn == 64 && gx * gy < 1024)
        splits = MIN(MAX(2u, div_up(128, gx * gy)), MAX(steps / 4, 1u));
    if (fixed_splits) splits = MIN(fixed_splits, steps);
    if (tu->gemm_splitk && !swiglu) splits = MIN((uint32_t)tu->gemm_splitk, steps);
    uint32_t kper = div_up(steps, splits) * bk;
    splits = div_up((uint64_t)w->k, kper);
    c->kernel = roof ? "gemm_roof" : sel_gemm_path_kernel(path);
    /* serving precision: the _serving variant of the same tile (one product instead of two, or
     * three for F32 and Q8_0 weights; the FMA twin rounds x and w to f16 as it stages them, so CI
     * computes what the tensor cores do). The tiles stay exact's: they fit, with less shared memory
     * (no low parts), and a timing then sets the one difference against each other (bench/41). */
    c->serving = !roof && serving;
    c->coopmat = cm && !roof;
    /* float atomic add where the device has it: cooperative matrices, and the twin's BF16 so that
     * CI runs that path */
    c->fadd = splits > 1 && !roof && s->float_atomic_add && (cm || w->dtype == DT_BF16);
    /* one buffer: k steps fetched ahead as chosen above, or tune gemm_pf (bench/25) */
    pf = nbuf != 1 ? 1 : tu->gemm_pf >= 0 ? (uint32_t)tu->gemm_pf : pf;
    c->zero_y = splits > 1 && !accumulate;
    /* no norm and nothing to zero: the plain x split while staged, no prep dispatch (a prep costs
     * about a narrow product); not with 32-column tiles, where products slowed (bench/19) */
    c->xraw = cm && plain_x && !c->zero_y && !roof && bn != 32 &&
              (tu->gemm_xraw_cols < 0 || cols <= tu->gemm_xraw_cols);
    /* the twin reads a plain x itself where there is no norm and nothing to zero */
    c->no_prep = c->xraw || (!cm && plain_x && !c->zero_y);
    c->prep = !cm ? "gemm_xprep_f32" : serving ? "gemm_xprep_serving" : "gemm_xprep";
    /* fragments of the next k slice loaded before this one's products past 64 columns (bench/19) */
    uint32_t frag = cm && cols > 64 ? 2 : 0;
    const uint32_t spec[SEL_GEMM_SPECS] = {32, bm, bn, bk, nt, nbuf, sgm, pf, c->xraw, frag};
    memcpy(c->spec, spec, sizeof spec);
    c->groups[0] = gx;
    c->groups[1] = gy;
    c->groups[2] = splits;
    c->kper = kper;
    return ST_OK;
}

const char *sel_gemm_prep(const struct sel *s)
{
    if (!sel_gemm_coopmat(s)) return "gemm_xprep_f32";
    return s->precision == PRECISION_SERVING ? "gemm_xprep_serving" : "gemm_xprep";
}

/* Q4_0 through an f16 copy from K_GEMM_WDEQ_COLS columns on cooperative matrices: the widening's
 * writes cost more than the tile's dequantization below 256 (bench/33 run 4); copies past 256 MiB
 * keep the Q4_0 tile; the FMA twin keeps exact weights unless tune gemm_wdeq_cols asks. */
#define K_GEMM_WDEQ_MAX_BYTES (256ull << 20)

bool sel_gemm_wdeq_serves(const struct sel *s, int cols, const struct sel_weight *w)
{
    /* gemm_cm2 decodes Q4_0 in its loads: no copy for a weight it takes (a SwiGLU pair it cannot
     * take, without per-element operations, then runs NV v1's Q4_0 tile) */
    if (!sel_gemm_cm2_refusal(s, w, false, false, cols)) return false;
    int from = s->tune->gemm_wdeq_cols >= 0 ? s->tune->gemm_wdeq_cols
               : sel_gemm_coopmat(s)        ? K_GEMM_WDEQ_COLS
                                            : 0;
    uint64_t copy = 2 * (uint64_t)w->rows * (uint64_t)w->k;
    return w->dtype == DT_Q4_0 && from > 0 && cols >= from && copy <= K_GEMM_WDEQ_MAX_BYTES;
}

uint32_t sel_gemm_wdeq_bpt(const struct sel *s)
{
    return s->tune->gemm_wdeq_bpt ? (uint32_t)s->tune->gemm_wdeq_bpt : 1;
}

/* ---- attention */

/* By kv head at long contexts and wide decode steps, by q head elsewhere, where it measured faster
 * (bench/35 runs 6-7); a batch-plan prefill only up to K_ATTN_KV_MAX_COLS (wider unmeasured). */
bool sel_attn_by_kv_head(const struct tune *t, int hd, int64_t keys, int cols, bool prefill)
{
    if (t->attn_kv_keys >= 0) return keys > t->attn_kv_keys;
    if (prefill) return cols <= K_ATTN_KV_MAX_COLS && keys > K_ATTN_KV_KEYS;
    if (cols >= K_ATTN_KV_COLS) return true;
    return keys > (cols == 1 ? MAX(K_ATTN_KV_KEYS_1, 2 * (int64_t)hd) : K_ATTN_KV_KEYS);
}

/* No split while kv heads x columns fill the target or a column's keys are at most two chunks;
 * else enough splits of at least a chunk to reach it (bench/35). */
uint32_t sel_attn_splits(const struct tune *t, uint32_t keys, uint32_t wg, uint32_t nt)
{
    if (t->attn_split) return (uint32_t)t->attn_split;
    uint32_t target = t->attn_split_wg ? (uint32_t)t->attn_split_wg : K_ATTN_SPLIT_WG;
    if (wg >= target || keys <= 2 * nt) return 1;
    return MIN(div_up(target, wg), div_up(keys, nt));
}

bool sel_attn_kv(const struct sel *s, int n_h, int n_kv, int hd, int64_t keys, int cols, bool prefill,
                 bool fused, struct sel_attn_kv *out)
{
    memset(out, 0, sizeof *out);
    if (n_kv < 1 || n_h % n_kv || cols < 1 || keys < 1 || keys > UINT32_MAX) return false;
    if (!sel_attn_by_kv_head(s->tune, hd, keys, cols, prefill)) return false;
    uint32_t nt = sel_attn_kv_threads(s, (uint32_t)hd, (uint32_t)(n_h / n_kv), fused);
    if (!nt) return false;
    uint32_t nspl = sel_attn_splits(s->tune, (uint32_t)keys, (uint32_t)n_kv * (uint32_t)cols, nt), kper = 0;
    if (nspl > 1) { /* whole KV blocks a split, then as many splits as those take */
        kper = div_up(div_up((uint64_t)keys, nspl), K_KV_BLOCK) * K_KV_BLOCK;
        nspl = div_up((uint64_t)keys, kper);
    }
    out->nt = nt;
    out->nspl = nspl;
    out->kper = nspl > 1 ? kper : 0;
    out->part = nspl > 1 ? (uint64_t)cols * (uint64_t)n_h * nspl * ((uint64_t)hd + 2) * 4 : 0;
    return true;
}

/* The prep rides in the attention where each slot holds one column: its workgroups then norm and
 * rotate their own heads (bench/26); the spec plan keeps it apart. */
bool sel_attn_fuses_prep(const struct sel *s, int cols, int n_runs)
{
    return n_runs == cols && s->plan != PLAN_SPEC;
}

#define ATTN_NT 128u /* attn_kv.comp: threads a workgroup, keys a chunk */

/* Shared bytes of attn_kv.comp at head dim hd, gq q heads a kv head, nt threads in subgroups of
 * sg, with the prep or without (mirrors its shared arrays). */
static uint64_t attn_shared(uint64_t hd, uint64_t gq, uint64_t nt, uint64_t sg, bool prep)
{
    uint64_t b = 4 * gq * hd + 4 * 2 * gq * nt + 4 * 2 * gq * (nt / sg) + 16 * nt + 4 * 2 * nt;
    return b + (prep ? 4 * (gq + 2) * hd + 4 * hd + 8 * (hd / 2) : 4 + 4 + 8);
}

/* 128 threads (a chunk of keys), halved while the group does not fit the shared memory. */
uint32_t sel_attn_kv_threads(const struct sel *s, uint32_t hd, uint32_t gq, bool fused)
{
    uint32_t sg = subgroup(s);
    uint64_t smem = s->shared_mem ? s->shared_mem : 32768;
    uint32_t nt = MAX(ATTN_NT, sg);
    while (nt > sg && nt / 2 >= hd / 4 && attn_shared(hd, gq, nt, sg, fused) > smem)
        nt /= 2;
    return attn_shared(hd, gq, nt, sg, fused) > smem ? 0 : nt;
}

/* 256 threads, as many subgroups as fit, while their partial outputs (and the fused prep's head
 * copies) fit the shared memory: hd 256 at a subgroup of 8 would take 33 KiB of lavapipe's 32. */
uint32_t sel_attn_q_subgroups(const struct sel *s, uint32_t hd, bool fused)
{
    uint32_t nsg = MAX(1u, 256u / subgroup(s));
    uint64_t fixed = 4 * (fused ? 6 * (uint64_t)hd : 7);
    while (nsg > 1 &&
           (uint64_t)nsg * (hd + 4) * 4 + fixed > (s->shared_mem ? s->shared_mem : 32768))
        nsg /= 2;
    return nsg;
}

#define ATTN_PREFILL_THREADS 128u
#define ATTN_PREFILL_MAX_PER_THREAD                                                                \
    8u /* scores and accumulator vec4s a thread holds (MAX_NS, MAX_NA) */

/* Shared bytes of attn_prefill.comp at head dim hd and bq query columns a tile, with kvb (1 or 2)
 * KV block buffers. */
static uint64_t attn_prefill_shared(uint32_t hd, uint32_t bq, uint32_t kvb)
{
    return 4 * ((uint64_t)bq * hd + (uint64_t)kvb * K_KV_BLOCK * (hd + 4) +
                (uint64_t)bq * K_KV_BLOCK + 3ull * bq);
}

/* Whether attn_prefill.comp's thread layout serves head dim hd with tiles of bq columns (one KV
 * buffer; its rows' softmax takes 4 neighbour lanes: subgroups of at least 4). */
static bool attn_prefill_fits(const struct sel *s, uint32_t hd, uint32_t bq, uint32_t nt)
{
    uint32_t hd4 = hd / 4;
    return hd % 4 == 0 && s->subgroup_size >= 4 && nt % hd4 == 0 && (bq * hd4) % nt == 0 &&
           bq * hd4 / nt <= ATTN_PREFILL_MAX_PER_THREAD && (bq * K_KV_BLOCK) % nt == 0 &&
           bq * K_KV_BLOCK / nt <= ATTN_PREFILL_MAX_PER_THREAD &&
           attn_prefill_shared(hd, bq, 1) <= s->shared_mem;
}

/* The widest tile of at most 32 columns that fits, no wider than the step needs: 64 columns halved
 * the workgroups for the same keys and was slower (bench/10, bench/11); keys and values in two
 * buffers where they fit (the next block's loads overlap the scores). */
bool sel_attn_prefill_tile(const struct sel *s, uint32_t hd, int cols, uint32_t *bq_out,
                           uint32_t *nt_out, uint32_t *kv2, uint64_t *need)
{
    uint32_t bq = 0, nt = ATTN_PREFILL_THREADS, tnt = (uint32_t)s->tune->attn_nt;
    for (uint32_t b = 32; tnt && b >= 8; b /= 2) /* tune attn_nt: where some tile fits them */
        if (attn_prefill_fits(s, hd, b, tnt)) nt = tnt;
    for (uint32_t b = 32; b >= 8 && !bq; b /= 2)
        if (attn_prefill_fits(s, hd, b, nt)) bq = b;
    *nt_out = nt;
    *need = attn_prefill_shared(hd, 8, 1);
    if (!bq) return false;
    while (bq > 8 && bq / 2 >= (uint32_t)cols && attn_prefill_fits(s, hd, bq / 2, nt))
        bq /= 2;
    int forced = s->tune->attn_bq; /* tune attn_bq: any tile of 8..64 columns that fits */
    if (forced && attn_prefill_fits(s, hd, (uint32_t)forced, nt)) bq = (uint32_t)forced;
    *bq_out = bq;
    *kv2 = attn_prefill_shared(hd, bq, 2) <= s->shared_mem;
    return true;
}

/* ---- convs */

/* Decode outside the spec plan (one column a slot) where matmul.comp serves the in_proj: the conv
 * in its epilogue saves a dispatch (bench/27, bench/32). */
bool sel_conv_fuses(const struct sel *s, const struct sel_weight *w_in, int cols, int n_runs)
{
    return s->plan != PLAN_SPEC && n_runs == cols && cols <= K_MATMUL_MAX_COLS &&
           sel_mv_pick(s, cols, w_in, false, (uint64_t)w_in->rows, 1, false) == SEL_MV_NONE &&
           !sel_gemm_serves(s, cols, w_in->dtype);
}
