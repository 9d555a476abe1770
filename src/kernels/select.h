/* select.h - kernel choice as data: for a matrix product, an attention or a conv of a given shape,
 * weight type, plan kind and device (struct sel), which kernel serves it, with which spec
 * constants and grid. Vulkan-free, so tests/test_select.c checks the rules without a GPU;
 * the kernels' host files (matmul.c, gemm.c, conv.c, attention.c) only execute the choice (pipelines, push constants, dispatches).
 *
 * Every rule in select.c carries one line of why and the bench/ note that measured it. The run's
 * --tune overrides (tune.h) are an input: each replaces one automatic choice. */
#ifndef LFM2_SELECT_H
#define LFM2_SELECT_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "loader.h"
#include "plan_kind.h"
#include "tune.h"

#define SEL_MAX_GROUPS 65535u /* guaranteed maxComputeWorkGroupCount in every dimension */
#define K_KV_BLOCK 16         /* positions per KV block */
#define K_MATMUL_MAX_COLS                                                                          \
    16 /* columns one matmul pass serves; wider steps get one pass per chunk */
/* attention outside the wide plan's prefill by kv head (attn_kv.comp) or by q head
 * (attention.comp): the line sel_attn_by_kv_head draws (bench/35 runs 6-7) */
#define K_ATTN_KV_KEYS 512   /* by kv head past this many keys a column ... */
#define K_ATTN_KV_KEYS_1 256 /* ... at one column past this many, or past 2 x the head dim ... */
#define K_ATTN_KV_COLS 64 /* ... and at any context in decode steps of this many columns or more   \
                           */
#define K_ATTN_KV_MAX_COLS 64 /* a batch-plan prefill: by kv head only up to this many columns */
#define K_ATTN_SPLIT_WG                                                                            \
    512 /* attn_kv.comp: workgroups below which a column's keys are split (bench/35) */
#define K_MATVEC_COLS 8      /* matvec.comp: q/k/v stacked up to this many columns (bench/12) */
#define K_MATVEC_MAX_COLS 16 /* the most columns matvec.comp serves (tune matvec_cols) */
#define K_QMV_COLS 8         /* the most columns qmv.comp serves (tune qmv_cols) */
#define K_XMV_COLS 4         /* xmv.comp's columns a pass (the x it holds in registers) */
#define K_GEMM_WDEQ_COLS 256 /* Q4_0 through an f16 copy from this many columns (bench/33) */
#define K_CM2_AUTO_COLS 128  /* serving steps on gemm_cm2 from this many columns (bench/45) */
#define K_DN_CONV_FUSE_COLS                                                                        \
    4 /* DeltaNet conv in its in_proj's epilogue up to this many columns (bench/32) */

/* What a choice depends on besides the shape. */
struct sel {
    const struct tune *tune;
    enum plan_kind plan;
    uint32_t subgroup_size; /* 0: 32 */
    uint32_t shared_mem;    /* bytes a workgroup may take */
    bool coopmat_khr;       /* gemm.comp runs on VK_KHR_cooperative_matrix here (gpu.h gemm_khr) */
    bool coopmat_nv;        /* ... on VK_NV_cooperative_matrix (gpu.h gemm_nv) */
    bool coopmat2;          /* gemm_cm2.comp runs here (gpu.h has_coopmat2) */
    bool coopmat2_swiglu;   /* ... with its SwiGLU epilogue (gpu.h has_coopmat2_per_element) */
    bool int8;              /* 8-bit integers in shaders (gpu.h has_int8: gemm_cm2's Q types) */
    uint32_t coopmat2_max_nt; /* invocations a workgroup of workgroup-scope matrices may have (0: 1024) */
    bool float_atomic_add;  /* float atomic add on buffers */
    enum precision precision; /* the run's --precision (plan_kind.h): the gemm's variant */
    const char *device;     /* its name, for messages (NULL: "this device") */
};

