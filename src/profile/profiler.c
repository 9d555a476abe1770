/* profiler.c - the profiled step (docs/design.md "Engine semantics", "Profiling contract"): warm-up,
 * per-dispatch timestamps (full or sampled) and the gap probe; attribution.c runs the attribution mode. */
#include "profiler.h"
#include "profile_step.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "select.h"
#include "tuning.h"

/* Seeded N(0,1) values for hidden_in of a stage that does not start at layer 0 (never zeros). */
static void fill_hidden(float *h, size_t n, uint64_t *state)
{
    for (size_t i = 0; i < n; i += 2) {
        double u1, u2;
        *state = *state * 6364136223846793005ull + 1442695040888963407ull;
        u1 = ((double)(*state >> 11) + 1.0) / 9007199254740993.0;
        *state = *state * 6364136223846793005ull + 1442695040888963407ull;
        u2 = (double)(*state >> 11) / 9007199254740992.0;
        double r = sqrt(-2.0 * log(u1));
        h[i] = (float)(r * cos(6.283185307179586 * u2));
        if (i + 1 < n) h[i + 1] = (float)(r * sin(6.283185307179586 * u2));
    }
}

struct columns {
    struct col_meta *cols;
    struct run_meta *runs;
    uint32_t *idx;
    float *hidden;
};

static void columns_free(struct columns *c)
{
    free(c->cols);
    free(c->runs);
    free(c->idx);
    free(c->hidden);
}

static int columns_alloc(struct columns *c, int cols, int n_runs, int hidden, struct err *e)
{
    c->cols = calloc((size_t)cols, sizeof *c->cols);
    c->runs = calloc((size_t)n_runs, sizeof *c->runs);
    c->idx = calloc((size_t)cols, sizeof *c->idx);
    c->hidden = malloc((size_t)cols * hidden * sizeof(float));
    if (!c->cols || !c->runs || !c->idx || !c->hidden)
        return err_set(e, ST_RUNTIME, "out of host memory");
    return ST_OK;
}

/* n_slots slots of `per` successive columns each at positions pos..pos+per-1. Columns want a
 * logit as `logits` says: none, each slot's last (LOGITS_LAST) or all; c->idx lists them. */
enum logits_want { LOGITS_NONE, LOGITS_LAST, LOGITS_ALL };
static void columns_make(struct columns *c, int n_slots, int per, int pos, int vocab, enum logits_want logits)
{
    int n = 0;
    for (int s = 0; s < n_slots; s++) {
        c->runs[s] = (struct run_meta){.slot = (uint32_t)s,
                                       .first_col = (uint32_t)(s * per),
                                       .n_cols = (uint32_t)per,
                                       .pos0 = (uint32_t)pos};
        for (int j = 0; j < per; j++) {
            int i = s * per + j;
            c->cols[i] = (struct col_meta){.token = (uint32_t)((1000 + i) % vocab),
                                           .pos = (uint32_t)(pos + j),
                                           .slot = (uint32_t)s,
                                           .need_logit = logits == LOGITS_ALL ||
                                                         (logits == LOGITS_LAST && j == per - 1)};
            if (c->cols[i].need_logit) c->idx[n++] = (uint32_t)i;
        }
    }
}

struct profile_request profile_request_default(void)
{
    return (struct profile_request){.plan = PLAN_BATCH,
                                    .cols = 16,
                                    .pos = 64,
                                    .reps = 10,
                                    .timing = TIMING_FULL,
                                    .argline = ""};
}

/* Which columns of the profiled step want a logit: a serving engine samples after every column
 * of a decode step and of a verify, and after a prompt's last token only (the prefill shape, unless
 * --all-logits asks for a scoring pass). */
static enum logits_want logits_wanted(const struct profile_request *rq)
{
    bool spec = rq->plan == PLAN_SPEC;
    if (!rq->logits && !spec) return LOGITS_NONE;
    return spec || rq->all_logits || !rq->slots || rq->slots == rq->cols ? LOGITS_ALL : LOGITS_LAST;
}

