/* test_report_pipeline.c - --stages arithmetic without a GPU (pipeline.h): the balanced partition
 * against a brute-force search over every contiguous split, marginals alone and steps (each stage
 * with its fixed part by role), the fixed parts from a split's runs, the --stages parser and tiling checks,
 * the pipeline summary, and the pipeline JSON read back and compared stage by stage. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"
#include "synth_profile.h"
#include "testutil.h"

/* The smallest maximum over every split of cost[at..n) into k contiguous non-empty parts. */
static double brute(const double *cost, int at, int n, int k)
{
    if (k == 1) {
        double s = 0;
        for (int l = at; l < n; l++) s += cost[l];
        return s;
    }
    double best = INFINITY, first = 0;
    for (int end = at + 1; end <= n - (k - 1); end++) {
        first += cost[end - 1];
        double rest = brute(cost, end, n, k - 1);
        best = fmin(best, fmax(first, rest));
    }
    return best;
}

static void test_partition_brute_force(void)
{
    struct t_rng r;
    t_rng_seed(&r, 40);
    int checked = 0;
    for (int trial = 0; trial < 60; trial++)
        for (int n = 1; n <= 10; n++)
            for (int k = 1; k <= 5 && k <= n; k++) {
                double cost[10];
                for (int l = 0; l < n; l++)
                    cost[l] = trial % 3 == 0 ? (double)(1 + t_rng_u32(&r) % 4) /* ties */
                                             : 100.0 * t_rng_uniform(&r) * (1 + 9 * (l % 3 == 1));
                int bounds[6];
                double got = pipeline_partition(cost, n, k, bounds);
                double want = brute(cost, 0, n, k);
                bool tiles = bounds[0] == 0 && bounds[k] == n;
                for (int i = 0; i < k; i++) tiles = tiles && bounds[i] < bounds[i + 1];
                T_CHECK(tiles, "n %d k %d: bounds do not tile 0..n", n, k);
                T_CHECK(fabs(got - want) <= 1e-9 * (1 + want), "n %d k %d: partition max %g, brute force %g", n, k,
                        got, want);
                T_CHECK(fabs(pipeline_split_max(cost, k, bounds) - want) <= 1e-9 * (1 + want),
                        "n %d k %d: the returned split's max %g is not the optimum %g", n, k,
                        pipeline_split_max(cost, k, bounds), want);
                checked++;
            }
    T_CHECK(checked == 60 * 40, "every (n, k) checked: %d", checked);
    /* a heavy last layer (the head) stands alone */
    double heavy[5] = {1, 1, 1, 1, 10};
    int b[3];
    T_CHECK(pipeline_partition(heavy, 5, 2, b) == 10 && b[1] == 4, "heavy last layer: split at %d", b[1]);
}

/* The fixed part of stage i of k by role, as the brief states it (independent of pipeline.c). */
static double role_fixed(const struct pipeline_fixed *f, int k, int i)
{
    return i == k - 1 ? f->last : i == 0 ? f->first : f->middle;
}

/* The smallest maximum step (part sum + its role's fixed part) over every split of cost[at..n) into
 * the stages idx..k-1. */
static double brute_steps(const double *cost, int at, int n, int idx, int k, const struct pipeline_fixed *f)
{
    double first = 0, best = INFINITY;
    if (idx == k - 1) {
        for (int l = at; l < n; l++) first += cost[l];
        return first + role_fixed(f, k, idx);
    }
    for (int end = at + 1; end <= n - (k - 1 - idx); end++) {
        first += cost[end - 1];
        best = fmin(best, fmax(first + role_fixed(f, k, idx), brute_steps(cost, end, n, idx + 1, k, f)));
    }
    return best;
}

/* The largest step of a split: each part's sum + its role's fixed part. */
static double split_steps_max(const double *cost, int k, const int *bounds, const struct pipeline_fixed *f)
{
    double worst = -INFINITY;
    for (int i = 0; i < k; i++) {
        double s = role_fixed(f, k, i);
        for (int l = bounds[i]; l < bounds[i + 1]; l++) s += cost[l];
        worst = fmax(worst, s);
    }
    return worst;
}

