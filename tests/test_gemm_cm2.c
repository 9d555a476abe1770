/* test_gemm_cm2.c - the matrix product on VK_NV_cooperative_matrix2 (k_gemm_cm2, gemm_cm2.comp)
 * against a CPU reference (double accumulation) on fresh random inputs, outputs poisoned with NaN
 * first and a poisoned guard after y that must stay untouched, for F16 and BF16 weights, every
 * activation mode (serving: x rounded to f16; exact: hi + lo; x given as f16), shapes that are not
 * multiples of any tile, and several tiles. On a device without coopmat2 (lavapipe) the products
 * are skipped with a message; what needs no such device runs everywhere: the embedded prebuilt
 * SPIR-V, the refusal naming the missing extension, the default tile rule, and the pipeline
 * statistics the bench prints (gpu_pipeline_stats: empty where not captured). One line a product
 * case with its pipeline-creation and run times (stdout line-buffered: a cut run shows how far it
 * got). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "kernels.h"
#include "plan.h"
#include "shaders.h"
#include "testutil.h"

#define POISON 0x7fc00000u
#define GUARD 64 /* floats after y that no store may reach */

static struct gpu g;
static struct t_rng rng;
static struct err e;

static struct gpu_buf dev_alloc(uint64_t n)
{
    struct gpu_buf b = {0};
    int rc = gpu_alloc(&g, n, GPU_MEM_DEVICE, &b, &e);
    T_CHECK(rc == ST_OK, "gpu_alloc %llu: %s", (unsigned long long)n, e.msg);
    return b;
}

static void up(const struct gpu_buf *b, const void *src, uint64_t n)
{
    int rc = gpu_upload(&g, b, 0, src, n, &e);
    T_CHECK(rc == ST_OK, "gpu_upload: %s", e.msg);
}

static void down(const struct gpu_buf *b, void *dst, uint64_t n)
{
    int rc = gpu_download(&g, b, 0, dst, n, &e);
    T_CHECK(rc == ST_OK, "gpu_download: %s", e.msg);
}

/* One dispatch of the kernel `name` (no specialization) with push block `push` over `groups`
 * workgroups along x, recorded, submitted and waited for; false (and a failed check) when any step
 * fails. */
static bool run_one(const char *name, const void *push, size_t size, uint32_t groups)
{
    const struct gpu_pipeline *pp;
    int rc = gpu_pipeline(&g, name, NULL, 0, &pp, &e);
    T_CHECK(rc == ST_OK, "%s: %s", name, e.msg);
    if (rc) return false;
    struct plan p = {.kind = PLAN_WIDE};
    plan_add(&p, pp, push, (uint32_t)size, groups, 1, 1);
    rc = gpu_cmd_begin(&g, &e);
    T_CHECK(rc == ST_OK, "gpu_cmd_begin: %s", e.msg);
    if (!rc) {
        plan_record(&g, &p, -1);
        rc = gpu_submit_wait(&g, NULL, &e);
        T_CHECK(rc == ST_OK, "gpu_submit_wait: %s", e.msg);
    }
    plan_free(&p);
    return rc == ST_OK;
}

/* Every prebuilt variant is embedded (shaders/variants.txt's prebuilt lines). */
static void test_embedded(void)
{
    static const char *const modes[] = {"gemm_cm2", "gemm_cm2_exact", "gemm_cm2_xf16",
                                        "gemm_cm2_prep"};
    static const char *const types[] = {"f16", "bf16", "q8_0", "q4_0"};
    for (size_t m = 0; m < ARRAY_LEN(modes); m++)
        for (size_t t = 0; t < ARRAY_LEN(types); t++) {
            char name[40];
            snprintf(name, sizeof name, "%s_%s", modes[m], types[t]);
            const struct shader_blob *b = shader_blobs;
            while (b->name && strcmp(b->name, name))
                b++;
            T_CHECK(b->name && b->size > 20 && b->code[0] == 0x07230203u &&
                        b->code[1] == 0x00010600u,
                    "%s: embedded as SPIR-V 1.6", name);
        }
}

/* The default tile and splits (select_path.c sel_gemm_cm2_tile): 128 x 128 x 64 (SwiGLU pairs: x
 * 32, never split), single products of fewer than 128 tiles split k into floor(128 / tiles)
 * ranges of at least 512 (8 steps), 64 x 64 x 32 only where even the splits leave under 32
 * workgroups; PREP keeps 64 x 64 x 32. */
