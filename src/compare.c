/* compare.c - a run against a saved baseline (DESIGN.md "JSON and compare").
 *
 * Statistic: the median of each timing (robust to one slow rep). Two runs are comparable only
 * when they are the same experiment: same model (family, dims, dtype), shard, shape and device;
 * a different driver version is allowed with a warning, since checking a driver upgrade is one of
 * the reasons to compare. A slowdown counts when it is above the threshold in percent AND above
 * COMPARE_NOISE_US per step, so tiny kernels jittering by a fraction of a µs never fail CI. */
#include "profile.h"

#include <math.h>
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

static int check_identity(const struct profile *b, const struct profile *c, struct err *e)
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
    DIFF_STR("device name", b->device.name, c->device.name);
    if (b->device.has_timestamps != c->device.has_timestamps)
        return err_set(e, ST_USAGE, "cannot compare: device timestamps differ: base %s, current %s",
                       b->device.has_timestamps ? "yes" : "no",
                       c->device.has_timestamps ? "yes" : "no");
    return ST_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Deltas */

static const struct prof_kind *find_kind(const struct profile *p, const char *kind)
{
    for (int i = 0; i < p->n_kinds; i++)
        if (strcmp(p->by_kind[i].kind, kind) == 0) return &p->by_kind[i];
    return NULL;
}

/* Prints one row and says whether it is a regression under the threshold and the noise floor. */
static bool delta_row(FILE *out, const char *name, double base, double cur, double threshold_pct)
{
    double d = cur - base;
    bool slower = d > COMPARE_NOISE_US && (base <= 0 || 100.0 * d / base > threshold_pct);
    fprintf(out, "  %-32s %11.1f %11.1f %+10.1f ", name, base, cur, d);
    if (base > 0)
        fprintf(out, "%+8.1f%%", 100.0 * d / base);
    else
        fprintf(out, "%9s", "n/a");
    fprintf(out, "%s\n", slower ? "  SLOWER" : "");
    return slower;
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

int compare_profiles(FILE *out, const struct profile *base, const struct profile *cur,
                     double threshold_pct, struct err *e)
{
    if (!(threshold_pct >= 0) || !isfinite(threshold_pct))
        return err_set(e, ST_USAGE, "--threshold %g: expected a percentage >= 0", threshold_pct);
    int rc = check_identity(base, cur, e);
    if (rc) return rc;

    fprintf(out,
            "== compare: medians in µs/step, slower = more than %.1f%% and more than %.0f µs ==\n",
            threshold_pct, COMPARE_NOISE_US);
    if (strcmp(base->device.driver, cur->device.driver) != 0)
        fprintf(out, "WARNING: driver differs: base '%s', current '%s'\n", base->device.driver,
                cur->device.driver);
    /* "µ" is two bytes: the µs headers get one more byte of width to stay aligned */
    fprintf(out, "  %-32s %12s %12s %11s %9s\n", "kind", "base µs", "current µs", "delta µs",
            "delta %");

    bool regressed = false;
    int n_slower = 0;
    for (int i = 0; i < base->n_kinds; i++) {
        const struct prof_kind *bk = &base->by_kind[i];
        const struct prof_kind *ck = find_kind(cur, bk->kind);
        if (!ck) continue;
        if (delta_row(out, bk->kind, bk->us.median, ck->us.median, threshold_pct)) n_slower++;
    }
    bool ts = base->device.has_timestamps;
    const char *total_name = ts ? "TOTAL (GPU busy)" : "TOTAL (wall; no timestamps)";
    double tb = ts ? base->busy_us.median : base->wall_us.median;
    double tc = ts ? cur->busy_us.median : cur->wall_us.median;
    bool total_slower = delta_row(out, total_name, tb, tc, threshold_pct);
    if (ts && base->head_us.n_reps > 0 && cur->head_us.n_reps > 0) {
        double d = cur->head_us.median - base->head_us.median;
        fprintf(out, "  %-32s %11.1f %11.1f %+10.1f  (beside the total, its kinds are above)\n",
                "LM head", base->head_us.median, cur->head_us.median, d);
    }
    fprintf(out, "  %-32s %11.1f %11.1f %+10.1f  (host submit + wait, information only)\n", "wall",
            base->wall_us.median, cur->wall_us.median, cur->wall_us.median - base->wall_us.median);
    list_only_in(out, "only in base: ", base, cur);
    list_only_in(out, "only in current: ", cur, base);

    regressed = total_slower || n_slower > 0;
    if (regressed)
        fprintf(out, "REGRESSION: %s%d kind(s) slower than the baseline\n",
                total_slower ? "total slower, " : "", n_slower);
    else
        fprintf(out, "no regression\n");
    return regressed ? ST_REGRESSION : ST_OK;
}
