/* compare.c - a run against a saved baseline (docs/design.md "JSON and compare").
 *
 * Statistic: the median of each timing (robust to one slow rep), with the error of the
 * difference of two medians from the reps' MADs (struct est). Two runs are comparable only
 * when they are the same experiment: same model (family, dims, dtype), shard, shape, precision and device;
 * a different driver version is allowed with a warning, since checking a driver upgrade is one of
 * the reasons to compare; so are different --tune overrides (a tuning experiment is compared
 * against the default). A slowdown counts when it is above the threshold in percent AND above
 * COMPARE_NOISE_US per step AND beyond the two runs' noise, so tiny kernels jittering by a fraction of
 * a µs and whole runs on a noisy device never fail CI. Beyond noise: by the rank test where the reps
 * can reach its p-value, by the separation rule where they cannot (make_row); a change that neither
 * decides at too few reps is "undecided", its own exit code, never a pass. */
#include "profile.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------------
 * Identity */

#define DIFF_INT(what, x, y)                                                                       \
    if ((x) != (y))                                                                                \
    return err_set(e, ST_USAGE, "cannot compare: %s differs: base %d, current %d", what, (int)(x), \
                   (int)(y))
#define DIFF_STR(what, x, y)                                                                       \
    if (strcmp((x), (y)) != 0)                                                                     \
    return err_set(e, ST_USAGE, "cannot compare: %s differs: base '%s', current '%s'", what, (x),  \
                   (y))

