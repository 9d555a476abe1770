/* test_stages.c - --stages end to end on lavapipe, every family: an even split (--stages 2) and a
 * given split of each tiny fixture write a pipeline file whose every stage is the step a separate
 * `--layers a:b` run of the same flags profiles (same dispatches: kind, layer, op, groups, weight
 * bytes; same shard and shape; the head on the last stage only); the balanced split is the optimum
 * of the file's layer costs with its fixed parts by role (the largest step) by brute force, its
 * predicted steps are those sums, and its stages are profiled on exactly its ranges.
 * Timings are never compared (they are lavapipe's). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"
#include "testutil.h"

static char out[1 << 20];
static const char *shape = "--reps 2 --cols 2 --pos 4 --logits";

static int run(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s", getenv("LFM2_BIN"), args);
    int rc = t_run(cmd, out, sizeof out);
    if (rc) fprintf(stderr, "%s\n-> exit %d\n%s\n", cmd, rc, out);
    return rc;
}

/* The two profiles are the same step: same shard, shape and dispatch list. */
static void same_step(const struct profile *s, const struct profile *l, const char *what)
{
    T_CHECK(s->shard.a == l->shard.a && s->shard.b == l->shard.b, "%s: shard %d:%d vs %d:%d", what, s->shard.a,
            s->shard.b, l->shard.a, l->shard.b);
    T_CHECK(!strcmp(s->shape.plan, l->shape.plan) && s->shape.cols == l->shape.cols && s->shape.pos == l->shape.pos &&
                s->shape.slots == l->shape.slots && s->shape.logits == l->shape.logits &&
                s->shape.logit_cols == l->shape.logit_cols, "%s: shape differs", what);
    T_CHECK(s->n_dispatches == l->n_dispatches, "%s: %d dispatches vs %d", what, s->n_dispatches, l->n_dispatches);
    for (int i = 0; i < s->n_dispatches && i < l->n_dispatches; i++) {
        const struct prof_dispatch *a = &s->dispatches[i], *b = &l->dispatches[i];
        T_CHECK(!strcmp(a->kind, b->kind) && !strcmp(a->op, b->op) && a->layer == b->layer &&
                    !memcmp(a->groups, b->groups, sizeof a->groups) && a->bytes == b->bytes,
                "%s: dispatch %d: %s %s layer %d vs %s %s layer %d", what, i, a->kind, a->op, a->layer, b->kind, b->op,
                b->layer);
    }
    T_CHECK(s->gap_probe.dispatches == l->gap_probe.dispatches && s->gap_probe.barriers == l->gap_probe.barriers,
            "%s: the walls' plan differs", what);
}

static bool has_head(const struct profile *p)
{
    for (int i = 0; i < p->n_dispatches; i++)
        if (prof_kind_is_head(p->dispatches[i].kind)) return true;
    return false;
}

/* The fixed part of stage i of k by role: fixed[0] first, [1] middle, [2] last. */
static double role_fixed(const double *fixed, int k, int i)
{
    return fixed[i == k - 1 ? 2 : i == 0 ? 0 : 1];
}

/* The smallest maximum step (part sum + its role's fixed part) over every split of cost[at..n) into
 * the stages idx..k-1. */
static double brute(const double *cost, int at, int n, int idx, int k, const double *fixed)
{
    double s = 0, best = INFINITY;
    if (idx == k - 1) {
        for (int l = at; l < n; l++) s += cost[l];
        return s + role_fixed(fixed, k, idx);
    }
    for (int end = at + 1; end <= n - (k - 1 - idx); end++) {
        s += cost[end - 1];
        best = fmin(best, fmax(s + role_fixed(fixed, k, idx), brute(cost, end, n, idx + 1, k, fixed)));
    }
    return best;
}

/* The split's largest step as the balanced split predicts it. */
static double split_steps(const double *cost, int k, const int *bounds, const double *fixed)
{
    double worst = 0;
    for (int i = 0; i < k; i++) {
        double s = role_fixed(fixed, k, i);
        for (int l = bounds[i]; l < bounds[i + 1]; l++) s += cost[l];
        worst = fmax(worst, s);
    }
    return worst;
}