static void test_tile_rule(void)
{
    struct gpu h = g;
    h.coopmat2_max_invocations = 1024;
    static const struct {
        int64_t rows, k;
        int cols;
        bool pair, prep;
        uint32_t bm, bn, bk, nt, splits, kper;
        uint64_t part; /* bytes of the partial planes */
    } rows[] = {
        {8192, 2048, 512, false, false, 128, 128, 64, 256, 1, 2048, 0},  /* 256 tiles */
        {6144, 2048, 512, false, false, 128, 128, 64, 256, 1, 2048, 0},  /* 192 */
        {3072, 2048, 512, false, false, 128, 128, 64, 256, 1, 2048, 0},  /* 96: a split would not fill more */
        {2048, 2048, 512, false, false, 128, 128, 64, 256, 2, 1024, 4u << 20}, /* 64: 2 x 1024 */
        {2048, 8192, 512, false, false, 128, 128, 64, 256, 2, 4096, 4u << 20}, /* w2 */
        {2048, 2048, 256, false, false, 128, 128, 64, 256, 4, 512, 6u << 20},  /* 32: 4 x 512 */
        {512, 2048, 512, false, false, 128, 128, 64, 256, 4, 512, 3u << 20},   /* 16: 8 asked, 4 x 512 */
        {2048, 8192, 256, false, false, 128, 128, 64, 256, 4, 2048, 6u << 20},
        {8192, 2048, 512, true, false, 128, 128, 32, 256, 1, 2048, 0},   /* a SwiGLU pair: k 32, no split */
        {2048, 2048, 128, true, false, 64, 64, 32, 128, 1, 2048, 0},     /* 16 tiles of 128: 64 x 64, no split */
        {512, 2048, 16, true, false, 64, 64, 32, 128, 1, 2048, 0},       /* 8 tiles: 64 x 64 */
        {8192, 2048, 512, false, true, 64, 64, 32, 128, 1, 2048, 0},     /* PREP: its own tile */
        {512, 512, 16, false, false, 64, 64, 32, 128, 2, 256, 32768},     /* 8 x 1 tiles of 64, k 2 x 256 */
        {64, 96, 16, false, false, 64, 64, 32, 128, 1, 96, 0},           /* k under 2 ranges of 256 */
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        struct sel_cm2_tile t = k_gemm_cm2_tile(&h, rows[i].rows, rows[i].k, rows[i].cols, rows[i].pair, rows[i].prep);
        struct sel s = k_sel(&h, PLAN_WIDE);
        uint32_t kper = sel_gemm_cm2_kper(&t, rows[i].k);
        uint64_t part = sel_gemm_cm2_part_bytes(&t, rows[i].rows, rows[i].k, rows[i].cols);
        T_CHECK(t.bm == rows[i].bm && t.bn == rows[i].bn && t.bk == rows[i].bk && t.nt == rows[i].nt &&
                    t.splits == rows[i].splits && kper == rows[i].kper && part == rows[i].part &&
                    sel_gemm_cm2_tile(&s, rows[i].rows, rows[i].k, rows[i].cols, rows[i].pair, rows[i].prep).splits ==
                        t.splits,
                "%lld x %lld at %d%s%s: %ux%ux%u/%u, %u splits, kper %u, %llu part bytes", (long long)rows[i].rows,
                (long long)rows[i].k, rows[i].cols, rows[i].pair ? " pair" : "", rows[i].prep ? " prep" : "", t.bm,
                t.bn, t.bk, t.nt, t.splits, kper, (unsigned long long)part);
    }
    /* kper: ragged last ranges where k is not a multiple of the unit, multiples of bk below 8 steps */
    struct sel_cm2_tile t3 = {64, 64, 32, 128, 3};
    T_CHECK(sel_gemm_cm2_kper(&t3, 520) == 192 && sel_gemm_cm2_kper(&t3, 2048) == 768 &&
                sel_gemm_cm2_kper(&t3, 64) == 32,
            "kper of 3 splits: %u %u %u", sel_gemm_cm2_kper(&t3, 520), sel_gemm_cm2_kper(&t3, 2048),
            sel_gemm_cm2_kper(&t3, 64));
    h.coopmat2_max_invocations = 128;
    struct sel_cm2_tile t = k_gemm_cm2_tile(&h, 8192, 2048, 512, false, false);
    T_CHECK(t.nt <= 128, "a device of 128-invocation workgroups: %u", t.nt);
}

/* --list-devices' gemm path line: the serving precision's path after the automatic one where
 * gemm_cm2 is usable. */
static void test_list_line(void)
{
    const char *nv = k_gemm_path_auto(true, true, false);
    T_CHECK(!strncmp(nv, "nv (gemm:", 9) && !strstr(nv, "serving"), "no cm2: %s", nv);
    const char *cm2 = k_gemm_path_auto(true, true, true);
    T_CHECK(!strncmp(cm2, "nv (gemm:", 9) &&
                strstr(cm2, "; serving precision: cm2 (gemm_cm2: VK_NV_cooperative_matrix2) from 128 columns"),
            "cm2: %s", cm2);
}

