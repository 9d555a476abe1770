/* figures.c - the profile's derived numbers: the by-kind table, the gap-probe arithmetic and its
 * verdict, the weight-bytes floor and the attribution sums. */
#include "profile.h"
#include "report_fmt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void timing_free(struct timing *t)
{
    free(t->reps);
    memset(t, 0, sizeof *t);
}

void gap_probe_free(struct gap_probe *g)
{
    timing_free(&g->w1);
    timing_free(&g->w2);
    timing_free(&g->hw1);
    timing_free(&g->hw2);
}

void profile_free(struct profile *p)
{
    gap_probe_free(&p->gap_probe);
    for (int i = 0; i < p->attribution.n_rows; i++)
        timing_free(&p->attribution.rows[i].us);
    free(p->attribution.rows);
    timing_free(&p->attribution.base_us);
    for (int i = 0; i < p->n_dispatches; i++)
        timing_free(&p->dispatches[i].us);
    for (int i = 0; i < p->n_kinds; i++)
        timing_free(&p->by_kind[i].us);
    free(p->dispatches);
    free(p->by_kind);
    timing_free(&p->busy_us);
    timing_free(&p->head_us);
    timing_free(&p->wall_us);
    memset(p, 0, sizeof *p);
}

const char *profile_precision(const struct profile *p)
{
    return p->precision[0] ? p->precision : "exact";
}

/* Whether a pipeline rounds its product's inputs to f16: the _serving variants, and gemm_cm2's
 * serving modes (gemm_cm2[_swiglu]_<type>, gemm_cm2_xf16[_swiglu]_<type>: the wide plan's; its
 * f32-accurate modes are gemm_cm2_exact_* and gemm_cm2_prep_*, shaders/variants.txt). */
static bool pipeline_rounds(const char *name)
{
    if (strstr(name, "_serving")) return true;
    if (strncmp(name, "gemm_cm2_", 9)) return false;
    return strncmp(name + 9, "exact", 5) && strncmp(name + 9, "prep", 4);
}

int profile_serving_dispatches(const struct profile *p)
{
    int n = 0;
    for (int i = 0; i < p->n_dispatches; i++) n += pipeline_rounds(p->dispatches[i].pipeline);
    return n;
}

bool prof_kind_is_head(const char *kind)
{
    return strncmp(kind, "head.", 5) == 0;
}

/* Whether dispatch d belongs to the group: of `kind` (and of `op` unless op is NULL or ""), or with
 * kind NULL every head (head) or every layer (!head) dispatch. */
static bool in_group(const struct prof_dispatch *d, const char *kind, const char *op, bool head)
{
    if (!kind) return prof_kind_is_head(d->kind) == head;
    return strcmp(d->kind, kind) == 0 && (!op || !op[0] || strcmp(d->op, op) == 0);
}

/* Per-rep sum of the dispatches of a group (in_group). The result has as many reps as the
 * shortest member (sampled timing: rep j sums every member's j-th sample); members without reps
 * add their mean. */
static struct timing sum_group(const struct profile *p, const char *kind, const char *op, bool head,
                               int *count)
{
    int n_reps = -1, n = 0;
    for (int i = 0; i < p->n_dispatches; i++) {
        const struct prof_dispatch *d = &p->dispatches[i];
        if (!in_group(d, kind, op, head)) continue;
        n++;
        if (d->us.n_reps > 0 && (n_reps < 0 || d->us.n_reps < n_reps)) n_reps = d->us.n_reps;
    }
    if (count) *count = n;
    if (n == 0) return (struct timing){0};
    if (n_reps <= 0) n_reps = 1;
    double *s = calloc((size_t)n_reps, sizeof(double));
    CHECK(s);
    for (int i = 0; i < p->n_dispatches; i++) {
        const struct prof_dispatch *d = &p->dispatches[i];
        if (!in_group(d, kind, op, head)) continue;
        for (int r = 0; r < n_reps; r++)
            s[r] += d->us.n_reps > 0 ? d->us.reps[r] : d->us.mean;
    }
    struct timing t = timing_from(s, n_reps);
    free(s);
    return t;
}

static struct timing sum_dispatches(const struct profile *p, const char *kind, bool head,
                                    int *count)
{
    return sum_group(p, kind, NULL, head, count);
}

double safe_div(double a, double b)
{
    return b > 0 ? a / b : 0.0;
}

/* bytes over µs in GB/s */
static double gbps_of(double bytes, double us)
{
    return safe_div(bytes, us * 1e3);
}

