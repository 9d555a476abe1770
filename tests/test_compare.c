/* test_compare.c - compare_profiles on saved JSON files (no GPU, no timing): identical runs, a
 * regression, the noise floor, the threshold, an incomparable shard, a driver warning, kinds in one
 * file only. Each case writes base and current with report_json_write and compares the files read
 * back with report_json_read, as `--compare BASE --current NEW` does. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "synth_profile.h"
#include "testutil.h"

static const char *dir;

/* Writes both profiles, reads them back, compares; returns the status, output in *out (free). */
static int compare_files(const struct profile *base, const struct profile *cur, double threshold,
                         char **out, struct err *e)
{
    char pb[256], pc[256];
    snprintf(pb, sizeof pb, "%s/base.json", dir);
    snprintf(pc, sizeof pc, "%s/current.json", dir);
    remove(pb);
    remove(pc);
    /* one device: the synthetic profiles draw a copy bandwidth per seed (test_device_slower varies it) */
    struct profile c1 = *cur;
    c1.device.copy_gbps = base->device.copy_gbps;
    cur = &c1;
    T_CHECK(report_json_write(pb, base, e) == ST_OK && report_json_write(pc, cur, e) == ST_OK,
            "write: %s", e->msg);
    struct profile b, c;
    memset(&b, 0x33, sizeof b); /* poison */
    memset(&c, 0x33, sizeof c);
    int rb = report_json_read(pb, &b, e);
    int rc = rb ? rb : report_json_read(pc, &c, e);
    T_CHECK(rb == ST_OK && rc == ST_OK, "read back: %s", e->msg);
    if (rb || rc) {
        if (!rb) profile_free(&b);
        *out = strdup("");
        return -1;
    }
    size_t len = 0;
    FILE *f = open_memstream(out, &len);
    snprintf(e->msg, sizeof e->msg, "poison");
    int st = compare_profiles(f, &b, &c, threshold, e);
    fclose(f);
    profile_free(&b);
    profile_free(&c);
    return st;
}

static void test_same(void)
{
    struct profile a;
    synth_profile(&a, 101, 5);
    struct err e;
    char *out;
    int st = compare_files(&a, &a, 10.0, &out, &e);
    T_CHECK(st == ST_OK, "A vs A: %d\n%s", st, out);
    T_CHECK(strstr(out, "no regression") && strstr(out, "TOTAL (GPU busy)") &&
                strstr(out, "matmul.bf16"),
            "table printed\n%s", out);
    T_CHECK(!strstr(out, "only in") && !strstr(out, "WARNING"), "nothing extra\n%s", out);
    free(out);
    profile_free(&a);
}

/* The cases below take 10 reps a side: the rank test needs 7 to reach p < 0.001. */
static void test_regression(void)
{
    /* baseline: one kind 2× faster than now → the current run regressed */
    struct profile base, cur;
    synth_profile(&base, 202, 10);
    synth_profile(&cur, 202, 10);
    synth_adjust_kind(&base, "attn.decode", 0.5, 0.0);
    struct err e = {{0}};
    char *out;
    int st = compare_files(&base, &cur, 10.0, &out, &e);
    T_CHECK(st == ST_REGRESSION, "2x slower kind: %d\n%s", st, out);
    T_CHECK(strstr(out, "REGRESSION") != NULL, "regression line\n%s", out);
    /* issue 11: main prints e.msg on exit 3: it must say what regressed */
    T_CHECK(strstr(e.msg, "regression: attn.decode +") && strstr(e.msg, "threshold 10%"),
            "exit-3 message names the kind, the change and the threshold: \"%s\"", e.msg);
    const char *row = strstr(out, "  attn.decode");
    T_CHECK(row && strstr(row, "SLOWER") && strstr(row, "SLOWER") < strchr(row, '\n'),
            "the slower kind is marked\n%s", out);
    free(out);

    /* the other way round (current faster) is no regression */
    st = compare_files(&cur, &base, 10.0, &out, &e);
    T_CHECK(st == ST_OK, "faster: %d\n%s", st, out);
    free(out);

    /* the same slowdown under a threshold above it is no regression */
    st = compare_files(&base, &cur, 150.0, &out, &e);
    T_CHECK(st == ST_OK, "under threshold 150%%: %d\n%s", st, out);
    free(out);
    profile_free(&base);
    profile_free(&cur);
}

