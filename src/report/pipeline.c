/* pipeline.c - --stages: splits, the balanced partition, the pipeline summary and its report
 * (pipeline.h). */
#include "pipeline.h"

#include "report_fmt.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double div0(double a, double b) { return b > 0 ? a / b : 0; }

/* ------------------------------------------------------------------------------------------------
 * Splits */

static int parse_range(const char *v, const char *at, const char *end, int *a, int *b, struct err *e)
{
    char *p;
    errno = 0;
    long x = strtol(at, &p, 10);
    if (errno || p == at || *p != ':' || x < 0 || x > 100000)
        return err_set(e, ST_USAGE, "--stages %s: expected K or ranges a:b,b:c,... (integers, a < b)", v);
    const char *bs = p + 1;
    long y = strtol(bs, &p, 10);
    if (errno || p == bs || p != end || y < 0 || y > 100000)
        return err_set(e, ST_USAGE, "--stages %s: expected K or ranges a:b,b:c,... (integers, a < b)", v);
    if (x >= y) return err_set(e, ST_USAGE, "--stages %s: range %ld:%ld is empty (expected a < b)", v, x, y);
    *a = (int)x;
    *b = (int)y;
    return ST_OK;
}

int pipeline_spec_parse(const char *v, struct pipeline_spec *sp, struct err *e)
{
    memset(sp, 0, sizeof *sp);
    if (!v || !*v) return err_set(e, ST_USAGE, "--stages needs a value: K (an even split) or ranges a:b,b:c,...");
    if (!strchr(v, ':')) {
        char *end;
        errno = 0;
        long k = strtol(v, &end, 10);
        if (errno || end == v || *end || k < 1 || k > PIPELINE_MAX_STAGES)
            return err_set(e, ST_USAGE, "--stages %s: expected a stage count in 1..%d or ranges a:b,b:c,...", v,
                           PIPELINE_MAX_STAGES);
        sp->k = (int)k;
        return ST_OK;
    }
    sp->given = true;
    for (const char *at = v;;) {
        const char *end = at + strcspn(at, ",");
        if (sp->k == PIPELINE_MAX_STAGES)
            return err_set(e, ST_USAGE, "--stages %s: at most %d stages", v, PIPELINE_MAX_STAGES);
        int st = parse_range(v, at, end, &sp->a[sp->k], &sp->b[sp->k], e);
        if (st) return st;
        sp->k++;
        if (!*end) break;
        at = end + 1;
    }
    return ST_OK;
}

void pipeline_even(int n, int k, int *bounds)
{
    bounds[0] = 0;
    for (int i = 0; i < k; i++) bounds[i + 1] = bounds[i] + n / k + (i < n % k);
}

int pipeline_spec_bounds(const struct pipeline_spec *sp, int n, int *bounds, struct err *e)
{
    if (!sp->given) {
        if (sp->k > n)
            return err_set(e, ST_USAGE, "--stages %d: more stages than the model's %d layers", sp->k, n);
        pipeline_even(n, sp->k, bounds);
        return ST_OK;
    }
    if (sp->a[0] != 0)
        return err_set(e, ST_USAGE, "--stages: the first stage starts at layer %d; expected 0 (layers 0:%d are in no "
                       "stage)", sp->a[0], sp->a[0]);
    bounds[0] = 0;
    for (int i = 0; i < sp->k; i++) {
        if (i > 0 && sp->a[i] > sp->b[i - 1])
            return err_set(e, ST_USAGE, "--stages: gap between %d:%d and %d:%d: layers %d:%d are in no stage "
                           "(expected contiguous ranges)", sp->a[i - 1], sp->b[i - 1], sp->a[i], sp->b[i],
                           sp->b[i - 1], sp->a[i]);
        if (i > 0 && sp->a[i] < sp->b[i - 1])
            return err_set(e, ST_USAGE, "--stages: %d:%d overlaps %d:%d: layers %d:%d are in two stages "
                           "(expected contiguous ranges)", sp->a[i - 1], sp->b[i - 1], sp->a[i], sp->b[i],
                           sp->a[i], MIN(sp->b[i - 1], sp->b[i]));
        bounds[i + 1] = sp->b[i];
    }
    if (sp->b[sp->k - 1] != n)
        return err_set(e, ST_USAGE, "--stages: the last stage ends at layer %d; the model has %d layers (expected the "
                       "ranges to end at %d)", sp->b[sp->k - 1], n, n);
    return ST_OK;
}

