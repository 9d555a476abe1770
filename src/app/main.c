/* main.c - lfm2-profile-stage: args -> model source -> description -> shard -> upload -> plan ->
 * executor -> report (docs/design.md, Data flow). Only this file turns a status into an exit code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "engine.h"
#include "golden.h"
#include "input.h"
#include "kernels.h"
#include "model.h"
#include "profile.h"
#include "select.h"
#include "profiler.h"
#include "session.h"
#include "stages.h"
#include "suggest.h"
#include "weights.h"

static int fail(int st, const struct err *e)
{
    fprintf(stderr, "lfm2-profile-stage: %s\n", e->msg);
    return st;
}

/* Every exit goes through here: standard output is flushed and closed, and a report that could
 * not be written is exit 1 (docs/outputs.md); an earlier failure keeps its own status. */
static int finish(int st, const struct err *e)
{
    struct err oe = {{0}};
    int ost = outfile_stdout_close(&oe);
    if (st) return fail(st, e);
    return ost ? fail(ost, &oe) : 0;
}

static void list_models(void)
{
    printf("built-in models (real shapes, random weights made on the GPU; --dtype, --seed):\n");
    for (int i = 0; i < n_builtin_models; i++) printf("  %-14s %s\n", builtin_models[i].name, builtin_models[i].about);
}

/* The model and shard the options name: a built-in or a file source. */
struct loaded {
    struct app_model model;
    struct shard s;
    bool have_shard;
};

static int load_model(const struct options *o, struct loaded *m, struct err *e)
{
    memset(m, 0, sizeof *m);
    if (o->model && !o->layers_set && !o->full) return err_set(e, ST_USAGE, "--layers a:b or --full is required");
    int st = app_model_open(o, &m->model, e);
    const struct model_desc *d = &m->model.d;
    if (!st) st = app_shard_bind(&m->model, o->full ? 0 : o->a, o->full ? d->n_layers : o->b, &m->s, e);
    m->have_shard = !st;
    return st;
}

static void unload_model(struct loaded *m)
{
    if (m->have_shard) shard_free(&m->s);
    app_model_close(&m->model);
}

static void print_load(const struct gpu *g, const struct loaded *m, const struct dev_weights *w)
{
    const struct model_desc *d = &m->model.d;
    if (g->timestamp_valid_bits)
        printf("device   %s (%s), timestamps: period %.3f ns, %u valid bits\n", g->props.deviceName, g->driver_name,
               g->timestamp_period, g->timestamp_valid_bits);
    else
        printf("device   %s (%s), timestamps: not supported\n", g->props.deviceName, g->driver_name);
    printf("model    %s: %s, %d layers, H %d, vocab %d, ffn %d, heads %d/%d x %d\n", d->source, family_name(d->family),
           d->n_layers, d->hidden, d->vocab, d->ffn, d->n_heads, d->n_kv_heads, d->head_dim);
    printf("shard    layers %d:%d%s%s\n", m->s.a, m->s.b, m->s.first ? " + embedding" : "",
           m->s.last ? " + final norm and head" : "");
    printf("uploaded %d tensors, %.1f MB as stored, %.1f MB of device memory in %.0f ms\n", m->s.n,
           (double)m->s.bytes / 1e6, (double)g->allocated[GPU_MEM_DEVICE] / 1e6, w->upload_ms);
    char what[256];
    int n_ignored = m->model.have_src ? model_ignored(&m->model.src, d, what, sizeof what) : 0;
    if (n_ignored) printf("ignored  %d file tensors, not part of the decoder: %s\n", n_ignored, what);
}

/* The plans this build profiles; the others are a clear "not supported yet". */
static int plan_check(enum plan_kind k, struct err *e)
{
    if (k == PLAN_BATCH || k == PLAN_WIDE || k == PLAN_SPEC) return ST_OK;
    return err_set(e, ST_USAGE, "--%s is not supported yet (the batch, wide and spec plans exist)",
                   plan_kind_name(k));
}

/* A plan named on the command line that runs its matrix products as the batch plan at this width
 * (--wide below the gemm's width): a note on stderr (the report's header says it too). */
