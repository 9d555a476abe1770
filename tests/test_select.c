/* test_select.c - the kernel choice rules (kernels/select.c) as tables, no GPU: which matrix-vector
 * kernel a product takes, the gemm's tiles, splits and variant, the attention rule and its key
 * splits, the conv fusion, the f16 copies of Q4_0 weights, the scratch each choice takes
 * (select_scratch.c); the rows bench/ notes pinned (shapes of LFM2-1.2B: H 2048, FFN 8192,
 * vocabulary 65536) on an H200-like device and on lavapipe; and --tune's parsing (tune.c). */
#include <stdio.h>
#include <string.h>

#include "kernels.h"
#include "select.h"
#include "testutil.h"
#include "tune.h"

static const struct tune dflt_tune = {
    .attn_kv_keys = -1, .gemm_pf = -1, .gemm_xraw_cols = -1, .gemm_wdeq_cols = -1};

/* An H200 (subgroup 32, 48 KiB shared, float atomic add) with NV cooperative matrices only, the
 * path the gemm rows below were measured on (gemm.comp on KHR ones takes the same tiles), and
 * lavapipe (CI: no cooperative matrices). */
static struct sel h200(enum plan_kind k, const struct tune *t)
{
    return (struct sel){.tune = t, .plan = k, .subgroup_size = 32, .shared_mem = 49152, .coopmat_nv = true,
                        .float_atomic_add = true, .device = "H200"};
}
static struct sel lavapipe(enum plan_kind k, const struct tune *t)
{
    return (struct sel){.tune = t, .plan = k, .subgroup_size = 8, .shared_mem = 32768,
                        .float_atomic_add = true, .device = "llvmpipe"};
}

static const char *mv_name(enum sel_mv m)
{
    static const char *const n[] = {"matmul/gemm", "matvec", "qmv", "xmv"};
    return n[m];
}

static void test_mv_pick(void)
{
    struct tune mv8 = dflt_tune, q8 = dflt_tune, x1 = dflt_tune;
    mv8.matvec_cols = 8;
    q8.qmv_cols = 8;
    x1.xmv_cols = 1;
    const struct tune *const tunes[] = {&dflt_tune, &mv8, &q8, &x1};
    static const struct {
        int tune; /* index into tunes */
        enum plan_kind plan;
        enum dtype t;
        int64_t rows, k;
        uint64_t all_rows; /* 0: rows */
        int n, cols;
        bool swiglu, split_ok;
        enum sel_mv want;
        const char *why;
    } rows[] = {
        {0, PLAN_BATCH, DT_Q4_0, 8192, 2048, 0, 1, 1, true, false, SEL_MV_XMV,
         "Q4_0 SwiGLU at one column (bench/22)"},
        {0, PLAN_BATCH, DT_Q4_0, 2048, 2048, 0, 1, 8, false, false, SEL_MV_XMV,
         "Q4_0 up to 8 columns (bench/23)"},
        {0, PLAN_BATCH, DT_Q4_0, 2048, 2048, 0, 1, 9, false, false, SEL_MV_NONE,
         "Q4_0 at 9 columns: matmul"},
        {0, PLAN_BATCH, DT_Q4_0, 2048, 8192, 0, 1, 1, false, true, SEL_MV_XMV,
         "ffn_down split along k (bench/24)"},
        {0, PLAN_BATCH, DT_Q4_0, 2048, 8192, 0, 1, 1, false, false, SEL_MV_QMV,
         "ffn_down unsplit: qmv (bench/16)"},
        {0, PLAN_BATCH, DT_Q8_0, 2048, 2048, 0, 1, 2, false, false, SEL_MV_XMV,
         "Q8_0 up to 2 columns (bench/23)"},
        {0, PLAN_BATCH, DT_Q8_0, 2048, 2048, 0, 1, 3, false, false, SEL_MV_NONE,
         "Q8_0 at 3 columns: matmul"},
        {0, PLAN_BATCH, DT_Q8_0, 65536, 2048, 0, 1, 1, false, false, SEL_MV_MATVEC,
         "Q8_0 LM head (bench/22, bench/12)"},
        {0, PLAN_BATCH, DT_Q8_0, 6144, 2048, 0, 1, 1, true, false, SEL_MV_XMV,
         "Q8_0 SwiGLU at one column"},
        {0, PLAN_BATCH, DT_BF16, 65536, 2048, 0, 1, 1, false, false, SEL_MV_XMV,
         "BF16 LM head (bench/24 run 7)"},
        {0, PLAN_BATCH, DT_BF16, 65536, 2048, 0, 1, 2, false, false, SEL_MV_NONE,
         "BF16 LM head, 2 columns: matmul"},
        {0, PLAN_BATCH, DT_BF16, 2048, 2048, 3072, 3, 1, false, false, SEL_MV_XMV,
         "BF16 q/k/v stacked (bench/24)"},
        {0, PLAN_BATCH, DT_BF16, 2048, 2048, 3072, 3, 8, false, false, SEL_MV_MATVEC,
         "q/k/v up to 8 (bench/12)"},
        {0, PLAN_BATCH, DT_BF16, 2048, 2048, 3072, 3, 9, false, false, SEL_MV_NONE,
         "q/k/v at 9 columns"},
        {0, PLAN_BATCH, DT_BF16, 2048, 8192, 0, 1, 1, false, true, SEL_MV_NONE,
         "BF16 ffn_down: matmul (bench/12)"},
        {0, PLAN_BATCH, DT_BF16, 2048, 2048, 0, 1, 1, false, false, SEL_MV_NONE,
         "BF16 square: matmul"},
        {0, PLAN_WIDE, DT_BF16, 2048, 2048, 0, 1, 6, false, false, SEL_MV_NONE,
         "wide BF16 from 6 columns: gemm"},
        {0, PLAN_WIDE, DT_Q4_0, 2048, 2048, 0, 1, 4, false, false, SEL_MV_XMV,
         "wide Q4_0 under 5 columns: xmv"},
        {0, PLAN_WIDE, DT_Q4_0, 2048, 2048, 0, 1, 5, false, false, SEL_MV_NONE,
         "wide Q4_0 from 5: gemm (bench/23)"},
        {1, PLAN_BATCH, DT_Q4_0, 2048, 2048, 0, 1, 1, false, false, SEL_MV_MATVEC,
         "matvec_cols=8: matvec"},
        {1, PLAN_BATCH, DT_F32, 64, 64, 0, 1, 9, false, false, SEL_MV_NONE,
         "matvec_cols=8 at 9 columns"},
        {2, PLAN_BATCH, DT_Q8_0, 2048, 2048, 0, 1, 3, false, false, SEL_MV_QMV,
         "qmv_cols=8: Q8_0 at 3 columns"},
        {2, PLAN_BATCH, DT_BF16, 2048, 2048, 0, 1, 1, false, false, SEL_MV_NONE,
         "qmv_cols=8: Q types only"},
        {3, PLAN_BATCH, DT_F32, 64, 64, 0, 1, 1, false, false, SEL_MV_XMV,
         "xmv_cols=1: every type"},
        {3, PLAN_BATCH, DT_F32, 64, 64, 0, 1, 2, false, false, SEL_MV_NONE,
         "xmv_cols=1 at 2 columns"},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        struct sel s = h200(rows[i].plan, tunes[rows[i].tune]);
        struct sel_weight w = {rows[i].t, rows[i].rows, rows[i].k};
        uint64_t all = rows[i].all_rows ? rows[i].all_rows : (uint64_t)rows[i].rows;
        enum sel_mv got =
            sel_mv_pick(&s, rows[i].cols, &w, rows[i].swiglu, all, rows[i].n, rows[i].split_ok);
        T_CHECK(got == rows[i].want, "mv row %zu (%s): %s, expected %s", i, rows[i].why,
                mv_name(got), mv_name(rows[i].want));
    }
}

static void test_xmv_ksplits(void)
{
    struct tune k3 = dflt_tune;
    k3.xmv_ksplit = 3;
    struct sel s = h200(PLAN_BATCH, &dflt_tune), t3 = lavapipe(PLAN_BATCH, &k3), nofadd = s;
    nofadd.float_atomic_add = false;
    struct sel_weight q4 = {DT_Q4_0, 2048, 8192}, q8 = {DT_Q8_0, 2048, 8192},
                      bf = {DT_BF16, 300, 1056};
    T_CHECK(sel_xmv_ksplits(&s, &q4, false, true) == 4, "Q4_0 k 8192: 4 slices of 2048 (bench/24)");
    T_CHECK(sel_xmv_ksplits(&s, &q4, false, false) == 1,
            "no split where a norm or y = result forbids it");
    T_CHECK(sel_xmv_ksplits(&s, &q4, true, true) == 1, "no split of a SwiGLU pair");
    T_CHECK(sel_xmv_ksplits(&s, &q8, false, true) == 1, "Q8_0 unsplit (slower, bench/24)");
    T_CHECK(sel_xmv_ksplits(&nofadd, &q4, false, true) == 1, "no split without float atomic add");
    T_CHECK(sel_xmv_ksplits(&t3, &bf, false, true) == 3,
            "xmv_ksplit=3: every type where slices are whole");
    T_CHECK(sel_xmv_pass_cols(8) == 4 && sel_xmv_pass_cols(5) == 3 && sel_xmv_pass_cols(3) == 3,
            "xmv passes");
}

