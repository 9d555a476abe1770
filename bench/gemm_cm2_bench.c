/* gemm_cm2_bench.c - the matrix product on VK_NV_cooperative_matrix2 (k_gemm_cm2, gemm_cm2.comp)
 * timed on LFM2-1.2B's product shapes, beside the wide plan's NV-v1 gemm (gemm.comp through
 * k_matmul, its prep included) for comparison (issue 38, item 2).
 *
 *   gemm_cm2_bench [COLS [REPS [TYPES]]]   default 512 columns, 20 timed runs (median), TYPES
 *                                          bf16,f16,q4_0,q8_0 (a comma-separated subset)
 *   gemm_cm2_bench split [REPS]            split k on the single products (split_main)
 *   gemm_cm2_bench hyp [REPS [VARIANTS]]   bench/39's third run: F16 weights, 512 columns, the
 *                                          v1 gemm and each hypothesis variant (hyp_variants,
 *                                          VARIANTS a comma list of their short names) x tile
 *                                          (hyp_tiles) on the four shapes; one line a pipeline
 *                                          with its creation time, then a TFLOP/s table
 *
 * Shapes (rows x k): 2048x2048 (attention out / conv out), 6144x2048 (a q/k/v-sized product),
 * 8192x2048 (w1 / w3), 2048x8192 (w2). Per shape and weight type: the v1 gemm (exact,
 * f32-accurate), then gemm_cm2 in each activation mode (serving: x rounded to f16, one product;
 * exact: hi + lo, two products; xf16: x given as f16; prep: x as the wide plan's gemm_xprep makes
 * it, two plain loads, timed on arbitrary bytes) with the default tile and a sweep of tiles
 * (BMxBNxBK/invocations). TFLOP/s count 2·rows·k·cols a product (the exact modes do twice the
 * tensor work). Last, one agreement line per type: the cm2 exact and serving outputs against the
 * v1 gemm's on 2048x2048 (max |diff| / max |y|). On 8192x2048 also the SwiGLU pair (w1/w3) both
 * ways (time_pairs). Exits 0 with a message on a device without
 * coopmat2. Weights and activations are made on the device (winit). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "kernels.h"
#include "plan.h"

static struct gpu g;
static struct err e;

#define TRY(x)                                                                                     \
    do {                                                                                           \
        if ((x) != ST_OK) {                                                                        \
            fprintf(stderr, "gemm_cm2_bench: %s (%s:%d)\n", e.msg, __FILE__, __LINE__);            \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static uint32_t tensor_id;

/* A device tensor [rows][k] of type t filled with b + a·N(0, 1), drawn as tensor `id` (the same id
 * and shape give the same values in every type: an f16 copy of an f32 tensor). */
static struct gpu_weight make_id(enum dtype t, int64_t rows, int64_t k, float a, float b,
                                 uint32_t id, struct gpu_buf *buf)
{
    struct gpu_weight w = {0, t, rows, k, weight_bytes(t, rows, k)};
    TRY(gpu_alloc(&g, w.bytes, GPU_MEM_DEVICE, buf, &e));
    w.addr = buf->addr;
    struct plan p = {0};
    TRY(k_winit(&g, &p, &w, 7, id, WINIT_NORMAL, a, b, &e));
    TRY(gpu_cmd_begin(&g, &e));
    plan_record(&g, &p, -1);
    TRY(gpu_submit_wait(&g, NULL, &e));
    plan_free(&p);
    return w;
}