/* What k_gemm_cm2 refuses, with a message naming why. */
static void test_refusals(void)
{
    struct gpu_buf b = dev_alloc(4096);
    struct gpu_weight w = {b.addr, DT_F16, 16, 16, 512}, w3;
    struct plan p = {0};
    struct k_cm2_product m = {&w, NULL, b.addr, b.addr + 1024, 16, false, K_CM2_X_SERVING, 0};
    int rc;
    if (!g.has_coopmat2) {
        rc = k_gemm_cm2(&g, &p, &m, NULL, 0, "t", &e);
        T_CHECK(rc == ST_USAGE && strstr(e.msg, "VK_NV_cooperative_matrix2") && p.n == 0,
                "no coopmat2: rc %d, %s", rc, e.msg);
        return;
    }
    w.dtype = DT_F32;
    rc = k_gemm_cm2(&g, &p, &m, NULL, 0, "t", &e);
    T_CHECK(rc == ST_USAGE && strstr(e.msg, "F32"), "F32: rc %d, %s", rc, e.msg);
    w.dtype = DT_Q4_0; /* k 16: not a whole block */
    rc = k_gemm_cm2(&g, &p, &m, NULL, 0, "t", &e);
    T_CHECK(rc == ST_USAGE && strstr(e.msg, "multiple of 32"), "Q4_0 k 16: rc %d, %s", rc, e.msg);
    w.dtype = DT_BF16;
    m.x = b.addr + 8;
    rc = k_gemm_cm2(&g, &p, &m, NULL, 0, "t", &e);
    m.x = b.addr;
    T_CHECK(rc == ST_USAGE && strstr(e.msg, "aligned"), "unaligned x: rc %d, %s", rc, e.msg);
    w.k = 18; /* a prepared x comes in units of 4 */
    m.xmode = K_CM2_X_PREP;
    rc = k_gemm_cm2(&g, &p, &m, NULL, 0, "t", &e);
    m.xmode = K_CM2_X_SERVING;
    T_CHECK(rc == ST_USAGE && strstr(e.msg, "multiple of 4"), "prep k 18: rc %d, %s", rc, e.msg);
    w.k = 20; /* the aligned kernels: rows on 16 bytes */
    for (int mode = K_CM2_X_SERVING; mode <= K_CM2_X_GIVEN_F16; mode++) {
        m.xmode = (enum k_cm2_x)mode;
        rc = k_gemm_cm2(&g, &p, &m, NULL, 0, "t", &e);
        T_CHECK(rc == ST_USAGE && strstr(e.msg, "multiple of 8"), "mode %d k 20: rc %d, %s", mode,
                rc, e.msg);
    }
    m.xmode = K_CM2_X_SERVING;
    w.k = 16;
    struct sel_cm2_tile bad = {48, 64, 24, 128, 1};
    rc = k_gemm_cm2(&g, &p, &m, &bad, 0, "t", &e);
    T_CHECK(rc == ST_USAGE && strstr(e.msg, "tile"), "tile 48x64x24: rc %d, %s", rc, e.msg);
    m.w3 = &w3; /* SwiGLU pairs: same shape, no residual, no exact decode mode */
    w3 = w;
    w3.rows = 32;
    rc = k_gemm_cm2(&g, &p, &m, NULL, 0, "t", &e);
    T_CHECK(rc == ST_USAGE && strstr(e.msg, "SwiGLU weights differ"), "w3 rows 32: rc %d, %s", rc,
            e.msg);
    w3.rows = 16;
    m.accumulate = true;
    rc = k_gemm_cm2(&g, &p, &m, NULL, 0, "t", &e);
    T_CHECK(rc == ST_USAGE && strstr(e.msg, "no accumulation"), "SwiGLU + accumulate: rc %d, %s",
            rc, e.msg);
    m.accumulate = false;
    m.xmode = K_CM2_X_EXACT;
    rc = k_gemm_cm2(&g, &p, &m, NULL, 0, "t", &e);
    T_CHECK(rc == ST_USAGE && strstr(e.msg, g.has_coopmat2_per_element ? "served" : "per-element"),
            "SwiGLU exact decode: rc %d, %s", rc, e.msg);
    T_CHECK(p.n == 0, "nothing appended by refusals");
}

