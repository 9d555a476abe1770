/* report.c - the profile's derived numbers (timing statistics, by-kind table, gap-probe arithmetic)
 * and the two human reports: text (the seed's headings word for word) and GitHub Markdown. */
#include "profile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------------
 * Timing statistics */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of sorted[0..n) by linear interpolation between order statistics. */
static double quantile(const double *sorted, int n, double q)
{
    double at = q * (n - 1);
    int i = (int)floor(at);
    if (i >= n - 1) return sorted[n - 1];
    return sorted[i] + (at - i) * (sorted[i + 1] - sorted[i]);
}

struct timing timing_from(const double *samples, int n)
{
    struct timing t = {0};
    if (n <= 0) return t;
    t.reps = malloc((size_t)n * sizeof(double));
    double *sorted = malloc((size_t)n * sizeof(double));
    CHECK(t.reps && sorted); /* a few doubles: out of memory here is not recoverable */
    memcpy(t.reps, samples, (size_t)n * sizeof(double));
    memcpy(sorted, samples, (size_t)n * sizeof(double));
    qsort(sorted, (size_t)n, sizeof(double), cmp_double);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += samples[i];
    t.n_reps = n;
    t.mean = sum / n;
    t.min = sorted[0];
    t.median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    t.p10 = quantile(sorted, n, 0.10);
    t.p90 = quantile(sorted, n, 0.90);
    for (int i = 0; i < n; i++)
        sorted[i] = fabs(samples[i] - t.median);
    qsort(sorted, (size_t)n, sizeof(double), cmp_double);
    t.mad = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    free(sorted);
    return t;
}

struct timing timing_copy(const struct timing *t)
{
    struct timing c = timing_from(t->reps, t->n_reps);
    /* keep the statistics as given (a profile read from JSON keeps what its writer reported) */
    c.mean = t->mean;
    c.median = t->median;
    c.min = t->min;
    return c;
}

/* ------------------------------------------------------------------------------------------------
 * Figures with their errors. The median's standard error for normal noise is 1.2533 σ/√n and
 * σ ≈ 1.4826 MAD; the MAD keeps one wild rep (a preempted submit) from inflating the error. */

struct est est_median(const struct timing *t)
{
    if (t->n_reps <= 1) return (struct est){t->median, t->n_reps == 1 ? INFINITY : 0.0};
    return (struct est){t->median, 1.2533 * 1.4826 * t->mad / sqrt((double)t->n_reps)};
}

struct est est_sub(struct est a, struct est b)
{
    return (struct est){a.v - b.v, sqrt(a.u * a.u + b.u * b.u)};
}

struct est est_exact(double v)
{
    return (struct est){v, 0.0};
}

static struct est est_scale(struct est a, double k)
{
    return (struct est){k * a.v, fabs(k) * a.u};
}

bool est_within_noise(struct est x)
{
    return !(fabs(x.v) > EST_NOISE_K * x.u);
}

int est_reps_to_resolve(struct est x, double size, int n, double k)
{
    if (n < 2 || !isfinite(x.u) || !(fabs(size) > 0)) return 0;
    double want = ceil(n * pow(k * x.u / fabs(size), 2));
    return (int)MIN(MAX(want, n + 1.0), 100000.0);
}

/* ------------------------------------------------------------------------------------------------
 * Rank test. Exact null distribution of the Mann–Whitney U of sizes (m, n) by the recurrence
 * N(u; m, n) = N(u − n; m − 1, n) + N(u; m, n − 1) over arrangements (counts as doubles). */

#define RANK_EXACT_MAX 25

static double u_tail_exact(int m, int n, double u_obs)
{
    int umax = m * n;
    /* f[i][j][u] for i <= m, j <= n, rolled over i */
    double *prev = calloc((size_t)(n + 1) * (umax + 1), sizeof(double));
    double *cur = calloc((size_t)(n + 1) * (umax + 1), sizeof(double));
    CHECK(prev && cur);
#define F(a, j, u) (a)[(size_t)(j) * (umax + 1) + (u)]
    for (int j = 0; j <= n; j++)
        F(prev, j, 0) = 1; /* i = 0: one arrangement, U = 0 */
    for (int i = 1; i <= m; i++) {
        memset(cur, 0, (size_t)(n + 1) * (umax + 1) * sizeof(double));
        F(cur, 0, 0) = 1;
        for (int j = 1; j <= n; j++)
            for (int u = 0; u <= i * j; u++)
                F(cur, j, u) = (u >= j ? F(prev, j, u - j) : 0) + F(cur, j - 1, u);
        double *t = prev;
        prev = cur;
        cur = t;
    }
    double total = 0, tail = 0;
    for (int u = 0; u <= umax; u++) {
        total += F(prev, n, u);
        if (u >= u_obs - 1e-9) tail += F(prev, n, u);
    }
#undef F
    free(prev);
    free(cur);
    return tail / total;
}

/* Sorted copy of v[0..n) (caller frees). */
static double *sorted_copy(const double *v, int n)
{
    double *s = malloc((size_t)n * sizeof *s);
    CHECK(s);
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return s;
}

/* U of y over x (pairs with y above x, ties half) and the ties' term Σ (t³ − t) over the groups of
 * equal values in both samples together: one merge of the two sorted samples, O(n log n) in all.
 * Counts are doubles: 100 k reps a side give U up to 1e10 and t³ up to 8e15, exact in a double. */
static double rank_u(const double *x, int nx, const double *y, int ny, double *ties)
{
    double *sx = sorted_copy(x, nx), *sy = sorted_copy(y, ny);
    double u = 0;
    *ties = 0;
    int i = 0, j = 0; /* sx[0..i) and sy[0..j) lie below the current value */
    while (i < nx || j < ny) {
        double v = j >= ny || (i < nx && sx[i] < sy[j]) ? sx[i] : sy[j];
        int i1 = i, j1 = j;
        while (i1 < nx && sx[i1] == v) i1++;
        while (j1 < ny && sy[j1] == v) j1++;
        double tx = i1 - i, ty = j1 - j, t = tx + ty;
        u += ty * ((double)i + 0.5 * tx); /* each y of the group: the x below it, the tied x half */
        *ties += t * t * t - t;
        i = i1;
        j = j1;
    }
    free(sx);
    free(sy);
    return u;
}

