/* kernels.h - the compute kernels of the engine and the host helpers that append one of them to a
 * plan (pipeline from the device's subgroup size and shared memory, push constants, group counts,
 * tags). Each kernel's first lines in shaders/<name>.comp say what it computes and how it is laid
 * out over the grid; the push-constant structs below mirror the GLSL blocks byte for byte
 * (scalar layout: 64-bit addresses first, then 32-bit fields).
 *
 * Device data layouts (the contract with plans and uploads):
 *  - activations: f32 row-major [cols][dim];
 *  - weights: row-major torch [rows, k] (y = x Wᵀ). F32/F16/BF16 plain. Q8_0/Q4_0 REPACKED (see
 *    weight_repack): with nb = k/32 blocks per row, first all quant bytes row-major by block (Q4_0:
 *    16 bytes a block, byte j = elem j low nibble | elem j+16 high nibble; Q8_0: 32 int8), then at
 *    byte rows*nb*16 (Q4_0) or rows*nb*32 (Q8_0) the f16 scales [rows][nb];
 *  - column metadata: struct col_meta per column, struct run_meta per run (slot) of a step;
 *  - recurrent state per layer: n_snap entries a slot, [n_slots][n_snap][entry] (n_snap = 1 unless
 *    the engine serves speculative steps); struct slot_meta per slot says which entry holds the
 *    committed state (struct k_state, engine.h "Speculative steps");
 *  - short-conv state entry: f32 [2][H] ([0] = u at t-2, [1] = u at t-1);
 *  - KV pool per attention layer: k and v f32 [n_blocks][16][n_kv*hd]; block table u32
 *    [n_slots][max_blocks] (block j of a slot holds its positions 16j .. 16j+15). */
#ifndef LFM2_KERNELS_H
#define LFM2_KERNELS_H

#include "common.h"
#include "gpu.h"
#include "loader.h"
#include "model.h"
#include "plan.h"
#include "select.h"

#define K_MAX_HEAD_DIM 256
/* columns of a run one invocation of the wide plan's convolutions takes (shortconv_wide.comp,
 * dn_conv.comp WIDE: their J, a specialization constant; >= the taps - 1; bench/25) */
#define K_WIDE_CONV_COLS 8

/* A weight on the device. 1-D tensors (norm gains): rows = 1, k = length. */
struct gpu_weight {
    uint64_t addr;    /* device address of byte 0 (256-aligned from gpu_alloc) */
    enum dtype dtype; /* DT_F32 DT_F16 DT_BF16 DT_Q8_0 DT_Q4_0 */
    int64_t rows, k;  /* torch shape [rows, k] */
    uint64_t bytes;   /* device bytes (== file bytes; Q types repacked) */
};

/* One column of a step (u32 each, 16 bytes). */
struct col_meta {
    uint32_t token;      /* token id (embedding row) */
    uint32_t pos;        /* position in its slot's sequence */
    uint32_t slot;       /* KV / recurrent-state slot */
    uint32_t need_logit; /* 1 when the head computes its logits */
};

/* The columns of one slot in a step: contiguous, at positions pos0 .. pos0+n_cols-1 (16 bytes). */
struct run_meta {
    uint32_t slot;
    uint32_t first_col;
    uint32_t n_cols;
    uint32_t pos0;
};

/* One slot's bookkeeping of speculative steps (16 bytes; engine.h "Speculative steps"). Kernels
 * read only cur; the rest is the engine's, kept beside it so that one copy a step uploads it. */
struct slot_meta {
    uint32_t cur;   /* state entry (0 .. n_snap-1) holding the slot's committed state */
    uint32_t pos;   /* the slot's next position (its committed length) */
    uint32_t draft; /* columns of the last spec step not yet committed (0: none) */
    uint32_t pad;
};

/* Where a per-slot recurrent state lives: slot s, entry e at addr + (s·n_snap + e)·entry bytes. */
struct k_state {
    uint64_t addr;     /* entry 0 of slot 0 */
    uint64_t slots;    /* struct slot_meta [n_slots] on the device; 0: every slot uses entry 0 */
    uint32_t n_snap;   /* entries a slot (1: no snapshots) */
};

/* How a kernel with state writes it (its shader's `mode`): batch and wide plans write a run's final
 * state back into entry cur; spec plans a snapshot after every column into the entries after cur
 * (kinds *.snap; n_snap >= 2, else ST_USAGE naming `what` and the snapshots);
 * LFM2_TEST_SKIP_SNAPSHOT (tuning.h) makes a spec plan write none. */
enum { K_STATE_COMMIT = 0, K_STATE_SNAP = 1, K_STATE_NO_WRITE = 2 };
int k_state_mode(const struct plan *p, const struct k_state *state, const char *what, uint32_t *mode,
                 struct err *e);

/* The shapes of a model's shard that no GPU could run (attention heads and head dim, DeltaNet
 * geometry, a matrix whose k is not whole 16-byte slots of its type), checked GPU-free once the
 * shard is bound, so they are refused before the GPU opens; the device's subgroup size is checked
 * when the plan is built. ST_USAGE naming the model and the kernel. */