static void test_gemm_rules(void)
{
    struct tune split3 = dflt_tune, min1 = dflt_tune;
    split3.gemm_splitk = 3;
    min1.gemm_min_cols = 1;
    T_CHECK(sel_gemm_min_cols(&dflt_tune, DT_Q4_0) == 5 &&
                sel_gemm_min_cols(&dflt_tune, DT_BF16) == 6 &&
                sel_gemm_min_cols(&dflt_tune, DT_Q8_0) == 6 &&
                sel_gemm_min_cols(&dflt_tune, DT_F32) == 16 &&
                sel_gemm_min_cols(&min1, DT_F32) == 1,
            "gemm_min_cols: 5 Q4_0, 6 BF16/Q8_0, 16 F32 (bench/23 run 7); tune gemm_min_cols");
    const struct {
        bool h200;
        const struct tune *tune;
        enum dtype t;
        int64_t rows, k;
        int cols;
        bool swiglu, accumulate, plain_x;
        const char *kernel;
        bool fadd, xraw;
        uint32_t spec[SEL_GEMM_SPECS], groups[3];
        const char *why;
    } rows[] = {
        {true,
         &dflt_tune,
         DT_BF16,
         2048,
         2048,
         512,
         false,
         true,
         true,
         "gemm",
         true,
         true,
         {32, 128, 64, 64, 128, 1, 2, 1, 1, 2},
         {8, 16, 2},
         "past 64 columns: 128 x 64, 2 splits (bench/11, 19)"},
        {true,
         &dflt_tune,
         DT_BF16,
         2048,
         2048,
         48,
         false,
         true,
         true,
         "gemm",
         true,
         true,
         {32, 128, 64, 64, 128, 1, 2, 1, 1, 0},
         {1, 16, 8},
         "33-64 columns, small grid: 8 splits (bench/34)"},
        {true,
         &dflt_tune,
         DT_Q4_0,
         8192,
         2048,
         16,
         true,
         false,
         false,
         "gemm",
         false,
         false,
         {32, 64, 16, 32, 128, 1, 4, 2, 0, 0},
         {1, 128, 1},
         "Q4_0 SwiGLU at 16 columns: 64 x 16, PF 2 (bench/19)"},
        {true,
         &dflt_tune,
         DT_BF16,
         8192,
         2048,
         128,
         true,
         false,
         false,
         "gemm",
         false,
         false,
         {32, 64, 128, 32, 256, 1, 2, 1, 0, 2},
         {1, 128, 1},
         "BF16 SwiGLU from 128: 64 x 128, 8 subgroups (bench/25)"},
        {false,
         &dflt_tune,
         DT_BF16,
         300,
         1056,
         16,
         false,
         true,
         true,
         "gemm_fma",
         false,
         false,
         {32, 64, 64, 32, 256, 1, 2, 1, 0, 0},
         {1, 5, 1},
         "the FMA twin: 64 x 64, 256 threads"},
        {false,
         &split3,
         DT_BF16,
         300,
         1056,
         16,
         false,
         false,
         true,
         "gemm_fma",
         true,
         false,
         {32, 64, 64, 32, 256, 1, 2, 1, 0, 0},
         {1, 5, 3},
         "gemm_splitk=3 on the twin: BF16 by float atomic add"},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        struct sel s =
            rows[i].h200 ? h200(PLAN_WIDE, rows[i].tune) : lavapipe(PLAN_WIDE, rows[i].tune);
        struct sel_weight w = {rows[i].t, rows[i].rows, rows[i].k};
        struct sel_gemm c;
        struct err e = {0};
        int rc = sel_gemm(&s, &w, rows[i].swiglu, rows[i].cols, rows[i].accumulate, rows[i].plain_x,
                          "t", &c, &e);
        T_CHECK(rc == ST_OK, "gemm row %zu: %s", i, e.msg);
        if (rc) continue;
        bool same = !strcmp(c.kernel, rows[i].kernel) && c.fadd == rows[i].fadd &&
                    c.xraw == rows[i].xraw && !memcmp(c.spec, rows[i].spec, sizeof c.spec) &&
                    !memcmp(c.groups, rows[i].groups, sizeof c.groups);
        T_CHECK(same,
                "gemm row %zu (%s): %s fadd %d xraw %d spec %u %ux%ux%u nt %u nbuf %u sgm %u pf %u "
                "xraw %u frag %u "
                "grid %u %u %u",
                i, rows[i].why, c.kernel, c.fadd, c.xraw, c.spec[0], c.spec[1], c.spec[2],
                c.spec[3], c.spec[4], c.spec[5], c.spec[6], c.spec[7], c.spec[8], c.spec[9],
                c.groups[0], c.groups[1], c.groups[2]);
    }
    /* a tile larger than the device's shared memory: the error names it */
    struct tune big = dflt_tune;
    struct err e = {0};
    struct sel s = lavapipe(PLAN_WIDE, &big);
    struct sel_weight w = {DT_F32, 64, 64};
    struct sel_gemm c;
    big.gemm_tile[0] = 256, big.gemm_tile[1] = 256, big.gemm_tile[2] = 128, big.gemm_tile[3] = 2,
    big.gemm_tile[4] = 2;
    T_CHECK(sel_gemm(&s, &w, false, 16, true, true, "t", &c, &e) == ST_OK && c.spec[1] == 64,
            "a forced tile that does not fit is ignored: BM %u", c.spec[1]);
    /* the f16 copies of Q4_0 weights from 256 columns on cooperative matrices (bench/33 run 4) */
    struct tune w1 = dflt_tune;
    w1.gemm_wdeq_cols = 1;
    struct sel hw = h200(PLAN_WIDE, &dflt_tune), lw = lavapipe(PLAN_WIDE, &dflt_tune),
               lw1 = lavapipe(PLAN_WIDE, &w1);
    struct sel_weight q4 = {DT_Q4_0, 2048, 2048}, huge = {DT_Q4_0, 65536, 4096},
                      bf = {DT_BF16, 2048, 2048};
    T_CHECK(sel_gemm_wdeq_serves(&hw, 256, &q4) && !sel_gemm_wdeq_serves(&hw, 255, &q4) &&
                !sel_gemm_wdeq_serves(&hw, 512, &huge) && !sel_gemm_wdeq_serves(&hw, 512, &bf) &&
                !sel_gemm_wdeq_serves(&lw, 512, &q4) && sel_gemm_wdeq_serves(&lw1, 1, &q4),
            "gemm_wdeq: from 256 columns, not past 256 MiB, Q4_0 only, the twin only under "
            "gemm_wdeq_cols");
}

/* sel_attn_by_kv_head's line at the rows bench/35 runs 6-7 measured (H100; keys as the slot table
 * holds them, --pos P: blocks of 16 past P + 1 keys): each choice is the kernel that measured
 * faster there, or attention.comp where the two tied (within 4 %). */
static void test_attention_rules(void)
{
    static const struct {
        int hd;
        int64_t keys;
        int cols;
        bool prefill, kv;
    } rows[] = {
        {64, 80, 1, false, false},
        {64, 144, 1, false, false},
        {64, 272, 1, false, true},
        {64, 400, 1, false, true},
        {64, 528, 1, false, true},
        {64, 4112, 1, false, true},
        {64, 80, 16, false, false},
        {64, 272, 16, false, false},
        {64, 528, 16, false, true},
        {64, 80, 32, false, false},
        {64, 80, 64, false, true},
        {64, 144, 64, false, true},
        {64, 80, 128, false, true},
        {64, 1040, 128, false, true},
        {256, 80, 1, false, false},
        {256, 272, 1, false, false},
        {256, 528, 1, false, true},
        {256, 1040, 16, false, true},
        {128, 80, 1, false, false},
        {128, 144, 1, false, false},
        {128, 272, 1, false, true},
        {128, 1040, 16, false, true},
        /* a batch-plan prefill: by kv head only past the keys and up to 64 columns (unmeasured
           wider) */
        {64, 80, 64, true, false},
        {64, 528, 64, true, true},
        {64, 528, 65, true, false},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++)
        T_CHECK(sel_attn_by_kv_head(&dflt_tune, rows[i].hd, rows[i].keys, rows[i].cols,
                                    rows[i].prefill) == rows[i].kv,
                "attention rule: head dim %d, %lld keys, %d columns%s: expected by %s head",
                rows[i].hd, (long long)rows[i].keys, rows[i].cols,
                rows[i].prefill ? ", prefill" : "", rows[i].kv ? "kv" : "q");
    struct tune kv0 = dflt_tune, one = dflt_tune;
    kv0.attn_kv_keys = 0;
    one.attn_split = 1;
    T_CHECK(sel_attn_by_kv_head(&kv0, 64, 16, 1, false) &&
                sel_attn_by_kv_head(&kv0, 64, 16, 128, true),
            "attn_kv_keys=0: by kv head at any width");
    /* key splits (bench/35): none at 512 workgroups or two chunks of keys, else up to ~512 */
    T_CHECK(sel_attn_splits(&dflt_tune, 4096, 8, 128) == 32 &&
                sel_attn_splits(&dflt_tune, 256, 8, 128) == 1 &&
                sel_attn_splits(&dflt_tune, 4096, 512, 128) == 1 &&
                sel_attn_splits(&dflt_tune, 1024, 64, 128) == 8 &&
                sel_attn_splits(&one, 4096, 8, 128) == 1,
            "attention key splits");
    /* the wide prefill's tile: 32 columns where they fit, no wider than the step */
    struct sel s = h200(PLAN_WIDE, &dflt_tune);
    uint32_t bq = 0, nt = 0, kv2 = 0;
    uint64_t need = 0;
    T_CHECK(sel_attn_prefill_tile(&s, 64, 512, &bq, &nt, &kv2, &need) && bq == 32 && nt == 128,
            "prefill tile hd 64: %u columns, %u threads", bq, nt);
    T_CHECK(sel_attn_prefill_tile(&s, 64, 5, &bq, &nt, &kv2, &need) && bq == 8,
            "prefill tile at 5 columns: %u", bq);
}

