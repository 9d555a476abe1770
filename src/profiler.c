/* profiler.c - the profiled step (DESIGN.md "Engine semantics", "Profiling contract"). */
#include "profiler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"

#define GAP_PROBE_REPS 10

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
    if (!c->cols || !c->runs || !c->idx || !c->hidden) return err_set(e, ST_RUNTIME, "out of host memory");
    return ST_OK;
}

/* n_slots slots of `per` successive columns each at positions pos..pos+per-1. */
static void columns_make(struct columns *c, int n_slots, int per, int pos, int vocab, bool logits)
{
    for (int s = 0; s < n_slots; s++) {
        c->runs[s] = (struct run_meta){.slot = (uint32_t)s, .first_col = (uint32_t)(s * per), .n_cols = (uint32_t)per,
                                       .pos0 = (uint32_t)pos};
        for (int j = 0; j < per; j++) {
            int i = s * per + j;
            c->cols[i] = (struct col_meta){.token = (uint32_t)((1000 + i) % vocab), .pos = (uint32_t)(pos + j),
                                           .slot = (uint32_t)s, .need_logit = logits};
            c->idx[i] = (uint32_t)i;
        }
    }
}

static void fill_profile_header(struct gpu *g, const struct model_desc *d, const struct shard *s,
                                const struct options *o, struct profile *p)
{
    snprintf(p->tool, sizeof p->tool, "lfm2-profile-stage");
    snprintf(p->version, sizeof p->version, "%s", LFM2_VERSION);
    snprintf(p->args, sizeof p->args, "%s", o->argline);
    snprintf(p->device.name, sizeof p->device.name, "%s", g->props.deviceName);
    snprintf(p->device.driver, sizeof p->device.driver, "%.127s", g->driver_name);
    uint32_t v = g->props.apiVersion;
    snprintf(p->device.api, sizeof p->device.api, "Vulkan %u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v),
             VK_API_VERSION_PATCH(v));
    p->device.timestamp_period_ns = g->timestamp_period;
    p->device.timestamp_valid_bits = g->timestamp_valid_bits;
    p->device.has_timestamps = g->timestamp_valid_bits > 0;
    snprintf(p->model.family, sizeof p->model.family, "%s", family_name(d->family));
    p->model.n_layers = d->n_layers;
    p->model.hidden = d->hidden;
    p->model.vocab = d->vocab;
    snprintf(p->model.dtype, sizeof p->model.dtype, "%s", dtype_name(d->dtype));
    for (char *c = p->model.dtype; *c; c++) *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    snprintf(p->model.source, sizeof p->model.source, "%.511s", d->source);
    p->shard.a = s->a;
    p->shard.b = s->b;
    snprintf(p->shape.plan, sizeof p->shape.plan, "%s", plan_kind_name(o->spec ? PLAN_SPEC : PLAN_BATCH));
    p->shape.cols = o->cols;
    p->shape.pos = o->pos;
    p->shape.slots = o->slots ? o->slots : o->cols;
    p->shape.logits = o->logits || (o->spec && s->last); /* a verify wants every column's logit */
    p->shape.draft = o->spec ? o->cols / p->shape.slots : 0;
}