/* The balanced split on steps against a brute force over every split, fixed parts of every size
 * (the last's up to 20 layers' worth, as a logits download can be), K = 1 and 2 included. */
static void test_balance_brute_force(void)
{
    struct t_rng r;
    t_rng_seed(&r, 41);
    int checked = 0;
    for (int trial = 0; trial < 60; trial++)
        for (int n = 1; n <= 9; n++)
            for (int k = 1; k <= 5 && k <= n; k++) {
                double cost[9];
                for (int l = 0; l < n; l++) cost[l] = 100.0 * t_rng_uniform(&r) * (1 + 4 * (l % 3 == 1));
                struct pipeline_fixed f = {.known = true, .k = k};
                f.first = 200 * t_rng_uniform(&r);
                f.middle = trial % 2 ? 200 * t_rng_uniform(&r) : 0;
                f.last = 2000 * t_rng_uniform(&r);
                if (k == 1) f.first = f.last;
                int bounds[6];
                double got = pipeline_balance(cost, n, k, &f, bounds);
                double want = brute_steps(cost, 0, n, 0, k, &f);
                bool tiles = bounds[0] == 0 && bounds[k] == n;
                for (int i = 0; i < k; i++) tiles = tiles && bounds[i] < bounds[i + 1];
                T_CHECK(tiles, "n %d k %d: bounds do not tile 0..n", n, k);
                T_CHECK(fabs(got - want) <= 1e-9 * (1 + want), "n %d k %d: balance max step %g, brute force %g", n,
                        k, got, want);
                T_CHECK(fabs(split_steps_max(cost, k, bounds, &f) - want) <= 1e-9 * (1 + want),
                        "n %d k %d: the returned split's max step %g is not the optimum %g", n, k,
                        split_steps_max(cost, k, bounds, &f), want);
                checked++;
            }
    T_CHECK(checked == 60 * 35, "every (n, k) checked: %d", checked);
}

/* A heavy last-stage fixed part (the logits download) moves the boundary one layer earlier than
 * balancing the marginals alone does; fixed parts unknown balance the marginals. */
static void test_balance_heavy_last(void)
{
    double cost[6] = {100, 100, 100, 100, 100, 100};
    struct pipeline_fixed none = {0}, f = {.known = true, .k = 2, .first = 80, .last = 230};
    int b[3];
    T_CHECK(pipeline_balance(cost, 6, 2, &none, b) == 300 && b[1] == 3, "marginals alone: 0:3,3:6 (got %d)", b[1]);
    /* 0:3,3:6 steps 380 and 530; 0:4,4:6 480 and 430 */
    T_CHECK(pipeline_balance(cost, 6, 2, &f, b) == 480 && b[1] == 4, "heavy last: 0:4,4:6 (got %d)", b[1]);
    /* K = 4 (first 80, middles 80, last 230): the last stage one layer shorter than the marginals put it */
    double c8[8] = {100, 100, 100, 100, 100, 100, 100, 100};
    struct pipeline_fixed f4 = {.known = true, .k = 4, .first = 80, .middle = 80, .last = 230};
    int b4[5];
    pipeline_balance(c8, 8, 4, &none, b4);
    T_CHECK(b4[3] == 6, "marginals alone: the last stage 6:8 (got %d:8)", b4[3]);
    T_CHECK(pipeline_balance(c8, 8, 4, &f4, b4) == 380 && b4[3] == 7, "heavy last K=4: the last stage 7:8 (got %d:8)",
            b4[3]);
    /* K = 1: one stage, its sum and its fixed part */
    struct pipeline_fixed f1 = {.known = true, .k = 1, .first = 50, .last = 50};
    T_CHECK(pipeline_balance(cost, 6, 1, &f1, b) == 650 && b[0] == 0 && b[1] == 6, "K=1: 600 + 50");
}

