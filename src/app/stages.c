/* stages.c - --stages (issue 40): a pipeline-parallel deployment profiled stage by stage on one
 * device.
 *
 * Each stage's shard is bound, uploaded and profiled exactly as a separate `--layers a:b` run with
 * the same flags profiles it (the first stage with its embedding, the last with its LM head when
 * the columns want logits), then its device memory is released (gpu_mark / gpu_release) before
 * the next: one process, one device open, pipelines compiled once.
 *
 * Per-layer costs come from the given split's own stage runs: each layer's share of its stage's
 * kernel time (the timestamped dispatches summed by layer, less the timestamps' own cost a
 * dispatch) times the stage's marginal pass (its gap probe's 2× − 1× walls: kernels plus the dead
 * time between them, submit and wait cancelled), so a stage's layers add up to its marginal pass.
 * They were first measured as the marginal pass of each one-layer shard l:l+1; on an H100 those
 * grew with the layer index for LFM2-2.6B and Qwen3.5-2B (identical layers 129 → 344 µs) while the
 * multi-layer stages profiled after them did not (bench/38), and they cost a shard load a layer.
 * One-layer shards remain for runs without timestamps (--timing none).
 *
 * The bottleneck is judged on steps, and a step is the marginal pass plus a fixed part (submit and
 * wait, ~80 µs on an H100) that is far larger on the last stage when it downloads the logits
 * (Qwen3.5-2B, 64 columns: 1.4 ms of 3.3). So the balanced split is the exact contiguous partition
 * into K parts with the smallest maximum of (Σ of the part's layer costs + its stage's fixed part),
 * the fixed parts measured on the given split by role: first, middle (their median), last
 * (pipeline_balance). It is profiled again so the report sets predicted and measured steps side by
 * side. */
#include "stages.h"

#include "session.h"

#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "input.h"
#include "model.h"
#include "pipeline.h"
#include "profiler.h"
#include "weights.h"

bool stages_wanted(const struct options *o)
{
    return o->stages || (o->compare && o->current && pipeline_json_sniff(o->compare));
}

/* Flags --stages cannot honour: exit 2 naming them. */
static int stages_check(const struct options *o, struct err *e)
{
    const char *no = o->layers_set       ? "--layers"
                     : o->full           ? "--full"
                     : o->golden         ? "--golden"
                     : o->load_only      ? "--load-only"
                     : o->trace          ? "--trace"
                     : o->attribution    ? "--attribution"
                     : o->current        ? "--current"
                                         : NULL;
    if (no)
        return err_set(e, ST_USAGE, "--stages and %s: --stages profiles every layer of the model, stage by stage, "
                       "with the step-shape flags only (drop %s)", no, no);
    if (o->n_cols > 1 || o->n_plans > 1)
        return err_set(e, ST_USAGE, "--stages takes one width and one plan (a list of --cols or --plans is not "
                       "supported with --stages)");
    return ST_OK;
}

/* The request of one stage: the one a --layers run of the same flags builds (session.h), with the
 * gap probe on: the stage's step is its 1× wall. */
static struct profile_request stage_request(const struct options *o, const struct model_desc *d)
{
    struct profile_request rq = app_request(o, o->cols, o->plans[0], d);
    rq.gap_probe = true;
    return rq;
}

/* The model, described once (session.h); a shard of it bound per stage. */
static int model_open(const struct options *o, struct app_model *m, struct err *e)
{
    int st = app_model_open(o, m, e);
    if (!st && !family_plan_get(m->d.family))
        st = err_set(e, ST_USAGE, "%s: --stages is not supported yet for the %s family (only --load-only is)",
                     m->d.source, family_name(m->d.family));
    return st;
}

/* Binds layers a:b, uploads them, profiles them, releases their device memory. */
static int profile_shard(struct gpu *g, const struct app_model *m, const struct options *o, int a, int b,
                         const struct profile_request *rq, struct profile *p, struct err *e)
{
    struct shard s;
    int st = app_shard_bind(m, a, b, &s, e);
    if (st) return st;
    struct gpu_mark mark;
    gpu_mark(g, &mark);
    struct dev_weights w = {0};
    st = weights_upload(g, &s, o->seed, true, &w, e);
    if (!st) st = profile_run(g, &m->d, &s, &w, rq, p, e);
    if (st) err_wrap(e, st, "--stages: layers %d:%d", a, b);
    weights_free(&w);
    shard_free(&s);
    gpu_release(g, &mark);
    return st;
}

