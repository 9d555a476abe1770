/* test_kernels.c - every compute kernel against a CPU reference (double accumulation) on fresh
 * random inputs, outputs poisoned with NaN before each run, several sizes including ones that are
 * not multiples of the workgroup geometry. Quantized weights go through weight_repack. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpu.h"
#include "kernels.h"
#include "plan.h"
#include "testutil.h"
#include "tuning.h"
#include "weights.h"

#define POISON 0x7fc00000u /* a quiet NaN: any element a kernel forgets to write fails the compare */

static struct gpu g;
static struct t_rng rng;
static struct err e;
static double worst_rel; /* the largest relative error seen by any f32 compare */

static const enum dtype all_types[] = {DT_F32, DT_F16, DT_BF16, DT_Q8_0, DT_Q4_0};
static const enum dtype plain_types[] = {DT_F32, DT_F16, DT_BF16};

/* ---- device helpers (each failure is a test failure with the core's message) */

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

/* A plan of kind `kind` on kernel scratch of exactly `need` (kernels.h k_scratch: what the engine
 * reserves before a build from k_matmul_scratch / k_attn_scratch), fresh for each case, so that a
 * need short of what the kernels take fails the case (their ST_RUNTIME). */
static struct k_scratch case_scratch;
static struct plan plan_on_scratch(enum plan_kind kind, struct sel_scratch need)
{
    memset(&case_scratch, 0, sizeof case_scratch);
    T_CHECK(k_scratch_reserve(&g, &need, &case_scratch, &e) == ST_OK, "scratch: %s", e.msg);
    return (struct plan){.kind = kind, .scratch = &case_scratch};
}

static void poison(const struct gpu_buf *b)
{
    int rc = gpu_fill(&g, b, POISON, &e);
    T_CHECK(rc == ST_OK, "gpu_fill: %s", e.msg);
}

static void run_plan(struct plan *p)
{
    int rc = gpu_cmd_begin(&g, &e);
    T_CHECK(rc == ST_OK, "gpu_cmd_begin: %s", e.msg);
    plan_record(&g, p, -1);
    rc = gpu_submit_wait(&g, NULL, &e);
    T_CHECK(rc == ST_OK, "gpu_submit_wait: %s", e.msg);
    plan_free(p);
}

static float *rand_floats(size_t n, float scale)
{
    float *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = scale * t_rng_normal(&rng);
    return v;
}

static struct gpu_buf dev_floats(const float *v, size_t n)
{
    struct gpu_buf b = dev_alloc(n * 4);
    up(&b, v, n * 4);
    return b;
}

/* max |out - ref| / max |ref| over n values; any non-finite output counts as a failure (returns
 * infinity). */
static double rel_err(const float *out, const double *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(out[i])) return INFINITY;
        num = fmax(num, fabs(out[i] - ref[i]));
        den = fmax(den, fabs(ref[i]));
    }
    double r = den > 0 ? num / den : num;
    if (r > worst_rel) worst_rel = r;
    return r;
}

/* ---- weights: random values in the FILE layout (ggml blocks for Q types), repacked in pieces */

static void quant_block(enum dtype t, const float *x, uint8_t *blk)
{
    float amax = 0, m = 0;
    for (int j = 0; j < 32; j++) {
        if (fabsf(x[j]) > amax) {
            amax = fabsf(x[j]);
            m = x[j];
        }
    }
    if (t == DT_Q8_0) {
        float d = amax / 127, id = d ? 1 / d : 0;
        uint16_t h = f32_to_f16(d);
        memcpy(blk, &h, 2);
        for (int j = 0; j < 32; j++) blk[2 + j] = (uint8_t)(int8_t)roundf(x[j] * id);
    } else {
        float d = m / -8, id = d ? 1 / d : 0;
        uint16_t h = f32_to_f16(d);
        memcpy(blk, &h, 2);
        for (int j = 0; j < 16; j++) {
            int lo = (int)fminf(15, floorf(x[j] * id + 8.5f)), hi = (int)fminf(15, floorf(x[j + 16] * id + 8.5f));
            blk[2 + j] = (uint8_t)(lo | hi << 4);
        }
    }
}

/* Element (row, i) decoded straight from the file layout (independent of weight_get). */
static float file_get(enum dtype t, int64_t k, const uint8_t *f, int64_t row, int64_t i)
{
    int64_t e = row * k + i;
    if (t == DT_F32) {
        float v;
        memcpy(&v, f + 4 * e, 4);
        return v;
    }
    if (t == DT_F16) return f16_to_f32(rd_u16(f + 2 * e));
    if (t == DT_BF16) return bf16_to_f32(rd_u16(f + 2 * e));
    int bb = t == DT_Q8_0 ? 34 : 18;
    const uint8_t *b = f + (e / 32) * bb;
    float d = f16_to_f32(rd_u16(b));
    int j = (int)(e % 32);
    if (t == DT_Q8_0) return (float)(int8_t)b[2 + j] * d;
    return ((float)(j < 16 ? b[2 + j] & 15 : b[2 + j - 16] >> 4) - 8) * d;
}

struct host_weight {
    struct gpu_weight w;
    struct gpu_buf buf;
    uint8_t *dev;   /* device layout on the host */
    double *val;    /* [rows][k] decoded values */
};

/* Random values offset + scale·N(0, 1) as a [rows, k] tensor in the FILE layout. */
static uint8_t *make_file(enum dtype t, int64_t rows, int64_t k, float scale, float offset)
{
    uint64_t bytes = weight_bytes(t, rows, k), n = (uint64_t)(rows * k);
    uint8_t *file = malloc(bytes);
    float *x = malloc(n * sizeof *x);
    for (uint64_t i = 0; i < n; i++) x[i] = offset + scale * t_rng_normal(&rng);
    for (uint64_t i = 0; i < n; i++) {
        if (t == DT_F32) memcpy(file + 4 * i, &x[i], 4);
        if (t == DT_F16 || t == DT_BF16) {
            uint16_t v = t == DT_F16 ? f32_to_f16(x[i]) : f32_to_bf16(x[i]);
            memcpy(file + 2 * i, &v, 2);
        }
    }
    if (t == DT_Q8_0 || t == DT_Q4_0)
        for (uint64_t b = 0; b < n / 32; b++) quant_block(t, x + 32 * b, file + b * (t == DT_Q8_0 ? 34 : 18));
    free(x);
    return file;
}

static struct host_weight make_weight(enum dtype t, int64_t rows, int64_t k, float scale, float offset)
{
    struct host_weight h = {0};
    uint64_t bytes = weight_bytes(t, rows, k), n = (uint64_t)(rows * k);
    uint8_t *file = make_file(t, rows, k, scale, offset);
    /* repack in three pieces with odd boundaries, as a streaming upload would */
    h.dev = malloc(bytes);
    uint64_t cut1 = bytes / 3 + 7, cut2 = MIN(bytes, 2 * bytes / 3 + 3);
    weight_repack(t, rows, k, file, 0, cut1, h.dev);
    weight_repack(t, rows, k, file, cut1, cut2 - cut1, h.dev + cut1);
    weight_repack(t, rows, k, file, cut2, bytes - cut2, h.dev + cut2);
    h.val = malloc(n * sizeof *h.val);
    int bad = 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t i = 0; i < k; i++) {
            float a = weight_get(t, rows, k, h.dev, r, i), b = file_get(t, k, file, r, i);
            if (a != b) bad++;
            h.val[r * k + i] = a;
        }
    T_CHECK(bad == 0, "weight_repack %s [%lld, %lld]: %d elements differ from the file", dtype_name(t),
            (long long)rows, (long long)k, bad);
    h.buf = dev_alloc(bytes);
    up(&h.buf, h.dev, bytes);
    h.w = (struct gpu_weight){h.buf.addr, t, rows, k, bytes};
    free(file);
    return h;
}

static void free_weight(struct host_weight *h)
{
    free(h->dev);
    free(h->val);
}

/* ---- embed */

static void test_embed(void)
{
    const int V = 50, D = 300, C = 7;
    for (size_t ti = 0; ti < ARRAY_LEN(all_types); ti++) {
        enum dtype t = all_types[ti];
        int dim = t == DT_Q8_0 || t == DT_Q4_0 ? 320 : D;
        struct host_weight E = make_weight(t, V, dim, 1.0f, 0);
        struct col_meta cm[7];
        for (int c = 0; c < C; c++) cm[c] = (struct col_meta){t_rng_u32(&rng) % V, (uint32_t)c, (uint32_t)c, 0};
        struct gpu_buf cols = dev_alloc(sizeof cm), out = dev_alloc((uint64_t)C * dim * 4);
        up(&cols, cm, sizeof cm);
        poison(&out);
        struct plan p = {0};
        T_CHECK(k_embed(&g, &p, &E.w, cols.addr, out.addr, C, &e) == ST_OK, "k_embed: %s", e.msg);
        T_CHECK(p.n == 1 && strncmp(p.d[0].kind, "embed.", 6) == 0 && p.d[0].layer == -1, "embed tags");
        run_plan(&p);
        float *o = malloc((size_t)C * dim * 4);
        double *ref = malloc((size_t)C * dim * sizeof *ref);
        down(&out, o, (uint64_t)C * dim * 4);
        for (int c = 0; c < C; c++)
            for (int i = 0; i < dim; i++) ref[c * dim + i] = E.val[(int64_t)cm[c].token * dim + i];
        double r = rel_err(o, ref, (size_t)C * dim);
        T_CHECK(r == 0, "embed %s: rel err %g (expected exact)", dtype_name(t), r);
        free(o);
        free(ref);
        free_weight(&E);
    }
}

/* ---- rmsnorm */

static void test_rmsnorm(void)
{
    const int dims[] = {300, 2053};
    for (size_t di = 0; di < ARRAY_LEN(dims); di++) {
        for (size_t ti = 0; ti < ARRAY_LEN(plain_types); ti++) {
            for (int variant = 0; variant < 2; variant++) { /* 0: plain, all rows; 1: plus1 + gather */
                int D = dims[di], R = 5;
                bool plus1 = variant == 1;
                uint32_t idx[3] = {3, 0, 4};
                int n_out = variant ? 3 : R;
                struct host_weight w = make_weight(plain_types[ti], 1, D, plus1 ? 0.1f : 1.0f, plus1 ? 0 : 1);
                float *x = rand_floats((size_t)R * D, 2.0f);
                struct gpu_buf xb = dev_floats(x, (size_t)R * D), yb = dev_alloc((uint64_t)n_out * D * 4);
                struct gpu_buf ib = dev_alloc(sizeof idx);
                up(&ib, idx, sizeof idx);
                poison(&yb);
                struct plan p = {0};
                int rc = k_rmsnorm(&g, &p, &w.w, xb.addr, yb.addr, variant ? ib.addr : 0, n_out, 1e-5f, plus1, 3,
                                   "ffn_norm", variant ? "head." : "", &e);
                T_CHECK(rc == ST_OK, "k_rmsnorm: %s", e.msg);
                run_plan(&p);
                float *y = malloc((size_t)n_out * D * 4);
                double *ref = malloc((size_t)n_out * D * sizeof *ref);
                down(&yb, y, (uint64_t)n_out * D * 4);
                for (int r = 0; r < n_out; r++) {
                    int src = variant ? (int)idx[r] : r;
                    double ss = 0;
                    for (int i = 0; i < D; i++) ss += (double)x[src * D + i] * x[src * D + i];
                    double inv = 1 / sqrt(ss / D + 1e-5);
                    for (int i = 0; i < D; i++) ref[r * D + i] = (plus1 + w.val[i]) * x[src * D + i] * inv;
                }
                double er = rel_err(y, ref, (size_t)n_out * D);
                T_CHECK(er < 1e-5, "rmsnorm %s dim %d variant %d: rel err %g", dtype_name(plain_types[ti]), D, variant, er);
                free(x);
                free(y);
                free(ref);
                free_weight(&w);
            }
        }
    }
}

/* rmsnorm_add: y += rms(x, w) (GLM's post-norms). y starts random: an element the kernel forgets
 * keeps its old value and misses the added term; the row past n_rows stays poisoned. */
static void test_rmsnorm_add(void)
{
    const int dims[] = {300, 2053, 40};
    for (size_t di = 0; di < ARRAY_LEN(dims); di++) {
        for (size_t ti = 0; ti < ARRAY_LEN(plain_types); ti++) {
            int D = dims[di], R = 5;
            bool plus1 = ti == 1;
            struct host_weight w = make_weight(plain_types[ti], 1, D, plus1 ? 0.1f : 1.0f, plus1 ? 0 : 1);
            float *x = rand_floats((size_t)R * D, 2.0f), *y0 = rand_floats((size_t)R * D, 1.0f);
            struct gpu_buf xb = dev_floats(x, (size_t)R * D), yb = dev_alloc((uint64_t)(R + 1) * D * 4);
            poison(&yb);
            up(&yb, y0, (uint64_t)R * D * 4);
            struct plan p = {0};
            int rc = k_rmsnorm_add(&g, &p, &w.w, xb.addr, yb.addr, R, 1e-5f, plus1, 2, "post_ffn_norm", &e);
            T_CHECK(rc == ST_OK, "k_rmsnorm_add: %s", e.msg);
            T_CHECK(p.n == 1 && !strcmp(p.d[0].kind, "rmsnorm_add") && p.d[0].layer == 2 && p.d[0].bytes == w.w.bytes,
                    "rmsnorm_add tags");
            run_plan(&p);
            float *y = malloc((size_t)(R + 1) * D * 4);
            double *ref = malloc((size_t)R * D * sizeof *ref);
            down(&yb, y, (uint64_t)(R + 1) * D * 4);
            for (int r = 0; r < R; r++) {
                double ss = 0;
                for (int i = 0; i < D; i++) ss += (double)x[r * D + i] * x[r * D + i];
                double inv = 1 / sqrt(ss / D + 1e-5);
                for (int i = 0; i < D; i++) ref[r * D + i] = y0[r * D + i] + (plus1 + w.val[i]) * x[r * D + i] * inv;
            }
            double er = rel_err(y, ref, (size_t)R * D);
            T_CHECK(er < 1e-5, "rmsnorm_add %s dim %d: rel err %g", dtype_name(plain_types[ti]), D, er);
            int written = 0;
            for (int i = 0; i < D; i++) written += !isnan(y[R * D + i]);
            T_CHECK(written == 0, "rmsnorm_add %s dim %d: %d elements written past the last row",
                    dtype_name(plain_types[ti]), D, written);
            free(x);
            free(y0);
            free(y);
            free(ref);
            free_weight(&w);
        }
    }
}

/* ---- matmul (plain, fused norm, accumulate, SwiGLU) */

/* ref[c][n] = y0[c][n] + (W1 x')[n], or silu(W1 x')·(W3 x') when w3; x' = x or rms(x)·gain. */
/* half_x: x' rounded to f16 (to nearest), as the gemm takes it in serving precision. */
static void matmul_ref_x(const double *w1, const double *w3, const double *gain, const float *x, const float *y0,
                         int rows, int k, int cols, bool half_x, double *ref)
{
    double *xn = malloc((size_t)k * sizeof *xn);
    for (int c = 0; c < cols; c++) {
        double ss = 0;
        for (int i = 0; i < k; i++) ss += (double)x[c * k + i] * x[c * k + i];
        double inv = gain ? 1 / sqrt(ss / k + 1e-5) : 1;
        for (int i = 0; i < k; i++) xn[i] = x[c * k + i] * inv * (gain ? gain[i] : 1);
        for (int i = 0; half_x && i < k; i++) xn[i] = f16_to_f32(f32_to_f16((float)xn[i]));
        for (int n = 0; n < rows; n++) {
            double a = 0, b = 0;
            for (int i = 0; i < k; i++) a += w1[(int64_t)n * k + i] * xn[i];
            if (w3) {
                for (int i = 0; i < k; i++) b += w3[(int64_t)n * k + i] * xn[i];
                a = a / (1 + exp(-a)) * b;
            }
            ref[c * rows + n] = a + (y0 ? y0[c * rows + n] : 0);
        }
    }
    free(xn);
}
static void matmul_ref(const double *w1, const double *w3, const double *gain, const float *x, const float *y0,
                       int rows, int k, int cols, double *ref)
{
    matmul_ref_x(w1, w3, gain, x, y0, rows, k, cols, false, ref);
}

/* Whether dispatch d is the cooperative-matrix gemm (kind [prefix]gemm[_khr][_swiglu].<dtype>, or
 * gemm_cm2[_prep][_swiglu].<dtype>, which rounds Q4_0's q·d to f16 as well; the FMA twin's is
 * gemm_fma.<dtype>). The H100 found the KHR names missing here: its Q4_0 cases were held to the
 * exact weights the tile rounds (bench/42). */
