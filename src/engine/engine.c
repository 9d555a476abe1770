/* engine.c - the executor: device state of a shard and the one-submit step. */
#include "engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN256(x) (((x) + 255) & ~(uint64_t)255)

uint64_t engine_state_addr(const struct engine *en, int l) { return en->state_addr[l]; }
uint64_t engine_kpool_addr(const struct engine *en, int l) { return en->kv_addr[l][0]; }
uint64_t engine_vpool_addr(const struct engine *en, int l) { return en->kv_addr[l][1]; }

struct k_state engine_state(const struct engine *en, int l)
{
    return (struct k_state){engine_state_addr(en, l), en->slot_tab.addr, (uint32_t)en->n_snap};
}

/* The host copy of the slot table (in the mapped upload buffer: one copy a step takes it up). */
static struct slot_meta *slot_table(const struct engine *en)
{
    return (struct slot_meta *)((uint8_t *)en->up.host + en->up_slots);
}

uint32_t engine_slot_pos(const struct engine *en, int slot)
{
    CHECK(slot >= 0 && slot < en->n_slots);
    return slot_table(en)[slot].pos;
}

int engine_commit(struct engine *en, int slot, int accepted, struct err *e)
{
    if (slot < 0 || slot >= en->n_slots)
        return err_set(e, ST_USAGE, "commit: slot %d, the engine has slots 0..%d", slot, en->n_slots - 1);
    struct slot_meta *sm = &slot_table(en)[slot];
    if (sm->draft == 0)
        return err_set(e, ST_USAGE, "commit: slot %d has no uncommitted draft (run a spec step over it first)", slot);
    if (accepted < 0 || (uint32_t)accepted > sm->draft)
        return err_set(e, ST_USAGE, "commit: slot %d: %d tokens accepted of a draft of %u, expected 0..%u", slot,
                       accepted, sm->draft, sm->draft);
    sm->cur = (sm->cur + (uint32_t)accepted) % (uint32_t)en->n_snap;
    sm->pos += (uint32_t)accepted;
    sm->draft = 0;
    return ST_OK;
}

/* Adds [lo, hi) to the buffers a plan's dispatches may write (plan.h). */
static void bufs_add(struct plan_bufs *pb, uint64_t lo, uint64_t hi)
{
    CHECK(pb->n < PLAN_MAX_BUFS);
    pb->lo[pb->n] = lo;
    pb->hi[pb->n++] = hi;
}

/* One buffer of an engine_pool for regions first .. end-1 (used bytes, at least 256), their
 * addresses into addr; the buffer joins the plan buffers pb. */
static int pool_flush(struct gpu *g, struct engine_pool *pool, struct plan_bufs *pb, const uint64_t *size,
                      uint64_t *addr, int first, int end, uint64_t used, uint64_t limit, const char *what,
                      struct err *e)
{
    if (pool->n == ENGINE_POOL_BUFS)
        return err_set(e, ST_RUNTIME, "engine %s buffer: out of device memory: more than %d buffers of up to %.1f MiB "
                       "(the device's largest allocation%s): fewer slots, columns or positions", what, ENGINE_POOL_BUFS,
                       (double)limit / (1024.0 * 1024.0), g->tune.pool_max ? ", lowered by --tune pool_max" : "");
    struct gpu_buf *b = &pool->buf[pool->n];
    int st = gpu_alloc(g, MAX(used, 256), GPU_MEM_DEVICE, b, e);
    if (st) return err_wrap(e, st, "engine %s buffer %d", what, pool->n);
    pool->n++;
    bufs_add(pb, b->addr, b->addr + b->size);
    for (uint64_t off = 0; first < end; off += size[first++]) addr[first] = b->addr + off;
    return ST_OK;
}

/* Packs n regions (bytes, 256-aligned), in order, into the pool's buffers (engine.h engine_pool):
 * each buffer within the device's largest allocation (or --tune pool_max), no region across two;
 * addr[i] gets region i's address; each buffer joins the plan buffers pb. */
