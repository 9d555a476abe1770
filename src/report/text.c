/* text.c - the text report (the seed's headings word for word, docs/design.md "Profiling contract"). */
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
    if (p->tune[0]) fprintf(out, "tune: %s (kernel-choice overrides, not the defaults)\n", p->tune);
    if (p->test_hooks[0]) fprintf(out, "test hooks: %s (a test run: not the product's figures)\n", p->test_hooks);
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
    char rf[96];
    fprintf(out, "roof: %s, measured on registers (what the wide plan's gemm multiplies on)\n",
            fmt_roof(rf, sizeof rf, d));
    char gp[160], fb[256];
    if (d->gemm_path[0])
        fprintf(out, "gemm path: %s%s\n", fmt_gemm_path(gp, sizeof gp, d->gemm_path),
                fmt_gemm_fallbacks(fb, sizeof fb, p));
    fprintf(out, "model: %s %s, %d layers, hidden %d, vocab %d, from %s\n", p->model.family,
            p->model.dtype, p->model.n_layers, p->model.hidden, p->model.vocab, p->model.source);
}

static void text_lm_head(FILE *out, const struct profile *p, const struct unit *u);

static void text_busy(FILE *out, const struct profile *p, const struct unit *u)
{
    const struct prof_shape *s = &p->shape;
    char sp[128], sp2[128], x[32], y[32];
    fprintf(out,
            "== batch step profile: %d cols, pos %d, layers %d:%d, wide=%s spec=%s logits=%s "
            "slots=%d ==\n",
            s->cols, s->pos, p->shard.a, p->shard.b, bool_str(strcmp(s->plan, "wide") == 0),
            bool_str(strcmp(s->plan, "spec") == 0), bool_str(logits_ran(p)), s->slots);
    char pl[512];
    fprintf(out, "%s\n", report_plan_line(pl, sizeof pl, p));
    bool spec = strcmp(s->plan, "spec") == 0;
    if (s->logits && !shard_has_head(p))
        fprintf(out, "logits: requested, but this shard (layers %d:%d of %d) has no LM head: only the last stage "
                     "computes logits, none here\n", p->shard.a, p->shard.b, p->model.n_layers);
    else if (s->logits && s->logit_cols != s->cols)
        fprintf(out, "logits: each slot's last column (%d of %d; --all-logits: every column)\n", s->logit_cols,
                s->cols);
    if (spec && shard_has_head(p))
        fprintf(out,
                "plan spec: %d slots × drafts of %d tokens; every column gets a logit and a "
                "snapshot of every recurrent state (kinds *.snap)\n",
                s->slots, s->draft);
    else if (spec)
        fprintf(out,
                "plan spec: %d slots × drafts of %d tokens; every column gets a snapshot of every recurrent "
                "state (kinds *.snap); no logits here: the verify's logits come from the last stage's head\n",
                s->slots, s->draft);
    bool ts = p->device.has_timestamps && p->busy_us.n_reps > 0;
    if (ts) {
        fprintf(out, "GPU busy %s %s/step  wall %s %s  → %.1f tok/s/stage at this width",
                fmt_t(x, sizeof x, u, p->busy_us.median, 0), u->name, fmt_t(y, sizeof y, u, p->wall_us.median, 0),
                u->name, p->tok_s);
        if (has_head(p)) fprintf(out, "  + LM head %s %s", fmt_t(x, sizeof x, u, p->head_us.median, 0), u->name);
        fprintf(out, "\n");
        fprintf(out, "  (medians; busy %s; wall %s)\n", fmt_spread(sp, sizeof sp, u, &p->busy_us),
                fmt_spread(sp2, sizeof sp2, u, &p->wall_us));
        if (has_head(p))
            fprintf(out, "  (LM head: its kernel sum beside busy, not inside it; %s; %.1f tok/s/stage with it)\n",
                    fmt_spread(sp, sizeof sp, u, &p->head_us), profile_tok_s_head(p));
        fprintf(out, "  (timing: %s", timing_mode_name(p->timing));
        if (p->timing == TIMING_SAMPLED)
            fprintf(out,
                    ": every %d-th dispatch timestamped a step, %d steps; per-dispatch figures are "
                    "medians of their own samples, busy sums the j-th samples",
                    p->sample_stride, p->steps_timed);
        fprintf(out, ")\n");
    } else {
        fprintf(out,
                "GPU busy n/a %s/step  wall %s %s  → %.1f tok/s/stage at this width (from "
                "the wall: no timestamps)\n",
                u->name, fmt_t(x, sizeof x, u, p->wall_us.median, 0), u->name, p->tok_s);
        fprintf(out, "  (medians; wall %s)\n", fmt_spread(sp, sizeof sp, u, &p->wall_us));
    }
    fprintf(out, "  (%s.)\n", wall_meaning(p));
    if (p->floor_bytes > 0 && p->floor_us > 0) {
        char mb[32], fl[32];
        fprintf(out, "  (floor: %s MB of weights ÷ copy bandwidth = %s %s)\n",
                fmt_sig3(mb, sizeof mb, p->floor_bytes / 1e6), fmt_t(fl, sizeof fl, u, p->floor_us, -1), u->name);
    }
    uint64_t flops, exec;
    profile_flops(p, &flops, &exec);
    if (flops > 0) {
        char f[32], fx[32], rt[32], ex[96] = "";
        if (exec > flops)
            snprintf(ex, sizeof ex, "; %s executed: the gemm's f16 high and low parts", fmt_flop(fx, sizeof fx, (double)exec));
        fprintf(out, "  (FLOPs: %s useful%s", fmt_flop(f, sizeof f, (double)flops), ex);
        if (p->device.roof_tflops > 0)
            fprintf(out, "; useful ÷ roof = %s %s", fmt_t(rt, sizeof rt, u, (double)flops / (p->device.roof_tflops * 1e6), -1),
                    u->name);
        fprintf(out, ")\n");
    }
}

