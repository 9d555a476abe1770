/* test_report.c - the report stage on synthetic profiles (no GPU, no timing): timing statistics,
 * by-kind aggregation, gap-probe arithmetic and verdicts, text and Markdown headings, JSON schema
 * and read-back, the Chrome trace. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "report_fmt.h"
#include "synth_profile.h"
#include "testutil.h"

#define NEAR(a, b) (fabs((a) - (b)) <= 1e-9 * (1.0 + fabs(b)))

static char *render(void (*fn)(FILE *, const struct profile *), const struct profile *p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fn(f, p);
    fclose(f);
    return buf;
}

/* ------------------------------------------------------------------------------------------------
 */

static void test_timing(void)
{
    struct t_rng r;
    t_rng_seed(&r, 11);
    double s[7];
    for (int i = 0; i < 7; i++)
        s[i] = 10.0 + 100.0 * t_rng_uniform(&r);
    double sorted[7];
    memcpy(sorted, s, sizeof s);
    for (int i = 0; i < 7; i++) /* selection sort: independent of the library's qsort */
        for (int j = i + 1; j < 7; j++)
            if (sorted[j] < sorted[i]) {
                double t = sorted[i];
                sorted[i] = sorted[j];
                sorted[j] = t;
            }
    double sum = 0;
    for (int i = 0; i < 7; i++)
        sum += s[i];
    struct timing t = timing_from(s, 7);
    T_CHECK(t.n_reps == 7 && t.reps != s, "n_reps %d", t.n_reps);
    T_CHECK(NEAR(t.mean, sum / 7), "mean %g", t.mean);
    T_CHECK(t.median == sorted[3], "odd median %g want %g", t.median, sorted[3]);
    T_CHECK(t.min == sorted[0], "min %g", t.min);
    s[0] = -1;
    T_CHECK(t.reps[0] != -1, "reps must be a copy");
    timing_free(&t);
    t = timing_from(sorted, 6);
    T_CHECK(NEAR(t.median, 0.5 * (sorted[2] + sorted[3])), "even median %g", t.median);
    timing_free(&t);
    t = timing_from(s, 0);
    T_CHECK(t.n_reps == 0 && t.reps == NULL && t.mean == 0, "empty timing");
}

/* The rank test's exact tail on hand-checkable cases. */
static void test_rank_test(void)
{
    double x[10], y[10];
    for (int i = 0; i < 10; i++) {
        x[i] = i;
        y[i] = 100 + i;
    }
    /* fully separated 10 vs 10: one arrangement of C(20, 10) = 184756 */
    T_CHECK(fabs(rank_test_greater(x, 10, y, 10) - 1.0 / 184756) < 1e-12, "separated p %g",
            rank_test_greater(x, 10, y, 10));
    T_CHECK(rank_test_greater(y, 10, x, 10) == 1.0, "other way p %g", rank_test_greater(y, 10, x, 10));
    /* 2 vs 2, y = {3, 4} above x = {1, 2}: 1 of C(4, 2) = 6 */
    T_CHECK(fabs(rank_test_greater(x + 1, 2, (double[]){3, 4}, 2) - 1.0 / 6) < 1e-12, "2v2");
    /* interleaved: p about one half */
    double a[6] = {1, 3, 5, 7, 9, 11}, b[6] = {2, 4, 6, 8, 10, 12};
    double pv = rank_test_greater(a, 6, b, 6);
    T_CHECK(pv > 0.3 && pv < 0.6, "interleaved p %g", pv);
    T_CHECK(rank_test_greater(a, 0, b, 6) == 1.0, "empty side");
    /* the normal approximation above 25 a side agrees with separation being very unlikely */
    double big_x[30], big_y[30];
    for (int i = 0; i < 30; i++) {
        big_x[i] = i;
        big_y[i] = i + 0.5;
    }
    pv = rank_test_greater(big_x, 30, big_y, 30);
    T_CHECK(pv > 0.2 && pv < 0.6, "shift by half a step, 30 a side: p %g", pv);
}

/* Spread statistics, errors and the noise rules of the derived figures on synthetic reps. */
static void test_spread_and_noise(void)
{
    double s[10];
    for (int i = 0; i < 10; i++)
        s[9 - i] = i + 1; /* 10..1: order must not matter */
    struct timing t = timing_from(s, 10);
    T_CHECK(NEAR(t.median, 5.5) && NEAR(t.p10, 1.9) && NEAR(t.p90, 9.1) && NEAR(t.mad, 2.5),
            "median %g p10 %g p90 %g mad %g", t.median, t.p10, t.p90, t.mad);
    struct est x = est_median(&t);
    T_CHECK(NEAR(x.v, 5.5) && NEAR(x.u, 1.2533 * 1.4826 * 2.5 / sqrt(10.0)), "est %g ± %g", x.v, x.u);
    timing_free(&t);
    t = timing_from(s, 1);
    T_CHECK(isinf(est_median(&t).u) && est_within_noise(est_median(&t)), "one rep: unknown error");
    timing_free(&t);
    T_CHECK(!est_within_noise((struct est){5, 2}) && est_within_noise((struct est){4, 2}) &&
                est_within_noise((struct est){-3, 2}) && !est_within_noise((struct est){-5, 2}),
            "within noise is |v| <= 2u");
    struct est d = est_sub((struct est){10, 3}, (struct est){4, 4});
    T_CHECK(NEAR(d.v, 6.0) && NEAR(d.u, 5.0), "difference %g ± %g", d.v, d.u);

    /* gap probe on reps: noisy (gaps inside the noise, the 25 % line too: inconclusive) */
    struct t_rng r;
    t_rng_seed(&r, 77);
    double w1[10], w2[10], busy[10], h1[10], h2[10], hs[10], wts[10];
    for (int i = 0; i < 10; i++) {
        w1[i] = 1000 + 80 * t_rng_normal(&r);
        w2[i] = 1600 + 80 * t_rng_normal(&r);
        busy[i] = 450 + 5 * t_rng_normal(&r); /* gaps ≈ 150 = 25 % of 600 */
        h1[i] = 1100 + 80 * t_rng_normal(&r);
        h2[i] = 1800 + 80 * t_rng_normal(&r);
        hs[i] = 100 + 2 * t_rng_normal(&r);
        wts[i] = 1300 + 80 * t_rng_normal(&r);
    }
    struct timing tw1 = timing_from(w1, 10), tw2 = timing_from(w2, 10), tb = timing_from(busy, 10);
    struct timing th1 = timing_from(h1, 10), th2 = timing_from(h2, 10), ths = timing_from(hs, 10);
    struct timing twts = timing_from(wts, 10);
    struct gap_probe g;
    struct gap_probe_in in = {.w1 = &tw1, .w2 = &tw2, .hw1 = &th1, .hw2 = &th2, .busy = &tb, .head_sum = &ths,
                              .wall_ts = &twts, .n_timestamped = 50, .head_bytes_real = 1000000, .vocab = 1000,
                              .hidden = 500};
    gap_probe_compute_reps(&g, &in);
    T_CHECK(g.ran && g.n_reps == 10 && g.w1.n_reps == 10 && g.hw2.n_reps == 10, "reps kept");
    T_CHECK(NEAR(g.marginal_us, tw2.median - tw1.median) && NEAR(g.gaps_us, g.marginal_us - tb.median),
            "medians on both sides: marginal %g gaps %g", g.marginal_us, g.gaps_us);
    T_CHECK(g.marginal.u > 0 && g.gaps.u >= g.marginal.u, "errors grow through subtraction");
    T_CHECK(g.verdict == VERDICT_INCONCLUSIVE && !g.per_dispatch, "noisy: inconclusive, got %s",
            verdict_name(g.verdict));
    T_CHECK(est_within_noise(g.lm_head) || fabs(g.lm_head.v) > 2 * g.lm_head.u, "lm head classified");
    T_CHECK(NEAR(g.ts_add.v, twts.median - th1.median) && NEAR(g.ts_pair_us, g.ts_add.v / 50), "timestamps add");
    /* the text says which figures are within noise and why the verdict is inconclusive */
    struct profile p;
    synth_profile(&p, 9, 10);
    gap_probe_free(&p.gap_probe);
    p.gap_probe = g;
    char *txt = render(report_text, &p);
    T_CHECK(strstr(txt, "within noise") && strstr(txt, "VERDICT: inconclusive") && strstr(txt, "medians of 10 reps"),
            "noisy text\n%s", txt);
    free(txt);
    profile_free(&p); /* frees g's timings */

    /* negative beyond noise: the timestamp sum (tight) exceeds a tight marginal pass */
    for (int i = 0; i < 10; i++) {
        w1[i] = 1000 + 0.5 * t_rng_normal(&r);
        w2[i] = 1600 + 0.5 * t_rng_normal(&r);
        busy[i] = 700 + 0.5 * t_rng_normal(&r);
    }
    struct timing n1 = timing_from(w1, 10), n2 = timing_from(w2, 10), nb = timing_from(busy, 10);
    in = (struct gap_probe_in){.w1 = &n1, .w2 = &n2, .busy = &nb};
    gap_probe_compute_reps(&g, &in);
    T_CHECK(g.gaps_us < -90 && !est_within_noise(g.gaps) && g.verdict == VERDICT_SUBMIT_POLL && !g.head,
            "negative gaps %g ± %g, verdict %s", g.gaps_us, g.gaps.u, verdict_name(g.verdict));
    synth_profile(&p, 9, 10);
    gap_probe_free(&p.gap_probe);
    p.gap_probe = g;
    txt = render(report_text, &p);
    T_CHECK(strstr(txt, "negative: the timestamps' own cost"), "negative explained\n%s", txt);
    free(txt);
    profile_free(&p);

    /* zero: identical reps (MAD 0) and a kernel sum equal to the marginal pass: exactly zero gaps
     * with zero error are "within noise" (nothing to tell), the verdict still clear */
    for (int i = 0; i < 10; i++) {
        w1[i] = 1000;
        w2[i] = 1600;
        busy[i] = 600;
    }
    struct timing z1 = timing_from(w1, 10), z2 = timing_from(w2, 10), zb = timing_from(busy, 10);
    in = (struct gap_probe_in){.w1 = &z1, .w2 = &z2, .busy = &zb};
    gap_probe_compute_reps(&g, &in);
    T_CHECK(g.gaps_us == 0 && g.gaps.u == 0 && est_within_noise(g.gaps) && g.marginal_us == 600.0 &&
                g.marginal.u == 0 && g.verdict == VERDICT_SUBMIT_POLL,
            "zero gaps: %g ± %g %s", g.gaps_us, g.gaps.u, verdict_name(g.verdict));
    gap_probe_free(&g);
    struct timing *all[] = {&tw1, &tw2, &tb, &th1, &th2, &ths, &twts, &n1, &n2, &nb, &z1, &z2, &zb};
    for (size_t i = 0; i < ARRAY_LEN(all); i++)
        timing_free(all[i]);
}