static void note_wide_as_batch(const struct options *o, enum plan_kind plan, int cols, const struct model_desc *d)
{
    int min = sel_gemm_min_cols(&o->tune, d->dtype);
    if (sel_wide_as_batch(plan, cols, min))
        fprintf(stderr, "note: plan wide at %d cols: below %d columns (%s weights) its matrix products run the batch "
                "plan's kernels (plan auto runs batch here)\n", cols, min, dtype_name(d->dtype));
}

/* --cols list / --plans: one profile per width × plan, then the crossover table (one row each);
 * the header once, each configuration's full report only with --verbose, a progress line on
 * stderr naming width and plan. A plan that fails (not supported yet, too wide for the device) is
 * a row saying so; the run fails only when every row failed. *first_ok receives the first profile
 * that ran (for --html; the caller frees it). */
static int run_crossover(struct gpu *g, const struct loaded *m, const struct dev_weights *w, const struct options *o,
                         struct crossover_row *rows, int *n_rows, struct profile *first_ok, FILE *csv,
                         struct err *e)
{
    int n = 0, n_ok = 0, first_st = ST_OK, total = o->n_cols * o->n_plans;
    struct err first = {{0}};
    for (int i = 0; i < o->n_cols; i++)
        for (int k = 0; k < o->n_plans; k++) {
            struct crossover_row *r = &rows[n++];
            memset(r, 0, sizeof *r);
            r->cols = o->col_list[i];
            struct profile p = {0};
            struct err pe = {{0}};
            struct profile_request rq = app_request(o, o->col_list[i], o->plans[k], &m->model.d);
            snprintf(r->plan, sizeof r->plan, "%s%s", o->plans[k] == CLI_PLAN_AUTO ? "auto -> " : "",
                     plan_kind_name(rq.plan));
            fprintf(stderr, "profiling %d/%d: %d cols, plan %s\n", n, total, r->cols, r->plan);
            note_wide_as_batch(o, rq.plan, rq.cols, &m->model.d);
            int st = plan_check(rq.plan, &pe);
            if (!st) st = profile_run(g, &m->model.d, &m->s, w, &rq, &p, &pe);
            if (!st) {
                if (o->verbose) (o->markdown ? report_markdown_in : report_text_in)(stdout, &p, o->units);
                else if (n_ok == 0) (o->markdown ? report_markdown_header : report_text_header)(stdout, &p);
                crossover_row_from(r, &p);
                if (csv) csv_profile(csv, &p);
                if (n_ok++ == 0) {
                    *first_ok = p;
                    memset(&p, 0, sizeof p);
                }
            } else {
                snprintf(r->why, sizeof r->why, "%.255s", pe.msg);
                fprintf(stderr, "lfm2-profile-stage: %d cols, plan %s: %s\n", r->cols, r->plan, pe.msg);
                if (!first_st) {
                    first_st = st;
                    first = pe;
                }
            }
            profile_free(&p);
        }
    *n_rows = n;
    report_crossover_in(stdout, rows, n, o->markdown, o->units);
    if (n_ok == 0 && first_st) {
        *e = first;
        return first_st;
    }
    return ST_OK;
}

/* A live --compare: the run's model, shard and shape (*id) against the baseline's before anything
 * loads or runs, so a wrong baseline exits 2 at once naming the first difference; with g, the
 * device too (once open, before the upload). */
static int compare_precheck(const struct profile *base, const struct loaded *m, const struct gpu *g,
                            const struct options *o, struct err *e)
{
    struct profile id = {0};
    struct profile_request rq = app_request(o, o->cols, o->plans[0], &m->model.d);
    profile_identity(&m->model.d, &m->s, &rq, &id); /* --precision too (app_request) */
    if (g) {
        snprintf(id.device.name, sizeof id.device.name, "%s", g->props.deviceName);
        id.device.has_timestamps = g->timestamp_valid_bits > 0;
    }
    int st = compare_identity(base, &id, g != NULL, e);
    return st ? err_wrap(e, st, "--compare %s", o->compare) : ST_OK;
}

/* What a run hands to --csv and --html: its profile (the first of a width list), the crossover
 * rows of a list, the baseline of a comparison and the comparison's text. */
struct outputs {
    FILE *csv; /* a memory stream the tables are appended to (NULL: no --csv) */
    char *csv_buf;
    size_t csv_len;
    const struct crossover_row *rows;
    int n_rows;
    const struct profile *base;
    const char *compare_text;
};

/* The comparison: printed to out, its text kept for --html (*text, caller frees) and its table
 * appended to --csv. */