static void test_noise_floor(void)
{
    /* swiglu (~4 µs) 0.9 µs slower: over 10 % but under the 1 µs floor → not a regression */
    struct profile base, cur;
    synth_profile(&base, 303, 10);
    synth_profile(&cur, 303, 10);
    synth_adjust_kind(&cur, "swiglu", 1.0, 0.9);
    struct err e;
    char *out;
    int st = compare_files(&base, &cur, 10.0, &out, &e);
    T_CHECK(st == ST_OK, "0.9 µs slower is noise: %d\n%s", st, out);
    free(out);
    /* the same kind 1.5 µs slower crosses the floor (and 10 %) */
    synth_adjust_kind(&cur, "swiglu", 1.0, 0.6);
    st = compare_files(&base, &cur, 10.0, &out, &e);
    T_CHECK(st == ST_REGRESSION, "1.5 µs slower on a 4 µs kind: %d\n%s", st, out);
    free(out);
    profile_free(&base);
    profile_free(&cur);
}

static void test_identity(void)
{
    struct profile base, cur;
    synth_profile(&base, 404, 5);
    synth_profile(&cur, 404, 5);
    cur.shard.b = 8;
    struct err e;
    char *out;
    int st = compare_files(&base, &cur, 10.0, &out, &e);
    T_CHECK(st == ST_USAGE, "different shard: %d", st);
    T_CHECK(strstr(e.msg, "shard differs: base 0:16, current 0:8") != NULL, "message: %s", e.msg);
    free(out);
    cur.shard.b = 16;

    const char *fields[] = {"model dtype", "shape cols", "device name", "shape logits", "shape plan differs: base 'batch', current 'spec'",
                            "shape draft", "precision differs: base 'exact', current 'serving'"};
    for (size_t i = 0; i < ARRAY_LEN(fields); i++) {
        struct profile c2;
        synth_profile(&c2, 404, 5);
        if (i == 0) strcpy(c2.model.dtype, "q4_0");
        if (i == 1) c2.shape.cols = 16;
        if (i == 2) strcpy(c2.device.name, "Other GPU");
        if (i == 3) c2.shape.logits = false;
        if (i == 4) strcpy(c2.shape.plan, "spec");
        if (i == 5) c2.shape.draft = 4; /* read back from JSON: the field round-trips */
        if (i == 6) strcpy(c2.precision, "serving"); /* base: none set, written and read as exact */
        st = compare_files(&base, &c2, 10.0, &out, &e);
        T_CHECK(st == ST_USAGE && strstr(e.msg, fields[i]), "%s: %d %s", fields[i], st, e.msg);
        free(out);
        profile_free(&c2);
    }

    /* a different driver is a warning, not an error */
    strcpy(cur.device.driver, "synthdrv 2.0.0");
    st = compare_files(&base, &cur, 10.0, &out, &e);
    T_CHECK(st == ST_OK, "driver change: %d\n%s", st, out);
    T_CHECK(strstr(out, "WARNING: driver differs") && strstr(out, "synthdrv 2.0.0"), "warning\n%s",
            out);
    T_CHECK(!strstr(out, "the plan differs"), "the same plan: no note\n%s", out);
    T_CHECK(!strstr(out, "kernel variant"), "the same variants: no note\n%s", out);
    T_CHECK(!strstr(out, "tune differs"), "the same tune: no warning\n%s", out);
    T_CHECK(!strstr(out, "gemm path differs"), "the same gemm path: no warning\n%s", out);
    free(out);
    /* runs under different --tune overrides: compared, with a warning naming both */
    snprintf(cur.tune, sizeof cur.tune, "xmv_cols=4");
    st = compare_files(&base, &cur, 10.0, &out, &e);
    T_CHECK(st != ST_USAGE && strstr(out, "WARNING: tune differs: base 'default', current 'xmv_cols=4'"),
            "tune warning: %d\n%s", st, out);
    free(out);
    cur.tune[0] = 0;
    /* another gemm path: compared, with a warning naming both; a file without the field warns not */
    snprintf(cur.device.gemm_path, sizeof cur.device.gemm_path, "khr");
    st = compare_files(&base, &cur, 10.0, &out, &e);
    T_CHECK(st != ST_USAGE && strstr(out, "WARNING: gemm path differs: base 'nv', current 'khr'"), "gemm path warning: %d\n%s",
            st, out);
    free(out);
    base.device.gemm_path[0] = 0;
    st = compare_files(&base, &cur, 10.0, &out, &e);
    T_CHECK(!strstr(out, "gemm path differs"), "an older base: no warning\n%s", out);
    free(out);
    snprintf(base.device.gemm_path, sizeof base.device.gemm_path, "nv");
    snprintf(cur.device.gemm_path, sizeof cur.device.gemm_path, "nv");
    /* a dispatch that ran another variant (constants, or a grid's split count): a note naming the first */
    T_CHECK(cur.dispatches[4].pipeline[0] && cur.dispatches[7].pipeline[0], "synth dispatches 4, 7 name pipelines");
    cur.dispatches[4].spec[0] ^= 1;
    cur.dispatches[7].groups[2] = 8;
    st = compare_files(&base, &cur, 10.0, &out, &e);
    char want[256];
    snprintf(want, sizeof want, "NOTE: 2 dispatches ran another kernel variant than the baseline (first: [4] %s %s: %s [",
             cur.dispatches[4].kind, cur.dispatches[4].op, cur.dispatches[4].pipeline);
    T_CHECK(st == ST_OK && strstr(out, want) && strstr(out, " -> "), "variant note: %d\n%s", st, out);
    free(out);
    cur.dispatches[4].spec[0] ^= 1;
    cur.dispatches[7].groups[2] = base.dispatches[7].groups[2];
    /* the probe's plan changed shape (a fusion): a note with both shapes */
    cur.gap_probe.dispatches = 12;
    cur.gap_probe.barriers = 8;
    st = compare_files(&base, &cur, 10.0, &out, &e);
    T_CHECK(st == ST_OK && strstr(out, "NOTE: the plan differs: base 13 dispatches in 9 stages, current 12 in 8"),
            "plan note: %d\n%s", st, out);
    free(out);
    profile_free(&base);
    profile_free(&cur);
}