static void test_conv_rules(void)
{
    struct sel b = h200(PLAN_BATCH, &dflt_tune), sp = h200(PLAN_SPEC, &dflt_tune),
               wd = h200(PLAN_WIDE, &dflt_tune);
    struct sel_weight bf = {DT_BF16, 6144, 2048}, q4 = {DT_Q4_0, 6144, 2048},
                      q8 = {DT_Q8_0, 6144, 2048};
    T_CHECK(sel_conv_fuses(&b, &bf, 1, 1) && sel_conv_fuses(&b, &bf, 16, 16) &&
                !sel_conv_fuses(&b, &bf, 17, 17),
            "BF16 in_proj: fused up to a matmul pass (bench/27)");
    T_CHECK(!sel_conv_fuses(&b, &bf, 2, 1) && !sel_conv_fuses(&sp, &bf, 1, 1) &&
                !sel_conv_fuses(&wd, &bf, 6, 6),
            "not fused outside decode, in a spec plan, or where the gemm serves");
    T_CHECK(!sel_conv_fuses(&b, &q4, 8, 8) && sel_conv_fuses(&b, &q4, 9, 9),
            "Q4_0: xmv up to 8 columns, then fused");
    T_CHECK(!sel_conv_fuses(&b, &q8, 2, 2) && sel_conv_fuses(&b, &q8, 3, 3),
            "Q8_0: xmv up to 2 columns, then fused");
}

/* The scratch a product takes against the choice that serves it (select_scratch.c): the rows pin
 * the bytes (LFM2-1.2B shapes; MiB = 2^20), and for every row the need is checked against the
 * choice itself: gemm_w is the f16 copies of exactly the weights sel_gemm_wdeq_serves widens, and
 * gemm_x is 4·cols·k exactly where the chosen gemm needs a prep (a norm, a split output to zero,
 * or cooperative matrices not reading x raw). */
#define MiB (1ull << 20)
static void test_scratch_rules(void)
{
    struct tune wd1 = dflt_tune;
    wd1.gemm_wdeq_cols = 1;
    static const struct sel_weight q4 = {DT_Q4_0, 2048, 2048}, q4kv = {DT_Q4_0, 512, 2048},
                                   q4ffn = {DT_Q4_0, 8192, 2048}, q4down = {DT_Q4_0, 2048, 8192},
                                   q4head = {DT_Q4_0, 65536, 2048},
                                   q4qwhead = {DT_Q4_0, 151936, 2048}, bf = {DT_BF16, 2048, 2048},
                                   bfdown = {DT_BF16, 2048, 8192}, f16 = {DT_F16, 2048, 2048},
                                   odd = {DT_Q4_0, 33, 32};
    const struct {
        bool h200;
        const struct tune *tune;
        enum plan_kind plan;
        struct sel_product m;
        uint64_t gemm_x, gemm_w; /* bytes; ~0: not pinned (checked against the choice only) */
        const char *why;
    } rows[] = {
        {true, &dflt_tune, PLAN_WIDE, {1, {q4}, false, true, false, 256}, 2 * MiB, 8 * MiB,
         "Q4_0 q_proj at 256 columns: its f16 copy (bench/33) and the normed x'"},
        {true, &dflt_tune, PLAN_WIDE, {1, {q4}, false, true, false, 255}, 4ull * 255 * 2048, 0,
         "at 255 columns the Q4_0 tile, no copy"},
        {true, &dflt_tune, PLAN_WIDE, {2, {q4ffn, q4ffn}, true, true, false, 512}, 4 * MiB, 64 * MiB,
         "the SwiGLU pair's two copies in one half"},
        {true, &dflt_tune, PLAN_WIDE, {3, {q4, q4kv, q4kv}, false, true, false, 256}, 2 * MiB, 12 * MiB,
         "q/k/v as one multi call: one prep, their three copies together"},
        {true, &dflt_tune, PLAN_WIDE, {1, {q4down}, false, false, true, 512}, ~0ull, 32 * MiB,
         "ffn_down: copy of [2048, 8192]; a prep only where the choice asks"},
        {true, &dflt_tune, PLAN_WIDE, {1, {q4head}, false, false, false, 512}, ~0ull, 256 * MiB,
         "LFM2's LM head [65536, 2048]: a copy of 256 MiB, just within K_GEMM_WDEQ_MAX_BYTES"},
        {true, &dflt_tune, PLAN_WIDE, {1, {q4qwhead}, false, false, false, 512}, ~0ull, 0,
         "a [151936, 2048] LM head's 594 MiB copy would pass it: no copy, nothing reserved for it"},
        {true, &dflt_tune, PLAN_WIDE, {1, {q4}, false, true, false, 4}, 0, 0,
         "below gemm_min_cols the wide plan runs the batch kernels: none"},
        {true, &dflt_tune, PLAN_BATCH, {2, {q4ffn, q4ffn}, true, true, false, 512}, 0, 0,
         "the batch plan's kernels take none"},
        {true, &dflt_tune, PLAN_WIDE, {1, {bf}, false, true, false, 64}, 4ull * 64 * 2048, 0,
         "BF16 normed: x' only"},
        {true, &dflt_tune, PLAN_WIDE, {1, {bfdown}, false, false, true, 512}, ~0ull, 0,
         "BF16 ffn_down: no copy; x' where the tile does not read x raw"},
        {false, &dflt_tune, PLAN_WIDE, {1, {f16}, false, false, false, 64}, ~0ull, 0,
         "the FMA twin: a prep only to zero split outputs"},
        {false, &dflt_tune, PLAN_WIDE, {1, {f16}, false, true, false, 64}, 4ull * 64 * 2048, 0,
         "the FMA twin with a norm: x'"},
        {false, &dflt_tune, PLAN_WIDE, {1, {q4}, false, true, false, 512}, 4ull * 512 * 2048, 0,
         "the FMA twin keeps exact Q4_0 weights: no copy"},
        {false, &wd1, PLAN_WIDE, {1, {q4}, false, true, false, 6}, 4ull * 6 * 2048, 8 * MiB,
         "tune gemm_wdeq_cols=1: the twin copies too (the golden_wide_wdeq tests)"},
        {false, &wd1, PLAN_WIDE, {2, {odd, odd}, false, true, false, 6}, 4ull * 6 * 32, 2 * 2304,
         "each copy 256-aligned: 2112 bytes take 2304"},
        {false, &wd1, PLAN_WIDE, {2, {q4, q4down}, false, true, false, 6}, 4ull * 6 * 8192, 32 * MiB,
         "a multi call of two k: no shared prep, each product on its own: the larger of the two"},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        const struct sel_product *m = &rows[i].m;
        struct sel s = rows[i].h200 ? h200(rows[i].plan, rows[i].tune) : lavapipe(rows[i].plan, rows[i].tune);
        struct sel_scratch need = sel_product_scratch(&s, m);
        /* the choice: one gemm group (a single product, a SwiGLU pair, or a multi call of one k)
         * or the products one by one, each through its copy where wdeq serves it */
        bool group = m->swiglu || m->n == 1 || sel_gemm_multi(&s, m->n, m->w, m->cols);
        uint64_t want_x = 0, want_w = 0, group_w = 0;
        bool prep = false, served = false;
        for (int j = 0; j < m->n; j++) {
            if (!sel_gemm_serves(&s, m->cols, m->w[j].dtype)) continue;
            served = true;
            struct sel_weight f = m->w[j];
            uint64_t copy = sel_gemm_wdeq_serves(&s, m->cols, &f) ? (2 * (uint64_t)f.rows * f.k + 255) / 256 * 256 : 0;
            group_w += copy;
            want_w = MAX(want_w, copy);
            if (copy) f.dtype = DT_F16;
            struct sel_gemm c;
            struct err e = {0};
            T_CHECK(sel_gemm(&s, &f, m->swiglu, m->cols, m->accumulate, !m->norm, "t", &c, &e) == ST_OK,
                    "scratch row %zu: %s", i, e.msg);
            bool p1 = (sel_gemm_coopmat(&s) || m->norm || c.zero_y) && !c.xraw;
            if (!group && p1) want_x = MAX(want_x, 4 * (uint64_t)m->cols * (uint64_t)f.k);
            prep = prep || (sel_gemm_coopmat(&s) || m->norm || c.zero_y);
            if (m->swiglu) break; /* one product over both weights */
        }
        if (group && served) {
            want_w = group_w;
            if (m->swiglu) want_w *= 2; /* the up weight's copy beside the gate's */
            bool raw = true;
            for (int j = 0; j < (m->swiglu ? 1 : m->n); j++) {
                struct sel_weight f = m->w[j];
                if (sel_gemm_wdeq_serves(&s, m->cols, &f)) f.dtype = DT_F16;
                struct sel_gemm c;
                struct err e = {0};
                raw = raw && !sel_gemm(&s, &f, m->swiglu, m->cols, m->accumulate, !m->norm, "t", &c, &e) && c.xraw;
            }
            want_x = prep && !raw ? 4 * (uint64_t)m->cols * (uint64_t)m->w[0].k : 0;
        }
        T_CHECK(need.gemm_x == want_x && need.gemm_w == want_w && need.attn_part == 0,
                "scratch row %zu (%s): gemm_x %llu gemm_w %llu, the choice takes %llu / %llu", i, rows[i].why,
                (unsigned long long)need.gemm_x, (unsigned long long)need.gemm_w, (unsigned long long)want_x,
                (unsigned long long)want_w);
        T_CHECK((rows[i].gemm_x == ~0ull || need.gemm_x == rows[i].gemm_x) && need.gemm_w == rows[i].gemm_w,
                "scratch row %zu (%s): gemm_x %llu gemm_w %llu, pinned %llu / %llu", i, rows[i].why,
                (unsigned long long)need.gemm_x, (unsigned long long)need.gemm_w, (unsigned long long)rows[i].gemm_x,
                (unsigned long long)rows[i].gemm_w);
    }
    /* attention: attn_kv.comp's split outputs [cols][n_h][nspl][hd + 2] f32, where the choice
     * splits (sel_attn_kv), nothing elsewhere (LFM2-1.2B: 32 q heads, 8 kv heads, hd 64) */
    struct tune kv0 = dflt_tune, spl3 = dflt_tune;
    kv0.attn_kv_keys = 0;
    spl3.attn_kv_keys = 0, spl3.attn_split = 3;
    const struct {
        const struct tune *tune;
        enum plan_kind plan;
        int64_t keys;
        int cols, n_runs;
        bool prefill;
        uint64_t part;
        const char *why;
    } att[] = {
        {&dflt_tune, PLAN_BATCH, 4112, 1, 1, false, 1ull * 32 * 33 * 66 * 4,
         "decode at 4112 keys: 33 splits of 128 keys (bench/35)"},
        {&dflt_tune, PLAN_BATCH, 80, 1, 1, false, 0, "80 keys: by q head, none"},
        {&dflt_tune, PLAN_BATCH, 4112, 64, 64, false, 0, "512 workgroups of 8 kv heads x 64 columns: no split"},
        {&dflt_tune, PLAN_WIDE, 4112, 64, 4, true, 0, "the wide plan's tiled prefill: none"},
        {&dflt_tune, PLAN_WIDE, 4112, 4, 4, false, 4ull * 32 * 16 * 66 * 4,
         "a wide plan's decode runs attn_kv too: 16 splits"},
        {&dflt_tune, PLAN_WIDE, 4112, 4, 4, true, 4ull * 32 * 16 * 66 * 4,
         "a column a slot takes the fused path even flagged prefill (k_attn_step): not the tiled one"},
        {&spl3, PLAN_SPEC, 48, 8, 2, true, 8ull * 32 * 3 * 66 * 4, "tune attn_split=3 in a spec step (the prep apart)"},
        {&kv0, PLAN_BATCH, 48, 8, 8, false, 0, "48 keys: three blocks, under two chunks: no split"},
    };
    for (size_t i = 0; i < ARRAY_LEN(att); i++) {
        struct sel s = h200(att[i].plan, att[i].tune);
        struct sel_scratch need =
            sel_attn_scratch(&s, 32, 8, 64, att[i].keys, att[i].cols, att[i].n_runs, att[i].prefill);
        struct sel_attn_kv kv;
        bool fused = sel_attn_fuses_prep(&s, att[i].cols, att[i].n_runs);
        bool by_kv = !(att[i].prefill && !fused && att[i].plan == PLAN_WIDE) &&
                     sel_attn_kv(&s, 32, 8, 64, att[i].keys, att[i].cols, att[i].prefill, fused, &kv);
        uint64_t want = by_kv && kv.nspl > 1 ? (uint64_t)att[i].cols * 32 * kv.nspl * 66 * 4 : 0;
        T_CHECK(need.attn_part == att[i].part && need.attn_part == want && !need.gemm_x && !need.gemm_w,
                "attention scratch row %zu (%s): %llu bytes, pinned %llu, the choice's %llu", i, att[i].why,
                (unsigned long long)need.attn_part, (unsigned long long)att[i].part, (unsigned long long)want);
    }
    struct sel_scratch a = {1, 5, 3, 7}, b = {4, 2, 3, 9};
    sel_scratch_max(&a, &b);
    T_CHECK(a.gemm_x == 4 && a.gemm_w == 5 && a.attn_part == 3 && a.gemm_part == 9, "sel_scratch_max: field-wise");
}