/* gemm_xprep_f16 (gemm_xprep.comp F16OUT: the x of gemm_cm2 in serving precision), on any device:
 * x' = x, or its RMSNorm g x / rms(x), as plain f16 [cols][k] (8 bytes per 4 elements), each value
 * x' rounded to nearest; the bytes after it untouched. */
static void test_xprep_f16(void)
{
    enum { COLS = 3, K = 40, TAIL = 16 };
    struct {
        uint64_t x, xo, gain, y[4];
        uint32_t k, gdtype;
        float eps;
        uint32_t plus1, rows[4];
    } xp;
    _Static_assert(sizeof xp == 88, "gemm_xprep's push block");
    float x[COLS * K], gain[K];
    for (int i = 0; i < COLS * K; i++)
        x[i] = t_rng_normal(&rng);
    for (int i = 0; i < K; i++)
        gain[i] = 0.5f + 0.01f * (float)i;
    struct gpu_buf xb = dev_alloc(sizeof x), gb = dev_alloc(sizeof gain),
                   ob = dev_alloc((COLS * K + TAIL) * 2);
    up(&xb, x, sizeof x);
    up(&gb, gain, sizeof gain);
    for (int norm = 0; norm < 2; norm++) {
        uint16_t out[COLS * K + TAIL];
        int rc = gpu_fill(&g, &ob, POISON, &e);
        T_CHECK(rc == ST_OK, "gpu_fill: %s", e.msg);
        memset(&xp, 0, sizeof xp);
        xp.x = xb.addr;
        xp.xo = ob.addr;
        xp.gain = norm ? gb.addr : 0;
        xp.k = K;
        xp.gdtype = DT_F32;
        xp.eps = 1e-5f;
        if (!run_one("gemm_xprep_f16", &xp, sizeof xp, COLS)) return;
        down(&ob, out, sizeof out);
        int bad = 0;
        for (int c = 0; c < COLS; c++) {
            double ss = 0;
            for (int i = 0; i < K; i++)
                ss += (double)x[c * K + i] * x[c * K + i];
            double inv = norm ? 1 / sqrt(ss / K + 1e-5) : 1;
            for (int i = 0; i < K; i++) {
                double want = x[c * K + i] * (norm ? gain[i] * inv : 1);
                float got = f16_to_f32(out[c * K + i]);
                if (!(fabs(got - want) <= fabs(want) * 1.5e-3 + 1e-6)) bad++;
            }
        }
        uint32_t tail[TAIL / 2];
        memcpy(tail, out + COLS * K, sizeof tail); /* COLS * K even: whole poisoned words */
        for (int i = 0; i < TAIL / 2; i++)
            bad += tail[i] != POISON;
        T_CHECK(bad == 0, "gemm_xprep_f16 %s: %d elements wrong or past the end",
                norm ? "normed" : "plain", bad);
    }
}

/* gemm_reduce (gemm_reduce.comp, after a split gemm_cm2 product), on any device: y[i] += Σ_s
 * part[s][i] in order s = 0, 1, ... (f32), for n not a multiple of the 256-wide groups and a grid
 * smaller than n (the stride loop); the word after y untouched. */
static void test_reduce(void)
{
    enum { N = 1000, PARTS = 3 };
    struct {
        uint64_t y, part;
        uint32_t n, parts;
    } rp;
    _Static_assert(sizeof rp == 24, "gemm_reduce's push block");
    float y[N + 1], part[PARTS * N], want[N];
    for (int i = 0; i < N; i++) y[i] = t_rng_normal(&rng);
    for (int i = 0; i < PARTS * N; i++) part[i] = t_rng_normal(&rng);
    memcpy(&y[N], &(uint32_t){POISON}, 4);
    for (int i = 0; i < N; i++) {
        float v = y[i];
        for (int j = 0; j < PARTS; j++) v += part[j * N + i];
        want[i] = v;
    }
    struct gpu_buf yb = dev_alloc(sizeof y), pb = dev_alloc(sizeof part);
    up(&yb, y, sizeof y);
    up(&pb, part, sizeof part);
    rp.y = yb.addr;
    rp.part = pb.addr;
    rp.n = N;
    rp.parts = PARTS;
    if (!run_one("gemm_reduce", &rp, sizeof rp, 2)) return; /* 512 invocations for 1000 outputs */
    float got[N + 1];
    down(&yb, got, sizeof got);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += memcmp(&got[i], &want[i], 4) != 0;
    T_CHECK(bad == 0 && !memcmp(&got[N], &(uint32_t){POISON}, 4),
            "gemm_reduce: %d of %d sums differ from y + part[0] + part[1] + part[2], or past the end", bad, N);
}

/* gpu_pipeline_stats: the driver's statistics where a bench build captured them (the query
 * succeeds), else "" (the product's builds enable no VK_KHR_pipeline_executable_properties). */