static void set_tok_s(struct profile *p)
{
    double t =
        p->device.has_timestamps && p->busy_us.n_reps ? p->busy_us.median : p->wall_us.median;
    p->tok_s = safe_div(p->shape.cols * 1e6, t);
}

void profile_totals(struct profile *p)
{
    timing_free(&p->busy_us);
    timing_free(&p->head_us);
    p->busy_us = sum_dispatches(p, NULL, false, NULL);
    p->head_us = sum_dispatches(p, NULL, true, NULL);
    set_tok_s(p);
}

double profile_kinds_sum(const struct profile *p, bool head)
{
    double s = 0;
    for (int k = 0; k < p->n_kinds; k++)
        if (prof_kind_is_head(p->by_kind[k].kind) == head) s += p->by_kind[k].us.median;
    return s;
}

double profile_tok_s_head(const struct profile *p)
{
    const struct gap_probe *g = &p->gap_probe;
    if (p->device.has_timestamps && p->busy_us.n_reps && p->head_us.n_reps)
        return safe_div(p->shape.cols * 1e6, p->busy_us.median + p->head_us.median);
    if (g->ran && g->head) return safe_div(p->shape.cols * 1e6, g->head_wall1_us);
    return 0;
}

static int cmp_kind_total(const void *a, const void *b)
{
    const struct prof_kind *x = a, *y = b;
    if (x->us.median != y->us.median) return x->us.median < y->us.median ? 1 : -1;
    return strcmp(x->kind, y->kind);
}

void profile_by_kind(struct profile *p)
{
    for (int i = 0; i < p->n_kinds; i++)
        timing_free(&p->by_kind[i].us);
    free(p->by_kind);
    p->by_kind = calloc((size_t)(p->n_dispatches > 0 ? p->n_dispatches : 1), sizeof *p->by_kind);
    CHECK(p->by_kind);
    p->n_kinds = 0;
    for (int i = 0; i < p->n_dispatches; i++) {
        const struct prof_dispatch *d = &p->dispatches[i];
        int k = 0;
        while (k < p->n_kinds && strcmp(p->by_kind[k].kind, d->kind) != 0)
            k++;
        if (k == p->n_kinds) {
            snprintf(p->by_kind[k].kind, sizeof p->by_kind[k].kind, "%s", d->kind);
            p->n_kinds++;
        }
        p->by_kind[k].bytes += d->bytes;
        p->by_kind[k].kv_bytes += d->kv_bytes;
        p->by_kind[k].flops += d->flops;
        p->by_kind[k].flops_exec += d->flops_exec ? d->flops_exec : d->flops;
    }
    for (int k = 0; k < p->n_kinds; k++) {
        struct prof_kind *pk = &p->by_kind[k];
        pk->us = sum_dispatches(p, pk->kind, false, &pk->n);
    }
    double layer_sum = profile_kinds_sum(p, false), head_sum = profile_kinds_sum(p, true);
    for (int k = 0; k < p->n_kinds; k++) {
        struct prof_kind *pk = &p->by_kind[k];
        pk->share = safe_div(pk->us.median, prof_kind_is_head(pk->kind) ? head_sum : layer_sum);
        uint64_t read = pk->bytes + pk->kv_bytes;
        pk->gbps = read > 0 ? gbps_of((double)read, pk->us.median) : 0.0;
        pk->bw_share = safe_div(pk->gbps, p->device.copy_gbps);
        pk->tflops = pk->flops > 0 ? safe_div((double)pk->flops * 1e-6, pk->us.median) : 0.0;
        pk->roof_share = safe_div(pk->tflops, p->device.roof_tflops);
    }
    qsort(p->by_kind, (size_t)p->n_kinds, sizeof *p->by_kind, cmp_kind_total);
    set_tok_s(p);
}

/* ------------------------------------------------------------------------------------------------
 * Gap probe: submit and wait happen once in both walls, so they cancel in the difference:
 *   wall(2×) − wall(1×) = one plan pass = kernel time + inter-dispatch cost. */

/* The arithmetic on figures with errors. has_busy: the kernel sum is known (timestamps). */
struct probe_figs {
    struct est w1, w2, busy, hw1, hw2, hsum, wall_ts;
    bool has_busy, head, has_hsum, has_wall_ts;
    int n_timestamped;
    uint64_t head_bytes_real, vocab, hidden;
};

