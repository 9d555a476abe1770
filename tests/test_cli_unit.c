/* test_cli_unit.c - the command line's plain rules, no GPU: the auto plan (select.h sel_plan_auto), "did you
 * mean" (suggest.h), table-driven, and --help naming every --tune key. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "select.h"
#include "suggest.h"
#include "testutil.h"

/* The wide plan tiles its matrix products from 6 columns (5 for Q4_0, 16 for F32); auto runs wide
 * there and batch below, never spec. */
static void test_plan_rule(void)
{
    static const struct {
        enum dtype t;
        int min;
    } mins[] = {{DT_BF16, 6}, {DT_F16, 6}, {DT_Q8_0, 6}, {DT_Q4_0, 5}, {DT_F32, 16}};
    struct tune def = tune_default();
    for (size_t i = 0; i < sizeof mins / sizeof mins[0]; i++)
        T_CHECK(sel_gemm_min_cols(&def, mins[i].t) == mins[i].min, "gemm min cols of %s: %d, want %d",
                dtype_name(mins[i].t), sel_gemm_min_cols(&def, mins[i].t), mins[i].min);
    static const struct {
        int cols, min;
        enum plan_kind want;
        bool wide_as_batch; /* --wide at this width runs batch's matrix kernels */
    } cases[] = {
        {1, 6, PLAN_BATCH, true},    {5, 6, PLAN_BATCH, true},   {6, 6, PLAN_WIDE, false},
        {16, 6, PLAN_WIDE, false},   {4, 5, PLAN_BATCH, true},   {5, 5, PLAN_WIDE, false},
        {15, 16, PLAN_BATCH, true},  {16, 16, PLAN_WIDE, false}, {4096, 6, PLAN_WIDE, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enum plan_kind k = sel_plan_auto(cases[i].cols, cases[i].min);
        T_CHECK(k == cases[i].want, "auto at %d cols (gemm from %d): %s, want %s", cases[i].cols, cases[i].min,
                plan_kind_name(k), plan_kind_name(cases[i].want));
        T_CHECK(sel_wide_as_batch(PLAN_WIDE, cases[i].cols, cases[i].min) == cases[i].wide_as_batch,
                "wide as batch at %d cols (gemm from %d)", cases[i].cols, cases[i].min);
        T_CHECK(!sel_wide_as_batch(PLAN_BATCH, cases[i].cols, cases[i].min) &&
                    !sel_wide_as_batch(PLAN_SPEC, cases[i].cols, cases[i].min),
                "only the wide plan runs as batch");
    }
}

static void test_suggest(void)
{
    static const char *const flags[] = {"--cols", "--pos", "--slots", "--plans", "--layers", "--logits", "--json"};
    static const char *const models[] = {"lfm2-350m", "lfm2-700m", "lfm2-1.2b", "lfm2.5-1.2b", "qwen3.5-0.8b"};
    static const struct {
        const char *typed;
        const char *const *names;
        int n;
        const char *want; /* NULL: nothing close */
    } cases[] = {
        {"--colums", flags, 7, "--cols"},    {"--col", flags, 7, "--cols"},        {"--plan", flags, 7, "--plans"},
        {"--lyaers", flags, 7, "--layers"},  {"--JSON", flags, 7, "--json"},       {"--bogus", flags, 7, NULL},
        {"-x", flags, 7, NULL},              {"lfm2-350M", models, 5, "lfm2-350m"}, {"LFM2-1.2B", models, 5, "lfm2-1.2b"},
        {"lfm2-1.2", models, 5, "lfm2-1.2b"}, {"qwen3.5-0.8", models, 5, "qwen3.5-0.8b"}, {"llama-7b", models, 5, NULL},
        {"model.safetensors", models, 5, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = suggest_closest(cases[i].typed, cases[i].names, cases[i].n);
        T_CHECK(cases[i].want ? got && !strcmp(got, cases[i].want) : !got, "suggest(%s) = %s, want %s", cases[i].typed,
                got ? got : "(none)", cases[i].want ? cases[i].want : "(none)");
    }
    T_CHECK(suggest_distance("abc", "ABC") == 0 && suggest_distance("ab", "ba") == 1 &&
                suggest_distance("kitten", "sitting") == 3 && suggest_distance("", "abc") == 3,
            "distances");
}

/* --help lists the CLI's --tune keys (tune.h tune_keys), each one. */
static void test_help_tune_keys(void)
{
    FILE *f = tmpfile();
    T_CHECK(f, "tmpfile");
    if (!f) return;
    cli_usage(f);
    static char help[16384];
    size_t n = (size_t)ftell(f);
    rewind(f);
    help[fread(help, 1, n < sizeof help - 1 ? n : sizeof help - 1, f)] = 0;
    fclose(f);
    char keys[1024];
    snprintf(keys, sizeof keys, "%s", tune_keys());
    int found = 0;
    for (char *k = strtok(keys, " "); k; k = strtok(NULL, " "), found++)
        T_CHECK(strstr(help, k), "--help names --tune key %s", k);
    T_CHECK(found == 9, "the CLI has 9 --tune keys: %d", found);
}

int main(void)
{
    test_plan_rule();
    test_suggest();
    test_help_tune_keys();
    return t_finish();
}