/* The fixed parts from a split's stages: step − marginal, at least 0, the middles' median. */
static void test_fixed_from(void)
{
    struct pipeline pl = {0};
    struct pipeline_split *s = &pl.given;
    double step[5] = {180, 170, 150, 190, 3300}, marg[5] = {100, 90, 100, 95, 1900};
    s->k = 5;
    for (int i = 0; i < 5; i++) {
        s->st[i].p.gap_probe.ran = true;
        s->st[i].step_us = est_exact(step[i]);
        s->st[i].marginal_us = est_exact(marg[i]);
    }
    pipeline_fixed_from(&pl, s);
    T_CHECK(pl.fixed.known && pl.fixed.k == 5 && pl.fixed.first == 80 && pl.fixed.last == 1400 &&
                pl.fixed.middle == 80, "fixed first %g middle %g last %g, want 80 80 1400", pl.fixed.first,
            pl.fixed.middle, pl.fixed.last);
    s->st[0].step_us = est_exact(95); /* noise: the step under its marginal */
    s->st[2].step_us = est_exact(20);
    pipeline_fixed_from(&pl, s);
    T_CHECK(pl.fixed.first == 0 && pl.fixed.middle == 80, "negative fixed parts clamp to 0: first %g middle %g",
            pl.fixed.first, pl.fixed.middle); /* middles 80, 0, 95: median 80 */
    s->k = 2;
    s->st[1] = s->st[4];
    pipeline_fixed_from(&pl, s);
    T_CHECK(pl.fixed.known && pl.fixed.first == 0 && pl.fixed.middle == 0 && pl.fixed.last == 1400, "K=2");
    s->k = 1;
    s->st[0].step_us = est_exact(150);
    pipeline_fixed_from(&pl, s);
    T_CHECK(pl.fixed.first == 50 && pl.fixed.last == 50 && pipeline_stage_fixed(&pl.fixed, 1, 0) == 50, "K=1");
    s->st[0].p.gap_probe.ran = false;
    pipeline_fixed_from(&pl, s);
    T_CHECK(!pl.fixed.known && pipeline_stage_fixed(&pl.fixed, 1, 0) == 0, "no gap probe: not known");
}

static void test_spec(void)
{
    struct pipeline_spec sp;
    struct err e;
    int b[PIPELINE_MAX_STAGES + 1];
    T_CHECK(!pipeline_spec_parse("2", &sp, &e) && !sp.given && sp.k == 2, "--stages 2");
    T_CHECK(!pipeline_spec_bounds(&sp, 6, b, &e) && b[0] == 0 && b[1] == 3 && b[2] == 6, "even 6/2");
    T_CHECK(!pipeline_spec_parse("4", &sp, &e) && !pipeline_spec_bounds(&sp, 6, b, &e), "--stages 4");
    T_CHECK(b[1] == 2 && b[2] == 4 && b[3] == 5 && b[4] == 6, "even 6/4: 2,2,1,1");
    T_CHECK(!pipeline_spec_parse("7", &sp, &e) && pipeline_spec_bounds(&sp, 6, b, &e) == ST_USAGE &&
                strstr(e.msg, "more stages than"), "7 stages of 6 layers: %s", e.msg);
    T_CHECK(!pipeline_spec_parse("0:2,2:6", &sp, &e) && sp.given && sp.k == 2, "given split");
    T_CHECK(!pipeline_spec_bounds(&sp, 6, b, &e) && b[1] == 2 && b[2] == 6, "given bounds");
    struct {
        const char *v, *why;
        bool parse_fails;
    } bad[] = {
        {"0", "stage count", true},         {"65", "stage count", true},     {"x", "stage count", true},
        {"0:3,x", "expected K or ranges", true}, {"3:3", "empty", true},  {"0:3,", "expected K or ranges", true},
        {"0:3,4:6", "gap", false},          {"0:4,3:6", "overlap", false}, {"1:6", "starts at layer 1", false},
        {"0:3,3:5", "ends at layer 5", false}, {"0:3,3:7", "ends at layer 7", false},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int st = pipeline_spec_parse(bad[i].v, &sp, &e);
        if (!bad[i].parse_fails) {
            T_CHECK(st == ST_OK, "%s parses", bad[i].v);
            st = pipeline_spec_bounds(&sp, 6, b, &e);
        }
        T_CHECK(st == ST_USAGE && strstr(e.msg, bad[i].why), "--stages %s: %d '%s' (want '%s')", bad[i].v, st, e.msg,
                bad[i].why);
    }
}