static void probe_arith(struct gap_probe *g, const struct probe_figs *f)
{
    g->ran = true;
    g->wall1_us = f->w1.v;
    g->wall2_us = f->w2.v;
    g->marginal = est_sub(f->w2, f->w1);
    g->fixed = est_sub(f->w1, g->marginal);
    g->fixed.u = hypot(2 * f->w1.u, f->w2.u); /* w1 − (w2 − w1) = 2·w1 − w2 */
    g->marginal_us = g->marginal.v;
    g->fixed_us = g->fixed.v;
    g->kernel_sum_us = f->has_busy ? f->busy.v : 0;
    if (f->has_busy) {
        g->gaps = est_sub(g->marginal, f->busy);
        g->gaps_us = g->gaps.v;
        g->gaps_share = safe_div(g->gaps_us, g->marginal_us);
        /* gaps − 25 % of the marginal pass = 0.75·marginal − busy: which side of the line, and
         * whether the line lies inside the noise */
        struct est d = est_sub(est_scale(g->marginal, 0.75), f->busy);
        g->line = d;
        /* advice only from figures beyond noise: the line and the marginal pass it is made of */
        g->verdict = est_within_noise(d) || est_within_noise(g->marginal) ? VERDICT_INCONCLUSIVE
                     : d.v > 0                                            ? VERDICT_PER_DISPATCH
                                                                          : VERDICT_SUBMIT_POLL;
    } else {
        g->verdict = VERDICT_UNKNOWN;
    }
    g->per_dispatch = g->verdict == VERDICT_PER_DISPATCH;
    if (f->has_wall_ts) {
        g->ts_add = est_sub(f->wall_ts, f->head ? f->hw1 : f->w1);
        g->ts_pair_us = safe_div(g->ts_add.v, f->n_timestamped);
    }
    if (!f->head) return;
    g->head = true;
    g->head_wall1_us = f->hw1.v;
    g->head_wall2_us = f->hw2.v;
    struct est mh = est_sub(f->hw2, f->hw1);
    g->marginal_head_us = mh.v;
    g->lm_head = est_sub(mh, g->marginal);
    g->lm_head_us = g->lm_head.v;
    g->lm_head_share = safe_div(g->lm_head_us, g->marginal_head_us);
    g->head_kernel_sum_us = f->has_hsum ? f->hsum.v : 0;
    g->head_bytes_real = f->head_bytes_real;
    g->head_bytes_f16 = f->vocab * f->hidden * 2;
    g->head_bytes_q4_0 = f->vocab * f->hidden * 9 / 16; /* 18 bytes per 32 weights = 0.5625 */
    g->head_gbps = gbps_of((double)f->head_bytes_real, g->lm_head_us);
    g->head_gbps_f16 = gbps_of((double)g->head_bytes_f16, g->lm_head_us);
    g->head_gbps_q4_0 = gbps_of((double)g->head_bytes_q4_0, g->lm_head_us);
    if (f->has_hsum && f->hsum.v > 0) {
        double larger = MAX(fabs(f->hsum.v), fabs(g->lm_head_us));
        struct est diff = est_sub(f->hsum, g->lm_head);
        g->disagree = fabs(diff.v) > 0.10 * larger && !est_within_noise(diff);
    }
}

void gap_probe_compute(struct gap_probe *g, double w1_min_us, double w2_min_us,
                       double kernel_sum_us, bool head, double hw1_min_us, double hw2_min_us,
                       double head_kernel_sum_us, uint64_t head_bytes_real, uint64_t vocab,
                       uint64_t hidden)
{
    memset(g, 0, sizeof *g);
    struct probe_figs f = {
        .w1 = est_exact(w1_min_us),
        .w2 = est_exact(w2_min_us),
        .busy = est_exact(kernel_sum_us),
        .hw1 = est_exact(hw1_min_us),
        .hw2 = est_exact(hw2_min_us),
        .hsum = est_exact(head_kernel_sum_us),
        .has_busy = true,
        .head = head,
        .has_hsum = head_kernel_sum_us > 0,
        .head_bytes_real = head_bytes_real,
        .vocab = vocab,
        .hidden = hidden,
    };
    probe_arith(g, &f);
}

static bool has_reps(const struct timing *t)
{
    return t && t->n_reps > 0;
}

void gap_probe_compute_reps(struct gap_probe *g, const struct gap_probe_in *in)
{
    memset(g, 0, sizeof *g);
    bool head = in->hw1 && in->hw2;
    struct probe_figs f = {
        .w1 = est_median(in->w1),
        .w2 = est_median(in->w2),
        .has_busy = has_reps(in->busy),
        .head = head,
        .has_hsum = has_reps(in->head_sum),
        .has_wall_ts = has_reps(in->wall_ts) && in->n_timestamped > 0,
        .n_timestamped = in->n_timestamped,
        .head_bytes_real = in->head_bytes_real,
        .vocab = in->vocab,
        .hidden = in->hidden,
    };
    if (f.has_busy) f.busy = est_median(in->busy);
    if (f.has_hsum) f.hsum = est_median(in->head_sum);
    if (f.has_wall_ts) f.wall_ts = est_median(in->wall_ts);
    if (head) {
        f.hw1 = est_median(in->hw1);
        f.hw2 = est_median(in->hw2);
    }
    probe_arith(g, &f);
    g->n_reps = in->w1->n_reps;
    g->w1 = timing_copy(in->w1);
    g->w2 = timing_copy(in->w2);
    if (head) {
        g->hw1 = timing_copy(in->hw1);
        g->hw2 = timing_copy(in->hw2);
    }
}