int k_model_check(const struct model_desc *d, const struct shard *s, struct err *e);

/* ---- weights on the host */

/* Device bytes of a [rows, k] weight of type t (same as in the file). */
uint64_t weight_bytes(enum dtype t, int64_t rows, int64_t k);
/* Writes bytes [at, at+n) of the device layout of a [rows, k] weight of type t, given the file's
 * bytes `file_blocks` (for Q8_0/Q4_0 the file's interleaved blocks; other types are copied). */
void weight_repack(enum dtype t, int64_t rows, int64_t k, const uint8_t *file_blocks, uint64_t at, uint64_t n,
                   uint8_t *out);
/* Element (row, i) of a weight in the device layout, widened (tests and golden checks). */
float weight_get(enum dtype t, int64_t rows, int64_t k, const uint8_t *dev, int64_t row, int64_t i);

struct k_attn_geom;
/* ---- FLOP counts (flops.c, no GPU): what the dispatches' flops and flops_exec hold (plan.h) */

/* A product of a [rows, k] weight with cols columns: 2·rows·k·cols; SwiGLU (two weights of that
 * shape) twice that, its gate's element work not counted. */
uint64_t k_product_flops(int64_t rows, int64_t k, int64_t cols, bool swiglu);
/* Products the gemm executes per useful one: on cooperative matrices the activations enter as f16
 * high and low parts (two products), and F32 and Q8_0 weights as high and low parts too (a third,
 * w_lo·x_hi: gemm.comp's header); 1 for the FMA twin and every other product kernel. */
uint32_t k_gemm_exec_mult(bool coopmat, enum dtype t);
/* Attention: the FLOPs of one (column, key) pair, QK and PV over the q heads: 4·n_h·hd (the
 * softmax's element work not counted). */
uint64_t k_attn_pair_flops(const struct k_attn_geom *a);
/* The (column, key) pairs of a step's causal attention: a run's n_cols columns sit at positions
 * pos0 .. pos0 + n_cols - 1 and each attends to the keys up to its own: Σ n·pos0 + n(n+1)/2. */
uint64_t k_attn_step_pairs(const struct run_meta *runs, int n_runs);
/* A causal depthwise conv of `channels` channels and `taps` taps over cols columns: 2·taps·channels·cols. */
uint64_t k_conv_flops(int64_t channels, int taps, int64_t cols);

/* ---- host helpers: each appends one or more dispatches to p (tags: kind, layer, op, weight bytes).
 * They return ST_USAGE for shapes the kernel does not serve (message names the value) and
 * ST_RUNTIME when the pipeline cannot be made. */

/* embed: out[c][:] = widen(E[cols[c].token][:]) for c < cols. Kind "embed.<dtype>", layer -1.
 * push (40 B): u64 table, u64 cols (col_meta), u64 out, u32 dim, u32 rows (vocab), u32 dtype,
 * u32 n_cols. */
int k_embed(struct gpu *g, struct plan *p, const struct gpu_weight *table, uint64_t cols_meta, uint64_t out,
            int cols, struct err *e);

/* rmsnorm: y[r][:] = w ⊙ x[src(r)][:] / sqrt(mean(x[src(r)]²) + eps) for r < n_rows, with (1 + w)
 * when plus1; src(r) = idx[r] when idx != 0 (u32 list: gather of logit columns), else r.
 * Kind "<kind_prefix>rmsnorm". push (48 B): u64 x, u64 y, u64 w, u64 idx, u32 dim, u32 wdtype,
 * float eps, u32 flags (1: plus1, 2: accumulate, for k_rmsnorm_add). One workgroup per output row. */
int k_rmsnorm(struct gpu *g, struct plan *p, const struct gpu_weight *w, uint64_t x, uint64_t y, uint64_t idx,
              int n_rows, float eps, bool plus1, int layer, const char *op, const char *kind_prefix, struct err *e);
/* rmsnorm_add: y[r][:] += w ⊙ x[r][:] / sqrt(mean(x[r]²) + eps) for r < n_rows (a norm between a
 * projection and the residual add, GLM's post-norms; x and y distinct). Kind "rmsnorm_add". */
int k_rmsnorm_add(struct gpu *g, struct plan *p, const struct gpu_weight *w, uint64_t x, uint64_t y, int n_rows,
                  float eps, bool plus1, int layer, const char *op, struct err *e);

/* Optional input RMSNorm fused into a matmul: x is read as w ⊙ x / rms(x) (w = NULL: none). */
struct k_norm {
    const struct gpu_weight *w; /* gain [K], F32/F16/BF16 */
    float eps;
    bool plus1; /* (1 + w) */
};

/* matmul: y[c][n] (+)= Σ_k W[n][k]·x'[c][k] for c < cols, n < rows, x' = x or its RMSNorm (norm).
 * x f32 [cols][k], y f32 [cols][rows]; accumulate adds into y (fused residual). Kind
 * "<kind_prefix>matmul.<dtype>". k must be a multiple of 4 (F32), 8 (F16/BF16) or 32 (Q types).
 * push (80 B): u64 w, u64 wscale, u64 w3, u64 w3scale, u64 x, u64 y, u64 gain, u32 rows, u32 k,
 * u32 accumulate, u32 gdtype, float eps, u32 plus1 (w3* only in the SwiGLU variant; gain 0: no norm;
 * wscale: address of the f16 scales for Q types, else 0). */