static void text_wall_line(FILE *out, const struct unit *u, const char *name, const struct timing *t)
{
    char sp[128], x[32];
    fprintf(out, "  %-19s%9s %s   (median; %s)\n", name, fmt_t(x, sizeof x, u, t->median, 0), u->name,
            fmt_spread(sp, sizeof sp, u, t));
}

/* "%9s µs": a figure right-aligned in 9 columns with its unit (µs: printf "%9.0f µs" as before). */
static const char *col9(char *buf, size_t size, const struct unit *u, double us, int dec)
{
    char x[32];
    snprintf(buf, size, "%9s %s", fmt_t(x, sizeof x, u, us, dec), u->name);
    return buf;
}

static void text_gap_probe(FILE *out, const struct profile *p, const struct unit *u)
{
    char pl[192];
    const struct gap_probe *g = &p->gap_probe;
    bool ts = g->verdict != VERDICT_UNKNOWN;
    char er[64], c[48];
    fprintf(out, "-- gap probe (1× vs 2× plan in ONE pass; poll/submit cancel in the delta) --\n");
    if (g->n_reps > 0) {
        fprintf(out,
                "  (medians of %d reps on both sides of every subtraction; ± is the standard error "
                "of the difference, from the MADs; within noise: |figure| ≤ %.0f ±)\n",
                g->n_reps, EST_NOISE_K);
        text_wall_line(out, u, "wall 1×", &g->w1);
        text_wall_line(out, u, "wall 2×", &g->w2);
    } else {
        fprintf(out, "  wall 1×            %s\n", col9(c, sizeof c, u, g->wall1_us, 0));
        fprintf(out, "  wall 2×            %s\n", col9(c, sizeof c, u, g->wall2_us, 0));
    }
    fprintf(out, "  marginal pass      %s %s  = kernels + inter-dispatch cost\n", col9(c, sizeof c, u, g->marginal_us, 0),
            fmt_err(er, sizeof er, u, g->marginal));
    if (g->dispatches > 0)
        fprintf(out, "  (%s)\n", plan_sentence(pl, sizeof pl, g));
    if (ts) {
        fprintf(out, "  kernel-time sum    %s   (profiled above, median; excludes the LM head)\n",
                col9(c, sizeof c, u, g->kernel_sum_us, 0));
        fprintf(out, "  ⇒ inter-dispatch   %s %s  (%.0f%% of the marginal pass)\n", col9(c, sizeof c, u, g->gaps_us, 0),
                fmt_err(er, sizeof er, u, g->gaps), 100.0 * g->gaps_share);
        if (g->gaps_us < 0 && !est_within_noise(g->gaps))
            fprintf(
                out,
                "     ↳ negative: the timestamps' own cost inside the kernel sum exceeds the dead "
                "time (see `timestamps add`)\n");
    } else {
        fprintf(out, "  kernel-time sum          n/a      (no timestamps on this device)\n");
    }
    fprintf(out, "  ⇒ fixed submit+poll%s %s  (cancels out of the delta)\n", col9(c, sizeof c, u, g->fixed_us, 0),
            fmt_err(er, sizeof er, u, g->fixed));
    char vb[256];
    fprintf(out, "  VERDICT: %s\n", verdict_text(vb, sizeof vb, g));
    if (ts && p->wall_us.n_reps && g->ts_pair_us != 0) {
        char pair[32], w[32], w0[32];
        fprintf(out,
                "  timestamps add     %s %s  (profiled wall median %s %s vs %s %s without "
                "timestamps: %s µs a timestamp pair)\n",
                col9(c, sizeof c, u, g->ts_add.v, 0), fmt_err(er, sizeof er, u, g->ts_add),
                fmt_t(w, sizeof w, u, p->wall_us.median, 0), u->name,
                fmt_t(w0, sizeof w0, u, g->head ? g->head_wall1_us : g->wall1_us, 0), u->name,
                fmt_us(pair, sizeof pair, g->ts_pair_us));
    }
    if (g->head) text_lm_head(out, p, u);
}