/* Per-dispatch timestamps of `reps` profiled steps. */
static int profile_dispatches(struct engine *en, const struct step_shape *sh, const struct plan *layers,
                              const struct plan *head, const struct step_io *io, int reps, struct profile *p,
                              struct err *e)
{
    struct gpu *g = en->g;
    int n = layers->n + (head ? head->n : 0), st = ST_OK;
    double *samples = calloc((size_t)n * reps, sizeof *samples), *walls = calloc((size_t)reps, sizeof *walls);
    double *starts = calloc((size_t)n, sizeof *starts);
    uint64_t *ticks = calloc((size_t)2 * n, sizeof *ticks);
    p->dispatches = calloc((size_t)n, sizeof *p->dispatches);
    if (!samples || !walls || !starts || !ticks || !p->dispatches) st = err_set(e, ST_RUNTIME, "out of host memory");
    struct progress pr;
    progress_begin(&pr, "profiled reps", (uint64_t)reps, "reps", 1);
    for (int r = 0; !st && r < reps; r++) {
        progress_update(&pr, (uint64_t)r);
        st = engine_step(en, sh, layers, head, io, 1, true, false, &walls[r], e);
        if (!st) st = gpu_read_timestamps(g, 0, (uint32_t)(2 * n), ticks, e);
        for (int i = 0; !st && i < n; i++) {
            double dt = ticks[2 * i + 1] >= ticks[2 * i] ? (double)(ticks[2 * i + 1] - ticks[2 * i]) : 0;
            samples[(size_t)i * reps + r] = dt * g->timestamp_period * 1e-3;
            if (r == reps - 1) starts[i] = (double)(ticks[2 * i] - ticks[0]) * g->timestamp_period * 1e-3;
        }
    }
    progress_end(&pr);
    for (int i = 0; !st && i < n; i++) {
        const struct dispatch *d = i < layers->n ? &layers->d[i] : &head->d[i - layers->n];
        struct prof_dispatch *pd = &p->dispatches[i];
        pd->index = i;
        snprintf(pd->kind, sizeof pd->kind, "%s", d->kind);
        snprintf(pd->op, sizeof pd->op, "%s", d->op);
        pd->layer = d->layer;
        memcpy(pd->groups, d->groups, sizeof pd->groups);
        pd->bytes = d->bytes;
        pd->us = timing_from(&samples[(size_t)i * reps], reps);
        pd->start_us = starts[i];
    }
    if (!st) {
        p->n_dispatches = n;
        p->wall_us = timing_from(walls, reps);
    }
    free(samples);
    free(walls);
    free(starts);
    free(ticks);
    return st;
}

/* Wall-clock only (no timestamps): for devices without timestamps, the wall of a plain step. */
static int profile_walls(struct engine *en, const struct step_shape *sh, const struct plan *layers,
                         const struct plan *head, const struct step_io *io, int reps, struct profile *p,
                         struct err *e)
{
    double *walls = calloc((size_t)reps, sizeof *walls);
    int st = walls ? ST_OK : err_set(e, ST_RUNTIME, "out of host memory");
    for (int r = 0; !st && r < reps; r++) st = engine_step(en, sh, layers, head, io, 1, false, false, &walls[r], e);
    if (!st) p->wall_us = timing_from(walls, reps);
    free(walls);
    return st;
}

static int gap_probe(struct engine *en, const struct step_shape *sh, const struct plan *layers,
                     const struct plan *head, const struct step_io *io, struct profile *p, struct err *e)
{
    double w1 = INFINITY, w2 = INFINITY, h1 = INFINITY, h2 = INFINITY, t;
    int st = ST_OK;
    struct progress pr;
    progress_begin(&pr, "gap probe", GAP_PROBE_REPS, "reps", 1);
    for (int r = 0; !st && r < GAP_PROBE_REPS; r++) {
        progress_update(&pr, (uint64_t)r);
        if (!(st = engine_step(en, sh, layers, NULL, io, 1, false, false, &t, e))) w1 = fmin(w1, t);
        if (!st && !(st = engine_step(en, sh, layers, NULL, io, 2, false, false, &t, e))) w2 = fmin(w2, t);
        if (!st && head && !(st = engine_step(en, sh, layers, head, io, 1, false, false, &t, e))) h1 = fmin(h1, t);
        if (!st && head && !(st = engine_step(en, sh, layers, head, io, 2, false, false, &t, e))) h2 = fmin(h2, t);
    }
    progress_end(&pr);
    if (st) return st;
    uint64_t head_bytes = 0;
    for (int i = 0; head && i < head->n; i++) head_bytes += head->d[i].bytes;
    double busy = p->busy_us.n_reps ? p->busy_us.mean : 0, hsum = p->head_us.n_reps ? p->head_us.mean : 0;
    gap_probe_compute(&p->gap_probe, w1, w2, busy, head != NULL, h1, h2, hsum, head_bytes, (uint64_t)en->d->vocab,
                      (uint64_t)en->d->hidden);
    return ST_OK;
}