int k_matmul(struct gpu *g, struct plan *p, const struct gpu_weight *w, uint64_t x, uint64_t y, int cols,
             bool accumulate, int layer, const char *op, const char *kind_prefix, struct err *e);
/* The same with a fused input RMSNorm (norm may be NULL). */
int k_matmul_norm(struct gpu *g, struct plan *p, const struct gpu_weight *w, const struct k_norm *norm, uint64_t x,
                  uint64_t y, int cols, bool accumulate, int layer, const char *op, const char *kind_prefix,
                  struct err *e);
/* Fused SwiGLU: y[c][n] = silu(W1 x')[n] · (W3 x')[n] (w1, w3 same shape and type), each weight read
 * once. Kind "<kind_prefix>matmul_swiglu.<dtype>", bytes = both weights. */
int k_matmul_swiglu(struct gpu *g, struct plan *p, const struct gpu_weight *w1, const struct gpu_weight *w3,
                    const struct k_norm *norm, uint64_t x, uint64_t y, int cols, int layer, const char *op,
                    const char *kind_prefix, struct err *e);

/* Up to K_MULTI_MAX products of one input x' (q/k/v; Qwen3.5's DeltaNet qkv/z/b/a): y[i] = W_i x'.
 * Where matvec.comp or qmv.comp serves the step (below), n <= 3 and the weights share type and k, one dispatch
 * over the weights stacked (op fused_op, kind "matmul.<dtype>", bytes = all weights, n outputs).
 * In a wide plan where the gemm serves every product (below) and the weights share k: one
 * gemm_xprep for all (op fused_op: x' made once, every split output zeroed), then n gemm dispatches
 * named ops[i] with no barrier between them. Else n k_matmul_norm calls named ops[i]. */
#define K_MULTI_MAX SEL_PRODUCT_MAX /* 4 */
int k_matmul_multi(struct gpu *g, struct plan *p, int n, const struct gpu_weight *const w[], const uint64_t y[],
                   const struct k_norm *norm, uint64_t x, int cols, int layer, const char *const ops[],
                   const char *fused_op, struct err *e);

/* matvec.comp, the other matrix-vector kernel (a subgroup per 1..4 rows, lanes over k, partial sums
 * met by subgroupAdd, each weight slot dequantized once in registers for every column), serves what
 * it measured faster on (select.c matvec_serves, bench/12): q/k/v as one product up to
 * K_MATVEC_COLS columns, and at one column the matrices with many rows per k (the LM head; Q4_0/Q8_0
 * conv.in_proj, Q4_0 SwiGLU). The kernel serves up to K_MATVEC_MAX_COLS (--tune matvec_cols, tests). */
/* qmv.comp serves Q4_0 products at one column (select.c qmv_serves, bench/16; single, SwiGLU
 * pair, q/k/v stacked; same kinds as above) and, under --tune qmv_cols, every Q4_0/Q8_0 product up to
 * K_QMV_COLS columns: x staged in shared memory per workgroup, each weight byte read once,
 * coalesced, for every column. */
/* xmv.comp serves, before qmv and matvec, the 1-2 column Q8_0 products but the LM head, the 1-8
 * column Q4_0 products (in passes of at most K_XMV_COLS columns: the x it holds in registers), and
 * BF16's q/k/v stacked and LM head at one column, with k <= 4096, or Q4_0's longer k split over
 * workgroups whose sums add into y (products with no norm that add into y, not SwiGLU) (where it
 * measured faster, bench/22-24), and under --tune xmv_cols=N every product
 * of up to N columns whose x fits the shared memory: each lane holds the x elements of its k
 * positions in registers and streams rows past them (same kinds as above). k_xmv_serves: whether it
 * serves a product of `cols` columns over `rows` stacked rows of weights like w (swiglu: a gate/up
 * pair; split_ok: no norm and y += result) in plan p (tests). */
bool k_xmv_serves(const struct gpu *g, const struct plan *p, int cols, const struct gpu_weight *w,
                  bool swiglu, uint64_t rows, bool split_ok);

