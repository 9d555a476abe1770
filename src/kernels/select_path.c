/* select_path.c - which matrix path the wide plan's gemm runs on (select.h sel_gemm_path): the
 * device's cooperative-matrix extensions and the tune's gemm_path, GPU-free like the rest of the
 * choice. */
#include "select.h"

#include <stddef.h>

/* The device's first of NV v1, KHR, the FMA twin. Both cooperative paths run the same source and
 * tiles, but on the H100 KHR's words ran the exact prefill 21 % slower (bench/42), so NV v1 comes
 * first where a driver lists both; KHR serves the devices without NV v1 (AMD RDNA3, Intel Arc). */
static enum gemm_path gemm_path_auto(const struct sel *s)
{
    return s->coopmat_nv ? GEMM_PATH_NV : s->coopmat_khr ? GEMM_PATH_KHR : GEMM_PATH_FMA;
}

/* The path the tune names, else in serving precision VK_NV_cooperative_matrix2 (gemm_cm2) where
 * the device has it and the step is at least K_CM2_AUTO_COLS wide (cols <= 0: any width), else
 * gemm_path_auto's. bench/39 third run: aligned cm2 with f16 x 120-250 TFLOP/s vs v1 78-94 (H200,
 * F16 weights, 512 columns; the products gemm_cm2 refuses fall back to gemm_path_auto's,
 * sel_gemm_cm2_refusal). Exact precision stays on NV v1: gemm_cm2's exact modes (x split hi + lo,
 * two products) ran 59-73 aligned ("exact_al16"), below v1's 78-94. The width: bench/45 (H100,
 * LFM2-1.2B F16 serving, wall 1x +head, split k) had gemm_cm2 ahead of NV v1 at 512 and 256
 * columns (7.42 against 11.3 ms, 5.79 against 7.89) and 2-2.5x behind at 64 and 16 (5.15 against
 * 2.66, 4.59 against 1.80): below one 128-column tile most of each tile is padding, and its SwiGLU
 * pairs (never split) took ~130 us at any width where NV v1's took 39-49; --tune gemm_path=cm2
 * still forces narrow steps onto it. */
static enum gemm_path gemm_path_pick(const struct sel *s, int cols)
{
    if (s->tune->gemm_path != GEMM_PATH_AUTO) return (enum gemm_path)s->tune->gemm_path;
    if (s->coopmat2 && s->precision == PRECISION_SERVING && (cols <= 0 || cols >= K_CM2_AUTO_COLS))
        return GEMM_PATH_CM2;
    return gemm_path_auto(s);
}

/* What a forced path needs of the device, for the refusal. */
static const char *gemm_path_needs(enum gemm_path p)
{
    return p == GEMM_PATH_CM2 ? "workgroup-scope matrices of flexible dimensions, tensor addressing and block "
                                "loads on VK_KHR_cooperative_matrix, Vulkan 1.3"
                              : "a 16x16x16 f16*f16+f32 subgroup shape, subgroups of 32, f16 arithmetic and "
                                "16-bit storage";
}

int sel_gemm_path(const struct sel *s, int cols, enum gemm_path *path, struct err *e)
{
    enum gemm_path p = gemm_path_pick(s, cols);
    bool absent = (p == GEMM_PATH_KHR && !s->coopmat_khr) || (p == GEMM_PATH_NV && !s->coopmat_nv) ||
                  (p == GEMM_PATH_CM2 && !s->coopmat2);
    *path = p;
    if (absent)
        return err_set(e, ST_USAGE, "--tune gemm_path=%s: %s%s%s has no usable %s (%s; --list-devices shows what it has)",
                       gemm_path_name(p), s->device ? "device '" : "this device", s->device ? s->device : "",
                       s->device ? "'" : "", sel_gemm_path_label(p), gemm_path_needs(p));
    return ST_OK;
}

enum gemm_path sel_gemm_v1_path(const struct sel *s)
{
    enum gemm_path p = gemm_path_pick(s, 0);
    return p == GEMM_PATH_CM2 ? gemm_path_auto(s) : p;
}

bool sel_gemm_coopmat(const struct sel *s)
{
    return sel_gemm_v1_path(s) != GEMM_PATH_FMA;
}

const char *sel_gemm_path_kernel(enum gemm_path p)
{
    return p == GEMM_PATH_KHR ? "gemm_khr" : p == GEMM_PATH_NV ? "gemm" : p == GEMM_PATH_CM2 ? "gemm_cm2" : "gemm_fma";
}