static void test_sig3(void)
{
    char b[32];
    struct {
        double v;
        const char *want;
    } cases[] = {{0.239, "0.239"}, {4290.4, "4290"}, {828.4, "828"}, {3.934, "3.93"}, {0.012345, "0.0123"},
                 {0, "0.00"},      {42.04, "42.0"},  {99.96, "100"}, {-1.5, "-1.50"}, {0.00098, "0.000980"}};
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        T_CHECK(!strcmp(fmt_sig3(b, sizeof b, cases[i].v), cases[i].want), "sig3(%g) = %s, want %s", cases[i].v, b,
                cases[i].want);
}

/* The crossover table: rows from profiles, a failed plan, the faster plan per width. */
static void test_crossover(void)
{
    struct crossover_row rows[4] = {0};
    struct profile p;
    synth_profile(&p, 31, 10);
    crossover_row_from(&rows[0], &p);
    T_CHECK(rows[0].ok && rows[0].cols == 4 && !strcmp(rows[0].plan, "batch") &&
                NEAR(rows[0].step_us.v, p.gap_probe.head_wall1_us),
            "row from a profile: step %g", rows[0].step_us.v);
    profile_free(&p);
    rows[0].floor_us = 100;
    rows[1] = (struct crossover_row){.cols = 4, .plan = "wide", .ok = false, .why = "--wide is not supported yet"};
    rows[2] = (struct crossover_row){.cols = 64, .plan = "batch", .ok = true, .step_us = {4000, 10}, .busy_us = 3900,
                                     .tok_s = 16000, .floor_us = 600};
    rows[3] = (struct crossover_row){.cols = 64, .plan = "wide", .ok = true, .step_us = {1000, 10}, .busy_us = 950,
                                     .tok_s = 64000, .floor_us = 600};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_crossover(f, rows, 4, false);
    fclose(f);
    T_CHECK(strstr(buf, "-- plan crossover") && strstr(buf, "failed: --wide is not supported yet") &&
                strstr(buf, "1.67") && strstr(buf, "  wide\n"),
            "crossover text\n%s", buf);
    free(buf);
    f = open_memstream(&buf, &len);
    report_crossover(f, rows, 4, true);
    fclose(f);
    T_CHECK(strstr(buf, "| 64 | wide | 1000 |") && strstr(buf, "|---:|"), "crossover markdown\n%s", buf);
    free(buf);
    /* --units: auto by the slowest step (4000 µs: µs), ms on demand */
    f = open_memstream(&buf, &len);
    report_crossover_in(f, rows, 4, false, UNITS_AUTO);
    report_crossover_in(f, rows, 4, true, UNITS_MS);
    fclose(f);
    T_CHECK(strstr(buf, "    step µs ") && strstr(buf, "| width | plan | step ms | ± | busy ms |") &&
                strstr(buf, "| 64 | wide | 1.00 | ± 0.0100 "),
            "crossover units\n%s", buf);
    free(buf);
    rows[2].step_us.v = 4e4; /* auto at a 40 ms step: ms */
    f = open_memstream(&buf, &len);
    report_crossover_in(f, rows, 4, false, UNITS_AUTO);
    fclose(f);
    T_CHECK(strstr(buf, "    step ms ") && strstr(buf, "    40.0 "), "crossover auto ms\n%s", buf);
    free(buf);
}

/* Rows of one width whose plans ran the same kernels are marked, and no winner is named between
 * them; the plan line says auto and the wide plan below its gemm width. */
static void test_crossover_same_kernels(void)
{
    struct profile p;
    synth_profile(&p, 31, 10);
    struct crossover_row rows[3] = {0};
    crossover_row_from(&rows[0], &p);
    crossover_row_from(&rows[1], &p);
    snprintf(rows[1].plan, sizeof rows[1].plan, "wide");
    rows[1].step_us.v *= 0.5; /* faster, yet the same kernels: noise, not a choice */
    crossover_row_from(&rows[2], &p);
    snprintf(rows[2].plan, sizeof rows[2].plan, "spec");
    rows[2].kernels_sig ^= 1; /* another kernel somewhere, the same matrix products */
    char buf[128];
    crossover_same_kernels(rows, 1, buf, sizeof buf);
    T_CHECK(!strcmp(buf, "same kernels as batch"), "same kernels: '%s'", buf);
    crossover_same_kernels(rows, 2, buf, sizeof buf);
    T_CHECK(!strcmp(buf, "same matrix kernels as wide"), "same matrix kernels: '%s'", buf);
    crossover_same_kernels(rows, 0, buf, sizeof buf);
    T_CHECK(!buf[0], "the first row of a width names no other: '%s'", buf);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    report_crossover(f, rows, 3, false);
    fclose(f);
    /* batch and wide are one choice (the same kernels; its step the faster of the two), spec another */
    T_CHECK(strstr(out, "  batch\n") && !strstr(out, "none:") && strstr(out, "same kernels as batch\n"),
            "crossover marks\n%s", out);
    free(out);
    /* only one choice at the width: no winner is named */
    f = open_memstream(&out, &len);
    report_crossover(f, rows, 2, false);
    fclose(f);
    T_CHECK(strstr(out, "none: batch and wide ran the same kernels"), "one choice\n%s", out);
    free(out);
    /* three plans, one choice */
    rows[2].kernels_sig = rows[0].kernels_sig;
    f = open_memstream(&out, &len);
    report_crossover(f, rows, 3, false);
    fclose(f);
    T_CHECK(strstr(out, "none: every plan ran the same kernels"), "three plans, one choice\n%s", out);
    free(out);
    p.shape.plan_auto = true;
    p.shape.gemm_min_cols = 6;
    snprintf(p.shape.plan, sizeof p.shape.plan, "batch");
    T_CHECK(strstr(report_plan_line(buf, sizeof buf, &p), "plan auto -> batch (the plan a serving engine runs at 4 cols: "
                                                           "wide from 6)"),
            "auto plan line: %s", buf);
    p.shape.plan_auto = false;
    snprintf(p.shape.plan, sizeof p.shape.plan, "wide");
    T_CHECK(strstr(report_plan_line(buf, sizeof buf, &p), "plan wide (below 6 cols its matrix products run the batch"),
            "wide below its width: %s", buf);
    p.shape.cols = 6;
    T_CHECK(!strstr(report_plan_line(buf, sizeof buf, &p), "below"), "wide at its width: %s", buf);
    profile_free(&p);
}

/* --csv: sections with their table in the first column, quoted fields; --html: one page with its
 * sections and nothing outside it. */
static void test_csv_html(void)
{
    struct profile p;
    synth_profile(&p, 5, 6);
    struct crossover_row rows[2] = {0};
    crossover_row_from(&rows[0], &p);
    rows[1] = (struct crossover_row){.cols = 8, .plan = "wide", .ok = false, .why = "failed, \"badly\""};
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    csv_profile(f, &p);
    csv_crossover(f, rows, 2);
    csv_compare(f, &p, &p);
    fclose(f);
    T_CHECK(!strncmp(out, "table,cols,plan,kind,", 21) && strstr(out, "\n\ntable,cols,plan,rank,") &&
                strstr(out, "\nby_kind,4,batch,") && strstr(out, "\ndispatch,4,batch,1,") &&
                strstr(out, "\n\ntable,cols,plan,step_us") && strstr(out, "\ncrossover,8,wide,,,,,,,\"failed, \"\"badly\"\"\",,\n") &&
                strstr(out, "\n\ntable,kind,base_us") && strstr(out, "\ncompare,TOTAL (GPU busy),"),
            "csv\n%s", out);
    free(out);
    f = open_memstream(&out, &len);
    report_html(f, &p, rows, 2, &p, "no regression <&>");
    fclose(f);
    T_CHECK(!strncmp(out, "<!DOCTYPE html>", 15) && strstr(out, "id=\"kinds\"") && strstr(out, "id=\"roofline\"") &&
                strstr(out, "id=\"timeline\"") && strstr(out, "id=\"gap-probe\"") && strstr(out, "id=\"crossover\"") &&
                strstr(out, "id=\"compare\"") && strstr(out, "no regression &lt;&amp;&gt;") && strstr(out, "</html>\n") &&
                !strstr(out, "<script") && !strstr(out, "http"),
            "html\n%.2000s", out);
    free(out);
    profile_free(&p);
}

/* Attribution arithmetic: differential medians, the inflation flag, closure. */
/* Issue 35: no advice from figures within noise. At 3 reps the marginal pass is within its noise
 * while the 25 % line, dominated by a tight kernel sum, is beyond it: the verdict used to say
 * "Fusion buys nothing" from it. Now one line: inconclusive at 3 reps, and the reps that decide.
 * The LM head figure within noise gives no GB/s. */