static int run_compare(FILE *out, const struct options *o, const struct profile *base, const struct profile *cur,
                       const char *json_path, struct outputs *x, char **text, struct err *e)
{
    size_t len = 0;
    FILE *mem = open_memstream(text, &len);
    if (!mem) return err_set(e, ST_RUNTIME, "out of memory for the comparison");
    int st = compare_profiles_fmt(mem, base, cur, o->threshold, o->markdown, json_path, e);
    fclose(mem);
    fputs(*text, out);
    if (st == ST_OK || st == ST_REGRESSION || st == ST_UNDECIDED) {
        if (x->csv) csv_compare(x->csv, base, cur);
        x->base = base;
        x->compare_text = *text;
    }
    return st;
}

/* --csv and --html, once the run has its figures. A comparison's exit status wins over ST_OK. */
static int write_outputs(const struct options *o, const struct profile *p, struct outputs *x, int st,
                         struct err *e)
{
    int wst = ST_OK;
    if (x->csv) {
        if (x->rows) csv_crossover(x->csv, x->rows, x->n_rows);
        fclose(x->csv);
        x->csv = NULL;
        wst = outfile_save("--csv", o->csv, x->csv_buf, x->csv_len, e);
    }
    if (!wst && o->html && p) {
        char *buf = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&buf, &len);
        if (!mem) return err_set(e, ST_RUNTIME, "out of memory for --html");
        report_html(mem, p, x->rows, x->n_rows, x->base, x->compare_text);
        fclose(mem);
        wst = outfile_save("--html", o->html, buf, len, e);
        free(buf);
    }
    return wst ? wst : st;
}

static int outputs_open(const struct options *o, struct outputs *x, struct err *e)
{
    memset(x, 0, sizeof *x);
    if (o->csv && !(x->csv = open_memstream(&x->csv_buf, &x->csv_len)))
        return err_set(e, ST_RUNTIME, "out of memory for --csv");
    return ST_OK;
}

static void outputs_close(struct outputs *x)
{
    if (x->csv) fclose(x->csv);
    free(x->csv_buf);
}