const char *sel_gemm_path_label(enum gemm_path p)
{
    return p == GEMM_PATH_KHR   ? "VK_KHR_cooperative_matrix"
           : p == GEMM_PATH_NV  ? "VK_NV_cooperative_matrix"
           : p == GEMM_PATH_CM2 ? "VK_NV_cooperative_matrix2"
                                : "the FMA twin, no cooperative matrices";
}

/* On cm2 (forced, or chosen in serving precision), the products gemm_cm2.comp has no variant or no
 * device feature for, in the order checked (gemm_cm2.c cm2_check refuses the same); each takes the
 * automatic path's gemm instead (NV v1 on the H100), named in its kind. Its x: in exact precision
 * the PREP mode, reading gemm_xprep.comp's hi/lo pairs: the prep the NV v1 gemm already takes
 * (norm applied once for up to 4 products, the same scratch), so a fallback beside a gemm_cm2
 * product shares it, and PREP has the SwiGLU variants (XSPLIT has none); its numbers are XSPLIT's
 * (the same 11-bit split). bench/39's third run measured exact aligned ("exact_al16", 59-73
 * TFLOP/s) below NV v1 (78-94), so exact is not chosen automatically; PREP is unaligned (CM2_ALIGN
 * does not cover its 3-D layout). In serving precision the GIVEN_F16 mode on gemm_xprep_f16's
 * x (norm applied, rounded to f16, plain f16 [cols][k]): bench/39's third run, the aligned kernel
 * on an f16 x 118-248 TFLOP/s, against 76-132 decoding an f32 x in its load ("al16"); one prep
 * dispatch even without a norm. The aligned kernels need k a multiple of 8 (rows on 16 bytes). */
const char *sel_gemm_cm2_refusal(const struct sel *s, const struct sel_weight *w, bool swiglu, bool accumulate,
                                 int cols)
{
    if (gemm_path_pick(s, cols) != GEMM_PATH_CM2) return "not on cm2";
    bool quant = w->dtype == DT_Q8_0 || w->dtype == DT_Q4_0;
    bool plain = w->dtype == DT_F16 || w->dtype == DT_BF16;
    bool exact = s->precision != PRECISION_SERVING;
    const struct {
        bool when;
        const char *why;
    } gaps[] = {
        {!plain && !quant, "weights other than F16, BF16, Q8_0, Q4_0"},
        {quant && w->k % 32, "Q types with k not a multiple of 32"},
        {quant && !s->int8, "Q types without 8-bit integers"},
        /* bench/43 (H100): the Q4_0 512-token serving prefill ran 23.4 ms with its products
         * decoded in gemm_cm2's loads against NV v1's 13.2 (f16 copies); F16 8.2 against 11.2 */
        {quant && s->tune->gemm_path == GEMM_PATH_AUTO, "Q types in the automatic choice (slower on cm2)"},
        {exact && w->k % 4, "a prepared x with k not a multiple of 4"},
        {!exact && w->k % 8, "an aligned f16 x with k not a multiple of 8"},
        {w->rows < 1 || w->k < 1 || w->rows > UINT32_MAX || w->k > UINT32_MAX, "a shape out of range"},
        {swiglu && !s->coopmat2_swiglu, "SwiGLU pairs without per-element operations"},
        {swiglu && accumulate, "SwiGLU pairs that accumulate"},
        {swiglu && exact && w->dtype == DT_Q8_0, "exact Q8_0 SwiGLU pairs (split Q8_0 weights take no pair)"},
    };
    for (size_t i = 0; i < sizeof gaps / sizeof gaps[0]; i++)
        if (gaps[i].when) return gaps[i].why;
    return NULL;
}