/* A two-stage pipeline of synthetic profiles (layers 0:1 and 1:16), stage 1 slowed by `slow`. */
static void synth_pipeline(struct pipeline *pl, double slow)
{
    memset(pl, 0, sizeof *pl);
    pl->n_layers = 16;
    pl->hidden = SYNTH_HIDDEN;
    pl->cols = 4;
    pl->handoff_bytes = 4ull * SYNTH_HIDDEN * 4;
    pl->d2h_gbps = 25;
    pl->handoff_us = pl->handoff_bytes / 25e3;
    struct pipeline_split *s = &pl->given;
    snprintf(s->how, sizeof s->how, "given");
    s->k = 2;
    s->bounds[0] = 0;
    s->bounds[1] = 1;
    s->bounds[2] = 16;
    for (int i = 0; i < 2; i++) {
        synth_profile(&s->st[i].p, 500 + i, 10);
        if (i == 1 && slow != 1) synth_adjust_kind(&s->st[i].p, "matmul.bf16", slow, 0);
        s->st[i].p.shard.a = s->st[i].a = s->bounds[i];
        s->st[i].p.shard.b = s->st[i].b = s->bounds[i + 1];
        pipeline_stage_times(&s->st[i]);
    }
    pipeline_summarize(pl, s);
}

static void test_summary(void)
{
    struct pipeline pl = {0};
    struct pipeline_split *s = &pl.given;
    pl.cols = 10;
    s->k = 3;
    double t[3] = {100, 200, 50};
    for (int i = 0; i < 3; i++) s->st[i].step_us = est_exact(t[i]);
    pipeline_summarize(&pl, s);
    T_CHECK(s->bottleneck == 1 && s->max_us == 200 && s->sum_us == 350, "bottleneck %d", s->bottleneck);
    T_CHECK(fabs(s->tok_s_bound - 10e6 / 200) < 1e-6, "bound %g", s->tok_s_bound);
    T_CHECK(fabs(s->tok_s_ideal - 10e6 / (350.0 / 3)) < 1e-6, "ideal %g", s->tok_s_ideal);
    T_CHECK(fabs(s->bubble - (1 - 350.0 / 600)) < 1e-12, "bubble %g", s->bubble);
    pl.layer_cost = calloc(4, sizeof *pl.layer_cost);
    pl.n_layers = 4;
    for (int l = 0; l < 4; l++) pl.layer_cost[l] = est_exact(l + 1);
    s->k = 2;
    s->st[0].a = 0, s->st[0].b = 3, s->st[1].a = 3, s->st[1].b = 4;
    pipeline_summarize(&pl, s);
    T_CHECK(s->st[0].predicted_us == 6 && s->st[1].predicted_us == 4 && s->predicted_max_us == 6, "predictions");
    /* with fixed parts: the predicted step is the layers' sum + the role's part */
    pl.fixed = (struct pipeline_fixed){.known = true, .k = 2, .first = 1, .last = 5};
    pipeline_summarize(&pl, s);
    T_CHECK(s->st[0].fixed_us == 1 && s->st[1].fixed_us == 5 && s->st[0].predicted_us == 7 &&
                s->st[1].predicted_us == 9 && s->predicted_max_us == 9, "predicted steps %g %g",
            s->st[0].predicted_us, s->st[1].predicted_us);
    free(pl.layer_cost);
}

