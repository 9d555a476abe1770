/* text.c - the text report (the seed's headings word for word, DESIGN.md "Profiling contract"). */
#include "profile.h"
#include "report_fmt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void text_header(FILE *out, const struct profile *p)
{
    const struct prof_device *d = &p->device;
    char bw[32];
    fprintf(out, "%s %s  device: %s  driver: %s  api: %s\n", p->tool, p->version, d->name,
            d->driver, d->api);
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