static int pool_alloc(struct gpu *g, struct engine_pool *pool, struct plan_bufs *pb, int n, const uint64_t *size,
                      uint64_t *addr, const char *what, struct err *e)
{
    uint64_t limit = MIN(g->max_alloc, g->max_buffer), used = 0;
    if (g->tune.pool_max) limit = MIN(limit, (uint64_t)g->tune.pool_max);
    pool->n = 0;
    int first = 0;
    for (int i = 0; i < n; i++) {
        if (size[i] > limit)
            return err_set(e, ST_RUNTIME, "engine %s buffer: out of device memory: asked %.1f MiB (%llu bytes) for one "
                           "layer, more than the largest buffer of %.1f MiB (%llu bytes: the device's largest "
                           "allocation%s): fewer slots, columns or positions", what, (double)size[i] / (1024.0 * 1024.0),
                           (unsigned long long)size[i], (double)limit / (1024.0 * 1024.0), (unsigned long long)limit,
                           g->tune.pool_max ? ", lowered by --tune pool_max" : "");
        if (used + size[i] > limit) {
            int st = pool_flush(g, pool, pb, size, addr, first, i, used, limit, what, e);
            if (st) return st;
            first = i;
            used = 0;
        }
        used += size[i];
    }
    return pool_flush(g, pool, pb, size, addr, first, n, used, limit, what, e);
}

int engine_init(struct engine *en, struct gpu *g, const struct model_desc *d, const struct shard *s,
                const struct dev_weights *w, int max_cols, int n_slots, int max_pos, int max_logits, struct err *e)
{
    return engine_init_spec(en, g, d, s, w, max_cols, n_slots, max_pos, max_logits, 0, e);
}

