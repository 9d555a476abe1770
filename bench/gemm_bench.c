/* gemm_bench.c - the layer matrix products of LFM2-1.2B (16 layers, attention at 2 5 8 10 12 14) as
 * one wide plan, timed alone: what `--wide` will spend in gemm per step (bench/06). Weights are
 * made on the device (winit), activations are random, and the plan is the real sequence: per conv
 * layer in_proj (norm) + out_proj (residual), per attention layer q/k/v (norm) + out_proj
 * (residual), per layer the SwiGLU pair (norm) + down (residual).
 *
 * Built only with -DLFM2_BENCH=ON (its shaders too: shaders/variants.txt's "bench" lines).
 *
 *   gemm_bench DTYPE COLS [REPS [LAYERS]]     e.g.  gemm_bench bf16 512 20
 *   gemm_bench shm                           the product loop's rate from shared memory (bench/25)
 *   gemm_bench chain [N [COLS]]              what one dependent dispatch costs: with a barrier,
 *                                            with none (bench/29; below)
 * (LAYERS < 16: the first ones only, for a quick look on a CPU device).
 *
 * Prints per kind: dispatches, median µs a step, TFLOP/s (counting one dispatch per product, as the
 * gemm does), weight GB/s; then the step's sum, the
 * submit+wait wall without timestamps (minimum), and one accuracy line: a [2048, 2048] product with
 * the fused norm at COLS columns against a double-precision reference on 64 of its columns; on a
 * device with cooperative matrices, their rate on registers alone (coopmat_roof.comp).
 * Trailing --tune key=value[,...] (tune.h: every key, the test-only ones too) and --precision
 * exact|serving (the wide plan's arithmetic, plan_kind.h; default exact: bench/41). Environment:
 * LFM2_TEST_NO_COOPMAT=1 (FMA twin); LFM2_GEMM_ROOF in -DLFM2_BENCH builds (select.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpu.h"
#include "kernels.h"
#include "plan.h"

#define H 2048
#define FFN 8192
#define KV 512
#define LAYERS 16

static struct gpu g;
static struct err e;

#define TRY(x)                                                                                                 \
    do {                                                                                                       \
        if ((x) != ST_OK) {                                                                                    \
            fprintf(stderr, "gemm_bench: %s (%s:%d)\n", e.msg, __FILE__, __LINE__);                          \
            exit(1);                                                                                           \
        }                                                                                                      \
    } while (0)

static uint32_t tensor_id;

/* A device tensor of random values: weights N(0, 1/k) (gains 1 + 0.1 N, activations N(0, 1)). */
static struct gpu_buf last_buf; /* the buffer of the last make() (for downloads) */

static struct gpu_weight make(enum dtype t, int64_t rows, int64_t k, float a, float b)
{
    struct gpu_buf buf;
    struct gpu_weight w = {0, t, rows, k, weight_bytes(t, rows, k)};
    TRY(gpu_alloc(&g, w.bytes, GPU_MEM_DEVICE, &buf, &e));
    w.addr = buf.addr;
    last_buf = buf;
    struct plan p = {0};
    TRY(k_winit(&g, &p, &w, 1, ++tensor_id, WINIT_NORMAL, a, b, &e));
    TRY(gpu_cmd_begin(&g, &e));
    plan_record(&g, &p, -1);
    TRY(gpu_submit_wait(&g, NULL, &e));
    plan_free(&p);
    return w;
}

static struct gpu_weight mat(enum dtype t, int64_t rows, int64_t k) { return make(t, rows, k, 1.0f / sqrtf((float)k), 0); }

/* The kernels' scratch, reserved before a plan is built as the engine does (kernels.h k_scratch),
 * and the need of one product of a weight like [rows, k] of type t added to need. */
static struct k_scratch scratch;