static bool on_tensor_cores(const struct dispatch *d)
{
    return strstr(d->kind, "gemm.") || strstr(d->kind, "gemm_swiglu.") || strstr(d->kind, "gemm_khr.") ||
           strstr(d->kind, "gemm_khr_swiglu.") || strstr(d->kind, "gemm_cm2");
}

/* The weights as the cooperative-matrix gemm stages them (gemm.comp): Q4_0's q·d rounded to f16
 * (to nearest) once; the other types exactly as decoded; in serving precision (all) every type
 * rounded to f16, by the FMA twin too. A copy of val's n values (the caller frees it). */
static double *gemm_tile_weights(enum dtype t, const double *val, size_t n, bool all)
{
    double *v = malloc(n * sizeof *v);
    CHECK(v);
    for (size_t i = 0; i < n; i++) v[i] = t == DT_Q4_0 || all ? f16_to_f32(f32_to_f16((float)val[i])) : val[i];
    return v;
}

/* Whether a product of a plan of kind k runs in serving precision: the wide plan's gemm under
 * --precision serving (test_kernels_gemm_serving; main sets every product of it to the gemm). */
static bool serving_gemm(enum plan_kind k) { return k == PLAN_WIDE && g.precision == PRECISION_SERVING; }

/* The kernel choice's context (select.h) on this device for a plan of kind k. */
static struct sel sel_for(enum plan_kind k)
{
    return k_sel(&g, k);
}

/* The wide plan's gemm path now (the device's and the tune's: select.c sel_gemm_path). */
static enum gemm_path gemm_path_now(void)
{
    struct sel s = sel_for(PLAN_WIDE);
    enum gemm_path path;
    return sel_gemm_path(&s, 0, &path, NULL) == ST_OK ? path : GEMM_PATH_FMA;
}

/* Whether a --tune key sends products to one matrix-vector kernel (the ctest variants). */
static bool routed(void) { return g.tune.matvec_cols || g.tune.qmv_cols || g.tune.xmv_cols; }

/* Whether a wide plan's product of a weight of type t over cols columns goes through an f16 copy
 * of its weights (select.c sel_gemm_wdeq_serves; the test weights are far below its size bound). */
static bool wdeq_expected(enum dtype t, int cols)
{
    struct sel s = sel_for(PLAN_WIDE);
    struct sel_weight w = {t, 1, 32};
    return sel_gemm_wdeq_serves(&s, cols, &w);
}

/* The widening dispatches (kind ...gemm_wdeq.q4_0) of a plan. */
static int wdeq_count(const struct plan *p)
{
    int n = 0;
    for (int d = 0; d < p->n; d++) n += strstr(p->d[d].kind, "gemm_wdeq.") != NULL;
    return n;
}

/* The plan kind test_matmul_case builds for: PLAN_WIDE sends it to the tiled gemm (test_gemm). */
static enum plan_kind matmul_kind = PLAN_BATCH;

static void test_matmul_case(enum dtype t, int rows, int k, int cols, bool swiglu, bool norm, bool acc)
{
    struct host_weight w1 = make_weight(t, rows, k, 1.0f / sqrtf((float)k), 0), w3 = {0};
    if (swiglu) w3 = make_weight(t, rows, k, 1.0f / sqrtf((float)k), 0);
    struct host_weight gn = {0};
    if (norm) gn = make_weight(DT_BF16, 1, k, 0.1f, 1.0f);
    float *x = rand_floats((size_t)cols * k, 1.5f), *y0 = rand_floats((size_t)cols * rows, 1.0f);
    struct gpu_buf xb = dev_floats(x, (size_t)cols * k), yb = dev_alloc((uint64_t)cols * rows * 4);
    if (acc) up(&yb, y0, (uint64_t)cols * rows * 4);
    else poison(&yb);
    struct k_norm kn = {norm ? &gn.w : NULL, 1e-5f, false};
    const struct gpu_weight *ws[2] = {&w1.w, &w3.w};
    struct plan p = plan_on_scratch(matmul_kind, k_matmul_scratch(&g, matmul_kind, swiglu ? 2 : 1, ws, swiglu,
                                                                  norm ? &kn : NULL, acc && !swiglu, cols));
    int rc = swiglu ? k_matmul_swiglu(&g, &p, &w1.w, &w3.w, &kn, xb.addr, yb.addr, cols, 2, "ffn", "", &e)
             : norm ? k_matmul_norm(&g, &p, &w1.w, &kn, xb.addr, yb.addr, cols, acc, 2, "q_proj", "", &e)
                    : k_matmul(&g, &p, &w1.w, xb.addr, yb.addr, cols, acc, 2, "q_proj", "head.", &e);
    T_CHECK(rc == ST_OK, "matmul: %s", e.msg);
    /* wide: the gemm, after its activations' prep pass (gemm_xprep) where a norm needs one (always),
     * or split sums that start from 0; with cooperative matrices also where the product does not
     * split its plain x while staging (gemm.comp XRAW) */
    int want_n = matmul_kind == PLAN_WIDE ? 1 : (cols + K_MATMUL_MAX_COLS - 1) / K_MATMUL_MAX_COLS;
    bool split_ok = !swiglu && !norm && acc; /* xmv may split k over workgroups (kernels.c xmv_ksplits) */
    if (matmul_kind == PLAN_BATCH && k_xmv_serves(&g, &p, cols, &w1.w, swiglu, (uint64_t)rows, split_ok))
        want_n = (cols + K_XMV_COLS - 1) / K_XMV_COLS; /* xmv: passes of <= K_XMV_COLS columns */
    /* wide Q4_0 from K_GEMM_WDEQ_COLS: first the widening of the weights into their f16 copy */
    int n_wdeq = wdeq_count(&p), n = p.n - n_wdeq;
    bool wdeq = matmul_kind == PLAN_WIDE && wdeq_expected(t, cols);
    T_CHECK(n_wdeq == (wdeq ? 1 : 0) && (!n_wdeq || strstr(p.d[0].kind, "gemm_wdeq.q4_0")),
            "matmul %s cols %d: %d widening dispatches (want %d), first kind %s", dtype_name(t), cols, n_wdeq, wdeq,
            p.n ? p.d[0].kind : "-");
    T_CHECK(!n_wdeq || p.d[0].bytes == w1.w.bytes * (swiglu ? 2 : 1), "widening: bytes tag");
    T_CHECK(n == want_n || (matmul_kind == PLAN_WIDE && n == 2), "matmul: %d dispatches for %d columns", n, cols);
    T_CHECK(matmul_kind != PLAN_WIDE || !norm || n == 2, "matmul: a normed product (swiglu %d) without its prep: %d "
            "dispatches, %d columns", swiglu, n, cols);
    const struct dispatch *last = p.n > 0 ? &p.d[p.n - 1] : NULL;
    if (matmul_kind == PLAN_WIDE && last) {
        /* the kernel the choice names: the path's, or with cm2 forced gemm_cm2 (its x mode in the kind)
         * or the fallback's (test_select has the rows) */
        struct sel sk = sel_for(PLAN_WIDE);
        struct sel_weight skw = {wdeq ? DT_F16 : t, rows, k};
        struct sel_gemm sg;
        T_CHECK(sel_gemm(&sk, &skw, swiglu, cols, acc && !swiglu, !norm, "t", &sg, &e) == ST_OK, "choice: %s", e.msg);
        char want[40];
        snprintf(want, sizeof want, "%s%s%s%s.", swiglu || norm ? "" : "head.", sg.kernel,
                 sg.cm2 && sg.cm2_x == SEL_CM2_X_PREP ? "_prep" : "", swiglu ? "_swiglu" : "");
        T_CHECK(strncmp(last->kind, want, strlen(want)) == 0, "gemm kind %s, expected %s<dtype>", last->kind, want);
        T_CHECK(strcasecmp(strrchr(last->kind, '.') + 1, dtype_name(t)) == 0 || t != DT_Q4_0,
                "gemm kind %s: the weights' type, %s", last->kind, dtype_name(t));
        if (n == 2)
            T_CHECK(strstr(p.d[n_wdeq].kind, "gemm_xprep") && p.d[n_wdeq].bytes == 0, "gemm prep kind %s",
                    p.d[n_wdeq].kind);
    }
    T_CHECK(last && last->bytes == w1.w.bytes * (swiglu ? 2 : 1), "matmul: bytes tag");
    /* the matrix-vector kernel select.c picks (its rules: test_select), over want_split workgroups
     * along k for xmv */
    struct sel sl = sel_for(matmul_kind);
    struct sel_weight sw = {t, rows, k};
    enum sel_mv mk = sel_mv_pick(&sl, cols, &sw, swiglu, (uint64_t)rows, 1, split_ok);
    bool want_xmv = mk == SEL_MV_XMV;
    int want_split = want_xmv ? (int)sel_xmv_ksplits(&sl, &sw, swiglu, split_ok) : 1;
    /* split: the float-atomic variant over a grid of want_split workgroups along k */
    for (int d = 0; want_xmv && d < p.n; d++)
        T_CHECK(p.d[d].groups[1] == (uint32_t)want_split &&
                    (strstr(p.d[d].pipe->name, "_fadd") != NULL) == (want_split > 1),
                "xmv %s k %d cols %d: grid y %u, pipeline %s, want %d k splits", dtype_name(t), k, cols,
                p.d[d].groups[1], p.d[d].pipe->name, want_split);
    bool want_qmv = mk == SEL_MV_QMV;
    T_CHECK(!last || (strncmp(last->pipe->name, "qmv", 3) == 0) == want_qmv, "matmul %s cols %d: pipeline %s",
            dtype_name(t), cols, last ? last->pipe->name : "-");
    T_CHECK(!last || (strncmp(last->pipe->name, "xmv", 3) == 0) == want_xmv, "matmul %s k %d cols %d: pipeline %s",
            dtype_name(t), k, cols, last ? last->pipe->name : "-");
    /* the tensor-core gemm's Q4_0 weights are f16 (gemm_tile_weights): against those, as tightly as
     * every other type (measured on the H200, bench/31), and against the exact ones within the
     * goldens' bar (decided here: run_plan frees the plan's dispatches) */
    bool serving = serving_gemm(matmul_kind);
    bool tile = (t == DT_Q4_0 && last && (on_tensor_cores(last) || n_wdeq)) || serving;
    last = NULL;
    run_plan(&p);
    float *y = malloc((size_t)cols * rows * 4);
    double *ref = malloc((size_t)cols * rows * sizeof *ref);
    down(&yb, y, (uint64_t)cols * rows * 4);
    size_t nw = (size_t)rows * (size_t)k;
    double *v1 = tile ? gemm_tile_weights(t, w1.val, nw, serving) : NULL;
    double *v3 = tile && swiglu ? gemm_tile_weights(t, w3.val, nw, serving) : NULL;
    matmul_ref_x(tile ? v1 : w1.val, !swiglu ? NULL : tile ? v3 : w3.val, norm ? gn.val : NULL, x, acc ? y0 : NULL,
                 rows, k, cols, serving, ref);
    double er = rel_err(y, ref, (size_t)cols * rows);
    T_CHECK(er < 1e-4, "matmul %s%s%s%s rows %d k %d cols %d: rel err %g", swiglu ? "swiglu " : "", norm ? "norm " : "",
            acc ? "acc " : "", dtype_name(t), rows, k, cols, er);
    if (tile) {
        matmul_ref(w1.val, swiglu ? w3.val : NULL, norm ? gn.val : NULL, x, acc ? y0 : NULL, rows, k, cols, ref);
        er = rel_err(y, ref, (size_t)cols * rows);
        T_CHECK(er < 1e-3, "matmul %s rows %d k %d cols %d, exact weights: rel err %g", dtype_name(t), rows, k, cols,
                er);
        /* serving: the switch took effect (the twin's exact products come within ~1e-7) */
        T_CHECK(!serving || er > 1e-6, "matmul %s rows %d k %d cols %d in serving precision: rel err %g from the "
                "exact product, as small as exact's", dtype_name(t), rows, k, cols, er);
    }
    free(v1);
    free(v3);
    free(x);
    free(y0);
    free(y);
    free(ref);
    free_weight(&w1);
    if (swiglu) free_weight(&w3);
    if (norm) free_weight(&gn);
}

static void test_matmul(void)
{
    for (size_t ti = 0; ti < ARRAY_LEN(all_types); ti++) {
        enum dtype t = all_types[ti];
        test_matmul_case(t, 67, 96, 1, false, false, false);
        test_matmul_case(t, 300, 1056, 16, false, false, false);
        test_matmul_case(t, 129, 1056, 19, false, true, true);
        test_matmul_case(t, 70, 544, 5, true, true, false);
        test_matmul_case(t, 45, 2080, 3, true, false, false);
    }
    test_matmul_case(DT_BF16, 33, 256, 40, false, false, true);
    /* matvec.comp: by default the one-column products with many rows per k (rows >= 8k for every
     * type, >= 3k for Q4_0 with SwiGLU: kernels.c matvec_serves) that xmv does not take; ctest's
     * test_kernels_matvec runs this binary again with --tune matvec_cols=8, where matvec serves every
     * case up to 8 columns: every column count with norm + accumulate, and matrices tall enough for
     * 2 and 4 rows a subgroup */
    for (size_t ti = 0; ti < ARRAY_LEN(all_types); ti++) {
        enum dtype t = all_types[ti];
        test_matmul_case(t, 777, 96, 1, false, true, true);
        test_matmul_case(t, 301, 96, 1, true, true, false);
        for (int c = 2; c <= K_MATVEC_COLS; c += 3) test_matmul_case(t, 131, 224, c, false, true, true);
        test_matmul_case(t, 37, 64, K_MATVEC_COLS, true, true, false);
        if (t == DT_BF16 || t == DT_Q4_0) test_matmul_case(t, 2 * 512 * 128 + 77, 64, 1, false, false, true);
    }
    /* the helper refuses shapes the kernel does not serve */
    struct plan p = {0};
    struct gpu_weight bad = {1 << 20, DT_Q4_0, 8, 48, 0};
    T_CHECK(k_matmul(&g, &p, &bad, 0, 0, 1, false, 0, "x", "", &e) == ST_USAGE && p.n == 0, "matmul k %% 32");
}

/* One k_matmul_multi call of n weights (types t[i], rows[i], shared k) over cols columns with a
 * plus1 norm (or none), built for plan kind `kind`; checks the dispatch count (want_n; 0: one
 * stacked dispatch, or xmv's passes where k_xmv_serves the shape) and each output against its own
 * reference (outputs poisoned first). Returns nothing: failures are checks. */