/* ceil(a / b) (b > 0): tiles, workgroups, splits. */
static inline uint64_t sel_div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* A weight's shape and type (one matrix of a product). */
struct sel_weight {
    enum dtype dtype;
    int64_t rows, k;
};

/* ---- matrix products */

/* Elements of a 16-byte weight slot (matmul.comp's G): 4 F32, 8 F16/BF16, 16 Q8_0, 32 Q4_0. */
int64_t sel_slot_elems(enum dtype t);

/* The matrix-vector kernel a product takes, else matmul.comp or (wide plan) the gemm. */
enum sel_mv { SEL_MV_NONE, SEL_MV_MATVEC, SEL_MV_QMV, SEL_MV_XMV };

/* The auto plan at `cols` columns: wide from gemm_min_cols (sel_gemm_min_cols of the shard's
 * dominant weight type), batch below; and whether a plan named wide runs its products with the
 * batch plan's kernels at that width (below the same line). */
enum plan_kind sel_plan_auto(int cols, int gemm_min_cols);
bool sel_wide_as_batch(enum plan_kind plan, int cols, int gemm_min_cols);
/* The narrowest step the wide plan gives the gemm: 6 columns, 5 for Q4_0, 16 for F32 (tune
 * gemm_min_cols). */
int sel_gemm_min_cols(const struct tune *t, enum dtype d);
/* Whether the wide plan's gemm serves a product of `cols` columns of type d. */
bool sel_gemm_serves(const struct sel *s, int cols, enum dtype d);
/* Workgroups along k of an xmv product (split_ok: no norm and y += result). */
uint32_t sel_xmv_ksplits(const struct sel *s, const struct sel_weight *w, bool swiglu,
                         bool split_ok);
/* Columns of one xmv pass over a product of `cols`: passes as even as can be. */
int sel_xmv_pass_cols(int cols);
/* Whether xmv.comp serves `cols` columns over `rows` stacked rows of weights like w. */
bool sel_xmv_serves(const struct sel *s, int cols, const struct sel_weight *w, bool swiglu,
                    uint64_t rows, bool split_ok);
/* xmv, else qmv, else matvec, else none, for n stacked weights like w (`rows` in all). */
enum sel_mv sel_mv_pick(const struct sel *s, int cols, const struct sel_weight *w, bool swiglu,
                        uint64_t rows, int n, bool split_ok);
/* Spec constants and workgroups of one matvec/qmv/xmv dispatch of `cols` columns (ksplits: xmv's
 * workgroups along k). ST_USAGE when the shape has no geometry. */
int sel_mv_geometry(const struct sel *s, enum sel_mv mk, const struct sel_weight *w, bool swiglu,
                    uint64_t rows, int cols, uint32_t ksplits, const char *op, uint32_t spec[10],
                    uint32_t *n_spec, uint32_t *groups, struct err *e);

/* matmul.comp: columns a pass, spec constants of a pass of `cols` columns and its workgroups. */
#define SEL_MATMUL_THREADS 128u
#define SEL_MATMUL_SPECS 6
int sel_matmul_pass_cols(const struct sel *s);
uint32_t sel_matmul_spec(const struct sel *s, bool swiglu, uint32_t cols, int64_t rows,
                         uint32_t spec[SEL_MATMUL_SPECS]);

/* The wide plan's gemm path for a step of cols columns (tune gemm_path, else the first the device
 * has of NV cooperative matrices, KHR ones, the FMA twin (select_path.c says why);
 * VK_NV_cooperative_matrix2's gemm_cm2 in serving precision where the device has it and the step
 * is 128 columns or more (cols <= 0: any width), or where the tune forces it). ST_USAGE naming the
 * device and the extension it lacks when the tune forces a path it does not have. */
int sel_gemm_path(const struct sel *s, int cols, enum gemm_path *path, struct err *e);
/* The path of gemm.comp's products: sel_gemm_path's, but on cm2 the automatic one (the products
 * gemm_cm2 cannot serve fall back to it). */