int engine_init_spec(struct engine *en, struct gpu *g, const struct model_desc *d, const struct shard *s,
                     const struct dev_weights *w, int max_cols, int n_slots, int max_pos, int max_logits,
                     int max_draft, struct err *e)
{
    memset(en, 0, sizeof *en);
    const struct family_plan *fp = family_plan_get(d->family);
    if (!fp)
        return err_set(e, ST_USAGE, "%s: the %s engine is not supported yet (only --load-only works for it)",
                       d->source, family_name(d->family));
    struct engine_dims dims;
    fp->dims(d, &dims);
    en->fp = fp;
    en->g = g;
    en->d = d;
    en->s = s;
    en->w = w;
    en->max_cols = max_cols;
    en->n_slots = n_slots;
    en->max_pos = max_pos;
    en->max_logits = max_logits;
    en->blocks_per_slot = (max_pos + KV_BLOCK - 1) / KV_BLOCK;
    en->max_draft = MAX(max_draft, 0);
    en->n_snap = en->max_draft + 1;
    uint64_t H = (uint64_t)d->hidden, C = (uint64_t)max_cols;
    uint64_t qd = (uint64_t)MAX(dims.q, 1), kvd = (uint64_t)MAX(dims.kv, 1), sd = (uint64_t)MAX(dims.scratch, 1);

    /* the per-layer regions of the state and KV pools, in layer order (engine_pool) */
    uint64_t st_size[MODEL_MAX_LAYERS], st_addr[MODEL_MAX_LAYERS], kv_size[2 * MODEL_MAX_LAYERS],
        kv_addr[2 * MODEL_MAX_LAYERS];
    int n_st = 0, n_kv = 0;
    for (int l = s->a; l < s->b; l++) {
        st_size[n_st++] = ALIGN256(fp->state_bytes(d, l) * (uint64_t)n_slots * (uint64_t)en->n_snap);
        if (d->kind[l] == LAYER_ATTN) {
            uint64_t pool = ALIGN256((uint64_t)n_slots * en->blocks_per_slot * KV_BLOCK * kvd * 4);
            kv_size[n_kv++] = pool; /* K */
            kv_size[n_kv++] = pool; /* V */
        }
    }
    struct {
        struct gpu_buf *b;
        uint64_t size;
        enum gpu_mem kind;
        const char *what;
    } bufs[] = {
        {&en->hidden, C * H * 4, GPU_MEM_DEVICE, "hidden"},
        {&en->xn, C * H * 4, GPU_MEM_DEVICE, "normed input"},
        {&en->t1, C * sd * 4, GPU_MEM_DEVICE, "scratch"},
        {&en->t2, C * sd * 4, GPU_MEM_DEVICE, "scratch"},
        {&en->q, C * qd * 4, GPU_MEM_DEVICE, "q"},
        {&en->k, C * kvd * 4, GPU_MEM_DEVICE, "k"},
        {&en->v, C * kvd * 4, GPU_MEM_DEVICE, "v"},
        {&en->att, C * qd * 4, GPU_MEM_DEVICE, "attention output"},
        {&en->logits, (uint64_t)MAX(max_logits, 1) * (uint64_t)d->vocab * 4, GPU_MEM_DEVICE, "logits"},
        {&en->cols, C * sizeof(struct col_meta), GPU_MEM_DEVICE, "column table"},
        {&en->runs, C * sizeof(struct run_meta), GPU_MEM_DEVICE, "run table"},
        {&en->logit_idx, (uint64_t)MAX(max_logits, 1) * 4, GPU_MEM_DEVICE, "logit index"},
        {&en->btab, (uint64_t)n_slots * en->blocks_per_slot * 4, GPU_MEM_DEVICE, "block table"},
        {&en->slot_tab, (uint64_t)n_slots * sizeof(struct slot_meta), GPU_MEM_DEVICE, "slot table"},
    };
    for (size_t i = 0; i < ARRAY_LEN(bufs); i++) {
        int st = gpu_alloc(g, bufs[i].size, bufs[i].kind, bufs[i].b, e);
        if (st) return err_wrap(e, st, "engine %s buffer", bufs[i].what);
        bufs_add(&en->bufs, bufs[i].b->addr, bufs[i].b->addr + bufs[i].b->size);
    }
    int st = pool_alloc(g, &en->state, &en->bufs, n_st, st_size, st_addr, "recurrent state", e);
    if (!st) st = pool_alloc(g, &en->kv, &en->bufs, n_kv, kv_size, kv_addr, "KV pool", e);
    if (st) return st;
    for (int l = s->a, j = 0; l < s->b; l++) {
        en->state_addr[l] = st_addr[l - s->a];
        if (d->kind[l] == LAYER_ATTN) {
            en->kv_addr[l][0] = kv_addr[j++];
            en->kv_addr[l][1] = kv_addr[j++];
        }
    }
    en->n_own_bufs = en->bufs.n;
    en->up_cols = 0;
    en->up_runs = ALIGN256(C * sizeof(struct col_meta));
    en->up_idx = en->up_runs + ALIGN256(C * sizeof(struct run_meta));
    en->up_hidden = en->up_idx + ALIGN256((uint64_t)MAX(max_logits, 1) * 4);
    en->up_slots = ALIGN256(en->up_hidden + C * H * 4);
    uint64_t up = en->up_slots + (uint64_t)n_slots * sizeof(struct slot_meta);
    uint64_t down = MAX(C * H * 4, (uint64_t)MAX(max_logits, 1) * (uint64_t)d->vocab * 4);
    st = gpu_alloc(g, up, GPU_MEM_HOST, &en->up, e);
    if (!st) st = gpu_alloc(g, down, GPU_MEM_HOST, &en->down, e);
    if (st) return err_wrap(e, st, "engine host buffers");
    return engine_reset(en, e);
}

void engine_free(struct engine *en) { memset(en, 0, sizeof *en); /* device memory goes at gpu_close */ }

int engine_reset(struct engine *en, struct err *e)
{
    int st = ST_OK;
    for (int i = 0; i < en->state.n && !st; i++) st = gpu_fill(en->g, &en->state.buf[i], 0, e);
    if (st) return st;
    memset(slot_table(en), 0, (size_t)en->n_slots * sizeof(struct slot_meta)); /* entry 0, position 0 */
    uint64_t n = (uint64_t)en->n_slots * en->blocks_per_slot;
    uint32_t *tab = malloc(n * 4);
    if (!tab) return err_set(e, ST_RUNTIME, "out of host memory for the block table");
    for (uint64_t i = 0; i < n; i++) tab[i] = (uint32_t)i; /* slot s owns blocks s*bps .. s*bps+bps-1 */
    st = gpu_upload(en->g, &en->btab, 0, tab, n * 4, e);
    free(tab);
    return st;
}

