/* test_compare.c - compare_profiles on saved JSON files (no GPU, no timing): identical runs, a
 * regression, the noise floor, the threshold, an incomparable shard, a driver warning, kinds in one
 * file only. Each case writes base and current with report_json_write and compares the files read
 * back with report_json_read, as `--compare BASE --current NEW` does. */
#include <cjson/cJSON.h>
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
                            "shape draft"};
    for (size_t i = 0; i < ARRAY_LEN(fields); i++) {
        struct profile c2;
        synth_profile(&c2, 404, 5);
        if (i == 0) strcpy(c2.model.dtype, "q4_0");
        if (i == 1) c2.shape.cols = 16;
        if (i == 2) strcpy(c2.device.name, "Other GPU");
        if (i == 3) c2.shape.logits = false;
        if (i == 4) strcpy(c2.shape.plan, "spec");
        if (i == 5) c2.shape.draft = 4; /* read back from JSON: the field round-trips */
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
    free(out);
    T_CHECK(!strstr(out, "tune differs"), "the same tune: no warning\n%s", out);
    /* runs under different --tune overrides: compared, with a warning naming both */
    snprintf(cur.tune, sizeof cur.tune, "xmv_cols=4");
    st = compare_files(&base, &cur, 10.0, &out, &e);
    T_CHECK(st != ST_USAGE && strstr(out, "WARNING: tune differs: base 'default', current 'xmv_cols=4'"),
            "tune warning: %d\n%s", st, out);
    free(out);
    cur.tune[0] = 0;
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

/* DESIGN.md / issue 13: a verdict needs the change beyond the threshold AND beyond the noise. */
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

    /* five reps a side cannot tell: the row says so and nothing fails */
    struct profile b5, c5;
    synth_profile(&b5, 611, 5);
    synth_profile(&c5, 611, 5);
    synth_adjust_kind(&c5, "attn.decode", 2.0, 0.0);
    st = compare_files(&b5, &c5, 10.0, &out, &e);
    T_CHECK(st == ST_OK && strstr(out, "within noise"), "5 reps: %d\n%s", st, out);
    free(out);
    profile_free(&b5);
    profile_free(&c5);

    /* Markdown and JSON of a comparison */
    synth_reshape(&base, 1.0, 0.02, 609);
    synth_reshape(&cur, 1.2, 0.02, 610);
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

int main(void)
{
    dir = t_tmpdir();
    T_CHECK(dir != NULL, "tmpdir");
    if (!dir) return t_finish();
    test_same();
    test_regression();
    test_noise_floor();
    test_identity();
    test_only_in_one();
    test_bad_input();
    test_noise_aware();
    return t_finish();
}
