/* kernels.c - host side of the compute kernels: the repacked weight layout, and one helper per
 * kernel that makes its pipeline for this device, fills its push constants and appends it to a
 * plan. The push structs mirror the `Push` blocks of shaders/<name>.comp field by field. */
#include "kernels.h"

#include <stddef.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_rule.h"
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

/* Elements of a 16-byte quant unit (wslot.glsl's slot: 32 Q4_0, 16 Q8_0). */
static uint64_t quant_elems(enum dtype t) { return t == DT_Q8_0 ? 16 : 32; }

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

/* Elements of a 16-byte weight slot (matmul.comp's G). */
static int64_t slot_elems(enum dtype t)
{
    switch (t) {
    case DT_F32: return 4;
    case DT_F16:
    case DT_BF16: return 8;
    case DT_Q8_0: return 16;
    default: return 32;
    }
}

/* Address of the f16 scales of a Q weight, 0 for the others. */
static uint64_t scale_addr(const struct gpu_weight *w)
{
    if (!is_quant_type(w->dtype)) return 0;
    return w->addr + (uint64_t)w->rows * (uint64_t)(w->k / 32) * quant_bytes(w->dtype);
}

/* The geometry of matmul.comp (its spec constants 0..4; the shader's header says why): 128
 * threads, KSL k-slices per row group of RT rows. The smallest KSL that still gives the grid
 * enough workgroups: fewer slices mean more rows a workgroup and more reuse of each x load (what
 * many columns need), more slices mean more workgroups and more loads in flight (what a matrix
 * with few rows, or a step of few columns, needs to reach the memory bandwidth). */
#define MATMUL_THREADS 128u
#define MATMUL_SPECS 6
static void matmul_spec(const struct gpu *g, bool swiglu, uint32_t cols, int64_t rows, uint32_t spec[MATMUL_SPECS])
{
    uint32_t rt = swiglu ? 1 : 2, ksl = 8, min_groups = cols <= 4 ? 1024 : 256;
    while (ksl < MATMUL_THREADS && div_up((uint64_t)rows, (MATMUL_THREADS / ksl) * rt) < min_groups) ksl *= 2;
    /* tuning hooks for bench/ runs: force the slices (8 .. 128) or the rows a row group keeps */
    const struct tuning *tu = tuning();
    if (tu->matmul_ksl) ksl = (uint32_t)tu->matmul_ksl;
    if (tu->matmul_rt && !swiglu) rt = (uint32_t)tu->matmul_rt;
    spec[0] = g->subgroup_size ? g->subgroup_size : 32;
    spec[1] = ksl;
    spec[2] = rt;
    spec[3] = cols;
    spec[4] = MATMUL_THREADS;
    spec[5] = 0; /* CONV (k_conv_step) */
}

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

/* Whether matvec.comp serves a product of `cols` columns over n stacked weights like w (w3: SwiGLU)
 * in plan p, else matmul.comp (or the wide plan's gemm). Where it measured faster on the H200
 * (bench/12, LFM2-1.2B): q/k/v as one product up to K_MATVEC_COLS columns (one dispatch for three:
 * 118 -> 68 us a step in BF16); at one column, matrices with many rows per k: the LM head in every
 * type (rows >= 8k), Q4_0 from rows >= 3k (conv.in_proj, the SwiGLU: 911 -> 523 us a step) and Q8_0
 * from rows >= 3k without SwiGLU. matmul.comp keeps long k (ffn_down, k = 4H: 205 vs 270 us in BF16),
 * square matrices and every product of several columns: its 128 threads a row keep more loads in
 * flight than a subgroup a row, and its x loads are broadcasts (matvec's lanes read x 16 bytes in
 * every 128 for Q4_0, bound by L1 wavefronts: bench/12). LFM2_MATVEC_COLS=N: matvec for every
 * product up to N columns; LFM2_MATVEC_OFF: never. */
int k_gemm_min_cols(enum dtype t)
{
    if (tuning()->gemm_min_cols) return tuning()->gemm_min_cols;
    return plan_rule_gemm_min_cols(t);
}

/* Whether the wide plan's gemm serves a product of `cols` columns of weights like w (the matrix-
 * vector kernels and matmul.comp then step aside). */
static bool gemm_serves(const struct plan *p, int cols, const struct gpu_weight *w)
{
    return p->kind == PLAN_WIDE && cols >= k_gemm_min_cols(w->dtype);
}

/* Whether qmv.comp serves a Q4_0/Q8_0 product of `cols` columns (its header says why it exists):
 * Q4_0 at one column, where it measured faster than matvec.comp / matmul.comp on the H200 (bench/16:
 * LFM2-1.2B Q4_0 1 column 1278 -> 1061 us; at 2-8 columns and for Q8_0 it was slower, up to 2x).
 * LFM2_QMV_COLS=N: every Q4_0/Q8_0 product up to N columns (tests, bench/); LFM2_QMV_OFF (and
 * LFM2_MATVEC_OFF, LFM2_MATVEC_COLS, which name the other kernels) keeps the selection of bench/12. */
static bool qmv_serves(const struct plan *p, int cols, const struct gpu_weight *w)
{
    const struct tuning *tu = tuning();
    if (tu->qmv_off || tu->matvec_off || tu->matvec_cols || !is_quant_type(w->dtype) || w->k % 32) return false;
    if (gemm_serves(p, cols, w)) return false;
    if (tu->qmv_cols) return cols <= tu->qmv_cols;
    return w->dtype == DT_Q4_0 && cols == 1;
}

/* xmv.comp's geometry for a product of `cols` columns over weights like w, each workgroup over kper
 * of its k (all of it unless split, xmv_ksplits) (its header says why it exists): k groups (KSG) and
 * slots a lane (SPL) so that a lane holds at most XE = 64 x elements (k = 2048: one group; 8192
 * unsplit: four, BF16 and Q4_0 alike); subgroups a workgroup NSG = 8 (at least KSG); rows a
 * subgroup loads at once RB = 4 / SPL (Q4_0: 2); one batch of rows a subgroup (bench/22's sweep:
 * 8 subgroups and 2 rows best for Q4_0, more rows or batches slower).
 * x (k + k/8 floats a column) must fit the shared memory. The hooks LFM2_XMV_NSG, _RB, _NB, _XE
 * force them (tuning.h). */
struct xmv_geo {
    uint32_t sg, nsg, ksg, spl, rb, nb, xv, rows_wg;
};