int engine_build(struct engine *en, const struct step_shape *shape, struct plan *layers, struct plan *head,
                 struct err *e)
{
    if (shape->cols > en->max_cols || shape->n_logits > en->max_logits)
        return err_set(e, ST_RUNTIME, "step of %d columns / %d logits exceeds the engine's %d / %d", shape->cols,
                       shape->n_logits, en->max_cols, en->max_logits);
    if (shape->plan == PLAN_SPEC && !en->fp->spec)
        return err_set(e, ST_USAGE, "%s: --spec is not supported yet for the %s family", en->d->source,
                       family_name(en->d->family));
    if (shape->plan == PLAN_SPEC && (en->max_draft < 1 || shape->cols > shape->n_runs * en->max_draft))
        return err_set(e, ST_RUNTIME, "spec step of %d columns in %d slots: the engine keeps snapshots for drafts of "
                       "up to %d columns a slot", shape->cols, shape->n_runs, en->max_draft);
    bool want_head = head && en->s->last && shape->n_logits > 0;
    struct sel_scratch need = {0}, head_need = {0};
    en->fp->layers_scratch(en, shape, &need);
    if (want_head) en->fp->head_scratch(en, shape, &head_need);
    sel_scratch_max(&need, &head_need);
    int st = k_scratch_reserve(en->g, &need, &en->scratch, e);
    if (st) return st;
    en->scratch.gemm_w_half = 0;
    /* the scratch that dispatches write (kernels.h k_scratch_bufs: the halves of the f16 weight
     * copies), as plan buffers, so that the barriers follow the data there too; dispatches of plans
     * built before on a buffer since outgrown touch no plan buffer and keep barriers on both sides */
    uint64_t lo[K_SCRATCH_BUFS], hi[K_SCRATCH_BUFS];
    int n = k_scratch_bufs(&en->scratch, lo, hi);
    en->bufs.n = en->n_own_bufs;
    for (int i = 0; i < n; i++) bufs_add(&en->bufs, lo[i], hi[i]);
    layers->kind = shape->plan;
    layers->bufs = &en->bufs;
    layers->scratch = &en->scratch;
    st = en->fp->build_layers(en, shape, layers, e);
    if (!st && want_head) {
        head->kind = shape->plan;
        head->bufs = &en->bufs;
        head->scratch = &en->scratch;
        st = en->fp->build_head(en, shape, head, e);
    }
    return st;
}

int engine_build_head_default(struct engine *en, const struct step_shape *sh, struct plan *p, struct err *e)
{
    const struct shard *s = en->s;
    int st = k_rmsnorm(en->g, p, weights_global(en->w, s, G_FINAL_NORM), en->hidden.addr, en->xn.addr,
                       en->logit_idx.addr, sh->n_logits, en->d->eps, en->d->norm_plus1, -1, "output_norm", "head.", e);
    if (st) return st;
    return k_matmul(en->g, p, weights_global(en->w, s, G_HEAD), en->xn.addr, en->logits.addr, sh->n_logits, false,
                    -1, "lm_head", "head.", e);
}

void engine_head_scratch_default(const struct engine *en, const struct step_shape *sh, struct sel_scratch *need)
{
    const struct gpu_weight *w = weights_global(en->w, en->s, G_HEAD);
    struct sel_scratch m = k_matmul_scratch(en->g, sh->plan, 1, &w, false, NULL, false, sh->n_logits);
    sel_scratch_max(need, &m);
}