static void test_pipeline_stats(void)
{
    const struct gpu_pipeline *pipe;
    int rc = gpu_pipeline(&g, "copy", NULL, 0, &pipe, &e);
    T_CHECK(rc == ST_OK, "gpu_pipeline copy: %s", e.msg);
    if (rc) return;
    char stats[512] = "x";
    gpu_pipeline_stats(&g, pipe, stats, sizeof stats);
    /* where captured, the query succeeds (a driver may report no statistic at all) */
    T_CHECK(g.has_exec_stats ? strncmp(stats, "(no statistics", 14) != 0 : stats[0] == 0,
            "statistics %s captured: '%s'", g.has_exec_stats ? "" : "not", stats);
    printf("pipeline statistics of copy: %s\n", *stats ? stats : "(none captured)");
}

static float round_f16(float v)
{
    return f16_to_f32(f32_to_f16(v));
}

/* x in gemm_xprep.comp's cooperative-matrix layout: per 4 elements f16 hi0..hi3 then lo0..lo3 (hi
 * the top 11 significant bits by masking, lo the f16 of the rest); n a multiple of 4 */
static void up_prepared(const struct gpu_buf *b, const float *x, size_t n)
{
    uint16_t *h = malloc(n * 4);
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], 4);
        u &= 0xffffe000u;
        float hi;
        memcpy(&hi, &u, 4);
        h[(i / 4) * 8 + i % 4] = f32_to_f16(hi);
        h[(i / 4) * 8 + 4 + i % 4] = f32_to_f16(x[i] - hi);
    }
    up(b, h, n * 4);
    free(h);
}

/* A random [rows, k] weight of type t in the device layout (*bytes of it) and its values: F16/BF16
 * from 0.05·N(0, 1); Q8_0/Q4_0 random quants with scales in [0.002, 0.004) (made as file blocks,
 * then weight_repack). */
static uint8_t *make_weight(enum dtype t, int rows, int k, uint64_t *bytes, double *val)
{
    size_t n = (size_t)rows * k;
    *bytes = weight_bytes(t, rows, k);
    uint8_t *file = malloc(*bytes), *dev = malloc(*bytes);
    if (t == DT_F16 || t == DT_BF16) {
        for (size_t i = 0; i < n; i++) {
            float v = 0.05f * t_rng_normal(&rng);
            uint16_t h = t == DT_F16 ? f32_to_f16(v) : f32_to_bf16(v);
            memcpy(file + 2 * i, &h, 2);
        }
    } else {
        size_t blk = t == DT_Q8_0 ? 34 : 18;
        for (size_t b = 0; b < n / 32; b++) {
            uint16_t d = f32_to_f16(0.002f * (1.0f + t_rng_uniform(&rng)));
            memcpy(file + b * blk, &d, 2);
            for (size_t j = 2; j < blk; j++) {
                uint8_t q = (uint8_t)t_rng_u32(&rng);
                file[b * blk + j] = t == DT_Q8_0 && q == 0x80 ? 0x81 : q; /* int8 in [-127, 127] */
            }
        }
    }
    weight_repack(t, rows, k, file, 0, *bytes, dev);
    for (int r = 0; r < rows; r++)
        for (int i = 0; i < k; i++)
            val[(size_t)r * k + i] = weight_get(t, rows, k, dev, r, i);
    free(file);
    return dev;
}

/* ref = W x and ref_r = W_r x_r (the operands as the kernel multiplies them), [cols][rows] */
static void product_ref(const double *w, const double *wr, const float *x, const double *xr,
                        int rows, int k, int cols, double *ref, double *ref_r)
{
    for (int c = 0; c < cols; c++)
        for (int n = 0; n < rows; n++) {
            const double *wn = w + (size_t)n * k, *wrn = wr + (size_t)n * k,
                         *xrc = xr + (size_t)c * k;
            const float *xc = x + (size_t)c * k;
            double s = 0, sr = 0;
            for (int i = 0; i < k; i++) {
                s += wn[i] * xc[i];
                sr += wrn[i] * xrc[i];
            }
            ref[(size_t)c * rows + n] = s;
            ref_r[(size_t)c * rows + n] = sr;
        }
}

enum epilogue { EPI_NONE, EPI_ACC, EPI_SWIGLU };

static double silu(double v)
{
    return v / (1 + exp(-v));
}

