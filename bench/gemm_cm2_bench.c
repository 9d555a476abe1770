/* gemm_cm2_bench.c - the matrix product on VK_NV_cooperative_matrix2 (k_gemm_cm2, gemm_cm2.comp)
 * timed on LFM2-1.2B's product shapes, beside the wide plan's NV-v1 gemm (gemm.comp through
 * k_matmul, its prep included) for comparison (issue 38, item 2).
 *
 *   gemm_cm2_bench [COLS [REPS [TYPES]]]   default 512 columns, 20 timed runs (median), TYPES
 *                                          bf16,f16,q4_0,q8_0 (a comma-separated subset)
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

/* A device tensor [rows][k] of type t filled with b + a·N(0, 1). */
static struct gpu_weight make(enum dtype t, int64_t rows, int64_t k, float a, float b,
                              struct gpu_buf *buf)
{
    struct gpu_weight w = {0, t, rows, k, weight_bytes(t, rows, k)};
    TRY(gpu_alloc(&g, w.bytes, GPU_MEM_DEVICE, buf, &e));
    w.addr = buf->addr;
    struct plan p = {0};
    TRY(k_winit(&g, &p, &w, 7, ++tensor_id, WINIT_NORMAL, a, b, &e));
    TRY(gpu_cmd_begin(&g, &e));
    plan_record(&g, &p, -1);
    TRY(gpu_submit_wait(&g, NULL, &e));
    plan_free(&p);
    return w;
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

/* max |a - b| / max |b| of two device outputs of n floats */
static double agreement(const struct gpu_buf *a, const struct gpu_buf *b, size_t n)
{
    float *x = malloc(n * 4), *y = malloc(n * 4);
    TRY(gpu_download(&g, a, 0, x, n * 4, &e));
    TRY(gpu_download(&g, b, 0, y, n * 4, &e));
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num = fmax(num, fabs((double)x[i] - y[i]));
        den = fmax(den, fabs((double)y[i]));
    }
    free(x);
    free(y);
    return den > 0 ? num / den : num;
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
                       int reps, const struct k_cm2_tile *sweep, int n_sweep)
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
        struct k_cm2_tile def = k_gemm_cm2_tile(&g, w->rows, cols);
        for (int i = -1; i < n_sweep; i++) {
            const struct k_cm2_tile *tile = i < 0 ? &def : &sweep[i];
            if (i >= 0 && !memcmp(tile, &def, sizeof def)) continue;
            struct plan q = {.kind = PLAN_WIDE};
            struct k_cm2_product pr = {w, &w3, x, y, cols, false, mode};
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

int main(int argc, char **argv)
{
    int cols = argc > 1 ? atoi(argv[1]) : 512, reps = argc > 2 ? atoi(argv[2]) : 20;
    const char *tlist = argc > 3 ? argv[3] : "bf16,f16,q4_0,q8_0";
    enum dtype types[4];
    int n_types = 0;
    static const char *const tnames[] = {"bf16", "f16", "q4_0", "q8_0"};
    static const enum dtype tvals[] = {DT_BF16, DT_F16, DT_Q4_0, DT_Q8_0};
    for (int i = 0; i < 4; i++)
        if (strstr(tlist, tnames[i])) types[n_types++] = tvals[i];
    if (cols < 1 || reps < 1 || n_types == 0) {
        fprintf(stderr,
                "usage: gemm_cm2_bench [COLS [REPS [TYPES]]] (positive integers; TYPES from "
                "bf16,f16,q4_0,q8_0)\n");
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
    static const int shapes[][2] = {{2048, 2048}, {6144, 2048}, {8192, 2048}, {2048, 8192}};
    /* 8 tiles (pipelines: 4 modes x 9 + the pair's 2 x 4 a type, under GPU_MAX_PIPELINES for 4
     * types) */
    static const struct k_cm2_tile sweep_tiles[] = {
        {64, 64, 32, 128},   {128, 64, 32, 128},  {128, 64, 32, 256},  {128, 128, 32, 256},
        {128, 128, 64, 256}, {128, 256, 32, 256}, {256, 128, 32, 256}, {256, 256, 32, 512},
    };
    const struct k_cm2_tile *sweep = sweep_tiles;
    int n_sweep = (int)(sizeof sweep_tiles / sizeof sweep_tiles[0]);
    struct gpu_buf xb, xhb, yb, yv1;
    int kmax = 8192, rmax = 8192;
    struct gpu_weight x = make(DT_F32, cols, kmax, 1.0f, 0.0f, &xb);
    struct gpu_weight xh = make(DT_F16, cols, kmax, 1.0f, 0.0f, &xhb);
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
                struct k_cm2_tile def = k_gemm_cm2_tile(&g, rows, cols);
                for (int t = -1; t < n_sweep; t++) {
                    const struct k_cm2_tile *tile = t < 0 ? &def : &sweep[t];
                    if (t >= 0 && !memcmp(tile, &def, sizeof def)) continue;
                    struct plan q = {.kind = PLAN_WIDE};
                    struct k_cm2_product pr = {&w, NULL, xa, yb.addr, cols, false, mode};
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