int engine_step(struct engine *en, const struct step_shape *shape, const struct plan *layers,
                const struct plan *head, const struct step_io *io, int repeat, bool timestamps, bool poison,
                double *wall_us, struct err *e)
{
    struct gpu *g = en->g;
    const struct model_desc *d = en->d;
    uint64_t H = (uint64_t)d->hidden, V = (uint64_t)d->vocab;
    bool want_logits = head && shape->n_logits > 0;
    bool want_hidden = !en->s->last && io->hidden_out;
    int st;
    CHECK(!timestamps || repeat == 1);
    bool spec = shape->plan == PLAN_SPEC;
    for (int r = 0; r < shape->n_runs; r++) {
        if (io->runs[r].slot >= (uint32_t)en->n_slots)
            return err_set(e, ST_USAGE, "step: run %d names slot %u, the engine has slots 0..%d", r, io->runs[r].slot,
                           en->n_slots - 1);
        if (spec && io->runs[r].n_cols > (uint32_t)en->max_draft)
            return err_set(e, ST_USAGE, "spec step: slot %u has a draft of %u columns, the engine keeps snapshots "
                           "for up to %d", io->runs[r].slot, io->runs[r].n_cols, en->max_draft);
    }

    uint8_t *up = en->up.host;
    memcpy(up + en->up_cols, io->cols, (size_t)shape->cols * sizeof(struct col_meta));
    memcpy(up + en->up_runs, io->runs, (size_t)shape->n_runs * sizeof(struct run_meta));
    if (shape->n_logits) memcpy(up + en->up_idx, io->logit_idx, (size_t)shape->n_logits * 4);
    if (!en->s->first) {
        CHECK(io->hidden_in);
        memcpy(up + en->up_hidden, io->hidden_in, (size_t)shape->cols * H * 4);
    }
    if (poison) {
        if ((st = gpu_fill(g, &en->logits, 0x7fc00000u, e))) return st;
        if ((st = gpu_fill(g, &en->hidden, 0x7fc00000u, e))) return st;
    }
    uint32_t n_disp = (uint32_t)(layers->n + (head ? head->n : 0));
    if ((st = gpu_cmd_begin(g, e))) return st;
    if (timestamps && (st = gpu_cmd_reset_timestamps(g, 0, 2 * n_disp, e))) return st;
    gpu_cmd_copy(g, &en->up, en->up_cols, &en->cols, 0, (uint64_t)shape->cols * sizeof(struct col_meta));
    gpu_cmd_copy(g, &en->up, en->up_runs, &en->runs, 0, (uint64_t)shape->n_runs * sizeof(struct run_meta));
    if (shape->n_logits) gpu_cmd_copy(g, &en->up, en->up_idx, &en->logit_idx, 0, (uint64_t)shape->n_logits * 4);
    if (!en->s->first) gpu_cmd_copy(g, &en->up, en->up_hidden, &en->hidden, 0, (uint64_t)shape->cols * H * 4);
    gpu_cmd_copy(g, &en->up, en->up_slots, &en->slot_tab, 0, (uint64_t)en->n_slots * sizeof(struct slot_meta));
    gpu_cmd_barrier(g);
    int stride = en->ts_stride > 0 ? en->ts_stride : 1, phase = en->ts_phase % stride;
    for (int r = 0; r < repeat; r++) {
        plan_record_sampled(g, layers, timestamps ? 0 : -1, stride, phase);
        if (head)
            plan_record_sampled(g, head, timestamps ? 2 * layers->n : -1, stride,
                                ((phase - layers->n) % stride + stride) % stride);
    }
    if (want_logits) gpu_cmd_copy(g, &en->logits, 0, &en->down, 0, (uint64_t)shape->n_logits * V * 4);
    else if (want_hidden) gpu_cmd_copy(g, &en->hidden, 0, &en->down, 0, (uint64_t)shape->cols * H * 4);
    if ((st = gpu_submit_wait(g, wall_us, e))) return st;
    for (int r = 0; r < shape->n_runs; r++) {
        struct slot_meta *sm = &slot_table(en)[io->runs[r].slot];
        sm->draft = spec ? io->runs[r].n_cols : 0;
        sm->pos = io->runs[r].pos0 + (spec ? 0 : io->runs[r].n_cols);
    }
    if (want_logits && io->logits) memcpy(io->logits, en->down.host, (size_t)shape->n_logits * V * 4);
    else if (want_hidden) memcpy(io->hidden_out, en->down.host, (size_t)shape->cols * H * 4);
    return ST_OK;
}
