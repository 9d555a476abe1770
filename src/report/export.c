/* export.c - --csv: every table of a run as CSV in one file, and the one function that writes a
 * finished report file (--csv, --html).
 *
 * CSV layout: sections, one per table, separated by a blank line; each section starts with its
 * header row; the first column of every row, header included, names the table:
 *   by_kind    one row per kind (cols, plan say which configuration; a width list gives a
 *              by_kind and a dispatch section per configuration)
 *   dispatch   every dispatch, with its rank by median time (rank 1 = the top single dispatch)
 *   crossover  one row per width × plan of a width list
 *   compare    one row per kind both runs have, then the totals (medians, µs/step)
 * and for --stages (pipeline.h):
 *   pipeline_stage  one row per stage of the given split, then of the balanced split (split says
 *              which: even, given, balanced); step is the stage's median with p10 / p90,
 *              of_slowest its share of the split's slowest step, marginal ± its standard error,
 *              predicted its predicted step (Σ of its layers' costs + fixed), bottleneck 1 on the
 *              split's slowest stage, fixed the fixed part charged to it by role (step − marginal
 *              of the split asked for: first, middle median, last)
 *   pipeline   one row per split: the bottleneck stage, the slowest and summed steps, the
 *              throughput bound against the ideal (tok/s), the bubble (0..1), the largest
 *              predicted step, the hand-off a boundary (bytes, µs over the measured d2h GB/s),
 *              the fixed parts by role (middle empty for K < 3)
 *   layer_cost one row per layer: its cost ± its error, how it was measured (stage_shares or
 *              one_layer_shards), the stage holding it in the split asked for (given_stage, an
 *              even split included) and in the balanced split
 * Times are µs per step (medians unless the column says p10 / p90), bandwidths GB/s, FLOP rates
 * TFLOP/s, shares 0..1 (by_kind: of the layer kinds' summed medians, head kinds of the head kinds';
 * roof_share: of the measured arithmetic roof). crossover: x_floor and x_roof are the step over
 * each bound, bound says which applies (memory, compute, unknown). Columns are only ever added at
 * the end of a section's rows.
 * Text fields are quoted when they hold a comma, a quote or a newline (RFC 4180). */
#include "outfile.h"
#include "pipeline.h"
#include "profile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A CSV field: quoted (quotes doubled) when it needs to be. */
static void csv_str(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"') fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

/* A number to six significant digits (timings are not more precise); empty when not finite. */
static void csv_num(FILE *out, double v)
{
    if (isfinite(v)) fprintf(out, "%.6g", v);
}

/* n numbers, comma-separated (NAN: an empty field); CSV_NUMS counts its arguments itself. */
static void csv_nums(FILE *out, const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i) fputc(',', out);
        csv_num(out, v[i]);
    }
}
#define CSV_NUMS(out, ...) \
    csv_nums((out), (const double[]){__VA_ARGS__}, sizeof((const double[]){__VA_ARGS__}) / sizeof(double))

static double ratio(double a, double b)
{
    return b != 0 ? a / b : 0;
}

static void csv_by_kind(FILE *out, const struct profile *p)
{
    fprintf(
        out,
        "table,cols,plan,kind,n,median_us,p10_us,p90_us,share,gbps,copy_share,bytes,kv_bytes,flops,tflops,"
        "roof_share\n");
    for (int k = 0; k < p->n_kinds; k++) {
        const struct prof_kind *pk = &p->by_kind[k];
        fprintf(out, "by_kind,%d,", p->shape.cols);
        csv_str(out, p->shape.plan);
        fputc(',', out);
        csv_str(out, pk->kind);
        fprintf(out, ",%d,", pk->n);
        CSV_NUMS(out, pk->us.median, pk->us.p10, pk->us.p90, pk->share, pk->gbps, pk->bw_share);
        fprintf(out, ",%llu,%llu,%llu,", (unsigned long long)pk->bytes, (unsigned long long)pk->kv_bytes,
                (unsigned long long)pk->flops);
        CSV_NUMS(out, pk->tflops, pk->roof_share);
        fputc('\n', out);
    }
}

static const struct profile *sort_p; /* qsort has no context argument */

