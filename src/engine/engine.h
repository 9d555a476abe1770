/* engine.h - the executor: device state of one shard (activations, recurrent state, paged KV),
 * plans built for a width, and one step = upload the columns, record the plan (and the head) into
 * one command buffer, one submit, one wait, read back logits or hidden.
 *
 * Plans are built once per (width, shape); every buffer they name exists from engine_init on, but
 * the kernels' scratch, which engine_build sizes for the shape before it builds; so a step does no
 * allocation and no descriptor work: only memcpy into the mapped upload buffer and vkCmd*
 * recording. */
#ifndef LFM2_ENGINE_H
#define LFM2_ENGINE_H

#include "gpu.h"
#include "kernels.h"
#include "model.h"
#include "plan.h"
#include "weights.h"

#define KV_BLOCK 16

struct family_plan;

/* Per-layer regions of one kind (recurrent state, KV pools), in layer order, packed into as few
 * buffers as the device's largest allocation allows (a wide step at a long context passes one
 * buffer's 4 GiB on NVIDIA long before the GPU's memory): one layer's region never spans two.
 * --tune pool_max=BYTES (tune.h) lowers the bound (the tests split tiny pools with it). */
#define ENGINE_POOL_BUFS 8
struct engine_pool {
    int n;
    struct gpu_buf buf[ENGINE_POOL_BUFS];
};

/* The device buffers of one shard. Sizes are for max_cols columns. */
struct engine {
    const struct family_plan *fp;
    struct gpu *g;
    const struct model_desc *d;
    const struct shard *s;
    const struct dev_weights *w;
    int max_cols, n_slots, max_pos, max_logits, blocks_per_slot;
    int max_draft, n_snap; /* speculative steps: longest draft a slot; state entries a slot (max_draft + 1) */

    struct gpu_buf hidden;    /* f32 [max_cols][H] residual stream */
    struct gpu_buf xn;        /* f32 [max_cols][H] normed input */
    struct gpu_buf t1, t2;    /* f32 scratch [max_cols][scratch_dim] */
    struct gpu_buf q, k, v;   /* f32 [max_cols][nH*hd], [max_cols][nKV*hd] */
    struct gpu_buf att;       /* f32 [max_cols][nH*hd] */
    struct gpu_buf logits;    /* f32 [max_logits][V] */
    struct gpu_buf cols, runs, logit_idx; /* u32 metadata (struct col_meta, run_meta, u32) */
    struct gpu_buf btab;      /* u32 [n_slots][blocks_per_slot] */
    struct engine_pool state; /* recurrent state of every layer of the shard (zeroed per slot start):
                                 layer l: [n_slots][n_snap][state_bytes(l)] at state_addr[l] */
    uint64_t state_addr[MODEL_MAX_LAYERS];
    struct gpu_buf slot_tab;  /* struct slot_meta [n_slots], uploaded with every step */
    struct engine_pool kv;    /* paged KV of every attention layer: layer l's K and V pools at kv_addr[l] */
    uint64_t kv_addr[MODEL_MAX_LAYERS][2];
    struct gpu_buf up;        /* host-visible: per-step upload (meta + hidden_in) */
    struct gpu_buf down;      /* host-visible: per-step readback (logits or hidden_out) */
    struct k_scratch scratch; /* the kernels' scratch (kernels.h), sized by engine_build before it
                                 builds, for the plans it builds (grown, never shrunk, when a later
                                 shape needs more: plans built before keep the buffers they name) */
    struct plan_bufs bufs;    /* the device buffers above that dispatches write (plan.h), then (from
                                 n_own_bufs) the halves of the scratch's f16 weight copies (gemm_w) */
    int n_own_bufs;
    uint64_t up_cols, up_runs, up_idx, up_hidden; /* offsets in `up` */
    uint64_t up_slots;        /* offset in `up` of the slot table's host copy (the one the engine edits) */
    /* Sampled timing (profiler): a timestamped step brackets only dispatches i (layers then head)
     * with i % ts_stride == ts_phase. 0 / 0 (engine_init): every dispatch. */
    int ts_stride, ts_phase;
};

/* The geometry of one step. */
struct step_shape {
    int cols;            /* columns in the step */
    int n_runs;          /* slots touched (decode: cols; prefill: slots) */
    int n_logits;        /* columns that want a logit (the head's width; 0: no head) */
    bool prefill;        /* tags attention "attn.prefill" instead of "attn.decode" */
    enum plan_kind plan; /* which engine builds the step (PLAN_BATCH by default) */
};

