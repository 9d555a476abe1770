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
    free(sorted);
    return t;
}

void timing_free(struct timing *t)
{
    free(t->reps);
    memset(t, 0, sizeof *t);
}

void profile_free(struct profile *p)
{
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

/* Per-rep sum of the dispatches of one kind (kind == NULL: all head or all layer ones). The
 * result has as many reps as the shortest member; members without reps add their mean. */
static struct timing sum_dispatches(const struct profile *p, const char *kind, bool head,
                                    int *count)
{
    int n_reps = -1, n = 0;
    for (int i = 0; i < p->n_dispatches; i++) {
        const struct prof_dispatch *d = &p->dispatches[i];
        if (kind ? strcmp(d->kind, kind) != 0 : prof_kind_is_head(d->kind) != head) continue;
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
        if (kind ? strcmp(d->kind, kind) != 0 : prof_kind_is_head(d->kind) != head) continue;
        for (int r = 0; r < n_reps; r++)
            s[r] += d->us.n_reps > 0 ? d->us.reps[r] : d->us.mean;
    }
    struct timing t = timing_from(s, n_reps);
    free(s);
    return t;
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
    double t = p->device.has_timestamps ? p->busy_us.mean : p->wall_us.mean;
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
    if (x->us.mean != y->us.mean) return x->us.mean < y->us.mean ? 1 : -1;
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
    }
    for (int k = 0; k < p->n_kinds; k++) {
        struct prof_kind *pk = &p->by_kind[k];
        pk->us = sum_dispatches(p, pk->kind, false, &pk->n);
        double whole = prof_kind_is_head(pk->kind) ? p->head_us.mean : p->busy_us.mean;
        pk->share = safe_div(pk->us.mean, whole);
        pk->gbps = pk->bytes > 0 ? gbps_of((double)pk->bytes, pk->us.mean) : 0.0;
        pk->bw_share = safe_div(pk->gbps, p->device.copy_gbps);
    }
    qsort(p->by_kind, (size_t)p->n_kinds, sizeof *p->by_kind, cmp_kind_total);
    set_tok_s(p);
}

/* ------------------------------------------------------------------------------------------------
 * Gap probe: submit and wait happen once in both walls, so they cancel in the difference:
 *   wall(2×) − wall(1×) = one plan pass = kernel time + inter-dispatch cost. */