static void check_split(const char *model, const char *stages, const char *dir, int n_layers)
{
    char args[2048], pj[512], lj[512], what[256];
    snprintf(pj, sizeof pj, "%s/pipeline.json", dir);
    snprintf(args, sizeof args, "--model %s --stages %s %s --json %s", model, stages, shape, pj);
    if (run(args)) {
        T_CHECK(0, "--stages %s on %s ran", stages, model);
        return;
    }
    T_CHECK(strstr(out, "== pipeline: ") && strstr(out, "bottleneck  stage") && strstr(out, "bubble") &&
                strstr(out, "hand-off") && strstr(out, "-- layer costs") && strstr(out, "fixed parts (step − marginal") &&
                strstr(out, "predicted slowest step"), "%s --stages %s: the pipeline report", model, stages);
    struct pipeline pl;
    struct err e;
    if (pipeline_json_read(pj, &pl, &e)) {
        T_CHECK(0, "%s", e.msg);
        return;
    }
    T_CHECK(pl.n_layers == n_layers && pl.given.bounds[pl.given.k] == n_layers, "%s: %d layers", model, pl.n_layers);
    for (int i = 0; i < pl.given.k; i++) {
        const struct pipeline_stage *s = &pl.given.st[i];
        snprintf(lj, sizeof lj, "%s/layers.json", dir);
        snprintf(args, sizeof args, "--model %s --layers %d:%d %s --gap-probe --json %s", model, s->a, s->b, shape, lj);
        struct profile lp;
        if (run(args) || report_json_read(lj, &lp, &e)) {
            T_CHECK(0, "--layers %d:%d on %s", s->a, s->b, model);
            continue;
        }
        snprintf(what, sizeof what, "%s --stages %s stage %d (%d:%d)", model, stages, i, s->a, s->b);
        same_step(&s->p, &lp, what);
        T_CHECK(has_head(&s->p) == (s->b == n_layers), "%s: the head on the last stage only", what);
        profile_free(&lp);
    }
    /* the balanced split: the optimum of the file's layer costs with its fixed parts (each stage's
     * step − marginal of the split asked for, by role), its stages on its ranges; every stage's
     * predicted step is its layers' costs + its role's fixed part */
    cJSON *j = t_json_file(pj);
    const cJSON *lc = j ? t_json_at(j, "pipeline.layer_costs") : NULL, *bb = j ? t_json_at(j, "pipeline.balanced") : NULL;
    const cJSON *fx = j ? t_json_at(j, "pipeline.fixed_us") : NULL;
    T_CHECK(cJSON_IsArray(lc) && cJSON_GetArraySize(lc) == n_layers && cJSON_IsObject(bb), "%s: layer costs", model);
    T_CHECK(cJSON_IsObject(fx) && cJSON_IsNumber(t_json_at(fx, "first")) && cJSON_IsNumber(t_json_at(fx, "last")) &&
                cJSON_IsNumber(t_json_at(fx, "middle")) == (pl.given.k >= 3), "%s: fixed parts by role", model);
    if (cJSON_IsArray(lc) && cJSON_IsObject(bb) && cJSON_IsObject(fx)) {
        double cost[64], raw[64], fixed[3] = {cJSON_GetNumberValue(t_json_at(fx, "first")),
                                               cJSON_IsNumber(t_json_at(fx, "middle"))
                                                   ? cJSON_GetNumberValue(t_json_at(fx, "middle")) : 0,
                                               cJSON_GetNumberValue(t_json_at(fx, "last"))};
        int l = 0, k = (int)cJSON_GetNumberValue(t_json_at(bb, "k")), bounds[65];
        const cJSON *it;
        T_CHECK(fixed[0] >= 0 && fixed[1] >= 0 && fixed[2] >= 0, "%s: fixed parts at least 0", model);
        cJSON_ArrayForEach(it, lc)
        {
            raw[l] = cJSON_GetNumberValue(t_json_at(it, "v"));
            cost[l] = fmax(0, raw[l]);
            l++;
        }
        l = 0;
        cJSON_ArrayForEach(it, t_json_at(bb, "bounds")) bounds[l++] = (int)cJSON_GetNumberValue(it);
        T_CHECK(k == pl.given.k && l == k + 1, "%s: balanced k %d", model, k);
        double want = brute(cost, 0, n_layers, 0, k, fixed), got = split_steps(cost, k, bounds, fixed);
        T_CHECK(fabs(got - want) <= 1e-9 * (1 + want), "%s: balanced split max step %g, brute force %g", model, got,
                want);
        int i = 0;
        cJSON_ArrayForEach(it, t_json_at(bb, "stages"))
        {
            double sum = role_fixed(fixed, k, i);
            for (int m = bounds[i]; m < bounds[i + 1]; m++) sum += raw[m];
            T_CHECK(fabs(cJSON_GetNumberValue(t_json_at(it, "fixed_us")) - role_fixed(fixed, k, i)) < 1e-6 &&
                        fabs(cJSON_GetNumberValue(t_json_at(it, "predicted_us")) - sum) <= 1e-6 * (1 + sum),
                    "%s: balanced stage %d predicted step %g, want %g", model, i,
                    cJSON_GetNumberValue(t_json_at(it, "predicted_us")), sum);
            i++;
        }
        const cJSON *bs = t_json_at(j, "balanced_stages");
        bool is_given = cJSON_IsTrue(t_json_at(j, "pipeline.balanced_is_given"));
        T_CHECK(cJSON_GetArraySize(bs) == (is_given ? 0 : k), "%s: balanced stages profiled unless the same split",
                model);
        i = 0;
        cJSON_ArrayForEach(it, bs)
        {
            T_CHECK(cJSON_GetNumberValue(t_json_at(it, "shard.a")) == bounds[i] &&
                        cJSON_GetNumberValue(t_json_at(it, "shard.b")) == bounds[i + 1],
                    "%s: balanced stage %d on its range", model, i);
            i++;
        }
    }
    cJSON_Delete(j);
    /* a pipeline file compared with itself: no regression */
    snprintf(args, sizeof args, "--compare %s --current %s", pj, pj);
    T_CHECK(run(args) == 0 && strstr(out, "== stage 0"), "%s: pipeline compared with itself", model);
    pipeline_free(&pl);
}

int main(int argc, char **argv)
{
    const char *fx = argc > 1 ? argv[1] : "tests/fixtures";
    const char *dir = t_tmpdir();
    struct {
        const char *name, *given;
        int n;
    } m[] = {{"lfm2-tiny", "0:1,1:4,4:6", 6}, {"qwen35-tiny", "0:3,3:4", 4}, {"glm-ocr-tiny", "0:1,1:3", 3}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        char model[1024];
        snprintf(model, sizeof model, "%s/%s", fx, m[i].name);
        check_split(model, "2", dir, m[i].n);
        check_split(model, m[i].given, dir, m[i].n);
    }
    return t_finish();
}