/* A fresh tensor (make_id with the next id). */
static struct gpu_weight make(enum dtype t, int64_t rows, int64_t k, float a, float b,
                              struct gpu_buf *buf)
{
    return make_id(t, rows, k, a, b, ++tensor_id, buf);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Back-to-back runs of the plan a timed rep: one submit per rep lets the clocks fall between
 * short products (bench/39's first figures: the same kernel at 72 and 15 TFLOP/s), so each rep
 * records the plan INNER times in one command buffer, a compute barrier between runs (no
 * overlap), and reads the mean run. */
#define INNER 16

/* Median µs of one run of the plan over reps timed reps (two warm-up reps first). */
static double time_plan(const struct plan *p, int reps)
{
    double us[256];
    reps = reps < 1 ? 1 : reps > 256 ? 256 : reps;
    for (int r = -2; r < reps; r++) {
        uint64_t ticks[2];
        TRY(gpu_cmd_begin(&g, &e));
        TRY(gpu_cmd_reset_timestamps(&g, 0, 2, &e));
        gpu_cmd_timestamp(&g, 0);
        for (int i = 0; i < INNER; i++) {
            if (i) gpu_cmd_barrier_compute(&g);
            plan_record(&g, p, -1);
        }
        gpu_cmd_timestamp(&g, 1);
        TRY(gpu_submit_wait(&g, NULL, &e));
        TRY(gpu_read_timestamps(&g, 0, 2, ticks, &e));
        if (r >= 0) us[r] = (double)(ticks[1] - ticks[0]) * g.timestamp_period * 1e-3 / INNER;
    }
    qsort(us, (size_t)reps, sizeof us[0], cmp_double);
    return us[reps / 2];
}

static void report(const char *what, const char *tile, double us, double flop)
{
    printf("  %-24s %-16s %9.1f us %7.1f TFLOP/s\n", what, tile, us, flop / (us * 1e-6) / 1e12);
}

static const char *const mode_name[] = {"cm2 serving", "cm2 exact (2 prod)", "cm2 xf16",
                                        "cm2 prep (2 prod)"};

/* max |a - b| / max |b| of two device outputs of n floats; infinite where a holds a non-finite
 * value (e.g. the NaN poison of an output a kernel did not write) */
static double agreement(const struct gpu_buf *a, const struct gpu_buf *b, size_t n)
{
    float *x = malloc(n * 4), *y = malloc(n * 4);
    TRY(gpu_download(&g, a, 0, x, n * 4, &e));
    TRY(gpu_download(&g, b, 0, y, n * 4, &e));
    double num = 0, den = 0;
    bool bad = false;
    for (size_t i = 0; i < n; i++) {
        bad |= !isfinite(x[i]);
        num = fmax(num, fabs((double)x[i] - y[i]));
        den = fmax(den, fabs((double)y[i]));
    }
    free(x);
    free(y);
    return bad ? INFINITY : den > 0 ? num / den : num;
}

/* A wide plan on kernel scratch reserved for one call of the matrix helpers over ws (kernels.h
 * k_scratch: the engine reserves it before a build the same way). */
static struct k_scratch scratch;
static struct plan v1_plan(int n, const struct gpu_weight *const ws[], bool swiglu, int cols)
{
    struct sel_scratch need = k_matmul_scratch(&g, PLAN_WIDE, n, ws, swiglu, NULL, false, cols);
    TRY(k_scratch_reserve(&g, &need, &scratch, &e));
    return (struct plan){.kind = PLAN_WIDE, .scratch = &scratch};
}

/* LFM2-1.2B's SwiGLU pair (w1/w3, 8192 x 2048): the v1 gemm's (k_matmul_swiglu) and gemm_cm2's
 * (served and prepared x; the prepared one on arbitrary bytes) at the default tile and the first
 * n_sweep tiles of the sweep. TFLOP/s count both products. */
static void time_pairs(const struct gpu_weight *w, enum dtype t, uint64_t x, uint64_t y, int cols,
                       int reps, const struct sel_cm2_tile *sweep, int n_sweep)
{
    struct gpu_buf b3;
    struct gpu_weight w3 = make(t, w->rows, w->k, 1.0f / sqrtf((float)w->k), 0.0f, &b3);
    double flop = 4.0 * (double)w->rows * (double)w->k * cols;
    const struct gpu_weight *pair[2] = {w, &w3};
    struct plan p = v1_plan(2, pair, true, cols);
    TRY(k_matmul_swiglu(&g, &p, w, &w3, NULL, x, y, cols, 0, "v1", "", &e));
    report("NV-v1 SwiGLU pair", p.n ? p.d[p.n - 1].kind : "", time_plan(&p, reps), flop);
    plan_free(&p);
    for (int m = 0; m < 2; m++) {
        enum k_cm2_x mode = m ? K_CM2_X_PREP : K_CM2_X_SERVING;
        const char *what = m ? "cm2 pair prep" : "cm2 pair serving";
        struct sel_cm2_tile def = k_gemm_cm2_tile(&g, w->rows, w->k, cols, true, mode == K_CM2_X_PREP);
        for (int i = -1; i < n_sweep; i++) {
            const struct sel_cm2_tile *tile = i < 0 ? &def : &sweep[i];
            if (i >= 0 && !memcmp(tile, &def, sizeof def)) continue;
            struct plan q = {.kind = PLAN_WIDE};
            struct k_cm2_product pr = {w, &w3, x, y, cols, false, mode, 0};
            char tname[40];
            snprintf(tname, sizeof tname, "%ux%ux%u/%u%s", tile->bm, tile->bn, tile->bk, tile->nt,
                     i < 0 ? "*" : "");
            if (k_gemm_cm2(&g, &q, &pr, tile, 0, "cm2", &e) != ST_OK)
                printf("  %-24s %s: %s\n", what, tname, e.msg);
            else
                report(what, tname, time_plan(&q, reps), flop);
            plan_free(&q);
        }
    }
}

/* ---- hyp: bench/39's third run, one hypothesis a variant (shaders/variants.txt's benchpre lines,
 * gemm_cm2.comp's CM2_ switches) on F16 weights at 512 columns. The variants are dispatched here,
 * not through k_gemm_cm2 (which names only the product's kernels), with its push block and grid. */

/* gemm_cm2.comp's push block (src/kernels/gemm_cm2.c's, mirrored) */
struct hyp_push {
    uint64_t w, w3, x, y;
    uint32_t rows, k, cols, accumulate;
    uint64_t part; /* no splits here: 0, kper = k */
    uint32_t kper, pad;
};
_Static_assert(sizeof(struct hyp_push) == 64, "hyp_push layout");

struct hyp_variant {
    const char *kernel; /* shaders/variants.txt's name, the blob KERNEL "_f16" */
    bool xf16;          /* x given in f16 (else f32, rounded or split in the load) */
    const char *what;
};
/* Most telling first: a run cut short still answers the likeliest hypotheses. */
static const struct hyp_variant hyp_variants[] = {
    {"gemm_cm2_xf16", true,
     "the shipped kernel since the third run (aligned, 8 k steps, edge loop kept), x given in f16"},
    {"gemm_cm2_xf16_al16", true,
     "(d) bases declared 16-byte aligned, strides multiples of 8 elements"},
    {"gemm_cm2_xf16_comb32", true, "interior path alone + al16 + 8 k steps an iteration"},
    {"gemm_cm2_xf16_comb16", true, "comb32 with f16 accumulators"},
    {"gemm_cm2_xf16_plain", true, "(e) interior path alone: loads, products, store"},
    {"gemm_cm2_xf16_u1", true, "(a) no k unroll"},
    {"gemm_cm2_xf16_u8", true, "8 k steps an iteration (llama.cpp's unroll)"},
    {"gemm_cm2_xf16_acc16", true, "(b) f16 accumulators"},
    {"gemm_cm2_xf16_mfast", true, "row tiles adjacent in the dispatch order (llama.cpp's)"},
    {"gemm_cm2", false, "the shipped serving kernel (aligned, 8 k steps): f32 x rounded in the load"},
    {"gemm_cm2_al16", false, "serving + al16"},
    {"gemm_cm2_exact", false, "the shipped exact kernel (aligned, 8 k steps): f32 x split, 2 products"},
    {"gemm_cm2_exact_al16", false, "exact + al16"},
};
#define HYP_N_VARIANTS (int)(sizeof hyp_variants / sizeof hyp_variants[0])
/* our best small tile of the second run; 128 x 128 with BK 32 and 64 (hypothesis c); llama.cpp's
 * large NVIDIA coopmat2 tile for 512 columns (128 weight rows x 256 columns, BK 64, 256
 * invocations) */
static const struct sel_cm2_tile hyp_tiles[] = {
    {64, 64, 32, 128, 1}, {128, 128, 32, 256, 1}, {128, 128, 64, 256, 1}, {128, 256, 64, 256, 1}};
#define HYP_N_TILES (int)(sizeof hyp_tiles / sizeof hyp_tiles[0])
static const int hyp_shapes[][2] = {{2048, 2048}, {6144, 2048}, {8192, 2048}, {2048, 8192}};
#define HYP_N_SHAPES 4

/* A variant's short name: its kernel without "gemm_cm2_" ("serving" for gemm_cm2 itself). */
static const char *hyp_short(const struct hyp_variant *v)
{
    return strlen(v->kernel) > 9 ? v->kernel + 9 : "serving";
}

/* whether variant v is in the comma list of short names (NULL: every variant) */
static bool hyp_selected(const char *list, const struct hyp_variant *v)
{
    if (!list) return true;
    const char *name = hyp_short(v);
    size_t n = strlen(name);
    for (const char *t = list; t; t = strchr(t, ',') ? strchr(t, ',') + 1 : NULL) {
        size_t len = strchr(t, ',') ? (size_t)(strchr(t, ',') - t) : strlen(t);
        if (len == n && !strncmp(t, name, n)) return true;
    }
    return false;
}

static int hyp_main(int reps, const char *list)
{
    const int cols = 512;
    struct gpu_buf xb, xhb, yb, wb[HYP_N_SHAPES], yv1[HYP_N_SHAPES];
    struct gpu_weight w[HYP_N_SHAPES];
    /* x [cols][8192] f32 and its f16 copy (the same draws: the agreement lines compare like with
     * like); [cols][k] is its first cols·k elements */
    struct gpu_weight x = make(DT_F32, cols, 8192, 1.0f, 0.0f, &xb);
    struct gpu_weight xh = make_id(DT_F16, cols, 8192, 1.0f, 0.0f, tensor_id, &xhb);
    TRY(gpu_alloc(&g, (uint64_t)cols * 8192 * 4, GPU_MEM_DEVICE, &yb, &e));
    double t_start = now_us();
    static double tf[HYP_N_VARIANTS][HYP_N_TILES][HYP_N_SHAPES], v1tf[HYP_N_SHAPES];
    printf("hyp: F16 weights, %d columns, median of %d reps of %d back-to-back runs; TFLOP/s count "
           "2*rows*k*cols (exact: one useful product); agree = max|y - y_v1| / max|y_v1| (v1: the "
           "exact gemm on f32 x)\n",
           cols, reps, INNER);
    for (int si = 0; si < HYP_N_SHAPES; si++) {
        int rows = hyp_shapes[si][0], k = hyp_shapes[si][1];
        w[si] = make(DT_F16, rows, k, 1.0f / sqrtf((float)k), 0.0f, &wb[si]);
        TRY(gpu_alloc(&g, (uint64_t)cols * rows * 4, GPU_MEM_DEVICE, &yv1[si], &e));
        x.k = k;
        const struct gpu_weight *one = &w[si];
        struct plan p = v1_plan(1, &one, false, cols);
        TRY(k_matmul(&g, &p, &w[si], x.addr, yv1[si].addr, cols, false, 0, "v1", "", &e));
        double us = time_plan(&p, reps), flop = 2.0 * rows * k * cols;
        v1tf[si] = flop / (us * 1e-6) / 1e12;
        char stats[512] = "";
        if (p.n) gpu_pipeline_stats(&g, p.d[p.n - 1].pipe, stats, sizeof stats);
        printf("  NV-v1 gemm (exact)       %-16s %4dx%-5d %9.1f us %7.1f TFLOP/s%s%s\n",
               p.n ? p.d[p.n - 1].kind : "", rows, k, us, v1tf[si], *stats ? "; " : "", stats);
        plan_free(&p);
    }
    for (int vi = 0; vi < HYP_N_VARIANTS; vi++) {
        const struct hyp_variant *v = &hyp_variants[vi];
        if (!hyp_selected(list, v)) continue;
        char name[48];
        snprintf(name, sizeof name, "%s_f16", v->kernel);
        printf("%s: %s\n", name, v->what);
        for (int ti = 0; ti < HYP_N_TILES; ti++) {
            const struct sel_cm2_tile *t = &hyp_tiles[ti];
            char tname[32];
            snprintf(tname, sizeof tname, "%ux%ux%u/%u", t->bm, t->bn, t->bk, t->nt);
            if (g.coopmat2_max_invocations && t->nt > g.coopmat2_max_invocations) {
                printf("  %-16s skipped: the device's workgroup-scope matrices take at most %u "
                       "invocations\n",
                       tname, g.coopmat2_max_invocations);
                continue;
            }
            const uint32_t spec[4] = {t->bm, t->bn, t->bk, t->nt};
            const struct gpu_pipeline *pipe;
            double t0 = now_us();
            if (gpu_pipeline(&g, name, spec, 4, &pipe, &e) != ST_OK) {
                printf("  %-16s pipeline failed: %s\n", tname, e.msg);
                continue;
            }
            double t_pipe = now_us() - t0;
            char stats[512];
            gpu_pipeline_stats(&g, pipe, stats, sizeof stats);
            printf("  %-16s pipeline created in %.0f ms (%.0f s into the run)%s%s\n", tname,
                   t_pipe / 1e3, (now_us() - t_start) / 1e6, *stats ? "; " : "", stats);
            for (int si = 0; si < HYP_N_SHAPES; si++) {
                int rows = hyp_shapes[si][0], k = hyp_shapes[si][1];
                struct hyp_push pc = {
                    w[si].addr, 0, v->xf16 ? xh.addr : x.addr, yb.addr, (uint32_t)rows, (uint32_t)k,
                    cols,       0, 0, (uint32_t)k, 0};
                if (rows == 2048) TRY(gpu_fill(&g, &yb, 0x7fc00000u, &e)); /* NaN: unwritten */
                struct plan q = {.kind = PLAN_WIDE};
                struct dispatch *d =
                    plan_add(&q, pipe, &pc, sizeof pc, cols / t->bn, rows / t->bm, 1);
                dispatch_tag(d, name, 0, "hyp", w[si].bytes);
                double us = time_plan(&q, reps), flop = 2.0 * rows * k * cols;
                plan_free(&q);
                tf[vi][ti][si] = flop / (us * 1e-6) / 1e12;
                printf("  %-16s %4dx%-5d %9.1f us %7.1f TFLOP/s", tname, rows, k, us,
                       tf[vi][ti][si]);
                if (rows == 2048) /* the small outputs: cheap to read back */
                    printf("  agree %.2g", agreement(&yb, &yv1[si], (size_t)cols * rows));
                printf("\n");
            }
        }
    }
    printf("summary, TFLOP/s (shapes rows x k; NV-v1 exact:");
    for (int si = 0; si < HYP_N_SHAPES; si++)
        printf(" %.1f", v1tf[si]);
    printf(")\n  %-30s %-16s %9s %9s %9s %9s\n", "variant", "tile", "2048x2048", "6144x2048",
           "8192x2048", "2048x8192");
    for (int vi = 0; vi < HYP_N_VARIANTS; vi++)
        for (int ti = 0; ti < HYP_N_TILES; ti++) {
            if (tf[vi][ti][0] == 0) continue;
            const struct sel_cm2_tile *t = &hyp_tiles[ti];
            char tname[32];
            snprintf(tname, sizeof tname, "%ux%ux%u/%u", t->bm, t->bn, t->bk, t->nt);
            printf("  %-30s %-16s", hyp_short(&hyp_variants[vi]), tname);
            for (int si = 0; si < HYP_N_SHAPES; si++)
                printf(" %9.1f", tf[vi][ti][si]);
            printf("\n");
        }
    printf("hyp: %.0f s\n", (now_us() - t_start) / 1e6);
    TRY(gpu_close(&g, &e));
    return 0;
}

/* ---- split: issue 38 (bench/45): gemm_cm2's split k (select.h sel_gemm_cm2_tile) on LFM2-1.2B's
 * single products, x given as f16 (the wide plan's serving precision), at 256 and 512 columns:
 * the default rule (*), then 128 x 128 x 64 with 1, 2, 4, 8 splits and 64 x 64 x 32 with 1, 2, 4
 * (each timed with its gemm_cm2_reduce dispatch), and the residual form (y +=) of the default;
 * one line a (shape, columns, tile), TFLOP/s of useful FLOPs. */
static int split_main(int reps)
{
    static const int shapes[][2] = {{2048, 2048}, {512, 2048}, {3072, 2048}, {6144, 2048}, {8192, 2048}, {2048, 8192}};
    static const int widths[] = {256, 512};
    static const struct sel_cm2_tile tiles[] = {
        {128, 128, 64, 256, 1}, {128, 128, 64, 256, 2}, {128, 128, 64, 256, 4}, {128, 128, 64, 256, 8},
        {64, 64, 32, 128, 1},   {64, 64, 32, 128, 2},   {64, 64, 32, 128, 4}};
    struct gpu_buf xhb, yb, partb;
    struct gpu_weight xh = make_id(DT_F16, 512, 8192, 1.0f, 0.0f, tensor_id, &xhb);
    TRY(gpu_alloc(&g, (uint64_t)512 * 8192 * 4, GPU_MEM_DEVICE, &yb, &e));
    TRY(gpu_alloc(&g, (uint64_t)7 * 512 * 8192 * 4, GPU_MEM_DEVICE, &partb, &e));
    printf("split: F16 weights, x given as f16, median of %d reps of %d back-to-back runs (product + "
           "gemm_cm2_reduce); TFLOP/s of 2*rows*k*cols\n",
           reps, INNER);
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        int rows = shapes[si][0], k = shapes[si][1];
        struct gpu_buf wb;
        struct gpu_weight w = make(DT_F16, rows, k, 1.0f / sqrtf((float)k), 0.0f, &wb);
        xh.k = k;
        for (size_t ci = 0; ci < sizeof widths / sizeof widths[0]; ci++) {
            int cols = widths[ci];
            double flop = 2.0 * rows * k * cols;
            struct sel_cm2_tile def = k_gemm_cm2_tile(&g, rows, k, cols, false, false);
            for (int t = -2; t < (int)(sizeof tiles / sizeof tiles[0]); t++) {
                const struct sel_cm2_tile *tile = t < 0 ? &def : &tiles[t];
                if (t >= 0 && !memcmp(tile, &def, sizeof def)) continue;
                struct plan q = {.kind = PLAN_WIDE};
                struct k_cm2_product pr = {&w, NULL, xh.addr, yb.addr, cols, t == -1, K_CM2_X_GIVEN_F16, partb.addr};
                char tname[48];
                snprintf(tname, sizeof tname, "%ux%ux%u/%u s%u%s", tile->bm, tile->bn, tile->bk, tile->nt,
                         tile->splits, t < 0 ? (t == -1 ? "* y+=" : "*") : "");
                if (k_gemm_cm2(&g, &q, &pr, tile, 0, "cm2", &e) != ST_OK) {
                    printf("  %5dx%-5d %4d cols %-22s %s\n", rows, k, cols, tname, e.msg);
                    plan_free(&q);
                    continue;
                }
                double us = time_plan(&q, reps);
                printf("  %5dx%-5d %4d cols %-22s %9.1f us %7.1f TFLOP/s  (%d dispatch%s, %u x %u x %u groups)\n",
                       rows, k, cols, tname, us, flop / (us * 1e-6) / 1e12, q.n, q.n > 1 ? "es" : "",
                       q.d[0].groups[0], q.d[0].groups[1], q.d[0].groups[2]);
                plan_free(&q);
            }
        }
    }
    TRY(gpu_close(&g, &e));
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* a line at a time: a run cut by a timeout still tells */
    bool hyp = argc > 1 && !strcmp(argv[1], "hyp"), split = argc > 1 && !strcmp(argv[1], "split");
    hyp = hyp || split; /* the same argument shape: split [REPS] */
    int cols = hyp        ? 512
               : argc > 1 ? atoi(argv[1])
                          : 512,
        reps = argc > 2 ? atoi(argv[2])
               : hyp    ? 5
                        : 20;
    const char *tlist = hyp ? "f16" : argc > 3 ? argv[3] : "bf16,f16,q4_0,q8_0";
    enum dtype types[4];
    int n_types = 0;
    static const char *const tnames[] = {"bf16", "f16", "q4_0", "q8_0"};
    static const enum dtype tvals[] = {DT_BF16, DT_F16, DT_Q4_0, DT_Q8_0};
    for (int i = 0; i < 4; i++)
        if (strstr(tlist, tnames[i])) types[n_types++] = tvals[i];
    if (cols < 1 || reps < 1 || n_types == 0) {
        fprintf(stderr,
                "usage: gemm_cm2_bench [COLS [REPS [TYPES]]] (positive integers; TYPES from "
                "bf16,f16,q4_0,q8_0), or gemm_cm2_bench hyp [REPS [VARIANTS]]\n");
        return 2;
    }
    TRY(gpu_open(&g, -1, &e));
    printf("device: %s (%s); coopmat2 %s, workgroups up to %u invocations, %u B shared reserved; "
           "NV-v1 gemm %s\n",
           g.props.deviceName, g.driver_name, g.has_coopmat2 ? "yes" : "no",
           g.coopmat2_max_invocations, g.coopmat2_reserved_shared,
           g.gemm_khr || g.gemm_nv ? "cooperative matrices" : "FMA twin");
    if (!g.has_coopmat2 || !g.timestamp_valid_bits) {
        printf("no usable VK_NV_cooperative_matrix2 or no timestamps on this device: nothing to "
               "time\n");
        gpu_close(&g, &e);
        return 0;
    }
    if (split) return split_main(reps);
    if (hyp) return hyp_main(reps, argc > 3 ? argv[3] : NULL);
    static const int shapes[][2] = {{2048, 2048}, {6144, 2048}, {8192, 2048}, {2048, 8192}};
    /* 8 tiles (pipelines: 4 modes x 9 + the pair's 2 x 4 a type, under GPU_MAX_PIPELINES for 4
     * types) */
    static const struct sel_cm2_tile sweep_tiles[] = {
        {64, 64, 32, 128, 1},   {128, 64, 32, 128, 1},  {128, 64, 32, 256, 1},  {128, 128, 32, 256, 1},
        {128, 128, 64, 256, 1}, {128, 256, 32, 256, 1}, {256, 128, 32, 256, 1}, {256, 256, 32, 512, 1},
    };
    const struct sel_cm2_tile *sweep = sweep_tiles;
    int n_sweep = (int)(sizeof sweep_tiles / sizeof sweep_tiles[0]);
    struct gpu_buf xb, xhb, yb, yv1, partb;
    int kmax = 8192, rmax = 8192;
    TRY(gpu_alloc(&g, (uint64_t)7 * cols * rmax * 4, GPU_MEM_DEVICE, &partb, &e)); /* the default tiles' splits */
    struct gpu_weight x = make(DT_F32, cols, kmax, 1.0f, 0.0f, &xb);
    struct gpu_weight xh = make_id(DT_F16, cols, kmax, 1.0f, 0.0f, tensor_id, &xhb); /* f16(x) */
    TRY(gpu_alloc(&g, (uint64_t)cols * rmax * 4, GPU_MEM_DEVICE, &yb, &e));
    TRY(gpu_alloc(&g, (uint64_t)cols * rmax * 4, GPU_MEM_DEVICE, &yv1, &e));
    double agree[4][2] = {{0}};
    for (int ti = 0; ti < n_types; ti++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            int rows = shapes[si][0], k = shapes[si][1];
            struct gpu_buf wb;
            /* winit's Q types quantize the drawn values per block */
            struct gpu_weight w = make(types[ti], rows, k, 1.0f / sqrtf((float)k), 0.0f, &wb);
            /* x is [cols][kmax]: its first cols·k floats serve as [cols][k] */
            x.k = xh.k = k;
            double flop = 2.0 * rows * k * cols;
            printf("%s %d x %d, %d columns:\n", dtype_name(types[ti]), rows, k, cols);
            const struct gpu_weight *one = &w;
            struct plan p = v1_plan(1, &one, false, cols);
            TRY(k_matmul(&g, &p, &w, x.addr, yv1.addr, cols, false, 0, "v1", "", &e));
            char kinds[64] = "";
            for (int d = 0; d < p.n && strlen(kinds) < 40; d++)
                snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%s%s", d ? "+" : "",
                         p.d[d].kind);
            report("NV-v1 gemm (exact)", kinds, time_plan(&p, reps), flop);
            plan_free(&p);
            for (int m = 0; m < 4; m++) {
                enum k_cm2_x mode = (enum k_cm2_x)m;
                /* the prepared x: 4 bytes an element, like the f32 x (its values do not matter
                 * here) */
                uint64_t xa = mode == K_CM2_X_GIVEN_F16 ? xh.addr : x.addr;
                struct sel_cm2_tile def = k_gemm_cm2_tile(&g, rows, k, cols, false, mode == K_CM2_X_PREP);
                for (int t = -1; t < n_sweep; t++) {
                    const struct sel_cm2_tile *tile = t < 0 ? &def : &sweep[t];
                    if (t >= 0 && !memcmp(tile, &def, sizeof def)) continue;
                    struct plan q = {.kind = PLAN_WIDE};
                    struct k_cm2_product pr = {&w, NULL, xa, yb.addr, cols, false, mode, partb.addr};
                    if (k_gemm_cm2(&g, &q, &pr, tile, 0, "cm2", &e) != ST_OK) {
                        printf("  %-24s %ux%ux%u/%u: %s\n", mode_name[m], tile->bm, tile->bn,
                               tile->bk, tile->nt, e.msg);
                        plan_free(&q);
                        continue;
                    }
                    char tname[40];
                    snprintf(tname, sizeof tname, "%ux%ux%u/%u%s", tile->bm, tile->bn, tile->bk,
                             tile->nt, t < 0 ? "*" : "");
                    report(mode_name[m], tname, time_plan(&q, reps), flop);
                    plan_free(&q);
                    if (t < 0 && si == 0 && (mode == K_CM2_X_SERVING || mode == K_CM2_X_EXACT))
                        agree[ti][m] = agreement(&yb, &yv1, (size_t)cols * rows);
                }
            }
            if (rows == 8192 && k == 2048)
                time_pairs(&w, types[ti], x.addr, yb.addr, cols, reps, sweep, 3);
        }
    printf("agreement with the v1 gemm on 2048x2048 (max |diff| / max |y|; * = default tile "
           "above):\n");
    for (int ti = 0; ti < n_types; ti++)
        printf("  %s: serving %.3g, exact %.3g\n", dtype_name(types[ti]), agree[ti][0],
               agree[ti][1]);
    TRY(gpu_close(&g, &e));
    return 0;
}