static int cmp_median_desc(const void *a, const void *b)
{
    double x = sort_p->dispatches[*(const int *)a].us.median,
           y = sort_p->dispatches[*(const int *)b].us.median;
    return x < y ? 1 : x > y ? -1 : *(const int *)a - *(const int *)b;
}

static void csv_dispatches(FILE *out, const struct profile *p)
{
    fprintf(
        out,
        "table,cols,plan,rank,index,layer,op,kind,gx,gy,gz,median_us,p10_us,p90_us,share,bytes\n");
    int n = p->n_dispatches;
    int *order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order),
        *rank = malloc((size_t)(n > 0 ? n : 1) * sizeof *rank);
    CHECK(order && rank);
    for (int i = 0; i < n; i++)
        order[i] = i;
    sort_p = p;
    qsort(order, (size_t)n, sizeof *order, cmp_median_desc);
    for (int i = 0; i < n; i++)
        rank[order[i]] = i + 1;
    for (int i = 0; i < n; i++) {
        const struct prof_dispatch *d = &p->dispatches[i];
        double whole = prof_kind_is_head(d->kind) ? p->head_us.median : p->busy_us.median;
        fprintf(out, "dispatch,%d,", p->shape.cols);
        csv_str(out, p->shape.plan);
        fprintf(out, ",%d,%d,%d,", rank[i], d->index, d->layer);
        csv_str(out, d->op);
        fputc(',', out);
        csv_str(out, d->kind);
        fprintf(out, ",%u,%u,%u,", d->groups[0], d->groups[1], d->groups[2]);
        CSV_NUMS(out, d->us.median, d->us.p10, d->us.p90, ratio(d->us.median, whole));
        fprintf(out, ",%llu\n", (unsigned long long)d->bytes);
    }
    free(order);
    free(rank);
}

void csv_profile(FILE *out, const struct profile *p)
{
    if (!p->device.has_timestamps || p->timing == TIMING_NONE) return;
    if (ftell(out) > 0) fputc('\n', out);
    csv_by_kind(out, p);
    fputc('\n', out);
    csv_dispatches(out, p);
}

void csv_crossover(FILE *out, const struct crossover_row *rows, int n)
{
    if (ftell(out) > 0) fputc('\n', out);
    fprintf(out, "table,cols,plan,step_us,step_err_us,busy_us,tok_s,x_floor,same_kernels,failed,x_roof,bound\n");
    for (int i = 0; i < n; i++) {
        const struct crossover_row *r = &rows[i];
        char same[64];
        crossover_same_kernels(rows, i, same, sizeof same);
        fprintf(out, "crossover,%d,", r->cols);
        csv_str(out, r->plan);
        fputc(',', out);
        if (r->ok)
            CSV_NUMS(out, r->step_us.v, r->step_us.u, r->busy_us > 0 ? r->busy_us : NAN, r->tok_s,
                     r->floor_us > 0 ? r->step_us.v / r->floor_us : NAN);
        else
            fputs(",,,,", out);
        fputc(',', out);
        csv_str(out, same);
        fputc(',', out);
        csv_str(out, r->ok ? "" : r->why);
        fputc(',', out);
        if (r->ok && r->roof_us > 0) csv_num(out, r->step_us.v / r->roof_us);
        fprintf(out, ",%s\n", r->ok ? bound_kind_name(bound_pick(r->floor_us, r->roof_us)) : "");
    }
}

static void csv_compare_row(FILE *out, const char *name, const struct timing *b,
                            const struct timing *c)
{
    fprintf(out, "compare,");
    csv_str(out, name);
    fputc(',', out);
    CSV_NUMS(out, b->median, c->median, c->median - b->median,
             b->median > 0 ? 100.0 * (c->median / b->median - 1.0) : NAN);
    fputc('\n', out);
}