static void test_verdicts_need_signal(void)
{
    double w1[3] = {1000, 1300, 800}, w2[3] = {1050, 1400, 700}, busy[3] = {2000, 2001, 1999};
    double h1[3] = {1100, 1500, 800}, h2[3] = {1200, 1500, 900}, hs[3] = {90, 91, 89};
    struct timing tw1 = timing_from(w1, 3), tw2 = timing_from(w2, 3), tb = timing_from(busy, 3);
    struct timing th1 = timing_from(h1, 3), th2 = timing_from(h2, 3), ths = timing_from(hs, 3);
    struct gap_probe g;
    struct gap_probe_in in = {.w1 = &tw1, .w2 = &tw2, .hw1 = &th1, .hw2 = &th2, .busy = &tb, .head_sum = &ths,
                              .head_bytes_real = 1000000, .vocab = 1000, .hidden = 500};
    gap_probe_compute_reps(&g, &in);
    T_CHECK(est_within_noise(g.marginal) && !est_within_noise(g.line) && g.verdict == VERDICT_INCONCLUSIVE,
            "marginal %g ± %g within noise, line %g ± %g beyond: %s", g.marginal.v, g.marginal.u, g.line.v, g.line.u,
            verdict_name(g.verdict));
    T_CHECK(est_within_noise(g.lm_head), "head within noise: %g ± %g", g.lm_head.v, g.lm_head.u);
    struct profile p;
    synth_profile(&p, 9, 3);
    gap_probe_free(&p.gap_probe);
    p.gap_probe = g;
    for (int md = 0; md < 2; md++) {
        char *txt = render(md ? report_markdown : report_text, &p);
        T_CHECK(!strstr(txt, "Fusion buys nothing") && !strstr(txt, "Fusion is on") &&
                    strstr(txt, "inconclusive at 3 reps: the marginal pass is within noise") &&
                    strstr(txt, "says --reps "),
                "%s: gap verdict inconclusive with the reps that decide\n%s", md ? "markdown" : "text", txt);
        T_CHECK(strstr(txt, "inconclusive at 3 reps: the LM head figure is within noise") &&
                    !strstr(txt, "GB/s if the head is f16") && !strstr(txt, "GB/s if f16"),
                "%s: no head GB/s from noise\n%s", md ? "markdown" : "text", txt);
        free(txt);
    }
    profile_free(&p);
    struct timing *all[] = {&tw1, &tw2, &tb, &th1, &th2, &ths};
    for (size_t i = 0; i < ARRAY_LEN(all); i++) timing_free(all[i]);
}

static void test_attribution(void)
{
    struct profile p;
    synth_profile(&p, 41, 10);
    struct prof_attribution *a = &p.attribution;
    a->ran = true;
    a->n_rows = 3;
    a->rows = calloc(3, sizeof *a->rows);
    const char *kinds[3] = {"matmul.bf16", "rmsnorm", "attn.decode"};
    double diffs[3] = {220, 5, 26}; /* matmul (ts ≈ 225+) agrees, rmsnorm's ts (≈ 9) is inflated */
    for (int k = 0; k < 3; k++) {
        double s[10];
        for (int i = 0; i < 10; i++)
            s[i] = diffs[k] + 0.1 * (i - 4.5);
        snprintf(a->rows[k].kind, sizeof a->rows[k].kind, "%s", kinds[k]);
        a->rows[k].attributable = true;
        a->rows[k].us = timing_from(s, 10);
    }
    double base[10];
    for (int i = 0; i < 10; i++) base[i] = 700 + i;
    a->base_us = timing_from(base, 10);
    attribution_compute(&p, (struct est){260, 2});
    T_CHECK(NEAR(a->rows[0].diff.v, 220.0) && a->rows[0].ts_us > 200, "matmul diff %g ts %g", a->rows[0].diff.v,
            a->rows[0].ts_us);
    T_CHECK(a->rows[1].ts_inflated && a->rows[1].ts_us > 8, "rmsnorm inflated: ts %g diff %g", a->rows[1].ts_us,
            a->rows[1].diff.v);
    T_CHECK(NEAR(a->sum.v, 251.0) && NEAR(a->closure.v, -9.0) && fabs(a->closure_share + 9.0 / 260) < 1e-9,
            "closure %g of %g", a->closure.v, a->sum.v);
    char *txt = render(report_text, &p);
    T_CHECK(strstr(txt, "-- attribution") && strstr(txt, "closure: Σ diff") && strstr(txt, "ts>diff") &&
                strstr(txt, "(does not close)"),
            "attribution text\n%s", txt);
    free(txt);
    /* closes within a tight noise; inside a wide one (the marginal pass ± 100 µs at 10 reps) it is
     * inconclusive, never "closes" (issue 35) */
    attribution_compute(&p, (struct est){251.5, 2});
    txt = render(report_text, &p);
    T_CHECK(strstr(txt, "(closes within noise)"), "closes\n%s", txt);
    free(txt);
    attribution_compute(&p, (struct est){260, 100});
    txt = render(report_text, &p);
    T_CHECK(!strstr(txt, "closes") && strstr(txt, "(inconclusive at 10 reps: the noise exceeds 10 % of the marginal pass; "
                                               "the measured spread says --reps "),
            "inconclusive closure\n%s", txt);
    free(txt);
    profile_free(&p);
}

/* The floor: each (layer, op) once at its largest bytes (a product in passes), the head's apart,
 * and dispatches whose bytes others carry too (the widening of Q4_0 weights before their products,
 * one widening for a group of products under the group's op) not at all. */
static void test_floor(void)
{
    struct {
        const char *kind, *op;
        int layer;
        uint64_t bytes;
        bool again;
    } d[] = {
        {"gemm_wdeq.q4_0", "attn.qkv_proj", 2, 300, true}, {"gemm_xprep", "attn.qkv_proj", 2, 0, false},
        {"gemm.q4_0", "attn.q_proj", 2, 100, false},        {"gemm.q4_0", "attn.k_proj", 2, 100, false},
        {"gemm.q4_0", "attn.v_proj", 2, 100, false},        {"gemm_wdeq.q4_0", "ffn_down", 2, 50, true},
        {"gemm.q4_0", "ffn_down", 2, 50, false},            {"matmul.bf16", "ffn_down", 3, 40, false},
        {"matmul.bf16", "ffn_down", 3, 40, false},          {"head.matmul.bf16", "lm_head", -1, 7, false},
    };
    struct profile p = {0};
    p.n_dispatches = (int)ARRAY_LEN(d);
    p.dispatches = calloc(ARRAY_LEN(d), sizeof *p.dispatches);
    for (size_t i = 0; i < ARRAY_LEN(d); i++) {
        struct prof_dispatch *x = &p.dispatches[i];
        snprintf(x->kind, sizeof x->kind, "%s", d[i].kind);
        snprintf(x->op, sizeof x->op, "%s", d[i].op);
        x->layer = d[i].layer;
        x->bytes = d[i].bytes;
        x->bytes_again = d[i].again;
    }
    uint64_t f = profile_floor_bytes(&p);
    T_CHECK(f == 300 + 50 + 40 + 7, "floor %llu, expected 397", (unsigned long long)f);
    free(p.dispatches);
}

static void test_totals_and_kinds(const struct profile *p)
{
    int n_reps = p->busy_us.n_reps;
    T_CHECK(n_reps == 5 && p->head_us.n_reps == 5, "reps busy %d head %d", n_reps,
            p->head_us.n_reps);
    for (int r = 0; r < n_reps; r++) {
        double busy = 0, head = 0;
        for (int i = 0; i < p->n_dispatches; i++) {
            const struct prof_dispatch *d = &p->dispatches[i];
            if (strncmp(d->kind, "head.", 5) == 0)
                head += d->us.reps[r];
            else
                busy += d->us.reps[r];
        }
        T_CHECK(NEAR(p->busy_us.reps[r], busy), "busy rep %d %g want %g", r, p->busy_us.reps[r],
                busy);
        T_CHECK(NEAR(p->head_us.reps[r], head), "head rep %d %g want %g", r, p->head_us.reps[r],
                head);
    }
    T_CHECK(NEAR(p->tok_s, p->shape.cols * 1e6 / p->busy_us.median), "tok_s %g", p->tok_s);

    /* by kind: every kind once, counts, per-rep sums, shares, GB/s, sorted descending */
    T_CHECK(p->n_kinds == 8, "n_kinds %d", p->n_kinds);
    double layer_share = 0, head_share = 0;
    for (int k = 0; k < p->n_kinds; k++) {
        const struct prof_kind *pk = &p->by_kind[k];
        int n = 0;
        uint64_t bytes = 0;
        double rep0 = 0;
        for (int i = 0; i < p->n_dispatches; i++) {
            if (strcmp(p->dispatches[i].kind, pk->kind) != 0) continue;
            n++;
            bytes += p->dispatches[i].bytes;
            rep0 += p->dispatches[i].us.reps[0];
        }
        T_CHECK(pk->n == n && pk->bytes == bytes, "%s n %d bytes %llu", pk->kind, pk->n,
                (unsigned long long)pk->bytes);
        T_CHECK(pk->us.n_reps == 5 && NEAR(pk->us.reps[0], rep0), "%s rep0 %g want %g", pk->kind,
                pk->us.reps[0], rep0);
        bool head = strncmp(pk->kind, "head.", 5) == 0;
        double whole = 0; /* the stated denominator: the sum of its set's medians */
        for (int j = 0; j < p->n_kinds; j++)
            if ((strncmp(p->by_kind[j].kind, "head.", 5) == 0) == head) whole += p->by_kind[j].us.median;
        T_CHECK(NEAR(pk->share, pk->us.median / whole), "%s share %g", pk->kind, pk->share);
        T_CHECK(NEAR(whole, profile_kinds_sum(p, head)), "%s: profile_kinds_sum %g want %g", pk->kind,
                profile_kinds_sum(p, head), whole);
        *(head ? &head_share : &layer_share) += pk->share;
        double gbps = bytes ? bytes / (pk->us.median * 1e-6) / 1e9 : 0.0;
        T_CHECK(NEAR(pk->gbps, gbps), "%s gbps %g want %g", pk->kind, pk->gbps, gbps);
        T_CHECK(NEAR(pk->bw_share, gbps / p->device.copy_gbps), "%s bw_share %g", pk->kind,
                pk->bw_share);
        if (k > 0) T_CHECK(p->by_kind[k - 1].us.median >= pk->us.median, "sorted at %d", k);
    }
    /* shares of the summed medians add up to 100 % in each set (shares of busy's median did not: a
     * median of per-rep sums is not the sum of the medians) */
    T_CHECK(fabs(layer_share - 1.0) < 1e-9 && fabs(head_share - 1.0) < 1e-9, "shares sum %.12g %.12g", layer_share,
            head_share);
    T_CHECK(strcmp(p->by_kind[0].kind, "matmul.bf16") == 0, "largest kind %s", p->by_kind[0].kind);
}