static void test_only_in_one(void)
{
    struct profile base, cur;
    synth_profile(&base, 505, 5);
    synth_profile(&cur, 505, 5);
    snprintf(cur.dispatches[3].kind, sizeof cur.dispatches[3].kind, "shortconv.fused");
    synth_adjust_kind(&cur, "shortconv.fused", 1.0, 0.0);
    struct err e;
    char *out;
    int st = compare_files(&base, &cur, 10.0, &out, &e);
    T_CHECK(st == ST_OK, "renamed kind, same total: %d\n%s", st, out);
    T_CHECK(strstr(out, "only in base: shortconv (") != NULL, "base-only kind listed\n%s", out);
    T_CHECK(strstr(out, "only in current: shortconv.fused (") != NULL, "current-only listed\n%s",
            out);
    free(out);
    profile_free(&base);
    profile_free(&cur);
}

static void test_bad_input(void)
{
    struct profile a;
    synth_profile(&a, 606, 5);
    struct err e;
    FILE *f = fopen("/dev/null", "w");
    T_CHECK(compare_profiles(f, &a, &a, -5.0, &e) == ST_USAGE && strstr(e.msg, "--threshold"),
            "negative threshold: %s", e.msg);
    fclose(f);
    profile_free(&a);
}

/* docs/design.md / issue 13: a verdict needs the change beyond the threshold AND beyond the noise. */
static void test_noise_aware(void)
{
    struct profile base, cur;
    struct err e;
    char *out;
    /* the same distribution twice (different draws, ±10 % per sample): no regression */
    synth_profile(&base, 601, 10);
    synth_profile(&cur, 602, 10);
    int st = compare_files(&base, &cur, 10.0, &out, &e);
    T_CHECK(st == ST_OK, "same distribution twice: %d\n%s", st, out);
    free(out);
    /* the same twice with wide noise (±80 %): still none, whatever the medians do */
    synth_reshape(&base, 1.0, 1.6, 603);
    synth_reshape(&cur, 1.0, 1.6, 604);
    st = compare_files(&base, &cur, 10.0, &out, &e);
    T_CHECK(st == ST_OK, "same wide distribution twice: %d\n%s", st, out);
    free(out);
    /* a real 20 % shift with tight reps (±1 %): a regression, the total marked SLOWER */
    synth_reshape(&base, 1.0, 0.02, 605);
    synth_reshape(&cur, 1.2, 0.02, 606);
    st = compare_files(&base, &cur, 10.0, &out, &e);
    T_CHECK(st == ST_REGRESSION, "20%% shift, tight reps: %d\n%s", st, out);
    const char *row = strstr(out, "  TOTAL (GPU busy)");
    T_CHECK(row && strstr(row, "SLOWER") && strstr(row, "SLOWER") < strchr(row, '\n'), "total slower\n%s", out);
    free(out);
    /* the same 20 % shift inside wide noise (±80 %): no regression, said to be within noise */
    synth_reshape(&base, 1.0, 1.6, 607);
    synth_reshape(&cur, 1.2, 1.6, 608);
    st = compare_files(&base, &cur, 10.0, &out, &e);
    T_CHECK(st == ST_OK, "20%% shift inside the noise: %d\n%s", st, out);
    T_CHECK(strstr(out, "within noise") != NULL, "says within noise\n%s", out);
    free(out);

    /* the rule over many draws: a tight 20 % shift always fails; the same distribution twice never;
     * the same 20 % shift inside ±80 % noise seldom (it is a real shift: the rank test finds it now
     * and then, 1 draw in 10 here, where the 3-standard-error rule on MADs failed 3 of 10 pure-noise
     * draws) */
    int tight = 0, wide = 0, same = 0;
    for (uint64_t k = 0; k < 10; k++) {
        synth_reshape(&base, 1.0, 0.02, 700 + 2 * k);
        synth_reshape(&cur, 1.2, 0.02, 701 + 2 * k);
        tight += compare_files(&base, &cur, 10.0, &out, &e) == ST_REGRESSION;
        free(out);
        synth_reshape(&base, 1.0, 1.6, 800 + 2 * k);
        synth_reshape(&cur, 1.2, 1.6, 801 + 2 * k);
        wide += compare_files(&base, &cur, 10.0, &out, &e) == ST_REGRESSION;
        free(out);
        synth_reshape(&cur, 1.0, 1.6, 901 + 2 * k);
        same += compare_files(&base, &cur, 10.0, &out, &e) == ST_REGRESSION;
        free(out);
    }
    T_CHECK(tight == 10 && wide <= 2 && same == 0, "regressions in 10 draws: tight shift %d, shift in noise %d, same %d",
            tight, wide, same);

    /* five reps a side: the rank test cannot reach p < 0.001, the separation rule decides (issue 35) */
    struct profile b5, c5;
    synth_profile(&b5, 611, 5);
    synth_profile(&c5, 611, 5);
    synth_adjust_kind(&c5, "attn.decode", 2.0, 0.0);
    st = compare_files(&b5, &c5, 10.0, &out, &e);
    T_CHECK(st == ST_REGRESSION && strstr(e.msg, "attn.decode"), "5 reps, 2x slower kind: %d\n%s", st, out);
    free(out);
    profile_free(&b5);
    profile_free(&c5);

    /* Markdown and JSON of a comparison */
    synth_reshape(&base, 1.0, 0.02, 609);
    synth_reshape(&cur, 1.2, 0.02, 610);
    cur.device.copy_gbps = base.device.copy_gbps;
    char path[256];
    snprintf(path, sizeof path, "%s/cmp.json", dir);
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    st = compare_profiles_fmt(f, &base, &cur, 10.0, true, path, &e);
    fclose(f);
    T_CHECK(st == ST_REGRESSION && strstr(out, "| `TOTAL (GPU busy)` |") && strstr(out, "|---|"), "markdown\n%s", out);
    free(out);
    struct cJSON *j = t_json_file(path);
    T_CHECK(j && cJSON_IsTrue(t_json_at(j, "regression")) && t_json_at(j, "rows[0].noise_us") &&
                t_json_at(j, "rows[0].verdict") && cJSON_IsNumber(t_json_at(j, "variant_changes")) &&
                t_json_at(j, "variant_changes")->valueint >= 0,
            "compare JSON");
    cJSON_Delete(j);
    profile_free(&base);
    profile_free(&cur);
}