void csv_compare(FILE *out, const struct profile *base, const struct profile *cur)
{
    if (ftell(out) > 0) fputc('\n', out);
    fprintf(out, "table,kind,base_us,current_us,delta_us,delta_pct\n");
    for (int i = 0; i < base->n_kinds; i++)
        for (int j = 0; j < cur->n_kinds; j++)
            if (!strcmp(base->by_kind[i].kind, cur->by_kind[j].kind))
                csv_compare_row(out, base->by_kind[i].kind, &base->by_kind[i].us,
                                &cur->by_kind[j].us);
    bool ts = base->device.has_timestamps && cur->device.has_timestamps;
    csv_compare_row(out, ts ? "TOTAL (GPU busy)" : "TOTAL (wall; no timestamps)",
                    ts ? &base->busy_us : &base->wall_us, ts ? &cur->busy_us : &cur->wall_us);
    if (ts && base->head_us.n_reps > 0 && cur->head_us.n_reps > 0)
        csv_compare_row(out, "LM head", &base->head_us, &cur->head_us);
}


static void csv_stages(FILE *out, const struct pipeline *p, const struct pipeline_split *s)
{
    for (int i = 0; i < s->k; i++) {
        const struct pipeline_stage *st = pipeline_split_stage(p, s, i);
        const struct timing *t = pipeline_stage_wall(st);
        fprintf(out, "pipeline_stage,%s,%d,%d,%d,", s->how, i, s->bounds[i], s->bounds[i + 1]);
        CSV_NUMS(out, st->step_us.v, t->p10, t->p90, ratio(st->step_us.v, s->max_us), st->marginal_us.v,
                 st->marginal_us.u, p->layer_cost ? st->predicted_us : NAN);
        fprintf(out, ",%d,", i == s->bottleneck);
        CSV_NUMS(out, p->fixed.known ? st->fixed_us : NAN);
        fputc('\n', out);
    }
}

static void csv_split(FILE *out, const struct pipeline *p, const struct pipeline_split *s)
{
    char split[512];
    pipeline_split_text(s, split, sizeof split);
    fprintf(out, "pipeline,%s,%d,", s->how, s->k);
    csv_str(out, split);
    fprintf(out, ",%d,%d,", p->cols, s->bottleneck);
    CSV_NUMS(out, s->max_us, s->sum_us, s->tok_s_bound, s->tok_s_ideal, s->bubble,
             p->layer_cost ? s->predicted_max_us : NAN);
    fprintf(out, ",%llu,", (unsigned long long)p->handoff_bytes);
    CSV_NUMS(out, p->handoff_us > 0 ? p->handoff_us : NAN, p->d2h_gbps > 0 ? p->d2h_gbps : NAN);
    fprintf(out, ",%d,", s == &p->balanced && p->balanced_is_given);
    const struct pipeline_fixed *f = &p->fixed;
    CSV_NUMS(out, f->known ? f->first : NAN, f->known && f->k >= 3 ? f->middle : NAN, f->known ? f->last : NAN);
    fputc('\n', out);
}

/* The stage of split s holding layer l. */
static int stage_of(const struct pipeline_split *s, int l)
{
    int i = 0;
    while (i + 1 < s->k && l >= s->bounds[i + 1])
        i++;
    return i;
}

void csv_pipeline(FILE *out, const struct pipeline *p)
{
    const struct pipeline_split *g = &p->given, *b = &p->balanced;
    if (ftell(out) > 0) fputc('\n', out);
    fprintf(out, "table,split,stage,a,b,step_us,p10_us,p90_us,of_slowest,marginal_us,marginal_err_us,predicted_us,"
            "bottleneck,fixed_us\n");
    csv_stages(out, p, g);
    csv_stages(out, p, b);
    fprintf(out, "\ntable,split,k,stages,cols,bottleneck,max_us,sum_us,tok_s_bound,tok_s_ideal,bubble,"
            "predicted_max_us,handoff_bytes,handoff_us,d2h_gbps,same_as_given,fixed_first_us,fixed_middle_us,"
            "fixed_last_us\n");
    csv_split(out, p, g);
    if (b->k) csv_split(out, p, b);
    if (!p->layer_cost) return;
    fprintf(out, "\ntable,layer,cost_us,cost_err_us,from,given_stage,balanced_stage\n");
    for (int l = 0; l < p->n_layers; l++) {
        fprintf(out, "layer_cost,%d,", l);
        CSV_NUMS(out, p->layer_cost[l].v, p->layer_cost[l].u);
        fprintf(out, ",%s,%d,", p->layer_cost_shares ? "stage_shares" : "one_layer_shards", stage_of(g, l));
        if (b->k) fprintf(out, "%d", stage_of(b, l));
        fputc('\n', out);
    }
}