static void matmul_multi_case(enum plan_kind kind, int n, const enum dtype t[], const int rows[], int k, int cols,
                              bool norm, int want_n)
{
    const char *const ops[4] = {"q", "k", "v", "a"};
    struct host_weight w[4], gn = make_weight(DT_F16, 1, k, 0.1f, 0.0f);
    struct gpu_buf yb[4];
    const struct gpu_weight *wp[4];
    uint64_t ya[4];
    uint64_t all = 0;
    for (int i = 0; i < n; i++) {
        w[i] = make_weight(t[i], rows[i], k, 1.0f / sqrtf((float)k), 0);
        wp[i] = &w[i].w;
        yb[i] = dev_alloc((uint64_t)cols * rows[i] * 4);
        poison(&yb[i]);
        ya[i] = yb[i].addr;
        all += w[i].w.bytes;
    }
    float *x = rand_floats((size_t)cols * k, 1.5f);
    struct gpu_buf xb = dev_floats(x, (size_t)cols * k);
    struct k_norm kn = {norm ? &gn.w : NULL, 1e-5f, true};
    struct plan p = plan_on_scratch(kind, k_matmul_scratch(&g, kind, n, wp, false, &kn, false, cols));
    int rc = k_matmul_multi(&g, &p, n, wp, ya, &kn, xb.addr, cols, 1, ops, "qkv", &e);
    /* wide: one widening dispatch first for the products that go through f16 copies of Q4_0 weights */
    int n_wdeq = wdeq_count(&p), want_wdeq = 0;
    for (int i = 0; i < n; i++) want_wdeq = want_wdeq || (kind == PLAN_WIDE && wdeq_expected(t[i], cols));
    T_CHECK(n_wdeq == want_wdeq && (!n_wdeq || !strcmp(p.d[0].kind, "gemm_wdeq.q4_0")),
            "matmul_multi cols %d: %d widening dispatches, want %d", cols, n_wdeq, want_wdeq);
    if (want_n) want_n += n_wdeq;
    /* want_n 0: one stacked dispatch, or xmv's passes of <= 4 columns where it serves the shape */
    if (want_n == 0) {
        uint64_t all_rows = 0;
        for (int i = 0; i < n; i++) all_rows += (uint64_t)rows[i];
        want_n = k_xmv_serves(&g, &p, cols, wp[0], false, all_rows, false) ? (cols + K_XMV_COLS - 1) / K_XMV_COLS : 1;
    }
    T_CHECK(rc == ST_OK && p.n == want_n, "matmul_multi %s x%d cols %d: %d dispatches (want %d) %s", dtype_name(t[0]),
            n, cols, p.n, want_n, rc ? e.msg : "");
    for (int d = 0; kind == PLAN_BATCH && cols <= K_MATVEC_COLS && d < p.n; d++)
        T_CHECK(strcmp(p.d[d].op, "qkv") == 0 && p.d[d].n_out == n && p.d[d].bytes == all,
                "matmul_multi tags: op %s, %u outputs", p.d[d].op, p.d[d].n_out);
    if (kind == PLAN_WIDE && p.n == n_wdeq + n + 1) { /* one prep (x' and the split outputs), then n gemms */
        const struct dispatch *d = p.d + n_wdeq;
        int splits = 0;
        for (int i = 0; i < n; i++) splits += d[1 + i].groups[2] > 1;
        T_CHECK(strstr(d[0].kind, "gemm_xprep") && !strcmp(d[0].op, "qkv") && d[0].n_out == 1 + splits,
                "gemm multi prep: kind %s op %s, %u outputs for %d split products", d[0].kind, d[0].op, d[0].n_out,
                splits);
        for (int i = 0; i < n; i++)
            T_CHECK(strstr(d[1 + i].kind, "gemm") && !strcmp(d[1 + i].op, ops[i]) && d[1 + i].bytes == w[i].w.bytes &&
                        !strcasecmp(strrchr(d[1 + i].kind, '.') + 1, dtype_name(t[i])),
                    "gemm multi product %d: kind %s op %s", i, d[1 + i].kind, d[1 + i].op);
    }
    /* outputs of the tensor-core gemm's Q4_0 products, whose weights are f16 (gemm_tile_weights),
     * found before run_plan frees the dispatches */
    bool tile[4] = {false, false, false, false};
    for (int i = 0; i < n; i++)
        for (int d = 0; t[i] == DT_Q4_0 && d < p.n; d++)
            tile[i] = tile[i] || (!strcmp(p.d[d].op, ops[i]) && (on_tensor_cores(&p.d[d]) || n_wdeq));
    bool serving = serving_gemm(kind);
    for (int i = 0; i < n; i++) tile[i] = tile[i] || serving;
    run_plan(&p);
    double *gain = malloc((size_t)k * sizeof *gain);
    for (int i = 0; i < k; i++) gain[i] = 1 + gn.val[i];
    for (int i = 0; i < n; i++) {
        float *y = malloc((size_t)cols * rows[i] * 4);
        double *ref = malloc((size_t)cols * rows[i] * sizeof *ref);
        down(&yb[i], y, (uint64_t)cols * rows[i] * 4);
        size_t nw = (size_t)rows[i] * (size_t)k;
        double *v = tile[i] ? gemm_tile_weights(t[i], w[i].val, nw, serving) : NULL;
        matmul_ref_x(tile[i] ? v : w[i].val, NULL, norm ? gain : NULL, x, NULL, rows[i], k, cols, serving, ref);
        double er = rel_err(y, ref, (size_t)cols * rows[i]);
        T_CHECK(er < 1e-4, "matmul_multi %s cols %d weight %d (%s): rel err %g", plan_kind_name(kind), cols, i,
                dtype_name(t[i]), er);
        if (tile[i]) {
            matmul_ref(w[i].val, NULL, norm ? gain : NULL, x, NULL, rows[i], k, cols, ref);
            er = rel_err(y, ref, (size_t)cols * rows[i]);
            T_CHECK(er < 1e-3 && (!serving || er > 1e-6),
                    "matmul_multi cols %d weight %d (%s), exact weights%s: rel err %g", cols, i, dtype_name(t[i]),
                    serving ? " and serving precision (more than 1e-6 off)" : "", er);
        }
        free(v);
        free(y);
        free(ref);
        free_weight(&w[i]);
    }
    free(gain);
    free(x);
    free_weight(&gn);
}

/* qmv.comp: Q4_0 at one column, every Q4_0/Q8_0 product of 1..8 columns under --tune qmv_cols=8
 * (kernels.c qmv_serves; ctest test_kernels_qmv). Per column count a
 * k past the x chunk the shared memory holds at that width (lavapipe, 32 KiB: 7168 elements at one
 * column .. 768 at eight), not a multiple of it, so the staging loops over chunks and ends on a
 * short one; odd rows; fused norm (its Σx² met over chunks) with accumulate, SwiGLU; and tall
 * matrices for 2 and 4 rows a subgroup. q/k/v stacked: test_matmul_multi. The ctest
 * test_kernels_qmv runs the matrix tests again with --tune qmv_cols=8,qmv_kc=96,qmv_rt=3,qmv_u=3. */
static void test_qmv(void)
{
    const int ks[9] = {0, 7200, 3616, 2400, 1824, 1440, 1056, 1056, 800};
    for (int qi = 0; qi < 2; qi++) {
        enum dtype t = qi ? DT_Q4_0 : DT_Q8_0;
        for (int c = 1; c <= K_QMV_COLS; c++) {
            test_matmul_case(t, 21 + 6 * c, ks[c], c, false, true, true);
            test_matmul_case(t, 13 + 2 * c, ks[c], c, true, true, false);
        }
        test_matmul_case(t, 16 * 4 * 512 + 3, 64, 1, false, true, false);
        test_matmul_case(t, 16 * 4 * 256 + 5, 96, 3, true, false, false);
    }
}

/* xmv.comp at one column: by default Q8_0/Q4_0 with k <= 4096 take it (Q8_0 up to 2 columns, Q4_0
 * up to 8 in passes of <= 4: kernels.c k_xmv_serves);
 * ctest test_kernels_xmv1 (--tune xmv_cols=1) puts every type and k here on it. k not a multiple of a subgroup's slots (lanes past the row's
 * end hold no x), k long enough for 2 and 4 k groups (whose sums meet in shared memory; lavapipe's
 * small subgroups reach 8 groups sooner), rows not a multiple of a workgroup's, fused norm with
 * accumulate, SwiGLU, and a tall matrix (the grid's many workgroups). ctest test_kernels_xmv runs
 * the matrix tests again with --tune xmv_rb=3,xmv_nb=2,xmv_xe=32,xmv_nsg=8,xmv_cols=4 (2..4 columns: x of every column in registers). q/k/v stacked: test_matmul_multi. */
static void test_xmv(void)
{
    const int ks[4] = {96, 2080, 4128, 6944};
    for (size_t ti = 0; ti < ARRAY_LEN(all_types); ti++) {
        enum dtype t = all_types[ti];
        for (int ki = 0; ki < 4; ki++) {
            test_matmul_case(t, 37 + 10 * ki, ks[ki], 1, false, true, true);
            test_matmul_case(t, 29 + 6 * ki, ks[ki], 1, true, true, false);
        }
        for (int c = 2; c <= 4; c++) { /* xmv under --tune xmv_cols=4 (ctest test_kernels_xmv) */
            test_matmul_case(t, 41 + c, ks[c - 1] / c / 32 * 32, c, false, true, true);
            test_matmul_case(t, 23 + c, ks[c - 1] / c / 32 * 32, c, true, true, false);
        }
        test_matmul_case(t, 3 * 4096 + 7, 256, 1, false, false, false);
        /* more columns than xmv holds: Q4_0 in passes of <= 4 (4 + 3, 3 + 3) */
        test_matmul_case(t, 53, 1024, 7, false, true, true);
        test_matmul_case(t, 29, 992, 6, true, true, false);
        /* long k with no norm, added into y: split over 4 and 3 workgroups along k (ffn_down's k, and an odd
         * split), at one column and in passes (Q4_0 by default, every type under the hooks); with a norm
         * (above) or without adding into y: one workgroup along k */
        test_matmul_case(t, 75, 8192, 1, false, false, true);
        test_matmul_case(t, 43, 6144, 2, false, false, true);
        test_matmul_case(t, 27, 6144, 6, false, false, true);
        test_matmul_case(t, 33, 8192, 1, false, false, false);
    }
}

/* q/k/v as one product (k_matmul_multi): three weights of different rows stacked in one matvec
 * dispatch, each output checked against its own reference; wider than K_MATVEC_COLS: three
 * dispatches, same results. Rows not multiples of the rows a workgroup takes. */
static void test_matmul_multi(void)
{
    const int rows[3] = {67, 19, 21}, k = 160;
    const char *const ops[3] = {"q", "k", "v"};
    for (size_t ti = 0; ti < ARRAY_LEN(all_types); ti++) {
        enum dtype t = all_types[ti];
        const enum dtype ts[3] = {t, t, t};
        const int widths[4] = {1, 4, K_MATVEC_COLS, K_MATVEC_COLS + 1};
        for (int wi = 0; wi < 4; wi++)
            matmul_multi_case(PLAN_BATCH, 3, ts, rows, k, widths[wi], true, widths[wi] <= K_MATVEC_COLS ? 0 : 3);
    }
    /* weights of different types: one dispatch each */
    struct host_weight a = make_weight(DT_BF16, 40, 64, 0.1f, 0), b = make_weight(DT_Q8_0, 24, 64, 0.1f, 0);
    const struct gpu_weight *wp[2] = {&a.w, &b.w};
    uint64_t ya[2] = {0, 0};
    struct plan p = {.kind = PLAN_BATCH};
    T_CHECK(k_matmul_multi(&g, &p, 2, wp, ya, NULL, 0, 1, 0, ops, "qk", &e) == ST_OK && p.n == 2 &&
                strcmp(p.d[1].op, "k") == 0,
            "matmul_multi of two types: %d dispatches", p.n);
    plan_free(&p);
    free_weight(&a);
    free_weight(&b);
}

/* The barrier schedule (plan_barriers): a plan of fake dispatches over buffers A..D (push: two
 * addresses, the second declared as the output). Independent dispatches share a barrier; reading
 * what an earlier one wrote (RAW), writing what one read (WAR) or an output outside the plan's
 * buffers brings one back; timed plans and plans without buffers keep one after every dispatch. */
static void test_plan_barriers(void)
{
    struct plan_bufs bufs = {4, {0x1000, 0x2000, 0x3000, 0x4000}, {0x1100, 0x2100, 0x3100, 0x4100}};
    const uint64_t A = 0x1000, B = 0x2000, C = 0x3040, D = 0x4000, OUT = 0x9000;
    const uint64_t io[][2] = {
        {A, B},   /* 0: A -> B */
        {A, C},   /* 1: A -> C, independent of 0 */
        {B, D},   /* 2: reads B (RAW on 0): barrier after 1 */
        {C, A},   /* 3: writes A, read by 0 and 1 but a barrier came since; reads C: written before it */
        {D, A},   /* 4: reads D (written by 2, no barrier since): barrier after 3 */
        {B, OUT}, /* 5: output outside the buffers: barriers on both sides */
        {B, C},   /* 6 */
    };
    const bool want[] = {false, true, false, true, true, true, true};
    struct plan p = {.kind = PLAN_BATCH, .bufs = &bufs};
    for (size_t i = 0; i < ARRAY_LEN(io); i++) {
        struct dispatch *d = plan_add(&p, NULL, io[i], sizeof io[i], 1, 1, 1);
        dispatch_outputs(d, 1, (size_t)8);
    }
    bool after[ARRAY_LEN(io)];
    plan_barriers(&p, false, after);
    for (size_t i = 0; i < ARRAY_LEN(io); i++)
        T_CHECK(after[i] == want[i], "plan_barriers: after dispatch %zu %d, expected %d", i, after[i], want[i]);
    plan_barriers(&p, true, after);
    for (size_t i = 0; i < ARRAY_LEN(io); i++) T_CHECK(after[i], "plan_barriers timed: none dropped (%zu)", i);
    p.bufs = NULL;
    plan_barriers(&p, false, after);
    for (size_t i = 0; i < ARRAY_LEN(io); i++) T_CHECK(after[i], "plan_barriers without buffers (%zu)", i);
    plan_free(&p);
}

/* plan_hoist_last: the last dispatch moves back to just after the last one whose push holds an
 * address in the range (the widenings of kernels.c gemm_wdeq), to the start when none does, the
 * others keeping their order; then the schedule lets it run beside what it passed. */
static void test_plan_hoist(void)
{
    struct plan_bufs bufs = {3, {0x1000, 0x2000, 0x3000}, {0x1100, 0x2100, 0x3100}};
    const uint64_t io[][2] = {{0x1000, 0x2000}, {0x3010, 0x1000}, {0x2000, 0x1010}, {0x1000, 0x2040}, {0x7000, 0x3000}};
    struct plan p = {.kind = PLAN_BATCH, .bufs = &bufs};
    for (size_t i = 0; i < ARRAY_LEN(io); i++) {
        struct dispatch *d = plan_add(&p, NULL, io[i], sizeof io[i], 1, 1, (uint32_t)i + 1);
        dispatch_outputs(d, 1, (size_t)8);
    }
    plan_hoist_last(&p, 0x3000, 0x3100); /* 4 writes C, which 1 read: just after 1 */
    const uint32_t order[] = {1, 2, 5, 3, 4};
    for (size_t i = 0; i < ARRAY_LEN(io); i++)
        T_CHECK(p.d[i].groups[2] == order[i], "plan_hoist_last: position %zu holds dispatch %u, expected %u", i,
                p.d[i].groups[2] - 1, order[i] - 1);
    bool after[ARRAY_LEN(io)];
    plan_barriers(&p, false, after);
    /* 0 A->B, 1 C->A (WAR on A: barrier after 0), 4 ->C (WAR on C read by 1: barrier after 1), 2 B->A, 3 */
    const bool want[] = {true, true, false, true, true};
    for (size_t i = 0; i < ARRAY_LEN(io); i++)
        T_CHECK(after[i] == want[i], "plan_hoist_last schedule: after position %zu %d, expected %d", i, after[i],
                want[i]);
    uint64_t far[2] = {0x5000, 0x3000};
    struct dispatch *d = plan_add(&p, NULL, far, sizeof far, 1, 1, 9);
    dispatch_outputs(d, 1, (size_t)8);
    plan_hoist_last(&p, 0x5000, 0x5100); /* touched by none: to the start */
    T_CHECK(p.d[0].groups[2] == 9 && p.d[1].groups[2] == 1 && p.n == 6, "plan_hoist_last to the start: %u first",
            p.d[0].groups[2]);
    plan_free(&p);
}

/* A fused [gate | up] stack (GLM's gate_up_proj [2F, H]) goes through weights_upload as two
 * weights (weights_part) in every type; the fused SwiGLU reads the halves and matches
 * silu(gate x')·(up x') decoded from the FILE layout. F·(H/32) = 210 is not a multiple of 8, so
 * the Q halves' scales end off a 16-byte boundary and the part stride must pad. */