/* In a wide plan (p->kind == PLAN_WIDE) the three matmul helpers above serve steps of at least
 * sel_gemm_min_cols columns with gemm.comp, the tiled matrix product (narrower steps keep matmul.comp):
 * same arguments, same function, same layouts, each weight tile read once per column tile and met
 * in L2 by the other column tiles (k_matmul_multi: one prep for several products of one x, above). Up to
 * two dispatches: gemm_xprep.comp (kind
 * "<kind_prefix>gemm_xprep", 0 weight bytes) writes x' once (norm applied; f16 hi/lo pairs for
 * cooperative matrices, f32 for the twin, which reads a plain x directly when there is no norm
 * and no split) into the plan's scratch (struct k_scratch gemm_x), and zeroes y for a split product
 * that does not accumulate; then the gemm, grid (ceil(cols/BN), ceil(rows/BM), k splits), tiles
 * and splits chosen per shape (select.c sel_gemm; bench/06, bench/11). Three paths, one picked
 * per device and tune (k_gemm_path below):
 *  - cooperative matrices with a 16x16x16 f16*f16+f32 subgroup shape, on VK_KHR_cooperative_matrix
 *    (kinds "<kind_prefix>gemm_khr.<dtype>", "<kind_prefix>gemm_khr_swiglu.<dtype>") or
 *    VK_NV_cooperative_matrix (kinds "<kind_prefix>gemm.<dtype>", "<kind_prefix>gemm_swiglu.<dtype>"),
 *    one source (shaders/coopmat.glsl), the same tiles and numbers; x' enters as f16 hi + lo
 *    parts (and F32/Q8_0 weights as hi + lo too), so results stay f32-accurate (bench/06); Q4_0's
 *    q·d is rounded to f16 (bench/31), from K_GEMM_WDEQ_COLS columns into an f16 copy of the weights first
 *    (k_gemm_wdeq, kind "<kind_prefix>gemm_wdeq.q4_0", then the F16 product tagged as Q4_0's);
 *  - the shared-memory FMA twin everywhere else (lavapipe, CI), or with --tune gemm_path=fma:
 *    kinds "<kind_prefix>gemm_fma.<dtype>", "<kind_prefix>gemm_fma_swiglu.<dtype>"; plain f32.
 * Split sums go into y by float atomic add where the device has it (gpu.h has_float_atomic_add),
 * else by a compare-and-swap loop. push (88 B): matmul's 80 bytes (gain not read), then u32 cols,
 * u32 kper (k per split). */
/* ---- the kernels' device scratch: buffers that some kernels write and read back within a step
 * (the gemm's prepared activations, its f16 copies of Q4_0 weights, attention's split outputs).
 * The engine owns them and sizes them before it builds a plan, from the same rules that choose
 * the kernels (select.h sel_product_scratch, sel_attn_scratch, through k_matmul_scratch and
 * k_attn_scratch below); the plan carries them (plan.h scratch) and the helpers take their ranges
 * from there, allocating nothing. A helper whose range is missing or short fails with ST_RUNTIME
 * naming the op and both sizes (a sizing that missed a product). */
struct k_scratch {
    struct gpu_buf gemm_x;    /* the gemm's prepared x' (gemm_xprep.comp), the widest product's */
    struct gpu_buf gemm_w;    /* f16 copies of Q4_0 weights (gemm_wdeq.comp): two halves, each the
                                 largest product's copies, taken in turn (gemm_w_half: the next), so
                                 a widening runs beside the product before it */
    struct gpu_buf attn_part; /* attn_kv.comp's key splits' partial outputs */
    struct gpu_buf gemm_part; /* gemm_cm2's split-k partial planes (a plan buffer: k_scratch_bufs) */
    int gemm_w_half;          /* set to 0 when a build starts */
};

/* The choice context (select.h) of a plan of kind `kind` on g. */
struct sel k_sel(const struct gpu *g, enum plan_kind kind);
/* The scratch one call of the matrix helpers takes in a plan of kind `kind`, with the same
 * arguments: k_matmul (n 1, no norm), k_matmul_norm (n 1), k_matmul_swiglu (n 2: w1, w3; swiglu),
 * k_matmul_multi (n 1..K_MULTI_MAX, accumulate false). norm may be NULL. */
struct sel_scratch k_matmul_scratch(const struct gpu *g, enum plan_kind kind, int n, const struct gpu_weight *const w[],
                                    bool swiglu, const struct k_norm *norm, bool accumulate, int cols);
/* Makes sc hold `need`: each buffer smaller than asked is allocated anew at the size asked
 * (gemm_w: two halves of need->gemm_w); the ones it replaces stay allocated (plans built on them
 * keep their addresses) until gpu_close or gpu_release. */
int k_scratch_reserve(struct gpu *g, const struct sel_scratch *need, struct k_scratch *sc, struct err *e);
/* The wide plan's gemm path on g with its tune for steps of cols columns (cols <= 0: any width;
 * select.c sel_gemm_path over gpu.h gemm_khr, gemm_nv, has_coopmat2): ST_USAGE naming the device
 * and the missing extension where --tune gemm_path forces a path it lacks (main checks it once the
 * tune is set). */
int k_gemm_path(const struct gpu *g, int cols, enum gemm_path *path, struct err *e);
/* The line --list-devices prints for a device with these paths (tune automatic), e.g. "khr (gemm_khr:
 * VK_KHR_cooperative_matrix; automatic, --tune gemm_path=khr|nv|fma|cm2 picks)", and with cm2
 * (gemm_cm2 usable) the serving precision's path after it, from K_CM2_AUTO_COLS columns (gpu_gemm_path_fn). */