void gap_probe_compute(struct gap_probe *g, double w1_min_us, double w2_min_us,
                       double kernel_sum_us, bool head, double hw1_min_us, double hw2_min_us,
                       double head_kernel_sum_us, uint64_t head_bytes_real, uint64_t vocab,
                       uint64_t hidden)
{
    memset(g, 0, sizeof *g);
    g->ran = true;
    g->wall1_us = w1_min_us;
    g->wall2_us = w2_min_us;
    g->marginal_us = w2_min_us - w1_min_us;
    g->fixed_us = w1_min_us - g->marginal_us;
    g->kernel_sum_us = kernel_sum_us;
    g->gaps_us = g->marginal_us - kernel_sum_us;
    g->gaps_share = safe_div(g->gaps_us, g->marginal_us);
    g->per_dispatch = g->gaps_us > 0.25 * g->marginal_us;
    if (!head) return;
    g->head = true;
    g->head_wall1_us = hw1_min_us;
    g->head_wall2_us = hw2_min_us;
    g->marginal_head_us = hw2_min_us - hw1_min_us;
    g->lm_head_us = g->marginal_head_us - g->marginal_us;
    g->lm_head_share = safe_div(g->lm_head_us, g->marginal_head_us);
    g->head_kernel_sum_us = head_kernel_sum_us;
    g->head_bytes_real = head_bytes_real;
    g->head_bytes_f16 = vocab * hidden * 2;
    g->head_bytes_q4_0 = vocab * hidden * 9 / 16; /* 18 bytes per 32 weights = 0.5625 */
    g->head_gbps = gbps_of((double)head_bytes_real, g->lm_head_us);
    g->head_gbps_f16 = gbps_of((double)g->head_bytes_f16, g->lm_head_us);
    g->head_gbps_q4_0 = gbps_of((double)g->head_bytes_q4_0, g->lm_head_us);
    if (head_kernel_sum_us > 0) {
        double larger = MAX(fabs(head_kernel_sum_us), fabs(g->lm_head_us));
        g->disagree = fabs(head_kernel_sum_us - g->lm_head_us) > 0.10 * larger;
    }
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

static const char *verdict_text(bool per_dispatch)
{
    return per_dispatch ? "dead time is PER-DISPATCH ⇒ fusing dispatches reclaims it. Fusion is on."
                        : "dead time is NOT per-dispatch ⇒ it is submit/poll latency. Fusion buys "
                          "nothing; do not write a fused kernel.";
}

/* What this tool's wall measures (the seed's per-dispatch-pass remark does not apply here). */
static const char *wall_meaning(const struct profile *p)
{
    return p->device.has_timestamps
               ? "wall: host submit + fence wait of ONE step: one command buffer, one submit, the plan's own "
                 "barriers, plus a timestamp pair per dispatch; the gap probe times the plan without timestamps"
               : "wall: host submit + fence wait of ONE step: one command buffer, one submit, the plan's own "
                 "barriers (this device has no timestamps)";
}

/* Share of a dispatch's (or kind's) time in its own plan: busy for layers, head sum for head. */
static double dispatch_share(const struct profile *p, const struct prof_dispatch *d)
{
    double whole = prof_kind_is_head(d->kind) ? p->head_us.mean : p->busy_us.mean;
    return safe_div(d->us.mean, whole);
}

/* Indices of dispatches sorted by mean time, descending (stable on index). Caller frees. */
static int *top_order(const struct profile *p)
{
    int *idx = malloc((size_t)(p->n_dispatches > 0 ? p->n_dispatches : 1) * sizeof(int));
    CHECK(idx);
    for (int i = 0; i < p->n_dispatches; i++)
        idx[i] = i;
    /* insertion sort: a plan has a few hundred dispatches and this keeps ties in step order */
    for (int i = 1; i < p->n_dispatches; i++) {
        int v = idx[i], j = i - 1;
        while (j >= 0 && p->dispatches[idx[j]].us.mean < p->dispatches[v].us.mean) {
            idx[j + 1] = idx[j];
            j--;
        }
        idx[j + 1] = v;
    }
    return idx;
}

/* ------------------------------------------------------------------------------------------------
 * Text report */

static void text_header(FILE *out, const struct profile *p)
{
    const struct prof_device *d = &p->device;
    fprintf(out, "%s %s  device: %s  driver: %s  api: %s\n", p->tool, p->version, d->name,
            d->driver, d->api);
    if (d->has_timestamps)
        fprintf(out, "timestamps: period %.3f ns, %u valid bits", d->timestamp_period_ns,
                d->timestamp_valid_bits);
    else
        fprintf(out, "timestamps: NOT SUPPORTED on this device: no per-dispatch times, GPU busy "
                     "unknown, per-dispatch tables skipped (the gap probe still runs)");
    if (d->copy_gbps > 0)
        fprintf(out, "  copy bandwidth %.0f GB/s (device-to-device copy kernel, read + write)\n",
                d->copy_gbps);
    else
        fprintf(out, "  copy bandwidth not measured\n");
    fprintf(out, "model: %s %s, %d layers, hidden %d, vocab %d, from %s\n", p->model.family,
            p->model.dtype, p->model.n_layers, p->model.hidden, p->model.vocab, p->model.source);
}

static void text_gap_probe(FILE *out, const struct profile *p)
{
    const struct gap_probe *g = &p->gap_probe;
    bool ts = p->device.has_timestamps;
    fprintf(out, "-- gap probe (1× vs 2× plan in ONE pass; poll/submit cancel in the delta) --\n");
    fprintf(out, "  wall 1×            %9.0f µs\n", g->wall1_us);
    fprintf(out, "  wall 2×            %9.0f µs\n", g->wall2_us);
    fprintf(out, "  marginal pass      %9.0f µs   = kernels + inter-dispatch cost\n",
            g->marginal_us);
    if (ts) {
        fprintf(out, "  kernel-time sum    %9.0f µs   (profiled above; excludes the LM head)\n",
                g->kernel_sum_us);
        fprintf(out, "  ⇒ inter-dispatch   %9.0f µs   (%.0f%% of the marginal pass)\n", g->gaps_us,
                100.0 * g->gaps_share);
    } else {
        fprintf(out, "  kernel-time sum          n/a      (no timestamps on this device)\n");
    }
    fprintf(out, "  ⇒ fixed submit+poll%9.0f µs   (cancels out of the delta)\n", g->fixed_us);
    if (ts)
        fprintf(out, "  VERDICT: %s\n", verdict_text(g->per_dispatch));
    else
        fprintf(out, "  VERDICT: unknown: without timestamps the kernel-time sum is unknown\n");
    /* what the per-dispatch timestamps cost: the profiled wall against the same step without them */
    double plain = g->head ? g->head_wall1_us : g->wall1_us;
    if (ts && p->wall_us.n_reps)
        fprintf(out, "  timestamps add     %9.0f µs   (profiled wall min %.0f µs vs %.0f µs without timestamps)\n",
                p->wall_us.min - plain, p->wall_us.min, plain);
    if (!g->head) return;
    fprintf(out, "-- LM head (vocab %d) --\n", p->model.vocab);
    fprintf(out, "  marginal pass +head%9.0f µs\n", g->marginal_head_us);
    fprintf(out, "  ⇒ LM head          %9.0f µs   (%.0f%% of a pass WITH the head)\n",
            g->lm_head_us, 100.0 * g->lm_head_share);
    fprintf(out, "     ↳ %.0f GB/s if the head is f16 (%.0f MB) | %.0f GB/s if q4_0 (%.0f MB)\n",
            g->head_gbps_f16, g->head_bytes_f16 / 1e6, g->head_gbps_q4_0, g->head_bytes_q4_0 / 1e6);
    fprintf(out, "     ↳ %.0f GB/s for its real size (%s, %.0f MB)", g->head_gbps, p->model.dtype,
            g->head_bytes_real / 1e6);
    if (p->device.copy_gbps > 0)
        fprintf(out, " = %.0f%% of copy bandwidth",
                100.0 * safe_div(g->head_gbps, p->device.copy_gbps));
    fprintf(out, "\n");
    if (ts) fprintf(out, "  head timestamp sum %9.0f µs\n", g->head_kernel_sum_us);
    if (g->disagree)
        fprintf(out,
                "  WARNING: the head's timestamp sum (%.0f µs) and the subtraction (%.0f µs) "
                "disagree by more than 10%%\n",
                g->head_kernel_sum_us, g->lm_head_us);
}

static void text_by_kind(FILE *out, const struct profile *p)
{
    fprintf(out, "-- by kernel --\n");
    if (has_head(p))
        fprintf(out, "  (kinds head.*: share of the LM head's sum, %.1f µs, not of GPU busy)\n",
                p->head_us.mean);
    for (int k = 0; k < p->n_kinds; k++) {
        const struct prof_kind *pk = &p->by_kind[k];
        fprintf(out, "  %-28s n=%-4d %9.1f µs (%4.1f%%)  avg %7.1f µs", pk->kind, pk->n,
                pk->us.mean, 100.0 * pk->share, safe_div(pk->us.mean, pk->n));
        if (pk->bytes > 0) {
            fprintf(out, "  %7.1f GB/s", pk->gbps);
            if (p->device.copy_gbps > 0) fprintf(out, " (%4.1f%% of copy)", 100.0 * pk->bw_share);
        }
        fprintf(out, "\n");
    }
}

static void text_top(FILE *out, const struct profile *p)
{
    int *idx = top_order(p);
    fprintf(out, "-- top single dispatches --\n");
    for (int t = 0; t < p->n_dispatches && t < 8; t++) {
        const struct prof_dispatch *d = &p->dispatches[idx[t]];
        fprintf(out, "  step[%3d] %-26s gx=%-6u gy=%-3u %9.1f µs (%4.1f%%)  gz=%u layer=%d op=%s\n",
                d->index, d->kind, d->groups[0], d->groups[1], d->us.mean,
                100.0 * dispatch_share(p, d), d->groups[2], d->layer, d->op);
    }
    free(idx);
}

static void text_busy(FILE *out, const struct profile *p)
{
    const struct prof_shape *s = &p->shape;
    fprintf(out,
            "== batch step profile: %d cols, pos %d, layers %d:%d, wide=%s spec=%s logits=%s "
            "slots=%d ==\n",
            s->cols, s->pos, p->shard.a, p->shard.b, bool_str(strcmp(s->plan, "wide") == 0),
            bool_str(strcmp(s->plan, "spec") == 0), bool_str(s->logits), s->slots);
    if (strcmp(s->plan, "spec") == 0)
        fprintf(out, "plan spec: %d slots × drafts of %d tokens; every column gets a logit and a snapshot of "
                     "every recurrent state (kinds *.snap)\n", s->slots, s->draft);
    if (p->device.has_timestamps) {
        fprintf(out, "GPU busy %.0f µs/step  wall %.0f µs  → %.1f tok/s/stage at this width",
                p->busy_us.mean, p->wall_us.mean, p->tok_s);
        if (has_head(p)) fprintf(out, "  + LM head %.0f µs", p->head_us.mean);
        fprintf(out, "\n");
    } else {
        fprintf(out,
                "GPU busy n/a µs/step  wall %.0f µs  → %.1f tok/s/stage at this width (from "
                "the wall: no timestamps)\n",
                p->wall_us.mean, p->tok_s);
    }
    fprintf(out, "  (%s.)\n", wall_meaning(p));
    fprintf(out, "  (means of %d reps; JSON keeps every rep, median wall %.0f µs, min %.0f µs)\n",
            p->wall_us.n_reps, p->wall_us.median, p->wall_us.min);
}

void report_text(FILE *out, const struct profile *p)
{
    text_header(out, p);
    text_busy(out, p);
    if (p->gap_probe.ran) text_gap_probe(out, p);
    if (p->device.has_timestamps) {
        text_by_kind(out, p);
        text_top(out, p);
    }
}

/* ------------------------------------------------------------------------------------------------
 * Markdown report: the same content as GitHub tables, for perf notes. */

static void md_header(FILE *out, const struct profile *p)
{
    const struct prof_device *d = &p->device;
    const struct prof_shape *s = &p->shape;
    fprintf(out, "## %s %s: layers %d:%d, %d cols, pos %d\n\n", p->tool, p->version, p->shard.a,
            p->shard.b, s->cols, s->pos);
    fprintf(out, "| | |\n|---|---|\n");
    fprintf(out, "| device | %s |\n| driver | %s |\n| api | %s |\n", d->name, d->driver, d->api);
    if (d->has_timestamps)
        fprintf(out, "| timestamps | period %.3f ns, %u valid bits |\n", d->timestamp_period_ns,
                d->timestamp_valid_bits);
    else
        fprintf(out, "| timestamps | **not supported**: per-dispatch tables skipped |\n");
    fprintf(out, "| copy bandwidth | %.0f GB/s |\n", d->copy_gbps);
    fprintf(out, "| model | %s %s, %d layers, hidden %d, vocab %d (%s) |\n", p->model.family,
            p->model.dtype, p->model.n_layers, p->model.hidden, p->model.vocab, p->model.source);
    fprintf(out, "| shape | plan %s, %d cols, pos %d, slots %d, logits=%s", s->plan, s->cols,
            s->pos, s->slots, bool_str(s->logits));
    if (strcmp(s->plan, "spec") == 0) fprintf(out, ", drafts of %d tokens", s->draft);
    fprintf(out, " |\n");
    if (d->has_timestamps)
        fprintf(out, "| GPU busy | %.0f µs/step (median %.0f) |\n", p->busy_us.mean,
                p->busy_us.median);
    else
        fprintf(out, "| GPU busy | n/a (no timestamps) |\n");
    if (has_head(p)) fprintf(out, "| + LM head | %.0f µs/step |\n", p->head_us.mean);
    fprintf(out, "| wall | %.0f µs (median %.0f): %s |\n", p->wall_us.mean, p->wall_us.median,
            wall_meaning(p));
    fprintf(out, "| tok/s/stage | %.1f |\n", p->tok_s);
    fprintf(out, "| command | `%s` |\n\n", p->args);
}

static void md_gap_probe(FILE *out, const struct profile *p)
{
    const struct gap_probe *g = &p->gap_probe;
    bool ts = p->device.has_timestamps;
    fprintf(out, "### gap probe (1× vs 2× plan in ONE pass; poll/submit cancel in the delta)\n\n");
    fprintf(out, "| term | µs | |\n|---|---:|---|\n");
    fprintf(out, "| wall 1× | %.0f | |\n| wall 2× | %.0f | |\n", g->wall1_us, g->wall2_us);
    fprintf(out, "| marginal pass | %.0f | kernels + inter-dispatch cost |\n", g->marginal_us);
    if (ts) {
        fprintf(out, "| kernel-time sum | %.0f | excludes the LM head |\n", g->kernel_sum_us);
        fprintf(out, "| ⇒ inter-dispatch | %.0f | %.0f%% of the marginal pass |\n", g->gaps_us,
                100.0 * g->gaps_share);
    }
    fprintf(out, "| ⇒ fixed submit+poll | %.0f | cancels out of the delta |\n\n", g->fixed_us);
    fprintf(out, "**VERDICT:** %s\n\n",
            ts ? verdict_text(g->per_dispatch) : "unknown (no timestamps on this device)");
    if (!g->head) return;
    fprintf(out, "### LM head (vocab %d)\n\n", p->model.vocab);
    fprintf(out, "| term | value |\n|---|---:|\n");
    fprintf(out, "| marginal pass +head | %.0f µs |\n", g->marginal_head_us);
    fprintf(out, "| ⇒ LM head | %.0f µs (%.0f%% of a pass WITH the head) |\n", g->lm_head_us,
            100.0 * g->lm_head_share);
    fprintf(out, "| head timestamp sum | %.0f µs |\n", g->head_kernel_sum_us);
    fprintf(out, "| GB/s, real size (%s, %.0f MB) | %.0f |\n", p->model.dtype,
            g->head_bytes_real / 1e6, g->head_gbps);
    fprintf(out, "| GB/s if f16 (%.0f MB) | %.0f |\n", g->head_bytes_f16 / 1e6, g->head_gbps_f16);
    fprintf(out, "| GB/s if q4_0 (%.0f MB) | %.0f |\n\n", g->head_bytes_q4_0 / 1e6,
            g->head_gbps_q4_0);
    if (g->disagree)
        fprintf(out, "**WARNING:** the head's timestamp sum and the subtraction disagree by more "
                     "than 10%%.\n\n");
}

static void md_tables(FILE *out, const struct profile *p)
{
    fprintf(out, "### by kernel\n\n");
    if (has_head(p))
        fprintf(out, "Kinds `head.*`: share of the LM head's sum, not of GPU busy.\n\n");
    fprintf(out, "| kind | n | total µs | share | avg µs | GB/s | %% of copy |\n");
    fprintf(out, "|---|---:|---:|---:|---:|---:|---:|\n");
    for (int k = 0; k < p->n_kinds; k++) {
        const struct prof_kind *pk = &p->by_kind[k];
        fprintf(out, "| `%s` | %d | %.1f | %.1f%% | %.1f |", pk->kind, pk->n, pk->us.mean,
                100.0 * pk->share, safe_div(pk->us.mean, pk->n));
        if (pk->bytes > 0)
            fprintf(out, " %.1f | %.1f%% |\n", pk->gbps, 100.0 * pk->bw_share);
        else
            fprintf(out, " | |\n");
    }
    int *idx = top_order(p);
    fprintf(out, "\n### top single dispatches\n\n");
    fprintf(out, "| step | layer | op | kind | gx | gy | gz | µs | share |\n");
    fprintf(out, "|---:|---:|---|---|---:|---:|---:|---:|---:|\n");
    for (int t = 0; t < p->n_dispatches && t < 8; t++) {
        const struct prof_dispatch *d = &p->dispatches[idx[t]];
        fprintf(out, "| %d | %d | %s | `%s` | %u | %u | %u | %.1f | %.1f%% |\n", d->index, d->layer,
                d->op, d->kind, d->groups[0], d->groups[1], d->groups[2], d->us.mean,
                100.0 * dispatch_share(p, d));
    }
    fprintf(out, "\n");
    free(idx);
}

void report_markdown(FILE *out, const struct profile *p)
{
    md_header(out, p);
    if (p->gap_probe.ran) md_gap_probe(out, p);
    if (p->device.has_timestamps) md_tables(out, p);
}