/* Every dispatch's and the wall's samples redrawn: n reps of base·shift·(1 + noise·(u − ½)). */
static void reps_redraw(struct profile *p, int n, double shift, double noise, uint64_t seed)
{
    struct t_rng r;
    t_rng_seed(&r, seed);
    double *s = malloc((size_t)n * sizeof *s);
    for (int i = 0; i <= p->n_dispatches; i++) {
        struct timing *t = i < p->n_dispatches ? &p->dispatches[i].us : &p->wall_us;
        double base = i < p->n_dispatches ? synth_plan[i].base_us : 700.0;
        for (int k = 0; k < n; k++) s[k] = base * shift * (1.0 + noise * (t_rng_uniform(&r) - 0.5));
        timing_free(t);
        *t = timing_from(s, n);
    }
    free(s);
    synth_derive(p);
}

/* Issue 35: the gate decides at every rep count. 3 reps a side: a kind 20x slower in every rep
 * fails (it passed before: the rank test cannot reach p < 0.001 below 7); the same distribution
 * twice passes; a change above the threshold that 3 reps cannot tell is UNDECIDED (exit 5), in
 * the text, the message and the JSON, with the reps that would decide. */
static void test_few_reps(void)
{
    struct profile base, cur;
    struct err e = {{0}};
    char *out;
    for (int n = 2; n <= 6; n++) {
        synth_profile(&base, 900 + n, n);
        synth_profile(&cur, 900 + n, n);
        synth_adjust_kind(&cur, "matmul.bf16", 20.0, 0.0);
        int st = compare_files(&base, &cur, 10.0, &out, &e);
        T_CHECK(st == ST_REGRESSION, "%d reps, every matmul 20x slower: %d\n%s", n, st, out);
        free(out);
        profile_free(&cur);
        synth_profile(&cur, 950 + n, n); /* the same distribution, other draws */
        st = compare_files(&base, &cur, 10.0, &out, &e);
        T_CHECK(st == ST_OK || st == ST_UNDECIDED, "%d reps, same distribution: %d\n%s", n, st, out);
        free(out);
        profile_free(&base);
        profile_free(&cur);
    }
    /* the separation rule's false alarms on pure noise: 200 pairs of 3 reps at ±50 % */
    int alarms = 0;
    synth_profile(&base, 1, 3);
    synth_profile(&cur, 2, 3);
    cur.device.copy_gbps = base.device.copy_gbps;
    for (uint64_t k = 0; k < 200; k++) {
        synth_reshape(&base, 1.0, 1.0, 1000 + 2 * k);
        synth_reshape(&cur, 1.0, 1.0, 1001 + 2 * k);
        size_t len;
        FILE *f = open_memstream(&out, &len);
        alarms += compare_profiles(f, &base, &cur, 10.0, &e) == ST_REGRESSION;
        fclose(f);
        free(out);
    }
    T_CHECK(alarms <= 2, "3 reps of ±50 %% noise twice: %d false alarms in 200", alarms);
    /* 30 % slower inside ±50 % noise at 3 reps: neither rule can tell: undecided, never a pass */
    synth_reshape(&base, 1.0, 1.0, 5);
    synth_reshape(&cur, 1.3, 1.0, 6);
    char path[256];
    snprintf(path, sizeof path, "%s/undecided.json", dir);
    size_t len;
    FILE *f = open_memstream(&out, &len);
    int st = compare_profiles_fmt(f, &base, &cur, 10.0, false, path, &e);
    fclose(f);
    T_CHECK(st == ST_UNDECIDED && ST_UNDECIDED == 5, "30%% inside the noise at 3 reps: %d\n%s", st, out);
    T_CHECK(strstr(out, "UNDECIDED") && strstr(out, "rerun both runs with --reps") && !strstr(out, "no regression"),
            "the text says undecided\n%s", out);
    T_CHECK(strstr(e.msg, "undecided") && strstr(e.msg, "--reps "), "message: %s", e.msg);
    struct cJSON *j = t_json_file(path);
    T_CHECK(j && cJSON_IsTrue(t_json_at(j, "undecided")) && cJSON_IsFalse(t_json_at(j, "regression")) &&
                cJSON_IsNumber(t_json_at(j, "reps_to_decide")) && t_json_at(j, "reps_to_decide")->valueint >= 7,
            "JSON: undecided with the reps to decide");
    cJSON_Delete(j);
    free(out);
    profile_free(&base);
    profile_free(&cur);
}