static void test_json_compare(void)
{
    const char *dir = t_tmpdir();
    char a[512], b[512], c[512];
    snprintf(a, sizeof a, "%s/base.json", dir);
    snprintf(b, sizeof b, "%s/same.json", dir);
    snprintf(c, sizeof c, "%s/slow.json", dir);
    struct pipeline base, slow, ra, rb, rc;
    struct err e;
    synth_pipeline(&base, 1);
    synth_pipeline(&slow, 1.5);
    T_CHECK(!pipeline_json_write(a, &base, &e) && !pipeline_json_write(b, &base, &e) &&
                !pipeline_json_write(c, &slow, &e), "write: %s", e.msg);
    T_CHECK(pipeline_json_sniff(a), "a pipeline file is sniffed as one");
    T_CHECK(!pipeline_json_read(a, &ra, &e), "read back: %s", e.msg);
    T_CHECK(ra.given.k == 2 && ra.given.bounds[1] == 1 && ra.given.st[1].p.n_dispatches == SYNTH_N, "stages back");
    T_CHECK(fabs(ra.given.max_us - base.given.max_us) < 1e-9, "summary back: %g vs %g", ra.given.max_us,
            base.given.max_us);
    struct profile single;
    T_CHECK(report_json_read(a, &single, &e) == ST_USAGE && strstr(e.msg, "pipeline file"),
            "a pipeline file as a single profile: %s", e.msg);
    FILE *null = fopen("/dev/null", "w");
    T_CHECK(!pipeline_json_read(b, &rb, &e) && pipeline_compare(null, &ra, &rb, 10, false, &e) == ST_OK,
            "same pipeline: no regression (%s)", e.msg);
    T_CHECK(!pipeline_json_read(c, &rc, &e), "read slow");
    T_CHECK(pipeline_compare(null, &ra, &rc, 10, false, &e) == ST_REGRESSION, "stage 1 50 %% slower: exit 3");
    rc.given.bounds[1] = 2;
    T_CHECK(pipeline_compare(null, &ra, &rc, 10, false, &e) == ST_USAGE && strstr(e.msg, "splits differ"),
            "different splits: %s", e.msg);
    fclose(null);
    /* the file's version: 2 written (predicted_us a step); 1 (a marginal) still read; 3 refused */
    struct cJSON *root = t_json_file(a);
    const struct cJSON *ver = root ? t_json_at(root, "pipeline.version") : NULL;
    T_CHECK(cJSON_IsNumber(ver) && ver->valueint == 2, "written version %d", ver ? ver->valueint : -1);
    for (int want = 1; root && want <= 3; want += 2) {
        char d[512];
        snprintf(d, sizeof d, "%s/v%d.json", dir, want);
        cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "pipeline"),
                                                              "version"),
                             want);
        char *text = cJSON_PrintUnformatted(root);
        T_CHECK(text && t_write_file(d, text, strlen(text)) == 0, "write %s", d);
        free(text);
        struct pipeline rv;
        int st = pipeline_json_read(d, &rv, &e);
        T_CHECK(want == 1 ? st == ST_OK && rv.given.k == 2 : st == ST_USAGE && strstr(e.msg, "pipeline.version"),
                "version %d: rc %d %s", want, st, st ? e.msg : "");
        if (!st) pipeline_free(&rv);
    }
    cJSON_Delete(root);
    pipeline_free(&base);
    pipeline_free(&slow);
    pipeline_free(&ra);
    pipeline_free(&rb);
    pipeline_free(&rc);
}

/* One dispatch of a hand-made stage profile: kind, layer and one timing of 3 equal samples (0: no
 * timestamps). */
static struct prof_dispatch hand_dispatch(const char *kind, int layer, double us)
{
    struct prof_dispatch d = {.layer = layer};
    snprintf(d.kind, sizeof d.kind, "%s", kind);
    double v[3] = {us, us, us};
    if (us > 0) d.us = timing_from(v, 3);
    return d;
}

/* The layer costs from a split's stage runs: each layer's share of its stage's kernel time (less the
 * timestamps' own cost a dispatch where the kernel sum exceeds the marginal pass) times the stage's
 * marginal pass; the embedding counted with the stage's first layer, the head with its last; none
 * when a dispatch has no timestamps or the split does not cover the model. */