double rank_test_greater(const double *x, int nx, const double *y, int ny)
{
    if (nx <= 0 || ny <= 0) return 1.0;
    double ties, u = rank_u(x, nx, y, ny, &ties);
    if (nx <= RANK_EXACT_MAX && ny <= RANK_EXACT_MAX) return u_tail_exact(ny, nx, ceil(u - 1e-9));
    /* normal approximation with continuity and tie correction, in doubles: the int product
     * nx·ny·(nx+ny+1) overflowed from 1024 reps a side (issue 35) */
    double m = nx, n = ny, big_n = m + n;
    double var = m * n / 12.0 * ((big_n + 1) - ties / (big_n * (big_n - 1)));
    if (!(var > 0)) return 1.0; /* every rep of both sides equal: nothing is greater */
    return 0.5 * erfc((u - 0.5 - 0.5 * m * n) / sqrt(var) / sqrt(2.0));
}

double rank_test_min_p(int nx, int ny)
{
    /* complete separation: 1 / C(nx + ny, nx) */
    double c = 1;
    for (int k = 1; k <= MIN(nx, ny); k++) c = c * (MAX(nx, ny) + k) / k;
    return nx > 0 && ny > 0 ? 1.0 / c : 1.0;
}

const char *verdict_name(enum verdict v)
{
    switch (v) {
    case VERDICT_SUBMIT_POLL:
        return "submit-poll";
    case VERDICT_PER_DISPATCH:
        return "per-dispatch";
    case VERDICT_INCONCLUSIVE:
        return "inconclusive";
    default:
        return "unknown";
    }
}

const char *timing_mode_name(enum timing_mode m)
{
    return m == TIMING_SAMPLED ? "sampled" : m == TIMING_NONE ? "none" : "full";
}

const char *fmt_sig3(char *buf, size_t size, double v)
{
    double a = fabs(v);
    if (!isfinite(v))
        snprintf(buf, size, "?");
    else if (a >= 99.95)
        snprintf(buf, size, "%.0f", v);
    else if (a >= 9.995)
        snprintf(buf, size, "%.1f", v);
    else if (a >= 0.9995 || a == 0)
        snprintf(buf, size, "%.2f", v);
    else
        snprintf(buf, size, "%.*f", 2 - (int)floor(log10(a)), v);
    return buf;
}

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