static void test_gap_probe(void)
{
    struct t_rng r;
    t_rng_seed(&r, 23);
    for (int trial = 0; trial < 20; trial++) {
        double fixed = 20 + 100 * t_rng_uniform(&r), kernels = 100 + 900 * t_rng_uniform(&r);
        double gaps = kernels * (trial % 2 ? 0.9 : 0.1) * (0.5 + t_rng_uniform(&r));
        double marginal = kernels + gaps;
        struct gap_probe g;
        memset(&g, 0xff, sizeof g); /* poison */
        gap_probe_compute(&g, fixed + marginal, fixed + 2 * marginal, kernels, false, 0, 0, 0, 0, 0,
                          0);
        T_CHECK(g.ran && !g.head, "ran/head");
        T_CHECK(NEAR(g.marginal_us, marginal), "marginal %g want %g", g.marginal_us, marginal);
        T_CHECK(fabs(g.fixed_us - fixed) < 1e-6, "fixed %g want %g", g.fixed_us, fixed);
        T_CHECK(fabs(g.gaps_us - gaps) < 1e-6, "gaps %g want %g", g.gaps_us, gaps);
        T_CHECK(fabs(g.gaps_share - gaps / marginal) < 1e-9, "gaps share %g", g.gaps_share);
        T_CHECK(g.per_dispatch == (gaps > 0.25 * marginal), "verdict trial %d gaps %g marginal %g",
                trial, gaps, marginal);
        T_CHECK(g.lm_head_us == 0 && g.head_bytes_f16 == 0 && !g.disagree, "head terms zero");
    }
    /* both verdicts on exact numbers, and the 25 % boundary (not per-dispatch at exactly 25 %) */
    struct gap_probe g;
    gap_probe_compute(&g, 1000, 1600, 300, false, 0, 0, 0, 0, 0, 0);
    T_CHECK(g.marginal_us == 600.0 && g.fixed_us == 400 && g.gaps_us == 300 && g.gaps_share == 0.5,
            "exact terms %g %g %g %g", g.marginal_us, g.fixed_us, g.gaps_us, g.gaps_share);
    T_CHECK(g.per_dispatch, "50%% gaps is per-dispatch");
    gap_probe_compute(&g, 1000, 1600, 500, false, 0, 0, 0, 0, 0, 0);
    T_CHECK(!g.per_dispatch, "17%% gaps is submit/poll");
    gap_probe_compute(&g, 1000, 1800, 600, false, 0, 0, 0, 0, 0, 0);
    T_CHECK(!g.per_dispatch && g.gaps_share == 0.25, "exactly 25%% is not per-dispatch");

    /* head: marginal 600, with head 800 → lm_head 200 */
    uint64_t V = 65536, H = 2048, real = V * H * 2;
    gap_probe_compute(&g, 1000, 1600, 300, true, 1200, 2000, 210, real, V, H);
    T_CHECK(g.head && g.marginal_head_us == 800 && g.lm_head_us == 200, "head %g %g",
            g.marginal_head_us, g.lm_head_us);
    T_CHECK(g.lm_head_share == 0.25, "head share %g", g.lm_head_share);
    T_CHECK(g.head_bytes_f16 == V * H * 2 && g.head_bytes_q4_0 == (uint64_t)(V * H * 0.5625),
            "head bytes %llu %llu", (unsigned long long)g.head_bytes_f16,
            (unsigned long long)g.head_bytes_q4_0);
    T_CHECK(NEAR(g.head_gbps, real / 200e-6 / 1e9), "head gbps %g", g.head_gbps);
    T_CHECK(NEAR(g.head_gbps_f16, V * H * 2 / 200e-6 / 1e9), "f16 gbps %g", g.head_gbps_f16);
    T_CHECK(NEAR(g.head_gbps_q4_0, V * H * 0.5625 / 200e-6 / 1e9), "q4_0 gbps %g",
            g.head_gbps_q4_0);
    T_CHECK(!g.disagree, "5%% apart agrees");
    gap_probe_compute(&g, 1000, 1600, 300, true, 1200, 2000, 250, real, V, H);
    T_CHECK(g.disagree, "25%% apart disagrees");
    gap_probe_compute(&g, 1000, 1600, 300, true, 1200, 2000, 178, real, V, H);
    T_CHECK(g.disagree, "timestamp sum 11%% smaller disagrees");
    gap_probe_compute(&g, 1000, 1600, 300, true, 1200, 2000, 221, real, V, H);
    T_CHECK(!g.disagree, "9.5%% of the larger agrees");
}

static const char *headings[] = {
    "== batch step profile: 4 cols, pos 16, layers 0:16, wide=false spec=false logits=true",
    "GPU busy",
    "µs/step",
    "tok/s/stage at this width",
    "+ LM head",
    "-- gap probe (1× vs 2× plan in ONE pass; poll/submit cancel in the delta) --",
    "  wall 1×",
    "  wall 2×",
    "  marginal pass",
    "  kernel-time sum",
    "  ⇒ inter-dispatch",
    "  ⇒ fixed submit+poll",
    "  VERDICT: dead time is PER-DISPATCH ⇒ fusing dispatches reclaims it. Fusion is on.",
    "-- LM head (vocab 65536) --",
    "  marginal pass +head",
    "  ⇒ LM head",
    "if the head is f16",
    "-- by kernel --",
    "-- top single dispatches --",
    "Synthetic GPU 9000",
    "synthdrv 1.2.3",
    "timestamps: period",
    "64 valid bits",
    "copy bandwidth",
    "of copy",
    "host submit + fence wait",
};

static void test_text(struct profile *p)
{
    char *txt = render(report_text, p);
    for (size_t i = 0; i < ARRAY_LEN(headings); i++)
        T_CHECK(strstr(txt, headings[i]) != NULL, "text lacks '%s'", headings[i]);
    T_CHECK(strstr(txt, "NOT production's") == NULL, "the seed's wall remark must not be printed");
    T_CHECK(strstr(txt, "WARNING") == NULL, "head sums agree in the synthetic profile");
    char want[128]; /* the slowest dispatch heads the top table */
    snprintf(want, sizeof want, "  step[  6] %-26s", "matmul.bf16");
    const char *top = strstr(txt, "-- top single dispatches --");
    T_CHECK(top && strstr(top, "  step[") == strstr(top, want), "top dispatch line\n%s", txt);
    T_CHECK(top && strstr(top, "gz=1") && strstr(top, "gz=1") < strstr(top, " µs ("), "gz beside gy\n%s", txt);
    T_CHECK(top && strstr(top, "mixed denominators"), "the top table mixes head and busy shares\n%s", txt);
    int steps = 0;
    for (const char *s = txt; (s = strstr(s, "  step[")); s++)
        steps++;
    T_CHECK(steps == 8, "top dispatches %d lines", steps);
    T_CHECK(strstr(txt, "  (the plan: 13 dispatches in 9 stages, a barrier after each stage"), "the probe's plan line\n%s",
            txt);
    free(txt);

    /* the other verdict and the disagreement warning */
    struct gap_probe saved = p->gap_probe;
    gap_probe_compute(&p->gap_probe, 1000, 1600, 500, true, 1200, 2000, 300, 1000000, 1000, 1000);
    txt = render(report_text, p);
    T_CHECK(strstr(txt,
                   "  VERDICT: dead time is NOT per-dispatch ⇒ it is submit/poll latency. Fusion "
                   "buys nothing; do not write a fused kernel.") != NULL,
            "other verdict");
    T_CHECK(strstr(txt, "WARNING") != NULL, "disagreement warning");
    free(txt);
    p->gap_probe = saved;

    /* no timestamps: say so, skip per-dispatch tables, still print the gap probe */
    p->device.has_timestamps = false;
    txt = render(report_text, p);
    T_CHECK(strstr(txt, "NOT SUPPORTED") != NULL, "no-timestamp header");
    T_CHECK(strstr(txt, "-- gap probe") != NULL, "gap probe without timestamps");
    T_CHECK(strstr(txt, "-- by kernel --") == NULL && strstr(txt, "-- top single") == NULL,
            "per-dispatch tables skipped");
    free(txt);
    p->device.has_timestamps = true;
}

static void test_markdown(const struct profile *p)
{
    char *md = render(report_markdown, p);
    int rows = 0;
    for (const char *s = md; s; s = strchr(s, '\n')) {
        if (*s == '\n') s++;
        if (*s == '|') rows++;
    }
    /* header table + gap probe + head + by kind (1 + sep + kinds) + top (1 + sep + 8) */
    T_CHECK(rows >= p->n_kinds + 2 + 10 + 8, "markdown rows %d", rows);
    T_CHECK(strstr(md, "|---|---:|---:|---:|---:|---:|---:|") != NULL, "by-kind separator row");
    T_CHECK(strstr(md, "| `matmul.bf16` | 4 |") != NULL, "matmul row");
    T_CHECK(strstr(md, "The plan: 13 dispatches in 9 stages") != NULL, "the probe's plan sentence");
    T_CHECK(strstr(md, "### top single dispatches") != NULL && strstr(md, "### by kernel") != NULL,
            "markdown headings");
    T_CHECK(strstr(md, "**VERDICT:**") != NULL, "markdown verdict");
    free(md);
}

static const char *json_fields[] = {
    "tool",
    "version",
    "args",
    "device.name",
    "device.driver",
    "device.api",
    "device.timestamp_period_ns",
    "device.timestamp_valid_bits",
    "device.copy_gbps",
    "device.roof_tflops",
    "device.roof_path",
    "dispatches[2].flops",
    "dispatches[2].flops_exec",
    "by_kind[0].flops",
    "by_kind[0].flops_exec",
    "by_kind[0].tflops",
    "by_kind[0].roof_share",
    "flops",
    "flops_exec",
    "bound.kind",
    "bound.x",
    "bound.intensity",
    "bound.balance",
    "model.family",
    "model.n_layers",
    "model.hidden",
    "model.vocab",
    "model.dtype",
    "model.source",
    "shard.a",
    "shard.b",
    "shape.plan",
    "shape.cols",
    "shape.pos",
    "shape.slots",
    "shape.logits",
    "busy_us.mean",
    "busy_us.median",
    "busy_us.min",
    "busy_us.reps[4]",
    "head_us.mean",
    "head_us.reps[4]",
    "wall_us.median",
    "wall_us.reps[4]",
    "tok_s",
    "dispatches[0].index",
    "dispatches[0].kind",
    "dispatches[0].layer",
    "dispatches[0].op",
    "dispatches[0].groups[2]",
    "dispatches[0].bytes",
    "dispatches[0].us.mean",
    "dispatches[0].us.median",
    "dispatches[0].us.min",
    "dispatches[12].us.reps[4]",
    "dispatches[12].start_us",
    "by_kind[0].kind",
    "by_kind[0].n",
    "by_kind[0].us.median",
    "by_kind[7].us.reps[4]",
    "by_kind[0].share",
    "by_kind[0].gbps",
    "by_kind[0].bw_share",
    "gap_probe.wall1_us",
    "gap_probe.wall2_us",
    "gap_probe.marginal_us",
    "gap_probe.kernel_sum_us",
    "gap_probe.gaps_us",
    "gap_probe.gaps_share",
    "gap_probe.fixed_us",
    "gap_probe.verdict",
    "lm_head.lm_head_us",
    "lm_head.marginal_head_us",
    "lm_head.lm_head_share",
    "lm_head.gbps",
    "lm_head.gbps_f16",
    "lm_head.gbps_q4_0",
    "lm_head.disagree",
};