/* One product: random W (rows x k, type t; with SwiGLU a W3 too), x (cols x k), and with the
 * residual a random y to add to; checked against the reference of what the mode multiplies at 2e-4
 * of the largest output (f32 accumulation; products of f16 values are exact): x rounded to f16 but
 * in the exact modes, w rounded to f16 (as the decode does) but F16, BF16 and Q8_0's split in the
 * exact modes; and, but in the exact modes, against the plain reference at 4e-3 (each rounding is
 * 2^-11 relative an element). y poisoned first (but with the residual), and a poisoned guard after
 * it that must stay untouched. */
static void cm2_case(enum dtype t, int rows, int k, int cols, enum k_cm2_x mode, enum epilogue epi,
                     const struct sel_cm2_tile *tile)
{
    size_t nw = (size_t)rows * k, nx = (size_t)cols * k, ny = (size_t)cols * rows;
    int nm = epi == EPI_SWIGLU ? 2 : 1;
    bool exact = mode == K_CM2_X_EXACT || mode == K_CM2_X_PREP,
         wround = (t == DT_Q8_0 && !exact) || t == DT_Q4_0;
    uint16_t *xh = malloc(nx * 2);
    float *x = malloc(nx * 4), *y = malloc((ny + GUARD) * 4), *y0 = malloc(ny * 4);
    double *xr = malloc(nx * sizeof *xr), *ref[2], *ref_r[2];
    for (size_t i = 0; i < nx; i++) {
        x[i] = t_rng_normal(&rng);
        xh[i] = f32_to_f16(x[i]);
        xr[i] = exact ? x[i] : round_f16(x[i]);
    }
    struct gpu_buf wb[2];
    struct gpu_weight w[2];
    for (int m = 0; m < nm; m++) {
        uint64_t wbytes;
        double *wv = malloc(nw * sizeof *wv), *wr = malloc(nw * sizeof *wr);
        uint8_t *wdev = make_weight(t, rows, k, &wbytes, wv);
        for (size_t i = 0; i < nw; i++)
            wr[i] = wround ? round_f16((float)wv[i]) : wv[i];
        ref[m] = malloc(ny * sizeof(double));
        ref_r[m] = malloc(ny * sizeof(double));
        product_ref(wv, wr, x, xr, rows, k, cols, ref[m], ref_r[m]);
        wb[m] = dev_alloc(wbytes);
        up(&wb[m], wdev, wbytes);
        w[m] = (struct gpu_weight){wb[m].addr, t, rows, k, wbytes};
        free(wv);
        free(wr);
        free(wdev);
    }
    for (size_t i = 0; i < ny; i++) {
        y0[i] = epi == EPI_ACC ? t_rng_normal(&rng) : 0;
        if (epi == EPI_SWIGLU) {
            ref[0][i] = silu(ref[0][i]) * ref[1][i];
            ref_r[0][i] = silu(ref_r[0][i]) * ref_r[1][i];
        } else {
            ref[0][i] += y0[i];
            ref_r[0][i] += y0[i];
        }
    }
    struct gpu_buf xb = dev_alloc(nx * 4), yb = dev_alloc((ny + GUARD) * 4);
    if (mode == K_CM2_X_GIVEN_F16)
        up(&xb, xh, nx * 2);
    else if (mode == K_CM2_X_PREP)
        up_prepared(&xb, x, nx);
    else
        up(&xb, x, nx * 4);
    int rc = gpu_fill(&g, &yb, POISON, &e);
    T_CHECK(rc == ST_OK, "gpu_fill: %s", e.msg);
    if (epi == EPI_ACC) up(&yb, y0, ny * 4);
    /* split k (the tile's or the default rule's): the partial planes, poisoned too */
    struct sel_cm2_tile tt = tile ? *tile : k_gemm_cm2_tile(&g, rows, k, cols, epi == EPI_SWIGLU, mode == K_CM2_X_PREP);
    uint64_t part_bytes = sel_gemm_cm2_part_bytes(&tt, rows, k, cols);
    struct gpu_buf partb = {0};
    if (part_bytes) {
        partb = dev_alloc(part_bytes);
        rc = gpu_fill(&g, &partb, POISON, &e);
        T_CHECK(rc == ST_OK, "gpu_fill: %s", e.msg);
    }
    int n_disp = part_bytes ? 2 : 1;
    struct plan p = {.kind = PLAN_WIDE};
    struct k_cm2_product pr = {
        &w[0], epi == EPI_SWIGLU ? &w[1] : NULL, xb.addr, yb.addr, cols, epi == EPI_ACC, mode, partb.addr};
    double t0 = now_us(); /* the first use of a (variant, tile) creates its pipeline here */
    rc = k_gemm_cm2(&g, &p, &pr, tile, 3, "ffn", &e);
    double t_record = now_us() - t0;
    T_CHECK(rc == ST_OK, "k_gemm_cm2: %s", e.msg);
    static const char *const kinds[] = {"gemm_cm2", "gemm_cm2_exact", "gemm_cm2_xf16",
                                        "gemm_cm2_prep"};
    static const char *const tname[] = {"f32", "f16", "bf16", "q8_0", "q4_0"};
    char kind[40];
    snprintf(kind, sizeof kind, "%s%s.%s", kinds[mode], epi == EPI_SWIGLU ? "_swiglu" : "",
             tname[t]);
    if (rc == ST_OK) {
        T_CHECK(p.n == n_disp && !strcmp(p.d[0].kind, kind) && p.d[0].layer == 3 &&
                    !strcmp(p.d[0].op, "ffn") && p.d[0].bytes == w[0].bytes * (uint64_t)nm &&
                    p.d[0].n_out == n_disp &&
                    (n_disp == 1 || (!strcmp(p.d[1].kind, "gemm_cm2_reduce") && p.d[1].bytes == 0 &&
                                     p.d[0].groups[2] == (k + sel_gemm_cm2_kper(&tt, k) - 1) / sel_gemm_cm2_kper(&tt, k))),
                "tags: %s, %d dispatches (%d expected)", p.n ? p.d[0].kind : "(none)", p.n, n_disp);
        rc = gpu_cmd_begin(&g, &e);
        T_CHECK(rc == ST_OK, "gpu_cmd_begin: %s", e.msg);
        plan_record(&g, &p, -1);
        t0 = now_us();
        rc = gpu_submit_wait(&g, NULL, &e);
        double t_run = now_us() - t0;
        T_CHECK(rc == ST_OK, "gpu_submit_wait: %s", e.msg);
        down(&yb, y, (ny + GUARD) * 4);
        double num = 0, num_r = 0, den = 0;
        int bad = 0, guard = 0;
        for (size_t i = 0; i < ny; i++) {
            if (!isfinite(y[i])) bad++;
            num = fmax(num, fabs(y[i] - ref[0][i]));
            num_r = fmax(num_r, fabs(y[i] - ref_r[0][i]));
            den = fmax(den, fabs(ref[0][i]));
        }
        for (int i = 0; i < GUARD; i++) {
            uint32_t u;
            memcpy(&u, &y[ny + i], 4);
            guard += u != POISON;
        }
        double tight = num_r / den, loose = num / den;
        T_CHECK(bad == 0 && guard == 0 && tight < 2e-4 && (exact || loose < 4e-3),
                "%s [%d x %d] x %d cols%s, tile %ux%ux%u: %d non-finite, %d guard words written, "
                "error %.3g (to "
                "the plain reference: %.3g)",
                kind, rows, k, cols, epi == EPI_ACC ? " y +=" : "", tile ? tile->bm : 0,
                tile ? tile->bn : 0, tile ? tile->bk : 0, bad, guard, tight, loose);
        /* one line a case (stdout is line-buffered): a run cut by a timeout shows how far it got
         * and whether pipeline creation is what takes the time */
        printf("case %s [%d x %d] x %d%s, tile %ux%ux%u/%u, %d k range%s: pipeline + record %.0f ms, run %.1f "
               "ms, error %.3g\n",
               kind, rows, k, cols, epi == EPI_ACC ? " y +=" : "", tt.bm, tt.bn, tt.bk, tt.nt,
               p.n ? (int)p.d[0].groups[2] : 0, p.n && p.d[0].groups[2] > 1 ? "s" : "", t_record / 1e3, t_run / 1e3,
               tight);
    }
    plan_free(&p);
    for (int m = 0; m < nm; m++) {
        free(ref[m]);
        free(ref_r[m]);
    }
    free(xh);
    free(xr);
    free(x);
    free(y);
    free(y0);
}