/* The gap probe's LM head block (last stage with --logits). */
static void text_lm_head(FILE *out, const struct profile *p, const struct unit *u)
{
    const struct gap_probe *g = &p->gap_probe;
    bool ts = g->verdict != VERDICT_UNKNOWN;
    char a[32], b[32], c[48], d[32], e2[32], er[64];
    fprintf(out, "-- LM head (vocab %d) --\n", p->model.vocab);
    if (g->n_reps > 0) {
        text_wall_line(out, u, "wall 1× +head", &g->hw1);
        text_wall_line(out, u, "wall 2× +head", &g->hw2);
    }
    fprintf(out, "  marginal pass +head%s\n", col9(c, sizeof c, u, g->marginal_head_us, 0));
    fprintf(out, "  ⇒ LM head          %s %s  (%.0f%% of a pass WITH the head)\n", col9(c, sizeof c, u, g->lm_head_us, 0),
            fmt_err(er, sizeof er, u, g->lm_head), 100.0 * g->lm_head_share);
    if (est_within_noise(g->lm_head)) { /* no GB/s from a figure within noise */
        char hl[192];
        fprintf(out, "     ↳ %s\n", head_inconclusive(hl, sizeof hl, g));
        if (ts) fprintf(out, "  head timestamp sum %s   (median)\n", col9(c, sizeof c, u, g->head_kernel_sum_us, 0));
        return;
    }
    fprintf(out, "     ↳ %s GB/s if the head is f16 (%s MB) | %s GB/s if q4_0 (%s MB)\n",
            fmt_sig3(a, sizeof a, g->head_gbps_f16), fmt_sig3(b, sizeof b, g->head_bytes_f16 / 1e6),
            fmt_sig3(e2, sizeof e2, g->head_gbps_q4_0), fmt_sig3(d, sizeof d, g->head_bytes_q4_0 / 1e6));
    fprintf(out, "     ↳ %s GB/s for its real size (%s, %s MB)", fmt_sig3(a, sizeof a, g->head_gbps), p->model.dtype,
            fmt_sig3(e2, sizeof e2, g->head_bytes_real / 1e6));
    if (p->device.copy_gbps > 0)
        fprintf(out, " = %.0f%% of copy bandwidth", 100.0 * safe_div(g->head_gbps, p->device.copy_gbps));
    fprintf(out, "\n");
    if (ts) fprintf(out, "  head timestamp sum %s   (median)\n", col9(c, sizeof c, u, g->head_kernel_sum_us, 0));
    if (g->disagree)
        fprintf(out,
                "  WARNING: the head's timestamp sum (%s %s) and the subtraction (%s %s) "
                "disagree by more than 10%%\n",
                fmt_t(a, sizeof a, u, g->head_kernel_sum_us, 0), u->name, fmt_t(b, sizeof b, u, g->lm_head_us, 0),
                u->name);
}

/* One by-kind row. */
static void text_kind_row(FILE *out, const struct profile *p, const struct unit *u, const struct prof_kind *pk)
{
    char a[32], b[32], bw[32], m[32], avg[32];
    fprintf(out, "  %-28s n=%-4d %9s %s (%4.1f%%)  avg %7s %s", pk->kind, pk->n, fmt_t(m, sizeof m, u, pk->us.median, 1),
            u->name, 100.0 * pk->share, fmt_t(avg, sizeof avg, u, safe_div(pk->us.median, pk->n), 1), u->name);
    if (pk->bytes + pk->kv_bytes > 0) {
        fprintf(out, "  %7s GB/s", fmt_sig3(bw, sizeof bw, pk->gbps));
        if (p->device.copy_gbps > 0) fprintf(out, " (%4.1f%% of copy)", 100.0 * pk->bw_share);
    }
    if (pk->flops > 0) {
        fprintf(out, "  %13s", fmt_flop_rate(bw, sizeof bw, pk->tflops));
        if (p->device.roof_tflops > 0) fprintf(out, " (%4.1f%% of roof)", 100.0 * pk->roof_share);
    }
    fprintf(out, "  p10–p90 %s–%s\n", fmt_t(a, sizeof a, u, pk->us.p10, -1), fmt_t(b, sizeof b, u, pk->us.p90, -1));
}

/* The layer kinds under the seed's heading, the head's kinds in their own block: each set's shares
 * add up to 100 % of its own stated sum. */