static void test_gate_up_parts(void)
{
    const int F = 70, H = 96, C = 3;
    for (size_t ti = 0; ti < ARRAY_LEN(all_types); ti++) {
        enum dtype t = all_types[ti];
        uint8_t *file = make_file(t, 2 * F, H, 1.0f / sqrtf((float)H), 0);
        /* uploads pread the tensor from its file (weights.c): write the bytes to one */
        char path[512];
        snprintf(path, sizeof path, "%s/gate_up.bin", t_tmpdir());
        FILE *f = fopen(path, "wb");
        T_CHECK(f && fwrite(file, 1, weight_bytes(t, 2 * F, H), f) == weight_bytes(t, 2 * F, H), "write %s", path);
        if (f) fclose(f);
        struct tensor_view v = {.name = "model.layers.0.mlp.gate_up_proj.weight", .dtype = t, .n_dims = 2,
                                .shape = {2 * F, H}, .data = file, .n_bytes = weight_bytes(t, 2 * F, H),
                                .file = path};
        struct shard_tensor st = {.name = "blk.0.ffn_gate_up", .layer = 0, .role = W_FFN_GATE_UP, .dtype = t,
                                  .n_dims = 2, .shape = {2 * F, H}, .src = &v};
        struct shard s = {.a = 0, .b = 1, .t = &st, .n = 1, .bytes = v.n_bytes};
        memset(s.layer_index, -1, sizeof s.layer_index);
        memset(s.global_index, -1, sizeof s.global_index);
        s.layer_index[0][W_FFN_GATE_UP] = 0;
        struct dev_weights dw;
        int rc = weights_upload(&g, &s, 0, false, &dw, &e);
        T_CHECK(rc == ST_OK, "weights_upload gate_up %s: %s", dtype_name(t), e.msg);
        if (rc) {
            free(file);
            continue;
        }
        const struct gpu_weight *gu = weights_layer(&dw, &s, 0, W_FFN_GATE_UP);
        struct gpu_weight gate = weights_part(gu, 0, 2), upw = weights_part(gu, 1, 2);
        T_CHECK(gate.rows == F && upw.rows == F && gate.bytes + upw.bytes == gu->bytes && upw.addr % 16 == 0,
                "gate_up parts %s: rows %lld/%lld, bytes %llu + %llu of %llu", dtype_name(t), (long long)gate.rows,
                (long long)upw.rows, (unsigned long long)gate.bytes, (unsigned long long)upw.bytes,
                (unsigned long long)gu->bytes);
        double *val = malloc((size_t)2 * F * H * sizeof *val);
        for (int r = 0; r < 2 * F; r++)
            for (int i = 0; i < H; i++) val[r * H + i] = file_get(t, H, file, r, i);
        struct host_weight gn = make_weight(DT_F32, 1, H, 0.1f, 1.0f);
        float *x = rand_floats((size_t)C * H, 1.5f);
        struct gpu_buf xb = dev_floats(x, (size_t)C * H), yb = dev_alloc((uint64_t)C * F * 4);
        poison(&yb);
        struct k_norm kn = {&gn.w, 1e-5f, false};
        struct plan p = {0};
        rc = k_matmul_swiglu(&g, &p, &gate, &upw, &kn, xb.addr, yb.addr, C, 0, "ffn_gate_up", "", &e);
        T_CHECK(rc == ST_OK && p.n == 1 && p.d[0].bytes == gu->bytes, "matmul_swiglu on the parts: %s", e.msg);
        run_plan(&p);
        float *y = malloc((size_t)C * F * 4);
        double *ref = malloc((size_t)C * F * sizeof *ref);
        down(&yb, y, (uint64_t)C * F * 4);
        matmul_ref(val, val + (size_t)F * H, gn.val, x, NULL, F, H, C, ref);
        double er = rel_err(y, ref, (size_t)C * F);
        T_CHECK(er < 1e-4, "gate_up parts %s: rel err %g", dtype_name(t), er);
        free(y);
        free(ref);
        free(x);
        free(val);
        free_weight(&gn);
        weights_free(&dw);
        free(file);
    }
}

/* gemm_wdeq.comp: three Q4_0 weights (odd rows, k of 1, 3 and 33 blocks) widened in one dispatch
 * into f16 copies at 16-byte (not 256-byte) offsets of one poisoned buffer: every element equal to
 * q·d rounded to nearest, and nothing outside the copies written; the refusals. */
static void test_gemm_wdeq(void)
{
    const int rows[3] = {3, 37, 130}, ks[3] = {32, 96, 1056};
    struct host_weight w[3];
    const struct gpu_weight *wp[3];
    uint64_t at[4] = {16}, out[3];
    for (int i = 0; i < 3; i++) {
        w[i] = make_weight(DT_Q4_0, rows[i], ks[i], 1.0f / sqrtf((float)ks[i]), 0.1f);
        wp[i] = &w[i].w;
        at[i + 1] = at[i] + 2 * (uint64_t)rows[i] * (uint64_t)ks[i] + 48;
    }
    struct gpu_buf b = dev_alloc(at[3]);
    const uint16_t poison16 = 0x7e01; /* an f16 NaN in every half-word */
    int rc = gpu_fill(&g, &b, 0x7e017e01u, &e);
    T_CHECK(rc == ST_OK, "gpu_fill: %s", e.msg);
    for (int i = 0; i < 3; i++) out[i] = b.addr + at[i];
    struct plan p = {.kind = PLAN_WIDE};
    rc = k_gemm_wdeq(&g, &p, 3, wp, out, 4, "ffn", "", &e);
    T_CHECK(rc == ST_OK && p.n == 1 && !strcmp(p.d[0].kind, "gemm_wdeq.q4_0") && p.d[0].n_out == 3 &&
                p.d[0].bytes == w[0].w.bytes + w[1].w.bytes + w[2].w.bytes,
            "gemm_wdeq: %d dispatches, kind %s: %s", p.n, p.n ? p.d[0].kind : "-", rc ? e.msg : "");
    run_plan(&p);
    uint16_t *h = malloc(at[3]);
    down(&b, h, at[3]);
    int bad = 0, outside = 0;
    for (int i = 0; i < 3; i++) {
        size_t n = (size_t)rows[i] * (size_t)ks[i];
        for (size_t j = 0; j < n; j++) bad += h[at[i] / 2 + j] != f32_to_f16((float)w[i].val[j]);
        for (uint64_t j = at[i] / 2 + n; j < at[i + 1] / 2; j++) outside += h[j] != poison16;
    }
    for (uint64_t j = 0; j < at[0] / 2; j++) outside += h[j] != poison16;
    T_CHECK(bad == 0 && outside == 0, "gemm_wdeq: %d elements differ from f16(q·d), %d written outside the copies",
            bad, outside);
    /* refusals: not Q4_0, a copy not 16-byte aligned */
    struct host_weight f = make_weight(DT_F16, 4, 32, 1.0f, 0.0f);
    const struct gpu_weight *fp = &f.w;
    uint64_t o = b.addr;
    T_CHECK(k_gemm_wdeq(&g, &p, 1, &fp, &o, 0, "x", "", &e) == ST_USAGE && p.n == 0, "gemm_wdeq takes F16");
    o = b.addr + 8;
    T_CHECK(k_gemm_wdeq(&g, &p, 1, wp, &o, 0, "x", "", &e) == ST_USAGE && p.n == 0, "gemm_wdeq: copy at +8");
    free_weight(&f);
    for (int i = 0; i < 3; i++) free_weight(&w[i]);
    free(h);
}

/* ---- gemm: the wide plan's tiled matrix product (the FMA twin on lavapipe; on a device with
 * cooperative matrices the tensor-core kernel on each of its paths, test_gemm_paths, or the twin
 * with --tune gemm_path=fma), at rows,
 * k and columns that are not multiples of its tiles. main sets the tune's gemm_min_cols=1 (tune.h) so
 * that every width goes to it. */

static void test_gemm(void)
{
    test_gemm_wdeq();
    matmul_kind = PLAN_WIDE;
    for (size_t ti = 0; ti < ARRAY_LEN(all_types); ti++) {
        enum dtype t = all_types[ti];
        int k = t == DT_Q8_0 || t == DT_Q4_0 ? 1056 : 1000; /* 33 blocks of 32; 1000 = 31 steps + 8 */
        test_matmul_case(t, 200, k, 1, false, false, false);
        test_matmul_case(t, 67, k, 17, false, true, true);
        test_matmul_case(t, 130, k, 45, true, true, false);
        test_matmul_case(t, 75, k, 130, false, false, true);
    }
    test_matmul_case(DT_BF16, 129, 96, 64, true, false, false); /* k shorter than two steps */
    /* narrow shapes whose rows are a multiple of the tiles and whose k is not a multiple of the k
     * step (bench/20 measured a path for them): k splits, SwiGLU, 32-column tiles with a plain x,
     * one column, k under one step, 50 columns, in every type that is not F32 */
    const enum dtype narrow_types[4] = {DT_F16, DT_BF16, DT_Q8_0, DT_Q4_0};
    for (int i = 0; i < 4; i++) {
        enum dtype t = narrow_types[i];
        bool q = t == DT_Q8_0 || t == DT_Q4_0;
        test_matmul_case(t, 192, q ? 1056 : 1008, 5, false, true, true);
        test_matmul_case(t, 128, q ? 2080 : 2064, 16, true, true, false);
        test_matmul_case(t, 320, 512, 31, false, false, true);
        test_matmul_case(t, 256, 96, 1, false, true, false);
        test_matmul_case(t, 64, q ? 64 : 48, 32, false, false, false);
        test_matmul_case(t, 128, q ? 288 : 272, 50, true, true, false);
    }
    matmul_kind = PLAN_BATCH;
    /* products of one x through one prep (k_matmul_multi in a wide plan, e.g. Qwen3.5's qkv/z/b/a):
     * mixed types, rows from 5 to 300; the prep zeroes every split output (split-k runs: ctest's
     * test_kernels_gemm_split, and the cooperative-matrix gemm's small grids). The twin needs no
     * prep without a norm and split sums. */
    const enum dtype mixed[4] = {DT_BF16, DT_Q4_0, DT_F16, DT_Q8_0}, f32s[3] = {DT_F32, DT_F32, DT_F32};
    const int rows4[4] = {300, 67, 5, 21}, rows3[3] = {130, 19, 75}, rows2[2] = {67, 33};
    const enum dtype bf16s[2] = {DT_BF16, DT_BF16};
    bool cm = gemm_path_now() != GEMM_PATH_FMA, split_twin = !cm && g.tune.gemm_splitk > 1;
    matmul_multi_case(PLAN_WIDE, 4, mixed, rows4, 1056, 45, true, 5);
    matmul_multi_case(PLAN_WIDE, 3, f32s, rows3, 1000, 17, false, cm || split_twin ? 4 : 3);
    matmul_multi_case(PLAN_WIDE, 2, bf16s, rows2, 96, 130, true, 3);
}

/* test_gemm on every cooperative-matrix path the device has, KHR then NV (both products checked
 * against the same references), or on its one path (the FMA twin on lavapipe); a --tune gemm_path
 * runs that path alone (gemm_path=cm2: gemm_cm2 where it serves the product; automatic in serving
 * precision on a coopmat2 device, which this test does not take: it forces each path). A
 * device without a usable VK_KHR_cooperative_matrix prints a SKIP line for that path. */
static void test_gemm_paths(void)
{
    int forced = g.tune.gemm_path;
    enum gemm_path paths[2];
    int n = 0;
    if (forced != GEMM_PATH_AUTO) {
        paths[n++] = (enum gemm_path)forced;
    } else {
        if (g.gemm_khr) paths[n++] = GEMM_PATH_KHR;
        else
            printf("SKIP gemm on VK_KHR_cooperative_matrix (gemm_khr): %s has no usable one (--list-devices)\n",
                   g.props.deviceName);
        if (g.gemm_nv) paths[n++] = GEMM_PATH_NV;
        if (!n) paths[n++] = GEMM_PATH_FMA;
    }
    for (int i = 0; i < n; i++) {
        double t0 = now_us();
        g.tune.gemm_path = (int)paths[i];
        struct sel s = sel_for(PLAN_WIDE);
        enum gemm_path got;
        int rc = sel_gemm_path(&s, 0, &got, &e);
        T_CHECK(rc == ST_OK && got == paths[i], "gemm_path=%s: %s", gemm_path_name(paths[i]), rc ? e.msg : "another path");
        if (rc) break;
        test_gemm();
        printf("+ gemm on %s (%s): %.1f s\n", sel_gemm_path_kernel(paths[i]), sel_gemm_path_label(paths[i]),
               (now_us() - t0) / 1e6);
    }
    g.tune.gemm_path = forced;
}

/* ---- shortconv */

/* CPU reference of one shortconv dispatch: y, and the state entries it must leave (st in/out). */
static void shortconv_ref(const struct host_weight *w, const float *bcx, const struct run_meta *runs, int n_runs,
                          const struct slot_meta *sm, int n_snap, bool spec, int H, double *y, double *st)
{
    for (int r = 0; r < n_runs; r++) {
        uint32_t cur = sm ? sm[runs[r].slot].cur : 0;
        size_t slot0 = (size_t)runs[r].slot * n_snap * 2 * H;
        for (int h = 0; h < H; h++) {
            double u2 = st[slot0 + cur * 2 * H + h], u1 = st[slot0 + cur * 2 * H + H + h];
            for (uint32_t c = runs[r].first_col; c < runs[r].first_col + runs[r].n_cols; c++) {
                double u = (double)bcx[c * 3 * H + h] * bcx[c * 3 * H + 2 * H + h];
                const double *k = &w->val[h * 3];
                y[c * H + h] = bcx[c * 3 * H + H + h] * (k[0] * u2 + k[1] * u1 + k[2] * u);
                u2 = u1;
                u1 = u;
                if (spec) { /* snapshot after this column: entry cur + i + 1 of the ring */
                    size_t e = slot0 + ((cur + c - runs[r].first_col + 1) % (uint32_t)n_snap) * 2 * H;
                    st[e + h] = u2;
                    st[e + H + h] = u1;
                }
            }
            if (!spec) {
                st[slot0 + cur * 2 * H + h] = u2;
                st[slot0 + cur * 2 * H + H + h] = u1;
            }
        }
    }
}

/* Batch (decode and prefill layouts), wide and spec: the state read from each slot's entry cur,
 * written back there (batch, wide) or as one snapshot per column into the ring after it (spec);
 * entries the kernel must not touch are compared too. n_snap 1 without a slot table is the plain
 * layout. The wide kernel (parallel over positions, 8 columns an invocation) also gets runs of
 * every length class it treats apart: 1, 2, 3, 8, 9, 10, 17 and long. */
static void test_shortconv(void)
{
    const int H = 200, S = 6;
    /* decode: 5 runs of one column in scattered slots; prefill / spec: runs of 3 and 4 columns */
    struct run_meta dec[5] = {{3, 0, 1, 9}, {0, 1, 1, 4}, {5, 2, 1, 7}, {1, 3, 1, 2}, {2, 4, 1, 0}};
    struct run_meta pre[2] = {{4, 0, 3, 5}, {1, 3, 4, 0}};
    struct run_meta mix[4] = {{2, 0, 2, 7}, {5, 2, 37, 0}, {0, 39, 1, 3}, {3, 40, 3, 11}};
    /* runs ending on and just past the wide kernel's blocks of 8 columns */
    struct run_meta blk[4] = {{0, 0, 8, 3}, {1, 8, 9, 0}, {2, 17, 10, 6}, {3, 27, 17, 1}};
    struct {
        const struct run_meta *runs;
        int n_runs, cols, n_snap;
        bool slot_tab, spec, wide;
    } cases[] = {
        {dec, 5, 5, 1, false, false, false},   {pre, 2, 7, 1, false, false, false},
        {dec, 5, 5, 5, true, false, false},    {pre, 2, 7, 5, true, false, false},
        {pre, 2, 7, 5, true, true, false},     {pre, 2, 7, 7, true, true, false},
        {dec, 5, 5, 1, false, false, true},    {pre, 2, 7, 5, true, false, true},
        {mix, 4, 43, 1, false, false, true},   {mix, 4, 43, 5, true, false, true},
        {blk, 4, 44, 5, true, false, true},
    };
    for (size_t ti = 0; ti < ARRAY_LEN(plain_types); ti++) {
        for (size_t ci = 0; ci < ARRAY_LEN(cases); ci++) {
            const struct run_meta *runs = cases[ci].runs;
            int n_runs = cases[ci].n_runs, C = cases[ci].cols, ns = cases[ci].n_snap;
            size_t sn = (size_t)S * ns * 2 * H;
            struct slot_meta sm[6];
            for (int i = 0; i < S; i++) sm[i] = (struct slot_meta){.cur = t_rng_u32(&rng) % (uint32_t)ns};
            struct host_weight w = make_weight(plain_types[ti], H, 3, 0.5f, 0);
            float *bcx = rand_floats((size_t)C * 3 * H, 1.0f), *st = rand_floats(sn, 1.0f);
            struct gpu_buf bb = dev_floats(bcx, (size_t)C * 3 * H), sb = dev_floats(st, sn);
            struct gpu_buf yb = dev_alloc((uint64_t)C * H * 4), rb = dev_alloc(sizeof dec), mb = dev_alloc(sizeof sm);
            up(&rb, runs, (uint64_t)n_runs * sizeof *runs);
            up(&mb, sm, sizeof sm);
            poison(&yb);
            struct plan p = {.kind = cases[ci].spec ? PLAN_SPEC : cases[ci].wide ? PLAN_WIDE : PLAN_BATCH};
            struct k_state ks = {sb.addr, cases[ci].slot_tab ? mb.addr : 0, (uint32_t)ns};
            int rc = k_shortconv(&g, &p, &w.w, bb.addr, &ks, yb.addr, rb.addr, C, n_runs, 0, "conv", &e);
            T_CHECK(rc == ST_OK, "k_shortconv: %s", e.msg);
            const char *kind = cases[ci].spec ? "shortconv.snap" : cases[ci].wide ? "shortconv.wide" : "shortconv";
            T_CHECK(p.n == 1 && !strcmp(p.d[0].kind, kind), "kind %s", p.n ? p.d[0].kind : "(none)");
            run_plan(&p);
            float *y = malloc((size_t)C * H * 4), *st2 = malloc(sn * 4);
            double *ref = malloc((size_t)C * H * sizeof *ref), *sref = malloc(sn * sizeof *sref);
            down(&yb, y, (uint64_t)C * H * 4);
            down(&sb, st2, sn * 4);
            for (size_t i = 0; i < sn; i++) sref[i] = st[i];
            shortconv_ref(&w, bcx, runs, n_runs, cases[ci].slot_tab ? sm : NULL, ns, cases[ci].spec, H, ref, sref);
            double ey = rel_err(y, ref, (size_t)C * H), es = rel_err(st2, sref, sn);
            T_CHECK(ey < 1e-5 && es < 1e-6, "shortconv %s case %zu: rel err y %g state %g",
                    dtype_name(plain_types[ti]), ci, ey, es);
            free(bcx);
            free(st);
            free(y);
            free(st2);
            free(ref);
            free(sref);
            free_weight(&w);
        }
    }
    /* a spec plan needs room for snapshots */
    struct plan p = {.kind = PLAN_SPEC};
    struct host_weight w = make_weight(DT_F32, H, 3, 0.5f, 0);
    struct k_state one = {w.buf.addr, 0, 1};
    T_CHECK(k_shortconv(&g, &p, &w.w, 0, &one, 0, 0, 1, 1, 0, "conv", &e) == ST_USAGE && strstr(e.msg, "snapshots"),
            "spec shortconv with one entry: %s", e.msg);
    plan_free(&p);
    free_weight(&w);
}