void profile_identity(const struct model_desc *d, const struct shard *s, const struct profile_request *rq,
                      struct profile *p)
{
    snprintf(p->model.family, sizeof p->model.family, "%s", family_name(d->family));
    p->model.n_layers = d->n_layers;
    p->model.hidden = d->hidden;
    p->model.vocab = d->vocab;
    snprintf(p->model.dtype, sizeof p->model.dtype, "%s", dtype_name(d->dtype));
    for (char *c = p->model.dtype; *c; c++)
        *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    snprintf(p->model.source, sizeof p->model.source, "%s", d->source);
    p->shard.a = s->a;
    p->shard.b = s->b;
    snprintf(p->shape.plan, sizeof p->shape.plan, "%s", plan_kind_name(rq->plan));
    snprintf(p->precision, sizeof p->precision, "%s", precision_name(rq->precision));
    p->shape.plan_auto = rq->plan_auto;
    struct tune def = tune_default();
    p->shape.gemm_min_cols = rq->gemm_min_cols ? rq->gemm_min_cols : sel_gemm_min_cols(&def, d->dtype);
    p->shape.cols = rq->cols;
    p->shape.pos = rq->pos;
    p->shape.slots = rq->slots ? rq->slots : rq->cols;
    bool spec = rq->plan == PLAN_SPEC;
    p->shape.logits = rq->logits || (spec && s->last); /* a verify wants every column's logit */
    enum logits_want lw = p->shape.logits ? logits_wanted(rq) : LOGITS_NONE;
    p->shape.logit_cols = lw == LOGITS_ALL ? rq->cols : lw == LOGITS_LAST ? p->shape.slots : 0;
    p->shape.draft = spec ? rq->cols / p->shape.slots : 0;
}