/* Issue 35: the rank test at any size. int overflow of nx·ny·(nx+ny+1) at 1024 reps a side made
 * the p-value NaN and every row SLOWER; the pairwise U was quadratic (the caps took minutes). */
static void test_rank_sizes(void)
{
    static const int sizes[] = {25, 26, 1023, 1024, 100000};
    struct t_rng r;
    t_rng_seed(&r, 77);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int n = sizes[k];
        double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
        for (int i = 0; i < n; i++) {
            x[i] = 100.0 + t_rng_normal(&r);
            y[i] = 100.0 + t_rng_normal(&r);
        }
        double p = rank_test_greater(x, n, y, n);
        T_CHECK(isfinite(p) && p > COMPARE_ALPHA && p <= 1.0, "%d reps, one distribution: p %g", n, p);
        for (int i = 0; i < n; i++) y[i] += 2.0; /* two sigma slower */
        p = rank_test_greater(x, n, y, n);
        T_CHECK(isfinite(p) && p < COMPARE_ALPHA, "%d reps, two sigma slower: p %g", n, p);
        for (int i = 0; i < n; i++) x[i] = y[i] = (double)(i % 3); /* ties everywhere */
        p = rank_test_greater(x, n, y, n);
        T_CHECK(isfinite(p) && p > 0.4, "%d reps, equal tied samples: p %g", n, p);
        free(x);
        free(y);
    }
    /* the normal approximation agrees with the exact tail where both are good (26 vs 25 a side) */
    double x[26], y[26];
    for (int i = 0; i < 26; i++) {
        x[i] = i;
        y[i] = i + 6.5;
    }
    double pa = rank_test_greater(x, 26, y, 26), pe = rank_test_greater(x, 25, y, 25);
    T_CHECK(fabs(pa - pe) < 0.01, "normal approx %g vs exact %g", pa, pe);

    /* whole comparisons of the same distribution at 1023, 1024 (via the files) and 100 k reps */
    static const int runs[] = {1023, 1024, 100000};
    for (size_t k = 0; k < 3; k++) {
        struct profile base, cur;
        struct err e = {{0}};
        synth_profile(&base, 1, 3);
        synth_profile(&cur, 2, 3);
        cur.device.copy_gbps = base.device.copy_gbps;
        reps_redraw(&base, runs[k], 1.0, 0.4, 10 + k);
        reps_redraw(&cur, runs[k], 1.0, 0.4, 20 + k);
        char *out;
        int st;
        if (runs[k] < 100000) {
            st = compare_files(&base, &cur, 1.0, &out, &e);
        } else {
            size_t len;
            FILE *f = open_memstream(&out, &len);
            st = compare_profiles(f, &base, &cur, 1.0, &e);
            fclose(f);
        }
        T_CHECK(st == ST_OK, "%d reps a side, one distribution: %d\n%s", runs[k], st, out);
        free(out);
        reps_redraw(&cur, runs[k], 1.05, 0.4, 30 + k); /* 5 % slower, ±20 % noise */
        size_t len;
        FILE *f = open_memstream(&out, &len);
        st = compare_profiles(f, &base, &cur, 1.0, &e);
        fclose(f);
        T_CHECK(st == ST_REGRESSION, "%d reps a side, 5%% slower: %d\n%s", runs[k], st, out);
        free(out);
        profile_free(&base);
        profile_free(&cur);
    }
}