/* ---- conv.in_proj with the short conv in its epilogue (k_conv_step, decode): against the normed
 * product's reference fed to shortconv_ref; the state entries every other slot or entry holds
 * are compared too. Where Q types' in_proj goes to the matrix-vector kernels: two dispatches, the
 * same answer. */
static void test_conv_step(void)
{
    const int H = 72, K = 160, S = 5, NS = 3;
    const enum dtype types[] = {DT_BF16, DT_F16, DT_F32, DT_Q8_0, DT_Q4_0};
    const int widths[] = {1, 3, 16};
    for (size_t ti = 0; ti < ARRAY_LEN(types); ti++)
        for (size_t wi = 0; wi < ARRAY_LEN(widths); wi++) {
            int C = widths[wi];
            struct host_weight win = make_weight(types[ti], 3 * H, K, 1.0f / sqrtf((float)K), 0);
            struct host_weight cw = make_weight(ti % 2 ? DT_F32 : DT_BF16, H, 3, 0.5f, 0);
            struct host_weight gn = make_weight(DT_BF16, 1, K, 0.1f, 1.0f);
            size_t sn = (size_t)S * NS * 2 * H;
            float *x = rand_floats((size_t)C * K, 1.5f), *st = rand_floats(sn, 1.0f);
            struct slot_meta sm[5];
            for (int i = 0; i < S; i++) sm[i] = (struct slot_meta){.cur = t_rng_u32(&rng) % NS};
            /* every column its own slot: C <= S uses slots in a scrambled order, more columns reuse
             * none (C = 16 takes 16 slots of a larger table) */
            int nslots = C > S ? C : S;
            struct col_meta *cm = calloc((size_t)C, sizeof *cm);
            struct run_meta *runs = calloc((size_t)C, sizeof *runs);
            for (int c = 0; c < C; c++) {
                uint32_t slot = (uint32_t)((c * 3 + 2) % nslots);
                cm[c] = (struct col_meta){(uint32_t)c, (uint32_t)(5 + c), slot, 1};
                runs[c] = (struct run_meta){slot, (uint32_t)c, 1, (uint32_t)(5 + c)};
            }
            size_t snn = (size_t)nslots * NS * 2 * H;
            float *st2 = rand_floats(snn, 1.0f);
            memcpy(st2, st, sizeof(float) * (sn < snn ? sn : snn));
            struct slot_meta *smm = calloc((size_t)nslots, sizeof *smm);
            for (int i = 0; i < nslots; i++) smm[i] = i < S ? sm[i] : (struct slot_meta){.cur = (uint32_t)i % NS};
            struct gpu_buf xb = dev_floats(x, (size_t)C * K), sb = dev_floats(st2, snn);
            struct gpu_buf bb = dev_alloc((uint64_t)C * 3 * H * 4), yb = dev_alloc((uint64_t)C * H * 4);
            struct gpu_buf cb = dev_alloc((uint64_t)C * sizeof *cm), rb = dev_alloc((uint64_t)C * sizeof *runs);
            struct gpu_buf mb = dev_alloc((uint64_t)nslots * sizeof *smm);
            up(&cb, cm, (uint64_t)C * sizeof *cm);
            up(&rb, runs, (uint64_t)C * sizeof *runs);
            up(&mb, smm, (uint64_t)nslots * sizeof *smm);
            poison(&yb);
            poison(&bb);
            struct k_norm kn = {&gn.w, 1e-5f, false};
            struct k_state ks = {sb.addr, mb.addr, NS};
            struct plan p = {.kind = PLAN_BATCH};
            int rc = k_conv_step(&g, &p, &win.w, &kn, xb.addr, &cw.w, &ks, bb.addr, yb.addr, rb.addr, cb.addr, C, C, 3,
                                 &e);
            T_CHECK(rc == ST_OK, "k_conv_step: %s", e.msg);
            /* Q4_0 up to 8 columns and Q8_0 up to 2 go to xmv, qmv or matvec (kernels.c mv_pick); a
             * routing tune key (ctest variants) may send any type to them: then either way, checked alike */
            bool hooked = routed();
            bool fused = hooked ? p.n == 1 : types[ti] == DT_Q4_0 ? C > 8 : types[ti] == DT_Q8_0 ? C > 2 : true;
            char want[40];
            snprintf(want, sizeof want, "matmul_shortconv.%s", dtype_name(types[ti]));
            T_CHECK(fused ? p.n == 1 && !strcasecmp(p.d[0].kind, want) && p.d[0].bytes == win.w.bytes + cw.w.bytes
                          : p.n == 2 && !strcmp(p.d[1].kind, "shortconv"),
                    "conv step %s, %d columns: %d dispatches, first %s", dtype_name(types[ti]), C, p.n,
                    p.n ? p.d[0].kind : "-");
            run_plan(&p);
            double *bref = malloc((size_t)C * 3 * H * sizeof *bref), *yref = malloc((size_t)C * H * sizeof *yref);
            double *sref = malloc(snn * sizeof *sref);
            matmul_ref(win.val, NULL, gn.val, x, NULL, 3 * H, K, C, bref);
            float *bf = malloc((size_t)C * 3 * H * 4);
            for (size_t i = 0; i < (size_t)C * 3 * H; i++) bf[i] = (float)bref[i];
            for (size_t i = 0; i < snn; i++) sref[i] = st2[i];
            shortconv_ref(&cw, bf, runs, C, smm, NS, false, H, yref, sref);
            float *gy = malloc((size_t)C * H * 4), *gs = malloc(snn * 4);
            down(&yb, gy, (uint64_t)C * H * 4);
            down(&sb, gs, snn * 4);
            double ey = rel_err(gy, yref, (size_t)C * H), es = rel_err(gs, sref, snn);
            T_CHECK(ey < 2e-5 && es < 2e-5, "conv step %s, %d columns: rel err y %g state %g", dtype_name(types[ti]), C,
                    ey, es);
            plan_free(&p);
            free(bref);
            free(yref);
            free(sref);
            free(bf);
            free(gy);
            free(gs);
            free(x);
            free(st);
            free(st2);
            free(cm);
            free(runs);
            free(smm);
            free_weight(&win);
            free_weight(&cw);
            free_weight(&gn);
        }
}

/* ---- attention: prep (norm + RoPE + KV write) then attention, in one plan */

struct attn_case {
    struct k_attn_geom a;
    int n_slots;
    int cols;
    struct col_meta cm[128];
    enum plan_kind plan; /* PLAN_WIDE: the tiled prefill kernel */
    int split;           /* keys split (and merged) by attn_kv.comp's automatic rule, where it runs */
};

static void rope_ref(const struct k_attn_geom *a, double *v, uint32_t pos)
{
    double tmp[K_MAX_HEAD_DIM];
    memcpy(tmp, v, (size_t)a->hd * sizeof *tmp);
    int half = a->rope_dims / 2;
    for (int i = 0; i < half; i++) {
        float inv_freq = (float)pow((double)a->theta, -2.0 * i / a->rope_dims);
        float ang = (float)pos * inv_freq; /* f32 as torch */
        double cs = cos((double)ang), sn = sin((double)ang);
        int i0 = a->interleaved ? 2 * i : i, i1 = a->interleaved ? 2 * i + 1 : i + half;
        v[i0] = tmp[i0] * cs - tmp[i1] * sn;
        v[i1] = tmp[i1] * cs + tmp[i0] * sn;
    }
}

static void norm_ref(const struct k_attn_geom *a, double *v, const double *gain)
{
    if (a->no_norm) return;
    double ss = 0;
    for (int i = 0; i < a->hd; i++) ss += v[i] * v[i];
    double inv = 1 / sqrt(ss / a->hd + a->eps);
    for (int i = 0; i < a->hd; i++) v[i] = v[i] * inv * (a->plus1 + gain[i]);
}

/* fused: the step through k_attn_step with every column its own slot (one dispatch, the prep fused
 * into attention.comp; q is then left as it was) */
static void test_attention_case_as(struct attn_case *tc, enum dtype gtype, bool fused)
{
    const struct k_attn_geom *a = &tc->a;
    int C = tc->cols, hd = a->hd, qw = a->n_h * hd, kvw = a->n_kv * hd;
    int qs = a->gated ? 2 * hd : hd, qbw = a->n_h * qs; /* gated: q rows [n_h][q | gate] */
    int nb = tc->n_slots * a->max_blocks; /* pool blocks */
    size_t pool_n = (size_t)nb * K_KV_BLOCK * kvw;
    /* block table: a random permutation of the pool's blocks */
    uint32_t *bt = malloc((size_t)nb * 4);
    for (int i = 0; i < nb; i++) bt[i] = (uint32_t)i;
    for (int i = nb - 1; i > 0; i--) {
        int j = (int)(t_rng_u32(&rng) % (uint32_t)(i + 1));
        uint32_t s = bt[i];
        bt[i] = bt[j];
        bt[j] = s;
    }
    float *q = rand_floats((size_t)C * qbw, 1.0f), *k = rand_floats((size_t)C * kvw, 1.0f);
    float *v = rand_floats((size_t)C * kvw, 1.0f);
    float *kp = rand_floats(pool_n, 0.3f), *vp = rand_floats(pool_n, 1.0f); /* history of earlier steps */
    struct host_weight qn = make_weight(gtype, 1, hd, 0.1f, a->plus1 ? 0 : 1);
    struct host_weight kn = make_weight(gtype, 1, hd, 0.1f, a->plus1 ? 0 : 1);
    struct gpu_buf qb = dev_floats(q, (size_t)C * qbw), kb = dev_floats(k, (size_t)C * kvw);
    struct gpu_buf vb = dev_floats(v, (size_t)C * kvw), kpb = dev_floats(kp, pool_n), vpb = dev_floats(vp, pool_n);
    struct gpu_buf btb = dev_alloc((uint64_t)nb * 4), cb = dev_alloc((uint64_t)C * sizeof(struct col_meta));
    struct gpu_buf ob = dev_alloc((uint64_t)C * qw * 4);
    up(&btb, bt, (uint64_t)nb * 4);
    up(&cb, tc->cm, (uint64_t)C * sizeof(struct col_meta));
    poison(&ob);
    /* unfused, the case runs k_attention as a prefill: k_attn_scratch with no run of one column */
    struct plan p = plan_on_scratch(tc->plan, k_attn_scratch(&g, tc->plan, a, C, fused ? C : 0, !fused));
    /* the attention dispatch, and whether a merge of key splits follows it */
    const char *merge = a->gated ? "attn.gated.merge" : "attn.merge";
    int at = fused ? 0 : 1;
    if (fused) {
        int rc = k_attn_step(&g, &p, a, &qn.w, &kn.w, qb.addr, kb.addr, vb.addr, kpb.addr, vpb.addr, btb.addr, cb.addr,
                             ob.addr, C, C, false, 2, &e);
        T_CHECK(rc == ST_OK, "k_attn_step: %s", e.msg);
        T_CHECK(p.n >= 1 && !strcmp(p.d[0].kind, a->gated ? "attn.gated.decode_prep" : "attn.decode_prep") &&
                    p.d[0].n_out == 3,
                "fused attention: %d dispatches, kind %s", p.n, p.n ? p.d[0].kind : "(none)");
    } else {
        int rc = k_attn_prep(&g, &p, a, &qn.w, &kn.w, qb.addr, kb.addr, vb.addr, kpb.addr, vpb.addr, btb.addr, cb.addr,
                             C, 2, &e);
        T_CHECK(rc == ST_OK, "k_attn_prep: %s", e.msg);
        rc = k_attention(&g, &p, a, qb.addr, kpb.addr, vpb.addr, btb.addr, cb.addr, ob.addr, C, true, 2, &e);
        T_CHECK(rc == ST_OK, "k_attention: %s", e.msg);
        T_CHECK(p.n >= 2 && !strcmp(p.d[1].kind, a->gated ? "attn.gated.prefill" : "attn.prefill"), "attention tags");
    }
    bool split = p.n == at + 2 && !strcmp(p.d[at + 1].kind, merge);
    T_CHECK(p.n == at + 1 + split, "attention: %d dispatches", p.n);
    /* by kv head (attn_kv.comp) where sel_attn_by_kv_head says (its line is checked on its own in
     * test_select), else by q head (attention.comp); the wide plan's prefill is neither
     * (attn_prefill.comp, below); unfused, the case runs as a prefill */
    bool tiled = tc->plan == PLAN_WIDE && !fused;
    bool kv = !tiled && sel_attn_by_kv_head(&g.tune, hd, (int64_t)a->max_blocks * K_KV_BLOCK, C, !fused);
    /* key splits where the case expects them (--tune attn_split: as forced), each split a workgroup
     * of the kv head's q heads */
    int want = kv && (g.tune.attn_split ? g.tune.attn_split > 1 : tc->split);
    T_CHECK(split == want, "attention hd %d cols %d: split %d, expected %d", hd, C, split, want);
    uint32_t gx = p.d[at].groups[0];
    T_CHECK(tiled || (kv ? gx % (uint32_t)a->n_kv == 0 && (split || gx == (uint32_t)a->n_kv) : gx == (uint32_t)a->n_h),
            "attention (%s): grid x %u for %d kv heads, %d q heads", kv ? "by kv head" : "by q head", gx, a->n_kv,
            a->n_h);
    /* the wide plan's tiled kernel: a workgroup per (tile of columns, q head) */
    T_CHECK(tc->plan != PLAN_WIDE || fused || (p.n == 2 && p.d[1].groups[1] == (uint32_t)a->n_h), "attention %s: grid y %u",
            plan_kind_name(tc->plan), p.n == 2 ? p.d[1].groups[1] : 0);
    run_plan(&p);

    /* reference: prep on the host into double copies of q and the pools */
    double *rq = malloc((size_t)C * qw * sizeof *rq), *rk = malloc(pool_n * sizeof *rk);
    double *rv = malloc(pool_n * sizeof *rv), *ro = malloc((size_t)C * qw * sizeof *ro);
    for (size_t i = 0; i < pool_n; i++) {
        rk[i] = kp[i];
        rv[i] = vp[i];
    }
    for (int c = 0; c < C; c++) {
        uint32_t pos = tc->cm[c].pos, slot = tc->cm[c].slot;
        size_t row = ((size_t)bt[slot * a->max_blocks + pos / 16] * 16 + pos % 16) * kvw;
        for (int h = 0; h < a->n_h; h++) {
            double *hv = rq + (size_t)c * qw + h * hd;
            for (int i = 0; i < hd; i++) hv[i] = q[(size_t)c * qbw + h * qs + i];
            norm_ref(a, hv, qn.val);
            rope_ref(a, hv, pos);
        }
        for (int h = 0; h < a->n_kv; h++) {
            double *hk = rk + row + h * hd;
            for (int i = 0; i < hd; i++) {
                hk[i] = k[(size_t)c * kvw + h * hd + i];
                rv[row + h * hd + i] = v[(size_t)c * kvw + h * hd + i];
            }
            norm_ref(a, hk, kn.val);
            rope_ref(a, hk, pos);
        }
    }
    for (int c = 0; c < C; c++) {
        uint32_t pos = tc->cm[c].pos, slot = tc->cm[c].slot;
        for (int h = 0; h < a->n_h; h++) {
            int kvh = h / (a->n_h / a->n_kv);
            double *s = malloc((pos + 1) * sizeof *s), mx = -INFINITY, tot = 0;
            for (uint32_t j = 0; j <= pos; j++) {
                size_t row = ((size_t)bt[slot * a->max_blocks + j / 16] * 16 + j % 16) * kvw + kvh * hd;
                double d = 0;
                for (int i = 0; i < hd; i++) d += rq[(size_t)c * qw + h * hd + i] * rk[row + i];
                s[j] = d * a->scale;
                mx = fmax(mx, s[j]);
            }
            for (uint32_t j = 0; j <= pos; j++) tot += s[j] = exp(s[j] - mx);
            for (int i = 0; i < hd; i++) {
                double o = 0;
                for (uint32_t j = 0; j <= pos; j++)
                    o += s[j] * rv[((size_t)bt[slot * a->max_blocks + j / 16] * 16 + j % 16) * kvw + kvh * hd + i];
                double gate = a->gated ? 1 / (1 + exp(-(double)q[(size_t)c * qbw + h * qs + hd + i])) : 1;
                ro[(size_t)c * qw + h * hd + i] = o / tot * gate;
            }
            free(s);
        }
    }
    float *gq = malloc((size_t)C * qbw * 4), *gk = malloc(pool_n * 4), *gv = malloc(pool_n * 4);
    float *go = malloc((size_t)C * qw * 4);
    down(&qb, gq, (uint64_t)C * qbw * 4);
    if (fused) { /* q as it was; compare the reference's rotation with itself below */
        T_CHECK(memcmp(gq, q, (size_t)C * qbw * 4) == 0, "fused attention wrote q");
        for (int c = 0; c < C; c++)
            for (int h = 0; h < a->n_h; h++)
                for (int i = 0; i < hd; i++) gq[(size_t)c * qbw + h * qs + i] = (float)rq[(size_t)c * qw + h * hd + i];
    }
    int gate_changed = 0; /* gated: keep each head's q part in gq[c][h*hd ..], check the gate kept */
    for (int c = 0; c < C; c++)
        for (int h = 0; h < a->n_h; h++)
            for (int i = 0; i < hd; i++) {
                gate_changed += a->gated && gq[(size_t)c * qbw + h * qs + hd + i] != q[(size_t)c * qbw + h * qs + hd + i];
                gq[(size_t)c * qw + h * hd + i] = gq[(size_t)c * qbw + h * qs + i];
            }
    T_CHECK(gate_changed == 0, "attn.prep wrote %d gate values", gate_changed);
    down(&kpb, gk, pool_n * 4);
    down(&vpb, gv, pool_n * 4);
    down(&ob, go, (uint64_t)C * qw * 4);
    double eq = rel_err(gq, rq, (size_t)C * qw), ek = rel_err(gk, rk, pool_n), ev = rel_err(gv, rv, pool_n);
    double eo = rel_err(go, ro, (size_t)C * qw);
    T_CHECK(eq < 1e-5 && ek < 1e-5 && ev == 0, "attn.prep hd %d cols %d: rel err q %g k pool %g v pool %g", hd, C, eq,
            ek, ev);
    T_CHECK(eo < 1e-4, "attention %s%s hd %d cols %d: rel err %g", plan_kind_name(tc->plan), fused ? " fused" : "",
            hd, C, eo);
    free(bt);
    free(q);
    free(k);
    free(v);
    free(kp);
    free(vp);
    free(rq);
    free(rk);
    free(rv);
    free(ro);
    free(gq);
    free(gk);
    free(gv);
    free(go);
    free_weight(&qn);
    free_weight(&kn);
}