/* Every tune key replaces its choice (the keys the ctest variants set are exercised on the GPU too:
 * CMakeLists.txt, tests/cli.cmake; these are the others). */
static void test_tune_keys_apply(void)
{
    struct tune t = dflt_tune;
    struct sel d = h200(PLAN_BATCH, &dflt_tune), s = h200(PLAN_BATCH, &t);
    uint32_t spec[SEL_MATMUL_SPECS];
    sel_matmul_spec(&d, false, 16, 2048, spec);
    T_CHECK(spec[1] == 32 && spec[2] == 2,
            "matmul default: 32 k-slices (256 workgroups), 2 rows: %u %u", spec[1], spec[2]);
    t.matmul_ksl = 64, t.matmul_rt = 4, t.matmul_pass_cols = 5;
    sel_matmul_spec(&s, false, 16, 2048, spec);
    T_CHECK(spec[1] == 64 && spec[2] == 4 && sel_matmul_pass_cols(&s) == 5 &&
                sel_matmul_pass_cols(&d) == 16,
            "matmul_ksl, matmul_rt, matmul_pass_cols");
    struct sel_weight bf = {DT_BF16, 65536, 2048};
    uint32_t ms[10], n = 0, groups = 0;
    struct err e = {0};
    T_CHECK(sel_mv_geometry(&d, SEL_MV_MATVEC, &bf, false, 65536, 1, 1, "t", ms, &n, &groups, &e) ==
                    ST_OK &&
                n == 5 && ms[2] == 2,
            "matvec default: 2 rows a subgroup: %u", ms[2]);
    t.matvec_rt = 3;
    T_CHECK(sel_mv_geometry(&s, SEL_MV_MATVEC, &bf, false, 65536, 1, 1, "t", ms, &n, &groups, &e) ==
                    ST_OK &&
                ms[2] == 3,
            "matvec_rt=3: %u", ms[2]);
    T_CHECK(sel_attn_splits(&dflt_tune, 4096, 8, 128) == 32, "split default");
    t.attn_split_wg = 64;
    T_CHECK(sel_attn_splits(&t, 4096, 8, 128) == 8 && sel_attn_splits(&t, 4096, 64, 128) == 1,
            "attn_split_wg=64");
    struct sel w = h200(PLAN_WIDE, &t);
    uint32_t bq = 0, nt = 0, kv2 = 0;
    uint64_t need = 0;
    t.attn_bq = 16, t.attn_nt = 64;
    T_CHECK(sel_attn_prefill_tile(&w, 64, 512, &bq, &nt, &kv2, &need) && bq == 16 && nt == 64,
            "attn_bq=16, attn_nt=64: %u columns, %u threads", bq, nt);
    /* the gemm: a forced SwiGLU tile, and no plain-x staging past gemm_xraw_cols */
    struct sel_weight q = {DT_BF16, 2048, 2048};
    struct sel_gemm c;
    t.gemm_tile_sw[0] = 32, t.gemm_tile_sw[1] = 32, t.gemm_tile_sw[2] = 32, t.gemm_tile_sw[3] = 1,
    t.gemm_tile_sw[4] = 1;
    T_CHECK(sel_gemm(&w, &q, true, 512, false, true, "t", &c, &e) == ST_OK && c.spec[1] == 32 &&
                c.spec[2] == 32 && c.spec[3] == 32 && c.spec[4] == 32,
            "gemm_tile_swiglu=32x32x32:1x1: %ux%ux%u, %u threads", c.spec[1], c.spec[2], c.spec[3],
            c.spec[4]);
    T_CHECK(sel_gemm(&w, &q, false, 512, true, true, "t", &c, &e) == ST_OK && c.xraw,
            "plain x staged by default");
    t.gemm_xraw_cols = 256;
    T_CHECK(sel_gemm(&w, &q, false, 512, true, true, "t", &c, &e) == ST_OK && !c.xraw,
            "gemm_xraw_cols=256 at 512");
}