static bool timing_eq(const struct timing *a, const struct timing *b)
{
    if (a->mean != b->mean || a->median != b->median || a->min != b->min || a->n_reps != b->n_reps)
        return false;
    for (int i = 0; i < a->n_reps; i++)
        if (a->reps[i] != b->reps[i]) return false;
    return true;
}

static void test_json(const struct profile *p, const char *dir)
{
    char path[256];
    snprintf(path, sizeof path, "%s/profile.json", dir);
    struct err e = {{0}};
    T_CHECK(report_json_write(path, p, &e) == ST_OK, "write: %s", e.msg);
    cJSON *root = t_json_file(path);
    T_CHECK(root != NULL, "written JSON parses");
    for (size_t i = 0; i < ARRAY_LEN(json_fields); i++)
        T_CHECK(t_json_at(root, json_fields[i]) != NULL, "JSON lacks %s", json_fields[i]);
    T_CHECK(t_json_at(root, "dispatches[13]") == NULL, "exactly %d dispatches", p->n_dispatches);
    const cJSON *v = t_json_at(root, "gap_probe.verdict");
    T_CHECK(cJSON_IsString(v) && strcmp(v->valuestring, "per-dispatch") == 0, "verdict string");
    /* gap_probe.chained stays in the contract as null; a file of the chained experiment's time
     * (bench/29), with an object there, still reads */
    T_CHECK(cJSON_IsNull(t_json_at(root, "gap_probe.chained")), "gap_probe.chained is null");
    {
        cJSON *old = cJSON_Duplicate(root, 1), *c = cJSON_CreateObject();
        cJSON_AddNumberToObject(c, "links", 41);
        cJSON_AddNumberToObject(c, "stages", 35);
        T_CHECK(old && cJSON_ReplaceItemInObject(cJSON_GetObjectItem(old, "gap_probe"), "chained", c),
                "chained object set");
        char opath[256], *txt = cJSON_PrintUnformatted(old);
        snprintf(opath, sizeof opath, "%s/profile_chained.json", dir);
        FILE *f = fopen(opath, "w");
        T_CHECK(f && txt && fputs(txt, f) >= 0 && fclose(f) == 0, "write %s", opath);
        struct profile r;
        memset(&r, 0, sizeof r);
        T_CHECK(report_json_read(opath, &r, &e) == ST_OK, "a file with gap_probe.chained set reads: %s", e.msg);
        profile_free(&r);
        cJSON_free(txt);
        cJSON_Delete(old);
    }

    /* read back: every value round-trips exactly */
    struct profile q;
    memset(&q, 0x5a, sizeof q); /* poison */
    T_CHECK(report_json_read(path, &q, &e) == ST_OK, "read: %s", e.msg);
    T_CHECK(strcmp(q.args, p->args) == 0 && strcmp(q.device.name, p->device.name) == 0 &&
                strcmp(q.device.driver, p->device.driver) == 0 &&
                strcmp(q.model.source, p->model.source) == 0,
            "strings");
    T_CHECK(q.device.timestamp_period_ns == p->device.timestamp_period_ns &&
                q.device.copy_gbps == p->device.copy_gbps && q.device.has_timestamps &&
                q.device.roof_tflops == p->device.roof_tflops && strcmp(q.device.roof_path, p->device.roof_path) == 0,
            "device numbers");
    T_CHECK(q.model.vocab == p->model.vocab && q.model.hidden == p->model.hidden &&
                q.shard.b == p->shard.b && q.shape.cols == p->shape.cols && q.shape.logits,
            "model/shard/shape");
    T_CHECK(timing_eq(&q.busy_us, &p->busy_us) && timing_eq(&q.head_us, &p->head_us) &&
                timing_eq(&q.wall_us, &p->wall_us),
            "totals round-trip");
    T_CHECK(q.n_dispatches == p->n_dispatches && q.n_kinds == p->n_kinds, "counts");
    for (int i = 0; i < p->n_dispatches && i < q.n_dispatches; i++) {
        const struct prof_dispatch *a = &p->dispatches[i], *b = &q.dispatches[i];
        T_CHECK(strcmp(a->kind, b->kind) == 0 && strcmp(a->op, b->op) == 0 &&
                    a->layer == b->layer && a->bytes == b->bytes && a->groups[0] == b->groups[0] &&
                    a->groups[1] == b->groups[1] && a->start_us == b->start_us &&
                    timing_eq(&a->us, &b->us) && strcmp(a->pipeline, b->pipeline) == 0 &&
                    a->n_spec == b->n_spec && memcmp(a->spec, b->spec, sizeof a->spec[0] * (size_t)a->n_spec) == 0 &&
                    a->flops == b->flops && a->flops_exec == b->flops_exec,
                "dispatch %d round-trip", i);
    }
    for (int i = 0; i < p->n_kinds && i < q.n_kinds; i++) {
        const struct prof_kind *a = &p->by_kind[i], *b = &q.by_kind[i];
        T_CHECK(strcmp(a->kind, b->kind) == 0 && a->n == b->n && a->share == b->share &&
                    a->gbps == b->gbps && a->bytes == b->bytes && timing_eq(&a->us, &b->us) &&
                    a->flops == b->flops && a->flops_exec == b->flops_exec && a->tflops == b->tflops &&
                    a->roof_share == b->roof_share,
                "kind %d round-trip", i);
    }
    const struct gap_probe *g = &p->gap_probe, *h = &q.gap_probe;
    T_CHECK(h->ran && h->head && h->per_dispatch == g->per_dispatch &&
                h->marginal_us == g->marginal_us && h->fixed_us == g->fixed_us &&
                h->gaps_share == g->gaps_share && h->lm_head_us == g->lm_head_us &&
                h->head_gbps_q4_0 == g->head_gbps_q4_0 && h->head_bytes_f16 == g->head_bytes_f16 &&
                h->disagree == g->disagree && h->dispatches == g->dispatches && h->barriers == g->barriers,
            "gap probe round-trip");
    profile_free(&q);

    /* no gap probe: gap_probe and lm_head are null and read back as not run */
    struct profile np = *p;
    memset(&np.gap_probe, 0, sizeof np.gap_probe);
    T_CHECK(report_json_write(path, &np, &e) == ST_OK, "write without probe: %s", e.msg);
    memset(&q, 0x5a, sizeof q);
    T_CHECK(report_json_read(path, &q, &e) == ST_OK && !q.gap_probe.ran && !q.gap_probe.head,
            "no probe round-trip: %s", e.msg);
    profile_free(&q);

    /* errors: missing file, invalid JSON, missing field: ST_USAGE naming file and field */
    char bad[256];
    snprintf(bad, sizeof bad, "%s/nope.json", dir);
    T_CHECK(report_json_read(bad, &q, &e) == ST_USAGE && strstr(e.msg, bad), "missing file: %s",
            e.msg);
    snprintf(bad, sizeof bad, "%s/broken.json", dir);
    t_write_file(bad, "{\"tool\": \"x\", ", 14);
    T_CHECK(report_json_read(bad, &q, &e) == ST_USAGE && strstr(e.msg, bad), "bad JSON: %s", e.msg);
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "shard"), "b");
    snprintf(bad, sizeof bad, "%s/noshard.json", dir);
    char *text = cJSON_Print(root);
    t_write_file(bad, text, strlen(text));
    cJSON_free(text);
    T_CHECK(report_json_read(bad, &q, &e) == ST_USAGE && strstr(e.msg, "shard.b") &&
                strstr(e.msg, bad),
            "missing field: %s", e.msg);
    cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "shard"), "a",
                                           cJSON_CreateString("zero"));
    text = cJSON_Print(root);
    t_write_file(bad, text, strlen(text));
    cJSON_free(text);
    T_CHECK(report_json_read(bad, &q, &e) == ST_USAGE && strstr(e.msg, "shard.a"), "mistyped: %s",
            e.msg);
    /* a kernel variant's constants: integers, at most PROF_MAX_SPEC of them */
    cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "shard"), "a",
                                           cJSON_CreateNumber(p->shard.a));
    cJSON_AddNumberToObject(cJSON_GetObjectItemCaseSensitive(root, "shard"), "b", p->shard.b);
    text = cJSON_Print(root);
    t_write_file(bad, text, strlen(text));
    cJSON_free(text);
    T_CHECK(report_json_read(bad, &q, &e) == ST_OK, "restored file reads: %s", e.msg);
    profile_free(&q);
    cJSON *d0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "dispatches"), 0);
    T_CHECK(cJSON_GetObjectItemCaseSensitive(d0, "pipeline") != NULL, "dispatch 0 names its pipeline");
    const char *bad_specs[] = {"[1, \"two\"]", "[1.5]", "[-1]", "[0,1,2,3,4,5,6,7,8,9,10,11,12]", "{}"};
    for (size_t i = 0; i < ARRAY_LEN(bad_specs); i++) {
        cJSON_ReplaceItemInObjectCaseSensitive(d0, "spec", cJSON_Parse(bad_specs[i]));
        text = cJSON_Print(root);
        t_write_file(bad, text, strlen(text));
        cJSON_free(text);
        T_CHECK(report_json_read(bad, &q, &e) == ST_USAGE && strstr(e.msg, "dispatches[0].spec"),
                "spec %s: %s", bad_specs[i], e.msg);
    }
    cJSON_Delete(root);

    snprintf(bad, sizeof bad, "%s/no/such/dir/p.json", dir);
    T_CHECK(report_json_write(bad, p, &e) == ST_RUNTIME && strstr(e.msg, bad), "unwritable: %s",
            e.msg);
}