static double safe_div(double a, double b)
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
    }
    for (int k = 0; k < p->n_kinds; k++) {
        struct prof_kind *pk = &p->by_kind[k];
        pk->us = sum_dispatches(p, pk->kind, false, &pk->n);
        double whole = prof_kind_is_head(pk->kind) ? p->head_us.median : p->busy_us.median;
        pk->share = safe_div(pk->us.median, whole);
        uint64_t read = pk->bytes + pk->kv_bytes;
        pk->gbps = read > 0 ? gbps_of((double)read, pk->us.median) : 0.0;
        pk->bw_share = safe_div(pk->gbps, p->device.copy_gbps);
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

/* ------------------------------------------------------------------------------------------------
 * Shared pieces of both reports */

static bool has_head(const struct profile *p)
{
    for (int i = 0; i < p->n_dispatches; i++)
        if (prof_kind_is_head(p->dispatches[i].kind)) return true;
    return false;
}

static const char *bool_str(bool b)
{
    return b ? "true" : "false";
}

/* "--reps N would decide" for an inconclusive figure (N from est_reps_to_resolve), or "more --reps". */
static const char *fmt_reps_advice(char *buf, size_t size, int reps)
{
    if (reps > 0)
        snprintf(buf, size, "the measured spread says --reps %d would decide", reps);
    else
        snprintf(buf, size, "rerun with more --reps");
    return buf;
}

/* The LM head's one line when its figure is within noise. */
static const char *head_inconclusive(char *buf, size_t size, const struct gap_probe *g)
{
    char adv[96];
    snprintf(buf, size, "inconclusive at %d reps: the LM head figure is within noise, so no GB/s; %s", g->n_reps,
             fmt_reps_advice(adv, sizeof adv, est_reps_to_resolve(g->lm_head, g->lm_head.v, g->n_reps, EST_NOISE_K)));
    return buf;
}

static const char *verdict_text(char *buf, size_t size, const struct gap_probe *g)
{
    switch (g->verdict) {
    case VERDICT_PER_DISPATCH:
        return "dead time is PER-DISPATCH ⇒ fusing dispatches reclaims it. Fusion is on.";
    case VERDICT_SUBMIT_POLL:
        return "dead time is NOT per-dispatch ⇒ it is submit/poll latency. Fusion buys nothing; do "
               "not write a fused kernel.";
    case VERDICT_INCONCLUSIVE: {
        /* the reps at which every figure within noise (the line, the marginal pass) leaves it */
        int reps = 0;
        bool unknown = false;
        const struct est *figs[2] = {&g->line, &g->marginal};
        for (int i = 0; i < 2; i++) {
            if (!est_within_noise(*figs[i])) continue;
            int r = est_reps_to_resolve(*figs[i], figs[i]->v, g->n_reps, EST_NOISE_K);
            unknown |= r == 0;
            reps = MAX(reps, r);
        }
        char adv[96];
        snprintf(buf, size, "inconclusive at %d reps: %s, so no recommendation; %s", g->n_reps,
                 est_within_noise(g->marginal) ? "the marginal pass is within noise"
                                               : "the dead time is within noise of the 25 % line",
                 fmt_reps_advice(adv, sizeof adv, unknown ? 0 : reps));
        return buf;
    }
    default:
        return "unknown: without timestamps the kernel-time sum is unknown";
    }
}

/* What this tool's wall measures (the seed's per-dispatch-pass remark does not apply here). */
static const char *wall_meaning(const struct profile *p)
{
    if (!p->device.has_timestamps || p->timing == TIMING_NONE)
        return "wall: host submit + fence wait of ONE step: one command buffer, one submit, the "
               "plan's own "
               "barriers (no timestamps)";
    if (p->timing == TIMING_SAMPLED)
        return "wall: host submit + fence wait of ONE step: one command buffer, one submit, the "
               "plan's own "
               "barriers, plus a timestamp pair on every sampled dispatch; the gap probe times the "
               "plan without "
               "timestamps";
    return "wall: host submit + fence wait of ONE step: one command buffer, one submit, the plan's "
           "own "
           "barriers, plus a timestamp pair per dispatch; the gap probe times the plan without "
           "timestamps";
}

/* Share of a dispatch's time in its own plan: busy for layers, head sum for head. */
static double dispatch_share(const struct profile *p, const struct prof_dispatch *d)
{
    double whole = prof_kind_is_head(d->kind) ? p->head_us.median : p->busy_us.median;
    return safe_div(d->us.median, whole);
}

/* Indices of dispatches sorted by median time, descending (stable on index). Caller frees. */
static int *top_order(const struct profile *p)
{
    int *idx = malloc((size_t)(p->n_dispatches > 0 ? p->n_dispatches : 1) * sizeof(int));
    CHECK(idx);
    for (int i = 0; i < p->n_dispatches; i++)
        idx[i] = i;
    /* insertion sort: a plan has a few hundred dispatches and this keeps ties in step order */
    for (int i = 1; i < p->n_dispatches; i++) {
        int v = idx[i], j = i - 1;
        while (j >= 0 && p->dispatches[idx[j]].us.median < p->dispatches[v].us.median) {
            idx[j + 1] = idx[j];
            j--;
        }
        idx[j + 1] = v;
    }
    return idx;
}

static int n_top(const struct profile *p)
{
    return p->n_dispatches < 8 ? p->n_dispatches : 8;
}

/* Whether the top table lists a head dispatch beside layer ones (two denominators). */
static bool top_mixes(const struct profile *p, const int *idx)
{
    bool head = false, layer = false;
    for (int t = 0; t < n_top(p); t++)
        *(prof_kind_is_head(p->dispatches[idx[t]].kind) ? &head : &layer) = true;
    return head && layer;
}

/* µs with as many decimals as the size deserves. */
static const char *fmt_us(char *buf, size_t size, double v)
{
    double a = fabs(v);
    if (!isfinite(v))
        snprintf(buf, size, "?");
    else if (a >= 100)
        snprintf(buf, size, "%.0f", v);
    else if (a >= 10)
        snprintf(buf, size, "%.1f", v);
    else
        snprintf(buf, size, "%.2f", v);
    return buf;
}

/* "p10–p90 a–b, MAD m, n=N" */
static const char *fmt_spread(char *buf, size_t size, const struct timing *t)
{
    char a[32], b[32], m[32];
    snprintf(buf, size, "p10–p90 %s–%s, MAD %s, n=%d", fmt_us(a, sizeof a, t->p10),
             fmt_us(b, sizeof b, t->p90), fmt_us(m, sizeof m, t->mad), t->n_reps);
    return buf;
}

/* "± u" and ": within noise" for a derived figure. */
static const char *fmt_err(char *buf, size_t size, struct est x)
{
    char u[32];
    snprintf(buf, size, "± %-5s%s", fmt_us(u, sizeof u, x.u),
             est_within_noise(x) ? " within noise" : "");
    return buf;
}

/* The distinct kinds of the step's weight-reading dispatches (its matrix products), in step order:
 * "matmul_swiglu.bf16, matmul.bf16, head.matmul.bf16"; at most 6, then "...". */
static const char *weight_kinds(char *buf, size_t size, const struct profile *p)
{
    size_t used = 0;
    int n = 0;
    buf[0] = 0;
    for (int i = 0; i < p->n_dispatches; i++) {
        const struct prof_dispatch *d = &p->dispatches[i];
        bool seen = false;
        for (int j = 0; j < i && !seen; j++) seen = p->dispatches[j].bytes && !strcmp(p->dispatches[j].kind, d->kind);
        if (!d->bytes || seen || used >= size) continue;
        int w = n == 6 ? snprintf(buf + used, size - used, ", ...") :
                         snprintf(buf + used, size - used, "%s%s", n ? ", " : "", d->kind);
        if (w < 0) break;
        used += (size_t)w;
        if (n++ == 6) break;
    }
    return buf;
}

const char *report_plan_line(char *buf, size_t size, const struct profile *p)
{
    const struct prof_shape *s = &p->shape;
    char k[256];
    weight_kinds(k, sizeof k, p);
    bool as_batch = !strcmp(s->plan, "wide") && s->gemm_min_cols > 0 && s->cols < s->gemm_min_cols;
    int n = snprintf(buf, size, "plan %s%s", s->plan_auto ? "auto -> " : "", s->plan);
    if (n < 0 || (size_t)n >= size) return buf;
    if (s->plan_auto && s->gemm_min_cols > 0)
        n += snprintf(buf + n, size - (size_t)n, " (the plan a serving engine runs at %d cols: wide from %d)", s->cols,
                      s->gemm_min_cols);
    else if (as_batch)
        n += snprintf(buf + n, size - (size_t)n, " (below %d cols its matrix products run the batch plan's kernels)",
                      s->gemm_min_cols);
    if (n > 0 && (size_t)n < size && k[0]) snprintf(buf + n, size - (size_t)n, "; kernels reading weights: %s", k);
    return buf;
}

/* ------------------------------------------------------------------------------------------------
 * Text report */

static void text_header(FILE *out, const struct profile *p)
{
    const struct prof_device *d = &p->device;
    char bw[32];
    fprintf(out, "%s %s  device: %s  driver: %s  api: %s\n", p->tool, p->version, d->name,
            d->driver, d->api);
    if (p->tune[0]) fprintf(out, "tune: %s (kernel-choice overrides, not the defaults)\n", p->tune);
    if (d->has_timestamps)
        fprintf(out, "timestamps: period %.3f ns, %u valid bits", d->timestamp_period_ns,
                d->timestamp_valid_bits);
    else
        fprintf(out, "timestamps: NOT SUPPORTED on this device: no per-dispatch times, GPU busy "
                     "unknown, per-dispatch tables skipped (the gap probe still runs)");
    if (d->copy_gbps > 0)
        fprintf(out, "  copy bandwidth %s GB/s (device-to-device copy kernel, read + write)\n",
                fmt_sig3(bw, sizeof bw, d->copy_gbps));
    else
        fprintf(out, "  copy bandwidth not measured\n");
    fprintf(out, "model: %s %s, %d layers, hidden %d, vocab %d, from %s\n", p->model.family,
            p->model.dtype, p->model.n_layers, p->model.hidden, p->model.vocab, p->model.source);
}

static void text_busy(FILE *out, const struct profile *p)
{
    const struct prof_shape *s = &p->shape;
    char sp[128], sp2[128];
    fprintf(out,
            "== batch step profile: %d cols, pos %d, layers %d:%d, wide=%s spec=%s logits=%s "
            "slots=%d ==\n",
            s->cols, s->pos, p->shard.a, p->shard.b, bool_str(strcmp(s->plan, "wide") == 0),
            bool_str(strcmp(s->plan, "spec") == 0), bool_str(s->logits), s->slots);
    char pl[512];
    fprintf(out, "%s\n", report_plan_line(pl, sizeof pl, p));
    if (s->logits && s->logit_cols != s->cols)
        fprintf(out, "logits: each slot's last column (%d of %d; --all-logits: every column)\n", s->logit_cols,
                s->cols);
    if (strcmp(s->plan, "spec") == 0)
        fprintf(out,
                "plan spec: %d slots × drafts of %d tokens; every column gets a logit and a "
                "snapshot of every recurrent state (kinds *.snap)\n",
                s->slots, s->draft);
    bool ts = p->device.has_timestamps && p->busy_us.n_reps > 0;
    if (ts) {
        fprintf(out, "GPU busy %.0f µs/step  wall %.0f µs  → %.1f tok/s/stage at this width",
                p->busy_us.median, p->wall_us.median, p->tok_s);
        if (has_head(p)) fprintf(out, "  + LM head %.0f µs", p->head_us.median);
        fprintf(out, "\n");
        fprintf(out, "  (medians; busy %s; wall %s)\n", fmt_spread(sp, sizeof sp, &p->busy_us),
                fmt_spread(sp2, sizeof sp2, &p->wall_us));
        if (has_head(p))
            fprintf(out, "  (LM head: its kernel sum beside busy, not inside it; %s)\n",
                    fmt_spread(sp, sizeof sp, &p->head_us));
        fprintf(out, "  (timing: %s", timing_mode_name(p->timing));
        if (p->timing == TIMING_SAMPLED)
            fprintf(out,
                    ": every %d-th dispatch timestamped a step, %d steps; per-dispatch figures are "
                    "medians of their own samples, busy sums the j-th samples",
                    p->sample_stride, p->steps_timed);
        fprintf(out, ")\n");
    } else {
        fprintf(out,
                "GPU busy n/a µs/step  wall %.0f µs  → %.1f tok/s/stage at this width (from "
                "the wall: no timestamps)\n",
                p->wall_us.median, p->tok_s);
        fprintf(out, "  (medians; wall %s)\n", fmt_spread(sp, sizeof sp, &p->wall_us));
    }
    fprintf(out, "  (%s.)\n", wall_meaning(p));
    if (p->floor_bytes > 0 && p->floor_us > 0) {
        char mb[32], fl[32];
        fprintf(out, "  (floor: %s MB of weights ÷ copy bandwidth = %s µs)\n",
                fmt_sig3(mb, sizeof mb, p->floor_bytes / 1e6), fmt_us(fl, sizeof fl, p->floor_us));
    }
}

static void text_wall_line(FILE *out, const char *name, const struct timing *t)
{
    char sp[128];
    fprintf(out, "  %-19s%9.0f µs   (median; %s)\n", name, t->median, fmt_spread(sp, sizeof sp, t));
}

/* The gap probe's plan in words (text and markdown): its dispatches and dependent stages. */
static const char *plan_sentence(char *buf, size_t n, const struct gap_probe *g)
{
    snprintf(buf, n, "the plan: %d dispatch%s in %d stage%s, a barrier after each stage, only where data flows: each "
                     "stage waits for the one before", g->dispatches, g->dispatches == 1 ? "" : "es", g->barriers,
             g->barriers == 1 ? "" : "s");
    return buf;
}

static void text_gap_probe(FILE *out, const struct profile *p)
{
    char pl[192];
    const struct gap_probe *g = &p->gap_probe;
    bool ts = g->verdict != VERDICT_UNKNOWN;
    char er[64];
    fprintf(out, "-- gap probe (1× vs 2× plan in ONE pass; poll/submit cancel in the delta) --\n");
    if (g->n_reps > 0) {
        fprintf(out,
                "  (medians of %d reps on both sides of every subtraction; ± is the standard error "
                "of the difference, from the MADs; within noise: |figure| ≤ %.0f ±)\n",
                g->n_reps, EST_NOISE_K);
        text_wall_line(out, "wall 1×", &g->w1);
        text_wall_line(out, "wall 2×", &g->w2);
    } else {
        fprintf(out, "  wall 1×            %9.0f µs\n", g->wall1_us);
        fprintf(out, "  wall 2×            %9.0f µs\n", g->wall2_us);
    }
    fprintf(out, "  marginal pass      %9.0f µs %s  = kernels + inter-dispatch cost\n",
            g->marginal_us, fmt_err(er, sizeof er, g->marginal));
    if (g->dispatches > 0)
        fprintf(out, "  (%s)\n", plan_sentence(pl, sizeof pl, g));
    if (ts) {
        fprintf(out,
                "  kernel-time sum    %9.0f µs   (profiled above, median; excludes the LM head)\n",
                g->kernel_sum_us);
        fprintf(out, "  ⇒ inter-dispatch   %9.0f µs %s  (%.0f%% of the marginal pass)\n",
                g->gaps_us, fmt_err(er, sizeof er, g->gaps), 100.0 * g->gaps_share);
        if (g->gaps_us < 0 && !est_within_noise(g->gaps))
            fprintf(
                out,
                "     ↳ negative: the timestamps' own cost inside the kernel sum exceeds the dead "
                "time (see `timestamps add`)\n");
    } else {
        fprintf(out, "  kernel-time sum          n/a      (no timestamps on this device)\n");
    }
    fprintf(out, "  ⇒ fixed submit+poll%9.0f µs %s  (cancels out of the delta)\n", g->fixed_us,
            fmt_err(er, sizeof er, g->fixed));
    char vb[256];
    fprintf(out, "  VERDICT: %s\n", verdict_text(vb, sizeof vb, g));
    if (ts && p->wall_us.n_reps && g->ts_pair_us != 0) {
        char pair[32];
        fprintf(
            out,
            "  timestamps add     %9.0f µs %s  (profiled wall median %.0f µs vs %.0f µs without "
            "timestamps: %s µs a timestamp pair)\n",
            g->ts_add.v, fmt_err(er, sizeof er, g->ts_add), p->wall_us.median,
            g->head ? g->head_wall1_us : g->wall1_us, fmt_us(pair, sizeof pair, g->ts_pair_us));
    }
    if (!g->head) return;
    char a[32], b[32], c[32], d[32], e2[32];
    fprintf(out, "-- LM head (vocab %d) --\n", p->model.vocab);
    if (g->n_reps > 0) {
        text_wall_line(out, "wall 1× +head", &g->hw1);
        text_wall_line(out, "wall 2× +head", &g->hw2);
    }
    fprintf(out, "  marginal pass +head%9.0f µs\n", g->marginal_head_us);
    fprintf(out, "  ⇒ LM head          %9.0f µs %s  (%.0f%% of a pass WITH the head)\n",
            g->lm_head_us, fmt_err(er, sizeof er, g->lm_head), 100.0 * g->lm_head_share);
    if (est_within_noise(g->lm_head)) { /* no GB/s from a figure within noise */
        char hl[192];
        fprintf(out, "     ↳ %s\n", head_inconclusive(hl, sizeof hl, g));
        if (ts) fprintf(out, "  head timestamp sum %9.0f µs   (median)\n", g->head_kernel_sum_us);
        return;
    }
    fprintf(out, "     ↳ %s GB/s if the head is f16 (%s MB) | %s GB/s if q4_0 (%s MB)\n",
            fmt_sig3(a, sizeof a, g->head_gbps_f16), fmt_sig3(b, sizeof b, g->head_bytes_f16 / 1e6),
            fmt_sig3(c, sizeof c, g->head_gbps_q4_0),
            fmt_sig3(d, sizeof d, g->head_bytes_q4_0 / 1e6));
    fprintf(out, "     ↳ %s GB/s for its real size (%s, %s MB)",
            fmt_sig3(a, sizeof a, g->head_gbps), p->model.dtype,
            fmt_sig3(e2, sizeof e2, g->head_bytes_real / 1e6));
    if (p->device.copy_gbps > 0)
        fprintf(out, " = %.0f%% of copy bandwidth",
                100.0 * safe_div(g->head_gbps, p->device.copy_gbps));
    fprintf(out, "\n");
    if (ts) fprintf(out, "  head timestamp sum %9.0f µs   (median)\n", g->head_kernel_sum_us);
    if (g->disagree)
        fprintf(out,
                "  WARNING: the head's timestamp sum (%.0f µs) and the subtraction (%.0f µs) "
                "disagree by more than 10%%\n",
                g->head_kernel_sum_us, g->lm_head_us);
}

static void text_by_kind(FILE *out, const struct profile *p)
{
    fprintf(out, "-- by kernel --\n");
    fprintf(out, "  (median per step of each kind's per-rep sum; share of GPU busy's median)\n");
    if (has_head(p))
        fprintf(out,
                "  (mixed denominators: kinds head.* are shares of the LM head's sum, %.1f µs, not "
                "of GPU busy)\n",
                p->head_us.median);
    for (int k = 0; k < p->n_kinds; k++) {
        const struct prof_kind *pk = &p->by_kind[k];
        char a[32], b[32], bw[32];
        fprintf(out, "  %-28s n=%-4d %9.1f µs (%4.1f%%)  avg %7.1f µs", pk->kind, pk->n,
                pk->us.median, 100.0 * pk->share, safe_div(pk->us.median, pk->n));
        if (pk->bytes + pk->kv_bytes > 0) {
            fprintf(out, "  %7s GB/s", fmt_sig3(bw, sizeof bw, pk->gbps));
            if (p->device.copy_gbps > 0) fprintf(out, " (%4.1f%% of copy)", 100.0 * pk->bw_share);
        }
        fprintf(out, "  p10–p90 %s–%s\n", fmt_us(a, sizeof a, pk->us.p10),
                fmt_us(b, sizeof b, pk->us.p90));
    }
}

static void text_top(FILE *out, const struct profile *p)
{
    int *idx = top_order(p);
    fprintf(out, "-- top single dispatches --\n");
    if (top_mixes(p, idx))
        fprintf(out, "  (mixed denominators: head.* dispatches are shares of the LM head's sum, "
                     "the others of "
                     "GPU busy)\n");
    for (int t = 0; t < n_top(p); t++) {
        const struct prof_dispatch *d = &p->dispatches[idx[t]];
        char a[32], b[32];
        fprintf(out,
                "  step[%3d] %-26s gx=%-6u gy=%-3u gz=%-3u %9.1f µs (%4.1f%%)  layer=%d op=%s  "
                "p10–p90 %s–%s n=%d\n",
                d->index, d->kind, d->groups[0], d->groups[1], d->groups[2], d->us.median,
                100.0 * dispatch_share(p, d), d->layer, d->op, fmt_us(a, sizeof a, d->us.p10),
                fmt_us(b, sizeof b, d->us.p90), d->us.n_reps);
    }
    free(idx);
}

/* The closure's verdict: "does not close" beyond noise; "closes" only where the noise is small
 * enough to say so (2 errors within ATTRIB_CLOSE_SHARE of a beyond-noise marginal pass); else
 * inconclusive with the reps that would shrink the noise to that. */
#define ATTRIB_CLOSE_SHARE 0.10
static const char *closure_text(char *buf, size_t size, const struct prof_attribution *a)
{
    double tol = ATTRIB_CLOSE_SHARE * fabs(a->marginal.v);
    int n = a->base_us.n_reps;
    if (!est_within_noise(a->closure))
        snprintf(buf, size, "(does not close)");
    else if (!est_within_noise(a->marginal) && EST_NOISE_K * a->closure.u <= tol)
        snprintf(buf, size, "(closes within noise)");
    else {
        char adv[96];
        snprintf(buf, size, "(inconclusive at %d reps: the noise exceeds %.0f %% of the marginal pass; %s)", n,
                 100 * ATTRIB_CLOSE_SHARE, fmt_reps_advice(adv, sizeof adv, est_reps_to_resolve(a->closure, tol, n, EST_NOISE_K)));
    }
    return buf;
}

static void text_attribution(FILE *out, const struct profile *p)
{
    const struct prof_attribution *a = &p->attribution;
    char x[32], y[32], er[64];
    fprintf(
        out,
        "-- attribution (no timestamps: step with the %s's dispatches run once more into scratch, "
        "minus the plain step) --\n",
        a->by_op ? "kind × op" : "kind");
    fprintf(out,
            "  (medians of %d paired reps, plan recorded %d× a step; ± standard error; ts = the "
            "timestamp "
            "figure; ts>diff: it exceeds the differential by more than 10 %% beyond noise)\n",
            a->base_us.n_reps, a->repeat);
    for (int i = 0; i < a->n_rows; i++) {
        const struct prof_attrib *r = &a->rows[i];
        char name[96];
        snprintf(name, sizeof name, "%s%s%s", r->kind, r->op[0] ? " " : "", r->op);
        if (!r->attributable) {
            fprintf(out, "  %-40s n=%-4d not measured: a dispatch declares no outputs or writes outside "
                    "the buffers the profiler can copy\n", name, r->n);
            continue;
        }
        fprintf(out, "  %-40s n=%-4d diff %9s µs %s", name, r->n, fmt_us(x, sizeof x, r->diff.v),
                fmt_err(er, sizeof er, r->diff));
        if (r->ts_us > 0) fprintf(out, "  ts %9s µs", fmt_us(y, sizeof y, r->ts_us));
        fprintf(out, "%s\n", r->ts_inflated ? "  ts>diff" : "");
    }
    char cl[192];
    fprintf(out, "  closure: Σ diff %s µs %s vs uninstrumented marginal pass %s µs ⇒ %+.1f%% %s\n",
            fmt_us(x, sizeof x, a->sum.v), fmt_err(er, sizeof er, a->sum),
            fmt_us(y, sizeof y, a->marginal.v), 100.0 * a->closure_share, closure_text(cl, sizeof cl, a));
}

void report_text_header(FILE *out, const struct profile *p)
{
    text_header(out, p);
    fprintf(out, "shard: layers %d:%d, pos %d, logits=%s, timing %s, %d reps\n", p->shard.a, p->shard.b,
            p->shape.pos, bool_str(p->shape.logits), timing_mode_name(p->timing), p->busy_us.n_reps);
}

void report_text(FILE *out, const struct profile *p)
{
    text_header(out, p);
    text_busy(out, p);
    if (p->gap_probe.ran) text_gap_probe(out, p);
    if (p->device.has_timestamps && p->n_dispatches > 0 && p->timing != TIMING_NONE) {
        text_by_kind(out, p);
        text_top(out, p);
    }
    if (p->attribution.ran) text_attribution(out, p);
}

/* ------------------------------------------------------------------------------------------------
 * Markdown report: the same content as GitHub tables, for perf notes. */

static void md_header(FILE *out, const struct profile *p)
{
    const struct prof_device *d = &p->device;
    const struct prof_shape *s = &p->shape;
    char bw[32], sp[128];
    fprintf(out, "## %s %s: layers %d:%d, %d cols, pos %d\n\n", p->tool, p->version, p->shard.a,
            p->shard.b, s->cols, s->pos);
    fprintf(out, "| | |\n|---|---|\n");
    fprintf(out, "| device | %s |\n| driver | %s |\n| api | %s |\n", d->name, d->driver, d->api);
    if (p->tune[0]) fprintf(out, "| tune | `%s` (kernel-choice overrides, not the defaults) |\n", p->tune);
    if (d->has_timestamps)
        fprintf(out, "| timestamps | period %.3f ns, %u valid bits; timing %s |\n",
                d->timestamp_period_ns, d->timestamp_valid_bits, timing_mode_name(p->timing));
    else
        fprintf(out, "| timestamps | **not supported**: per-dispatch tables skipped |\n");
    fprintf(out, "| copy bandwidth | %s GB/s |\n", fmt_sig3(bw, sizeof bw, d->copy_gbps));
    fprintf(out, "| model | %s %s, %d layers, hidden %d, vocab %d (%s) |\n", p->model.family,
            p->model.dtype, p->model.n_layers, p->model.hidden, p->model.vocab, p->model.source);
    fprintf(out, "| shape | plan %s, %d cols, pos %d, slots %d, logits=%s", s->plan, s->cols,
            s->pos, s->slots, bool_str(s->logits));
    if (strcmp(s->plan, "spec") == 0) fprintf(out, ", drafts of %d tokens", s->draft);
    if (s->logits && s->logit_cols != s->cols) fprintf(out, ", logits of %d columns", s->logit_cols);
    fprintf(out, " |\n");
    char pl[512];
    fprintf(out, "| plan | %s |\n", report_plan_line(pl, sizeof pl, p));
    if (d->has_timestamps && p->busy_us.n_reps)
        fprintf(out, "| GPU busy | %.0f µs/step (median; %s) |\n", p->busy_us.median,
                fmt_spread(sp, sizeof sp, &p->busy_us));
    else
        fprintf(out, "| GPU busy | n/a (no timestamps) |\n");
    if (has_head(p))
        fprintf(out, "| + LM head | %.0f µs/step (median; %s) |\n", p->head_us.median,
                fmt_spread(sp, sizeof sp, &p->head_us));
    fprintf(out, "| wall | %.0f µs (median; %s): %s |\n", p->wall_us.median,
            fmt_spread(sp, sizeof sp, &p->wall_us), wall_meaning(p));
    fprintf(out, "| tok/s/stage | %.1f |\n", p->tok_s);
    if (p->floor_us > 0)
        fprintf(out, "| floor | %.0f µs (weights ÷ copy bandwidth) |\n", p->floor_us);
    fprintf(out, "| command | `%s` |\n\n", p->args);
}

void report_markdown_header(FILE *out, const struct profile *p)
{
    const struct prof_device *d = &p->device;
    char bw[32];
    fprintf(out, "## %s %s: layers %d:%d, pos %d\n\n| | |\n|---|---|\n", p->tool, p->version, p->shard.a,
            p->shard.b, p->shape.pos);
    fprintf(out, "| device | %s |\n| driver | %s |\n| api | %s |\n", d->name, d->driver, d->api);
    fprintf(out, "| copy bandwidth | %s GB/s |\n", fmt_sig3(bw, sizeof bw, d->copy_gbps));
    fprintf(out, "| model | %s %s, %d layers, hidden %d, vocab %d (%s) |\n", p->model.family, p->model.dtype,
            p->model.n_layers, p->model.hidden, p->model.vocab, p->model.source);
    fprintf(out, "| timing | %s, logits=%s |\n\n", timing_mode_name(p->timing), bool_str(p->shape.logits));
}

static void md_row(FILE *out, const char *name, struct est x, const char *note)
{
    char er[64];
    fprintf(out, "| %s | %.0f | %s | %s |\n", name, x.v, fmt_err(er, sizeof er, x), note);
}

static void md_gap_probe(FILE *out, const struct profile *p)
{
    char pl[192];
    const struct gap_probe *g = &p->gap_probe;
    bool ts = g->verdict != VERDICT_UNKNOWN;
    char a[32], b[32], c[32], d[32], sp[128];
    fprintf(out, "### gap probe (1× vs 2× plan in ONE pass; poll/submit cancel in the delta)\n\n");
    fprintf(
        out,
        "Medians of %d reps on both sides of every subtraction; ± is the standard error from the "
        "MADs.\n\n",
        g->n_reps);
    if (g->dispatches > 0) {
        plan_sentence(pl, sizeof pl, g);
        pl[0] = 'T';
        fprintf(out, "%s.\n\n", pl);
    }
    fprintf(out, "| term | µs | ± | |\n|---|---:|---|---|\n");
    fprintf(out, "| wall 1× | %.0f | | %s |\n", g->wall1_us,
            g->n_reps ? fmt_spread(sp, sizeof sp, &g->w1) : "");
    fprintf(out, "| wall 2× | %.0f | | %s |\n", g->wall2_us,
            g->n_reps ? fmt_spread(sp, sizeof sp, &g->w2) : "");
    md_row(out, "marginal pass", g->marginal, "kernels + inter-dispatch cost");
    if (ts) {
        fprintf(out, "| kernel-time sum | %.0f | | median; excludes the LM head |\n",
                g->kernel_sum_us);
        snprintf(sp, sizeof sp, "%.0f%% of the marginal pass", 100.0 * g->gaps_share);
        md_row(out, "⇒ inter-dispatch", g->gaps, sp);
    }
    md_row(out, "⇒ fixed submit+poll", g->fixed, "cancels out of the delta");
    if (ts && g->ts_pair_us != 0) {
        snprintf(sp, sizeof sp, "%s µs a timestamp pair", fmt_us(a, sizeof a, g->ts_pair_us));
        md_row(out, "timestamps add", g->ts_add, sp);
    }
    char vb[256];
    fprintf(out, "\n**VERDICT:** %s\n\n", verdict_text(vb, sizeof vb, g));
    if (!g->head) return;
    fprintf(out, "### LM head (vocab %d)\n\n", p->model.vocab);
    fprintf(out, "| term | value |\n|---|---:|\n");
    fprintf(out, "| marginal pass +head | %.0f µs |\n", g->marginal_head_us);
    fprintf(out, "| ⇒ LM head | %.0f µs %s (%.0f%% of a pass WITH the head) |\n", g->lm_head_us,
            fmt_err(sp, sizeof sp, g->lm_head), 100.0 * g->lm_head_share);
    fprintf(out, "| head timestamp sum | %.0f µs (median) |\n", g->head_kernel_sum_us);
    if (est_within_noise(g->lm_head)) {
        char hl[192];
        fprintf(out, "\n%s.\n\n", head_inconclusive(hl, sizeof hl, g));
        return;
    }
    fprintf(out, "| GB/s, real size (%s, %s MB) | %s |\n", p->model.dtype,
            fmt_sig3(a, sizeof a, g->head_bytes_real / 1e6), fmt_sig3(b, sizeof b, g->head_gbps));
    fprintf(out, "| GB/s if f16 (%s MB) | %s |\n", fmt_sig3(c, sizeof c, g->head_bytes_f16 / 1e6),
            fmt_sig3(d, sizeof d, g->head_gbps_f16));
    fprintf(out, "| GB/s if q4_0 (%s MB) | %s |\n\n",
            fmt_sig3(a, sizeof a, g->head_bytes_q4_0 / 1e6),
            fmt_sig3(b, sizeof b, g->head_gbps_q4_0));
    if (g->disagree)
        fprintf(out, "**WARNING:** the head's timestamp sum and the subtraction disagree by more "
                     "than 10%%.\n\n");
}

static void md_tables(FILE *out, const struct profile *p)
{
    fprintf(out, "### by kernel\n\n");
    fprintf(out, "Median per step of each kind's per-rep sum.");
    if (has_head(p))
        fprintf(out, " Mixed denominators: kinds `head.*` are shares of the LM head's sum, not of "
                     "GPU busy.");
    fprintf(out, "\n\n");
    fprintf(out, "| kind | n | total µs | share | avg µs | GB/s | %% of copy | p10–p90 µs |\n");
    fprintf(out, "|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int k = 0; k < p->n_kinds; k++) {
        const struct prof_kind *pk = &p->by_kind[k];
        char a[32], b[32], bw[32];
        fprintf(out, "| `%s` | %d | %.1f | %.1f%% | %.1f |", pk->kind, pk->n, pk->us.median,
                100.0 * pk->share, safe_div(pk->us.median, pk->n));
        if (pk->bytes + pk->kv_bytes > 0)
            fprintf(out, " %s | %.1f%% |", fmt_sig3(bw, sizeof bw, pk->gbps), 100.0 * pk->bw_share);
        else
            fprintf(out, " | |");
        fprintf(out, " %s–%s |\n", fmt_us(a, sizeof a, pk->us.p10),
                fmt_us(b, sizeof b, pk->us.p90));
    }
    int *idx = top_order(p);
    fprintf(out, "\n### top single dispatches\n\n");
    if (top_mixes(p, idx))
        fprintf(out, "Mixed denominators: `head.*` dispatches are shares of the LM head's sum, the "
                     "others of GPU busy.\n\n");
    fprintf(out, "| step | layer | op | kind | gx | gy | gz | µs | share | p10–p90 µs |\n");
    fprintf(out, "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (int t = 0; t < n_top(p); t++) {
        const struct prof_dispatch *d = &p->dispatches[idx[t]];
        char a[32], b[32];
        fprintf(out, "| %d | %d | %s | `%s` | %u | %u | %u | %.1f | %.1f%% | %s–%s |\n", d->index,
                d->layer, d->op, d->kind, d->groups[0], d->groups[1], d->groups[2], d->us.median,
                100.0 * dispatch_share(p, d), fmt_us(a, sizeof a, d->us.p10),
                fmt_us(b, sizeof b, d->us.p90));
    }
    fprintf(out, "\n");
    free(idx);
}

static void md_attribution(FILE *out, const struct profile *p)
{
    const struct prof_attribution *a = &p->attribution;
    char x[32], y[32], er[64];
    fprintf(out, "### attribution (no timestamps)\n\n");
    fprintf(out,
            "Each row: the step with that group's dispatches run once more into scratch copies of "
            "their "
            "outputs, minus the plain step; medians of %d paired reps.\n\n",
            a->base_us.n_reps);
    fprintf(
        out,
        "| kind | op | n | diff µs | ± | ts µs | ts > diff |\n|---|---|---:|---:|---|---:|---|\n");
    for (int i = 0; i < a->n_rows; i++) {
        const struct prof_attrib *r = &a->rows[i];
        if (!r->attributable) {
            fprintf(out, "| `%s` | %s | %d | not measured | | | |\n", r->kind, r->op, r->n);
            continue;
        }
        fprintf(out, "| `%s` | %s | %d | %s | %s | %s | %s |\n", r->kind, r->op, r->n,
                fmt_us(x, sizeof x, r->diff.v), fmt_err(er, sizeof er, r->diff),
                r->ts_us > 0 ? fmt_us(y, sizeof y, r->ts_us) : "", r->ts_inflated ? "**yes**" : "");
    }
    fprintf(out, "\n**closure:** Σ diff %s µs %s vs marginal pass %s µs (%+.1f%%)\n\n",
            fmt_us(x, sizeof x, a->sum.v), fmt_err(er, sizeof er, a->sum),
            fmt_us(y, sizeof y, a->marginal.v), 100.0 * a->closure_share);
}

void report_markdown(FILE *out, const struct profile *p)
{
    md_header(out, p);
    if (p->gap_probe.ran) md_gap_probe(out, p);
    if (p->device.has_timestamps && p->n_dispatches > 0 && p->timing != TIMING_NONE)
        md_tables(out, p);
    if (p->attribution.ran) md_attribution(out, p);
}

/* ------------------------------------------------------------------------------------------------
 * Crossover table (--cols list, --plans) */

/* FNV-1a over one dispatch's kernel variant: its pipeline (its kind when the file names none) and
 * its specialisation constants. */
static uint64_t sig_add(uint64_t h, const struct prof_dispatch *d)
{
    const char *name = d->pipeline[0] ? d->pipeline : d->kind;
    for (const char *c = name; *c; c++) h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
    h = (h ^ 0xff) * 0x100000001b3ull;
    for (int i = 0; i < d->n_spec; i++) h = (h ^ d->spec[i]) * 0x100000001b3ull;
    return h;
}

void crossover_row_from(struct crossover_row *row, const struct profile *p)
{
    const struct gap_probe *g = &p->gap_probe;
    row->cols = p->shape.cols;
    snprintf(row->plan, sizeof row->plan, "%s%s", p->shape.plan_auto ? "auto -> " : "", p->shape.plan);
    row->kernels_sig = row->matrix_sig = 0xcbf29ce484222325ull;
    for (int i = 0; i < p->n_dispatches; i++) {
        row->kernels_sig = sig_add(row->kernels_sig, &p->dispatches[i]);
        if (p->dispatches[i].bytes) row->matrix_sig = sig_add(row->matrix_sig, &p->dispatches[i]);
    }
    if (p->n_dispatches == 0) row->kernels_sig = row->matrix_sig = 0; /* unknown: matches nothing */
    row->ok = true;
    if (g->ran)
        row->step_us = g->n_reps ? est_median(g->head ? &g->hw1 : &g->w1)
                                 : est_exact(g->head ? g->head_wall1_us : g->wall1_us);
    else
        row->step_us = est_median(&p->wall_us);
    row->busy_us = p->busy_us.median + (p->head_us.n_reps ? p->head_us.median : 0);
    row->tok_s = safe_div(p->shape.cols * 1e6, row->step_us.v);
    row->floor_us = p->floor_us;
}

/* On the first row of a width: the plan with the smallest step there, and whether the runner-up
 * is within noise of it; "" on the other rows. */
static void faster_plan(const struct crossover_row *rows, int n, int i, char *buf, size_t size)
{
    const struct crossover_row *best = NULL, *second = NULL;
    buf[0] = 0;
    for (int j = 0; j < i; j++)
        if (rows[j].cols == rows[i].cols) return;
    for (int j = 0; j < n; j++) {
        if (rows[j].cols != rows[i].cols || !rows[j].ok) continue;
        if (!best || rows[j].step_us.v < best->step_us.v) {
            second = best;
            best = &rows[j];
        } else if (!second || rows[j].step_us.v < second->step_us.v) {
            second = &rows[j];
        }
    }
    if (!best) return;
    /* a plan that ran the very kernels of another is no choice: say so instead of naming a winner */
    for (int j = 0; j < n; j++)
        if (&rows[j] != best && rows[j].cols == best->cols && rows[j].ok && best->kernels_sig &&
            rows[j].kernels_sig == best->kernels_sig) {
            bool before = &rows[j] < best;
            snprintf(buf, size, "none: %s and %s ran the same kernels", before ? rows[j].plan : best->plan,
                     before ? best->plan : rows[j].plan);
            return;
        }
    if (second && est_within_noise(est_sub(second->step_us, best->step_us)))
        snprintf(buf, size, "%s (within noise of %s)", best->plan, second->plan);
    else
        snprintf(buf, size, "%s", best->plan);
}

void crossover_same_kernels(const struct crossover_row *rows, int i, char *buf, size_t size)
{
    buf[0] = 0;
    if (!rows[i].ok) return;
    for (int j = 0; j < i; j++) {
        if (rows[j].cols != rows[i].cols || !rows[j].ok || !rows[i].kernels_sig) continue;
        if (rows[j].kernels_sig == rows[i].kernels_sig) {
            snprintf(buf, size, "same kernels as %s", rows[j].plan);
            return;
        }
        if (rows[j].matrix_sig == rows[i].matrix_sig) snprintf(buf, size, "same matrix kernels as %s", rows[j].plan);
    }
}

void report_crossover(FILE *out, const struct crossover_row *rows, int n, bool markdown)
{
    if (markdown)
        fprintf(out, "### plan crossover\n\n| width | plan | step µs | ± | busy µs | tok/s | × "
                     "floor | faster | kernels |\n"
                     "|---:|---|---:|---|---:|---:|---:|---|---|\n");
    else
        fprintf(out,
                "-- plan crossover (step: gap probe's 1× wall, no timestamps, median ± its standard error; "
                "busy: kernel sum with the head; × floor: step ÷ weights-bytes floor) --\n"
                "  %5s  %-13s %10s %-18s %10s %12s %8s  %s\n",
                "width", "plan", "step µs", "±", "busy µs", "tok/s", "× floor", "faster plan");
    for (int i = 0; i < n; i++) {
        const struct crossover_row *r = &rows[i];
        char faster[96], st[32], er[64], bz[32], fl[32], same[64];
        faster_plan(rows, n, i, faster, sizeof faster);
        crossover_same_kernels(rows, i, same, sizeof same);
        if (!r->ok) {
            if (markdown)
                fprintf(out, "| %d | %s | failed: %s | | | | | %s | |\n", r->cols, r->plan, r->why,
                        faster);
            else
                fprintf(out, "  %5d  %-13s failed: %s%s%s\n", r->cols, r->plan, r->why,
                        faster[0] ? "  faster: " : "", faster);
            continue;
        }
        snprintf(fl, sizeof fl, "%.2f", safe_div(r->step_us.v, r->floor_us));
        fmt_us(st, sizeof st, r->step_us.v);
        fmt_err(er, sizeof er, r->step_us);
        const char *busy = r->busy_us > 0 ? fmt_us(bz, sizeof bz, r->busy_us) : "n/a";
        const char *flr = r->floor_us > 0 ? fl : "n/a";
        if (markdown)
            fprintf(out, "| %d | %s | %s | %s | %s | %.0f | %s | %s | %s |\n", r->cols, r->plan, st, er,
                    busy, r->tok_s, flr, faster, same);
        else
            fprintf(out, "  %5d  %-13s %10s %-18s %10s %12.0f %8s  %s%s%s\n", r->cols, r->plan, st, er,
                    busy, r->tok_s, flr, faster, faster[0] && same[0] ? "  " : "", same[0] ? same : "");
    }
    if (markdown) fprintf(out, "\n");
}