/* What one step reads and writes on the host. */
struct step_io {
    const struct col_meta *cols;  /* [shape.cols] */
    const struct run_meta *runs;  /* [shape.n_runs] */
    const uint32_t *logit_idx;    /* [shape.n_logits] column index of each wanted logit */
    const float *hidden_in;       /* [cols][H] when the shard does not start at layer 0, else NULL */
    float *hidden_out;            /* [cols][H] (may be NULL); read back when the shard does not end at N */
    float *logits;                /* [n_logits][V] (may be NULL) */
};

int engine_init(struct engine *en, struct gpu *g, const struct model_desc *d, const struct shard *s,
                const struct dev_weights *w, int max_cols, int n_slots, int max_pos, int max_logits, struct err *e);
/* The same for an engine that also runs spec steps with drafts of up to max_draft columns a slot
 * (max_draft + 1 state entries a slot; engine_init is max_draft 0). */
int engine_init_spec(struct engine *en, struct gpu *g, const struct model_desc *d, const struct shard *s,
                     const struct dev_weights *w, int max_cols, int n_slots, int max_pos, int max_logits,
                     int max_draft, struct err *e);
void engine_free(struct engine *en);

/* Zeroes the recurrent state of every slot and points slot i's block-table row at its own blocks. */
int engine_reset(struct engine *en, struct err *e);

/* ---- Speculative steps (docs/design.md "Engine semantics": the spec plan)
 *
 * A spec step (shape.plan == PLAN_SPEC) lays its columns out as the prefill shape: run r holds a
 * draft of K <= max_draft tokens of one slot, column i following column i-1 and column 0 the
 * slot's committed state. Every recurrent state of a slot has n_snap = max_draft + 1 entries, used
 * as a ring: entry cur (struct slot_meta) holds the committed state (snapshot 0), and the spec
 * step writes the state as it stands after draft column i into entry (cur + i + 1) mod n_snap
 * (snapshot i+1), leaving entry cur alone. Accepting j tokens (engine_commit) is then only
 * cur += j (mod n_snap) and pos += j on the host; the next step uploads the slot table with its
 * columns and its kernels read the state in place, whatever the plan. Attention keeps no
 * snapshot: a draft's K/V land at their positions, and the positions of rejected tokens are
 * written again by the next step before any query reads them.
 *
 * Why an index and not a copy: a copy of snapshot j into a fixed committed entry costs a dispatch
 * (or a transfer) per commit and reads + writes the whole state: nothing for LFM2 (2·H f32 a conv
 * layer: 16 KiB per slot and layer at H 2048), but a Qwen3.5 DeltaNet state is nv·dk·dv f32 =
 * 1 MiB per slot and layer on qwen3.5-2b (16·128·128), 18 MiB a slot over its 18 DeltaNet layers:
 * read and written at the H200's 3.93 TB/s that is ~10 µs a slot per step (40 µs for 4 slots,
 * against a ~1 ms step), plus a dispatch and a barrier between the verify and the next step.
 * Reading entry cur costs one u32 load per invocation and a 16-byte-a-slot upload beside the
 * step's columns. Memory is the price: n_snap states a slot.
 *
 * How a family plugs in (as Qwen3.5's DeltaNet does: plan_qwen35.c, bench/14): state_bytes(l)
 * stays ONE entry's bytes (DeltaNet: nv·dk·dv f32 state plus its conv window of 3 qkv rows); its
 * kernels take engine_state(en, l) (struct k_state), read entry cur of the slot, write the final
 * state back to entry cur in batch/wide plans and, in spec plans, the state after each draft
 * column into entry (cur + i + 1) mod n_snap (k_state_mode picks which; the recurrent form writes
 * after every token, a chunked form would have to produce the state at every column too: bench/14
 * weighs the two for drafts of 2-16); then set family_plan.spec. engine_commit, the slot table and
 * the golden spec check need no change. */

/* The state of layer l (addresses of entry 0 of slot 0, the device slot table, n_snap). */
struct k_state engine_state(const struct engine *en, int l);