/* Profiles every stage of split sp (bounds and k set), printing each stage's report as it comes. */
static int profile_split(struct gpu *g, const struct app_model *m, const struct options *o,
                         const struct profile_request *rq, struct pipeline_split *sp, FILE *out, struct err *e)
{
    for (int i = 0; i < sp->k; i++) {
        struct pipeline_stage *s = &sp->st[i];
        s->a = sp->bounds[i];
        s->b = sp->bounds[i + 1];
        fprintf(out, o->markdown ? "\n## %s stage %d of %d: layers %d:%d\n" : "\n== %s stage %d of %d: layers %d:%d ==\n",
                sp->how, i, sp->k, s->a, s->b);
        int st = profile_shard(g, m, o, s->a, s->b, rq, &s->p, e);
        if (st) return st;
        (o->markdown ? report_markdown_in : report_text_in)(out, &s->p, o->units);
        pipeline_stage_times(s);
    }
    return ST_OK;
}

/* Each layer's marginal pass, without timestamps: the layer costs where the stage runs have no
 * timestamps (--timing none). */
static int measure_layers(struct gpu *g, const struct app_model *m, const struct options *o,
                          const struct profile_request *rq0, struct pipeline *pl, struct err *e)
{
    struct profile_request rq = *rq0;
    rq.timing = TIMING_NONE;
    rq.gap_probe = true;
    pl->layer_cost = calloc((size_t)pl->n_layers, sizeof *pl->layer_cost);
    if (!pl->layer_cost) return err_set(e, ST_RUNTIME, "out of host memory");
    for (int l = 0; l < pl->n_layers; l++) {
        struct pipeline_stage s = {.a = l, .b = l + 1};
        int st = profile_shard(g, m, o, l, l + 1, &rq, &s.p, e);
        if (st) return err_wrap(e, st, "--stages: layer costs");
        pipeline_stage_times(&s);
        pl->layer_cost[l] = s.marginal_us;
        profile_free(&s.p);
    }
    return ST_OK;
}

/* The balanced split on steps: the layer costs (a cost below zero, noise on a tiny layer, counts as
 * 0) with each stage's fixed part by role (pipeline_balance). */
static void balance(struct pipeline *pl)
{
    double cost[MODEL_MAX_LAYERS];
    for (int l = 0; l < pl->n_layers; l++) cost[l] = MAX(0, pl->layer_cost[l].v);
    struct pipeline_split *b = &pl->balanced;
    snprintf(b->how, sizeof b->how, "balanced");
    b->k = pl->given.k;
    pipeline_balance(cost, pl->n_layers, b->k, &pl->fixed, b->bounds);
    pl->balanced_is_given = !memcmp(b->bounds, pl->given.bounds, sizeof(int) * (size_t)(b->k + 1));
    if (pl->balanced_is_given)
        for (int i = 0; i < b->k; i++) {
            b->st[i].a = b->bounds[i];
            b->st[i].b = b->bounds[i + 1];
            b->st[i].step_us = pl->given.st[i].step_us;
            b->st[i].marginal_us = pl->given.st[i].marginal_us;
        }
}

static int compare_files(const struct options *o, struct err *e)
{
    const char *no = o->json ? "--json" : o->csv ? "--csv" : o->html ? "--html" : o->trace ? "--trace" : NULL;
    if (no)
        return err_set(e, ST_USAGE, "%s with a comparison of two pipeline files is not supported yet (drop %s; "
                       "--markdown works)", no, no);
    struct pipeline base, cur;
    int st = pipeline_json_read(o->compare, &base, e);
    if (st) return st;
    st = pipeline_json_read(o->current, &cur, e);
    if (!st) st = pipeline_compare(stdout, &base, &cur, o->threshold, o->markdown, e);
    pipeline_free(&base);
    pipeline_free(&cur);
    return st;
}