enum gemm_path sel_gemm_v1_path(const struct sel *s);
/* Whether gemm.comp's tiles run on cooperative matrices (KHR or NV) on sel_gemm_v1_path: its x
 * prep and tile rules. A forced path counts as chosen (sel_gemm_path refuses it where absent). */
bool sel_gemm_coopmat(const struct sel *s);
/* The kernel (shaders/variants.txt name) and the words for reports of a path. */
const char *sel_gemm_path_kernel(enum gemm_path p); /* "gemm_khr", "gemm", "gemm_fma", "gemm_cm2" */
const char *sel_gemm_path_label(enum gemm_path p);  /* "VK_KHR_cooperative_matrix", ... */
/* On cm2 (forced, or chosen in serving precision): why gemm_cm2 cannot or should not serve a
 * product of w at cols columns (swiglu: a gate/up pair; accumulate: y += W x), or NULL when it
 * serves it (select_path.c's table). Another path: "not on cm2". */
const char *sel_gemm_cm2_refusal(const struct sel *s, const struct sel_weight *w, bool swiglu, bool accumulate,
                                 int cols);
/* gemm_cm2's activation modes (kernels.h enum k_cm2_x, same values): the wide plan takes PREP in
 * exact precision (gemm_xprep.comp's hi/lo pairs) and GIVEN_F16 in serving precision
 * (gemm_xprep_f16's f16 x; select_path.c says why). */
enum sel_cm2_x { SEL_CM2_X_SERVING = 0, SEL_CM2_X_EXACT = 1, SEL_CM2_X_GIVEN_F16 = 2, SEL_CM2_X_PREP = 3 };

/* The gemm's geometry for one product (gemm.comp's spec constants and grid). */
/* gemm_cm2's tile and k splits (kernels.h k_gemm_cm2): workgroups of nt invocations own bm weight
 * rows x bn columns and walk k in steps of bk; with splits > 1 the grid's z splits k into ranges
 * of kper (a multiple of bk), the first range writes y, the others partial planes that
 * gemm_reduce.comp adds into y. */
struct sel_cm2_tile {
    uint32_t bm, bn, bk, nt;
    uint32_t splits; /* k ranges (0 or 1: none) */
};
/* The default tile and splits of a product of rows x k at cols columns (pair: a SwiGLU pair, never
 * split; prep: the unaligned PREP mode's own tile). */
struct sel_cm2_tile sel_gemm_cm2_tile(const struct sel *s, int64_t rows, int64_t k, int cols, bool pair, bool prep);
/* k per split for t.splits ranges of k: a multiple of bk·8 (the aligned kernels' unrolled interior
 * loop) where k allows each range one, else of bk; k itself without splits. The ranges actually
 * run: ceil(k / kper). */
uint32_t sel_gemm_cm2_kper(const struct sel_cm2_tile *t, int64_t k);
/* The bytes of the partial planes a product of rows at cols columns splits into: (ranges - 1)
 * planes of cols x rows f32, 256-byte rounded; 0 without splits. */
uint64_t sel_gemm_cm2_part_bytes(const struct sel_cm2_tile *t, int64_t rows, int64_t k, int cols);

