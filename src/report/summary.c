/* summary.c - the summary block at the top of the text and Markdown reports: the step with its
 * spread, tok/s without and with the LM head, the bound that applies, the top kinds, and the
 * actions the figures support, each with its measured ceiling.
 *
 * Advice comes only from figures beyond noise, by the one rule of struct est (est_within_noise,
 * which the gap probe's verdict and compare's ± use too): the dead time between dispatches through
 * the gap probe's verdict, a kind's distance from its bound (copy bandwidth or tensor roof) through
 * its median's error. */
#include "profile.h"
#include "report_fmt.h"

#include <stdarg.h>
#include <string.h>

/* A kind is worth naming for its bandwidth only when what it could gain is at least this share of
 * the step's kernel time (smaller ceilings are real but not the next thing to do). */
#define SUMMARY_MIN_GAIN_SHARE 0.05
#define SUMMARY_TOP_KINDS 3

static void add(struct summary *s, const char *fmt, ...)
{
    if (s->n >= SUMMARY_MAX_LINES) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->line[s->n++], sizeof s->line[0], fmt, ap);
    va_end(ap);
}

static bool timestamped(const struct profile *p)
{
    return p->device.has_timestamps && p->busy_us.n_reps > 0 && p->timing != TIMING_NONE;
}

/* The step's time as the summary states it: kernel sums with timestamps (layers + head), else the
 * uninstrumented 1× wall of the gap probe (with the head when it ran), else the profiled wall. */
double profile_step_us(const struct profile *p)
{
    const struct gap_probe *g = &p->gap_probe;
    if (timestamped(p)) return p->busy_us.median + (p->head_us.n_reps ? p->head_us.median : 0);
    if (g->ran) return g->head ? g->head_wall1_us : g->wall1_us;
    return p->wall_us.median;
}

static void line_step(const struct profile *p, const struct unit *u, struct summary *s)
{
    char a[32], b[32], sp[128];
    if (timestamped(p)) {
        char head[96] = "";
        if (p->head_us.n_reps)
            snprintf(head, sizeof head, " + LM head %s %s",
                     fmt_t(b, sizeof b, u, p->head_us.median, -1), u->name);
        add(s, "step: GPU busy %s %s%s (kernel time, medians; busy %s)",
            fmt_t(a, sizeof a, u, p->busy_us.median, -1), u->name, head,
            fmt_spread(sp, sizeof sp, u, &p->busy_us));
    } else {
        add(s, "step: wall %s %s (median, no timestamps; %s)",
            fmt_t(a, sizeof a, u, p->wall_us.median, -1), u->name,
            fmt_spread(sp, sizeof sp, u, &p->wall_us));
    }
}

/* What step_us measured, for the lines that use it. */
static const char *step_what(const struct profile *p)
{
    if (timestamped(p)) return p->head_us.n_reps ? "kernel time, head included" : "kernel time";
    if (p->gap_probe.ran) return p->gap_probe.head ? "the 1× wall, head included" : "the 1× wall";
    return "the profiled wall";
}

/* Without the head: from busy, or from the probe's 1× wall without timestamps; with it: from busy +
 * head, or the probe's 1× wall with the head. The profiled wall alone holds the head inseparably.
 */
static void line_tok_s(const struct profile *p, struct summary *s)
{
    const struct gap_probe *g = &p->gap_probe;
    double with = profile_tok_s_head(p), without = p->tok_s;
    const char *from = timestamped(p) ? "kernel time" : "the gap probe's 1× walls";
    if (!timestamped(p) && g->ran) {
        without = safe_div(p->shape.cols * 1e6, g->wall1_us);
    } else if (!timestamped(p)) {
        add(s, "tok/s at %d cols: %.1f (from the profiled wall%s)", p->shape.cols, p->tok_s,
            has_head(p) ? ", LM head included: no timestamps to take it out" : "");
        return;
    }
    if (with > 0)
        add(s, "tok/s at %d cols: %.1f without the LM head, %.1f with it (from %s)", p->shape.cols,
            without, with, from);
    else
        add(s, "tok/s at %d cols: %.1f (no LM head in this step; from %s)", p->shape.cols, without,
            from);
}