const char *k_gemm_path_auto(bool khr, bool nv, bool cm2);
/* The scratch ranges that dispatches write and the engine should treat as plan buffers (plan.h):
 * the two halves of gemm_w once it exists, and the K_MULTI_MAX slices of gemm_part once it
 * exists. Returns how many (<= K_SCRATCH_BUFS) it wrote to lo/hi. */
#define K_SCRATCH_BUFS (2 + K_MULTI_MAX)
/* The bytes of one slice of gemm_part (a product's split-k planes: sel_scratch gemm_part). */
uint64_t k_scratch_part_slice(const struct k_scratch *sc);
int k_scratch_bufs(const struct k_scratch *sc, uint64_t lo[K_SCRATCH_BUFS], uint64_t hi[K_SCRATCH_BUFS]);

/* gemm_wdeq.comp: n (1..4) Q4_0 weights widened into f16 copies (F16 device layout [rows][k]) at
 * out[i] (16-byte aligned), q·d rounded to nearest; one dispatch, kind
 * "<kind_prefix>gemm_wdeq.q4_0", the weights' bytes. The wide plan's Q4_0 products use it (above). */
int k_gemm_wdeq(struct gpu *g, struct plan *p, int n, const struct gpu_weight *const w[], const uint64_t out[],
                int layer, const char *op, const char *kind_prefix, struct err *e);

/* ---- gemm_cm2 (gemm_cm2.c): the matrix product on VK_NV_cooperative_matrix2 (shaders/gemm_cm2.comp,
 * its SPIR-V committed in shaders/prebuilt): y[c][n] (+)= Σ_k W[n][k]·x[c][k] for c < cols, n < rows,
 * or with a SwiGLU pair y[c][n] = silu(W x)[n]·(W3 x)[n]; W (and W3) F16, BF16, Q8_0 or Q4_0
 * [rows][k] (device layout above; Q types: k a multiple of 32, decoded in the load, q·d rounded to
 * f16, Q8_0's split into hi + lo in the exact modes); x per enum k_cm2_x; y f32 [cols][rows];
 * weights, x, y 16-byte aligned. Workgroup-scope matrices loaded from global memory with tensor
 * layouts (the driver stages them), any rows, k, cols. One dispatch, kind "<variant>.<dtype>" with
 * variant gemm_cm2 / gemm_cm2_exact / gemm_cm2_xf16 / gemm_cm2_prep (+ "_swiglu"), the weights'
 * bytes; with k splits (tile splits > 1: select.h sel_cm2_tile) the product's grid z is the
 * splits, the first writes y, the others planes of m->part (sel_gemm_cm2_part_bytes of it, a plan
 * buffer), then a second dispatch, kind "gemm_cm2_reduce", adds the planes into y
 * (gemm_reduce.comp). The wide plan's gemm (gemm.c) records it on cm2 (select_path.c: PREP x in
 * exact precision, GIVEN_F16 in serving; tagged with the plan's kind prefix and executed
 * products). ST_USAGE on a device without gpu.h has_coopmat2 (SwiGLU: and
 * has_coopmat2_per_element), another dtype, an unaligned address, a tile that does not suit the
 * kernel (tile: NULL for the default rule, select.h sel_gemm_cm2_tile), splits without part or
 * with a SwiGLU pair. push (64 B): u64 w, w3 (0: no SwiGLU), x, y; u32 rows, k, cols, accumulate;
 * u64 part; u32 kper, pad. */
enum k_cm2_x {
    K_CM2_X_SERVING = 0,   /* x f32, rounded to f16 as it is loaded, one product (serving precision) */
    K_CM2_X_EXACT = 1,     /* x f32, split into f16 hi + lo as it is loaded, two products (f32-accurate) */
    K_CM2_X_GIVEN_F16 = 2, /* x is f16 [cols][k] already (a plain tensor load) */
    K_CM2_X_PREP = 3,      /* x as gemm_xprep.comp makes it for cooperative matrices (f16 hi/lo pairs
                              [cols][k/4] of 16 bytes, the wide plan's prepared x, its norm applied):
                              two plain loads, exact; k a multiple of 4 */
};
struct k_cm2_product {
    const struct gpu_weight *w;  /* W [rows][k] */
    const struct gpu_weight *w3; /* SwiGLU's up weight (same shape and type; x served or prepared,
                                    Q8_0 served only), NULL: a single product */
    uint64_t x, y;
    int cols;
    bool accumulate; /* y += W x (the residual; not with w3) */
    enum k_cm2_x xmode;
    uint64_t part;   /* the split-k planes (tile splits > 1), else 0 */
};
int k_gemm_cm2(struct gpu *g, struct plan *p, const struct k_cm2_product *m, const struct sel_cm2_tile *tile,
               int layer, const char *op, struct err *e);
/* The tile and splits k_gemm_cm2 takes by default for a product of `rows` x `k` at `cols` columns
 * (pair: a SwiGLU pair; prep: the PREP mode): select.h sel_gemm_cm2_tile on g. */
struct sel_cm2_tile k_gemm_cm2_tile(const struct gpu *g, int64_t rows, int64_t k, int cols, bool pair, bool prep);