struct sel_gemm {
    const char *kernel; /* "gemm_khr", "gemm", "gemm_fma", "gemm_cm2" or (bench builds) "gemm_roof" */
    bool cm2;           /* on gemm_cm2.comp (kernels.h k_gemm_cm2): only kernel, serving, cm2_x,
                           cm2_tile, no_prep and prep below are set */
    enum sel_cm2_x cm2_x; /* gemm_cm2's x mode */
    struct sel_cm2_tile cm2_tile; /* its tile and splits (sel_gemm_cm2_tile) */
    const char *fallback; /* on cm2 but not serving this product: why (sel_gemm_cm2_refusal) */
    bool no_prep;       /* reads the plain x: needs no prep (xraw; the FMA twin with no norm and
                           nothing to zero) */
    const char *prep;   /* the prep shader (gemm_xprep.comp variant) whose output it reads otherwise */
    bool fadd;          /* split sums by float atomic add (the _fadd variant) */
    bool zero_y;        /* split sums into a y that does not accumulate: y must start at 0 */
    bool xraw;          /* reads the plain x, no prep (gemm.comp XRAW) */
    bool serving;       /* serving precision: x and w rounded to f16, one product (the _serving variant) */
    bool coopmat;       /* multiplies on cooperative matrices (NV v1, KHR, cm2): exact executes the
                           f16 hi + lo products (k_gemm_exec_mult); the FMA twin one f32 product */
    uint32_t spec[10];  /* 32, BM, BN, BK, threads, NBUF, SGM, PF, XRAW, FRAG */
    uint32_t groups[3]; /* column tiles, row tiles, k splits */
    uint32_t kper;      /* k per split */
};
#define SEL_GEMM_SPECS 10
/* plain_x: the product has no norm (its x may be staged plain). ST_USAGE when no tile fits or the
 * path is forced where absent (sel_gemm_path). */
int sel_gemm(const struct sel *s, const struct sel_weight *w, bool swiglu, int cols,
             bool accumulate, bool plain_x, const char *op, struct sel_gemm *c, struct err *e);
/* sel_gemm's choice on cm2 (select_path.c): true and c filled (kernel, cm2, cm2_x,
 * serving, no_prep, prep) where gemm_cm2 serves the product, else false with c->fallback set. */
bool sel_gemm_on_cm2(const struct sel *s, const struct sel_weight *w, bool swiglu, int cols, bool accumulate,
                     bool plain_x, struct sel_gemm *c);
/* The shader of gemm.comp's activation prep (gemm_xprep.comp) on sel_gemm_v1_path: f16 hi/lo
 * pairs for the exact cooperative-matrix gemm, f16 values for its serving variant, f32 for the FMA
 * twin (struct sel_gemm prep: each product's, gemm_cm2's included). */
const char *sel_gemm_prep(const struct sel *s);
/* Whether a product of `cols` columns over w goes through an f16 copy of its weights (gemm_wdeq).
 */
bool sel_gemm_wdeq_serves(const struct sel *s, int cols, const struct sel_weight *w);
/* gemm_wdeq.comp: Q4_0 blocks a lane. */
uint32_t sel_gemm_wdeq_bpt(const struct sel *s);

/* ---- attention */

/* Attention outside the wide plan's prefill: by kv head (attn_kv.comp) or by q head
 * (attention.comp). */
bool sel_attn_by_kv_head(const struct tune *t, int hd, int64_t keys, int cols, bool prefill);
/* attn_kv.comp's key splits for columns of up to `keys` keys over `wg` (kv heads x columns)
 * workgroups. */
uint32_t sel_attn_splits(const struct tune *t, uint32_t keys, uint32_t wg, uint32_t nt);
/* attn_kv.comp's threads at head dim hd, gq q heads a kv head (fused: with the prep); 0 when the
 * group does not fit the shared memory (attention.comp serves then). */
uint32_t sel_attn_kv_threads(const struct sel *s, uint32_t hd, uint32_t gq, bool fused);
/* attention.comp's subgroups a workgroup at head dim hd. */
uint32_t sel_attn_q_subgroups(const struct sel *s, uint32_t hd, bool fused);
/* The wide prefill attention's tile: query columns bq, threads nt, two KV buffers kv2; false when
 * no tile fits (*need: the shared bytes 8 columns need). */
bool sel_attn_prefill_tile(const struct sel *s, uint32_t hd, int cols, uint32_t *bq, uint32_t *nt,
                           uint32_t *kv2, uint64_t *need);

/* attn_kv.comp's geometry for `cols` columns of up to `keys` keys (fused: with the prep): threads
 * nt, key splits nspl of kper keys each (nspl 1: none, kper 0), and the bytes of the splits'
 * partial outputs (0 without splits). false where attention.comp serves instead (sel_attn_by_kv_head
 * says so, or the kv head's group does not fit the shared memory). */