/* The bound that applies (profile_bound): × the weight-bytes floor for a memory-bound step, × the
 * tensor roof (the FMA roof on a device without cooperative matrices) for a compute-bound one, and
 * one line of why (intensity against balance). */
static void line_bound(const struct profile *p, const struct unit *u, struct summary *s)
{
    char t[32], a[32], b[32], c[32];
    struct bound bd = profile_bound(p, profile_step_us(p));
    const struct prof_device *dv = &p->device;
    if (bd.kind == BOUND_UNKNOWN) {
        add(s, "bound: no weight-bytes floor (%s)", dv->copy_gbps > 0 ? "no weight bytes recorded" : "copy bandwidth not measured");
        return;
    }
    if (bd.kind == BOUND_MEMORY) {
        add(s, "bound: %.2f × the weight-bytes floor (%s: %s %s = %s MB ÷ %s GB/s copy bandwidth): weights read at %.0f %% of copy bandwidth",
            bd.x, step_what(p), fmt_t(t, sizeof t, u, bd.floor_us, -1), u->name,
            fmt_sig3(a, sizeof a, p->floor_bytes / 1e6), fmt_sig3(b, sizeof b, dv->copy_gbps), 100.0 * safe_div(1.0, bd.x));
    } else {
        uint64_t flops, exec;
        profile_flops(p, &flops, &exec);
        char more[160] = "";
        if (exec > flops)
            snprintf(more, sizeof more, "; the gemm executes %.2f× these FLOPs (f16 high and low parts), so its units run at %.0f %% of the roof",
                     (double)exec / (double)flops, 100.0 * safe_div((double)exec / (double)flops, bd.x));
        add(s, "bound: %.2f × the %s (%s: %s %s = %s ÷ %s %s): useful FLOPs at %.0f %% of the roof%s",
            bd.x, roof_name(dv), step_what(p), fmt_t(t, sizeof t, u, bd.roof_us, -1), u->name, fmt_flop(a, sizeof a, (double)flops),
            fmt_flop_rate(b, sizeof b, dv->roof_tflops), dv->roof_path, 100.0 * safe_div(1.0, bd.x), more);
    }
    if (bd.roof_us <= 0) {
        add(s, "why memory-bound: %s", dv->roof_tflops > 0 ? "no FLOPs counted in this step" : "no arithmetic roof measured");
        return;
    }
    add(s, "why %s-bound: %s FLOP per weight byte, %s the device's balance of %s FLOP/byte (%s %s ÷ %s GB/s)",
        bound_kind_name(bd.kind), fmt_sig3(t, sizeof t, bd.intensity), bd.kind == BOUND_COMPUTE ? "above" : "below",
        fmt_sig3(a, sizeof a, bd.balance), fmt_flop_rate(b, sizeof b, dv->roof_tflops), dv->roof_path,
        fmt_sig3(c, sizeof c, dv->copy_gbps));
}

static void line_top_kinds(const struct profile *p, struct summary *s)
{
    if (!timestamped(p)) return; /* no per-kind times */
    char buf[320];
    size_t used = 0;
    int n = 0;
    buf[0] = 0;
    for (int k = 0; k < p->n_kinds && n < SUMMARY_TOP_KINDS; k++) {
        const struct prof_kind *pk = &p->by_kind[k];
        if (prof_kind_is_head(pk->kind)) continue;
        int w = snprintf(buf + used, sizeof buf - used, "%s%s %.1f %%", n ? ", " : "", pk->kind,
                         100.0 * pk->share);
        if (w < 0 || (size_t)w >= sizeof buf - used) break;
        used += (size_t)w;
        n++;
    }
    if (n) add(s, "top kinds (shares of the layer kinds' sum): %s", buf);
}

/* The gap probe's action: fusion, with the dead time as its ceiling, only on a verdict beyond
 * noise. */