/* shortconv: per run r and channel h: u = B⊙X over the run's columns, conv = w0·u(t-2) + w1·u(t-1) +
 * w2·u(t) (earlier u from the slot's committed entry cur), y[c][h] = C·conv. bcx f32 [cols][3H] =
 * [B | C | X], conv weight [H][3] F32/F16/BF16, y f32 [cols][H]; the n_runs runs cover the step's
 * cols columns. Batch plans: the last two u go back into entry cur, kind "shortconv" (a run's
 * positions one after another); wide plans (p->kind == PLAN_WIDE): the same, parallel over
 * positions, kind "shortconv.wide". Spec plans (p->kind == PLAN_SPEC, n_snap >= 2):
 * after column i of a run the window goes into entry (cur + i + 1) mod n_snap and entry cur is
 * left alone, kind "shortconv.snap" (runs of at most n_snap - 1 columns: the engine checks).
 * Test hook: LFM2_TEST_SKIP_SNAPSHOT set (read once) drops the snapshot writes.
 * push (72 B): u64 bcx, w, state, y, runs, slots; u32 H, n_runs, wdtype, n_snap, mode, pad. */
int k_shortconv(struct gpu *g, struct plan *p, const struct gpu_weight *conv_w, uint64_t bcx,
                const struct k_state *state, uint64_t y, uint64_t runs, int cols, int n_runs, int layer,
                const char *op, struct err *e);

/* Whether a conv rides in the epilogue of its in_proj of `cols` columns in n_runs runs
 * (k_conv_step, k_dn_conv_step): where every slot holds one column (n_runs == cols: decode)
 * outside the spec plan and matmul.comp serves the in_proj (at most K_MATMUL_MAX_COLS columns). */
bool k_conv_fuses(const struct gpu *g, const struct plan *p, const struct gpu_weight *w_in, int cols, int n_runs);

/* LFM2's conv.in_proj (x' = rms(x)·gain) and its short conv: k_matmul_norm into bcx then
 * k_shortconv into y, or, where k_conv_fuses (and the taps are plain), one dispatch of
 * matmul.comp CONV 1: a row group owns one channel's three rows and its epilogue runs the conv and
 * writes y [cols][H] and the state (bcx is then not written). Kind "matmul_shortconv.<dtype>", op
 * conv.in_proj, bytes in_proj's and the taps'. One dispatch fewer a conv layer (bench/27).
 * cols_meta: struct col_meta [cols] (the slots). push (128 B): matmul.comp's block, then u64
 * state, conv_w, colmeta, slots; u32 H, wdtype | n_snap << 8, K, stride (CONV 2 only). */
int k_conv_step(struct gpu *g, struct plan *p, const struct gpu_weight *w_in, const struct k_norm *norm, uint64_t x,
                const struct gpu_weight *conv_w, const struct k_state *state, uint64_t bcx, uint64_t y, uint64_t runs,
                uint64_t cols_meta, int cols, int n_runs, int layer, struct err *e);

/* Attention geometry of one layer. */
struct k_attn_geom {
    int n_h, n_kv, hd;   /* q heads, kv heads (n_h % n_kv == 0), head dim (<= 256, multiple of the
                            subgroup size) */
    int rope_dims;       /* rotated dims of each head (even, <= hd) */
    float theta;         /* RoPE base */
    float eps;           /* q/k RMSNorm epsilon */
    float scale;         /* softmax scale, usually hd^-1/2 */
    bool plus1;          /* q/k norm gain is (1 + w) */
    bool interleaved;    /* RoPE pairs (2i, 2i+1) instead of NeoX halves (i, i + rope_dims/2) */
    bool no_norm;        /* skip the q/k RMSNorm */
    int max_blocks;      /* block-table row length */
    bool gated;          /* Qwen3.5: q rows are [n_h][2*hd] (q, then its output gate); attention
                            writes o ⊙ σ(gate). Kind "attn.gated.decode" / "attn.gated.prefill" */
};

/* attn.prep: per column c (slot s, pos t): q[c] and k[c] per head RMSNormed (q_norm/k_norm [hd])
 * and rotated at t; q in place; k and v[c] written to the pools at (s, t) through the block
 * table. Kind "attn.prep". push (112 B): u64 q, k, v, qn, kn, kpool, vpool, btab, cols; u32 n_h,
 * n_kv, hd, rope_dims, max_blocks, flags (1 norm, 2 plus1, 4 interleaved, 8 gated), gdtype; float eps,
 * r_hi, r_lo (theta^(-2/rope_dims) as a float-float pair). */
int k_attn_prep(struct gpu *g, struct plan *p, const struct k_attn_geom *a, const struct gpu_weight *q_norm,
                const struct gpu_weight *k_norm, uint64_t q, uint64_t k, uint64_t v, uint64_t kpool,
                uint64_t vpool, uint64_t btab, uint64_t cols_meta, int cols, int layer, struct err *e);