/* Accepts `accepted` tokens of the draft the last spec step ran for `slot` (0 <= accepted <= its
 * length K): the slot's committed state becomes snapshot `accepted` and its position advances by
 * `accepted`. Host work only, no GPU call: the next step reads the new state in place. ST_USAGE
 * when the slot has no uncommitted draft or accepted is out of range (message names both). */
int engine_commit(struct engine *en, int slot, int accepted, struct err *e);
/* The slot's next position: advanced by every batch/wide step over it and by engine_commit. */
uint32_t engine_slot_pos(const struct engine *en, int slot);

/* Builds the layer plan and (when the shard ends at N and shape->n_logits > 0) the head plan, once:
 * first the kernels' scratch is made to hold what the shape's products take (family_plan
 * layers_scratch / head_scratch), then the builders run on it and allocate nothing. */
int engine_build(struct engine *en, const struct step_shape *shape, struct plan *layers, struct plan *head,
                 struct err *e);

/* One step: upload io's columns, record `repeat` copies of the layer plan (and of the head plan,
 * when head != NULL) into one command buffer, submit, wait, read back. With timestamps, query
 * 2i / 2i+1 bracket dispatch i of (layers then head); only for repeat == 1. wall_us gets the
 * host wall of submit + wait. poison: fill the outputs with NaN first (tests, golden). The slot
 * table goes up with the columns; afterwards each run's slot records the step: a spec step leaves
 * its draft uncommitted (draft = the run's columns, pos unchanged), any other step sets pos to the
 * run's end and drops an uncommitted draft (as accepting none). */
int engine_step(struct engine *en, const struct step_shape *shape, const struct plan *layers,
                const struct plan *head, const struct step_io *io, int repeat, bool timestamps, bool poison,
                double *wall_us, struct err *e);

/* ---- families (plan_<family>.c): what the executor needs to know of a family, and nothing more.
 * The executor sizes its buffers from these numbers and calls the builders; it never names a
 * family. A family without an entry (family_plan_get returns NULL) has no engine yet. */

/* Per-column widths (f32 elements) of the engine's activation buffers. */
struct engine_dims {
    int scratch; /* t1, t2: the widest intermediate of a layer (e.g. [B|C|X] = 3H, SwiGLU F) */
    int q;       /* q and att: query (and gate) rows of an attention layer */
    int kv;      /* k and v: rows of one column's k (= v) projection */
};

struct family_plan {
    enum family family;
    void (*dims)(const struct model_desc *d, struct engine_dims *out);
    /* Bytes of layer l's recurrent state for one slot (0: none). The engine zeroes it per slot. */
    uint64_t (*state_bytes)(const struct model_desc *d, int l);
    /* true when build_layers serves PLAN_SPEC: it writes a snapshot of every recurrent state after
     * every draft column (see "Speculative steps" above). */
    bool spec;
    /* Appends the layer plan of en->s for shape sh (the embedding first when en->s->first). */
    int (*build_layers)(struct engine *en, const struct step_shape *sh, struct plan *p, struct err *e);
    /* Appends the head plan (only called on a last stage with sh->n_logits > 0). */
    int (*build_head)(struct engine *en, const struct step_shape *sh, struct plan *p, struct err *e);
    /* The kernels' scratch build_layers / build_head take for sh, max'ed into need: the products
     * and attentions they append, each through k_matmul_scratch / k_attn_scratch (kernels.h) with
     * the arguments the builder passes. A product missed here fails the build (kernels.h
     * k_scratch), so the goldens of every family and plan check that the two agree. */
    void (*layers_scratch)(const struct engine *en, const struct step_shape *sh, struct sel_scratch *need);
    void (*head_scratch)(const struct engine *en, const struct step_shape *sh, struct sel_scratch *need);
};

const struct family_plan *family_plan_get(enum family f);

/* The head every family shares: logits = rms(h[need_logit], output_norm) · headᵀ; its scratch. */
int engine_build_head_default(struct engine *en, const struct step_shape *sh, struct plan *p, struct err *e);
void engine_head_scratch_default(const struct engine *en, const struct step_shape *sh, struct sel_scratch *need);

/* Device addresses of layer l's recurrent state (entry 0 of slot 0; entries follow at state_bytes
 * each, n_snap a slot: see engine_state) and of its K and V pools. */
uint64_t engine_state_addr(const struct engine *en, int l);
uint64_t engine_kpool_addr(const struct engine *en, int l);
uint64_t engine_vpool_addr(const struct engine *en, int l);

#endif