int profile_run(struct gpu *g, const struct model_desc *d, const struct shard *s, const struct dev_weights *w,
                const struct options *o, struct profile *p, struct err *e)
{
    memset(p, 0, sizeof *p);
    fill_profile_header(g, d, s, o, p);
    int n_slots = o->slots ? o->slots : o->cols, per = o->cols / n_slots;
    bool head_on = (o->logits || o->spec) && s->last;
    struct step_shape sh = {.cols = o->cols, .n_runs = n_slots, .n_logits = head_on ? o->cols : 0, .prefill = per > 1,
                            .plan = o->spec ? PLAN_SPEC : PLAN_BATCH};
    struct step_shape warm = {.cols = n_slots, .n_runs = n_slots, .n_logits = 0, .prefill = false};
    struct engine en;
    struct plan layers = {0}, head = {0}, wplan = {0};
    struct columns cols = {0}, wcols = {0};
    uint64_t rng = 0x5eed0000ull + o->seed;
    double bw = 0;
    int st = gpu_copy_bandwidth(g, 5, &bw, e);
    p->device.copy_gbps = bw * 1e-9;
    if (!st)
        st = engine_init_spec(&en, g, d, s, w, MAX(o->cols, n_slots), n_slots, o->pos + per, head_on ? o->cols : 0,
                              o->spec ? per : 0, e);
    if (!st) st = engine_build(&en, &sh, &layers, head_on ? &head : NULL, e);
    if (!st) st = engine_build(&en, &warm, &wplan, NULL, e);
    if (!st) st = columns_alloc(&cols, o->cols, n_slots, d->hidden, e);
    if (!st) st = columns_alloc(&wcols, n_slots, n_slots, d->hidden, e);
    /* warm-up: decode steps at positions 0..pos-1, one column per slot, so KV and state are real */
    struct progress pr;
    progress_begin(&pr, "warm-up", (uint64_t)o->pos, "steps", 1);
    for (int t = 0; !st && t < o->pos; t++) {
        columns_make(&wcols, n_slots, 1, t, d->vocab, false);
        for (int i = 0; i < n_slots; i++) wcols.cols[i].token = (uint32_t)((1000 + i * per + t) % d->vocab);
        if (!s->first) fill_hidden(wcols.hidden, (size_t)n_slots * d->hidden, &rng);
        struct step_io io = {.cols = wcols.cols, .runs = wcols.runs, .logit_idx = wcols.idx,
                             .hidden_in = s->first ? NULL : wcols.hidden};
        st = engine_step(&en, &warm, &wplan, NULL, &io, 1, false, false, NULL, e);
        progress_update(&pr, (uint64_t)t + 1);
    }
    progress_end(&pr);
    if (!st) {
        columns_make(&cols, n_slots, per, o->pos, d->vocab, o->logits || o->spec);
        if (!s->first) fill_hidden(cols.hidden, (size_t)o->cols * d->hidden, &rng);
        struct step_io io = {.cols = cols.cols, .runs = cols.runs, .logit_idx = cols.idx,
                             .hidden_in = s->first ? NULL : cols.hidden};
        const struct plan *hp = head_on ? &head : NULL;
        if (p->device.has_timestamps) {
            st = profile_dispatches(&en, &sh, &layers, hp, &io, o->reps, p, e);
            if (!st) {
                profile_totals(p);
                profile_by_kind(p);
            }
        } else {
            st = profile_walls(&en, &sh, &layers, hp, &io, o->reps, p, e);
            if (!st) profile_by_kind(p); /* no dispatch times: sets tok_s from the wall */
        }
        if (!st && o->gap_probe) st = gap_probe(&en, &sh, &layers, hp, &io, p, e);
    }
    plan_free(&layers);
    plan_free(&head);
    plan_free(&wplan);
    columns_free(&cols);
    columns_free(&wcols);
    return st;
}