/* Columns of one xmv pass over a product of `cols` (kernels.h K_XMV_COLS): passes as even as can be. */
static int xmv_pass_cols(int cols) { return (int)div_up((uint64_t)cols, div_up((uint64_t)cols, K_XMV_COLS)); }

static bool xmv_geometry(const struct gpu *g, const struct gpu_weight *w, bool swiglu, uint64_t rows, int cols,
                         int64_t kper, struct xmv_geo *x)
{
    const struct tuning *tu = tuning();
    uint32_t sg = g->subgroup_size ? g->subgroup_size : 32, nw = swiglu ? 2 : 1;
    uint64_t row_slots = (uint64_t)kper / (uint64_t)slot_elems(w->dtype);
    uint64_t xe = tu->xmv_xe ? (uint64_t)tu->xmv_xe : 64;
    uint64_t spl_max = MAX(1, xe / ((uint64_t)slot_elems(w->dtype) * (uint64_t)cols));
    uint32_t nsg_max = MAX(1u, 1024u / sg), ksg = 1;
    while (div_up(row_slots, (uint64_t)ksg * sg) > spl_max && ksg * 2 <= nsg_max) ksg *= 2;
    if (div_up(row_slots, (uint64_t)ksg * sg) > spl_max) return false;
    uint32_t nsg = tu->xmv_nsg ? (uint32_t)tu->xmv_nsg : 8;
    nsg = MAX(nsg, ksg) / ksg * ksg; /* a multiple of the k groups */
    if (nsg > nsg_max) return false;
    uint32_t spl = (uint32_t)div_up(row_slots, (uint64_t)ksg * sg);
    uint32_t rb = tu->xmv_rb ? (uint32_t)tu->xmv_rb : MAX(1u, 4u / spl);
    uint32_t nb = tu->xmv_nb ? (uint32_t)tu->xmv_nb : 1;
    rb = MIN(rb, sg);
    uint64_t kv4 = (uint64_t)kper / 4, kr4 = (kv4 + 255) / 256 * 256; /* k rounded: fewer pipelines */
    uint32_t rows_wg = nsg / ksg * rb * nb;
    uint64_t part = ksg > 1 ? (uint64_t)ksg * rows_wg * nw * (uint64_t)cols * 4 : 4, small = nsg * 4 * (uint64_t)cols + part;
    uint64_t xv = kr4 + kr4 / 8 + 1;
    if (xv * 16 * (uint64_t)cols + small > g->shared_mem) xv = kv4 + kv4 / 8 + 1;
    if (xv * 16 * (uint64_t)cols + small > g->shared_mem || div_up(rows, rows_wg) > MAX_GROUPS) return false;
    *x = (struct xmv_geo){sg, nsg, ksg, spl, rb, nb, (uint32_t)xv, rows_wg};
    return true;
}

/* The workgroups along k of an xmv product over weights like w (xmv.comp's split k): Q4_0 k past
 * 4096 in slices of at most 2048 (the k of the products it measured fastest on), whose sums add
 * into y by float atomic add, where the product may split (`split_ok`: no norm, whose Σx² spans all
 * k, and y += result, so y holds the start) and is no SwiGLU (not linear), on a device with float
 * atomic add and where the slices are whole slots; else 1. Measured on LFM2-1.2B's ffn_down (k =
 * 8192, bench/24): Q4_0 247 -> 189 us a step at one column (2 and 8 splits: less), whole steps at
 * 1-8 columns 3-8 % faster; Q8_0 slower than matvec (197 -> 237 us), so not Q8_0.
 * LFM2_XMV_KSPLIT=N forces N for every type where allowed (1: never split). */
static uint32_t xmv_ksplits(const struct gpu *g, const struct gpu_weight *w, bool swiglu, bool split_ok)
{
    if (!split_ok || swiglu || !g->has_float_atomic_add) return 1;
    uint64_t s = 1, k = (uint64_t)w->k, unit = (uint64_t)slot_elems(w->dtype) * 4; /* whole slots, whole vec4 */
    if (tuning()->xmv_ksplit) s = (uint64_t)tuning()->xmv_ksplit;
    else if (k > 4096 && w->dtype == DT_Q4_0) s = div_up(k, 2048);
    while (s > 1 && k % (s * unit)) s--;
    return (uint32_t)s;
}

/* Whether xmv.comp serves a product of `cols` columns over rows stacked weights like w (w3: SwiGLU)
 * in plan p (split_ok: xmv_ksplits): the shapes below, or under LFM2_XMV_COLS=N every product of up
 * to N columns it has a geometry for, unless a hook names another kernel (LFM2_XMV_OFF,
 * LFM2_MATVEC_OFF, LFM2_MATVEC_COLS, LFM2_QMV_COLS). */
bool k_xmv_serves(const struct gpu *g, const struct plan *p, int cols, const struct gpu_weight *w,
                  bool swiglu, uint64_t rows, bool split_ok)
{
    const struct tuning *tu = tuning();
    struct xmv_geo x;
    if (tu->xmv_off || tu->matvec_off || tu->matvec_cols || tu->qmv_cols) return false;
    if (gemm_serves(p, cols, w)) return false;
    int64_t kper = w->k / xmv_ksplits(g, w, swiglu, split_ok);
    if (tu->xmv_cols) return cols <= tu->xmv_cols && xmv_geometry(g, w, swiglu, rows, cols, kper, &x);
    /* by default where it measured faster on the H200 (bench/22 run 2, LFM2-1.2B per op): one
     * column, Q8_0/Q4_0, k up to 4096 (SwiGLU Q4_0 351 -> 255 us a step, Q8_0 437 -> 333; Q8_0
     * in_proj 143 -> 122, q/k/v 74 -> 52), not the LM head (rows >= 8k: Q8_0 49 -> 67 us) and not
     * ffn_down's k = 8192 (x staged per workgroup: 246 -> 270 us Q4_0, 198 -> 413 Q8_0); Q4_0 up
     * to 4 columns and Q8_0 up to 2 (the 76 layer products, bench/23: Q4_0 1935 -> 1176 us at 2
     * columns, 2493 -> 1677 at 3, 3289 -> 2050 at 4; Q8_0 1278 -> 1149 at 2, but 1527 -> 2092 at 3);
     * Q4_0 at 5-8 columns in passes of <= 4 (whole step 5.98 -> 4.36 ms at 8 columns, bench/23);
     * Q4_0's longer k split over workgroups (xmv_ksplits: ffn_down, bench/24). bench/24 run 7: the
     * Q4_0 LM head too (2 columns: 169 -> 79 us, one column a tie), and BF16 at one column only
     * for q/k/v stacked (68 -> 54 us a step) and the LM head (67 -> 62 us; its other products
     * lost, ffn_down 205 -> 432 us) */
    bool tall = rows >= 8 * (uint64_t)w->k, stacked = rows != (uint64_t)w->rows;
    bool q = w->dtype == DT_Q4_0   ? cols <= 8
             : w->dtype == DT_Q8_0 ? cols <= 2 && !tall
                                   : w->dtype == DT_BF16 && cols == 1 && (tall || stacked);
    return q && kper <= 4096 && xmv_geometry(g, w, swiglu, rows, xmv_pass_cols(cols), kper, &x);
}