static int run_pipeline(struct gpu *g, const struct app_model *m, const struct options *o, struct pipeline *pl,
                        FILE *out, struct err *e)
{
    struct profile_request rq = stage_request(o, &m->d);
    double d2h = 0;
    int st = gpu_copy_bandwidth_d2h(g, 5, &d2h, e);
    if (st) return st;
    pl->d2h_gbps = d2h * 1e-9;
    pl->handoff_us = pl->d2h_gbps > 0 ? (double)pl->handoff_bytes / (pl->d2h_gbps * 1e3) : 0;
    if ((st = profile_split(g, m, o, &rq, &pl->given, out, e))) return st;
    pipeline_fixed_from(pl, &pl->given);
    /* the layer costs from the given split's own runs; one-layer shards where they have no
     * timestamps (stages.c's header says why) */
    if (!pipeline_layer_costs_from(pl, &pl->given) && (st = measure_layers(g, m, o, &rq, pl, e))) return st;
    balance(pl);
    if (!pl->balanced_is_given && (st = profile_split(g, m, o, &rq, &pl->balanced, out, e))) return st;
    pipeline_summarize(pl, &pl->given);
    pipeline_summarize(pl, &pl->balanced);
    return ST_OK;
}

/* --csv and --html of the finished pipeline, each written whole or not at all (outfile.h). */
static int write_outputs(const struct options *o, const struct pipeline *pl, struct err *e)
{
    for (int i = 0; i < 2; i++) {
        const char *path = i ? o->html : o->csv, *flag = i ? "--html" : "--csv";
        if (!path) continue;
        char *buf = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&buf, &len);
        if (!mem) return err_set(e, ST_RUNTIME, "out of memory for %s", flag);
        (i ? report_html_pipeline : csv_pipeline)(mem, pl);
        fclose(mem);
        int st = outfile_save(flag, path, buf, len, e);
        free(buf);
        if (st) return st;
    }
    return ST_OK;
}

int stages_run(const struct options *o, struct err *e)
{
    if (o->compare && o->current && !o->stages) return compare_files(o, e);
    struct pipeline_spec spec;
    int st = stages_check(o, e);
    if (!st) st = pipeline_spec_parse(o->stages, &spec, e);
    if (st) return st;
    struct app_model m;
    struct pipeline pl = {0}, base = {0};
    st = model_open(o, &m, e);
    if (!st) st = pipeline_spec_bounds(&spec, m.d.n_layers, pl.given.bounds, e);
    /* every input file and output path is checked before the GPU is touched */
    if (!st && o->compare) st = pipeline_json_read(o->compare, &base, e);
    if (!st && o->json) st = outfile_check("--json", o->json, e);
    if (!st && o->csv) st = outfile_check("--csv", o->csv, e);
    if (!st && o->html) st = outfile_check("--html", o->html, e);
    struct gpu g;
    bool gpu_up = false;
    if (!st) {
        st = gpu_open(&g, o->device, e);
        gpu_up = !st;
        g.tune = o->tune; /* as a --layers run of the same flags (main.c) */
    }
    bool json_stdout = o->json && !strcmp(o->json, "-");
    FILE *out = json_stdout ? stderr : stdout;
    if (!st) {
        snprintf(pl.tool, sizeof pl.tool, "lfm2-profile-stage");
        snprintf(pl.version, sizeof pl.version, "%s", LFM2_VERSION);
        snprintf(pl.args, sizeof pl.args, "%s", o->argline);
        pl.n_layers = m.d.n_layers;
        pl.hidden = m.d.hidden;
        pl.cols = o->cols;
        pl.handoff_bytes = (uint64_t)o->cols * (uint64_t)m.d.hidden * sizeof(float); /* engine.h: hidden is f32 */
        snprintf(pl.given.how, sizeof pl.given.how, "%s", spec.given ? "given" : "even");
        pl.given.k = spec.k;
        st = run_pipeline(&g, &m, o, &pl, out, e);
    }
    if (!st) pipeline_report(out, &pl, o->markdown, o->units);
    if (!st && o->json) st = pipeline_json_write(o->json, &pl, e);
    if (!st) st = write_outputs(o, &pl, e);
    if (!st && o->compare) st = pipeline_compare(out, &base, &pl, o->threshold, o->markdown, e);
    if (gpu_up) {
        struct err ce;
        int cst = gpu_close(&g, &ce);
        if (cst && !st) {
            *e = ce;
            st = cst;
        }
    }
    pipeline_free(&pl);
    pipeline_free(&base);
    app_model_close(&m);
    return st;
}
