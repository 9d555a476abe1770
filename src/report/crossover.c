/* crossover.c - the crossover table of a width list or --plans: one row per width × plan and the
 * faster plan per width. */
#include "profile.h"
#include "report_fmt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a over one dispatch's kernel variant: its pipeline (its kind when the file names none) and
 * its specialisation constants. */
static uint64_t sig_add(uint64_t h, const struct prof_dispatch *d)
{
    const char *name = d->pipeline[0] ? d->pipeline : d->kind;
    for (const char *c = name; *c; c++) h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
    h = (h ^ 0xff) * 0x100000001b3ull;
    for (int i = 0; i < d->n_spec; i++) h = (h ^ d->spec[i]) * 0x100000001b3ull;
    return h;
}

void crossover_row_from(struct crossover_row *row, const struct profile *p)
{
    const struct gap_probe *g = &p->gap_probe;
    row->cols = p->shape.cols;
    snprintf(row->plan, sizeof row->plan, "%s%s", p->shape.plan_auto ? "auto -> " : "", p->shape.plan);
    row->kernels_sig = row->matrix_sig = 0xcbf29ce484222325ull;
    for (int i = 0; i < p->n_dispatches; i++) {
        row->kernels_sig = sig_add(row->kernels_sig, &p->dispatches[i]);
        if (p->dispatches[i].bytes) row->matrix_sig = sig_add(row->matrix_sig, &p->dispatches[i]);
    }
    if (p->n_dispatches == 0) row->kernels_sig = row->matrix_sig = 0; /* unknown: matches nothing */
    row->ok = true;
    if (g->ran)
        row->step_us = g->n_reps ? est_median(g->head ? &g->hw1 : &g->w1)
                                 : est_exact(g->head ? g->head_wall1_us : g->wall1_us);
    else
        row->step_us = est_median(&p->wall_us);
    row->busy_us = p->busy_us.median + (p->head_us.n_reps ? p->head_us.median : 0);
    row->tok_s = safe_div(p->shape.cols * 1e6, row->step_us.v);
    row->floor_us = p->floor_us;
    row->roof_us = profile_bound(p, row->step_us.v).roof_us;
}

/* The "× floor/roof" cell: the step over the bound that applies, and which ("2.46 floor",
 * "1.31 roof"); "n/a" when neither is known. */
static const char *bound_cell(char *buf, size_t size, const struct crossover_row *r)
{
    enum bound_kind b = bound_pick(r->floor_us, r->roof_us);
    if (b == BOUND_COMPUTE)
        snprintf(buf, size, "%.2f roof", safe_div(r->step_us.v, r->roof_us));
    else if (b == BOUND_MEMORY)
        snprintf(buf, size, "%.2f floor", safe_div(r->step_us.v, r->floor_us));
    else
        snprintf(buf, size, "n/a");
    return buf;
}

/* The first row of rows[i]'s width that ran the very kernels rows[i] ran (rows[i] itself when none). */
static const struct crossover_row *kernels_rep(const struct crossover_row *rows, int i)
{
    for (int j = 0; j < i; j++)
        if (rows[j].cols == rows[i].cols && rows[j].ok && rows[i].kernels_sig &&
            rows[j].kernels_sig == rows[i].kernels_sig)
            return &rows[j];
    return &rows[i];
}

/* On the first row of a width: the plan with the smallest step there, and whether the runner-up
 * is within noise of it; "" on the other rows. Plans that ran the very same kernels are one choice
 * (the first of them stands for it): with one choice left there is no winner to name. */
static void faster_plan(const struct crossover_row *rows, int n, int i, char *buf, size_t size)
{
    const struct crossover_row *best = NULL, *second = NULL, *twin = NULL;
    buf[0] = 0;
    for (int j = 0; j < i; j++)
        if (rows[j].cols == rows[i].cols) return;
    struct est best_us = {0}, second_us = {0};
    for (int j = 0; j < n; j++) {
        if (rows[j].cols != rows[i].cols || !rows[j].ok) continue;
        if (kernels_rep(rows, j) != &rows[j]) {
            twin = &rows[j];
            continue;
        }
        struct est us = rows[j].step_us; /* the choice's step: its fastest row */
        for (int k = j + 1; k < n; k++)
            if (rows[k].cols == rows[j].cols && rows[k].ok && kernels_rep(rows, k) == &rows[j] &&
                rows[k].step_us.v < us.v)
                us = rows[k].step_us;
        if (!best || us.v < best_us.v) {
            second = best;
            second_us = best_us;
            best = &rows[j];
            best_us = us;
        } else if (!second || us.v < second_us.v) {
            second = &rows[j];
            second_us = us;
        }
    }
    if (!best) return;
    if (!second && twin) {
        int twins = 0;
        for (int j = 0; j < n; j++) twins += rows[j].cols == rows[i].cols && rows[j].ok && &rows[j] != best;
        if (twins > 1)
            snprintf(buf, size, "none: every plan ran the same kernels");
        else
            snprintf(buf, size, "none: %s and %s ran the same kernels", best->plan, twin->plan);
        return;
    }
    if (second && est_within_noise(est_sub(second_us, best_us)))
        snprintf(buf, size, "%s (within noise of %s)", best->plan, second->plan);
    else
        snprintf(buf, size, "%s", best->plan);
}