double pipeline_split_max(const double *cost, int k, const int *bounds)
{
    double worst = 0;
    for (int i = 0; i < k; i++) {
        double s = 0;
        for (int l = bounds[i]; l < bounds[i + 1]; l++) s += cost[l];
        worst = MAX(worst, s);
    }
    return worst;
}

/* best[j][i]: the smallest maximum over splits of the first i layers into j parts;
 * cut[j][i]: where the last of those parts starts. */
double pipeline_partition(const double *cost, int n, int k, int *bounds)
{
    CHECK(k >= 1 && k <= n);
    double *pre = malloc((size_t)(n + 1) * sizeof *pre);
    double *best = malloc((size_t)(k + 1) * (n + 1) * sizeof *best);
    int *cut = calloc((size_t)(k + 1) * (n + 1), sizeof *cut);
    CHECK(pre && best && cut);
#define BEST(j, i) best[(size_t)(j) * (n + 1) + (i)]
#define CUT(j, i) cut[(size_t)(j) * (n + 1) + (i)]
    pre[0] = 0;
    for (int i = 0; i < n; i++) pre[i + 1] = pre[i] + cost[i];
    for (int i = 1; i <= n; i++) BEST(1, i) = pre[i];
    for (int j = 2; j <= k; j++)
        for (int i = j; i <= n; i++) {
            /* the last part is m..i-1; the largest m wins ties (earlier stages shortest) */
            double b = INFINITY;
            int arg = j - 1;
            for (int m = j - 1; m < i; m++) {
                double v = MAX(BEST(j - 1, m), pre[i] - pre[m]);
                if (v <= b) {
                    b = v;
                    arg = m;
                }
            }
            BEST(j, i) = b;
            CUT(j, i) = arg;
        }
    double worst = BEST(k, n);
    bounds[k] = n;
    for (int j = k; j > 1; j--) bounds[j - 1] = CUT(j, bounds[j]);
    bounds[0] = 0;
#undef BEST
#undef CUT
    free(pre);
    free(best);
    free(cut);
    return worst;
}

double pipeline_stage_fixed(const struct pipeline_fixed *f, int k, int i)
{
    if (!f->known) return 0;
    return i == k - 1 ? f->last : i == 0 ? f->first : f->middle;
}

/* With c the middle stages' fixed part: layer 0 carries first − c and layer n − 1 last − c, and every
 * part c more, so each part's sum + c is its sum + its role's fixed part; a constant on every part
 * moves no boundary, so the partition of the shifted costs is the balanced split on steps (shifted
 * costs may be negative: the partition is exact over any reals). */
double pipeline_balance(const double *cost, int n, int k, const struct pipeline_fixed *f, int *bounds)
{
    CHECK(k >= 1 && k <= n);
    if (k == 1) return pipeline_partition(cost, n, 1, bounds) + pipeline_stage_fixed(f, 1, 0);
    double *c = malloc((size_t)n * sizeof *c);
    CHECK(c);
    memcpy(c, cost, (size_t)n * sizeof *c);
    double mid = k >= 3 ? pipeline_stage_fixed(f, k, 1) : 0;
    c[0] += pipeline_stage_fixed(f, k, 0) - mid;
    c[n - 1] += pipeline_stage_fixed(f, k, k - 1) - mid;
    double worst = pipeline_partition(c, n, k, bounds) + mid;
    free(c);
    return worst;
}

/* ------------------------------------------------------------------------------------------------
 * The record */

void pipeline_free(struct pipeline *p)
{
    for (int i = 0; i < p->given.k; i++) profile_free(&p->given.st[i].p);
    for (int i = 0; i < p->balanced.k; i++) profile_free(&p->balanced.st[i].p);
    free(p->layer_cost);
    memset(p, 0, sizeof *p);
}

