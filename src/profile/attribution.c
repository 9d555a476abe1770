/* attribution.c - the --attribution mode: what each kind costs in place, without timestamps. */
#include "profile_step.h"

#include <stdlib.h>
#include <string.h>

#include "progress.h"

/* ------------------------------------------------------------------------------------------------
 * Attribution: what each kind costs in place, without timestamps.
 *
 * The step's dispatches (layers then head) form one list C. For a group K (a kind, or a kind and
 * an op) the variant C_K is C with every dispatch of K recorded once more, its outputs (the push
 * fields struct dispatch declares) redirected to shadow copies of the engine buffers they point
 * into, at the same offsets, so the extra dispatch reads what the original reads, writes nothing
 * the step uses, and the step's data and state stay as they are. The copy of dispatch i runs
 * half a plan after it (after dispatch (i + n/2) mod n): right after the original it would find
 * its weights in the last-level cache (50 MB on an H200, larger than many single weights) and cost
 * less than the original. Per rep: wall(C_K) − wall(C), both with the plan recorded ATTRIB_REPEAT
 * times in one submit (submit and wait cancel; the repeat halves their jitter per plan); the
 * median over reps is K's cost, with its error from the MAD. The closure sets the sum against the
 * marginal pass of C measured in the same reps. */

#define ATTRIB_REPEAT 2

/* Appends a copy of dispatch d (tags and outputs included). */
static struct dispatch *plan_append(struct plan *p, const struct dispatch *d)
{
    struct dispatch *x =
        plan_add(p, d->pipe, d->push, d->push_size, d->groups[0], d->groups[1], d->groups[2]);
    *x = *d;
    return x;
}

struct shadow {
    const struct gpu_buf *real;
    struct gpu_buf copy;
    bool used;
};

/* The buffers a dispatch may write: the engine's, and the kernels' scratch (kernels.h k_scratch:
 * prepared activations, f16 copies of Q4_0 weights, attention's split outputs, gemm_cm2's split-k
 * planes); the profiler shadows those outputs point into (at most MAX_SHADOWS). */
#define MAX_SHADOWS (13 + 2 * ENGINE_POOL_BUFS)
static int shadows_list(struct engine *en, struct shadow sh[MAX_SHADOWS])
{
    const struct gpu_buf *bufs[] = {&en->hidden, &en->xn,     &en->t1,        &en->t2,        &en->q,
                                    &en->k,      &en->v,      &en->att,       &en->logits,    &en->scratch.gemm_x,
                                    &en->scratch.gemm_w, &en->scratch.attn_part, &en->scratch.gemm_part};
    _Static_assert(ARRAY_LEN(bufs) + 2 * ENGINE_POOL_BUFS <= MAX_SHADOWS, "MAX_SHADOWS counts every buffer");
    int n = 0;
    for (size_t i = 0; i < ARRAY_LEN(bufs); i++)
        sh[n++] = (struct shadow){.real = bufs[i]};
    for (int i = 0; i < en->state.n; i++) sh[n++] = (struct shadow){.real = &en->state.buf[i]};
    for (int i = 0; i < en->kv.n; i++) sh[n++] = (struct shadow){.real = &en->kv.buf[i]};
    return n;
}

static struct shadow *shadow_of(struct shadow *sh, int n, uint64_t addr)
{
    for (int i = 0; i < n; i++)
        if (addr >= sh[i].real->addr && addr < sh[i].real->addr + sh[i].real->size) return &sh[i];
    return NULL;
}

/* Whether every output of d lies in a shadowed buffer (marks those buffers used). */
static bool redirectable(const struct dispatch *d, struct shadow *sh, int n_sh)
{
    if (d->n_out == 0) return false;
    for (int o = 0; o < d->n_out; o++) {
        uint64_t addr;
        memcpy(&addr, d->push + d->out_at[o], 8);
        struct shadow *s = shadow_of(sh, n_sh, addr);
        if (!s) return false;
        s->used = true;
    }
    return true;
}

static void redirect(struct dispatch *d, struct shadow *sh, int n_sh)
{
    for (int o = 0; o < d->n_out; o++) {
        uint64_t addr;
        memcpy(&addr, d->push + d->out_at[o], 8);
        struct shadow *s = shadow_of(sh, n_sh, addr);
        CHECK(s && s->copy.addr);
        addr = s->copy.addr + (addr - s->real->addr);
        memcpy(d->push + d->out_at[o], &addr, 8);
    }
}

static bool same_group(const struct dispatch *d, const struct prof_attrib *r)
{
    return !strcmp(d->kind, r->kind) && (!r->op[0] || !strcmp(d->op, r->op));
}

/* C_K: the list with group r's dispatches repeated half a plan later, redirected. */
static void plan_variant(const struct plan *c, const struct prof_attrib *r, struct shadow *sh,
                         int n_sh, struct plan *out)
{
    int n = c->n;
    out->kind = c->kind;
    for (int j = 0; j < n; j++) {
        plan_append(out, &c->d[j]);
        for (int i = 0; i < n; i++)
            if ((i + n / 2) % n == j && same_group(&c->d[i], r))
                redirect(plan_append(out, &c->d[i]), sh, n_sh);
    }
}