void crossover_same_kernels(const struct crossover_row *rows, int i, char *buf, size_t size)
{
    buf[0] = 0;
    if (!rows[i].ok) return;
    for (int j = 0; j < i; j++) {
        if (rows[j].cols != rows[i].cols || !rows[j].ok || !rows[i].kernels_sig) continue;
        if (rows[j].kernels_sig == rows[i].kernels_sig) {
            snprintf(buf, size, "same kernels as %s", rows[j].plan);
            return;
        }
        if (rows[j].matrix_sig == rows[i].matrix_sig) snprintf(buf, size, "same matrix kernels as %s", rows[j].plan);
    }
}

void report_crossover(FILE *out, const struct crossover_row *rows, int n, bool markdown)
{
    report_crossover_in(out, rows, n, markdown, UNITS_US);
}

void report_crossover_in(FILE *out, const struct crossover_row *rows, int n, bool markdown,
                         enum report_units units)
{
    double slowest = 0; /* auto: one unit for the table, by its slowest step */
    for (int i = 0; i < n; i++)
        if (rows[i].ok) slowest = MAX(slowest, rows[i].step_us.v);
    struct unit un = unit_for(units, slowest);
    const struct unit *u = &un;
    char hs[32], hb[32];
    snprintf(hs, sizeof hs, "step %s", u->name);
    snprintf(hb, sizeof hb, "busy %s", u->name);
    if (markdown)
        fprintf(out, "### plan crossover\n\n| width | plan | %s | ± | %s | tok/s | × "
                     "floor/roof | faster | kernels |\n"
                     "|---:|---|---:|---|---:|---:|---:|---|---|\n", hs, hb);
    else
        fprintf(out,
                "-- plan crossover (step: gap probe's 1× wall, no timestamps, median ± its standard error; "
                "busy: kernel sum with the head; × floor/roof: step ÷ the bound that applies, the weight-bytes "
                "floor or the tensor roof) --\n"
                "  %5s  %-13s %10s %-18s %10s %12s %12s  %s\n",
                "width", "plan", hs, "±", hb, "tok/s", "× floor/roof", "faster plan");
    for (int i = 0; i < n; i++) {
        const struct crossover_row *r = &rows[i];
        char faster[96], st[32], er[64], bz[32], fl[32], same[64];
        faster_plan(rows, n, i, faster, sizeof faster);
        crossover_same_kernels(rows, i, same, sizeof same);
        if (!r->ok) {
            if (markdown)
                fprintf(out, "| %d | %s | failed: %s | | | | | %s | |\n", r->cols, r->plan, r->why,
                        faster);
            else
                fprintf(out, "  %5d  %-13s failed: %s%s%s\n", r->cols, r->plan, r->why,
                        faster[0] ? "  faster: " : "", faster);
            continue;
        }
        bound_cell(fl, sizeof fl, r);
        fmt_t(st, sizeof st, u, r->step_us.v, -1);
        fmt_err(er, sizeof er, u, r->step_us);
        const char *busy = r->busy_us > 0 ? fmt_t(bz, sizeof bz, u, r->busy_us, -1) : "n/a";
        const char *flr = fl;
        if (markdown)
            fprintf(out, "| %d | %s | %s | %s | %s | %.0f | %s | %s | %s |\n", r->cols, r->plan, st, er,
                    busy, r->tok_s, flr, faster, same);
        else
            fprintf(out, "  %5d  %-13s %10s %-18s %10s %12.0f %12s  %s%s%s\n", r->cols, r->plan, st, er,
                    busy, r->tok_s, flr, faster, faster[0] && same[0] ? "  " : "", same[0] ? same : "");
    }
    if (markdown) fprintf(out, "\n");
}