static void test_attention_case(struct attn_case *tc, enum dtype gtype) { test_attention_case_as(tc, gtype, false); }

static void test_attention(void)
{
    /* LFM2 shape, decode: 3 slots at different lengths */
    struct attn_case dec = {.a = {4, 2, 64, 64, 1e6f, 1e-5f, 0.125f, false, false, false, 4, false}, .n_slots = 3, .cols = 3};
    dec.cm[0] = (struct col_meta){1, 5, 2, 1};
    dec.cm[1] = (struct col_meta){2, 17, 0, 1};
    dec.cm[2] = (struct col_meta){3, 47, 1, 0};
    test_attention_case(&dec, DT_F32);
    /* prefill: slot 1 gets 6 columns across a block boundary, slot 0 three columns from 0 */
    struct attn_case pre = {.a = {4, 1, 64, 64, 1e4f, 1e-6f, 0.125f, true, false, false, 4, false}, .n_slots = 2, .cols = 9};
    for (int i = 0; i < 6; i++) pre.cm[i] = (struct col_meta){7, (uint32_t)(13 + i), 1, 0};
    for (int i = 0; i < 3; i++) pre.cm[6 + i] = (struct col_meta){8, (uint32_t)i, 0, 1};
    test_attention_case(&pre, DT_BF16);
    /* GLM-like: head dim 128, partial interleaved rotary, no q/k norm */
    struct attn_case glm = {.a = {4, 2, 128, 64, 1e4f, 1e-5f, 0.0884f, false, true, true, 3, false}, .n_slots = 2, .cols = 2};
    glm.cm[0] = (struct col_meta){1, 40, 1, 1};
    glm.cm[1] = (struct col_meta){1, 3, 0, 1};
    test_attention_case(&glm, DT_F16);
    /* Qwen3.5-like: head dim 256, gated q, NeoX rotary on the first 64 dims, (1 + w) norms, GQA */
    struct attn_case qwen = {.a = {4, 2, 256, 64, 1e7f, 1e-6f, 0.0625f, true, false, false, 3, true}, .n_slots = 2,
                             .cols = 5};
    for (int i = 0; i < 4; i++) qwen.cm[i] = (struct col_meta){9, (uint32_t)(14 + i), 1, 1};
    qwen.cm[4] = (struct col_meta){9, 2, 0, 1};
    test_attention_case(&qwen, DT_BF16);
    /* the wide plan's tiled prefill: runs of 45 (across blocks, from 13), 50 (from 0) and 1
     * columns, so tiles straddle runs; then GLM's head dim with runs of 9 and 20 */
    struct attn_case wide = {.a = {4, 2, 64, 64, 1e6f, 1e-5f, 0.125f, false, false, false, 5, false}, .n_slots = 3,
                             .cols = 96, .plan = PLAN_WIDE};
    for (int i = 0; i < 45; i++) wide.cm[i] = (struct col_meta){(uint32_t)i, (uint32_t)(13 + i), 1, 0};
    for (int i = 0; i < 50; i++) wide.cm[45 + i] = (struct col_meta){(uint32_t)i, (uint32_t)i, 0, 1};
    wide.cm[95] = (struct col_meta){5, 70, 2, 1};
    test_attention_case(&wide, DT_BF16);
    pre.plan = PLAN_WIDE;
    test_attention_case(&pre, DT_BF16);
    struct attn_case wglm = {.a = {4, 2, 128, 64, 1e4f, 1e-5f, 0.0884f, false, true, true, 3, false}, .n_slots = 2,
                             .cols = 29, .plan = PLAN_WIDE};
    for (int i = 0; i < 9; i++) wglm.cm[i] = (struct col_meta){1, (uint32_t)(30 + i), 1, 1};
    for (int i = 0; i < 20; i++) wglm.cm[9 + i] = (struct col_meta){2, (uint32_t)i, 0, 1};
    test_attention_case(&wglm, DT_F16);
    /* Qwen3.5's gated heads in the tiled kernel: runs of 37 (from 5, across blocks) and 12 (from 0) */
    struct attn_case wqwen = {.a = {4, 2, 256, 64, 1e7f, 1e-6f, 0.0625f, true, false, false, 4, true}, .n_slots = 2,
                              .cols = 49, .plan = PLAN_WIDE};
    for (int i = 0; i < 37; i++) wqwen.cm[i] = (struct col_meta){3, (uint32_t)(5 + i), 1, 1};
    for (int i = 0; i < 12; i++) wqwen.cm[37 + i] = (struct col_meta){4, (uint32_t)i, 0, 1};
    test_attention_case(&wqwen, DT_BF16);
    qwen.plan = PLAN_WIDE;
    test_attention_case(&qwen, DT_BF16);
    /* decode steps with the prep fused into attention (k_attn_step): LFM2's shape, GLM's (no norm,
     * interleaved partial rotary), Qwen3.5's gated heads at positions 0 (the only key is this
     * column's), 16 (the first of a block) and 33; and a decode step of the wide plan */
    test_attention_case_as(&dec, DT_F32, true);
    test_attention_case_as(&glm, DT_F16, true);
    struct attn_case qdec = {.a = {4, 2, 256, 64, 1e7f, 1e-6f, 0.0625f, true, false, false, 3, true}, .n_slots = 3,
                             .cols = 3};
    qdec.cm[0] = (struct col_meta){9, 0, 2, 1};
    qdec.cm[1] = (struct col_meta){9, 16, 0, 1};
    qdec.cm[2] = (struct col_meta){9, 33, 1, 1};
    test_attention_case_as(&qdec, DT_BF16, true);
    dec.plan = PLAN_WIDE;
    test_attention_case_as(&dec, DT_BF16, true);
    /* long contexts (bench/35): several chunks of 128 keys, split across workgroups by the
     * automatic rule (few kv heads × columns) and merged; a column whose keys end before most
     * splits (pos 5: the others empty). LFM2's head dim with 4 q heads a kv head, fused and not */
    struct attn_case ldec = {.a = {8, 2, 64, 64, 1e6f, 1e-5f, 0.125f, false, false, false, 45, false}, .n_slots = 3,
                             .cols = 3, .split = 1};
    ldec.cm[0] = (struct col_meta){1, 300, 0, 1};
    ldec.cm[1] = (struct col_meta){2, 719, 1, 1};
    ldec.cm[2] = (struct col_meta){3, 5, 2, 1};
    test_attention_case_as(&ldec, DT_BF16, true);
    test_attention_case(&ldec, DT_F32);
    /* no GQA (a q head a kv head), head dim 128, partial interleaved rotary, no norm */
    struct attn_case lglm = {.a = {4, 4, 128, 32, 1e4f, 1e-5f, 0.0884f, false, true, true, 20, false}, .n_slots = 2,
                             .cols = 2, .split = 1};
    lglm.cm[0] = (struct col_meta){1, 319, 1, 1};
    lglm.cm[1] = (struct col_meta){1, 150, 0, 1};
    test_attention_case_as(&lglm, DT_F16, true);
    /* 8 q heads a kv head at head dim 256, gated (Qwen3.5's kind) */
    struct attn_case lqwen = {.a = {8, 1, 256, 64, 1e7f, 1e-6f, 0.0625f, true, false, false, 30, true}, .n_slots = 2,
                              .cols = 2, .split = 1};
    lqwen.cm[0] = (struct col_meta){9, 479, 0, 1};
    lqwen.cm[1] = (struct col_meta){9, 260, 1, 1};
    test_attention_case_as(&lqwen, DT_BF16, true);
    /* a batch-plan prefill past a long history: 6 columns from 400 (across a block), 3 from 0 */
    struct attn_case lpre = {.a = {8, 2, 64, 64, 1e4f, 1e-6f, 0.125f, true, false, false, 26, false}, .n_slots = 2,
                             .cols = 9, .split = 1};
    for (int i = 0; i < 6; i++) lpre.cm[i] = (struct col_meta){7, (uint32_t)(398 + i), 1, 0};
    for (int i = 0; i < 3; i++) lpre.cm[6 + i] = (struct col_meta){8, (uint32_t)i, 0, 1};
    test_attention_case(&lpre, DT_BF16);
}

/* ---- winit */

static void winit_run(const struct gpu_weight *w, uint32_t seed, uint32_t tensor, enum winit_mode mode, float a,
                      float b)
{
    struct plan p = {0};
    int rc = k_winit(&g, &p, w, seed, tensor, mode, a, b, &e);
    T_CHECK(rc == ST_OK, "k_winit: %s", e.msg);
    run_plan(&p);
}

static void test_winit(void)
{
    const int64_t rows = 300, k = 512; /* 153600 elements */
    uint64_t n = (uint64_t)(rows * k);
    struct gpu_buf f32buf = dev_alloc(n * 4);
    struct gpu_weight wf = {f32buf.addr, DT_F32, rows, k, n * 4};
    float *ref = malloc(n * 4);
    for (size_t ti = 0; ti < ARRAY_LEN(all_types); ti++) {
        enum dtype t = all_types[ti];
        uint64_t bytes = weight_bytes(t, rows, k);
        struct gpu_buf buf = dev_alloc(bytes);
        struct gpu_weight w = {buf.addr, t, rows, k, bytes};
        uint8_t *h = malloc(bytes), *h2 = malloc(bytes);
        struct { enum winit_mode m; float a, b, mean, sd; } cases[] = {
            {WINIT_NORMAL, 0.05f, 0.0f, 0.0f, 0.05f},
            {WINIT_NORMAL, 0.1f, 1.0f, 1.0f, 0.1f},
            {WINIT_UNIFORM, 1.0f, 16.0f, 8.5f, 15.0f / sqrtf(12.0f)},
            {WINIT_LOG_UNIFORM, 1.0f, 16.0f, (16 * logf(16) - 15) / 15, 0},
        };
        for (size_t ci = 0; ci < ARRAY_LEN(cases); ci++) {
            poison(&buf);
            winit_run(&w, 7, 11 + (uint32_t)ci, cases[ci].m, cases[ci].a, cases[ci].b);
            down(&buf, h, bytes);
            double s = 0, s2 = 0, lo = INFINITY, hi = -INFINITY;
            uint64_t zeros = 0, nonfinite = 0;
            for (int64_t r = 0; r < rows; r++)
                for (int64_t i = 0; i < k; i++) {
                    double x = weight_get(t, rows, k, h, r, i);
                    if (!isfinite(x)) nonfinite++;
                    if (x == 0) zeros++;
                    s += x;
                    s2 += x * x;
                    lo = fmin(lo, x);
                    hi = fmax(hi, x);
                }
            double mean = s / (double)n, sd = sqrt(s2 / (double)n - mean * mean);
            double want_sd = cases[ci].sd, tol_mean = ci == 3 ? 0.01 * cases[ci].mean : 0.05 * want_sd;
            T_CHECK(nonfinite == 0, "winit %s case %zu: %llu non-finite", dtype_name(t), ci, (unsigned long long)nonfinite);
            T_CHECK(fabs(mean - cases[ci].mean) < tol_mean + (t == DT_Q4_0 ? 0.02 * want_sd : 0),
                    "winit %s case %zu: mean %g, expected %g", dtype_name(t), ci, mean, cases[ci].mean);
            if (want_sd > 0)
                /* Q4_0's step (amax/8) adds visible noise when the values sit on an offset */
                T_CHECK(fabs(sd / want_sd - 1) < (t == DT_Q4_0 && cases[ci].mean != 0 ? 0.15 : 0.03),
                        "winit %s case %zu: std %g, expected %g", dtype_name(t), ci, sd, want_sd);
            if (cases[ci].m == WINIT_LOG_UNIFORM && t != DT_Q4_0 && t != DT_Q8_0)
                T_CHECK(lo >= 0 && hi <= logf(16) * 1.001, "winit log-uniform range [%g, %g]", lo, hi);
            /* zeros: none for plain types; quantization makes some (q = 0 / q = 8), never many */
            double zmax = t == DT_Q4_0 ? 0.2 : t == DT_Q8_0 ? 0.02 : 0;
            T_CHECK((double)zeros <= zmax * (double)n, "winit %s case %zu: %llu zeros", dtype_name(t), ci,
                    (unsigned long long)zeros);
        }
        /* same seed and tensor: same bytes; another seed or tensor: different values */
        winit_run(&w, 7, 11, WINIT_NORMAL, 0.05f, 0);
        down(&buf, h, bytes);
        winit_run(&w, 7, 11, WINIT_NORMAL, 0.05f, 0);
        down(&buf, h2, bytes);
        T_CHECK(memcmp(h, h2, bytes) == 0, "winit %s: not deterministic", dtype_name(t));
        for (int other = 0; other < 2; other++) {
            winit_run(&w, other ? 7 : 8, other ? 12 : 11, WINIT_NORMAL, 0.05f, 0);
            down(&buf, h2, bytes);
            uint64_t same = 0;
            for (uint64_t i = 0; i < n; i++)
                same += weight_get(t, rows, k, h, 0, (int64_t)i) == weight_get(t, rows, k, h2, 0, (int64_t)i);
            double limit = t == DT_Q4_0 ? 0.25 : t == DT_Q8_0 ? 0.05 : 0.01;
            T_CHECK((double)same < limit * (double)n, "winit %s: %s changes too little (%llu equal)", dtype_name(t),
                    other ? "tensor id" : "seed", (unsigned long long)same);
        }
        /* Q types: the same draws as F32, quantized as ggml does */
        if (t == DT_Q8_0 || t == DT_Q4_0) {
            winit_run(&wf, 7, 11, WINIT_NORMAL, 0.05f, 0);
            down(&f32buf, ref, n * 4);
            uint8_t *file = malloc(n / 32 * 34), *dev = malloc(bytes);
            int bb = t == DT_Q8_0 ? 34 : 18;
            for (uint64_t b = 0; b < n / 32; b++) quant_block(t, ref + 32 * b, file + b * bb);
            weight_repack(t, rows, k, file, 0, bytes, dev);
            uint64_t diff = 0;
            for (uint64_t i = 0; i < n; i++)
                diff += fabsf(weight_get(t, rows, k, dev, 0, (int64_t)i) - weight_get(t, rows, k, h, 0, (int64_t)i)) >
                        1e-6f;
            T_CHECK(diff < n / 1000, "winit %s: %llu of %llu elements differ from ggml quantization of the F32 draws",
                    dtype_name(t), (unsigned long long)diff, (unsigned long long)n);
            free(file);
            free(dev);
        }
        free(h);
        free(h2);
    }
    free(ref);
}