void pipeline_stage_times(struct pipeline_stage *s)
{
    struct crossover_row row;
    crossover_row_from(&row, &s->p); /* the step the crossover table quotes: no timestamps */
    s->step_us = row.step_us;
    const struct gap_probe *g = &s->p.gap_probe;
    s->marginal_us = !g->ran ? est_exact(0)
                     : g->head ? est_sub(est_median(&g->hw2), est_median(&g->hw1))
                               : est_sub(est_median(&g->w2), est_median(&g->w1));
    if (g->ran && !g->n_reps) s->marginal_us = est_exact(g->head ? g->marginal_head_us : g->marginal_us);
}

void pipeline_fixed_from(struct pipeline *p, const struct pipeline_split *s)
{
    struct pipeline_fixed *f = &p->fixed;
    memset(f, 0, sizeof *f);
    double part[PIPELINE_MAX_STAGES];
    for (int i = 0; i < s->k; i++) {
        if (!s->st[i].p.gap_probe.ran) return;
        part[i] = MAX(0, s->st[i].step_us.v - s->st[i].marginal_us.v);
    }
    f->known = s->k > 0;
    f->k = s->k;
    f->first = part[0];
    f->last = part[s->k - 1];
    if (s->k >= 3) {
        struct timing t = timing_from(part + 1, s->k - 2);
        f->middle = t.median;
        timing_free(&t);
    }
}

bool pipeline_layer_costs_from(struct pipeline *p, const struct pipeline_split *s)
{
    if (s->k < 1 || s->bounds[0] != 0 || s->bounds[s->k] != p->n_layers) return false;
    double *share = calloc((size_t)p->n_layers, sizeof *share);
    if (!share) return false;
    for (int i = 0; i < s->k; i++) {
        const struct pipeline_stage *st = &s->st[i];
        const struct profile *pr = &st->p;
        int n = 0;
        double sum = 0;
        for (int d = 0; d < pr->n_dispatches; d++)
            if (pr->dispatches[d].us.n_reps) {
                n++;
                sum += pr->dispatches[d].us.median;
            }
        if (n == 0 || n < pr->n_dispatches || sum <= 0 || st->a != s->bounds[i] || st->b != s->bounds[i + 1]) {
            free(share);
            return false;
        }
        /* the timestamps' own cost a dispatch: what the kernel sum has beyond the marginal pass
         * (its dead time included), shared out evenly; none where the marginal is the larger, and
         * at most half the shortest dispatch (a CPU device's timestamps can cost more than its
         * small kernels take: a whole layer would read 0) */
        double shortest = pr->dispatches[0].us.median;
        for (int d = 1; d < pr->n_dispatches; d++) shortest = MIN(shortest, pr->dispatches[d].us.median);
        double over = MIN(MAX(0, (sum - st->marginal_us.v) / n), 0.5 * shortest), left = 0;
        for (int d = 0; d < pr->n_dispatches; d++) {
            const struct prof_dispatch *pd = &pr->dispatches[d];
            int l = pd->layer >= st->a && pd->layer < st->b ? pd->layer
                    : strncmp(pd->kind, "head.", 5) == 0    ? st->b - 1 /* the LM head */
                                                            : st->a;    /* the embedding */
            double t = MAX(0, pd->us.median - over);
            share[l] += t;
            left += t;
        }
        for (int l = st->a; l < st->b; l++)
            share[l] = left > 0 ? share[l] / left : 1.0 / (st->b - st->a);
    }
    p->layer_cost = calloc((size_t)p->n_layers, sizeof *p->layer_cost);
    if (!p->layer_cost) {
        free(share);
        return false;
    }
    for (int i = 0; i < s->k; i++)
        for (int l = s->bounds[i]; l < s->bounds[i + 1]; l++)
            p->layer_cost[l] = est_scale(s->st[i].marginal_us, share[l]);
    p->layer_cost_shares = true;
    free(share);
    return true;
}