struct sel_attn_kv {
    uint32_t nt, nspl, kper;
    uint64_t part; /* f32 [cols][n_h][nspl][hd + 2] */
};
bool sel_attn_kv(const struct sel *s, int n_h, int n_kv, int hd, int64_t keys, int cols, bool prefill,
                 bool fused, struct sel_attn_kv *out);
/* Whether a step's attention takes its prep fused (kernels.h k_attn_step): one column a slot
 * (n_runs == cols) outside the spec plan. */
bool sel_attn_fuses_prep(const struct sel *s, int cols, int n_runs);

/* ---- device scratch (select_scratch.c): the bytes the chosen kernels use, from the same rules
 * that choose them. The engine sizes its scratch (kernels.h struct k_scratch) as the max over a
 * step's products before it builds the plan; the kernels take their ranges from it. */

struct sel_scratch {
    uint64_t gemm_x;    /* the gemm's prepared activations x' (gemm_xprep.comp): f32 [cols][k] */
    uint64_t gemm_w;    /* one product's f16 copies of its Q4_0 weights (gemm_wdeq.comp): the
                           bytes of one half of the two-half buffer */
    uint64_t attn_part; /* attn_kv.comp's key splits' partial outputs (sel_attn_kv part) */
    uint64_t gemm_part; /* gemm_cm2's split-k partial planes: SEL_PRODUCT_MAX slices of the
                           largest product's (sel_gemm_cm2_part_bytes), product i of a call in
                           slice i, each slice a plan buffer of its own (kernels.h k_scratch_bufs)
                           so that the products of one input run side by side */
};
/* acc = the field-wise max of acc and b. */
void sel_scratch_max(struct sel_scratch *acc, const struct sel_scratch *b);

/* The f16 copies of the weights w[0..n) at `cols` columns: wide[i] whether w[i] takes one
 * (sel_gemm_wdeq_serves), at[i] its offset (each copy 256-aligned); returns their bytes. */
uint64_t sel_gemm_wdeq_layout(const struct sel *s, int cols, int n, const struct sel_weight w[], bool wide[],
                              uint64_t at[]);
/* The bytes of the prep of n gemm products of one x [cols][k] (c: their sel_gemm choices; norm:
 * an input RMSNorm): 0 where none runs (the FMA twin with no norm and nothing to zero, or every
 * product reads the plain x). */
uint64_t sel_gemm_prep_bytes(const struct sel *s, bool norm, int n, const struct sel_gemm c[], int64_t k, int cols);
/* Whether k_matmul_multi's n products of one x go through the gemm with one prep: more than one,
 * each one the gemm serves, all of one k, and on cm2 all on gemm_cm2 or all on its fallback
 * (their preps differ). */
bool sel_gemm_multi(const struct sel *s, int n, const struct sel_weight w[], int cols);

/* One call of the matrix helpers (kernels.h): k_matmul / k_matmul_norm (n 1), k_matmul_swiglu
 * (n 2, swiglu: w[0] gate, w[1] up), k_matmul_multi (n 1..4, accumulate false). */
#define SEL_PRODUCT_MAX 4
struct sel_product {
    int n;
    struct sel_weight w[SEL_PRODUCT_MAX];
    bool swiglu, norm, accumulate;
    int cols;
};
/* The scratch one such call takes. A shape the kernels refuse counts 0 (the build says why). */
struct sel_scratch sel_product_scratch(const struct sel *s, const struct sel_product *m);
/* The scratch of one step's attention (kernels.h k_attn_step) of `cols` columns in n_runs runs. */
struct sel_scratch sel_attn_scratch(const struct sel *s, int n_h, int n_kv, int hd, int64_t keys, int cols,
                                    int n_runs, bool prefill);

/* ---- convs */

/* Whether a conv rides in the epilogue of its in_proj w_in of `cols` columns in n_runs runs. */
bool sel_conv_fuses(const struct sel *s, const struct sel_weight *w_in, int cols, int n_runs);

#endif