/* --precision: serving picks the gemm's _serving variant (and its prep) at the tile and grid exact
 * takes, on cooperative matrices and on the FMA twin alike; nothing else changes (the batch plan's
 * kernels are f32 in both). */
static void test_precision(void)
{
    static const struct {
        bool h200, swiglu;
        enum dtype t;
        int64_t rows, k;
        int cols;
    } rows[] = {
        {true, false, DT_BF16, 2048, 2048, 512}, {true, true, DT_BF16, 8192, 2048, 512},
        {true, false, DT_Q8_0, 2048, 8192, 64},  {true, false, DT_Q4_0, 2048, 2048, 16},
        {true, false, DT_F32, 300, 1056, 16},    {false, false, DT_BF16, 300, 1056, 16},
        {false, true, DT_Q4_0, 130, 1056, 45},   {false, false, DT_F16, 2048, 2048, 512},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        struct sel ex =
                       rows[i].h200 ? h200(PLAN_WIDE, &dflt_tune) : lavapipe(PLAN_WIDE, &dflt_tune),
                   sv = ex;
        sv.precision = PRECISION_SERVING;
        struct sel_weight w = {rows[i].t, rows[i].rows, rows[i].k};
        struct sel_gemm ce, cs;
        struct err e = {0};
        int rc = sel_gemm(&ex, &w, rows[i].swiglu, rows[i].cols, false, false, "t", &ce, &e);
        rc = rc ? rc : sel_gemm(&sv, &w, rows[i].swiglu, rows[i].cols, false, false, "t", &cs, &e);
        T_CHECK(rc == ST_OK && !ce.serving && cs.serving && !strcmp(ce.kernel, cs.kernel) &&
                    ce.fadd == cs.fadd && ce.xraw == cs.xraw &&
                    !memcmp(ce.spec, cs.spec, sizeof ce.spec) &&
                    !memcmp(ce.groups, cs.groups, sizeof ce.groups),
                "precision row %zu: serving %d/%d, kernel %s/%s, BM %u/%u, grid %u/%u: %s", i,
                ce.serving, cs.serving, ce.kernel, cs.kernel, ce.spec[1], cs.spec[1], ce.groups[2],
                cs.groups[2], e.msg);
    }
    struct sel hw = h200(PLAN_WIDE, &dflt_tune), lw = lavapipe(PLAN_WIDE, &dflt_tune), hs = hw,
               ls = lw;
    hs.precision = ls.precision = PRECISION_SERVING;
    T_CHECK(!strcmp(sel_gemm_prep(&hw), "gemm_xprep") &&
                !strcmp(sel_gemm_prep(&hs), "gemm_xprep_serving") &&
                !strcmp(sel_gemm_prep(&lw), "gemm_xprep_f32") &&
                !strcmp(sel_gemm_prep(&ls), "gemm_xprep_f32"),
            "gemm prep: %s %s %s %s", sel_gemm_prep(&hw), sel_gemm_prep(&hs), sel_gemm_prep(&lw),
            sel_gemm_prep(&ls));
    /* the batch plan: the same kernel at every width and type in either precision */
    struct sel b = h200(PLAN_BATCH, &dflt_tune), bs = b;
    bs.precision = PRECISION_SERVING;
    const enum dtype types[] = {DT_BF16, DT_F16, DT_Q8_0, DT_Q4_0};
    for (size_t i = 0; i < ARRAY_LEN(types); i++)
        for (int cols = 1; cols <= 64; cols *= 4) {
            struct sel_weight w = {types[i], 2048, 2048};
            T_CHECK(sel_mv_pick(&b, cols, &w, false, 2048, 1, false) ==
                            sel_mv_pick(&bs, cols, &w, false, 2048, 1, false) &&
                        sel_gemm_serves(&b, cols, types[i]) == sel_gemm_serves(&bs, cols, types[i]),
                    "batch plan %s at %d columns: precision changed the kernel",
                    dtype_name(types[i]), cols);
        }
    /* the names */
    enum precision p = PRECISION_COUNT;
    T_CHECK(precision_parse("serving", &p) && p == PRECISION_SERVING &&
                precision_parse("exact", &p) && p == PRECISION_EXACT &&
                !precision_parse("Serving", &p) && !precision_parse("", &p) &&
                !precision_parse(NULL, &p) && !strcmp(precision_name(PRECISION_SERVING), "serving"),
            "precision names");
}

/* The gemm's path: NV before KHR before the FMA twin, by the device's paths; a --tune gemm_path
 * forces one, and a forced path the device lacks is a usage error naming it and the extension. Each
 * path's kernel names the variant sel_gemm picks, with the same tiles on KHR and NV. */