void pipeline_summarize(const struct pipeline *p, struct pipeline_split *s)
{
    s->sum_us = s->max_us = s->predicted_max_us = 0;
    s->bottleneck = 0;
    for (int i = 0; i < s->k; i++) {
        struct pipeline_stage *st = &s->st[i];
        double t = st->step_us.v;
        s->sum_us += t;
        if (t > s->max_us) {
            s->max_us = t;
            s->bottleneck = i;
        }
        st->fixed_us = pipeline_stage_fixed(&p->fixed, s->k, i);
        st->predicted_us = 0;
        for (int l = st->a; p->layer_cost && l < st->b; l++) st->predicted_us += p->layer_cost[l].v;
        if (p->layer_cost) st->predicted_us += st->fixed_us;
        s->predicted_max_us = MAX(s->predicted_max_us, st->predicted_us);
    }
    s->tok_s_bound = div0(p->cols * 1e6, s->max_us);
    s->tok_s_ideal = div0(p->cols * 1e6 * s->k, s->sum_us);
    s->bubble = s->max_us > 0 ? 1.0 - s->sum_us / (s->k * s->max_us) : 0;
}

const struct timing *pipeline_stage_wall(const struct pipeline_stage *st)
{
    const struct gap_probe *g = &st->p.gap_probe;
    return g->ran && g->n_reps ? (g->head ? &g->hw1 : &g->w1) : &st->p.wall_us;
}

const struct pipeline_stage *pipeline_split_stage(const struct pipeline *p, const struct pipeline_split *s, int i)
{
    return s == &p->balanced && p->balanced_is_given ? &p->given.st[i] : &s->st[i];
}

/* ------------------------------------------------------------------------------------------------
 * Report */

/* A time of the pipeline report in its unit: three significant digits (as the µs report always
 * printed them). */
static const char *ft(char *buf, size_t size, const struct unit *u, double us)
{
    return fmt_sig3(buf, size, us / u->per_us);
}

/* The stage's three costliest kinds, head kinds among them, with their median time a step in u
 * ("-" without timestamps). */
static void top_kinds(const struct profile *p, const struct unit *u, char *buf, size_t size)
{
    buf[0] = 0;
    size_t used = 0;
    int order[3] = {-1, -1, -1};
    for (int i = 0; i < p->n_kinds && p->device.has_timestamps; i++)
        for (int j = 0; j < 3; j++)
            if (order[j] < 0 || p->by_kind[i].us.median > p->by_kind[order[j]].us.median) {
                for (int m = 2; m > j; m--) order[m] = order[m - 1];
                order[j] = i;
                break;
            }
    for (int n = 0; n < 3 && order[n] >= 0; n++) {
        const struct prof_kind *k = &p->by_kind[order[n]];
        char t[16];
        int w = snprintf(buf + used, size - used, "%s%s %s", n ? ", " : "", k->kind, ft(t, sizeof t, u, k->us.median));
        if (w < 0 || (size_t)w >= size - used) break;
        used += (size_t)w;
    }
    if (!buf[0]) snprintf(buf, size, "-");
}

void pipeline_split_text(const struct pipeline_split *s, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < s->k; i++) {
        int w = snprintf(buf + used, size - used, "%s%d:%d", i ? "," : "", s->bounds[i], s->bounds[i + 1]);
        if (w < 0 || (size_t)w >= size - used) break;
        used += (size_t)w;
    }
}