/* Default tiles, from bench/39's third run (H200, 512 columns, x f16, TFLOP/s on 2048 x 2048 /
 * 6144 x 2048 / 8192 x 2048 / 2048 x 8192): the aligned kernel with its clamped edge loop
 * ("xf16_al16", the shipped variants' shape) ran 118 / 174 / 219 / 119 at 128 x 128 with k steps of
 * 64, its best tile on every shape, and 21 / 54 / 67 / 18 at 128 x 256 (registers spilled: the
 * driver's local memory above zero). SwiGLU pairs take k steps of 32: a second weight tile and
 * accumulator, where one product at 128 x 128 x 64 already used 253-255 registers (at 128 x 128 x
 * 32: 166). 128 invocations where the device's workgroup-scope matrices allow no more. The
 * unaligned PREP mode (exact, forced only) keeps 64 x 64 x 32: its best tile in bench/39's second
 * run (21-26 TFLOP/s), where 64-deep tiles ran it at a third of that (bench/43).
 * Split k: one such workgroup fills a multiprocessor (255 registers x 256 invocations), and the
 * H100's 132 (H200: 132) ran the 2048-row products, 64 tiles at 512 columns, at 110-129 TFLOP/s
 * against 164-180 for the 192-256-tile ones, and the 512-row k/v products (16 tiles, then 64 x 64
 * tiles) at 23 (bench/43's prefill). So single products of fewer than 128 tiles split k into
 * floor(128 / tiles) ranges (at most one 128-workgroup wave; ranges of at least bk·8, the unrolled
 * interior loop), added by gemm_reduce.comp; 64 x 64 x 32 tiles only where even the splits leave
 * fewer than 32 workgroups. */
#define CM2_WAVE 128u

static uint32_t cm2_splits(const struct sel_cm2_tile *t, uint64_t rows, uint64_t k, uint64_t cols, bool pair)
{
    uint64_t tiles = sel_div_up(rows, t->bm) * sel_div_up(cols, t->bn);
    if (pair || tiles >= CM2_WAVE) return 1;
    uint64_t n = CM2_WAVE / tiles, most = k / ((uint64_t)t->bk * 8);
    return (uint32_t)(n < most ? n : most > 1 ? most : 1);
}

struct sel_cm2_tile sel_gemm_cm2_tile(const struct sel *s, int64_t rows, int64_t k, int cols, bool pair, bool prep)
{
    uint64_t r = rows > 0 ? (uint64_t)rows : 1, c = cols > 0 ? (uint64_t)cols : 1, kk = k > 0 ? (uint64_t)k : 1;
    struct sel_cm2_tile t = {128, 128, pair ? 32 : 64, 256, 1};
    if (prep) t = (struct sel_cm2_tile){64, 64, 32, 128, 1};
    t.splits = cm2_splits(&t, r, kk, c, pair);
    if (!prep && sel_div_up(r, t.bm) * sel_div_up(c, t.bn) * t.splits < 32) {
        t = (struct sel_cm2_tile){64, 64, 32, 128, 1};
        t.splits = cm2_splits(&t, r, kk, c, pair);
    }
    if (s->coopmat2_max_nt && t.nt > s->coopmat2_max_nt) t.nt = 128;
    return t;
}

uint32_t sel_gemm_cm2_kper(const struct sel_cm2_tile *t, int64_t k)
{
    uint64_t kk = k > 0 ? (uint64_t)k : 1, n = t->splits > 1 ? t->splits : 1, bk = t->bk ? t->bk : 1;
    uint64_t unit = kk >= n * bk * 8 ? bk * 8 : bk, kper = sel_div_up(sel_div_up(kk, n), unit) * unit;
    return (uint32_t)(kper < kk ? kper : kk);
}

uint64_t sel_gemm_cm2_part_bytes(const struct sel_cm2_tile *t, int64_t rows, int64_t k, int cols)
{
    uint64_t kk = k > 0 ? (uint64_t)k : 1, ranges = sel_div_up(kk, sel_gemm_cm2_kper(t, k));
    if (ranges < 2 || rows < 1 || cols < 1) return 0;
    return ((ranges - 1) * (uint64_t)rows * (uint64_t)cols * 4 + 255) / 256 * 256;
}

bool sel_gemm_on_cm2(const struct sel *s, const struct sel_weight *w, bool swiglu, int cols, bool accumulate,
                     bool plain_x, struct sel_gemm *c)
{
    bool serving = s->precision == PRECISION_SERVING;
    c->fallback = sel_gemm_cm2_refusal(s, w, swiglu, accumulate, cols);
    if (c->fallback) return false;
    c->kernel = sel_gemm_path_kernel(GEMM_PATH_CM2);
    c->cm2 = true;
    c->coopmat = true;
    c->serving = serving;
    c->cm2_x = serving ? SEL_CM2_X_GIVEN_F16 : SEL_CM2_X_PREP;
    c->no_prep = false; /* an f16 x or the pairs: a prep even with no norm */
    c->prep = serving ? "gemm_xprep_f16" : "gemm_xprep";
    c->cm2_tile = sel_gemm_cm2_tile(s, w->rows, w->k, cols, swiglu, c->cm2_x == SEL_CM2_X_PREP);
    (void)plain_x;
    return true;
}