/* attention: out[c][h] = Σ_j softmax_j(scale · q[c][h]·k_j) v_j over positions j = 0 .. pos(c) of
 * the column's slot, kv head h / (n_h / n_kv). Kind "attn.prefill" or "attn.decode".
 * Where select.h sel_attn_by_kv_head says no, attention.comp: a workgroup per (q head, column); where
 * it says yes, attn_kv.comp: a workgroup per (kv head, column, key split), the kv head's q heads together;
 * where kv heads × columns fall short of K_ATTN_SPLIT_WG workgroups and a column's keys pass two
 * chunks (of 128), its keys are split and a second dispatch (attn_merge.comp, kind "attn.merge" /
 * "attn.gated.merge") combines the splits (bench/35). push (both: 128 B; the first 72 B:
 * u64 q, kpool, vpool, btab, cols, out; u32 n_h, n_kv, max_blocks; float scale; u32 gated, kper).
 * A prefill in a PLAN_WIDE plan runs attn_prefill.comp instead (tiled over queries × keys, gated
 * or not; push 80 B: the same + u32 n_cols, u32 pad); the columns of a slot must then be
 * successive.
 */
int k_attention(struct gpu *g, struct plan *p, const struct k_attn_geom *a, uint64_t q, uint64_t kpool,
                uint64_t vpool, uint64_t btab, uint64_t cols_meta, uint64_t out, int cols, bool prefill,
                int layer, struct err *e);

/* One step's attention from the projections: attn.prep then attention (above), or, where every
 * slot holds one column of the step (n_runs == cols: decode) outside the spec plan, one dispatch of
 * attention.comp or attn_kv.comp (above) with the prep fused in (kind "attn.decode_prep" /
 * "attn.gated.decode_prep", the gains' bytes; with key splits the merge follows): each workgroup
 * norms and rotates its q head(s) and its kv head's k itself, and one workgroup of the kv head (the
 * first q head's; attn_kv: the one whose keys hold pos) writes k and v into the pools; q is left as
 * it was. One dispatch fewer a layer (bench/26). The
 * push block of both (128 B): attention's 72, then u64 k, v, qn, kn; u32
 * flags (attn.prep's 1, 2, 4) | gain dtype << 4 | rope_dims << 8; float eps, r_hi, r_lo (zeros
 * unfused); u64 part (the splits' outputs, struct k_scratch attn_part). */
int k_attn_step(struct gpu *g, struct plan *p, const struct k_attn_geom *a, const struct gpu_weight *q_norm,
                const struct gpu_weight *k_norm, uint64_t q, uint64_t k, uint64_t v, uint64_t kpool, uint64_t vpool,
                uint64_t btab, uint64_t cols_meta, uint64_t out, int cols, int n_runs, bool prefill, int layer,
                struct err *e);
/* The scratch k_attn_step takes with the same arguments in a plan of kind `kind` (k_attention's:
 * n_runs 0, its prep never fused). */
struct sel_scratch k_attn_scratch(const struct gpu *g, enum plan_kind kind, const struct k_attn_geom *a, int cols,
                                  int n_runs, bool prefill);

/* How winit draws values before storing them as the weight's dtype. */
enum winit_mode {
    WINIT_NORMAL = 0,      /* b + a·N(0, 1) (a = std, b = offset) */
    WINIT_UNIFORM = 1,     /* uniform in [a, b) */
    WINIT_LOG_UNIFORM = 2, /* log(uniform in [a, b)), a > 0 */
};

/* winit: fills weight w on the device from (seed, tensor id): element e of the row-major tensor
 * gets a value from a counter-based hash of (seed, tensor, e), stored as w's dtype (Q types
 * quantized per 32-block into the repacked layout). Kind "winit", layer -1. push (40 B): u64 w,
 * u32 rows, u32 k, u32 seed, u32 tensor, u32 dtype, u32 mode, float a, float b. */
int k_winit(struct gpu *g, struct plan *p, const struct gpu_weight *w, uint32_t seed, uint32_t tensor,
            enum winit_mode mode, float a, float b, struct err *e);

/* ---- Gated DeltaNet (Qwen3.5; deltanet.c). One state entry of a DeltaNet layer, f32:
 * [nv][dk][dv] delta-rule state S, then the conv window [K-1][C] (the last K-1 pre-conv qkv rows,
 * oldest first), C = 2·nk·dk + nv·dv channels; entries follow each other at k_dn_state_bytes, n_snap
 * a slot (struct k_state). Both kernels read entry cur of each slot; batch and wide plans write the
 * run's final state back there, spec plans (n_snap >= 2) write the state after column i of a run
 * into entry (cur + i + 1) mod n_snap and leave entry cur alone (kinds *.snap; runs of at most
 * n_snap - 1 columns: the engine checks). Test hook: LFM2_TEST_SKIP_SNAPSHOT drops those writes. */

/* DeltaNet geometry of one layer. */
struct k_dn_geom {
    int nk, nv, dk, dv; /* key heads, value heads (nv % nk == 0), head dims */
    int conv;           /* conv taps K (<= 8) */
    bool gguf;          /* GGUF layout: A holds -exp(A_log); value heads tiled (vh uses key head vh % nk,
                           instead of vh / (nv/nk)) */
};
uint64_t k_dn_state_bytes(const struct k_dn_geom *dn);      /* one entry */
uint64_t k_dn_window_offset(const struct k_dn_geom *dn);    /* bytes from an entry's state to its window */
uint64_t k_dn_channels(const struct k_dn_geom *dn);         /* the conv's channels: 2·nk·dk + nv·dv */