/* The attribution groups of list c, in order of first appearance; attributable unless a member
 * has undeclared or unshadowed outputs. */
static int attribution_groups(const struct plan *c, bool by_op, struct shadow *sh, int n_sh,
                              struct prof_attribution *a, struct err *e)
{
    a->rows = calloc((size_t)(c->n ? c->n : 1), sizeof *a->rows);
    if (!a->rows) return err_set(e, ST_RUNTIME, "out of host memory");
    for (int i = 0; i < c->n; i++) {
        const struct dispatch *d = &c->d[i];
        int k = 0;
        while (k < a->n_rows && !(strcmp(a->rows[k].kind, d->kind) == 0 &&
                                  (!by_op || !strcmp(a->rows[k].op, d->op))))
            k++;
        struct prof_attrib *r = &a->rows[k];
        if (k == a->n_rows) {
            snprintf(r->kind, sizeof r->kind, "%s", d->kind);
            if (by_op) snprintf(r->op, sizeof r->op, "%s", d->op);
            r->attributable = true;
            a->n_rows++;
        }
        r->n++;
        r->attributable = redirectable(d, sh, n_sh) && r->attributable;
    }
    return ST_OK;
}

/* Shadow buffers for every used one, filled with the real contents (real data, never zeros). */
static int shadows_make(struct gpu *g, struct shadow *sh, int n_sh, struct err *e)
{
    int st = ST_OK;
    for (int i = 0; !st && i < n_sh; i++)
        if (sh[i].used) st = gpu_alloc(g, sh[i].real->size, GPU_MEM_DEVICE, &sh[i].copy, e);
    if (st) return err_wrap(e, st, "--attribution scratch copies of the step's outputs");
    if ((st = gpu_cmd_begin(g, e))) return st;
    for (int i = 0; i < n_sh; i++)
        if (sh[i].used) gpu_cmd_copy(g, sh[i].real, 0, &sh[i].copy, 0, sh[i].real->size);
    return gpu_submit_wait(g, NULL, e);
}

int profile_attribution(const struct step_ctx *c, bool by_op, struct profile *p, struct err *e)
{
    struct prof_attribution *a = &p->attribution;
    struct plan all = {.kind = c->layers->kind};
    struct plan *var = NULL;
    struct shadow sh[MAX_SHADOWS];
    int n_sh = shadows_list(c->en, sh), reps = c->reps, st = ST_OK;
    for (int i = 0; i < c->layers->n; i++)
        plan_append(&all, &c->layers->d[i]);
    for (int i = 0; c->head && i < c->head->n; i++)
        plan_append(&all, &c->head->d[i]);
    st = attribution_groups(&all, by_op, sh, n_sh, a, e);
    double *w = NULL;
    if (!st) st = shadows_make(c->en->g, sh, n_sh, e);
    if (!st) {
        var = calloc((size_t)a->n_rows, sizeof *var);
        w = calloc((size_t)(a->n_rows + 2) * reps, sizeof *w);
        if (!var || !w) st = err_set(e, ST_RUNTIME, "out of host memory");
    }
    for (int k = 0; !st && k < a->n_rows; k++)
        if (a->rows[k].attributable) plan_variant(&all, &a->rows[k], sh, n_sh, &var[k]);
    /* per rep: the plain list once and ATTRIB_REPEAT times, then every variant */
    struct progress pr;
    progress_begin(&pr, "attribution", (uint64_t)reps, "reps", 1);
    for (int r = 0; !st && r < reps; r++) {
        progress_update(&pr, (uint64_t)r);
        st = engine_step(c->en, c->sh, &all, NULL, c->io, 1, false, false, &w[r], e);
        if (!st)
            st = engine_step(c->en, c->sh, &all, NULL, c->io, ATTRIB_REPEAT, false, false,
                             &w[reps + r], e);
        for (int k = 0; !st && k < a->n_rows; k++)
            if (a->rows[k].attributable)
                st = engine_step(c->en, c->sh, &var[k], NULL, c->io, ATTRIB_REPEAT, false, false,
                                 &w[(2 + k) * reps + r], e);
    }
    progress_end(&pr);
    if (!st) {
        double *d = calloc((size_t)reps, sizeof *d);
        CHECK(d);
        for (int k = 0; k < a->n_rows; k++) {
            if (!a->rows[k].attributable) continue;
            for (int r = 0; r < reps; r++)
                d[r] = (w[(2 + k) * reps + r] - w[reps + r]) / ATTRIB_REPEAT;
            a->rows[k].us = timing_from(d, reps);
        }
        free(d);
        struct timing t1 = timing_from(w, reps);
        a->base_us = timing_from(&w[reps], reps);
        struct est marginal = est_sub(est_median(&a->base_us), est_median(&t1));
        marginal.v /= ATTRIB_REPEAT - 1;
        marginal.u /= ATTRIB_REPEAT - 1;
        timing_free(&t1);
        a->ran = true;
        a->by_op = by_op;
        a->repeat = ATTRIB_REPEAT;
        attribution_compute(p, marginal);
    }
    for (int k = 0; var && k < a->n_rows; k++)
        plan_free(&var[k]);
    free(var);
    free(w);
    plan_free(&all);
    return st;
}