/* ---- a tensor past lavapipe's 128 MiB storage-binding limit (the core binds by address): a
 * 200 MiB bf16 [102400][1024] weight made by winit on the device, looked up by embed near its end
 * and multiplied by matmul, both against the weight read back to the host. */
static void test_big_tensor(void)
{
    const int64_t rows = 102400, k = 1024;
    const int C = 2;
    struct gpu_weight w = {.dtype = DT_BF16, .rows = rows, .k = k, .bytes = weight_bytes(DT_BF16, rows, k)};
    struct gpu_buf wb = dev_alloc(w.bytes), cols = dev_alloc(C * sizeof(struct col_meta));
    struct gpu_buf x = dev_alloc((uint64_t)C * k * 4), y = dev_alloc((uint64_t)C * rows * 4);
    w.addr = wb.addr;
    struct plan p = {0};
    T_CHECK(k_winit(&g, &p, &w, 7, 1, WINIT_NORMAL, 1.0f, 0.0f, &e) == ST_OK, "k_winit: %s", e.msg);
    run_plan(&p);
    uint16_t *host = malloc(w.bytes);
    down(&wb, host, w.bytes);
    struct col_meta cm[2] = {{(uint32_t)(rows - 1), 0, 0, 0}, {70001, 1, 1, 0}};
    up(&cols, cm, sizeof cm);
    poison(&x);
    T_CHECK(k_embed(&g, &p, &w, cols.addr, x.addr, C, &e) == ST_OK, "k_embed: %s", e.msg);
    run_plan(&p);
    poison(&y);
    T_CHECK(k_matmul(&g, &p, &w, x.addr, y.addr, C, false, 0, "big", "", &e) == ST_OK, "k_matmul: %s", e.msg);
    run_plan(&p);
    float *xo = malloc((size_t)C * k * 4), *yo = malloc((size_t)C * rows * 4);
    double *xr = malloc((size_t)C * k * sizeof *xr), *yr = malloc((size_t)C * rows * sizeof *yr);
    down(&x, xo, (uint64_t)C * k * 4);
    down(&y, yo, (uint64_t)C * rows * 4);
    for (int c = 0; c < C; c++)
        for (int64_t i = 0; i < k; i++) xr[c * k + i] = bf16_to_f32(host[cm[c].token * k + i]);
    for (int c = 0; c < C; c++)
        for (int64_t n = 0; n < rows; n++) {
            double acc = 0;
            for (int64_t i = 0; i < k; i++) acc += (double)bf16_to_f32(host[n * k + i]) * xr[c * k + i];
            yr[c * rows + n] = acc;
        }
    double re = rel_err(xo, xr, (size_t)C * k), rm = rel_err(yo, yr, (size_t)C * rows);
    T_CHECK(re == 0, "embed of rows past 128 MiB: rel err %g", re);
    T_CHECK(rm < 1e-5, "matmul over a 200 MiB weight: rel err %g", rm);
    free(host);
    free(xo);
    free(yo);
    free(xr);
    free(yr);
}

/* ---- Gated DeltaNet: conv + window, delta rule (both head orders), gated norm */

static const struct k_dn_geom dn_test_geom = {.nk = 2, .nv = 6, .dk = 40, .dv = 48, .conv = 4};
#define DN_SLOTS 5

/* decode: 4 runs of one column in scattered slots; prefill: runs of 5 and 3 columns */
static const struct run_meta dn_dec[4] = {{3, 0, 1, 9}, {0, 1, 1, 4}, {4, 2, 1, 7}, {1, 3, 1, 2}};
static const struct run_meta dn_pre[2] = {{2, 0, 5, 5}, {4, 5, 3, 0}};
/* mixed: runs of every length the wide conv treats apart at K = 4 (1, 2, K-1, K, long) */
static const struct run_meta dn_mix[5] = {{2, 0, 2, 7}, {4, 2, 37, 0}, {0, 39, 1, 3}, {3, 40, 3, 11}, {1, 43, 4, 2}};

/* The state ring cases of both kernels: n_snap 1 without a slot table is the plain layout; with a
 * table each slot reads its entry cur (random; the first run's slot at the last entry, so that a
 * spec run's snapshots wrap to entry 0). Batch writes the run's final state back to entry cur,
 * spec one snapshot per column into the entries after it (poisoned first: a snapshot the kernel
 * forgets stays NaN); every other entry must come back as it went. */
struct dn_case {
    bool pre;
    int n_snap;
    bool slot_tab, spec;
    bool mix; /* dn_mix's runs (wins over pre) */
};
static const struct dn_case dn_cases[] = {
    {false, 1, false, false, false}, {true, 1, false, false, false}, {false, 3, true, false, false},
    {true, 6, true, false, false},   {false, 2, true, true, false},  {true, 6, true, true, false},
    {true, 9, true, true, false},
};

struct dn_ring {
    const struct run_meta *runs;
    int n_runs, cols, n_snap;
    size_t stride, n;         /* floats an entry; floats of the whole ring */
    struct slot_meta sm[DN_SLOTS];
    struct gpu_buf slots;     /* the slot table on the device (0 when the case has none) */
};

static struct dn_ring dn_ring_make(const struct dn_case *c, const struct k_dn_geom *dn)
{
    struct dn_ring r = {.runs = c->mix ? dn_mix : c->pre ? dn_pre : dn_dec, .n_runs = c->mix ? 5 : c->pre ? 2 : 4,
                        .cols = c->mix ? 47 : c->pre ? 8 : 4, .n_snap = c->n_snap, .stride = k_dn_state_bytes(dn) / 4};
    r.n = (size_t)DN_SLOTS * (size_t)c->n_snap * r.stride;
    for (int i = 0; i < DN_SLOTS; i++) r.sm[i] = (struct slot_meta){.cur = t_rng_u32(&rng) % (uint32_t)c->n_snap};
    r.sm[r.runs[0].slot].cur = (uint32_t)c->n_snap - 1;
    if (c->slot_tab) {
        r.slots = dev_alloc(sizeof r.sm);
        up(&r.slots, r.sm, sizeof r.sm);
    }
    return r;
}

/* Float offset of entry (cur + i) mod n_snap of run ru's slot (i = 0: the committed entry). */
static size_t dn_entry(const struct dn_ring *r, int ru, int i)
{
    uint32_t slot = r->runs[ru].slot;
    return ((size_t)slot * r->n_snap + (r->sm[slot].cur + (uint32_t)i) % (uint32_t)r->n_snap) * r->stride;
}

/* NaN over [at, at + n) of every entry a spec step must write. */
static void dn_poison_snaps(const struct dn_ring *r, float *st, size_t at, size_t n)
{
    for (int ru = 0; ru < r->n_runs; ru++)
        for (uint32_t i = 1; i <= r->runs[ru].n_cols; i++)
            for (size_t k = 0; k < n; k++) st[dn_entry(r, ru, (int)i) + at + k] = NAN;
}

/* dn.conv's reference over the ring's runs: y [cols][Ch] and, in st, the windows (at woff floats
 * into each entry, [K-1][Ch] oldest first) of entry cur (batch) or the snapshots after each column
 * (spec). x: the pre-conv rows [cols][Ch]; w: the taps [Ch][K]. */
static void dn_conv_ref(const struct dn_ring *rg, const double *w, int K, int Ch, size_t woff, const float *x,
                        bool spec, double *y, double *st)
{
    for (int r = 0; r < rg->n_runs; r++) {
        const struct run_meta *ru = &rg->runs[r];
        double *win = st + dn_entry(rg, r, 0) + woff;
        for (int ch = 0; ch < Ch; ch++) {
            double hist[8];
            for (int j = 0; j < K - 1; j++) hist[j] = win[j * Ch + ch];
            for (uint32_t c = ru->first_col; c < ru->first_col + ru->n_cols; c++) {
                double acc = w[ch * K + K - 1] * x[c * Ch + ch];
                for (int j = 0; j < K - 1; j++) acc += w[ch * K + j] * hist[j];
                y[c * Ch + ch] = acc / (1 + exp(-acc));
                for (int j = 0; j < K - 2; j++) hist[j] = hist[j + 1];
                if (K > 1) hist[K - 2] = x[c * Ch + ch];
                double *snap = st + dn_entry(rg, r, (int)(c - ru->first_col) + 1) + woff;
                for (int j = 0; spec && j < K - 1; j++) snap[j * Ch + ch] = hist[j];
            }
            for (int j = 0; !spec && j < K - 1; j++) win[j * Ch + ch] = hist[j];
        }
    }
}

/* dn.conv in batch and spec plans (dn_cases), and dn.conv.wide (parallel over positions) on the
 * wide cases: decode, prefill, and the mixed runs from a slot table and without; at K = 4 and,
 * with taps, at K = 2 (a window of one row) and 6 (runs shorter than the window). */
static const struct dn_case dn_conv_wide_cases[] = {
    {false, 1, false, false, false}, {true, 6, true, false, false}, {true, 1, false, false, true},
    {true, 3, true, false, true},
};

static void test_dn_conv_cases(const struct k_dn_geom *dn, const struct dn_case *cases, size_t n_cases, bool wide)
{
    int Ch = 2 * dn->nk * dn->dk + dn->nv * dn->dv, K = dn->conv;
    size_t woff = k_dn_window_offset(dn) / 4, wn = (size_t)(K - 1) * Ch;
    for (size_t ti = 0; ti < ARRAY_LEN(plain_types); ti++) {
        for (size_t ci = 0; ci < n_cases; ci++) {
            const struct dn_case *cs = &cases[ci];
            struct dn_ring rg = dn_ring_make(cs, dn);
            const struct run_meta *runs = rg.runs;
            int n_runs = rg.n_runs, C = rg.cols;
            size_t sn = rg.n;
            struct host_weight w = make_weight(plain_types[ti], Ch, K, 0.5f, 0);
            float *x = rand_floats((size_t)C * Ch, 1.0f), *st = rand_floats(sn, 1.0f);
            if (cs->spec) dn_poison_snaps(&rg, st, woff, wn);
            struct gpu_buf xb = dev_floats(x, (size_t)C * Ch), sb = dev_floats(st, sn);
            struct gpu_buf yb = dev_alloc((uint64_t)C * Ch * 4), rb = dev_alloc(sizeof dn_mix);
            up(&rb, runs, (uint64_t)n_runs * sizeof *runs);
            poison(&yb);
            struct plan p = {.kind = cs->spec ? PLAN_SPEC : wide ? PLAN_WIDE : PLAN_BATCH};
            struct k_state ks = {sb.addr, cs->slot_tab ? rg.slots.addr : 0, (uint32_t)cs->n_snap};
            int rc = k_dn_conv(&g, &p, dn, &w.w, xb.addr, &ks, yb.addr, rb.addr, C, n_runs, 1, &e);
            const char *kind = cs->spec ? "dn.conv.snap" : wide ? "dn.conv.wide" : "dn.conv";
            T_CHECK(rc == ST_OK && p.n == 1 && !strcmp(p.d[0].kind, kind), "k_dn_conv: %s", e.msg);
            T_CHECK(p.n == 1 && p.d[0].groups[2] == (wide ? (uint32_t)(C - n_runs + K_WIDE_CONV_COLS) / K_WIDE_CONV_COLS : 1u), "dn.conv grid z %u",
                    p.n ? p.d[0].groups[2] : 0);
            run_plan(&p);
            float *y = malloc((size_t)C * Ch * 4), *st2 = malloc(sn * 4);
            double *ref = malloc((size_t)C * Ch * sizeof *ref), *sref = malloc(sn * sizeof *sref);
            down(&yb, y, (uint64_t)C * Ch * 4);
            down(&sb, st2, sn * 4);
            for (size_t i = 0; i < sn; i++) sref[i] = st[i];
            dn_conv_ref(&rg, w.val, K, Ch, woff, x, cs->spec, ref, sref);
            double ey = rel_err(y, ref, (size_t)C * Ch), es = rel_err(st2, sref, sn);
            T_CHECK(ey < 1e-5 && es == 0, "dn.conv%s K %d %s case %zu: rel err y %g window %g", wide ? ".wide" : "",
                    K, dtype_name(plain_types[ti]), ci, ey, es);
            free(x);
            free(st);
            free(y);
            free(st2);
            free(ref);
            free(sref);
            free_weight(&w);
        }
    }
}

static void test_dn_conv(void)
{
    test_dn_conv_cases(&dn_test_geom, dn_cases, ARRAY_LEN(dn_cases), false);
    const int taps[3] = {4, 2, 6};
    for (int i = 0; i < 3; i++) {
        struct k_dn_geom dn = dn_test_geom;
        dn.conv = taps[i];
        test_dn_conv_cases(&dn, dn_conv_wide_cases, ARRAY_LEN(dn_conv_wide_cases), true);
    }
}

/* dn.in_proj_qkv with the conv in its epilogue (k_dn_conv_step, decode): against the normed
 * product's reference fed to dn_conv_ref, at 1 and 4 columns (every column its own slot, a slot
 * table of 3 entries and the plain layout), taps K = 2, 4, 6, every in_proj type; every entry of
 * the ring is compared (only entry cur of each column's slot may move). Where the product goes to
 * a matrix-vector kernel (Q4_0, Q8_0 at one column) the conv does not fuse and the call refuses. */