static void test_gemm_path(void)
{
    struct tune tk = dflt_tune, tn = dflt_tune, tf = dflt_tune;
    tk.gemm_path = GEMM_PATH_KHR;
    tn.gemm_path = GEMM_PATH_NV;
    tf.gemm_path = GEMM_PATH_FMA;
    static const struct {
        bool khr, nv;
        int tune; /* 0 auto, 1 khr, 2 nv, 3 fma, 4 cm2 */
        enum gemm_path want;
        const char *kernel, *err; /* err: the usage error's words (want ignored) */
    } rows[] = {
        {true, true, 0, GEMM_PATH_NV, "gemm", NULL},       /* both: the measured one first (bench/42) */
        {true, false, 0, GEMM_PATH_KHR, "gemm_khr", NULL}, /* AMD RDNA3, Intel Arc */
        {false, true, 0, GEMM_PATH_NV, "gemm", NULL},      /* an NVIDIA driver without KHR */
        {false, false, 0, GEMM_PATH_FMA, "gemm_fma", NULL}, /* lavapipe */
        {true, true, 1, GEMM_PATH_KHR, "gemm_khr", NULL},
        {true, true, 2, GEMM_PATH_NV, "gemm", NULL},
        {true, true, 3, GEMM_PATH_FMA, "gemm_fma", NULL},
        {false, false, 3, GEMM_PATH_FMA, "gemm_fma", NULL},
        {false, true, 1, 0, NULL, "--tune gemm_path=khr: device 'dev' has no usable VK_KHR_cooperative_matrix"},
        {true, false, 2, 0, NULL, "--tune gemm_path=nv: device 'dev' has no usable VK_NV_cooperative_matrix"},
        {false, false, 1, 0, NULL, "--tune gemm_path=khr: device 'dev' has no usable VK_KHR_cooperative_matrix"},
        /* cm2 forced on a device without VK_NV_cooperative_matrix2 (sel h200: coopmat2 false) */
        {true, true, 4, 0, NULL, "--tune gemm_path=cm2: device 'dev' has no usable VK_NV_cooperative_matrix2"},
        {false, false, 4, 0, NULL, "--tune gemm_path=cm2: device 'dev' has no usable VK_NV_cooperative_matrix2"},
    };
    struct tune tc = dflt_tune;
    tc.gemm_path = GEMM_PATH_CM2;
    const struct tune *const tunes[] = {&dflt_tune, &tk, &tn, &tf, &tc};
    struct err e = {0};
    struct sel_weight w = {DT_BF16, 2048, 2048};
    struct sel_gemm ref;
    struct sel nv = h200(PLAN_WIDE, &dflt_tune);
    T_CHECK(sel_gemm(&nv, &w, false, 512, false, true, "t", &ref, &e) == ST_OK, "NV reference: %s", e.msg);
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        struct sel s = h200(PLAN_WIDE, tunes[rows[i].tune]);
        s.coopmat_khr = rows[i].khr;
        s.coopmat_nv = rows[i].nv;
        s.device = "dev";
        enum gemm_path p = GEMM_PATH_AUTO;
        struct sel_gemm c;
        e.msg[0] = 0;
        int rc = sel_gemm_path(&s, 512, &p, &e), rg = sel_gemm(&s, &w, false, 512, false, true, "t", &c, &e);
        if (rows[i].err) {
            T_CHECK(rc == ST_USAGE && rg == ST_USAGE && strstr(e.msg, rows[i].err) && strstr(e.msg, "--list-devices"),
                    "row %zu: forced where absent: %d %d '%s'", i, rc, rg, e.msg);
            continue;
        }
        T_CHECK(rc == ST_OK && p == rows[i].want && rg == ST_OK && !strcmp(c.kernel, rows[i].kernel),
                "row %zu (khr %d nv %d tune %s): path %s kernel %s, want %s %s: %s", i, rows[i].khr, rows[i].nv,
                gemm_path_name((enum gemm_path)rows[i].tune), gemm_path_name(p), rg ? "-" : c.kernel,
                gemm_path_name(rows[i].want), rows[i].kernel, e.msg);
        T_CHECK(sel_gemm_coopmat(&s) == (rows[i].want != GEMM_PATH_FMA), "row %zu: coopmat", i);
        bool cm = rows[i].want != GEMM_PATH_FMA;
        T_CHECK(!cm || !memcmp(c.spec, ref.spec, sizeof c.spec), "row %zu: the cooperative paths share tiles", i);
        /* exact on any cooperative path executes the hi + lo products (KHR as NV v1), the twin one */
        T_CHECK(c.coopmat == cm, "row %zu: the choice's coopmat %d, want %d", i, c.coopmat, cm);
    }
    struct sel anon = h200(PLAN_WIDE, &tk);
    anon.device = NULL;
    enum gemm_path p;
    T_CHECK(sel_gemm_path(&anon, 0, &p, &e) == ST_USAGE && strstr(e.msg, "this device has no usable VK_KHR"),
            "no device name: %s", e.msg);
    T_CHECK(!strcmp(sel_gemm_path_kernel(GEMM_PATH_KHR), "gemm_khr") && !strcmp(sel_gemm_path_kernel(GEMM_PATH_NV), "gemm") &&
                !strcmp(sel_gemm_path_kernel(GEMM_PATH_FMA), "gemm_fma") &&
                !strcmp(sel_gemm_path_kernel(GEMM_PATH_CM2), "gemm_cm2") &&
                !strcmp(sel_gemm_path_label(GEMM_PATH_CM2), "VK_NV_cooperative_matrix2"),
            "kernels of the paths");
    /* the automatic path: gemm_cm2 in serving precision where the device has coopmat2, never in
     * exact precision (bench/39 third run: aligned cm2 on an f16 x 120-250 TFLOP/s, v1 78-94;
     * exact cm2 59-73); --tune gemm_path=nv keeps v1 everywhere */
    for (int m = 0; m < 32; m++) {
        struct tune tm = m & 16 ? tn : dflt_tune;
        struct sel s = h200(PLAN_WIDE, &tm);
        s.coopmat_khr = m & 1;
        s.coopmat_nv = m & 2 || m & 16;
        s.coopmat2 = s.coopmat2_swiglu = s.int8 = m & 4;
        s.precision = m & 8 ? PRECISION_SERVING : PRECISION_EXACT;
        bool want_cm2 = (m & 4) && (m & 8) && !(m & 16);
        enum gemm_path got;
        struct sel_gemm c;
        T_CHECK(sel_gemm_path(&s, 512, &got, &e) == ST_OK && (got == GEMM_PATH_CM2) == want_cm2 &&
                    sel_gemm(&s, &w, false, 512, false, true, "t", &c, &e) == ST_OK && c.cm2 == want_cm2 &&
                    !c.fallback && !strcmp(c.kernel, want_cm2 ? "gemm_cm2" : sel_gemm_path_kernel(got)) &&
                    (!want_cm2 || (c.cm2_x == SEL_CM2_X_GIVEN_F16 && !strcmp(c.prep, "gemm_xprep_f16"))) &&
                    (!(m & 16) || got == GEMM_PATH_NV),
                "devices %d (khr %d nv %d cm2 %d %s%s): auto took %s, cm2 %d (%s)", m, m & 1, !!(m & 2), !!(m & 4),
                m & 8 ? "serving" : "exact", m & 16 ? ", gemm_path=nv" : "", gemm_path_name(got), c.cm2, e.msg);
    }
    /* auto in serving precision: a product gemm_cm2 refuses falls back to NV v1, the reason named */
    struct sel as = h200(PLAN_WIDE, &dflt_tune);
    as.coopmat2 = as.coopmat2_swiglu = as.int8 = true;
    as.precision = PRECISION_SERVING;
    struct sel_weight odd = {DT_BF16, 2048, 2044};
    struct sel_gemm c;
    T_CHECK(sel_gemm(&as, &odd, false, 512, false, true, "t", &c, &e) == ST_OK && !c.cm2 && !strcmp(c.kernel, "gemm") &&
                c.fallback && strstr(c.fallback, "multiple of 8") && c.serving && !strcmp(c.prep, "gemm_xprep_serving"),
            "auto serving, k 2044: %s on %s (%s)", c.fallback ? c.fallback : "-", c.kernel, e.msg);
    struct sel cm2 = h200(PLAN_WIDE, &tc);
    cm2.coopmat2 = true;
    cm2.coopmat_nv = false;
    cm2.coopmat_khr = true;
    T_CHECK(sel_gemm_path(&cm2, 16, &p, &e) == ST_OK && p == GEMM_PATH_CM2 && sel_gemm_v1_path(&cm2) == GEMM_PATH_KHR &&
                sel_gemm_coopmat(&cm2),
            "cm2 forced: its fallbacks on the automatic path (here KHR)");
}

/* --tune gemm_path=cm2 on a device with VK_NV_cooperative_matrix2: which products gemm_cm2 takes,
 * with which x mode and prep, and the others' fallback to the automatic path's gemm (NV v1 here)
 * with the reason named (select_path.c sel_gemm_cm2_refusal). */