static int run(const struct options *o, struct err *e)
{
    if (stages_wanted(o)) return stages_run(o, e);
    struct outputs x;
    int st = outputs_open(o, &x, e);
    if (st) return st;
    if (o->compare && o->current) {
        struct profile base = {0}, cur = {0};
        char *text = NULL;
        st = o->json ? outfile_check("--json", o->json, e) : ST_OK;
        if (!st) st = report_json_read(o->compare, &base, e);
        if (!st) st = report_json_read(o->current, &cur, e);
        if (!st && o->csv) st = outfile_check("--csv", o->csv, e);
        if (!st && o->html) st = outfile_check("--html", o->html, e);
        if (!st) st = run_compare(stdout, o, &base, &cur, o->json, &x, &text, e);
        if (st == ST_OK || st == ST_REGRESSION || st == ST_UNDECIDED) {
            struct err we = {{0}};
            int wst = write_outputs(o, &cur, &x, st, &we);
            if (wst != st) {
                *e = we;
                st = wst;
            }
        }
        free(text);
        outputs_close(&x);
        profile_free(&base);
        profile_free(&cur);
        return st;
    }
    bool many = o->n_cols > 1 || o->n_plans > 1;
    if (!many && !o->load_only && o->plans[0] != CLI_PLAN_AUTO) {
        int st = plan_check(o->plans[0], e);
        if (st) return st;
    }
    struct loaded m;
    st = load_model(o, &m, e);
    struct gpu g;
    bool gpu_up = false;
    struct dev_weights w = {0};
    struct profile p = {0};
    struct profile base = {0};
    /* --json -: stdout carries the JSON alone, the text report goes to stderr */
    bool json_stdout = o->json && !strcmp(o->json, "-");
    FILE *report_out = json_stdout || (o->trace && !strcmp(o->trace, "-")) ? stderr : stdout;
    if (!st && (o->golden || !o->load_only) && !family_plan_get(m.model.d.family))
        st = err_set(e, ST_USAGE, "%s: %s is not supported yet for the %s family (only --load-only is)", m.model.d.source,
                     o->golden ? "--golden" : "profiling", family_name(m.model.d.family));
    if (!st && (o->golden || !o->load_only)) st = k_model_check(&m.model.d, &m.s, e);
    /* every input file and output path is checked before the GPU is touched */
    if (!st && o->compare) st = report_json_read(o->compare, &base, e);
    bool live_compare = o->compare && !many && !o->load_only && !o->golden;
    if (!st && live_compare) st = compare_precheck(&base, &m, NULL, o, e);
    if (!st && o->golden) st = golden_validate(o->golden, &m.model.d, &m.s, e);
    if (!st && o->golden && o->shape_set)
        fprintf(stderr, "note: --golden runs the golden's own shapes; --cols, --slots, --pos and --logits are ignored\n");
    if (!st && o->logits && !m.s.last && !o->golden && !o->load_only)
        fprintf(stderr, "note: --logits: layers %d:%d end before the model's last layer (%d): this shard has no LM "
                "head, so no logits are computed (the report's header says so)\n", m.s.a, m.s.b, m.model.d.n_layers);
    if (!st && o->json) st = outfile_check("--json", o->json, e);
    if (!st && o->trace) st = outfile_check("--trace", o->trace, e);
    if (!st && o->csv) st = outfile_check("--csv", o->csv, e);
    if (!st && o->html) st = outfile_check("--html", o->html, e);
    struct crossover_row rows[CLI_MAX_WIDTHS * (PLAN_COUNT + 1)];
    char *compare_text = NULL;
    if (!st) {
        st = gpu_open(&g, o->device, e);
        gpu_up = !st;
        g.tune = o->tune;
        g.precision = o->precision;
        enum gemm_path path;
        if (!st) st = k_gemm_path(&g, 0, &path, e); /* a forced path the device lacks: exit 2 */
    }
    if (!st && live_compare) st = compare_precheck(&base, &m, &g, o, e);
    if (!st) st = weights_upload(&g, &m.s, o->seed, true, &w, e);
    if (!st && o->load_only) print_load(&g, &m, &w);
    else if (!st && o->golden)
        st = golden_run(&g, &m.model.d, &m.s, &w, o->golden, o->plans[0], stdout, e);
    else if (!st && many) {
        st = run_crossover(&g, &m, &w, o, rows, &x.n_rows, &p, x.csv, e);
        x.rows = rows;
        if (!st) st = write_outputs(o, &p, &x, st, e);
    } else if (!st) {
        struct profile_request rq = app_request(o, o->cols, o->plans[0], &m.model.d);
        note_wide_as_batch(o, rq.plan, rq.cols, &m.model.d);
        st = profile_run(&g, &m.model.d, &m.s, &w, &rq, &p, e);
        if (!st) (o->markdown ? report_markdown_in : report_text_in)(report_out, &p, o->units);
        if (!st && x.csv) csv_profile(x.csv, &p);
        if (!st && o->json) st = report_json_write(o->json, &p, e);
        if (!st && o->trace) st = trace_write(o->trace, &p, o->reps - 1, e);
        if (!st && o->compare) st = run_compare(report_out, o, &base, &p, NULL, &x, &compare_text, e);
        if (st == ST_OK || ((st == ST_REGRESSION || st == ST_UNDECIDED) && o->compare)) {
            struct err we = {{0}};
            int wst = write_outputs(o, &p, &x, st, &we);
            if (wst != st) {
                *e = we;
                st = wst;
            }
        }
    }
    free(compare_text);
    outputs_close(&x);
    profile_free(&p);
    profile_free(&base);
    weights_free(&w);
    if (gpu_up) {
        struct err ce;
        int cst = gpu_close(&g, &ce);
        if (cst && !st) {
            *e = ce;
            st = cst;
        }
    }
    unload_model(&m);
    return st;
}

int main(int argc, char **argv)
{
    outfile_std_init();
    struct options o;
    struct err e = {{0}};
    int st = cli_parse(argc, argv, &o, &e);
    if (st) return finish(st, &e);
    if (o.help) {
        cli_usage(stdout);
        return finish(0, &e);
    }
    if (o.version) {
        printf("lfm2-profile-stage %s\n", LFM2_VERSION);
        return finish(0, &e);
    }
    if (o.list_models) {
        list_models();
        return finish(0, &e);
    }
    if (o.list_devices) {
        st = gpu_list_devices(stdout, k_gemm_path_auto, &e);
        return finish(st, &e);
    }
    st = run(&o, &e);
    return finish(st, &e);
}