static void test_trace(struct profile *p, const char *dir)
{
    char path[256];
    snprintf(path, sizeof path, "%s/trace.json", dir);
    struct err e = {{0}};
    int rep = 4;
    T_CHECK(trace_write(path, p, rep, &e) == ST_OK, "trace: %s", e.msg);
    cJSON *root = t_json_file(path);
    T_CHECK(root != NULL, "trace is valid JSON");
    const cJSON *evs = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    T_CHECK(cJSON_IsArray(evs), "traceEvents array");
    int n_x = 0, n_meta = 0;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, evs)
    {
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
        if (!cJSON_IsString(ph)) continue;
        if (strcmp(ph->valuestring, "M") == 0) n_meta++;
        if (strcmp(ph->valuestring, "X") != 0) continue;
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
        int i = (int)cJSON_GetObjectItemCaseSensitive(args, "index")->valuedouble;
        T_CHECK(i == n_x, "slices in step order: %d at %d", i, n_x);
        const struct prof_dispatch *d = &p->dispatches[i < p->n_dispatches ? i : 0];
        T_CHECK(strcmp(cJSON_GetObjectItemCaseSensitive(ev, "name")->valuestring, d->kind) == 0,
                "slice name = kind");
        T_CHECK(cJSON_GetObjectItemCaseSensitive(ev, "ts")->valuedouble == d->start_us,
                "ts = start_us");
        T_CHECK(cJSON_GetObjectItemCaseSensitive(ev, "dur")->valuedouble == d->us.reps[rep],
                "dur = rep");
        T_CHECK(cJSON_GetObjectItemCaseSensitive(args, "layer") &&
                    cJSON_GetObjectItemCaseSensitive(args, "op") &&
                    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(args, "groups")) == 3 &&
                    cJSON_GetObjectItemCaseSensitive(args, "bytes"),
                "slice args");
        const cJSON *pl = cJSON_GetObjectItemCaseSensitive(args, "pipeline");
        T_CHECK(d->pipeline[0] ? cJSON_IsString(pl) && strcmp(pl->valuestring, d->pipeline) == 0 &&
                                     cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(args, "spec")) == d->n_spec
                               : pl == NULL,
                "slice %d pipeline", i);
        n_x++;
    }
    T_CHECK(n_x == p->n_dispatches, "one X per dispatch: %d vs %d", n_x, p->n_dispatches);
    T_CHECK(n_meta >= 2, "metadata events %d", n_meta);
    cJSON_Delete(root);

    p->device.has_timestamps = false;
    T_CHECK(trace_write(path, p, rep, &e) == ST_USAGE, "no trace without timestamps");
    p->device.has_timestamps = true;
}

/* --tune overrides (tune.h): the "tune" object of the JSON ({key: number or tile string}) reads
 * back to the same text, the text and Markdown headers name them, a file without "tune" (written
 * before it) reads as none, and the default run prints no tune line. */
static void test_tune(struct profile *p, const char *dir)
{
    struct err e = {0};
    char path[256];
    snprintf(path, sizeof path, "%s/profile_tune.json", dir);
    char *txt = render(report_text, p);
    T_CHECK(txt && !strstr(txt, "tune:"), "no tune line by default");
    free(txt);
    snprintf(p->tune, sizeof p->tune, "xmv_cols=4,attn_kv_keys=0,gemm_tile=32x32x32:2x2");
    T_CHECK(report_json_write(path, p, &e) == ST_OK, "write: %s", e.msg);
    cJSON *root = t_json_file(path);
    const cJSON *x = t_json_at(root, "tune.xmv_cols"), *k = t_json_at(root, "tune.attn_kv_keys"),
                *t = t_json_at(root, "tune.gemm_tile");
    T_CHECK(cJSON_IsNumber(x) && x->valuedouble == 4 && cJSON_IsNumber(k) && k->valuedouble == 0 &&
                cJSON_IsString(t) && !strcmp(t->valuestring, "32x32x32:2x2"),
            "the tune object");
    struct profile q;
    memset(&q, 0, sizeof q);
    T_CHECK(report_json_read(path, &q, &e) == ST_OK && !strcmp(q.tune, p->tune), "tune round-trip: '%s'", q.tune);
    profile_free(&q);
    txt = render(report_text, p);
    T_CHECK(txt && strstr(txt, "tune: xmv_cols=4,attn_kv_keys=0,gemm_tile=32x32x32:2x2 (kernel-choice overrides"),
            "text header names the tune\n%s", txt ? txt : "");
    free(txt);
    txt = render(report_markdown, p);
    T_CHECK(txt && strstr(txt, "| tune | `xmv_cols=4,attn_kv_keys=0,gemm_tile=32x32x32:2x2`"), "markdown header");
    free(txt);
    /* an older file: no "tune" object */
    cJSON_DeleteItemFromObject(root, "tune");
    char *old = cJSON_PrintUnformatted(root);
    FILE *f = fopen(path, "w");
    T_CHECK(f && old && fputs(old, f) >= 0 && fclose(f) == 0, "write %s", path);
    memset(&q, 0x5a, sizeof q);
    T_CHECK(report_json_read(path, &q, &e) == ST_OK && !q.tune[0], "no tune object reads as none: %s", e.msg);
    profile_free(&q);
    cJSON_free(old);
    cJSON_Delete(root);
    p->tune[0] = 0;
}

/* --precision: the JSON's "precision" reads back; a file without it (written before) reads as
 * exact, one with another value is refused naming the field; the plan line names the precision and,
 * in serving, the dispatches that ran a _serving variant (none: it says no kernel rounded). */
static void test_precision(struct profile *p, const char *dir)
{
    struct err e = {0};
    char path[256], pl[512];
    snprintf(path, sizeof path, "%s/profile_precision.json", dir);
    T_CHECK(strstr(report_plan_line(pl, sizeof pl, p), "; precision exact (f32-accurate)"), "exact: %s", pl);
    snprintf(p->precision, sizeof p->precision, "serving");
    T_CHECK(strstr(report_plan_line(pl, sizeof pl, p), "; precision serving (no kernel of this step rounds: all f32)"),
            "serving, no _serving pipeline: %s", pl);
    char keep[64];
    snprintf(keep, sizeof keep, "%s", p->dispatches[1].pipeline);
    snprintf(p->dispatches[1].pipeline, sizeof p->dispatches[1].pipeline, "gemm_serving_f16");
    T_CHECK(strstr(report_plan_line(pl, sizeof pl, p), "; precision serving (f16 activations, one product: 1 dispatch)"),
            "serving, one _serving pipeline: %s", pl);
    T_CHECK(report_json_write(path, p, &e) == ST_OK, "write: %s", e.msg);
    /* gemm_cm2 (--tune gemm_path=cm2): its serving mode rounds, its exact modes do not */
    static const struct {
        const char *pipe;
        int n;
    } cm2[] = {{"gemm_cm2_swiglu_bf16", 1}, {"gemm_cm2_q4_0", 1}, {"gemm_cm2_prep_swiglu_bf16", 0},
               {"gemm_cm2_exact_f16", 0}, {"gemm_cm2_xf16_f16", 1}};
    for (size_t i = 0; i < sizeof cm2 / sizeof cm2[0]; i++) {
        snprintf(p->dispatches[1].pipeline, sizeof p->dispatches[1].pipeline, "%s", cm2[i].pipe);
        T_CHECK(profile_serving_dispatches(p) == cm2[i].n, "%s: %d dispatches round", cm2[i].pipe,
                profile_serving_dispatches(p));
    }
    snprintf(p->dispatches[1].pipeline, sizeof p->dispatches[1].pipeline, "%s", keep);
    cJSON *root = t_json_file(path);
    const cJSON *v = t_json_at(root, "precision");
    T_CHECK(cJSON_IsString(v) && !strcmp(v->valuestring, "serving"), "the JSON's precision");
    struct profile q;
    memset(&q, 0, sizeof q);
    T_CHECK(report_json_read(path, &q, &e) == ST_OK && !strcmp(q.precision, "serving") &&
                profile_serving_dispatches(&q) == 1,
            "precision round-trip: '%s', %d serving dispatches", q.precision, profile_serving_dispatches(&q));
    profile_free(&q);
    const char *const vals[2] = {NULL, "fast"}; /* an older file; a value no run writes */
    for (int i = 0; i < 2; i++) {
        cJSON_DeleteItemFromObject(root, "precision");
        if (vals[i]) cJSON_AddStringToObject(root, "precision", vals[i]);
        char *txt = cJSON_PrintUnformatted(root);
        FILE *f = fopen(path, "w");
        T_CHECK(f && txt && fputs(txt, f) >= 0 && fclose(f) == 0, "write %s", path);
        cJSON_free(txt);
        memset(&q, 0, sizeof q);
        int st = report_json_read(path, &q, &e);
        T_CHECK(vals[i] ? st == ST_USAGE && strstr(e.msg, "precision") : st == ST_OK && !strcmp(q.precision, "exact"),
                "precision %s: rc %d, '%s' %s", vals[i] ? vals[i] : "absent", st, q.precision, st ? e.msg : "");
        profile_free(&q);
    }
    cJSON_Delete(root);
    p->precision[0] = 0;
}

/* The gemm path (device.gemm_path): in the JSON, read back, named with its kernel and extension in
 * the text and Markdown headers; a file written before the field reads as "" and prints no line. */