static void test_layer_costs_from(void)
{
    struct pipeline pl = {.n_layers = 3};
    struct pipeline_split *s = &pl.given;
    s->k = 2;
    s->bounds[0] = 0, s->bounds[1] = 2, s->bounds[2] = 3;
    struct prof_dispatch d0[] = {hand_dispatch("embed.bf16", -1, 10), hand_dispatch("matmul.bf16", 0, 30),
                                 hand_dispatch("matmul_swiglu.bf16", 0, 20), hand_dispatch("matmul.bf16", 1, 50),
                                 hand_dispatch("head.matmul.bf16", -1, 40)};
    struct prof_dispatch d1[] = {hand_dispatch("matmul.bf16", 2, 20)};
    s->st[0] = (struct pipeline_stage){.a = 0, .b = 2, .marginal_us = est_exact(130)};
    s->st[0].p.dispatches = d0, s->st[0].p.n_dispatches = 5;
    s->st[1] = (struct pipeline_stage){.a = 2, .b = 3, .marginal_us = est_exact(25)};
    s->st[1].p.dispatches = d1, s->st[1].p.n_dispatches = 1;
    /* stage 0: kernel sum 150 over a marginal of 130: 4 µs a dispatch is the timestamps' own;
     * layer 0 = embed 6 + 26 + 16 = 48, layer 1 = 46 + head 36 = 82; stage 1: 20 under 25, all of it */
    T_CHECK(pipeline_layer_costs_from(&pl, s) && pl.layer_cost_shares, "costs from the stages");
    T_CHECK(pl.layer_cost && fabs(pl.layer_cost[0].v - 48) < 1e-9 && fabs(pl.layer_cost[1].v - 82) < 1e-9 &&
                fabs(pl.layer_cost[2].v - 25) < 1e-9,
            "layer costs %g %g %g, want 48 82 25", pl.layer_cost ? pl.layer_cost[0].v : -1,
            pl.layer_cost ? pl.layer_cost[1].v : -1, pl.layer_cost ? pl.layer_cost[2].v : -1);
    pipeline_summarize(&pl, s);
    T_CHECK(fabs(s->st[0].predicted_us - 130) < 1e-9 && fabs(s->st[1].predicted_us - 25) < 1e-9,
            "a stage's layers add up to its marginal pass: %g %g", s->st[0].predicted_us, s->st[1].predicted_us);
    free(pl.layer_cost);
    pl.layer_cost = NULL;
    /* timestamps dearer than a small kernel (lavapipe): the cost taken a dispatch stays under half
     * the shortest, so no layer reads 0: stage 0's sum 150 over a marginal of 30 would take 24 a
     * dispatch; 5 it is (embed 5 + 25 + 15 = 45, 45 + 35 = 80, of 125) */
    s->st[0].marginal_us = est_exact(30);
    T_CHECK(pipeline_layer_costs_from(&pl, s) && pl.layer_cost && fabs(pl.layer_cost[0].v - 30 * 45 / 125.0) < 1e-9 &&
                fabs(pl.layer_cost[1].v - 30 * 80 / 125.0) < 1e-9,
            "capped timestamp cost: %g %g", pl.layer_cost ? pl.layer_cost[0].v : -1,
            pl.layer_cost ? pl.layer_cost[1].v : -1);
    free(pl.layer_cost);
    pl.layer_cost = NULL;
    pl.layer_cost_shares = false;
    s->st[0].marginal_us = est_exact(130);
    d1[0].us.n_reps = 0; /* --timing none: no samples */
    T_CHECK(!pipeline_layer_costs_from(&pl, s) && !pl.layer_cost && !pl.layer_cost_shares, "no timestamps: none");
    d1[0].us.n_reps = 3;
    s->bounds[2] = 2, s->k = 1; /* layers 0:2 of 3 */
    T_CHECK(!pipeline_layer_costs_from(&pl, s) && !pl.layer_cost, "a split short of the model: none");
    for (size_t i = 0; i < 5; i++) free(d0[i].us.reps);
    free(d1[0].us.reps);
}

int main(void)
{
    test_partition_brute_force();
    test_balance_brute_force();
    test_balance_heavy_last();
    test_fixed_from();
    test_spec();
    test_summary();
    test_layer_costs_from();
    test_json_compare();
    return t_finish();
}