static bool matvec_serves(const struct plan *p, int cols, const struct gpu_weight *w, bool swiglu, int n)
{
    const struct tuning *tu = tuning();
    if (tu->matvec_off || gemm_serves(p, cols, w)) return false;
    if (tu->matvec_cols) return cols <= tu->matvec_cols;
    if (n > 1) return cols <= K_MATVEC_COLS;
    if (cols > 1) return false;
    if (w->rows >= 8 * w->k) return true;
    return w->rows >= 3 * w->k && (w->dtype == DT_Q4_0 || (w->dtype == DT_Q8_0 && !swiglu));
}

/* The matrix-vector kernel a product takes, if any (else matmul.comp or the wide plan's gemm):
 * xmv where it serves, else qmv, else matvec.comp where matvec_serves (n stacked weights; split_ok:
 * xmv_ksplits). */
enum mv_kernel { MV_NONE, MV_MATVEC, MV_QMV, MV_XMV };

static enum mv_kernel mv_pick(const struct gpu *g, const struct plan *p, int cols, const struct gpu_weight *w,
                              bool swiglu, uint64_t rows, int n, bool split_ok)
{
    if (k_xmv_serves(g, p, cols, w, swiglu, rows, split_ok)) return MV_XMV;
    if (qmv_serves(p, cols, w)) return MV_QMV;
    return matvec_serves(p, cols, w, swiglu, n) ? MV_MATVEC : MV_NONE;
}

/* The pipeline spec constants and workgroups of one matvec/qmv/xmv dispatch of `cols` columns over
 * `rows` stacked rows of weights like w (swiglu: a gate/up pair). matvec: rows a subgroup keeps (an x load serves them all): Q4_0 4 when that
 * leaves >= 256 workgroups, else 2 (its x traffic is 8 bytes a weight byte a row, so reuse pays:
 * SwiGLU 939 -> 372 us a step from 1 to 4 rows); other types 2 when that leaves >= 512 workgroups,
 * else 1 (more loads in flight for small matrices), SwiGLU 1. LFM2_MATVEC_RT forces it (bench/12). */
/* qmv (the same push block, qmv.comp): rows a subgroup 1, 2 or 4, the most that leave >= 512
 * workgroups at one column (>= 256 at several: each x read from shared memory then serves more
 * rows); x staged in chunks of KC elements, k (rounded up to 1024, so that few k make few
 * pipelines) up to 1024 where it fits the shared memory, else the largest multiple of SG units (a
 * lane's share of a chunk even) that fits; 2 units a lane loaded ahead. LFM2_QMV_RT, LFM2_QMV_KC and
 * LFM2_QMV_U force them (bench/16). xmv: xmv_geometry. */
static int mv_geometry(const struct gpu *g, enum mv_kernel mk, const struct gpu_weight *w, bool swiglu, uint64_t rows,
                       int cols, uint32_t ksplits, const char *op, uint32_t spec[10], uint32_t *n_spec,
                       uint32_t *groups, struct err *e)
{
    uint32_t sg = g->subgroup_size ? g->subgroup_size : 32, nsg = MAX(1u, MATMUL_THREADS / sg);
    if (mk == MV_XMV) {
        struct xmv_geo xg;
        if (!xmv_geometry(g, w, swiglu, rows, cols, w->k / ksplits, &xg))
            return err_set(e, ST_USAGE, "xmv %s: no geometry for k %lld, %d columns", op, (long long)w->k, cols);
        *groups = (uint32_t)div_up(rows, xg.rows_wg);
        const uint32_t xs[10] = {xg.sg, xg.nsg, xg.ksg, xg.spl, xg.sg * xg.nsg, xg.rb, xg.nb, xg.xv, (uint32_t)cols,
                                 (uint32_t)tuning()->xmv_probe};
        memcpy(spec, xs, sizeof xs);
        *n_spec = 10;
        return ST_OK;
    }
    uint32_t rt = 1, kc = 0;
    bool qmv = mk == MV_QMV;
    if (!qmv) {
        rt = !swiglu && div_up(rows, (uint64_t)nsg * 2) >= 512 ? 2 : 1;
        if (w->dtype == DT_Q4_0) rt = div_up(rows, (uint64_t)nsg * 4) >= 256 ? 4 : 2;
        if (tuning()->matvec_rt) rt = (uint32_t)tuning()->matvec_rt;
    } else {
        while (rt < 4 && div_up(rows, (uint64_t)nsg * rt * 2) >= (cols > 1 ? 256u : 512u)) rt *= 2;
        if (tuning()->qmv_rt) rt = (uint32_t)tuning()->qmv_rt;
        /* shared bytes: cols x (KC/4 + KC/32) vec4 of x (144 bytes a 32 elements), and nsg x cols floats of Σx² */
        uint64_t room = g->shared_mem > 4u * nsg * (uint32_t)cols ? g->shared_mem - 4u * nsg * (uint32_t)cols : 0;
        uint64_t cap = room / ((uint64_t)cols * 144) * 32, unit = quant_elems(w->dtype) * sg;
        /* chunks of at most 1024 elements: the whole k of ffn_down (8192, 32 KiB of x) left too few
         * workgroups a multiprocessor (bench/16: 430 -> 248 us a step at one column) */
        uint64_t kc_max = tuning()->qmv_kc ? (uint64_t)tuning()->qmv_kc : 1024;
        if (kc_max < cap) cap = kc_max;
        uint64_t kr = ((uint64_t)w->k + 1023) / 1024 * 1024; /* k rounded: fewer pipelines */
        kc = (uint32_t)(kr <= cap ? kr : cap >= unit ? cap / unit * unit : cap / 32 * 32);
        if (kc < 32)
            return err_set(e, ST_USAGE, "qmv %s: %d columns need %llu bytes of shared memory, the device has %u",
                           op, cols, (unsigned long long)(cols * 144 + 4 * nsg * cols), g->shared_mem);
    }
    while (rt < 4 && div_up(rows, (uint64_t)nsg * rt) > MAX_GROUPS) rt *= 2; /* a vocabulary of 2^19+ rows */
    *groups = (uint32_t)div_up(rows, (uint64_t)nsg * rt);
    if (*groups > MAX_GROUPS)
        return err_set(e, ST_USAGE, "matvec %s: %llu rows need %u workgroups, more than 65535", op,
                       (unsigned long long)rows, *groups);
    uint32_t u = tuning()->qmv_u ? (uint32_t)tuning()->qmv_u : 2;
    const uint32_t ms[7] = {sg, nsg, rt, (uint32_t)cols, sg * nsg, qmv ? kc : tuning()->matvec_words ? 1u : 0u, u};
    memcpy(spec, ms, sizeof ms);
    *n_spec = qmv ? 7 : 6;
    return ST_OK;
}