static void test_dn_conv_step(void)
{
    const int KIN = 160, taps[3] = {4, 2, 6};
    const struct dn_case cases[3] = {{false, 3, true, false, false}, {false, 1, false, false, false},
                                     {false, 3, true, false, false}};
    for (int ki = 0; ki < 3; ki++)
        for (size_t ti = 0; ti < ARRAY_LEN(all_types); ti++)
            for (int ci = 0; ci < 3; ci++) {
                struct k_dn_geom dn = dn_test_geom;
                dn.conv = taps[ki];
                int Ch = 2 * dn.nk * dn.dk + dn.nv * dn.dv, K = dn.conv;
                struct dn_ring rg = dn_ring_make(&cases[ci], &dn);
                if (ci == 2) rg.n_runs = rg.cols = 1; /* one column */
                int C = rg.cols;
                size_t woff = k_dn_window_offset(&dn) / 4;
                struct host_weight win = make_weight(all_types[ti], Ch, KIN, 1.0f / sqrtf((float)KIN), 0);
                struct host_weight cw = make_weight(ti % 2 ? DT_F32 : DT_BF16, Ch, K, 0.5f, 0);
                struct host_weight gn = make_weight(DT_BF16, 1, KIN, 0.1f, 1.0f);
                float *x = rand_floats((size_t)C * KIN, 1.5f), *st = rand_floats(rg.n, 1.0f);
                struct col_meta cm[4];
                for (int c = 0; c < C; c++) cm[c] = (struct col_meta){(uint32_t)c, rg.runs[c].pos0, rg.runs[c].slot, 1};
                struct gpu_buf xb = dev_floats(x, (size_t)C * KIN), sb = dev_floats(st, rg.n);
                struct gpu_buf yb = dev_alloc((uint64_t)C * Ch * 4), cb = dev_alloc(sizeof cm);
                up(&cb, cm, (uint64_t)C * sizeof *cm);
                poison(&yb);
                struct k_norm kn = {&gn.w, 1e-5f, false};
                struct k_state ks = {sb.addr, cases[ci].slot_tab ? rg.slots.addr : 0, (uint32_t)cases[ci].n_snap};
                struct plan p = {.kind = PLAN_BATCH};
                bool fuses = k_dn_conv_fuses(&g, &p, &win.w, C, C);
                /* Q4_0 up to 8 columns and Q8_0 up to 2 go to xmv, qmv or matvec (kernels.c mv_pick); a
                 * routing tune key (ctest variants) may send any type to them */
                bool hooked = routed();
                bool want = all_types[ti] == DT_Q4_0 ? false : all_types[ti] == DT_Q8_0 ? C > 2 : true;
                T_CHECK(hooked || fuses == want, "dn conv step %s, %d columns: fuses %d", dtype_name(all_types[ti]), C,
                        fuses);
                int rc = k_dn_conv_step(&g, &p, &dn, &win.w, &kn, xb.addr, &cw.w, &ks, yb.addr, cb.addr, C, C, 3, &e);
                char kind[40];
                snprintf(kind, sizeof kind, "matmul_dn_conv.%s", dtype_name(all_types[ti]));
                T_CHECK(fuses ? rc == ST_OK && p.n == 1 && !strcasecmp(p.d[0].kind, kind) &&
                                    p.d[0].bytes == win.w.bytes + cw.w.bytes
                              : rc == ST_USAGE && p.n == 0 && strstr(e.msg, "does not fuse"),
                        "k_dn_conv_step %s, %d columns: rc %d, %d dispatches (%s)", dtype_name(all_types[ti]), C, rc,
                        p.n, e.msg);
                if (fuses && rc == ST_OK) {
                    run_plan(&p);
                    double *pre = malloc((size_t)C * Ch * sizeof *pre), *yref = malloc((size_t)C * Ch * sizeof *yref);
                    double *sref = malloc(rg.n * sizeof *sref);
                    matmul_ref(win.val, NULL, gn.val, x, NULL, Ch, KIN, C, pre);
                    float *pf = malloc((size_t)C * Ch * 4);
                    for (size_t i = 0; i < (size_t)C * Ch; i++) pf[i] = (float)pre[i];
                    for (size_t i = 0; i < rg.n; i++) sref[i] = st[i];
                    dn_conv_ref(&rg, cw.val, K, Ch, woff, pf, false, yref, sref);
                    float *gy = malloc((size_t)C * Ch * 4), *gs = malloc(rg.n * 4);
                    down(&yb, gy, (uint64_t)C * Ch * 4);
                    down(&sb, gs, rg.n * 4);
                    double ey = rel_err(gy, yref, (size_t)C * Ch), es = rel_err(gs, sref, rg.n);
                    T_CHECK(ey < 2e-5 && es < 2e-5, "dn conv step %s K %d, %d columns, case %d: rel err y %g window %g",
                            dtype_name(all_types[ti]), K, C, ci, ey, es);
                    free(pre);
                    free(yref);
                    free(sref);
                    free(pf);
                    free(gy);
                    free(gs);
                }
                plan_free(&p);
                free(x);
                free(st);
                free_weight(&win);
                free_weight(&cw);
                free_weight(&gn);
            }
    /* outside decode (a run of two columns) and in a spec plan a conv does not fuse */
    struct plan sp = {.kind = PLAN_SPEC}, bp = {.kind = PLAN_BATCH};
    struct host_weight w = make_weight(DT_BF16, 448, 160, 0.1f, 0);
    bool hooked = routed();
    T_CHECK(!k_conv_fuses(&g, &sp, &w.w, 1, 1) && !k_conv_fuses(&g, &bp, &w.w, 2, 1) &&
                (hooked || k_conv_fuses(&g, &bp, &w.w, 2, 2)),
            "k_conv_fuses: spec, a run of two columns, decode");
    /* the DeltaNet's conv stops at K_DN_CONV_FUSE_COLS, LFM2's at a matmul pass (bench/32) */
    int n = K_DN_CONV_FUSE_COLS;
    T_CHECK(hooked || (k_dn_conv_fuses(&g, &bp, &w.w, n, n) && !k_dn_conv_fuses(&g, &bp, &w.w, n + 1, n + 1) &&
                       k_conv_fuses(&g, &bp, &w.w, K_MATMUL_MAX_COLS, K_MATMUL_MAX_COLS)),
            "k_dn_conv_fuses up to %d columns", n);
    free_weight(&w);
}

/* The delta rule of one value head over one run, in double (docs/models.md, Gated DeltaNet 3-5). */
static void dn_ref_head(const struct k_dn_geom *dn, const float *qkv, const float *b, const float *a, double dt,
                        double A, const struct run_meta *run, int vh, double *S, double *o)
{
    int Ch = 2 * dn->nk * dn->dk + dn->nv * dn->dv, dk = dn->dk, dv = dn->dv;
    int kh = dn->gguf ? vh % dn->nk : vh / (dn->nv / dn->nk);
    double q[256], k[256], d[256];
    for (uint32_t c = run->first_col; c < run->first_col + run->n_cols; c++) {
        const float *row = qkv + (size_t)c * Ch;
        double qq = 0, kk = 0;
        for (int i = 0; i < dk; i++) {
            q[i] = row[kh * dk + i];
            k[i] = row[dn->nk * dk + kh * dk + i];
            qq += q[i] * q[i];
            kk += k[i] * k[i];
        }
        for (int i = 0; i < dk; i++) {
            q[i] *= 1 / sqrt(qq + 1e-6) / sqrt((double)dk);
            k[i] *= 1 / sqrt(kk + 1e-6);
        }
        double beta = 1 / (1 + exp(-(double)b[c * dn->nv + vh]));
        double x = a[c * dn->nv + vh] + dt, sp = x > 20 ? x : log1p(exp(x));
        double decay = exp((dn->gguf ? A : -exp(A)) * sp);
        for (int j = 0; j < dv; j++) {
            double kv = 0;
            for (int i = 0; i < dk; i++) kv += (S[i * dv + j] *= decay) * k[i];
            d[j] = beta * (row[2 * dn->nk * dk + vh * dv + j] - kv);
        }
        for (int j = 0; j < dv; j++) {
            double out = 0;
            for (int i = 0; i < dk; i++) out += (S[i * dv + j] += k[i] * d[j]) * q[i];
            o[(size_t)c * dn->nv * dv + vh * dv + j] = out;
        }
    }
}

static void test_dn_recurrent_case(bool gguf, const struct dn_case *cs, enum dtype t)
{
    struct k_dn_geom dn = dn_test_geom;
    dn.gguf = gguf;
    int Ch = 2 * dn.nk * dn.dk + dn.nv * dn.dv, nv = dn.nv, vd = nv * dn.dv;
    size_t hs = (size_t)dn.dk * dn.dv, sn_head = (size_t)nv * hs; /* one head's state; the whole S */
    struct dn_ring rg = dn_ring_make(cs, &dn);
    const struct run_meta *runs = rg.runs;
    int n_runs = rg.n_runs, C = rg.cols;
    size_t sn = rg.n;
    struct host_weight dt = make_weight(t, 1, nv, 0.5f, 0);
    struct host_weight A = make_weight(t, 1, nv, 0.5f, gguf ? -2.0f : 0.7f); /* ssm_a < 0, or A_log */
    float *qkv = rand_floats((size_t)C * Ch, 1.0f), *b = rand_floats((size_t)C * nv, 1.5f);
    float *a = rand_floats((size_t)C * nv, 1.5f), *st = rand_floats(sn, 0.3f);
    if (cs->spec) dn_poison_snaps(&rg, st, 0, sn_head);
    struct gpu_buf qb = dev_floats(qkv, (size_t)C * Ch), bb = dev_floats(b, (size_t)C * nv);
    struct gpu_buf ab = dev_floats(a, (size_t)C * nv), sb = dev_floats(st, sn);
    struct gpu_buf ob = dev_alloc((uint64_t)C * vd * 4), rb = dev_alloc(sizeof dn_dec);
    up(&rb, runs, (uint64_t)n_runs * sizeof *runs);
    poison(&ob);
    struct plan p = {.kind = cs->spec ? PLAN_SPEC : PLAN_BATCH};
    struct k_state ks = {sb.addr, cs->slot_tab ? rg.slots.addr : 0, (uint32_t)cs->n_snap};
    int rc = k_dn_recurrent(&g, &p, &dn, &dt.w, &A.w, qb.addr, bb.addr, ab.addr, &ks, ob.addr, rb.addr, n_runs, 1,
                            &e);
    const char *kind = cs->spec ? "dn.recurrent.snap" : "dn.recurrent";
    T_CHECK(rc == ST_OK && p.n == 1 && !strcmp(p.d[0].kind, kind), "k_dn_recurrent: %s", e.msg);
    run_plan(&p);
    float *o = malloc((size_t)C * vd * 4), *st2 = malloc(sn * 4);
    double *ro = malloc((size_t)C * vd * sizeof *ro), *rs = malloc(sn * sizeof *rs), *S = malloc(hs * sizeof *S);
    down(&ob, o, (uint64_t)C * vd * 4);
    down(&sb, st2, sn * 4);
    for (size_t i = 0; i < sn; i++) rs[i] = st[i];
    /* column by column from the committed entry: the state after column i is snapshot i + 1 (spec),
     * the last one goes back to the committed entry (batch) */
    for (int r = 0; r < n_runs; r++)
        for (int vh = 0; vh < nv; vh++) {
            size_t head = (size_t)vh * hs;
            memcpy(S, rs + dn_entry(&rg, r, 0) + head, hs * sizeof *S);
            for (uint32_t i = 0; i < runs[r].n_cols; i++) {
                struct run_meta one = {runs[r].slot, runs[r].first_col + i, 1, runs[r].pos0 + i};
                dn_ref_head(&dn, qkv, b, a, dt.val[vh], A.val[vh], &one, vh, S, ro);
                if (cs->spec) memcpy(rs + dn_entry(&rg, r, (int)i + 1) + head, S, hs * sizeof *S);
            }
            if (!cs->spec) memcpy(rs + dn_entry(&rg, r, 0) + head, S, hs * sizeof *S);
        }
    double eo = rel_err(o, ro, (size_t)C * vd), es = rel_err(st2, rs, sn);
    T_CHECK(eo < 1e-5 && es < 1e-5, "dn.recurrent %s %s %s n_snap %d%s: rel err o %g state %g", gguf ? "gguf" : "hf",
            dtype_name(t), cs->pre ? "prefill" : "decode", cs->n_snap, cs->spec ? " spec" : "", eo, es);
    free(qkv);
    free(b);
    free(a);
    free(st);
    free(o);
    free(st2);
    free(ro);
    free(rs);
    free(S);
    free_weight(&dt);
    free_weight(&A);
}

/* A spec plan needs room for snapshots: both kernels refuse a ring of one entry. */
static void test_dn_spec_refusals(void)
{
    const struct k_dn_geom *dn = &dn_test_geom;
    int Ch = 2 * dn->nk * dn->dk + dn->nv * dn->dv;
    struct host_weight w = make_weight(DT_F32, Ch, dn->conv, 0.5f, 0), v = make_weight(DT_F32, 1, dn->nv, 0.5f, 0);
    struct k_state one = {w.buf.addr, 0, 1};
    struct plan p = {.kind = PLAN_SPEC};
    T_CHECK(k_dn_conv(&g, &p, dn, &w.w, 0, &one, 0, 0, 1, 1, 1, &e) == ST_USAGE && strstr(e.msg, "snapshots"),
            "spec dn.conv with one entry: %s", e.msg);
    T_CHECK(k_dn_recurrent(&g, &p, dn, &v.w, &v.w, 0, 0, 0, &one, 0, 0, 1, 1, &e) == ST_USAGE &&
                strstr(e.msg, "snapshots"),
            "spec dn.recurrent with one entry: %s", e.msg);
    T_CHECK(p.n == 0, "refused dispatches were added");
    plan_free(&p);
    free_weight(&w);
    free_weight(&v);
}

static void test_dn_norm_gate(void)
{
    const struct k_dn_geom *dn = &dn_test_geom;
    const int C = 5, n = C * dn->nv * dn->dv;
    struct host_weight w = make_weight(DT_F32, 1, dn->dv, 0.2f, 1.0f);
    float *o = rand_floats((size_t)n, 2.0f), *z = rand_floats((size_t)n, 1.5f);
    struct gpu_buf ob = dev_floats(o, (size_t)n), zb = dev_floats(z, (size_t)n);
    struct plan p = {0};
    int rc = k_dn_norm_gate(&g, &p, dn, &w.w, ob.addr, zb.addr, C, 1e-6f, 1, &e);
    T_CHECK(rc == ST_OK && p.n == 1 && !strcmp(p.d[0].kind, "dn.norm_gate"), "k_dn_norm_gate: %s", e.msg);
    run_plan(&p);
    float *y = malloc((size_t)n * 4);
    double *ref = malloc((size_t)n * sizeof *ref);
    down(&ob, y, (uint64_t)n * 4);
    for (int r = 0; r < C * dn->nv; r++) {
        double ss = 0;
        for (int i = 0; i < dn->dv; i++) ss += (double)o[r * dn->dv + i] * o[r * dn->dv + i];
        double inv = 1 / sqrt(ss / dn->dv + 1e-6);
        for (int i = 0; i < dn->dv; i++) {
            double zv = z[r * dn->dv + i];
            ref[r * dn->dv + i] = w.val[i] * o[r * dn->dv + i] * inv * zv / (1 + exp(-zv));
        }
    }
    double er = rel_err(y, ref, (size_t)n);
    T_CHECK(er < 1e-5, "dn.norm_gate: rel err %g", er);
    free(o);
    free(z);
    free(y);
    free(ref);
    free_weight(&w);
}

static void test_deltanet(void)
{
    test_dn_conv();
    for (size_t ci = 0; ci < ARRAY_LEN(dn_cases); ci++) {
        test_dn_recurrent_case(false, &dn_cases[ci], DT_F32);
        test_dn_recurrent_case(true, &dn_cases[ci], DT_BF16);
    }
    test_dn_spec_refusals();
    test_dn_norm_gate();
}

/* The device closed, then the tally (main's exit status). */
static int close_and_finish(void)
{
    int rc = gpu_close(&g, &e);
    T_CHECK(rc == ST_OK, "gpu_close: %s", e.msg);
    return t_finish();
}

/* test_kernels [FIXTURES [FILTER [--tune key=value[,...]]...]]: FILTER names cases (t_case: names,
 * patterns, tags; "*" every case); "gemm" (a tag) runs only the matrix products, "attention" only
 * the attention cases; each --tune sets kernel-choice overrides (tune.h), the test-only keys too, so
 * ctest runs the variants (CMakeLists.txt: split-k sums and double-buffered tiles, every
 * matrix-vector kernel on every shape, attention by kv head with and without key splits).
 * gemm_min_cols=1 always (test_gemm's widths). */
int main(int argc, char **argv)
{
    t_init(argc, argv);
    struct tune tune = tune_default();
    tune.gemm_min_cols = 1;
    char tuned[512];
    enum precision prec = PRECISION_EXACT;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--precision") && i + 1 < argc && precision_parse(argv[i + 1], &prec)) {
            i++;
            continue;
        }
        if (strcmp(argv[i], "--tune") || i + 1 == argc || tune_parse_all(&tune, argv[++i], &e)) {
            fprintf(stderr, "test_kernels: %s: %s\n", argv[i],
                    e.msg[0] ? e.msg : "expected --tune key=value or --precision exact|serving");
            return 2;
        }
    }
    tune_format(&tune, tuned, sizeof tuned);
    t_rng_seed(&rng, 20240611);
    int rc = gpu_open(&g, -1, &e);
    T_CHECK(rc == ST_OK, "gpu_open: %s", e.msg);
    if (rc) return t_finish();
    g.tune = tune;
    g.precision = prec;
    printf("tune: %s, precision %s\n", tuned, precision_name(prec));
    printf("device: %s, subgroup %u, shared %u, float atomic add %s\n", g.props.deviceName, g.subgroup_size,
           g.shared_mem, g.has_float_atomic_add ? "yes" : "no");
    double t0 = now_us();
    T_CASE("embed", "", test_embed());
    T_CASE("rmsnorm", "", test_rmsnorm());
    T_CASE("rmsnorm_add", "", test_rmsnorm_add());
    T_CASE("matmul", "gemm", test_matmul());
    T_CASE("gate_up_parts", "", test_gate_up_parts());
    T_CASE("matmul_multi", "gemm", test_matmul_multi());
    T_CASE("qmv", "gemm", test_qmv());
    T_CASE("xmv", "gemm", test_xmv());
    T_CASE("plan_barriers", "", test_plan_barriers());
    T_CASE("plan_hoist", "", test_plan_hoist());
    printf("+ matmul: %.1f s\n", (now_us() - t0) / 1e6);
    T_CASE("gemm", "gemm", test_gemm_paths());
    printf("+ gemm: %.1f s\n", (now_us() - t0) / 1e6);
    T_CASE("shortconv", "", test_shortconv());
    T_CASE("conv_step", "", test_conv_step());
    T_CASE("dn_conv_step", "", test_dn_conv_step());
    T_CASE("attention", "", test_attention());
    T_CASE("deltanet", "", test_deltanet());
    printf("+ shortconv, attention: %.1f s\n", (now_us() - t0) / 1e6);
    T_CASE("winit", "", test_winit());
    T_CASE("big_tensor", "", test_big_tensor());
    printf("+ winit, 200 MiB tensor: %.1f s; worst relative error %.3g\n", (now_us() - t0) / 1e6, worst_rel);
    return close_and_finish();
}