static void stage_table(FILE *out, const struct pipeline *p, const struct pipeline_split *s, const struct unit *u,
                        bool md)
{
    bool pred = p->layer_cost != NULL;
    if (md) {
        fprintf(out, "| stage | layers | step %s | p10–p90 %s | of slowest | marginal %s |%s%s%s top kinds (%s) |\n",
                u->name, u->name, u->name, pred ? " predicted " : "", pred ? u->name : "", pred ? " |" : "", u->name);
        fprintf(out, "|---:|---|---:|---:|---:|---:|%s---|\n", pred ? "---:|" : "");
    } else {
        fprintf(out, "stage  layers    step %-2s  (p10–p90)          of slowest  marginal %-2s%s%s  top kinds (%s)\n",
                u->name, u->name, pred ? "  predicted " : "", pred ? u->name : "", u->name);
    }
    for (int i = 0; i < s->k; i++) {
        const struct pipeline_stage *st = &s->st[i];
        const struct timing *t = pipeline_stage_wall(st);
        char kinds[160], range[32], a[16], b[16], c[16], d[16], f[16];
        top_kinds(&st->p, u, kinds, sizeof kinds);
        snprintf(range, sizeof range, "%d:%d", st->a, st->b);
        ft(a, sizeof a, u, st->step_us.v);
        ft(b, sizeof b, u, t->p10);
        ft(c, sizeof c, u, t->p90);
        ft(d, sizeof d, u, st->marginal_us.v);
        ft(f, sizeof f, u, st->predicted_us);
        double share = div0(st->step_us.v, s->max_us);
        const char *mark = i == s->bottleneck ? " *" : "";
        if (md) {
            fprintf(out, "| %d%s | %s | %s | %s–%s | %.0f %% | %s |", i, mark, range, a, b, c, 100 * share, d);
            if (pred) fprintf(out, " %s |", f);
            fprintf(out, " %s |\n", kinds);
        } else {
            char spread[40];
            snprintf(spread, sizeof spread, "(%s–%s)", b, c);
            fprintf(out, "%3d%-2s  %-8s  %8s  %-17s  %7.0f %%   %11s", i, mark, range, a, spread, 100 * share, d);
            if (pred) fprintf(out, "  %12s", f);
            fprintf(out, "  %s\n", kinds);
        }
    }
}

static void split_summary(FILE *out, const struct pipeline *p, const struct pipeline_split *s, const struct unit *u,
                          bool md)
{
    const char *li = md ? "- " : "";
    const struct pipeline_stage *b = &s->st[s->bottleneck];
    char x[16], y[16], z[16], w[16];
    fprintf(out, "%sbottleneck  stage %d (layers %d:%d): %s %s a step\n", li, s->bottleneck, b->a, b->b,
            ft(x, sizeof x, u, s->max_us), u->name);
    fprintf(out, "%sthroughput  bound %s tok/s (%d cols / slowest stage), ideal %s tok/s (cols / (sum %s %s / %d))\n",
            li, fmt_sig3(x, sizeof x, s->tok_s_bound), p->cols, fmt_sig3(y, sizeof y, s->tok_s_ideal),
            ft(z, sizeof z, u, s->sum_us), u->name, s->k);
    fprintf(out, "%sbubble      %.1f %% (1 − bound / ideal: the stages' time spent waiting for the bottleneck)\n", li,
            100 * s->bubble);
    if (s->k > 1) {
        fprintf(out, "%shand-off    %d cols × %d hidden × 4 B (f32) = %s kB a boundary", li, p->cols, p->hidden,
                fmt_sig3(x, sizeof x, (double)p->handoff_bytes / 1e3));
        if (p->handoff_us > 0)
            fprintf(out, ": %s %s at %s GB/s device → host-visible; %d %s %s %s a step on %d GPUs "
                    "(staged through the host that is one hop of two)\n", ft(y, sizeof y, u, p->handoff_us), u->name,
                    fmt_sig3(z, sizeof z, p->d2h_gbps), s->k - 1, s->k == 2 ? "boundary adds" : "boundaries add",
                    ft(w, sizeof w, u, p->handoff_us * (s->k - 1)), u->name, s->k);
        else
            fprintf(out, " (transfer bandwidth not measured)\n");
    }
}

static void layer_costs(FILE *out, const struct pipeline *p, const struct unit *un, bool md)
{
    const char *how = p->layer_cost_shares ? "each layer's share of its stage's kernel time × the stage's marginal pass"
                                           : "marginal pass of each one-layer shard";
    fprintf(out, md ? "\n**layer costs** (%s, %s; layer 0 with the embedding, the last with the head when logits):\n\n"
                    : "-- layer costs (%s, %s; layer 0 with the embedding, the last with the head when logits) --\n",
            how, un->name);
    for (int l = 0; l < p->n_layers; l++) {
        char v[16], u[16];
        fprintf(out, "%s%d: %s ± %s%s", l && !md ? "  " : "", l, ft(v, sizeof v, un, p->layer_cost[l].v),
                isfinite(p->layer_cost[l].u) ? ft(u, sizeof u, un, p->layer_cost[l].u) : "?",
                l + 1 < p->n_layers ? (md ? ", " : (l % 6 == 5 ? "\n" : "")) : "\n");
    }
}