/* The DeltaNet geometry any GPU serves (heads, head dims, taps), for k_model_check. */
int k_dn_shape_check(const struct k_dn_geom *dn, struct err *e);

/* The geometry the DeltaNet kernels serve and a conv weight [channels][conv] F32/F16/BF16 for it
 * (dn.conv's checks, shared with k_dn_conv_step). */
int k_dn_conv_check(const struct k_dn_geom *dn, const struct gpu_weight *conv_w, int n_runs, struct err *e);

/* dn.conv: per run r and channel: y = silu(causal depthwise conv of x with w over the run's rows,
 * the rows before it from the slot's window), window = the run's last K-1 rows. x, y f32
 * [cols][C]; w [C][K] F32/F16/BF16; state: the layer's entries; the n_runs runs cover the step's
 * cols columns. Kind "dn.conv" (a run's positions one after another), "dn.conv.snap" (spec plans),
 * "dn.conv.wide" (wide plans: parallel over positions, the same function).
 * push (80 B): u64 x, w, window, y, runs, slots; u32 C, K, n_runs, wdtype, stride, n_snap, mode, pad. */
int k_dn_conv(struct gpu *g, struct plan *p, const struct k_dn_geom *dn, const struct gpu_weight *conv_w, uint64_t x,
              const struct k_state *state, uint64_t y, uint64_t runs, int cols, int n_runs, int layer, struct err *e);

/* Whether Qwen3.5's DeltaNet conv rides in dn.in_proj_qkv's epilogue: where k_conv_fuses, up to
 * K_DN_CONV_FUSE_COLS columns (bench/32: 3-8 % faster at 1 and 4 columns on an H100, 6-7 % slower
 * at 8 on the H200 and 3 % at 16 on the H100: the epilogue's window traffic for many columns
 * costs more than the dispatch it saves). */
bool k_dn_conv_fuses(const struct gpu *g, const struct plan *p, const struct gpu_weight *w_qkv, int cols, int n_runs);

/* Qwen3.5's dn.in_proj_qkv (x' = rms(x)·gain) with the DeltaNet's conv in its epilogue, where
 * k_dn_conv_fuses (else ST_USAGE: the plan then runs the product and k_dn_conv): matmul.comp CONV 2,
 * whose output (channel, column) goes through dn.conv's batch mode, so y [cols][C] is the conv's
 * output and each slot's window moves on by the column. Kind "matmul_dn_conv.<dtype>", op
 * dn.in_proj_qkv, bytes the product's and the taps'. One dispatch fewer a DeltaNet layer (bench/32).
 * cols_meta: struct col_meta [cols] (the slots). */
int k_dn_conv_step(struct gpu *g, struct plan *p, const struct k_dn_geom *dn, const struct gpu_weight *w_qkv,
                   const struct k_norm *norm, uint64_t x, const struct gpu_weight *conv_w, const struct k_state *state,
                   uint64_t y, uint64_t cols_meta, int cols, int n_runs, int layer, struct err *e);

/* dn.recurrent: the gated delta rule over each run's columns in order (shaders/dn_recurrent.comp):
 * l2-normed q (times dk^-1/2) and k of the value head's key head, β = σ(b), g = A·softplus(a + dt),
 * S ← e^g S, S += k (β(v − Sᵀk))ᵀ, o = Sᵀq. qkv f32 [cols][C] (after dn.conv); b, a f32
 * [cols][nv]; dt, A_log (or ssm_a) [nv] F32/F16/BF16; o f32 [cols][nv·dv]; state: the layer's
 * entries. Kind "dn.recurrent" ("dn.recurrent.snap": a whole state written after every column).
 * push (112 B): u64 qkv, b, a, dt, A, state, o, runs, slots; u32 nk, nv, n_runs, stride, flags
 * (1 tiled heads, 2 A is -exp(A_log)), dtdtype, adtype; float scale; u32 n_snap, mode. */
int k_dn_recurrent(struct gpu *g, struct plan *p, const struct k_dn_geom *dn, const struct gpu_weight *dt,
                   const struct gpu_weight *a_log, uint64_t qkv, uint64_t b, uint64_t a,
                   const struct k_state *state, uint64_t o, uint64_t runs, int n_runs, int layer, struct err *e);

/* dn.norm_gate: o[c][h][:] = w ⊙ o/sqrt(mean(o²) + eps) ⊙ silu(z[c][h][:]) per value head, in
 * place; o, z f32 [cols][nv·dv]; w [dv] F32/F16/BF16 (plain gain). Kind "dn.norm_gate".
 * push (56 B): rmsnorm's, then u64 z. */
int k_dn_norm_gate(struct gpu *g, struct plan *p, const struct k_dn_geom *dn, const struct gpu_weight *w, uint64_t o,
                   uint64_t z, int cols, float eps, int layer, struct err *e);

#endif