/* A device that itself ran slower (its copy bandwidth 30 % down): a 20 % slower run is no more than
 * the device explains: undecided (exit 5, "a quiet device"), never a regression nor a pass; a 2x
 * slower one is more than the device explains: a regression. */
static void test_device_slower(void)
{
    struct profile base, cur;
    struct err e = {{0}};
    char *out;
    size_t len;
    synth_profile(&base, 1, 10);
    synth_profile(&cur, 2, 10);
    synth_reshape(&base, 1.0, 0.02, 31);
    synth_reshape(&cur, 1.2, 0.02, 32);
    cur.device.copy_gbps = 0.7 * base.device.copy_gbps;
    FILE *f = open_memstream(&out, &len);
    int st = compare_profiles(f, &base, &cur, 10.0, &e);
    fclose(f);
    T_CHECK(st == ST_UNDECIDED && strstr(out, "no more than the device itself ran slower") &&
                strstr(e.msg, "rerun both on a quiet device") && !strstr(out, "REGRESSION"),
            "20%% slower on a device 30%% slower: %d %s\n%s", st, e.msg, out);
    free(out);
    synth_reshape(&cur, 2.0, 0.02, 33);
    f = open_memstream(&out, &len);
    st = compare_profiles(f, &base, &cur, 10.0, &e);
    fclose(f);
    T_CHECK(st == ST_REGRESSION, "2x slower on a device 30%% slower: %d\n%s", st, out);
    free(out);
    profile_free(&base);
    profile_free(&cur);
}

int main(int argc, char **argv)
{
    t_init(argc, argv);
    dir = t_tmpdir();
    T_CHECK(dir != NULL, "tmpdir");
    if (!dir) return t_finish();
    T_CASE("same", "", test_same());
    T_CASE("regression", "", test_regression());
    T_CASE("noise_floor", "", test_noise_floor());
    T_CASE("identity", "", test_identity());
    T_CASE("only_in_one", "", test_only_in_one());
    T_CASE("bad_input", "", test_bad_input());
    T_CASE("noise_aware", "", test_noise_aware());
    T_CASE("few_reps", "", test_few_reps());
    T_CASE("rank_sizes", "", test_rank_sizes());
    T_CASE("device_slower", "", test_device_slower());
    return t_finish();
}