static void test_gemm_cm2(void)
{
    struct tune tc = dflt_tune;
    tc.gemm_path = GEMM_PATH_CM2;
    enum { EX = PRECISION_EXACT, SV = PRECISION_SERVING };
    static const struct {
        enum dtype dt;
        int64_t k;
        bool swiglu, accumulate, plain_x;
        int precision;
        bool no_swiglu_dev, no_int8; /* the device lacks per-element operations / 8-bit integers */
        const char *kernel;          /* "gemm_cm2" or the fallback's */
        enum sel_cm2_x x;
        bool no_prep;
        const char *prep, *why; /* why: the fallback's reason (words of) */
    } rows[] = {
        /* exact: PREP mode on gemm_xprep's pairs (a prep even without a norm) */
        {DT_BF16, 2048, false, false, false, EX, false, false, "gemm_cm2", SEL_CM2_X_PREP, false, "gemm_xprep", NULL},
        {DT_F16, 2048, false, true, true, EX, false, false, "gemm_cm2", SEL_CM2_X_PREP, false, "gemm_xprep", NULL},
        {DT_Q4_0, 2048, true, false, false, EX, false, false, "gemm_cm2", SEL_CM2_X_PREP, false, "gemm_xprep", NULL},
        {DT_Q8_0, 2048, false, false, false, EX, false, false, "gemm_cm2", SEL_CM2_X_PREP, false, "gemm_xprep", NULL},
        {DT_BF16, 2048, true, false, false, EX, false, false, "gemm_cm2", SEL_CM2_X_PREP, false, "gemm_xprep", NULL},
        /* serving: GIVEN_F16 mode on gemm_xprep_f16's x (a prep even without a norm) */
        {DT_BF16, 2048, false, false, false, SV, false, false, "gemm_cm2", SEL_CM2_X_GIVEN_F16, false, "gemm_xprep_f16",
         NULL},
        {DT_BF16, 8192, false, true, true, SV, false, false, "gemm_cm2", SEL_CM2_X_GIVEN_F16, false, "gemm_xprep_f16",
         NULL},
        {DT_Q8_0, 2048, true, false, false, SV, false, false, "gemm_cm2", SEL_CM2_X_GIVEN_F16, false, "gemm_xprep_f16",
         NULL},
        {DT_F16, 2040, true, false, false, SV, false, false, "gemm_cm2", SEL_CM2_X_GIVEN_F16, false, "gemm_xprep_f16",
         NULL},
        /* fallbacks to NV v1, the reason named */
        {DT_F32, 2048, false, false, false, EX, false, false, "gemm", 0, false, "gemm_xprep", "F16, BF16, Q8_0, Q4_0"},
        {DT_F32, 2048, false, false, false, SV, false, false, "gemm", 0, false, "gemm_xprep_serving",
         "F16, BF16, Q8_0, Q4_0"},
        {DT_Q8_0, 2048, true, false, false, EX, false, false, "gemm", 0, false, "gemm_xprep", "exact Q8_0 SwiGLU"},
        {DT_Q8_0, 48, false, false, false, EX, false, false, "gemm", 0, false, "gemm_xprep", "multiple of 32"},
        {DT_Q4_0, 2048, false, false, false, EX, false, true, "gemm", 0, false, "gemm_xprep", "8-bit integers"},
        {DT_BF16, 2048, true, false, false, SV, true, false, "gemm", 0, false, "gemm_xprep_serving", "per-element"},
        {DT_F16, 2046, false, false, false, EX, false, false, "gemm", 0, false, "gemm_xprep", "multiple of 4"},
        {DT_F16, 2044, false, false, false, SV, false, false, "gemm", 0, false, "gemm_xprep_serving", "multiple of 8"},
        {DT_F16, 2044, false, false, false, EX, false, false, "gemm_cm2", SEL_CM2_X_PREP, false, "gemm_xprep", NULL},
    };
    struct err e = {0};
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        struct sel s = h200(PLAN_WIDE, &tc);
        s.coopmat2 = true;
        s.coopmat2_swiglu = !rows[i].no_swiglu_dev;
        s.int8 = !rows[i].no_int8;
        s.precision = (enum precision)rows[i].precision;
        struct sel_weight w = {rows[i].dt, 2048, rows[i].k};
        struct sel_gemm c;
        e.msg[0] = 0;
        int rc = sel_gemm(&s, &w, rows[i].swiglu, 512, rows[i].accumulate, rows[i].plain_x, "t", &c, &e);
        const char *why = sel_gemm_cm2_refusal(&s, &w, rows[i].swiglu, rows[i].accumulate, 512);
        bool on = !rows[i].why;
        T_CHECK(rc == ST_OK && !strcmp(c.kernel, rows[i].kernel) && c.cm2 == on && (!on || c.cm2_x == rows[i].x) &&
                    (!on || c.no_prep == rows[i].no_prep) && c.prep && !strcmp(c.prep, rows[i].prep) &&
                    c.serving == (rows[i].precision == SV) &&
                    (on ? !why && !c.fallback : why && c.fallback && strstr(why, rows[i].why) && !strcmp(why, c.fallback)),
                "row %zu (%s k %lld%s%s %s): kernel %s cm2 %d x %d no_prep %d prep %s fallback '%s': %s", i,
                dtype_name(rows[i].dt), (long long)rows[i].k, rows[i].swiglu ? " swiglu" : "",
                rows[i].accumulate ? " accumulate" : "", precision_name((enum precision)rows[i].precision),
                rc ? "-" : c.kernel, c.cm2, (int)c.cm2_x, c.no_prep, c.prep ? c.prep : "-",
                c.fallback ? c.fallback : "", e.msg);
    }
    /* another path: no refusal to name */
    struct sel a = h200(PLAN_WIDE, &dflt_tune);
    struct sel_weight bf = {DT_BF16, 2048, 2048}, f32 = {DT_F32, 2048, 2048}, q4 = {DT_Q4_0, 2048, 2048};
    T_CHECK(!strcmp(sel_gemm_cm2_refusal(&a, &bf, false, false, 512), "not on cm2"), "not on cm2");
    /* automatic serving on a coopmat2 device: F16/BF16 on gemm_cm2, Q types on NV v1 (bench/43) */
    struct sel as = h200(PLAN_WIDE, &dflt_tune);
    as.coopmat2 = as.coopmat2_swiglu = as.int8 = true;
    as.precision = PRECISION_SERVING;
    struct sel_gemm ca, cq;
    T_CHECK(sel_gemm(&as, &bf, false, 512, false, false, "t", &ca, &e) == ST_OK && ca.cm2 &&
                sel_gemm(&as, &q4, false, 512, false, false, "t", &cq, &e) == ST_OK && !cq.cm2 &&
                !strcmp(cq.kernel, "gemm") && cq.fallback && strstr(cq.fallback, "automatic"),
            "auto serving: BF16 cm2 %d, Q4_0 cm2 %d (%s)", ca.cm2, cq.cm2, cq.fallback ? cq.fallback : "-");
    /* ... from one 128-column tile up (bench/45): narrower steps on NV v1, the path itself (the
     * report's), unless cm2 is forced; cols <= 0 asks for any width (--list-devices) */
    static const struct {
        int cols;
        bool forced, cm2;
    } widths[] = {{1, false, false}, {16, false, false}, {64, false, false}, {127, false, false}, {128, false, true},
                  {256, false, true}, {0, false, true},  {16, true, true},   {64, true, true}};
    for (size_t i = 0; i < ARRAY_LEN(widths); i++) {
        struct sel sw = as;
        sw.tune = widths[i].forced ? &tc : &dflt_tune;
        struct sel_gemm cw = {0};
        enum gemm_path pw;
        const char *why = sel_gemm_cm2_refusal(&sw, &bf, true, false, widths[i].cols);
        bool path_ok = sel_gemm_path(&sw, widths[i].cols, &pw, &e) == ST_OK &&
                       pw == (widths[i].cm2 ? GEMM_PATH_CM2 : GEMM_PATH_NV);
        bool choice_ok = widths[i].cols < 1 ||
                         (sel_gemm(&sw, &bf, true, widths[i].cols, false, false, "t", &cw, &e) == ST_OK &&
                          cw.cm2 == widths[i].cm2 && !cw.fallback &&
                          !strcmp(cw.kernel, widths[i].cm2 ? "gemm_cm2" : "gemm"));
        T_CHECK(path_ok && choice_ok && (widths[i].cm2 ? !why : why && !strcmp(why, "not on cm2")),
                "%d columns%s: path %s, cm2 %d kernel %s (%s)", widths[i].cols, widths[i].forced ? " forced" : "",
                gemm_path_name(pw), cw.cm2, cw.kernel ? cw.kernel : "-", why ? why : "-");
    }
    /* Q4_0: gemm_cm2 decodes it in its loads, so no f16 copy where it serves the weight */
    struct sel s = h200(PLAN_WIDE, &tc);
    s.coopmat2 = s.coopmat2_swiglu = s.int8 = true;
    T_CHECK(!sel_gemm_wdeq_serves(&s, 512, &q4) && sel_gemm_wdeq_serves(&a, 512, &q4), "Q4_0 copies: cm2 none, NV v1's");
    /* one prep for a multi call only when all its products take one kernel family */
    const struct sel_weight same[2] = {bf, bf}, mixed[2] = {bf, f32};
    T_CHECK(sel_gemm_multi(&s, 2, same, 512) && !sel_gemm_multi(&s, 2, mixed, 512) && sel_gemm_multi(&a, 2, mixed, 512),
            "multi groups under cm2");
    /* the scratch the engine reserves for them (select_scratch.c): both precisions read a prep
     * even with no norm (serving: gemm_xprep_f16's plain f16, 2 bytes an element); Q4_0 takes no
     * copy; a SwiGLU pair that falls back keeps NV v1's rules */
    struct sel sv = s;
    sv.precision = PRECISION_SERVING;
    const uint64_t x512 = 4ull * 512 * 2048, h512 = 2ull * 512 * 2048, part4 = 4ull * (4ull * 512 * 2048);
    const struct sel_weight kv = {DT_BF16, 512, 2048}, big = {DT_BF16, 8192, 2048};
    const struct {
        const struct sel *s;
        struct sel_product m;
        uint64_t gemm_x, gemm_w, gemm_part;
        const char *what;
    } sc[] = {
        {&s, {1, {bf}, false, false, true, 512}, x512, 0, 0, "exact, no norm: gemm_xprep's pairs (PREP: no split)"},
        {&sv, {1, {bf}, false, false, true, 512}, h512, 0, part4, "serving, no norm: gemm_xprep_f16's x; 2 k ranges"},
        {&sv, {1, {bf}, false, true, false, 512}, h512, 0, part4, "serving with a norm: gemm_xprep_f16"},
        {&sv, {1, {f32}, false, true, false, 512}, x512, 0, 0, "serving F32 (NV v1's serving prep): 4 bytes"},
        {&sv, {1, {big}, false, true, false, 512}, h512, 0, 0, "256 tiles: no split"},
        {&sv, {2, {bf, bf}, true, true, false, 512}, h512, 0, 0, "a SwiGLU pair: never split"},
        {&s, {2, {q4, q4}, true, true, false, 512}, x512, 0, 0, "a Q4_0 pair: decoded in the loads, no copy"},
        {&s, {3, {bf, bf, bf}, false, true, false, 512}, x512, 0, 0, "q/k/v: one prep"},
        /* q: 2 ranges (one 4 MiB plane), k and v: 4 ranges (3 planes of 1 MiB): 4 slices of the largest */
        {&sv, {3, {bf, kv, kv}, false, true, false, 512}, h512, 0, part4, "serving q/k/v: a slice a product"},
    };
    for (size_t i = 0; i < ARRAY_LEN(sc); i++) {
        struct sel_scratch got = sel_product_scratch(sc[i].s, &sc[i].m);
        T_CHECK(got.gemm_x == sc[i].gemm_x && got.gemm_w == sc[i].gemm_w && got.gemm_part == sc[i].gemm_part,
                "scratch %zu (%s): x %llu w %llu part %llu", i, sc[i].what, (unsigned long long)got.gemm_x,
                (unsigned long long)got.gemm_w, (unsigned long long)got.gemm_part);
    }
}