static void need_of(struct sel_scratch *need, enum dtype t, int64_t rows, int64_t k, bool swiglu, bool norm, bool acc,
                    int cols)
{
    struct gpu_weight w = {0, t, rows, k, 0}, gain = {0, DT_BF16, 1, k, 0};
    const struct gpu_weight *ws[2] = {&w, &w};
    struct k_norm kn = {&gain, 1e-5f, false};
    struct sel_scratch one = k_matmul_scratch(&g, PLAN_WIDE, swiglu ? 2 : 1, ws, swiglu, norm ? &kn : NULL, acc, cols);
    sel_scratch_max(need, &one);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* max|out - ref| / max|ref| of y = W·rms(x)·g on 64 columns, in double on the host. */
static void accuracy(enum dtype t, int cols)
{
    struct gpu_weight w = mat(t, H, H);
    struct gpu_buf wb = last_buf;
    struct gpu_weight gain = make(DT_BF16, 1, H, 0.1f, 1.0f);
    struct gpu_buf gb = last_buf;
    struct gpu_weight x = make(DT_F32, cols, H, 1.0f, 0.5f);
    struct gpu_buf xb = last_buf;
    struct gpu_weight y = make(DT_F32, cols, H, 1.0f, 0);
    struct gpu_buf yb = last_buf;
    struct k_norm norm = {&gain, 1e-5f, false};
    struct sel_scratch need = {0};
    need_of(&need, t, H, H, false, true, false, cols);
    TRY(k_scratch_reserve(&g, &need, &scratch, &e));
    struct plan p = {.kind = PLAN_WIDE, .scratch = &scratch};
    TRY(k_matmul_norm(&g, &p, &w, &norm, x.addr, y.addr, cols, false, 0, "acc", "", &e));
    TRY(gpu_cmd_begin(&g, &e));
    plan_record(&g, &p, -1);
    TRY(gpu_submit_wait(&g, NULL, &e));
    uint8_t *wh = malloc(w.bytes), *gh = malloc(gain.bytes);
    float *xh = malloc(x.bytes), *yh = malloc(y.bytes);
    int nc = MIN(cols, 64);
    double num = 0, den = 0;
    TRY(gpu_download(&g, &wb, 0, wh, w.bytes, &e));
    TRY(gpu_download(&g, &gb, 0, gh, gain.bytes, &e));
    TRY(gpu_download(&g, &xb, 0, xh, x.bytes, &e));
    TRY(gpu_download(&g, &yb, 0, yh, y.bytes, &e));
    double *xn = malloc(H * sizeof *xn);
    for (int c = 0; c < nc; c++) {
        int col = c * (cols / nc);
        double ss = 0;
        for (int i = 0; i < H; i++) ss += (double)xh[col * H + i] * xh[col * H + i];
        double inv = 1 / sqrt(ss / H + 1e-5);
        for (int i = 0; i < H; i++) xn[i] = xh[col * H + i] * inv * weight_get(DT_BF16, 1, H, gh, 0, i);
        for (int n = 0; n < H; n++) {
            double a = 0;
            for (int i = 0; i < H; i++) a += weight_get(t, H, H, wh, n, i) * xn[i];
            num = fmax(num, fabs(yh[col * H + n] - a));
            den = fmax(den, fabs(a));
        }
    }
    printf("accuracy %s [%d, %d] x %d columns (norm, x ~ N(0.5, 1)), kind %s: max_rel %.3g over %d columns\n",
           dtype_name(t), H, H, cols, p.d[p.n - 1].kind, num / den, nc);
    plan_free(&p);
    free(wh);
    free(gh);
    free(xh);
    free(yh);
    free(xn);
}

/* Seconds of one dispatch of a bench kernel (push block {out, iters, seed}, 128 threads a
 * workgroup, one f32 out per invocation) over `groups` workgroups: the best of 5 timestamped runs. */
static double bench_kernel_seconds(const char *name, const uint32_t *spec, uint32_t n_spec, uint32_t groups,
                                   uint32_t iters)
{
    static struct gpu_buf out; /* one for every call (buffers live until gpu_close) */
    if (out.size < (uint64_t)groups * 128 * 4) TRY(gpu_alloc(&g, (uint64_t)groups * 128 * 4, GPU_MEM_DEVICE, &out, &e));
    const struct gpu_pipeline *pipe;
    TRY(gpu_pipeline(&g, name, spec, n_spec, &pipe, &e));
    struct {
        uint64_t out;
        uint32_t iters;
        float seed;
    } pc = {out.addr, iters, 0.01f};
    double best = INFINITY;
    for (int r = 0; r < 5; r++) {
        uint64_t ticks[2];
        TRY(gpu_cmd_begin(&g, &e));
        TRY(gpu_cmd_reset_timestamps(&g, 0, 2, &e));
        gpu_cmd_timestamp(&g, 0);
        gpu_cmd_dispatch(&g, pipe, &pc, sizeof pc, groups, 1, 1);
        gpu_cmd_barrier(&g);
        gpu_cmd_timestamp(&g, 1);
        TRY(gpu_submit_wait(&g, NULL, &e));
        TRY(gpu_read_timestamps(&g, 0, 2, ticks, &e));
        best = fmin(best, (double)(ticks[1] - ticks[0]) * g.timestamp_period * 1e-9);
    }
    return best;
}

/* TFLOP/s of coopmat_roof.comp: cooperative-matrix products on registers, no memory traffic. */
static double coopmat_roof(void)
{
    const uint32_t groups = 4096, iters = 4096;
    double s = bench_kernel_seconds("coopmat_roof", NULL, 0, groups, iters);
    return (double)groups * 4 * iters * 8 * 2 * 16 * 16 * 16 / s * 1e-12;
}

/* TFLOP/s of coopmat_shm.comp: the products of gemm.comp's loop with fragments from shared memory
 * and nothing else (FM x FN blocks a subgroup, NB B parts, LOADS 0: fragments once, on registers;
 * PAD uvec4s of shared memory unused, to hold fewer workgroups a multiprocessor). */
static double coopmat_shm(uint32_t fm, uint32_t fn, uint32_t nb, uint32_t loads, uint32_t pad)
{
    const uint32_t groups = 4096, iters = 256, spec[5] = {fm, fn, nb, loads, pad};
    double s = bench_kernel_seconds("coopmat_shm", spec, 5, groups, iters);
    return (double)groups * 4 * iters * 4 * fm * fn * nb * 2 * 16 * 16 * 16 / s * 1e-12;
}

/* gemm_bench shm: coopmat_shm.comp over subgroup blocks, B parts and occupancy (bench/25). */
static int shm_sweep(void)
{
    TRY(gpu_open(&g, -1, &e));
    if (!g.has_coopmat_nv) {
        fprintf(stderr, "gemm_bench shm: the device has no cooperative matrices\n");
        return 2;
    }
    printf("device %s: coopmat roof %.1f TFLOP/s (registers only)\n", g.props.deviceName, coopmat_roof());
    /* FM, FN, NB; those over the device's shared memory are skipped (H200: the last three but one) */
    static const uint32_t cfg[][3] = {{4, 2, 2}, {4, 2, 1}, {2, 2, 2}, {2, 1, 2},
                                      {4, 4, 2}, {4, 4, 1}, {8, 2, 2}, {2, 4, 2}};
    static const uint32_t pads[] = {1, 1024, 2048, 3072, 4096};
    for (size_t c = 0; c < ARRAY_LEN(cfg); c++)
        for (size_t q = 0; q < ARRAY_LEN(pads); q++)
            for (uint32_t loads = 0; loads < 2; loads++) {
                uint32_t fm = cfg[c][0], fn = cfg[c][1], nb = cfg[c][2];
                uint32_t shared = (32 * fm + nb * 32 * fn) * 72 * 2 + pads[q] * 16 + 4096;
                if (shared > g.shared_mem) continue;
                printf("shm FM %u FN %u NB %u loads %u shared %6u B: %6.1f TFLOP/s\n", fm, fn, nb, loads, shared,
                       coopmat_shm(fm, fn, nb, loads, pads[q]));
                fflush(stdout);
            }
    TRY(gpu_close(&g, &e));
    return 0;
}

struct kind_sum {
    char kind[40];
    int n;
    double us, flop, bytes;
};

/* One line per op of the layer products (kind, op: each layer's dispatch of it summed) with the
 * geometry its pipeline was specialised with: a sweep's lines then say which product moved and
 * what tile, subgroup grid and split count it ran (gemm.comp's constant_ids 1-3, 6-7, 10; the
 * grid's z is the split count). us: [dispatch][rep] µs; tmp: reps doubles of scratch. */
static void op_lines(const struct plan *p, const double *us, int reps, double *tmp)
{
    for (int i = 0; i < p->n; i++) {
        const struct dispatch *d = &p->d[i];
        bool first = true;
        for (int j = 0; j < i && first; j++)
            first = strcmp(p->d[j].kind, d->kind) || strcmp(p->d[j].op, d->op);
        if (!first) continue;
        double sum = 0, bytes = 0;
        int n = 0;
        for (int j = i; j < p->n; j++) {
            if (strcmp(p->d[j].kind, d->kind) || strcmp(p->d[j].op, d->op)) continue;
            for (int r = 0; r < reps; r++) tmp[r] = us[(size_t)j * reps + r];
            qsort(tmp, (size_t)reps, sizeof *tmp, cmp_double);
            sum += tmp[reps / 2];
            bytes += (double)p->d[j].bytes;
            n++;
        }
        printf("    %-22s %-16s n=%-3d %8.1f µs %6.0f GB/s  grid %ux%ux%u", d->kind, d->op, n, sum,
               bytes / sum * 1e-3, d->groups[0], d->groups[1], d->groups[2]);
        const struct gpu_pipeline *pp = d->pipe;
        bool gemm = !strncmp(pp->name, "gemm", 4) && pp->n_spec >= 11; /* gemm.comp's variants (not the prep) */
        if (gemm) printf("  tile %ux%ux%u", pp->spec[1], pp->spec[2], pp->spec[3]);
        if (gemm && strncmp(pp->name, "gemm_fma", 8)) /* cooperative matrices: subgroup grid, loads, fragments */
            printf(" sg %ux%u pf %u frag %u", pp->spec[6], pp->spec[4] / 32 / pp->spec[6], pp->spec[7], pp->spec[9]);
        printf("\n");
    }
}

/* gemm_bench chain [N [COLS]] (bench/29): a chain of N rmsnorm dispatches of COLS columns (H = 2048,
 * one workgroup a column), each reading what the one before wrote, recorded with a barrier after
 * each and with no barriers at all (wrong results: the overlap bound). Prints µs a dispatch from GPU
 * timestamps around the run (median of 9). (bench/29 also timed chained links, flag waits in place
 * of barriers: slower, and removed since.) */
static int chain_bench(int n, int cols)
{
    TRY(gpu_open(&g, -1, &e));
    printf("device %s, driver %s: %d dependent rmsnorm dispatches of %d columns\n", g.props.deviceName,
           g.driver_name, n, cols);
    struct gpu_weight x0 = make(DT_F32, cols, H, 1.0f, 0), x1 = make(DT_F32, cols, H, 1.0f, 0);
    struct gpu_weight gain = make(DT_F32, 1, H, 0.1f, 1.0f);
    struct plan p = {.kind = PLAN_BATCH}; /* no buffer list: plan_record puts a barrier after each */
    for (int i = 0; i < n; i++)
        TRY(k_rmsnorm(&g, &p, &gain, i % 2 ? x1.addr : x0.addr, i % 2 ? x0.addr : x1.addr, 0, cols, 1e-5f, false, 0,
                      "chain", "", &e));
    static const char *const modes[2] = {"barriers", "no barriers"};
    for (int m = 0; m < 2; m++) {
        double us[9];
        for (int r = -1; r < 9; r++) { /* one warm-up run */
            uint64_t ticks[2];
            TRY(gpu_cmd_begin(&g, &e));
            TRY(gpu_cmd_reset_timestamps(&g, 0, 2, &e));
            gpu_cmd_barrier(&g);
            gpu_cmd_timestamp(&g, 0);
            if (m == 0) plan_record(&g, &p, -1);
            for (int i = 0; m == 1 && i < p.n; i++) {
                const struct dispatch *d = &p.d[i];
                gpu_cmd_dispatch(&g, d->pipe, d->push, d->push_size, d->groups[0], d->groups[1], d->groups[2]);
            }
            if (m == 1) gpu_cmd_barrier(&g);
            gpu_cmd_timestamp(&g, 1);
            TRY(gpu_submit_wait(&g, NULL, &e));
            TRY(gpu_read_timestamps(&g, 0, 2, ticks, &e));
            if (r >= 0) us[r] = (double)(ticks[1] - ticks[0]) * g.timestamp_period * 1e-3;
        }
        qsort(us, 9, sizeof *us, cmp_double);
        printf("  %-12s %8.2f µs a dispatch (%.0f µs for %d; p10-p90 of the run %.0f-%.0f)\n", modes[m],
               us[4] / n, us[4], n, us[1], us[7]);
    }
    plan_free(&p);
    int rc = gpu_close(&g, &e);
    if (rc) fprintf(stderr, "gemm_bench: %s\n", e.msg);
    return rc ? 1 : 0;
}

/* The --tune and --precision arguments after the positional ones, removed from argv; -1 on a bad
 * one. */
static int take_tune(int *argc, char **argv, struct tune *t, enum precision *prec)
{
    int n = 1;
    *t = tune_default();
    *prec = PRECISION_EXACT;
    for (int i = 1; i < *argc; i++) {
        if (!strcmp(argv[i], "--precision")) {
            if (++i == *argc || !precision_parse(argv[i], prec)) {
                fprintf(stderr, "gemm_bench: --precision: expected exact or serving\n");
                return -1;
            }
            continue;
        }
        if (strcmp(argv[i], "--tune")) {
            argv[n++] = argv[i];
            continue;
        }
        if (++i == *argc || tune_parse_all(t, argv[i], &e)) {
            fprintf(stderr, "gemm_bench: %s\n", i == *argc ? "--tune needs key=value" : e.msg);
            return -1;
        }
    }
    *argc = n;
    return 0;
}

int main(int argc, char **argv)
{
    struct tune tune;
    enum precision prec;
    if (take_tune(&argc, argv, &tune, &prec)) return 2;
    if (argc == 2 && !strcmp(argv[1], "shm")) return shm_sweep();
    if (argc >= 2 && !strcmp(argv[1], "chain")) {
        int n = argc > 2 ? atoi(argv[2]) : 256, cols = argc > 3 ? atoi(argv[3]) : 1;
        if (n < 1 || n > 60000 || cols < 1 || cols > 4096) {
            fprintf(stderr, "usage: gemm_bench chain [N (1..60000) [COLS (1..4096)]]\n");
            return 2;
        }
        return chain_bench(n, cols);
    }
    if (argc < 3) {
        fprintf(stderr, "usage: gemm_bench DTYPE COLS [REPS [LAYERS]]\n");
        return 2;
    }
    static const enum dtype types[] = {DT_F32, DT_F16, DT_BF16, DT_Q8_0, DT_Q4_0};
    enum dtype t = DT_COUNT;
    for (size_t i = 0; i < ARRAY_LEN(types); i++)
        if (!strcasecmp(argv[1], dtype_name(types[i]))) t = types[i];
    if (t == DT_COUNT) {
        fprintf(stderr, "gemm_bench: dtype %s: expected bf16, f16, f32, q8_0 or q4_0\n", argv[1]);
        return 2;
    }
    int cols = atoi(argv[2]), reps = argc > 3 ? atoi(argv[3]) : 20, layers = argc > 4 ? atoi(argv[4]) : LAYERS;
    if (cols < 1 || reps < 1 || layers < 1 || layers > LAYERS) return 2;
    TRY(gpu_open(&g, -1, &e));
    g.tune = tune;
    g.precision = prec;
    printf("device %s, driver %s, gemm on %s, precision %s\n", g.props.deviceName, g.driver_name,
           g.gemm_khr || g.gemm_nv ? "cooperative matrices" : "the FMA twin", precision_name(prec));

    /* weights of the 16 layers, activations */
    static const bool attn[LAYERS] = {[2] = 1, [5] = 1, [8] = 1, [10] = 1, [12] = 1, [14] = 1};
    struct gpu_weight hidden = make(DT_F32, cols, H, 1.0f, 0), t1 = make(DT_F32, cols, FFN, 1.0f, 0);
    struct gpu_weight t2 = make(DT_F32, cols, H, 1.0f, 0), q = make(DT_F32, cols, H, 1.0f, 0);
    struct gpu_weight kb = make(DT_F32, cols, KV, 1.0f, 0), vb = make(DT_F32, cols, KV, 1.0f, 0);
    struct sel_scratch need = {0}; /* the largest of a layer's products (the plan below) */
    need_of(&need, t, H, H, false, true, false, cols);   /* q, in_proj's rows below */
    need_of(&need, t, KV, H, false, true, false, cols);  /* k, v */
    need_of(&need, t, 3 * H, H, false, true, false, cols);
    need_of(&need, t, H, H, false, false, true, cols);   /* out_proj */
    need_of(&need, t, FFN, H, true, true, false, cols);  /* the SwiGLU pair */
    need_of(&need, t, H, FFN, false, false, true, cols); /* ffn_down */
    TRY(k_scratch_reserve(&g, &need, &scratch, &e));
    struct plan p = {.kind = PLAN_WIDE, .scratch = &scratch};
    for (int l = 0; l < layers; l++) {
        struct gpu_weight g1 = make(DT_BF16, 1, H, 0.1f, 1.0f), g2 = make(DT_BF16, 1, H, 0.1f, 1.0f);
        struct k_norm n1 = {&g1, 1e-5f, false}, n2 = {&g2, 1e-5f, false};
        if (attn[l]) {
            struct gpu_weight wq = mat(t, H, H), wk = mat(t, KV, H), wv = mat(t, KV, H), wo = mat(t, H, H);
            TRY(k_matmul_norm(&g, &p, &wq, &n1, hidden.addr, q.addr, cols, false, l, "attn.q_proj", "", &e));
            TRY(k_matmul_norm(&g, &p, &wk, &n1, hidden.addr, kb.addr, cols, false, l, "attn.k_proj", "", &e));
            TRY(k_matmul_norm(&g, &p, &wv, &n1, hidden.addr, vb.addr, cols, false, l, "attn.v_proj", "", &e));
            TRY(k_matmul(&g, &p, &wo, t2.addr, hidden.addr, cols, true, l, "attn.out_proj", "", &e));
        } else {
            struct gpu_weight wi = mat(t, 3 * H, H), wo = mat(t, H, H);
            TRY(k_matmul_norm(&g, &p, &wi, &n1, hidden.addr, t1.addr, cols, false, l, "conv.in_proj", "", &e));
            TRY(k_matmul(&g, &p, &wo, t2.addr, hidden.addr, cols, true, l, "conv.out_proj", "", &e));
        }
        struct gpu_weight w1 = mat(t, FFN, H), w3 = mat(t, FFN, H), w2 = mat(t, H, FFN);
        TRY(k_matmul_swiglu(&g, &p, &w1, &w3, &n2, hidden.addr, t1.addr, cols, l, "ffn", "", &e));
        TRY(k_matmul(&g, &p, &w2, t1.addr, hidden.addr, cols, true, l, "ffn_down", "", &e));
    }

    /* timed steps: per-dispatch timestamps; then walls without them */
    int n = p.n;
    double *us = calloc((size_t)n * reps, sizeof *us), *tmp = calloc((size_t)reps, sizeof *tmp);
    uint64_t *ticks = calloc((size_t)2 * n, sizeof *ticks);
    for (int r = -2; r < reps; r++) { /* two warm-up steps */
        TRY(gpu_cmd_begin(&g, &e));
        TRY(gpu_cmd_reset_timestamps(&g, 0, 2 * (uint32_t)n, &e));
        plan_record(&g, &p, 0);
        TRY(gpu_submit_wait(&g, NULL, &e));
        TRY(gpu_read_timestamps(&g, 0, 2 * (uint32_t)n, ticks, &e));
        for (int i = 0; r >= 0 && i < n; i++)
            us[(size_t)i * reps + r] = (double)(ticks[2 * i + 1] - ticks[2 * i]) * g.timestamp_period * 1e-3;
    }
    double wall_min = INFINITY;
    for (int r = 0; r < reps; r++) {
        double wall;
        TRY(gpu_cmd_begin(&g, &e));
        plan_record(&g, &p, -1);
        TRY(gpu_submit_wait(&g, &wall, &e));
        wall_min = fmin(wall_min, wall);
    }
    struct kind_sum ks[16] = {0};
    int nk = 0;
    double total = 0, flop_total = 0;
    for (int i = 0; i < n; i++) {
        const struct dispatch *d = &p.d[i];
        for (int r = 0; r < reps; r++) tmp[r] = us[(size_t)i * reps + r];
        qsort(tmp, (size_t)reps, sizeof *tmp, cmp_double);
        double med = tmp[reps / 2];
        /* weight elements from the tag's bytes: products = elements · columns */
        double elems = (double)d->bytes / ((double)dtype_bytes(t, 1 << 20) / (1 << 20));
        int k = 0;
        while (k < nk && strcmp(ks[k].kind, d->kind)) k++;
        if (k == nk && nk < 16) snprintf(ks[nk++].kind, sizeof ks[0].kind, "%s", d->kind);
        ks[k].n++;
        ks[k].us += med;
        ks[k].flop += 2 * elems * cols;
        ks[k].bytes += (double)d->bytes;
        total += med;
        flop_total += 2 * elems * cols;
    }
    printf("%s, %d columns, %d dispatches, %d reps (median per dispatch)\n", dtype_name(t), cols, n, reps);
    for (int k = 0; k < nk; k++)
        printf("  %-24s n=%-3d %9.1f µs  %7.1f TFLOP/s  %7.0f GB/s\n", ks[k].kind, ks[k].n, ks[k].us,
               ks[k].flop / ks[k].us * 1e-6, ks[k].bytes / ks[k].us * 1e-3);
    printf("  sum %.1f µs: %.3f TFLOP, %.1f TFLOP/s; wall without timestamps (min) %.1f µs\n", total,
           flop_total * 1e-12, flop_total / total * 1e-6, wall_min);
    op_lines(&p, us, reps, tmp);
    accuracy(t, cols);
    if (g.has_coopmat_nv) printf("coopmat roof (registers only, 16x16x16 f16*f16+f32): %.1f TFLOP/s\n", coopmat_roof());
    plan_free(&p);
    free(us);
    free(tmp);
    free(ticks);
    int rc = gpu_close(&g, &e);
    if (rc) fprintf(stderr, "gemm_bench: %s\n", e.msg);
    return rc ? 1 : 0;
}