static bool action_gaps(const struct profile *p, const struct unit *u, struct summary *s)
{
    const struct gap_probe *g = &p->gap_probe;
    char a[32], m[32];
    if (!g->ran) return false;
    if (g->verdict == VERDICT_PER_DISPATCH) {
        add(s,
            "action: dead time between dispatches %s %s = %.0f %% of the pass (%s %s): fusing "
            "dispatches "
            "reclaims at most that",
            fmt_t(a, sizeof a, u, g->gaps_us, -1), u->name, 100.0 * g->gaps_share,
            fmt_t(m, sizeof m, u, g->marginal_us, -1), u->name);
        return true;
    }
    if (g->verdict == VERDICT_SUBMIT_POLL && g->gaps_us < 0) {
        /* the marginal pass below the kernel sum: the timestamps' own cost exceeds the dead time */
        add(s,
            "no action: no dead time between dispatches to reclaim (the pass without timestamps is "
            "%s %s below the kernel sum): fusion buys nothing",
            fmt_t(a, sizeof a, u, -g->gaps_us, -1), u->name);
        return true;
    }
    if (g->verdict == VERDICT_SUBMIT_POLL) {
        add(s,
            "no action: dead time between dispatches %s %s = %.0f %% of the pass is below the 25 "
            "%% line: "
            "fusion buys little",
            fmt_t(a, sizeof a, u, g->gaps_us, -1), u->name, 100.0 * g->gaps_share);
        return true;
    }
    if (g->verdict == VERDICT_INCONCLUSIVE) {
        add(s,
            "no advice on fusion: the gap probe is inconclusive at %d reps (its VERDICT says which "
            "--reps "
            "would decide)",
            g->n_reps);
        return true;
    }
    return false;
}

/* The kind furthest in time from its own bound (bound_of: its bytes over the copy bandwidth, or its
 * FLOPs over the tensor roof, whichever is larger): at most time − that bound to gain, when that gap
 * is beyond its noise and at least SUMMARY_MIN_GAIN_SHARE of the step. */
static bool action_kind_bound(const struct profile *p, const struct unit *u, struct summary *s)
{
    if (!timestamped(p) || (p->device.copy_gbps <= 0 && p->device.roof_tflops <= 0)) return false;
    const struct prof_kind *best = NULL;
    struct bound best_bd = {0};
    struct est best_gain = {0, 0};
    for (int k = 0; k < p->n_kinds; k++) {
        const struct prof_kind *pk = &p->by_kind[k];
        struct bound bd = bound_of(pk->flops, pk->bytes + pk->kv_bytes, p->device.copy_gbps, p->device.roof_tflops,
                                   pk->us.median);
        if (bd.kind == BOUND_UNKNOWN) continue;
        double at = bd.kind == BOUND_COMPUTE ? bd.roof_us : bd.floor_us;
        struct est gain = est_sub(est_median(&pk->us), est_exact(at));
        if (gain.v <= 0 || est_within_noise(gain)) continue;
        if (!best || gain.v > best_gain.v) {
            best = pk;
            best_bd = bd;
            best_gain = gain;
        }
    }
    if (!best || best_gain.v < SUMMARY_MIN_GAIN_SHARE * profile_step_us(p)) return false;
    char a[32], b[32], c[32];
    bool compute = best_bd.kind == BOUND_COMPUTE;
    char what[32];
    snprintf(what, sizeof what, "the %s", roof_name(&p->device));
    add(s, "action: %s at %.0f %% of %s: at most %s %s to gain (%s %s now, %s %s at %s)", best->kind,
        100.0 * (compute ? best->roof_share : best->bw_share), compute ? what : "copy bandwidth",
        fmt_t(a, sizeof a, u, best_gain.v, -1), u->name, fmt_t(b, sizeof b, u, best->us.median, -1), u->name,
        fmt_t(c, sizeof c, u, best->us.median - best_gain.v, -1), u->name, compute ? "the roof" : "copy bandwidth");
    return true;
}

void summary_lines(const struct profile *p, const struct unit *u, struct summary *s)
{
    memset(s, 0, sizeof *s);
    line_step(p, u, s);
    line_tok_s(p, s);
    line_bound(p, u, s);
    line_top_kinds(p, s);
    bool acted = action_gaps(p, u, s);
    acted |= action_kind_bound(p, u, s);
    if (!acted)
        add(s, "actions: none the figures support beyond noise%s",
            p->gap_probe.ran ? "" : " (--gap-probe measures the dead time between dispatches)");
}