static void test_gemm_path(struct profile *p, const char *dir)
{
    struct err e = {0};
    char path[256];
    snprintf(path, sizeof path, "%s/profile_gemm_path.json", dir);
    snprintf(p->device.gemm_path, sizeof p->device.gemm_path, "khr");
    T_CHECK(report_json_write(path, p, &e) == ST_OK, "write: %s", e.msg);
    cJSON *root = t_json_file(path);
    const cJSON *v = t_json_at(root, "device.gemm_path");
    T_CHECK(cJSON_IsString(v) && !strcmp(v->valuestring, "khr"), "device.gemm_path in the JSON");
    struct profile q;
    memset(&q, 0, sizeof q);
    T_CHECK(report_json_read(path, &q, &e) == ST_OK && !strcmp(q.device.gemm_path, "khr"), "read back: '%s' %s",
            q.device.gemm_path, e.msg);
    profile_free(&q);
    char *txt = render(report_text, p);
    T_CHECK(txt && strstr(txt, "\ngemm path: khr (gemm_khr: VK_KHR_cooperative_matrix)\n"), "text header\n%s",
            txt ? txt : "");
    free(txt);
    txt = render(report_markdown, p);
    T_CHECK(txt && strstr(txt, "| gemm path | khr (gemm_khr: VK_KHR_cooperative_matrix) |"), "markdown header");
    free(txt);
    cJSON *dev = cJSON_GetObjectItemCaseSensitive(root, "device");
    cJSON_DeleteItemFromObject(dev, "gemm_path");
    char *old = cJSON_PrintUnformatted(root);
    FILE *f = fopen(path, "w");
    T_CHECK(f && old && fputs(old, f) >= 0 && fclose(f) == 0, "write %s", path);
    memset(&q, 0x5a, sizeof q);
    T_CHECK(report_json_read(path, &q, &e) == ST_OK && !q.device.gemm_path[0], "an older file: none: %s", e.msg);
    txt = render(report_text, &q);
    T_CHECK(txt && !strstr(txt, "gemm path"), "an older file: no gemm path line");
    free(txt);
    profile_free(&q);
    cJSON_free(old);
    cJSON_Delete(root);
    /* cm2 (forced only): the header names it and the gemm kinds that fell back (select_path.c) */
    snprintf(p->device.gemm_path, sizeof p->device.gemm_path, "cm2");
    txt = render(report_text, p);
    T_CHECK(txt && strstr(txt, "\ngemm path: cm2 (gemm_cm2: VK_NV_cooperative_matrix2)"), "text header, cm2\n%s",
            txt ? txt : "");
    free(txt);
    struct prof_dispatch ds[5] = {{.kind = "gemm_xprep"}, {.kind = "gemm_cm2_prep.bf16"}, {.kind = "gemm_swiglu.q8_0"},
                                  {.kind = "head.gemm.f32"}, {.kind = "gemm_swiglu.q8_0"}};
    struct profile c;
    memset(&c, 0, sizeof c);
    snprintf(c.device.gemm_path, sizeof c.device.gemm_path, "cm2");
    c.dispatches = ds;
    c.n_dispatches = 5;
    char fb[256];
    T_CHECK(!strcmp(fmt_gemm_fallbacks(fb, sizeof fb, &c), "; on the fallback: gemm_swiglu.q8_0, head.gemm.f32"),
            "cm2 fallbacks: '%s'", fb);
    c.n_dispatches = 2;
    T_CHECK(!strcmp(fmt_gemm_fallbacks(fb, sizeof fb, &c), "; no fallback"), "cm2, none: '%s'", fb);
    /* a step cm2 served no product of (Q8_0 in automatic serving: select_path.c keeps Q types on NV v1) */
    c.dispatches = ds + 2;
    c.n_dispatches = 3;
    T_CHECK(!strcmp(fmt_gemm_fallbacks(fb, sizeof fb, &c),
                    "; every product on the fallback (cm2 served none): gemm_swiglu.q8_0, head.gemm.f32"),
            "cm2 served none: '%s'", fb);
    c.dispatches = ds;
    snprintf(c.device.gemm_path, sizeof c.device.gemm_path, "nv");
    c.n_dispatches = 5;
    T_CHECK(!fmt_gemm_fallbacks(fb, sizeof fb, &c)[0], "nv: no fallback words: '%s'", fb);
    snprintf(p->device.gemm_path, sizeof p->device.gemm_path, "nv");
}

/* ------------------------------------------------------------------------------------------------
 * The summary block, --units, the head's own block, logits on a shard without the head */

static char *render_in(bool md, const struct profile *p, enum report_units u)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    (md ? report_markdown_in : report_text_in)(f, p, u);
    fclose(f);
    return buf;
}

/* The block sits after the header, before the busy line, and states the figures right. */
static void test_summary(struct profile *p)
{
    uint64_t fb = p->floor_bytes;
    double fu = p->floor_us;
    p->floor_bytes = profile_floor_bytes(p);
    p->floor_us = p->floor_bytes / (p->device.copy_gbps * 1e3);
    char *txt = render(report_text, p);
    const char *sum = strstr(txt, "-- summary --"), *busy = strstr(txt, "== batch step profile");
    T_CHECK(sum && busy && strstr(txt, "\nmodel: ") < sum && sum < busy, "summary between header and busy line\n%s", txt);
    char want[256];
    double kernels = p->busy_us.median + p->head_us.median;
    snprintf(want, sizeof want, "  tok/s at 4 cols: %.1f without the LM head, %.1f with it (from kernel time)\n", p->tok_s, 4e6 / kernels);
    T_CHECK(strstr(txt, want), "tok/s line '%s'\n%s", want, txt);
    T_CHECK(NEAR(profile_tok_s_head(p), 4e6 / kernels), "tok_s_head %g", profile_tok_s_head(p));
    snprintf(want, sizeof want, "  bound: %.2f × the weight-bytes floor (", kernels / p->floor_us);
    T_CHECK(strstr(txt, want), "bound line '%s'\n%s", want, txt);
    snprintf(want, sizeof want, "  top kinds (shares of the layer kinds' sum): %s %.1f %%", p->by_kind[0].kind,
             100 * p->by_kind[0].share);
    T_CHECK(strstr(txt, want), "top kinds '%s'\n%s", want, txt);
    T_CHECK(strstr(txt, "  action: dead time between dispatches ") && strstr(txt, "fusing dispatches reclaims at most that"),
            "per-dispatch verdict: the fusion action\n%s", txt);
    /* submit/poll verdicts: a small dead time is below the line; a negative one (the timestamps'
     * own cost above the dead time) is no dead time at all */
    struct gap_probe keep = p->gap_probe;
    p->gap_probe.verdict = VERDICT_SUBMIT_POLL;
    const double gaps[2] = {50, -230};
    const char *const says[2] = {"  no action: dead time between dispatches 50.0 µs = ",
                                 "  no action: no dead time between dispatches to reclaim (the pass without "
                                 "timestamps is 230 µs below the kernel sum): fusion buys nothing\n"};
    for (int i = 0; i < 2; i++) {
        p->gap_probe.gaps_us = gaps[i];
        char *t = render(report_text, p);
        T_CHECK(t && strstr(t, says[i]), "submit/poll verdict, dead time %g: '%s'\n%s", gaps[i], says[i], t ? t : "");
        free(t);
    }
    p->gap_probe = keep;
    /* the bandwidth action: the kind furthest in time from the copy bandwidth, ceiling time − bytes ÷ bandwidth */
    const struct prof_kind *mm = &p->by_kind[0];
    double gain = mm->us.median - (double)mm->bytes / (p->device.copy_gbps * 1e3);
    T_CHECK(gain >= 100, "synthetic matmul gain %g", gain);
    snprintf(want, sizeof want, "  action: matmul.bf16 at %.0f %% of copy bandwidth: at most %.0f µs to gain", 100 * mm->bw_share,
             gain);
    T_CHECK(strstr(txt, want), "bandwidth action '%s'\n%s", want, txt);
    free(txt);
    char *md = render(report_markdown, p);
    const char *ms = strstr(md, "### summary\n\n- step: GPU busy ");
    T_CHECK(ms && strstr(md, "| command |") < ms && (!strstr(md, "### gap probe") || ms < strstr(md, "### gap probe")),
            "markdown summary after the header table\n%s", md);
    free(md);
    p->floor_bytes = fb;
    p->floor_us = fu;
}

/* The bound that applies: the larger of bytes ÷ bandwidth and FLOPs ÷ roof, i.e. compute-bound when
 * the intensity passes the balance. */
static void test_bound(void)
{
    static const struct {
        uint64_t flops, bytes;
        double gbps, roof_tflops, step_us;
        enum bound_kind kind;
        double x, intensity, balance;
    } c[] = {
        /* a decode step: 1 GB of weights, 4 FLOP a byte, at 3000 GB/s and 500 TFLOP/s (balance 167) */
        {4000000000ull, 1000000000ull, 3000, 500, 500, BOUND_MEMORY, 500 / (1e9 / 3e6), 4, 500.0 / 3},
        /* a prefill: 1.2 TFLOP over 2.4 GB (500 FLOP a byte): 2.4 ms at the roof, 0.8 ms of bytes */
        {1200000000000ull, 2400000000ull, 3000, 500, 12200, BOUND_COMPUTE, 12200 / 2400.0, 500, 500.0 / 3},
        /* exactly at the balance: memory (the roof must pass the floor) */
        {500000000000ull, 3000000000ull, 3000, 500, 2000, BOUND_MEMORY, 2, 500.0 / 3, 500.0 / 3},
        /* no roof measured: memory, no balance */
        {1200000000000ull, 2400000000ull, 3000, 0, 1600, BOUND_MEMORY, 2, 500, 0},
        /* no FLOPs counted: memory */
        {0, 2400000000ull, 3000, 500, 1600, BOUND_MEMORY, 2, 0, 500.0 / 3},
        /* no bandwidth measured: the roof alone */
        {1200000000000ull, 2400000000ull, 0, 500, 4800, BOUND_COMPUTE, 2, 500, 0},
        /* neither: unknown */
        {0, 0, 0, 0, 100, BOUND_UNKNOWN, 0, 0, 0},
    };
    for (size_t i = 0; i < ARRAY_LEN(c); i++) {
        struct bound b = bound_of(c[i].flops, c[i].bytes, c[i].gbps, c[i].roof_tflops, c[i].step_us);
        T_CHECK(b.kind == c[i].kind && NEAR(b.x, c[i].x) && NEAR(b.intensity, c[i].intensity) &&
                    NEAR(b.balance, c[i].balance),
                "case %zu: %s x %g intensity %g balance %g; expected %s %g %g %g", i, bound_kind_name(b.kind), b.x,
                b.intensity, b.balance, bound_kind_name(c[i].kind), c[i].x, c[i].intensity, c[i].balance);
        T_CHECK(b.kind == bound_pick(b.floor_us, b.roof_us), "case %zu: bound_pick agrees", i);
    }
}

/* With a roof the summary names the bound that applies and why; the action weighs each kind against
 * its own bound (copy bandwidth or roof). */