void pipeline_fixed_phrase(const struct pipeline_fixed *f, const char *first, const char *middle, const char *last,
                           char *buf, size_t size)
{
    char of[32] = "";
    if (f->k > 3) snprintf(of, sizeof of, " (median of %d)", f->k - 2);
    if (f->k == 1) snprintf(buf, size, "the one stage %s", last);
    else if (f->k == 2) snprintf(buf, size, "first %s, last %s", first, last);
    else snprintf(buf, size, "first %s, middle %s%s, last %s", first, middle, of, last);
}

/* The fixed parts the predictions charge, one line. */
static void fixed_parts(FILE *out, const struct pipeline *p, const struct unit *u, bool md)
{
    const struct pipeline_fixed *f = &p->fixed;
    char a[16], b[16], c[16], line[128];
    pipeline_fixed_phrase(f, ft(a, sizeof a, u, f->first), ft(b, sizeof b, u, f->middle), ft(c, sizeof c, u, f->last),
                          line, sizeof line);
    fprintf(out, "%sfixed parts (step − marginal of the %s split's stages, at least 0): %s %s\n", md ? "\n" : "",
            p->given.how, line, u->name);
}

void pipeline_report(FILE *out, const struct pipeline *p, bool md, enum report_units units)
{
    const struct pipeline_split *s = &p->given;
    const struct unit un = unit_for(units, s->max_us), *u = &un;
    char split[512];
    pipeline_split_text(s, split, sizeof split);
    const struct profile *p0 = &s->st[0].p;
    fprintf(out, md ? "\n## pipeline: %d stages (%s split %s), %d cols, plan %s, precision %s\n\n"
                    : "\n== pipeline: %d stages (%s split %s), %d cols, plan %s, precision %s ==\n",
            s->k, s->how, split, p->cols, p0->shape.plan, profile_precision(p0));
    fprintf(out, "step: the stage's gap-probe 1× wall (submit + wait, no timestamps), median; marginal: its 2× − 1× "
            "walls%s\n", p->layer_cost ? "; predicted: Σ of its layers' costs + the stage's fixed part (step − "
            "marginal of the measured split, by role)" : "");
    if (p->layer_cost && p->fixed.known) fixed_parts(out, p, u, md);
    if (md) fprintf(out, "\n");
    stage_table(out, p, s, u, md);
    if (md) fprintf(out, "\n");
    split_summary(out, p, s, u, md);
    if (!p->layer_cost) return;
    layer_costs(out, p, u, md);
    const struct pipeline_split *bs = &p->balanced;
    if (!bs->k) return;
    char bsplit[512], x[16], y[16];
    pipeline_split_text(bs, bsplit, sizeof bsplit);
    fprintf(out, md ? "\n### balanced split %s\n\npredicted slowest step %s %s (the %s split: %s %s)%s\n\n"
                    : "-- balanced split %s: predicted slowest step %s %s (the %s split: %s %s)%s --\n",
            bsplit, ft(x, sizeof x, u, bs->predicted_max_us), u->name, s->how, ft(y, sizeof y, u, s->predicted_max_us),
            u->name,
            p->balanced_is_given ? "; the same split, profiled once" : "");
    if (p->balanced_is_given) return;
    stage_table(out, p, bs, u, md);
    if (md) fprintf(out, "\n");
    split_summary(out, p, bs, u, md);
    char z[16], w[16];
    fprintf(out, "%sbalanced split against %s: slowest stage %s → %s %s, bound %s → %s tok/s\n", md ? "- " : "",
            s->how, ft(x, sizeof x, u, s->max_us), ft(y, sizeof y, u, bs->max_us), u->name,
            fmt_sig3(z, sizeof z, s->tok_s_bound), fmt_sig3(w, sizeof w, bs->tok_s_bound));
}