/* One matvec/qmv/xmv dispatch (mk, as mv_pick chose it with split_ok) over n stacked weights
 * w[0..n-1] (same type and k) writing y[i]; with w3 (n == 1) the SwiGLU variant; xmv past
 * K_XMV_COLS columns in passes, and over long k in workgroups along k (xmv_ksplits) where it may
 * split. */
static int matvec_dispatch(struct gpu *g, struct plan *p, int n, const struct gpu_weight *const w[],
                           const struct gpu_weight *w3, const uint64_t y[], const struct k_norm *norm, uint64_t x,
                           int cols, bool accumulate, int layer, const char *op, const char *kind_prefix,
                           enum mv_kernel mk, bool split_ok, struct err *e)
{
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
    static const char *const kname[] = {[MV_MATVEC] = "matvec", [MV_QMV] = "qmv", [MV_XMV] = "xmv"};
    uint32_t ksplits = mk == MV_XMV ? xmv_ksplits(g, w[0], w3 != NULL, split_ok) : 1;
    char name[40], kind[40];
    snprintf(name, sizeof name, "%s%s%s_%s", kname[mk], w3 ? "_swiglu" : "", ksplits > 1 ? "_fadd" : "",
             kind_dtype(w[0]->dtype));
    snprintf(kind, sizeof kind, "%smatmul%s.%s", kind_prefix ? kind_prefix : "", w3 ? "_swiglu" : "",
             kind_dtype(w[0]->dtype));
    /* one dispatch; xmv in passes of at most K_XMV_COLS columns, pass c0 over columns c0 .. c0+nc-1
     * of x and of each y ([cols][rows_s]), each reading the weights again */
    int pass = mk == MV_XMV ? xmv_pass_cols(cols) : cols;
    for (int c0 = 0; c0 < cols; c0 += pass) {
        int nc = MIN(pass, cols - c0);
        uint32_t spec[10], n_spec = 0, groups = 0;
        int rc = mv_geometry(g, mk, w[0], w3 != NULL, rows, nc, ksplits, op, spec, &n_spec, &groups, e);
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
    return k >= 1 && k % slot_elems(t) == 0 && k <= UINT32_MAX;
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
                       (long long)slot_elems(w->dtype));
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

    bool split_ok = !(norm && norm->w) && accumulate; /* xmv may split k (xmv_ksplits) */
    enum mv_kernel mk = mv_pick(g, p, cols, w, swiglu, (uint64_t)w->rows, 1, split_ok);
    if (mk != MV_NONE)
        return matvec_dispatch(g, p, 1, &w, w3, &y, norm, x, cols, accumulate, layer, op, kind_prefix, mk, split_ok,
                               e);
    /* the wide plan's steps of many columns go to the tiled matrix product */
    if (gemm_serves(p, cols, w))
        return gemm_any(g, p, w, w3, norm, x, y, cols, accumulate, layer, op, kind_prefix, e);