static void test_tune_parse(void)
{
    struct tune t = tune_default();
    struct err e = {0};
    char buf[512];
    tune_format(&t, buf, sizeof buf);
    T_CHECK(!buf[0], "the default tune prints empty: %s", buf);
    T_CHECK(tune_parse(&t, "xmv_cols=4,gemm_tile=32x32x32", &e) == ST_OK && t.xmv_cols == 4 &&
                t.gemm_tile[0] == 32 && t.gemm_tile[3] == 2 && t.gemm_tile[4] == 2,
            "parse: %s", e.msg);
    T_CHECK(tune_parse(&t, "attn_kv_keys=0", &e) == ST_OK && t.attn_kv_keys == 0,
            "attn_kv_keys=0 is a value");
    tune_format(&t, buf, sizeof buf);
    T_CHECK(!strcmp(buf, "xmv_cols=4,attn_kv_keys=0,gemm_tile=32x32x32:2x2"), "format: %s", buf);
    struct tune back = tune_default();
    T_CHECK(tune_parse(&back, buf, &e) == ST_OK && !memcmp(&back, &t, sizeof t),
            "format reads back: %s", e.msg);
    /* the test-only keys: tune_parse_all reads them, tune_format prints them, the CLI's parse
     * refuses them as unknown */
    T_CHECK(tune_parse_all(&t, "qmv_kc=100,matmul_ksl=16", &e) == ST_OK && t.qmv_kc == 96 &&
                t.matmul_ksl == 16,
            "qmv_kc rounds down to 32s: %s", e.msg);
    tune_format(&t, buf, sizeof buf);
    T_CHECK(
        !strcmp(buf, "matmul_ksl=16,qmv_kc=96,xmv_cols=4,attn_kv_keys=0,gemm_tile=32x32x32:2x2"),
        "format of test-only keys: %s", buf);
    back = tune_default();
    T_CHECK(tune_parse_all(&back, buf, &e) == ST_OK && !memcmp(&back, &t, sizeof t),
            "format reads back through tune_parse_all: %s", e.msg);
    static const char keys9[] = "xmv_cols attn_kv_keys attn_split gemm_min_cols gemm_tile "
                                "gemm_splitk gemm_wdeq_cols gemm_path pool_max";
    T_CHECK(!strcmp(tune_keys(), keys9), "the CLI's keys: %s", tune_keys());
    /* gemm_path: a name, printed as one, read back */
    struct tune gp = tune_default();
    T_CHECK(tune_parse(&gp, "gemm_path=khr", &e) == ST_OK && gp.gemm_path == GEMM_PATH_KHR, "khr: %s", e.msg);
    tune_format(&gp, buf, sizeof buf);
    T_CHECK(!strcmp(buf, "gemm_path=khr"), "format: %s", buf);
    T_CHECK(tune_parse(&gp, "gemm_path=nv", &e) == ST_OK && gp.gemm_path == GEMM_PATH_NV &&
                tune_parse(&gp, "gemm_path=fma", &e) == ST_OK && gp.gemm_path == GEMM_PATH_FMA,
            "nv, fma: %s", e.msg);
    T_CHECK(tune_parse(&gp, "gemm_path=cm2", &e) == ST_OK && gp.gemm_path == GEMM_PATH_CM2, "cm2: %s", e.msg);
    tune_format(&gp, buf, sizeof buf);
    T_CHECK(!strcmp(buf, "gemm_path=cm2"), "format: %s", buf);
    T_CHECK(tune_parse(&gp, "gemm_path=auto", &e) == ST_OK && gp.gemm_path == GEMM_PATH_AUTO, "auto: %s", e.msg);
    tune_format(&gp, buf, sizeof buf);
    T_CHECK(!buf[0], "gemm_path=auto is the default, printed as nothing: %s", buf);
    static const struct {
        const char *arg, *msg;
        bool all;
    } bad[] = {
        {"bogus=1",
         "--tune bogus: unknown key (expected one of: xmv_cols attn_kv_keys attn_split "
         "gemm_min_cols gemm_tile gemm_splitk gemm_wdeq_cols gemm_path pool_max)",
         false},
        {"bogus=1", "--tune bogus: unknown key (expected one of: matmul_ksl", true},
        {"matmul_ksl=16", "--tune matmul_ksl: unknown key (expected one of: xmv_cols", false},
        {"xmv_cols=1,gemm_pf=0", "--tune gemm_pf: unknown key (expected one of: xmv_cols", false},
        {"qmv_kc=96", "--tune qmv_kc: unknown key", false},
        {"gemm_tile_swiglu=32x32x32", "--tune gemm_tile_swiglu: unknown key", false},
        {"xmv_cols=5", "--tune xmv_cols=5: expected an integer in 1..4", false},
        {"xmv_cols=", "--tune xmv_cols=: expected xmv_cols=value", false},
        {"xmv_cols", "--tune xmv_cols: expected xmv_cols=value", false},
        {"gemm_splitk=0", "--tune gemm_splitk=0: expected an integer in 1..64", false},
        {"gemm_min_cols=2x", "--tune gemm_min_cols=2x: expected an integer in 1..65535", false},
        {"matmul_ksl=24", "--tune matmul_ksl=24: expected an integer in 8..128, a power of 2",
         true},
        {"gemm_pf=1x", "--tune gemm_pf=1x: expected an integer in 0..2", true},
        {"gemm_tile=32x32x48", "--tune gemm_tile=32x32x48: expected BMxBNxBK", false},
        {"gemm_tile=32x32x32junk", "--tune gemm_tile=32x32x32junk: expected BMxBNxBK", false},
        {"xmv_cols=1,", "--tune : unknown key", false},
        {"", "--tune needs key=value", false},
        {"gemm_path=cm3", "--tune gemm_path=cm3: expected one of auto|khr|nv|fma|cm2", false},
        {"gemm_path=1", "--tune gemm_path=1: expected one of auto|khr|nv|fma|cm2", false},
        {"gemm_path=", "--tune gemm_path=: expected gemm_path=value", false},
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        struct tune u = tune_default();
        e.msg[0] = 0;
        int rc = bad[i].all ? tune_parse_all(&u, bad[i].arg, &e) : tune_parse(&u, bad[i].arg, &e);
        T_CHECK(rc == ST_USAGE && strstr(e.msg, bad[i].msg), "--tune '%s'%s: %s", bad[i].arg,
                bad[i].all ? " (all keys)" : "", e.msg);
    }
}

/* The FLOP counts the dispatches carry (flops.c): exact formulas for given shapes. */
static void test_flops(void)
{
    /* LFM2-1.2B's ffn_down [2048, 8192] at 512 columns; its gate+up SwiGLU [8192, 2048] twice over */
    T_CHECK(k_product_flops(2048, 8192, 512, false) == 2ull * 2048 * 8192 * 512, "product");
    T_CHECK(k_product_flops(8192, 2048, 512, true) == 4ull * 8192 * 2048 * 512, "SwiGLU product");
    T_CHECK(k_product_flops(65536, 2048, 1, false) == 268435456ull, "the LM head at one column");
    T_CHECK(k_product_flops(0, 2048, 4, false) == 0 && k_product_flops(16, 2048, 0, false) == 0, "empty shapes");
    /* products executed per useful one: hi + lo activations on cooperative matrices, hi + lo weights
     * too for F32 and Q8_0; one elsewhere */
    static const struct {
        bool cm;
        enum dtype t;
        uint32_t mult;
    } m[] = {{true, DT_F16, 2}, {true, DT_BF16, 2}, {true, DT_Q4_0, 2}, {true, DT_F32, 3},
             {true, DT_Q8_0, 3}, {false, DT_BF16, 1}, {false, DT_F32, 1}, {false, DT_Q8_0, 1}};
    for (size_t i = 0; i < ARRAY_LEN(m); i++)
        T_CHECK(k_gemm_exec_mult(m[i].cm, m[i].t) == m[i].mult, "exec mult %zu: %u, expected %u", i,
                k_gemm_exec_mult(m[i].cm, m[i].t), m[i].mult);
    /* attention: 32 q heads of 64 dims, QK and PV: 4·32·64 a (column, key) pair */
    struct k_attn_geom a = {.n_h = 32, .n_kv = 8, .hd = 64};
    T_CHECK(k_attn_pair_flops(&a) == 8192, "attention pair %llu", (unsigned long long)k_attn_pair_flops(&a));
    /* a 512-token prefill from 0: 512·513/2 pairs; two decode slots at 16 and 100: 17 + 101; a
     * 4-column draft at 10: 4·10 + 10 */
    struct run_meta prefill[] = {{0, 0, 512, 0}}, decode[] = {{0, 0, 1, 16}, {1, 1, 1, 100}},
                    draft[] = {{0, 0, 4, 10}};
    T_CHECK(k_attn_step_pairs(prefill, 1) == 131328, "prefill pairs %llu", (unsigned long long)k_attn_step_pairs(prefill, 1));
    T_CHECK(k_attn_step_pairs(decode, 2) == 118, "decode pairs");
    T_CHECK(k_attn_step_pairs(draft, 1) == 50, "draft pairs");
    /* LFM2-1.2B's short conv: 3 taps over its 2048 channels at 512 columns */
    T_CHECK(k_conv_flops(2048, 3, 512) == 2ull * 2048 * 3 * 512, "conv");
    T_CHECK(k_conv_flops(2048, 0, 512) == 0, "no taps");
}

int main(void)
{
    struct tune d = tune_default();
    T_CHECK(!memcmp(&d, &dflt_tune, sizeof d), "tune_default is the table's automatic tune");
    test_mv_pick();
    test_xmv_ksplits();
    test_gemm_rules();
    test_attention_rules();
    test_conv_rules();
    test_scratch_rules();
    test_tune_keys_apply();
    test_precision();
    test_gemm_path();
    test_gemm_cm2();
    test_tune_parse();
    test_flops();
    return t_finish();
}