static void test_summary_roof(void)
{
    struct profile q;
    synth_profile(&q, 91, 9);
    q.floor_bytes = profile_floor_bytes(&q);
    q.floor_us = q.floor_bytes / (q.device.copy_gbps * 1e3);
    uint64_t flops, exec;
    profile_flops(&q, &flops, &exec);
    T_CHECK(flops > 0 && exec > flops, "synthetic FLOPs %llu, executed %llu", (unsigned long long)flops,
            (unsigned long long)exec);
    /* memory-bound: 4 FLOP a byte against a balance in the hundreds */
    q.device.roof_tflops = 500;
    strcpy(q.device.roof_path, "NV coopmat f16");
    profile_by_kind(&q);
    char *txt = render(report_text, &q);
    T_CHECK(strstr(txt, "  bound: ") && strstr(txt, "× the weight-bytes floor") &&
                strstr(txt, "  why memory-bound: ") && strstr(txt, "below the device's balance of ") &&
                strstr(txt, "roof: tensor roof 500 TFLOP/s (NV coopmat f16)"),
            "memory-bound summary\n%s", txt);
    free(txt);
    /* compute-bound: a roof low enough that the FLOPs take longer than the bytes (~85 µs against
     * ~46 µs of weights at the copy bandwidth, in a step of ~400 µs) */
    q.device.roof_tflops = 8;
    strcpy(q.device.roof_path, "f32 FMA");
    profile_by_kind(&q);
    struct bound bd = profile_bound(&q, profile_step_us(&q));
    T_CHECK(bd.kind == BOUND_COMPUTE && bd.x > 1, "compute-bound at 8 TFLOP/s: %s × %g", bound_kind_name(bd.kind), bd.x);
    txt = render(report_text, &q);
    char want[160];
    snprintf(want, sizeof want, "  bound: %.2f × the FMA roof (", bd.x);
    T_CHECK(strstr(txt, want) && strstr(txt, "  why compute-bound: ") && strstr(txt, "above the device's balance of ") &&
                strstr(txt, "roof: FMA roof 8.00 TFLOP/s (f32 FMA: no cooperative matrices)") &&
                strstr(txt, "the gemm executes ") && strstr(txt, "of the FMA roof: at most "),
            "compute-bound summary '%s'\n%s", want, txt);
    free(txt);
    profile_free(&q);
}

/* Advice only from figures beyond noise: one rep (every error unknown) names no kind; an inconclusive
 * gap probe gives no fusion advice. */
static void test_summary_noise(void)
{
    struct profile q;
    synth_profile(&q, 77, 1);
    char *txt = render(report_text, &q);
    T_CHECK(strstr(txt, "-- summary --") && !strstr(txt, "of copy bandwidth: at most"),
            "one rep: no bandwidth action\n%s", txt);
    free(txt);
    q.gap_probe.verdict = VERDICT_INCONCLUSIVE;
    txt = render(report_text, &q);
    T_CHECK(!strstr(txt, "action: dead time") && strstr(txt, "  no advice on fusion: the gap probe is inconclusive"),
            "inconclusive: no fusion advice\n%s", txt);
    free(txt);
    q.gap_probe.ran = false;
    txt = render(report_text, &q);
    T_CHECK(strstr(txt, "  actions: none the figures support beyond noise (--gap-probe"), "no advice at all\n%s", txt);
    free(txt);
    /* no timestamps: no per-kind shares to quote, tok/s from the probe's walls (without the head: 1× wall) */
    q.gap_probe.ran = true;
    q.device.has_timestamps = false;
    q.floor_bytes = profile_floor_bytes(&q);
    q.floor_us = q.floor_bytes / (q.device.copy_gbps * 1e3);
    txt = render(report_text, &q);
    char want[160];
    snprintf(want, sizeof want, "  tok/s at 4 cols: %.1f without the LM head, %.1f with it (from the gap probe's 1× walls)",
             4e6 / q.gap_probe.wall1_us, 4e6 / q.gap_probe.head_wall1_us);
    T_CHECK(strstr(txt, want) && !strstr(txt, "top kinds") && strstr(txt, "(the 1× wall, head included: "),
            "no timestamps: '%s'\n%s", want, txt);
    free(txt);
    profile_free(&q);
}

static void test_units(struct profile *p)
{
    enum report_units u = UNITS_AUTO;
    T_CHECK(report_units_parse("ms", &u) && u == UNITS_MS, "ms");
    T_CHECK(report_units_parse("s", &u) && u == UNITS_S, "s");
    T_CHECK(report_units_parse("µs", &u) && u == UNITS_US && report_units_parse("us", &u) && u == UNITS_US, "us");
    T_CHECK(report_units_parse("auto", &u) && u == UNITS_AUTO, "auto");
    T_CHECK(!report_units_parse("sec", &u) && !report_units_parse("MS", &u) && !report_units_parse("", &u) &&
                !report_units_parse(NULL, &u),
            "bad units accepted");
    char want[128], v[32];
    /* µs: the seed's words and numbers as before */
    char *txt = render_in(false, p, UNITS_US);
    snprintf(want, sizeof want, "GPU busy %.0f µs/step  wall %.0f µs", p->busy_us.median, p->wall_us.median);
    T_CHECK(strstr(txt, want), "µs busy line '%s'\n%s", want, txt);
    free(txt);
    /* ms: the unit replaces µs and nothing else */
    txt = render_in(false, p, UNITS_MS);
    snprintf(want, sizeof want, "GPU busy %s ms/step", fmt_sig3(v, sizeof v, p->busy_us.median / 1e3));
    T_CHECK(strstr(txt, want) && !strstr(txt, "µs/step") && strstr(txt, "-- by kernel --") && strstr(txt, "-- gap probe") &&
                strstr(txt, "  marginal pass ") && strstr(txt, "-- top single dispatches --"),
            "ms report '%s'\n%s", want, txt);
    T_CHECK(!strstr(strstr(txt, "-- by kernel --"), " µs "), "a µs figure left in the ms tables\n%s", txt);
    free(txt);
    char *md = render_in(true, p, UNITS_S);
    T_CHECK(strstr(md, " s/step (median;") && strstr(md, "| kind | n | total s | share | avg s |"), "markdown in s\n%s", md);
    free(md);
    /* auto: by the step's kernel time */
    double busy = p->busy_us.median;
    txt = render(report_text, p);
    T_CHECK(strstr(txt, " µs/step"), "auto below 10 ms: µs");
    free(txt);
    p->busy_us.median = 2e4;
    txt = render(report_text, p);
    T_CHECK(strstr(txt, "GPU busy 20.0 ms/step"), "auto at 20 ms: ms\n%s", txt);
    free(txt);
    p->busy_us.median = 2e7;
    txt = render(report_text, p);
    T_CHECK(strstr(txt, "GPU busy 20.0 s/step"), "auto at 20 s: s\n%s", txt);
    free(txt);
    p->busy_us.median = busy;
}

/* The head's kinds in their own block, the layer kinds' shares of their own sum. */
static void test_head_block(const struct profile *p)
{
    char *txt = render(report_text, p);
    const char *bk = strstr(txt, "-- by kernel --"), *hk = strstr(txt, "-- head kernels"),
               *top = strstr(txt, "-- top single dispatches --");
    T_CHECK(bk && hk && top && bk < hk && hk < top, "head block between by kernel and top\n%s", txt);
    const char *h = bk ? strstr(bk, "  head.") : NULL;
    T_CHECK(h && h > hk && h < top, "no head kind under -- by kernel --\n%s", txt);
    T_CHECK(strstr(txt, "share of the layer kinds' sum, ") && strstr(txt, "(share of the head kinds' sum, "),
            "denominators stated\n%s", txt);
    free(txt);
    char *md = render(report_markdown, p);
    T_CHECK(strstr(md, "### by kernel") < strstr(md, "### LM head kernels"), "markdown head table\n%s", md);
    free(md);
}

/* --logits on a shard without the head, --spec off the last stage: the header tells what ran. */
static void test_logits_no_head(struct profile *p)
{
    int b = p->shard.b;
    p->shard.b = 8;
    char *txt = render(report_text, p);
    T_CHECK(strstr(txt, " logits=false slots=") &&
                strstr(txt, "logits: requested, but this shard (layers 0:8 of 16) has no LM head"),
            "no-head header\n%s", txt);
    free(txt);
    txt = render(report_text_header, p);
    T_CHECK(strstr(txt, ", logits=false, "), "width-list header\n%s", txt);
    free(txt);
    char *md = render(report_markdown, p);
    T_CHECK(strstr(md, "logits=false; logits requested, but this shard has no LM head"), "markdown no-head\n%s", md);
    free(md);
    char plan[16];
    snprintf(plan, sizeof plan, "%s", p->shape.plan);
    strcpy(p->shape.plan, "spec");
    p->shape.draft = 2;
    txt = render(report_text, p);
    T_CHECK(!strstr(txt, "gets a logit") && strstr(txt, "no logits here"), "spec off the last stage\n%s", txt);
    free(txt);
    p->shard.b = b;
    txt = render(report_text, p);
    T_CHECK(strstr(txt, "every column gets a logit") && strstr(txt, " logits=true "), "spec on the last stage\n%s", txt);
    free(txt);
    snprintf(p->shape.plan, sizeof p->shape.plan, "%s", plan);
    p->shape.draft = 0;
}

int main(int argc, char **argv)
{
    t_init(argc, argv);
    const char *dir = t_tmpdir();
    T_CHECK(dir != NULL, "tmpdir");
    if (!dir) return t_finish();
    struct profile p;
    synth_profile(&p, 7, 5);
    T_CASE("timing", "", test_timing());
    T_CASE("rank_test", "", test_rank_test());
    T_CASE("spread_and_noise", "", test_spread_and_noise());
    T_CASE("sig3", "", test_sig3());
    T_CASE("crossover", "", test_crossover());
    T_CASE("crossover_same_kernels", "", test_crossover_same_kernels());
    T_CASE("csv_html", "output", test_csv_html());
    T_CASE("attribution", "", test_attribution());
    T_CASE("verdicts_need_signal", "", test_verdicts_need_signal());
    T_CASE("floor", "", test_floor());
    T_CASE("totals_and_kinds", "", test_totals_and_kinds(&p));
    T_CASE("gap_probe", "", test_gap_probe());
    T_CASE("text", "output", test_text(&p));
    T_CASE("markdown", "output", test_markdown(&p));
    T_CASE("json", "output", test_json(&p, dir));
    T_CASE("trace", "output", test_trace(&p, dir));
    T_CASE("tune", "output", test_tune(&p, dir));
    T_CASE("precision", "output", test_precision(&p, dir));
    T_CASE("gemm_path", "output", test_gemm_path(&p, dir));
    T_CASE("summary", "output", test_summary(&p));
    T_CASE("summary_noise", "output", test_summary_noise());
    T_CASE("bound", "", test_bound());
    T_CASE("summary_roof", "output", test_summary_roof());
    T_CASE("units", "output", test_units(&p));
    T_CASE("head_block", "output", test_head_block(&p));
    T_CASE("logits_no_head", "output", test_logits_no_head(&p));
    profile_free(&p);
    return t_finish();
}