static void fill_profile_header(struct gpu *g, const struct model_desc *d, const struct shard *s,
                                const struct profile_request *rq, struct profile *p)
{
    snprintf(p->tool, sizeof p->tool, "lfm2-profile-stage");
    snprintf(p->version, sizeof p->version, "%s", LFM2_VERSION);
    snprintf(p->args, sizeof p->args, "%s", rq->argline ? rq->argline : "");
    tune_format(&g->tune, p->tune, sizeof p->tune);
    tuning_describe(p->test_hooks, sizeof p->test_hooks);
    snprintf(p->device.name, sizeof p->device.name, "%s", g->props.deviceName);
    snprintf(p->device.driver, sizeof p->device.driver, "%.127s", g->driver_name);
    uint32_t v = g->props.apiVersion;
    snprintf(p->device.api, sizeof p->device.api, "Vulkan %u.%u.%u", VK_API_VERSION_MAJOR(v),
             VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
    p->device.timestamp_period_ns = g->timestamp_period;
    p->device.timestamp_valid_bits = g->timestamp_valid_bits;
    p->device.has_timestamps = g->timestamp_valid_bits > 0;
    enum gemm_path gp;
    if (k_gemm_path(g, rq->cols, &gp, NULL) == ST_OK) snprintf(p->device.gemm_path, sizeof p->device.gemm_path, "%s", gemm_path_name(gp));
    profile_identity(d, s, rq, p);
    p->timing = p->device.has_timestamps ? rq->timing : TIMING_NONE;
}

/* Keys the step's columns attend to, each once: a slot's keys 0 .. its last column's position. */
static uint64_t step_keys(const struct step_shape *sh, const struct step_io *io)
{
    uint64_t keys = 0;
    for (int r = 0; r < sh->n_runs; r++)
        keys += (uint64_t)io->runs[r].pos0 + io->runs[r].n_cols;
    return keys;
}

/* Dispatch i of the step (layers, then head) and its tags in the profile. */
static const struct dispatch *step_dispatch(const struct plan *layers, const struct plan *head,
                                            int i)
{
    return i < layers->n ? &layers->d[i] : &head->d[i - layers->n];
}

static void tag_dispatch(struct prof_dispatch *pd, const struct dispatch *d, int i, const struct step_ctx *c)
{
    pd->index = i;
    snprintf(pd->kind, sizeof pd->kind, "%s", d->kind);
    snprintf(pd->op, sizeof pd->op, "%s", d->op);
    pd->layer = d->layer;
    memcpy(pd->groups, d->groups, sizeof pd->groups);
    pd->bytes = d->bytes;
    pd->bytes_again = d->bytes_again;
    pd->kv_bytes = d->kv_key_bytes * c->keys;
    pd->flops = d->flops + d->attn_pair_flops * c->pairs;
    pd->flops_exec = d->flops_exec + d->attn_pair_flops * c->pairs;
    _Static_assert(GPU_MAX_SPEC <= PROF_MAX_SPEC, "a pipeline's constants fit a profile's");
    if (d->pipe) {
        snprintf(pd->pipeline, sizeof pd->pipeline, "%s", d->pipe->name);
        pd->n_spec = (int)d->pipe->n_spec;
        memcpy(pd->spec, d->pipe->spec, sizeof d->pipe->spec[0] * d->pipe->n_spec);
    }
}

/* Per-dispatch timestamps. Full: every dispatch in each of `reps` steps. Sampled (stride k > 1):
 * reps·k steps, step r bracketing dispatches i with i % k == r % k, so every dispatch gets `reps`
 * samples while each step carries 1/k of the timestamps. */
static int profile_dispatches(const struct step_ctx *c, int stride, struct profile *p,
                              struct err *e)
{
    struct engine *en = c->en;
    struct gpu *g = en->g;
    const struct plan *layers = c->layers, *head = c->head;
    int n = layers->n + (head ? head->n : 0), reps = c->reps, steps = reps * stride, st = ST_OK;
    double *samples = calloc((size_t)n * reps, sizeof *samples),
           *walls = calloc((size_t)steps, sizeof *walls);
    double *starts = calloc((size_t)n, sizeof *starts);
    uint64_t *ticks = calloc((size_t)2 * n, sizeof *ticks);
    int *got = calloc((size_t)n, sizeof *got);
    p->dispatches = calloc((size_t)n, sizeof *p->dispatches);
    if (!samples || !walls || !starts || !ticks || !got || !p->dispatches)
        st = err_set(e, ST_RUNTIME, "out of host memory");
    struct progress pr;
    progress_begin(&pr, "profiled reps", (uint64_t)steps, "reps", 1);
    for (int r = 0; !st && r < steps; r++) {
        progress_update(&pr, (uint64_t)r);
        en->ts_stride = stride;
        en->ts_phase = r % stride;
        st = engine_step(en, c->sh, layers, head, c->io, 1, true, false, &walls[r], e);
        if (!st && stride == 1) st = gpu_read_timestamps(g, 0, (uint32_t)(2 * n), ticks, e);
        for (int i = r % stride; !st && i < n; i += stride) {
            if (stride > 1 && (st = gpu_read_timestamps(g, (uint32_t)(2 * i), 2, &ticks[2 * i], e)))
                break;
            double dt =
                ticks[2 * i + 1] >= ticks[2 * i] ? (double)(ticks[2 * i + 1] - ticks[2 * i]) : 0;
            samples[(size_t)i * reps + got[i]++] = dt * g->timestamp_period * 1e-3;
            if (stride == 1 && r == steps - 1)
                starts[i] = (double)(ticks[2 * i] - ticks[0]) * g->timestamp_period * 1e-3;
        }
    }
    progress_end(&pr);
    en->ts_stride = en->ts_phase = 0;
    for (int i = 0; !st && i < n; i++) {
        tag_dispatch(&p->dispatches[i], step_dispatch(layers, head, i), i, c);
        p->dispatches[i].us = timing_from(&samples[(size_t)i * reps], got[i]);
        p->dispatches[i].start_us = starts[i];
    }
    if (!st) {
        p->n_dispatches = n;
        p->wall_us = timing_from(walls, steps);
        p->steps_timed = steps;
        p->sample_stride = stride;
    }
    free(samples);
    free(walls);
    free(starts);
    free(ticks);
    free(got);
    return st;
}

/* The dispatches' tags without times (no timestamps): the attribution and the floor need them. */
static int profile_tags(const struct step_ctx *c, struct profile *p, struct err *e)
{
    int n = c->layers->n + (c->head ? c->head->n : 0);
    p->dispatches = calloc((size_t)(n ? n : 1), sizeof *p->dispatches);
    if (!p->dispatches) return err_set(e, ST_RUNTIME, "out of host memory");
    for (int i = 0; i < n; i++)
        tag_dispatch(&p->dispatches[i], step_dispatch(c->layers, c->head, i), i, c);
    p->n_dispatches = n;
    return ST_OK;
}

/* Wall-clock only (no timestamps): the wall of a plain step. */
static int profile_walls(const struct step_ctx *c, struct profile *p, struct err *e)
{
    double *walls = calloc((size_t)c->reps, sizeof *walls);
    int st = walls ? ST_OK : err_set(e, ST_RUNTIME, "out of host memory");
    for (int r = 0; !st && r < c->reps; r++)
        st = engine_step(c->en, c->sh, c->layers, c->head, c->io, 1, false, false, &walls[r], e);
    if (!st) p->wall_us = timing_from(walls, c->reps);
    free(walls);
    return st;
}

/* The gap probe over c->reps reps; the four walls are taken interleaved so drift hits them alike.
 */
static int gap_probe(const struct step_ctx *c, struct profile *p, struct err *e)
{
    int reps = c->reps, st = ST_OK;
    double *w = calloc((size_t)4 * reps, sizeof *w);
    if (!w) return err_set(e, ST_RUNTIME, "out of host memory");
    struct progress pr;
    progress_begin(&pr, "gap probe", (uint64_t)reps, "reps", 1);
    for (int r = 0; !st && r < reps; r++) {
        progress_update(&pr, (uint64_t)r);
        for (int k = 0; !st && k < (c->head ? 4 : 2); k++)
            st = engine_step(c->en, c->sh, c->layers, k >= 2 ? c->head : NULL, c->io, 1 + k % 2,
                             false, false, &w[k * reps + r], e);
    }
    progress_end(&pr);
    if (!st) {
        struct timing t[4];
        for (int k = 0; k < 4; k++)
            t[k] = timing_from(&w[k * reps], c->head || k < 2 ? reps : 0);
        uint64_t head_bytes = 0;
        for (int i = 0; c->head && i < c->head->n; i++)
            head_bytes += c->head->d[i].bytes;
        int n = c->layers->n + (c->head ? c->head->n : 0);
        int stride = p->timing == TIMING_SAMPLED && p->sample_stride > 0 ? p->sample_stride : 1;
        struct gap_probe_in in = {
            .w1 = &t[0],
            .w2 = &t[1],
            .hw1 = c->head ? &t[2] : NULL,
            .hw2 = c->head ? &t[3] : NULL,
            .busy = &p->busy_us,
            .head_sum = &p->head_us,
            .wall_ts = p->timing == TIMING_NONE ? NULL : &p->wall_us,
            .n_timestamped = (n + stride - 1) / stride,
            .head_bytes_real = head_bytes,
            .vocab = (uint64_t)c->en->d->vocab,
            .hidden = (uint64_t)c->en->d->hidden,
        };
        gap_probe_compute_reps(&p->gap_probe, &in);
        bool *after = malloc((size_t)(c->layers->n ? c->layers->n : 1) * sizeof *after);
        CHECK(after);
        plan_barriers(c->layers, false, after);
        p->gap_probe.dispatches = c->layers->n;
        for (int i = 0; i < c->layers->n; i++) p->gap_probe.barriers += after[i];
        free(after);
        for (int k = 0; k < 4; k++)
            timing_free(&t[k]);
    }
    free(w);
    return st;
}

/* The device's arithmetic roof (measured once a process, gpu_tensor_roof). */
static int profile_roof(struct gpu *g, struct profile *p, struct err *e)
{
    double flops = 0;
    const char *path = "";
    int st = gpu_tensor_roof(g, &flops, &path, e);
    if (st) return st;
    p->device.roof_tflops = flops * 1e-12;
    snprintf(p->device.roof_path, sizeof p->device.roof_path, "%s", path);
    return ST_OK;
}

int profile_run(struct gpu *g, const struct model_desc *d, const struct shard *s,
                const struct dev_weights *w, const struct profile_request *rq, struct profile *p,
                struct err *e)
{
    memset(p, 0, sizeof *p);
    if (rq->cols < 1 || rq->reps < 1 || rq->pos < 0 || rq->slots < 0 ||
        (rq->slots && rq->cols % rq->slots))
        return err_set(
            e, ST_USAGE,
            "profile request: %d columns, %d slots, pos %d, %d reps: expected columns >= 1 "
            "divisible by the slots, pos >= 0, reps >= 1",
            rq->cols, rq->slots, rq->pos, rq->reps);
    g->precision = rq->precision; /* the plans built below take it (select.c sel_gemm) */
    fill_profile_header(g, d, s, rq, p);
    int n_slots = rq->slots ? rq->slots : rq->cols, per = rq->cols / n_slots;
    bool spec = rq->plan == PLAN_SPEC, head_on = (rq->logits || spec) && s->last;
    struct step_shape sh = {.cols = rq->cols,
                            .n_runs = n_slots,
                            .n_logits = head_on ? p->shape.logit_cols : 0,
                            .prefill = per > 1,
                            .plan = rq->plan};
    struct step_shape warm = {
        .cols = n_slots, .n_runs = n_slots, .n_logits = 0, .prefill = false, .plan = PLAN_BATCH};
    struct engine en;
    struct plan layers = {0}, head = {0}, wplan = {0};
    struct columns cols = {0}, wcols = {0};
    uint64_t rng = 0x5eed0000ull + rq->seed;
    double bw = 0;
    int st = gpu_copy_bandwidth(g, 5, &bw, e);
    p->device.copy_gbps = bw * 1e-9;
    if (!st) st = profile_roof(g, p, e);
    if (!st)
        st = engine_init_spec(&en, g, d, s, w, MAX(rq->cols, n_slots), n_slots, rq->pos + per,
                              head_on ? p->shape.logit_cols : 0, spec ? per : 0, e);
    if (!st) st = engine_build(&en, &sh, &layers, head_on ? &head : NULL, e);
    if (!st) st = engine_build(&en, &warm, &wplan, NULL, e);
    if (!st) st = columns_alloc(&cols, rq->cols, n_slots, d->hidden, e);
    if (!st) st = columns_alloc(&wcols, n_slots, n_slots, d->hidden, e);
    /* warm-up: decode steps at positions 0..pos-1, one column per slot, so KV and state are real */
    struct progress pr;
    progress_begin(&pr, "warm-up", (uint64_t)rq->pos, "steps", 1);
    for (int t = 0; !st && t < rq->pos; t++) {
        columns_make(&wcols, n_slots, 1, t, d->vocab, LOGITS_NONE);
        for (int i = 0; i < n_slots; i++)
            wcols.cols[i].token = (uint32_t)((1000 + i * per + t) % d->vocab);
        if (!s->first) fill_hidden(wcols.hidden, (size_t)n_slots * d->hidden, &rng);
        struct step_io io = {.cols = wcols.cols,
                             .runs = wcols.runs,
                             .logit_idx = wcols.idx,
                             .hidden_in = s->first ? NULL : wcols.hidden};
        st = engine_step(&en, &warm, &wplan, NULL, &io, 1, false, false, NULL, e);
        progress_update(&pr, (uint64_t)t + 1);
    }
    progress_end(&pr);
    if (!st) {
        columns_make(&cols, n_slots, per, rq->pos, d->vocab, logits_wanted(rq));
        if (!s->first) fill_hidden(cols.hidden, (size_t)rq->cols * d->hidden, &rng);
        struct step_io io = {.cols = cols.cols,
                             .runs = cols.runs,
                             .logit_idx = cols.idx,
                             .hidden_in = s->first ? NULL : cols.hidden};
        struct step_ctx c = {.en = &en,
                             .sh = &sh,
                             .layers = &layers,
                             .head = head_on ? &head : NULL,
                             .io = &io,
                             .keys = step_keys(&sh, &io),
                             .pairs = k_attn_step_pairs(io.runs, sh.n_runs),
                             .reps = rq->reps};
        if (p->timing != TIMING_NONE) {
            int n = layers.n + (head_on ? head.n : 0);
            int stride =
                p->timing == TIMING_SAMPLED ? (rq->sample_stride > 0 ? rq->sample_stride : 8) : 1;
            st = profile_dispatches(&c, MAX(1, MIN(stride, n)), p, e);
            if (!st) {
                profile_totals(p);
                profile_by_kind(p);
            }
        } else {
            st = profile_walls(&c, p, e);
            if (!st) st = profile_tags(&c, p, e);
            if (!st) profile_by_kind(p); /* no dispatch times: sets tok_s from the wall */
        }
        if (!st) {
            p->floor_bytes = profile_floor_bytes(p);
            p->floor_us =
                p->device.copy_gbps > 0 ? p->floor_bytes / (p->device.copy_gbps * 1e3) : 0;
        }
        if (!st && rq->gap_probe) st = gap_probe(&c, p, e);
        if (!st && rq->attribution != ATTRIBUTION_OFF)
            st = profile_attribution(&c, rq->attribution == ATTRIBUTION_OP, p, e);
    }
    plan_free(&layers);
    plan_free(&head);
    plan_free(&wplan);
    columns_free(&cols);
    columns_free(&wcols);
    return st;
}