/* ------------------------------------------------------------------------------------------------
 * Floor and attribution */

uint64_t profile_floor_bytes(const struct profile *p)
{
    uint64_t total = 0;
    for (int i = 0; i < p->n_dispatches; i++) {
        const struct prof_dispatch *d = &p->dispatches[i];
        if (d->bytes_again) continue;
        bool seen = false;
        uint64_t most = d->bytes;
        for (int j = 0; j < p->n_dispatches; j++) {
            const struct prof_dispatch *o = &p->dispatches[j];
            if (o->bytes_again || o->layer != d->layer || strcmp(o->op, d->op) != 0 ||
                prof_kind_is_head(o->kind) != prof_kind_is_head(d->kind))
                continue;
            if (j < i) seen = true;
            most = MAX(most, o->bytes);
        }
        if (!seen) total += most;
    }
    return total;
}

void profile_flops(const struct profile *p, uint64_t *flops, uint64_t *exec)
{
    *flops = *exec = 0;
    for (int i = 0; i < p->n_dispatches; i++) {
        const struct prof_dispatch *d = &p->dispatches[i];
        *flops += d->flops;
        *exec += d->flops_exec ? d->flops_exec : d->flops;
    }
}

const char *bound_kind_name(enum bound_kind k)
{
    return k == BOUND_MEMORY ? "memory" : k == BOUND_COMPUTE ? "compute" : "unknown";
}

/* the larger of the two lower bounds applies: compute when flops ÷ roof > bytes ÷ bandwidth, i.e.
 * when the intensity passes the balance */
enum bound_kind bound_pick(double floor_us, double roof_us)
{
    if (roof_us > 0 && roof_us > floor_us) return BOUND_COMPUTE;
    return floor_us > 0 ? BOUND_MEMORY : BOUND_UNKNOWN;
}

struct bound bound_of(uint64_t flops, uint64_t bytes, double copy_gbps, double roof_tflops, double step_us)
{
    struct bound b = {BOUND_UNKNOWN, 0, 0, 0, 0, 0};
    if (bytes > 0 && copy_gbps > 0) b.floor_us = (double)bytes / (copy_gbps * 1e3);
    if (flops > 0 && roof_tflops > 0) b.roof_us = (double)flops / (roof_tflops * 1e6);
    if (bytes > 0) b.intensity = (double)flops / (double)bytes;
    if (copy_gbps > 0) b.balance = roof_tflops * 1e3 / copy_gbps;
    b.kind = bound_pick(b.floor_us, b.roof_us);
    b.x = safe_div(step_us, b.kind == BOUND_COMPUTE ? b.roof_us : b.floor_us);
    return b;
}

struct bound profile_bound(const struct profile *p, double step_us)
{
    uint64_t flops, exec;
    profile_flops(p, &flops, &exec);
    return bound_of(flops, p->floor_bytes, p->device.copy_gbps, p->device.roof_tflops, step_us);
}

void attribution_compute(struct profile *p, struct est marginal)
{
    struct prof_attribution *a = &p->attribution;
    a->sum = est_exact(0);
    for (int i = 0; i < a->n_rows; i++) {
        struct prof_attrib *r = &a->rows[i];
        r->diff = est_median(&r->us);
        if (p->device.has_timestamps && p->n_dispatches > 0) {
            struct timing t = sum_group(p, r->kind, r->op, false, NULL);
            r->ts_us = t.median;
            timing_free(&t);
        }
        struct est excess = est_sub(est_exact(r->ts_us), r->diff);
        r->ts_inflated = r->attributable && r->ts_us > 0 && excess.v > 0.10 * fabs(r->diff.v) &&
                         !est_within_noise(excess);
        if (!r->attributable) continue;
        a->sum.v += r->diff.v;
        a->sum.u = hypot(a->sum.u, r->diff.u);
    }
    a->marginal = marginal;
    a->closure = est_sub(a->sum, marginal);
    a->closure_share = safe_div(a->closure.v, marginal.v);
}