    char name[40], kind[40];
    snprintf(name, sizeof name, "matmul%s_%s", swiglu ? "_swiglu" : "", kind_dtype(w->dtype));
    snprintf(kind, sizeof kind, "%smatmul%s.%s", kind_prefix ? kind_prefix : "", swiglu ? "_swiglu" : "",
             kind_dtype(w->dtype));
    uint64_t bytes = w->bytes + (swiglu ? w3->bytes : 0);
    /* tuning hook for bench/ runs: fewer columns a pass (fewer registers, weights read again) */
    int pass = tuning()->matmul_pass_cols;
    if (pass < 1 || pass > K_MATMUL_MAX_COLS) pass = K_MATMUL_MAX_COLS;
    for (int c0 = 0; c0 < cols; c0 += pass) {
        uint32_t n = (uint32_t)MIN(pass, cols - c0);
        uint32_t spec[MATMUL_SPECS];
        matmul_spec(g, swiglu, n, w->rows, spec);
        uint32_t groups = div_up((uint64_t)w->rows, (MATMUL_THREADS / spec[1]) * spec[2]);
        if (groups > MAX_GROUPS)
            return err_set(e, ST_USAGE, "matmul %s: %lld rows need %u workgroups, more than 65535", op,
                           (long long)w->rows, groups);
        const struct gpu_pipeline *pipe;
        if ((rc = gpu_pipeline(g, name, spec, MATMUL_SPECS, &pipe, e))) return rc;
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
    bool split = tuning()->qkv_split;
    /* the wide plan's gemm: one prep for all when every product goes to it */
    bool gemm = p->kind == PLAN_WIDE && n > 1 && !split;
    for (int i = 0; i < n; i++) gemm = gemm && cols >= k_gemm_min_cols(w[i]->dtype) && w[i]->k == w[0]->k;
    if (gemm) {
        for (int i = 0; i < n; i++) {
            int rc = matmul_check(w[i], NULL, norm, cols, ops[i], e);
            if (rc) return rc;
        }
        return gemm_multi(g, p, n, w, y, norm, x, cols, layer, ops, fused_op, e);
    }
    uint64_t all_rows = 0;
    for (int i = 0; i < n; i++) all_rows += (uint64_t)w[i]->rows;
    enum mv_kernel mk = mv_pick(g, p, cols, w[0], false, all_rows, n, false);
    bool one = n <= MATVEC_MAX_WEIGHTS && mk != MV_NONE && !split;
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

/* Shared-memory bytes of gemm.comp at one geometry (mirrors its shared arrays). */
static uint32_t gemm_shared(bool coopmat, bool swiglu, bool wsplit, uint32_t bm, uint32_t bn, uint32_t bk,
                            uint32_t nt, uint32_t nbuf)
{
    uint32_t nm = swiglu ? 2 : 1;
    if (!coopmat) return nbuf * (nm * bm + bn) * (bk + 1) * 4;
    return nbuf * (nm * bm * (bk + 8) * 2 * (wsplit ? 2 : 1) + bn * (bk + 8) * 2 * 2) + (nt / 32) * 256 * nm * 4;
}

/* The tiles, splits and pipeline of one product (appends nothing). */
static int gemm_setup(struct gpu *g, const struct gpu_weight *w, const struct gpu_weight *w3, uint64_t y, int cols,
                      bool accumulate, bool plain_x, const char *op, const char *kind_prefix, struct gemm_call *c,
                      struct err *e)
{
    bool swiglu = w3 != NULL, cm = g->gemm_coopmat;
    /* the tile rules of weights split into two f16 parts (gemm.comp WSPLIT: F32, Q8_0); Q4_0 keeps
     * them although its weights are now one f16 part (bench/31 measured its -23 % with them) */
    bool wsplit = w->dtype == DT_F32 || is_quant_type(w->dtype);
    /* Tiles: cooperative matrices take 128 rows (64 of each matrix with SwiGLU) x 64 columns, 4
     * subgroups of 32; 64 rows when that leaves too few workgroups to fill the device. The FMA twin
     * takes 64 x 64 with 256 threads. k steps of 32 or 64. Measured choices: bench/06. */
    uint32_t nt = cm ? 128 : 256, bm = cm && !swiglu ? 128 : 64, bn = 64, bk = 32, sgm = 2;
    /* Single products of unsplit weights past 64 columns keep 128 x 64 and take split-k instead
     * (below): on the H200 the 60 single products of LFM2-1.2B took 3.29 and 6.02 ms so at 256 and
     * 512 columns against 4.62 and 8.83 with the smaller tiles (bench/11), and the 76 layer
     * products 3.65 against 4.63 ms at 96 columns, 3.73 against 5.77 at 128 (bench/19). Quantized
     * weights too, with their 4 subgroups stacked along the rows (4 x 1): the 60 Q4_0 single
     * products 11.05 -> 9.98 ms at 512 columns, 5.66 -> 5.38 at 256 (bench/21) */
    bool big = cm && !swiglu && cols > 64 && (!wsplit || is_quant_type(w->dtype));
    if (big && wsplit) sgm = 4;
    /* but Q4_0's (one f16 part since bench/31) take 2 x 2 subgroups and k steps of 32: the 60 Q4_0
     * single products 6840 -> 6023 µs at 512 columns (H100, bench/33 run 1), 2329 -> 2334 at 128
     * (run 3: no change). From 256 columns most go through an f16 copy instead (K_GEMM_WDEQ_COLS) */
    bool q4big = big && w->dtype == DT_Q4_0;
    if (q4big) sgm = 2;
    if (cm && bm == 128 && !big && div_up((uint64_t)w->rows, 128) * div_up((uint64_t)cols, bn) < 256) bm = 64;
    /* and 32 columns when still under ~4 workgroups per multiprocessor: the kernel is bound by
     * latency, so more workgroups beat more reuse (BF16, 2048 rows at 64 columns: 4.1 vs 6.1 ms);
     * not for split weights, whose tile costs twice as much to stage (Q4_0: 20.4 vs 13.9 ms, bench/06) */
    if (cm && !swiglu && !wsplit && !big && div_up((uint64_t)w->rows, bm) * div_up((uint64_t)cols, bn) < 512) bn = 32;
    /* (SwiGLU pairs keep 64 x 64 on small grids: at 64 columns 32 x 32 tiles, 4x the workgroups,
     * took the 16 pairs from 0.85 to 1.96 ms, bench/11) SwiGLU pairs of quantized weights from 512
     * columns take 64 x 128 tiles where they fit (the 16 Q4_0 pairs 9.78 -> 9.46 ms, bench/21;
     * BF16 lost with them, bench/18) */
    if (cm && swiglu && is_quant_type(w->dtype) && cols >= 512 &&
        gemm_shared(cm, swiglu, wsplit, 64, 128, 32, nt, 1) <= g->shared_mem)
        bn = 128;
    /* SwiGLU pairs of unsplit weights from 128 columns: 64 x 128 tiles of 8 subgroups (2 x 4, a 32 x
     * 32 block of each matrix a subgroup) with k steps of 32: the 16 BF16 pairs 1550 -> 1476 µs at
     * 128 columns, 3008 -> 2878 at 256, 5915 -> 5700 at 512; 850 -> 1410 at 64 (bench/25) */
    if (cm && swiglu && !wsplit && cols >= 128 &&
        gemm_shared(cm, swiglu, wsplit, 64, 128, 32, 256, 1) <= g->shared_mem) {
        bn = 128;
        nt = 256;
    }
    /* Narrow steps (up to 64 columns), measured on LFM2-1.2B's layer products (bench/18, bench/19);
     * LFM2_GEMM_NARROW_OFF keeps the tiles above (bench/ before/after):
     *  - up to 16 columns: 64 x 16 tiles, their 4 subgroups stacked along the rows (4 x 1), so no
     *    product runs on padding columns (16 columns: 2.13 against 2.51 ms the whole model);
     *  - 17-32: SwiGLU pairs 64 x 32 (4 x 1); single products of unsplit weights on small grids
     *    keep the 64 x 32 tiles above with 2 x 2 subgroups (the 76 products 1.84 against 2.07 ms
     *    with 128 x 32 4 x 1), the others take 128 x 32 (4 x 1);
     *  - 33-64: single products of unsplit weights on small grids take the tiles of wider steps
     *    (128 x 64, 2 x 2 subgroups, k steps of 64) and 8 splits: the 60 BF16 singles 1888 -> 1283
     *    µs at 64 columns and 1822 -> 1256 at 48 on the H100 (bench/34 run 4) against 128 x 64 4 x 1
     *    tiles with k steps of 32 and up to 32 splits (bench/19: 1.42 against 1.53 ms on the H200
     *    then); 4 or 32 splits for every product lost. Split weights (Q8_0, F32; Q4_0 keeps their
     *    rules) on small grids too, with k steps of 32 (the 128 x 64 tile of split weights needs
     *    them to fit): Q4_0 1785 -> 1518 µs at 64 columns, 1747 -> 1484 at 48; Q8_0 1900 -> 1727,
     *    1879 -> 1705 (bench/34 run 6; F32 not measured).
     * SwiGLU pairs and single products of split weights up to 32 columns keep two k steps of loads
     * in flight (PF = 2): BF16 SwiGLU 636 -> 565 µs at 16 columns, Q4_0 all 76 products 2.73 ->
     * 2.36 ms, Q4_0 singles at 32 columns 1.70 -> 1.58 ms (bench/19). */
    const struct tuning *tu = tuning();
    bool narrow = cm && cols <= 64 && !tu->gemm_narrow_off;
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
    if (!q4big && gemm_shared(cm, swiglu, wsplit, bm, bn, 64, nt, 1) <= g->shared_mem) bk = 64;
    /* tuning hooks for bench/ runs (tuning.h): LFM2_GEMM_TILE (a tile that does not suit this
     * kernel or needs more shared memory than the device has is ignored: the default stays);
     * LFM2_GEMM_ROOF: F16 weights with x as one f16 (no low part, so not f32-accurate) */
    const int *ft = swiglu ? tu->gemm_tile_sw : tu->gemm_tile;
    uint32_t tm = (uint32_t)ft[0], tn = (uint32_t)ft[1], tk = (uint32_t)ft[2];
    uint32_t sm = (uint32_t)ft[3], sn = (uint32_t)ft[4], tnt = cm ? 32 * sm * sn : 256;
    bool fits = tm && (cm ? sm && sn && tm % (16 * sm) == 0 && tn % (16 * sn) == 0 : tm % 16 == 0 && tn % 16 == 0);
    if (fits &&
        gemm_shared(cm, swiglu, wsplit, tm, tn, tk, tnt, 1) <= g->shared_mem) {
        bm = tm;
        bn = tn;
        bk = tk;
        nt = tnt;
        if (cm) sgm = sm;
        fixed_splits = 0; /* a forced tile takes the general split rule (or LFM2_GEMM_SPLITK) */
    }
    bool roof = cm && !swiglu && w->dtype == DT_F16 && tu->gemm_roof;
    /* one buffer of tiles: double-buffered ones (one barrier a step, the next step staged while
     * this one's products run) were slower on the H200 at 64 and 512 columns (bench/11: twice the
     * shared memory of the 48 KiB a workgroup may take); LFM2_GEMM_NBUF=2 (tuning hook) */
    uint32_t nbuf = 1;
    if (tu->gemm_nbuf && gemm_shared(cm, swiglu, wsplit, bm, bn, bk, nt, (uint32_t)tu->gemm_nbuf) <= g->shared_mem)
        nbuf = (uint32_t)tu->gemm_nbuf;
    uint32_t shared = gemm_shared(cm, swiglu, wsplit, bm, bn, bk, nt, nbuf);
    if (shared > g->shared_mem)
        return err_set(e, ST_USAGE, "gemm %s: tile %ux%ux%u needs %u bytes of shared memory, the device has %u", op,
                       bm, bn, bk, shared, g->shared_mem);
    uint32_t gx = div_up((uint64_t)cols, bn), gy = div_up((uint64_t)w->rows, bm);
    if (gx > MAX_GROUPS || gy > MAX_GROUPS)
        return err_set(e, ST_USAGE, "gemm %s: %d columns and %lld rows need %u x %u workgroups, more than 65535", op,
                       cols, (long long)w->rows, gx, gy);
    /* split-k where the tiles leave most multiprocessors idle (under 128 tiles), up to ~512
     * workgroups, each split keeping at least 4 k steps; the splits add into y atomically
     * (gemm.comp). Measured (bench/11): at 64 columns the 60 single products took 2.65 ms split
     * against 3.59 unsplit; at 256 columns splitting 256 tiles in 2 was slower (5.30 vs 4.83 ms) */
    uint32_t steps = div_up((uint64_t)w->k, bk), splits = 1;
    if (cm && !swiglu && gx * gy < 128) splits = MIN(div_up(512, gx * gy), MAX(steps / 4, 1u));
    /* the 128 x 64 tiles past 128 columns: at least 2 splits, and ~128 workgroups, under 1024 tiles
     * (measured best of 2, 4 and 8 at 256 and 512 columns: 2, i.e. 128 and 256 workgroups for
     * the 2048-row products; the LM head, 2048+ tiles, is not split) */
    if (big && bm == 128 && bn == 64 && gx * gy < 1024)
        splits = MIN(MAX(2u, div_up(128, gx * gy)), MAX(steps / 4, 1u));
    if (fixed_splits) splits = MIN(fixed_splits, steps);
    if (tu->gemm_splitk && !swiglu) splits = MIN((uint32_t)tu->gemm_splitk, steps); /* tuning hook */
    uint32_t kper = div_up(steps, splits) * bk;
    splits = div_up((uint64_t)w->k, kper);
    char name[40];
    const char *kern = roof ? "gemm_roof" : cm ? "gemm" : "gemm_fma";
    /* split sums by float atomic add where the device has it (the FADD variants: cooperative
     * matrices, and the twin's BF16 one so that CI runs that path where lavapipe has it) */
    bool fadd = splits > 1 && !roof && g->has_float_atomic_add && !tu->gemm_no_fadd &&
                (cm || w->dtype == DT_BF16);
    snprintf(name, sizeof name, "%s%s%s_%s", kern, swiglu ? "_swiglu" : "", fadd ? "_fadd" : "",
             kind_dtype(w->dtype));
    snprintf(c->kind, sizeof c->kind, "%s%s%s.%s", kind_prefix ? kind_prefix : "", kern, swiglu ? "_swiglu" : "",
             kind_dtype(w->dtype));
    /* loads one k step ahead, two where chosen above, or as asked (LFM2_GEMM_PF: 0, 1, 2); one
     * buffer only */
    pf = nbuf != 1 ? 1 : tu->gemm_pf >= 0 ? (uint32_t)tu->gemm_pf : pf;
    uint32_t probe = nbuf == 1 && pf == 1 ? (uint32_t)tu->gemm_probe : 0;
    c->zero_y = splits > 1 && !accumulate;
    /* a product with no norm and no outputs to zero reads the plain x and splits it while staging
     * (gemm.comp XRAW) instead of after a prep dispatch: at narrow widths a prep costs about what a
     * product does (4.9 µs; 314 µs of a 16-column LFM2-1.2B step). Not with 32-column tiles: there
     * the products took 14-26 % longer (LFM2-1.2B at 32 and 128 columns, bench/19; why was not
     * found). LFM2_GEMM_XRAW_COLS=N: only up to N columns (0: never). */
    c->xraw = cm && plain_x && !c->zero_y && !roof && bn != 32 && (tu->gemm_xraw_cols < 0 || cols <= tu->gemm_xraw_cols);
    /* fragments of a k slice loaded before its products, the next slice's too (gemm.comp FRAG = 2)
     * past 64 columns: the 76 layer products 2.3 % faster at 256 columns, 1.9 % at 512 (products
     * alone 3.9 %); no change at 16 and 64 (bench/19) */
    uint32_t frag = !cm ? 0 : tu->gemm_frag >= 0 ? (uint32_t)tu->gemm_frag : cols > 64 ? 2 : 0;
    uint32_t spec[11] = {32, bm, bn, bk, nt, nbuf, sgm, pf, probe, c->xraw, frag};
    int rc = gpu_pipeline(g, name, spec, 11, &c->pipe, e);
    if (rc) return rc;
    c->pc = (struct push_gemm){matmul_push(w, w3, NULL, 0, y, accumulate), (uint32_t)cols, kper};
    c->groups[0] = gx;
    c->groups[1] = gy;
    c->groups[2] = splits;
    c->bytes = w->bytes + (swiglu ? w3->bytes : 0);
    return ST_OK;
}

/* ---- Q4_0 products through an f16 copy (gemm_wdeq.comp). gemm.comp's Q4_0 tile rounds q·d to
 * f16 as it stages it, once per column tile: at 512 columns that widening is what keeps the Q4_0
 * products at 14.6 ms against F16's 11.2 (H100, gemm_bench, bench/33). From K_GEMM_WDEQ_COLS
 * columns a Q4_0 product is one widening of its weights into an f16 copy (the same rounding) and
 * the F16 product on it, the widening beside the previous product (gemm_wdeq below). LFM2-1.2B
 * Q4_0 steps on the H100 (bench/33 run 4): 512 columns 14.50 -> 13.33 ms, 256 10.76 -> 10.48,
 * but 128 5.81 -> 6.75 and 96 5.53 -> 6.51 (the widening's 2 GB of writes cost more than the
 * tile's redundant dequantization there). Weights whose copy would pass K_GEMM_WDEQ_MAX_BYTES
 * keep the Q4_0 tile. The FMA twin keeps exact weights unless LFM2_GEMM_WDEQ_COLS asks (tests). */
#define K_GEMM_WDEQ_MAX_BYTES (256ull << 20)

struct push_gemm_wdeq {
    uint64_t w[4], sc[4], out[4]; /* gemm_wdeq.comp: w, sc, dst */
    uint32_t start[5], pad;
};
_Static_assert(sizeof(struct push_gemm_wdeq) == 120, "push_gemm_wdeq layout");

static bool gemm_wdeq_serves(const struct gpu *g, int cols, const struct gpu_weight *w)
{
    int from = tuning()->gemm_wdeq_cols >= 0 ? tuning()->gemm_wdeq_cols : g->gemm_coopmat ? K_GEMM_WDEQ_COLS : 0;
    uint64_t copy = 2 * (uint64_t)w->rows * (uint64_t)w->k;
    return w->dtype == DT_Q4_0 && from > 0 && cols >= from && copy <= K_GEMM_WDEQ_MAX_BYTES;
}

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
    uint32_t bpt = tuning()->gemm_wdeq_bpt ? (uint32_t)tuning()->gemm_wdeq_bpt : 1;
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

/* The f16 copies of the weights w[0..n) that gemm_wdeq_serves at `cols` columns (f[i] = *w[i]
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
        wide[i] = gemm_wdeq_serves(g, cols, w[i]);
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
    return p->kind != PLAN_SPEC && n_runs == cols && !tuning()->conv_unfused && cols <= K_MATMUL_MAX_COLS &&
           mv_pick(g, p, cols, w_in, false, (uint64_t)w_in->rows, 1, false) == MV_NONE && !gemm_serves(p, cols, w_in);
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
    uint32_t spec[MATMUL_SPECS];
    matmul_spec(g, false, (uint32_t)cols, w_in->rows, spec);
    if (conv == 1) spec[2] = 3; /* a row group: one channel's B, C and X rows */
    spec[5] = conv;
    uint64_t rows = conv == 1 ? (uint64_t)conv_w->rows : (uint64_t)w_in->rows;
    uint32_t groups = div_up(rows, (MATMUL_THREADS / spec[1]) * (conv == 1 ? 1 : spec[2]));
    if (groups > MAX_GROUPS)
        return err_set(e, ST_USAGE, "%s: %llu rows need %u workgroups, more than 65535", what,
                       (unsigned long long)rows, groups);
    char name[40], kind[48];
    snprintf(name, sizeof name, "matmul_%s", kind_dtype(w_in->dtype));
    snprintf(kind, sizeof kind, "matmul_%s.%s", conv == 1 ? "shortconv" : "dn_conv", kind_dtype(w_in->dtype));
    const struct gpu_pipeline *pipe;
    if ((rc = gpu_pipeline(g, name, spec, MATMUL_SPECS, &pipe, e))) return rc;
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

#define ATTN_PREFILL_THREADS 128u
#define ATTN_PREFILL_MAX_PER_THREAD 8u /* scores and accumulator vec4s a thread holds (MAX_NS, MAX_NA) */

/* Shared bytes of attn_prefill.comp at head dim hd and bq query columns a tile, with kvb (1 or 2)
 * KV block buffers. */
static uint64_t attn_prefill_shared(uint32_t hd, uint32_t bq, uint32_t kvb)
{
    return 4 * ((uint64_t)bq * hd + (uint64_t)kvb * K_KV_BLOCK * (hd + 4) + (uint64_t)bq * K_KV_BLOCK + 3ull * bq);
}

/* Whether attn_prefill.comp's thread layout serves head dim hd with tiles of bq columns (one KV
 * buffer; its rows' softmax takes 4 neighbour lanes: subgroups of at least 4). */
static bool attn_prefill_fits(const struct gpu *g, uint32_t hd, uint32_t bq, uint32_t nt)
{
    uint32_t hd4 = hd / 4;
    return hd % 4 == 0 && g->subgroup_size >= 4 && nt % hd4 == 0 && (bq * hd4) % nt == 0 &&
           bq * hd4 / nt <= ATTN_PREFILL_MAX_PER_THREAD && (bq * K_KV_BLOCK) % nt == 0 &&
           bq * K_KV_BLOCK / nt <= ATTN_PREFILL_MAX_PER_THREAD && attn_prefill_shared(hd, bq, 1) <= g->shared_mem;
}

static int attention_tiled(struct gpu *g, struct plan *p, const struct k_attn_geom *a,
                           const struct push_attention *base, int cols, int layer, struct err *e)
{
    /* the widest tile of at most 32 columns that fits, no wider than the step needs: on the H200
     * 32 columns took 118 µs a layer at a 512-token prefill against 193 µs with 64 (twice the
     * workgroups for the same keys; bench/10, bench/11); 64 only through the tuning hook */
    uint32_t hd = (uint32_t)a->hd, bq = 0, nt = ATTN_PREFILL_THREADS, tnt = (uint32_t)tuning()->attn_nt;
    for (uint32_t b = 32; tnt && b >= 8; b /= 2) /* tuning hook: threads, where some tile fits them */
        if (attn_prefill_fits(g, hd, b, tnt)) nt = tnt;
    for (uint32_t b = 32; b >= 8 && !bq; b /= 2)
        if (attn_prefill_fits(g, hd, b, nt)) bq = b;
    if (!bq)
        return err_set(e, ST_USAGE,
                       "attn.prefill: head dim %d: no tile of 8..64 columns fits %u bytes of shared memory and %u "
                       "threads (8 columns need %llu bytes)",
                       a->hd, g->shared_mem, nt, (unsigned long long)attn_prefill_shared(hd, 8, 1));
    while (bq > 8 && bq / 2 >= (uint32_t)cols && attn_prefill_fits(g, hd, bq / 2, nt)) bq /= 2;
    /* tuning hook for bench/ runs: any tile of 8..64 columns that fits */
    int forced = tuning()->attn_bq;
    if (forced && attn_prefill_fits(g, hd, (uint32_t)forced, nt)) bq = (uint32_t)forced;
    /* keys and values in two buffers where they fit at that tile (the next block's loads then
     * overlap the scores too), else in one */
    uint32_t kv2 = attn_prefill_shared(hd, bq, 2) <= g->shared_mem;
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

#define ATTN_NT 128u /* attn_kv.comp: threads a workgroup, keys a chunk */

/* Shared bytes of attn_kv.comp at head dim hd, gq q heads a kv head, nt threads in subgroups of
 * sg, with the prep or without (mirrors its shared arrays). */
static uint64_t attn_shared(uint64_t hd, uint64_t gq, uint64_t nt, uint64_t sg, bool prep)
{
    uint64_t b = 4 * gq * hd + 4 * 2 * gq * nt + 4 * 2 * gq * (nt / sg) + 16 * nt + 4 * 2 * nt;
    return b + (prep ? 4 * (gq + 2) * hd + 4 * hd + 8 * (hd / 2) : 4 + 4 + 8);
}

/* Key splits of attn_kv.comp for `cols` columns of up to `keys` keys: none while the kv heads ×
 * columns fill `target` workgroups or a column's keys are at most two chunks; else enough splits
 * of at least a chunk each to reach it (bench/35). */
static uint32_t attn_splits(uint32_t keys, uint32_t wg, uint32_t nt)
{
    if (tuning()->attn_split) return (uint32_t)tuning()->attn_split;
    uint32_t target = tuning()->attn_split_wg ? (uint32_t)tuning()->attn_split_wg : K_ATTN_SPLIT_WG;
    if (wg >= target || keys <= 2 * nt) return 1;
    return MIN(div_up(target, wg), div_up(keys, nt));
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
    /* 256 threads: as many subgroups as fit, each taking every NSG-th key */
    uint32_t sg = g->subgroup_size ? g->subgroup_size : 32, nsg = MAX(1u, 256u / sg);
    /* ... as long as their partial outputs (s_acc, s_m, s_l), and the fused prep's head copies,
     * fit the shared memory: hd 256 at a subgroup of 8 would take 33 KiB of lavapipe's 32 */
    uint64_t hd = (uint64_t)a->hd, fixed = 4 * (fused ? 6 * hd : 7);
    while (nsg > 1 && (uint64_t)nsg * (hd + 4) * 4 + fixed > (g->shared_mem ? g->shared_mem : 32768)) nsg /= 2;
    uint32_t spec[5] = {sg, (uint32_t)a->hd, nsg, sg * nsg, fused};
    const struct gpu_pipeline *pipe;
    int rc = gpu_pipeline(g, "attention", spec, 5, &pipe, e);
    if (rc) return rc;
    struct dispatch *d = add(p, pipe, pc, sizeof *pc, (uint32_t)a->n_h, (uint32_t)cols, kind, layer, "attn", bytes);
    attn_decode_outputs(d, a, fused, offsetof(struct push_attn_decode, a.dst));
    return ST_OK;
}

bool k_attn_by_kv_head(int hd, int64_t keys, int cols, bool prefill)
{
    if (tuning()->attn_kv_keys >= 0) return keys > tuning()->attn_kv_keys;
    if (prefill) return cols <= K_ATTN_KV_MAX_COLS && keys > K_ATTN_KV_KEYS;
    if (cols >= K_ATTN_KV_COLS) return true;
    return keys > (cols == 1 ? MAX(K_ATTN_KV_KEYS_1, 2 * (int64_t)hd) : K_ATTN_KV_KEYS);
}

/* Attention outside the wide plan's prefill: by kv head where k_attn_by_kv_head says (attn_kv.comp,
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
    if (!k_attn_by_kv_head((int)a->hd, keys, cols, prefill))
        return attention_by_q_head(g, p, a, pc, cols, kind, fused, bytes, layer, e);
    uint32_t sg = g->subgroup_size ? g->subgroup_size : 32, hd = (uint32_t)a->hd, gq = (uint32_t)(a->n_h / a->n_kv);
    uint64_t smem = g->shared_mem ? g->shared_mem : 32768;
    uint32_t nt = MAX(ATTN_NT, sg);
    while (nt > sg && nt / 2 >= hd / 4 && attn_shared(hd, gq, nt, sg, fused) > smem) nt /= 2;
    if (attn_shared(hd, gq, nt, sg, fused) > smem) /* a group too large for the device's shared memory */
        return attention_by_q_head(g, p, a, pc, cols, kind, fused, bytes, layer, e);
    uint32_t n_kv = (uint32_t)a->n_kv;
    uint32_t nspl = attn_splits(keys, n_kv * (uint32_t)cols, nt), kper = 0;
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
    if (n_runs != cols || p->kind == PLAN_SPEC || tuning()->attn_unfused) {
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
                           (long long)slot_elems(t->dtype));
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