static void text_by_kind(FILE *out, const struct profile *p, const struct unit *u)
{
    char s[32], b[32];
    fprintf(out, "-- by kernel --\n");
    fprintf(out, "  (median per step of each kind's per-rep sum; share of the layer kinds' sum, %s %s; GPU busy's "
                 "median, %s %s, is the median of the per-rep sums)\n",
            fmt_t(s, sizeof s, u, profile_kinds_sum(p, false), 1), u->name, fmt_t(b, sizeof b, u, p->busy_us.median, 1),
            u->name);
    for (int k = 0; k < p->n_kinds; k++)
        if (!prof_kind_is_head(p->by_kind[k].kind)) text_kind_row(out, p, u, &p->by_kind[k]);
    if (!has_head(p)) return;
    fprintf(out, "-- head kernels (the LM head, beside GPU busy) --\n");
    fprintf(out, "  (share of the head kinds' sum, %s %s)\n", fmt_t(s, sizeof s, u, profile_kinds_sum(p, true), 1),
            u->name);
    for (int k = 0; k < p->n_kinds; k++)
        if (prof_kind_is_head(p->by_kind[k].kind)) text_kind_row(out, p, u, &p->by_kind[k]);
}

static void text_top(FILE *out, const struct profile *p, const struct unit *u)
{
    int *idx = top_order(p);
    fprintf(out, "-- top single dispatches --\n");
    if (top_mixes(p, idx))
        fprintf(out, "  (mixed denominators: head.* dispatches are shares of the LM head's sum, "
                     "the others of "
                     "GPU busy)\n");
    else
        fprintf(out, "  (shares of %s)\n", n_top(p) && prof_kind_is_head(p->dispatches[idx[0]].kind)
                                                  ? "the LM head's sum"
                                                  : "GPU busy's median");
    for (int t = 0; t < n_top(p); t++) {
        const struct prof_dispatch *d = &p->dispatches[idx[t]];
        char a[32], b[32], m[32];
        fprintf(out,
                "  step[%3d] %-26s gx=%-6u gy=%-3u gz=%-3u %9s %s (%4.1f%%)  layer=%d op=%s  "
                "p10–p90 %s–%s n=%d\n",
                d->index, d->kind, d->groups[0], d->groups[1], d->groups[2], fmt_t(m, sizeof m, u, d->us.median, 1),
                u->name, 100.0 * dispatch_share(p, d), d->layer, d->op, fmt_t(a, sizeof a, u, d->us.p10, -1),
                fmt_t(b, sizeof b, u, d->us.p90, -1), d->us.n_reps);
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

static void text_attribution(FILE *out, const struct profile *p, const struct unit *u)
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
        fprintf(out, "  %-40s n=%-4d diff %9s %s %s", name, r->n, fmt_t(x, sizeof x, u, r->diff.v, -1), u->name,
                fmt_err(er, sizeof er, u, r->diff));
        if (r->ts_us > 0) fprintf(out, "  ts %9s %s", fmt_t(y, sizeof y, u, r->ts_us, -1), u->name);
        fprintf(out, "%s\n", r->ts_inflated ? "  ts>diff" : "");
    }
    char cl[192];
    fprintf(out, "  closure: Σ diff %s %s %s vs uninstrumented marginal pass %s %s ⇒ %+.1f%% %s\n",
            fmt_t(x, sizeof x, u, a->sum.v, -1), u->name, fmt_err(er, sizeof er, u, a->sum),
            fmt_t(y, sizeof y, u, a->marginal.v, -1), u->name, 100.0 * a->closure_share,
            closure_text(cl, sizeof cl, a));
}

/* The summary block (summary.c says what it holds). */
static void text_summary(FILE *out, const struct profile *p, const struct unit *u)
{
    struct summary s;
    summary_lines(p, u, &s);
    fprintf(out, "-- summary --\n");
    for (int i = 0; i < s.n; i++) fprintf(out, "  %s\n", s.line[i]);
}

void report_text_header(FILE *out, const struct profile *p)
{
    text_header(out, p);
    fprintf(out, "shard: layers %d:%d, pos %d, logits=%s, timing %s, %d reps\n", p->shard.a, p->shard.b,
            p->shape.pos, bool_str(logits_ran(p)), timing_mode_name(p->timing), p->busy_us.n_reps);
}

void report_text_in(FILE *out, const struct profile *p, enum report_units units)
{
    struct unit u = unit_of(units, p);
    text_header(out, p);
    text_summary(out, p, &u);
    text_busy(out, p, &u);
    if (p->gap_probe.ran) text_gap_probe(out, p, &u);
    if (p->device.has_timestamps && p->n_dispatches > 0 && p->timing != TIMING_NONE) {
        text_by_kind(out, p, &u);
        text_top(out, p, &u);
    }
    if (p->attribution.ran) text_attribution(out, p, &u);
}

void report_text(FILE *out, const struct profile *p)
{
    report_text_in(out, p, UNITS_AUTO);
}