int compare_identity(const struct profile *b, const struct profile *c, bool device, struct err *e)
{
    DIFF_STR("model family", b->model.family, c->model.family);
    DIFF_INT("model n_layers", b->model.n_layers, c->model.n_layers);
    DIFF_INT("model hidden", b->model.hidden, c->model.hidden);
    DIFF_INT("model vocab", b->model.vocab, c->model.vocab);
    DIFF_STR("model dtype", b->model.dtype, c->model.dtype);
    if (b->shard.a != c->shard.a || b->shard.b != c->shard.b)
        return err_set(e, ST_USAGE, "cannot compare: shard differs: base %d:%d, current %d:%d",
                       b->shard.a, b->shard.b, c->shard.a, c->shard.b);
    DIFF_STR("shape plan", b->shape.plan, c->shape.plan);
    DIFF_INT("shape cols", b->shape.cols, c->shape.cols);
    DIFF_INT("shape pos", b->shape.pos, c->shape.pos);
    DIFF_INT("shape slots", b->shape.slots, c->shape.slots);
    DIFF_INT("shape draft", b->shape.draft, c->shape.draft);
    if (b->shape.logits != c->shape.logits)
        return err_set(e, ST_USAGE, "cannot compare: shape logits differs: base %s, current %s",
                       b->shape.logits ? "true" : "false", c->shape.logits ? "true" : "false");
    DIFF_INT("shape logit_cols", b->shape.logit_cols, c->shape.logit_cols);
    /* serving precision computes other numbers with half the tensor work: another experiment */
    if (strcmp(profile_precision(b), profile_precision(c)) != 0)
        return err_set(e, ST_USAGE,
                       "cannot compare: precision differs: base '%s', current '%s' (--precision: the wide plan's "
                       "products in f32-accurate or f16 arithmetic; compare runs of one)",
                       profile_precision(b), profile_precision(c));
    if (!device) return ST_OK;
    DIFF_STR("device name", b->device.name, c->device.name);
    if (b->device.has_timestamps != c->device.has_timestamps)
        return err_set(e, ST_USAGE, "cannot compare: device timestamps differ: base %s, current %s",
                       b->device.has_timestamps ? "yes" : "no",
                       c->device.has_timestamps ? "yes" : "no");
    return ST_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Deltas: each row sets the two medians against each other, with the error of their difference
 * (struct est, from the MADs) printed beside it. A row is SLOWER only when the change is above the
 * threshold, above COMPARE_NOISE_US and beyond noise by the rank test over the reps (p <
 * COMPARE_ALPHA): the MAD of ten reps is itself too noisy an estimate to gate CI on (measured on
 * synthetic ±80 % reps: 3 false alarms in 10 comparisons at 3 standard errors). Above the
 * threshold but inside the noise a row is "within noise" and does not fail. */

static const struct prof_kind *find_kind(const struct profile *p, const char *kind)
{
    for (int i = 0; i < p->n_kinds; i++)
        if (strcmp(p->by_kind[i].kind, kind) == 0) return &p->by_kind[i];
    return NULL;
}

enum row_verdict { ROW_SAME, ROW_SLOWER, ROW_FASTER, ROW_NOISE, ROW_UNDECIDED, ROW_INFO };

struct cmp_row {
    char name[48];
    struct est base, cur, delta;
    double pct; /* NAN when base <= 0 */
    double p;   /* rank test: p-value of "current slower" (or faster, for faster rows) */
    enum row_verdict verdict;
    const char *reason;
    int reps_to_decide; /* ROW_UNDECIDED: the reps a side that would decide */
};

static double max_of(const struct timing *t)
{
    double m = t->reps[0];
    for (int i = 1; i < t->n_reps; i++) m = MAX(m, t->reps[i]);
    return m;
}

static double min_of(const struct timing *t)
{
    double m = t->reps[0];
    for (int i = 1; i < t->n_reps; i++) m = MIN(m, t->reps[i]);
    return m;
}

double compare_gap_multiple(int nb, int nc)
{
    /* for evenly spread (uniform) noise the gap between the two sides, given they separate, is
     * one spacing of nb + nc - 1: P(gap > k·(ranges)) = (1 + k)^-(nb + nc - 2), and they separate
     * with P = min_p; the k that makes the product COMPARE_ALPHA */
    if (nb < 2 || nc < 2) return INFINITY; /* one rep has no spread: nothing separates */
    double sep = rank_test_min_p(nb, nc);
    if (sep <= COMPARE_ALPHA) return 0.0;
    return pow(sep / COMPARE_ALPHA, 1.0 / (nb + nc - 2)) - 1.0;
}

/* The separation rule (reps too few for the rank test): every rep of `hi` above every rep of `lo`
 * by more than the threshold (of the base median), the 1 µs floor and k times the two sides'
 * ranges together (compare_gap_multiple). */
static bool separated(const struct timing *lo, const struct timing *hi, double base_median,
                      double threshold_pct)
{
    double gap = min_of(hi) - max_of(lo);
    double spread = (max_of(lo) - min_of(lo)) + (max_of(hi) - min_of(hi));
    double k = compare_gap_multiple(lo->n_reps, hi->n_reps);
    return isfinite(k) && gap > COMPARE_NOISE_US && gap > threshold_pct / 100.0 * base_median && gap > k * spread;
}

/* Reps a side whose rank test would tell a change of this size from the measured spread: the
 * standard error of the difference shrinks as 1/√n, and p < 0.001 one-sided needs about 3.1 of
 * them; at least COMPARE_MIN_REPS (the rank test's least). */
static int reps_to_decide(struct est delta, int n)
{
    double want = COMPARE_MIN_REPS;
    if (delta.u > 0 && isfinite(delta.u) && delta.v != 0)
        want = MAX(want, ceil(n * pow(3.1 * delta.u / fabs(delta.v), 2)));
    return (int)MIN(want, 100000.0);
}

static struct cmp_row make_row(const char *name, const struct timing *b, const struct timing *c,
                               double threshold_pct, bool info)
{
    struct cmp_row r = {.base = est_median(b), .cur = est_median(c), .p = 1.0};
    snprintf(r.name, sizeof r.name, "%s", name);
    r.delta = est_sub(r.cur, r.base);
    r.pct = r.base.v > 0 ? 100.0 * r.delta.v / r.base.v : NAN;
    bool over =
        fabs(r.delta.v) > COMPARE_NOISE_US && (r.base.v <= 0 || fabs(r.pct) > threshold_pct);
    if (info) {
        r.verdict = ROW_INFO;
        r.reason = "information only";
    } else if (!over) {
        r.verdict = ROW_SAME;
        r.reason = fabs(r.delta.v) <= COMPARE_NOISE_US ? "change under the 1 µs floor"
                                                       : "change under the threshold";
    } else if (rank_test_min_p(b->n_reps, c->n_reps) >= COMPARE_ALPHA) {
        /* too few reps for the rank test: the separation rule decides or nothing does */
        bool slower = r.delta.v > 0;
        if (separated(slower ? b : c, slower ? c : b, r.base.v, threshold_pct)) {
            r.verdict = slower ? ROW_SLOWER : ROW_FASTER;
            r.reason = slower ? "every current rep slower than every base rep beyond threshold, floor and spread"
                              : "every current rep faster than every base rep beyond threshold, floor and spread";
        } else {
            r.verdict = slower ? ROW_UNDECIDED : ROW_NOISE;
            r.reason = "too few reps to tell change from noise";
            r.reps_to_decide = reps_to_decide(r.delta, MIN(b->n_reps, c->n_reps));
        }
    } else if ((r.p = r.delta.v > 0 ? rank_test_greater(b->reps, b->n_reps, c->reps, c->n_reps)
                                    : rank_test_greater(c->reps, c->n_reps, b->reps, b->n_reps)) >=
               COMPARE_ALPHA) {
        r.verdict = ROW_NOISE;
        r.reason = "change above the threshold but within noise of the reps (rank test)";
    } else {
        r.verdict = r.delta.v > 0 ? ROW_SLOWER : ROW_FASTER;
        r.reason = r.delta.v > 0 ? "slower beyond threshold, floor and noise"
                                 : "faster beyond threshold, floor and noise";
    }
    return r;
}

static const char *row_mark(enum row_verdict v)
{
    switch (v) {
    case ROW_SLOWER:
        return "SLOWER";
    case ROW_FASTER:
        return "faster";
    case ROW_NOISE:
        return "within noise";
    case ROW_UNDECIDED:
        return "UNDECIDED";
    default:
        return "";
    }
}

static void print_row(FILE *out, const struct cmp_row *r, bool markdown)
{
    char pct[32];
    if (isfinite(r->pct))
        snprintf(pct, sizeof pct, "%+.1f%%", r->pct);
    else
        snprintf(pct, sizeof pct, "n/a");
    double noise = COMPARE_NOISE_K * r->delta.u;
    if (markdown) {
        fprintf(out, "| `%s` | %.1f | %.1f | %+.1f | %.1f | %s | %s |\n", r->name, r->base.v,
                r->cur.v, r->delta.v, noise, pct, row_mark(r->verdict));
        return;
    }
    fprintf(out, "  %-32s %11.1f %11.1f %+10.1f %8.1f %9s", r->name, r->base.v, r->cur.v,
            r->delta.v, noise, pct);
    if (r->verdict == ROW_INFO)
        fprintf(out, "  (%s)\n", r->reason);
    else
        fprintf(out, "%s%s\n", r->verdict == ROW_SAME ? "" : "  ", row_mark(r->verdict));
}

static cJSON *row_json(const struct cmp_row *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", r->name);
    cJSON_AddItemToObject(o, "base_us", report_json_number(r->base.v));
    cJSON_AddItemToObject(o, "current_us", report_json_number(r->cur.v));
    cJSON_AddItemToObject(o, "delta_us", report_json_number(r->delta.v));
    cJSON_AddItemToObject(o, "delta_pct", report_json_number(r->pct));
    cJSON_AddItemToObject(o, "noise_us", report_json_number(COMPARE_NOISE_K * r->delta.u));
    cJSON_AddItemToObject(o, "p_value", report_json_number(r->p));
    const char *v = r->verdict == ROW_SLOWER   ? "slower"
                    : r->verdict == ROW_FASTER ? "faster"
                    : r->verdict == ROW_NOISE  ? "within_noise"
                    : r->verdict == ROW_UNDECIDED ? "undecided"
                    : r->verdict == ROW_INFO   ? "info"
                                               : "same";
    cJSON_AddStringToObject(o, "verdict", v);
    cJSON_AddStringToObject(o, "reason", r->reason);
    if (r->verdict == ROW_UNDECIDED) cJSON_AddNumberToObject(o, "reps_to_decide", r->reps_to_decide);
    return o;
}

static void list_only_in(FILE *out, const char *label, const struct profile *p,
                         const struct profile *other)
{
    bool any = false;
    for (int i = 0; i < p->n_kinds; i++) {
        if (find_kind(other, p->by_kind[i].kind)) continue;
        fprintf(out, "%s%s (%.1f µs)", any ? ", " : label, p->by_kind[i].kind,
                p->by_kind[i].us.median);
        any = true;
    }
    if (any) fprintf(out, "\n");
}

/* Whether dispatch x ran as y: the same pipeline, constants and grid. */
static bool same_variant(const struct prof_dispatch *x, const struct prof_dispatch *y)
{
    return !strcmp(x->pipeline, y->pipeline) && x->n_spec == y->n_spec &&
           !memcmp(x->spec, y->spec, sizeof x->spec[0] * (size_t)x->n_spec) &&
           !memcmp(x->groups, y->groups, sizeof x->groups);
}

/* The dispatches that ran another kernel variant (pipeline, constants or grid) than the baseline's
 * at the same place (the same index, kind and op, both files naming their pipeline: files written
 * before the field have none); *first: the first of them, or -1. */
static int variant_changes(const struct profile *b, const struct profile *c, int *first)
{
    int n = 0;
    *first = -1;
    for (int i = 0; i < b->n_dispatches && i < c->n_dispatches; i++) {
        const struct prof_dispatch *x = &b->dispatches[i], *y = &c->dispatches[i];
        if (!x->pipeline[0] || !y->pipeline[0] || strcmp(x->kind, y->kind) || strcmp(x->op, y->op) ||
            same_variant(x, y))
            continue;
        if (*first < 0) *first = i;
        n++;
    }
    return n;
}

/* "name [c0,c1,...] grid XxYxZ" */
static void print_variant(FILE *out, const struct prof_dispatch *d)
{
    fprintf(out, "%s [", d->pipeline);
    for (int k = 0; k < d->n_spec; k++) fprintf(out, "%s%u", k ? "," : "", d->spec[k]);
    fprintf(out, "] grid %ux%ux%u", d->groups[0], d->groups[1], d->groups[2]);
}

/* A device that itself ran slower (its copy bandwidth, measured in each run, dropped by more than
 * the threshold: a shared machine, other clocks) slows every row alike, and no rule over one run's
 * reps tells that from the code: a SLOWER row whose slowdown the device's own explains, within the
 * threshold, is UNDECIDED instead (lavapipe on a loaded host: most false alarms, bench/37).
 * Returns the rows so marked among the first `deciding`. */
static int device_explains(struct cmp_row *rows, int n, int deciding, double bw_ratio, double threshold_pct)
{
    int marked = 0;
    if (!(bw_ratio < 1.0 - threshold_pct / 100.0)) return 0;
    for (int i = 0; i < n; i++) {
        struct cmp_row *r = &rows[i];
        if (r->verdict != ROW_SLOWER || !(r->base.v > 0)) continue;
        if (r->cur.v / r->base.v * bw_ratio - 1.0 > threshold_pct / 100.0) continue;
        r->verdict = ROW_UNDECIDED;
        r->reason = "slower, but no more than the device itself ran slower (its copy bandwidth)";
        r->reps_to_decide = 0;
        marked += i < deciding;
    }
    return marked;
}

static const struct cmp_row *first_undecided(const struct cmp_row *rows, int total)
{
    for (int i = 0; i < total; i++)
        if (rows[i].verdict == ROW_UNDECIDED) return &rows[i];
    return &rows[total];
}

/* Why a comparison is undecided and what decides it: more reps, a quiet device, or both. */
static const char *undecided_text(char *buf, size_t size, int n_undecided, int n_device, int reps_needed,
                                  double bw_change, const struct profile *base, const struct profile *cur)
{
    int n_reps = n_undecided - n_device, at = 0;
    buf[0] = 0;
    if (n_reps > 0)
        at = snprintf(buf, size,
                      "%d change(s) above the threshold that %d and %d reps cannot tell from noise: rerun both runs "
                      "with --reps %d",
                      n_reps, base->wall_us.n_reps, cur->wall_us.n_reps, reps_needed);
    if (n_device > 0 && at >= 0 && (size_t)at < size)
        snprintf(buf + at, size - (size_t)at,
                 "%s%d row(s) slower by no more than the device itself ran slower (copy bandwidth %+.0f%%): rerun both "
                 "on a quiet device",
                 at ? "; " : "", n_device, bw_change);
    return buf;
}

int compare_profiles(FILE *out, const struct profile *base, const struct profile *cur,
                     double threshold_pct, struct err *e)
{
    return compare_profiles_fmt(out, base, cur, threshold_pct, false, NULL, e);
}

int compare_profiles_fmt(FILE *out, const struct profile *base, const struct profile *cur,
                         double threshold_pct, bool markdown, const char *json_path, struct err *e)
{
    if (!(threshold_pct >= 0) || !isfinite(threshold_pct))
        return err_set(e, ST_USAGE, "--threshold %g: expected a percentage >= 0", threshold_pct);
    int rc = compare_identity(base, cur, true, e);
    if (rc) return rc;

    int cap = base->n_kinds + 3, n = 0;
    struct cmp_row *rows = calloc((size_t)cap, sizeof *rows);
    CHECK(rows);
    for (int i = 0; i < base->n_kinds; i++) {
        const struct prof_kind *ck = find_kind(cur, base->by_kind[i].kind);
        if (ck)
            rows[n++] = make_row(base->by_kind[i].kind, &base->by_kind[i].us, &ck->us,
                                 threshold_pct, false);
    }
    bool ts = base->device.has_timestamps;
    int total = n, kinds = n; /* rows [0, kinds) are the common kinds: they and the total decide */
    rows[n++] = make_row(ts ? "TOTAL (GPU busy)" : "TOTAL (wall; no timestamps)",
                         ts ? &base->busy_us : &base->wall_us, ts ? &cur->busy_us : &cur->wall_us,
                         threshold_pct, false);
    if (ts && base->head_us.n_reps > 0 && cur->head_us.n_reps > 0)
        rows[n++] = make_row("LM head", &base->head_us, &cur->head_us, threshold_pct, false);
    if (ts) {
        rows[n] = make_row("wall", &base->wall_us, &cur->wall_us, threshold_pct, true);
        rows[n++].reason = "host submit + wait, information only";
    }

    double gap_k = compare_gap_multiple(base->busy_us.n_reps ? base->busy_us.n_reps : base->wall_us.n_reps,
                                        cur->busy_us.n_reps ? cur->busy_us.n_reps : cur->wall_us.n_reps);
    if (markdown) {
        fprintf(out,
                "### compare: medians in µs/step\n\nSlower = more than %.1f%%, more than %.0f µs "
                "and beyond "
                "the noise (one-sided rank test over the reps, p < %g; where the reps are too few for "
                "it, every current rep above every base rep by that and by %.2g× the reps' spread); "
                "± = %.0f × the error of the difference of the medians, from the MADs of the reps.\n\n",
                threshold_pct, COMPARE_NOISE_US, COMPARE_ALPHA, gap_k, COMPARE_NOISE_K);
    } else {
        fprintf(out,
                "== compare: medians in µs/step, slower = more than %.1f%% and more than %.0f µs "
                "and beyond "
                "the noise (rank test over the reps, p < %g; where the reps are too few for it, every "
                "current rep above every base rep by that and by %.2g× the reps' spread; ± = %.0f × "
                "the error of the difference) ==\n",
                threshold_pct, COMPARE_NOISE_US, COMPARE_ALPHA, gap_k, COMPARE_NOISE_K);
    }
    if (strcmp(base->device.driver, cur->device.driver) != 0)
        fprintf(out, "WARNING: driver differs: base '%s', current '%s'\n", base->device.driver,
                cur->device.driver);
    /* another gemm path runs other matrix kernels (files before the field have none) */
    if (base->device.gemm_path[0] && cur->device.gemm_path[0] && strcmp(base->device.gemm_path, cur->device.gemm_path))
        fprintf(out, "WARNING: gemm path differs: base '%s', current '%s' (other matrix kernels)\n",
                base->device.gemm_path, cur->device.gemm_path);
    /* --tune overrides change which kernels run: the comparison stands, but says so */
    if (strcmp(base->tune, cur->tune) != 0)
        fprintf(out, "WARNING: tune differs: base '%s', current '%s' (--tune: other kernel choices)\n",
                base->tune[0] ? base->tune : "default", cur->tune[0] ? cur->tune : "default");
    if (strcmp(base->test_hooks, cur->test_hooks) != 0)
        fprintf(out, "WARNING: test hooks differ: base '%s', current '%s' (LFM2_TEST_*: a test run)\n",
                base->test_hooks[0] ? base->test_hooks : "none", cur->test_hooks[0] ? cur->test_hooks : "none");
    /* the runs' own copy-bandwidth measurement: a device that itself ran slower (a shared machine,
     * other clocks) slows every row alike, and no rule over one run's reps can tell that apart */
    double bw_change = base->device.copy_gbps > 0 && cur->device.copy_gbps > 0
                           ? 100.0 * (cur->device.copy_gbps / base->device.copy_gbps - 1.0)
                           : 0.0;
    if (fabs(bw_change) > threshold_pct)
        fprintf(out,
                "WARNING: the device's copy bandwidth differs by %+.0f%% between the runs (base "
                "%.3g GB/s, "
                "current %.3g GB/s): the device itself ran at another speed, so a change below may "
                "be the "
                "device's, not the code's\n",
                bw_change, base->device.copy_gbps, cur->device.copy_gbps);
    if (base->timing != cur->timing)
        fprintf(out,
                "WARNING: timing differs: base %s, current %s (the timestamps perturb the figures "
                "differently)\n",
                timing_mode_name(base->timing), timing_mode_name(cur->timing));
    /* the probe's plan changed shape: fewer stages (a fusion) or more explain a narrow step's change */
    const struct gap_probe *gb = &base->gap_probe, *gc = &cur->gap_probe;
    if (gb->dispatches > 0 && gc->dispatches > 0 && (gb->dispatches != gc->dispatches || gb->barriers != gc->barriers))
        fprintf(out, "NOTE: the plan differs: base %d dispatches in %d stages, current %d in %d\n", gb->dispatches,
                gb->barriers, gc->dispatches, gc->barriers);
    /* a kernel that changed its variant (a tile rule, a split count) explains its row's change */
    int first, n_var = variant_changes(base, cur, &first);
    if (n_var > 0) {
        const struct prof_dispatch *x = &base->dispatches[first], *y = &cur->dispatches[first];
        fprintf(out, "NOTE: %d dispatch%s ran another kernel variant than the baseline (first: [%d] %s %s: ", n_var,
                n_var == 1 ? "" : "es", first, x->kind, x->op);
        print_variant(out, x);
        fprintf(out, " -> ");
        print_variant(out, y);
        fprintf(out, ")\n");
    }
    int n_device = bw_change < 0 ? device_explains(rows, n, total + 1, 1.0 + bw_change / 100.0, threshold_pct) : 0;
    if (markdown) {
        fprintf(out, "\n| kind | base µs | current µs | delta µs | ± µs | delta %% | verdict |\n");
        fprintf(out, "|---|---:|---:|---:|---:|---:|---|\n");
    }
    /* "µ" is two bytes: the µs headers get one more byte of width to stay aligned */
    if (!markdown)
        fprintf(out, "  %-32s %12s %12s %11s %9s %9s\n", "kind", "base µs", "current µs",
                "delta µs", "± µs", "delta %");
    int n_slower = 0, n_noise = 0, n_undecided = 0, reps_needed = 0;
    for (int i = 0; i < n; i++) {
        print_row(out, &rows[i], markdown);
        if (i < kinds && rows[i].verdict == ROW_SLOWER) n_slower++;
        n_noise += rows[i].verdict == ROW_NOISE;
        if (i <= total && rows[i].verdict == ROW_UNDECIDED) { /* the rows that decide */
            n_undecided++;
            reps_needed = MAX(reps_needed, rows[i].reps_to_decide);
        }
    }
    if (markdown) fprintf(out, "\n");
    list_only_in(out, "only in base: ", base, cur);
    list_only_in(out, "only in current: ", cur, base);

    bool total_slower = rows[total].verdict == ROW_SLOWER;
    bool regressed = total_slower || n_slower > 0;
    if (regressed)
        fprintf(
            out,
            "REGRESSION: %s%d kind(s) slower than the baseline beyond threshold, floor and noise\n",
            total_slower ? "total slower, " : "", n_slower);
    else if (n_undecided) {
        char why[512];
        fprintf(out, "UNDECIDED: %s\n",
                undecided_text(why, sizeof why, n_undecided, n_device, reps_needed, bw_change, base, cur));
    }
    else if (n_noise)
        fprintf(out,
                "no regression: %d change(s) above the threshold are within noise (rerun with more "
                "--reps to "
                "tell)\n",
                n_noise);
    else
        fprintf(out, "no regression\n");

    int st = regressed ? ST_REGRESSION : n_undecided ? ST_UNDECIDED : ST_OK;
    if (json_path) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "base", base->args);
        cJSON_AddStringToObject(root, "current", cur->args);
        cJSON_AddItemToObject(root, "threshold_pct", report_json_number(threshold_pct));
        cJSON_AddItemToObject(root, "noise_floor_us", report_json_number(COMPARE_NOISE_US));
        cJSON *arr = cJSON_AddArrayToObject(root, "rows");
        for (int i = 0; i < n; i++)
            cJSON_AddItemToArray(arr, row_json(&rows[i]));
        cJSON_AddBoolToObject(root, "regression", regressed);
        cJSON_AddBoolToObject(root, "undecided", !regressed && n_undecided > 0);
        cJSON_AddNumberToObject(root, "reps_to_decide", !regressed && n_undecided ? reps_needed : 0);
        cJSON_AddItemToObject(root, "variant_changes", report_json_number(n_var));
        int wst = report_json_save(json_path, "--json", root, true, e);
        if (wst) st = wst;
    }
    if (st == ST_REGRESSION) { /* the one line main prints: the worst slower kind, else the total */
        const struct cmp_row *w = total_slower ? &rows[total] : NULL;
        for (int i = 0; i < kinds; i++)
            if (rows[i].verdict == ROW_SLOWER && (!w || w == &rows[total] || rows[i].delta.v > w->delta.v))
                w = &rows[i];
        char pct[32] = "n/a";
        if (isfinite(w->pct)) snprintf(pct, sizeof pct, "%+.1f%%", w->pct);
        err_set(e, ST_REGRESSION, "regression: %s %s (median %.1f -> %.1f µs), threshold %g%%%s", w->name, pct,
                w->base.v, w->cur.v, threshold_pct,
                n_slower + total_slower > 1 ? " (more slower rows in the table above)" : "");
    }
    if (st == ST_UNDECIDED) {
        char why[512];
        undecided_text(why, sizeof why, n_undecided, n_device, reps_needed, bw_change, base, cur);
        const struct cmp_row *u = first_undecided(rows, total);
        err_set(e, ST_UNDECIDED, "undecided (first: %s %+.1f µs, threshold %g%%): %s", u->name, u->delta.v,
                threshold_pct, why);
    }
    free(rows);
    return st;
}