static void test_products(void)
{
    if (!g.has_coopmat2) {
        printf("SKIP products: device %s has no usable VK_NV_cooperative_matrix2 (workgroup scope, "
               "tensor "
               "addressing, block loads)%s; they run on an NVIDIA GPU with driver 550+\n",
               g.props.deviceName,
               g.validation_layer
                   ? ", or it is left off under this validation layer (--list-devices says which; "
                     "run without LFM2_VALIDATION)"
                   : "");
        return;
    }
    static const struct sel_cm2_tile tiles[] = {
        {64, 64, 32, 128, 1}, {128, 128, 32, 256, 1}, {128, 256, 64, 256, 1}};
    /* split k first (a run cut by a timeout still checks them): ragged and unrolled ranges, the
     * residual, every mode and type; then the default rule's splits on LFM2-1.2B's shapes */
    static const struct sel_cm2_tile split_tiles[] = {{64, 64, 32, 128, 3}, {128, 128, 64, 256, 2}};
    const enum dtype types[4] = {DT_F16, DT_BF16, DT_Q8_0, DT_Q4_0};
    for (int ti = 0; ti < 4; ti++)
        for (int m = 0; m < 4; m++) {
            bool plain = types[ti] == DT_F16 || types[ti] == DT_BF16;
            cm2_case(types[ti], 200, plain ? 520 : 544, 37, (enum k_cm2_x)m, EPI_ACC, &split_tiles[0]);
            cm2_case(types[ti], 130, 2048, 70, (enum k_cm2_x)m, EPI_NONE, &split_tiles[1]);
        }
    cm2_case(DT_F16, 512, 2048, 512, K_CM2_X_GIVEN_F16, EPI_ACC, NULL); /* k/v: 4 ranges of 512 */
    cm2_case(DT_F16, 2048, 2048, 256, K_CM2_X_GIVEN_F16, EPI_NONE, NULL);
    for (int ti = 0; ti < 4; ti++) {
        enum dtype t = types[ti];
        bool plain = t == DT_F16 || t == DT_BF16;
        for (int m = 0; m < 4; m++) {
            enum k_cm2_x mode = (enum k_cm2_x)m;
            cm2_case(t, 64, 64, 16, mode, EPI_NONE, NULL);
            cm2_case(t, 200, 160, 37, mode, EPI_NONE,
                     NULL); /* rows, cols no multiple of a tile; k 5 steps */
            cm2_case(t, 67, 96, 20, mode, EPI_NONE, &tiles[2]); /* k 1.5 steps of 64 */
            cm2_case(t, 75, 1024, 130, mode, EPI_ACC, NULL);    /* the residual */
            cm2_case(t, 130, 32, 1, mode, EPI_NONE, NULL);      /* k one step, one column */
            if (plain && mode != K_CM2_X_PREP) {
                cm2_case(t, 200, 136, 37, mode, EPI_ACC, NULL); /* k 4.25 steps */
                cm2_case(t, 130, 24, 1, mode, EPI_NONE, NULL);  /* k under one step */
            }
            for (size_t i = 0; i < ARRAY_LEN(tiles); i++) /* k a whole number of Q blocks for Q types */
                cm2_case(t, 300, plain ? 520 : 512, 270, mode, EPI_NONE, &tiles[i]);
        }
        /* SwiGLU pairs: served x, x given as f16, and the prepared x but for Q8_0 */
        if (!g.has_coopmat2_per_element) {
            printf("SKIP SwiGLU pairs: no per-element operations\n");
            continue;
        }
        static const enum k_cm2_x pair_modes[] = {K_CM2_X_SERVING, K_CM2_X_GIVEN_F16, K_CM2_X_PREP};
        for (size_t m = 0; m < ARRAY_LEN(pair_modes); m++) {
            enum k_cm2_x mode = pair_modes[m];
            if (t == DT_Q8_0 && mode == K_CM2_X_PREP) continue;
            cm2_case(t, 200, 160, 37, mode, EPI_SWIGLU, NULL);
            cm2_case(t, 300, 512, 270, mode, EPI_SWIGLU, &tiles[0]);
        }
    }
    cm2_case(DT_BF16, 2048, 2048, 512, K_CM2_X_EXACT, EPI_NONE,
             NULL); /* LFM2-1.2B's attention product */
    cm2_case(DT_Q4_0, 2048, 2048, 512, K_CM2_X_SERVING, EPI_NONE, NULL);
    cm2_case(DT_BF16, 2048, 2048, 512, K_CM2_X_PREP, EPI_ACC, NULL);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* a line at a time (the per-case lines) */
    t_rng_seed(&rng, 20261206);
    int rc = gpu_open(&g, -1, &e);
    T_CHECK(rc == ST_OK, "gpu_open: %s", e.msg);
    if (rc) return t_finish();
    printf("device: %s, coopmat2 %s (workgroups up to %u invocations, %u bytes of shared memory "
           "reserved)\n",
           g.props.deviceName, g.has_coopmat2 ? "yes" : "no", g.coopmat2_max_invocations,
           g.coopmat2_reserved_shared);
    double t0 = now_us();
    test_embedded();
    test_tile_rule();
    test_list_line();
    test_refusals();
    test_xprep_f16();
    test_reduce();
    test_pipeline_stats();
    test_products();
    printf("gemm_cm2: %.1f s\n", (now_us() - t0) / 1e6);
    rc = gpu_close(&g, &e);
    T_CHECK(rc == ST_OK, "gpu_close: %s", e.msg);
    return t_finish();
}
