/* main.c - lfm2-profile-stage: args -> model source -> description -> shard -> upload -> plan ->
 * executor -> report (DESIGN.md, Data flow). Only this file turns a status into an exit code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "engine.h"
#include "golden.h"
#include "input.h"
#include "model.h"
#include "profile.h"
#include "profiler.h"
#include "weights.h"

static int fail(int st, const struct err *e)
{
    fprintf(stderr, "lfm2-profile-stage: %s\n", e->msg);
    return st;
}

static void list_models(void)
{
    printf("built-in models (real shapes, random weights made on the GPU; --dtype, --seed):\n");
    for (int i = 0; i < n_builtin_models; i++) printf("  %-14s %s\n", builtin_models[i].name, builtin_models[i].about);
}

static bool is_builtin(const char *name)
{
    for (int i = 0; i < n_builtin_models; i++)
        if (!strcmp(builtin_models[i].name, name)) return true;
    return false;
}

/* The model and shard the options name: a built-in or a file source. */
struct loaded {
    struct model_source src;
    bool have_src;
    struct model_desc d;
    struct shard s;
    bool have_shard;
};

static int load_model(const struct options *o, struct loaded *m, struct err *e)
{
    memset(m, 0, sizeof *m);
    if (!o->model) return err_set(e, ST_USAGE, "--model is required (a folder, a .gguf file or a built-in name: --list-models)");
    if (!o->layers_set && !o->full) return err_set(e, ST_USAGE, "--layers a:b or --full is required");
    int st;
    if (is_builtin(o->model)) {
        if ((st = builtin_describe(o->model, o->dtype, &m->d, e))) return st;
        st = builtin_shard(&m->d, o->full ? 0 : o->a, o->full ? m->d.n_layers : o->b, &m->s, e);
    } else {
        if (o->dtype_set) return err_set(e, ST_USAGE, "--dtype applies to built-in models only; %s is a checkpoint (its file decides the types)", o->model);
        if (o->seed_set) return err_set(e, ST_USAGE, "--seed applies to built-in models only; %s is a checkpoint", o->model);
        if ((st = source_open(&m->src, o->model, e))) return st;
        m->have_src = true;
        if ((st = model_describe(&m->src, &m->d, e))) return st;
        st = shard_bind(&m->src, &m->d, o->full ? 0 : o->a, o->full ? m->d.n_layers : o->b, &m->s, e);
    }
    m->have_shard = !st;
    return st;
}

static void unload_model(struct loaded *m)
{
    if (m->have_shard) shard_free(&m->s);
    if (m->have_src) source_close(&m->src);
}

static void print_load(const struct gpu *g, const struct loaded *m, const struct dev_weights *w)
{
    const struct model_desc *d = &m->d;
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
    int n_ignored = m->have_src ? model_ignored(&m->src, d, what, sizeof what) : 0;
    if (n_ignored) printf("ignored  %d file tensors, not part of the decoder: %s\n", n_ignored, what);
}

/* The plans this build profiles; the others are a clear "not supported yet". */
static int plan_check(enum plan_kind k, struct err *e)
{
    if (k == PLAN_BATCH || k == PLAN_WIDE || k == PLAN_SPEC) return ST_OK;
    return err_set(e, ST_USAGE, "--%s is not supported yet (the batch, wide and spec plans exist)",
                   plan_kind_name(k));
}

/* The profiler's request for one width and plan of the command line. */
static struct profile_request request_of(const struct options *o, int cols, enum plan_kind plan)
{
    struct profile_request rq = profile_request_default();
    rq.plan = plan;
    rq.cols = cols;
    rq.pos = o->pos;
    rq.slots = o->slots;
    if (plan == PLAN_SPEC && !rq.slots) rq.slots = cols / SPEC_DEFAULT_DRAFT; /* drafts of 4 (DESIGN.md) */
    rq.logits = o->logits;
    rq.all_logits = o->all_logits;
    rq.reps = o->reps;
    rq.timing = o->timing;
    rq.sample_stride = o->sample_stride;
    /* the crossover's step time is the probe's 1× wall; the attribution sits beside the probe */
    rq.gap_probe = o->gap_probe || o->n_cols > 1 || o->n_plans > 1 || o->attribution;
    rq.attribution = o->attribution == 2 ? ATTRIBUTION_OP : o->attribution ? ATTRIBUTION_KIND : ATTRIBUTION_OFF;
    rq.seed = o->seed;
    rq.argline = o->argline;
    return rq;
}

/* --cols list / --plans: one profile per width × plan, printed as it comes, then the crossover
 * table. A plan that fails (not supported yet, too wide for the device) is a row saying so; the
 * run fails only when every row failed. */
static int run_crossover(struct gpu *g, const struct loaded *m, const struct dev_weights *w, const struct options *o,
                         struct err *e)
{
    struct crossover_row rows[CLI_MAX_WIDTHS * PLAN_COUNT];
    int n = 0, n_ok = 0, first_st = ST_OK;
    struct err first = {{0}};
    for (int i = 0; i < o->n_cols; i++)
        for (int k = 0; k < o->n_plans; k++) {
            struct crossover_row *r = &rows[n++];
            memset(r, 0, sizeof *r);
            r->cols = o->col_list[i];
            snprintf(r->plan, sizeof r->plan, "%s", plan_kind_name(o->plans[k]));
            struct profile p = {0};
            struct err pe = {{0}};
            struct profile_request rq = request_of(o, o->col_list[i], o->plans[k]);
            int st = plan_check(o->plans[k], &pe);
            if (!st) st = profile_run(g, &m->d, &m->s, w, &rq, &p, &pe);
            if (!st) {
                (o->markdown ? report_markdown : report_text)(stdout, &p);
                crossover_row_from(r, &p);
                n_ok++;
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
    report_crossover(stdout, rows, n, o->markdown);
    if (n_ok == 0 && first_st) {
        *e = first;
        return first_st;
    }
    return ST_OK;
}

static int run(const struct options *o, struct err *e)
{
    if (o->compare && o->current) {
        struct profile base = {0}, cur = {0};
        int st = report_json_read(o->compare, &base, e);
        if (!st) st = report_json_read(o->current, &cur, e);
        if (!st) st = compare_profiles_fmt(stdout, &base, &cur, o->threshold, o->markdown, o->json, e);
        profile_free(&base);
        profile_free(&cur);
        return st;
    }
    bool many = o->n_cols > 1 || o->n_plans > 1;
    if (!many && !o->load_only) {
        int st = plan_check(o->plans[0], e);
        if (st) return st;
    }
    struct loaded m;
    int st = load_model(o, &m, e);
    struct gpu g;
    bool gpu_up = false;
    struct dev_weights w = {0};
    struct profile p = {0};
    struct profile base = {0};
    /* --json -: stdout carries the JSON alone, the text report goes to stderr */
    bool json_stdout = o->json && !strcmp(o->json, "-");
    FILE *report_out = json_stdout || (o->trace && !strcmp(o->trace, "-")) ? stderr : stdout;
    if (!st && (o->golden || !o->load_only) && !family_plan_get(m.d.family))
        st = err_set(e, ST_USAGE, "%s: %s is not supported yet for the %s family (only --load-only is)", m.d.source,
                     o->golden ? "--golden" : "profiling", family_name(m.d.family));
    /* every input file and output path is checked before the GPU is touched */
    if (!st && o->compare) st = report_json_read(o->compare, &base, e);
    if (!st && o->golden) st = golden_validate(o->golden, &m.d, &m.s, e);
    if (!st && o->golden && o->shape_set)
        fprintf(stderr, "note: --golden runs the golden's own shapes; --cols, --slots, --pos and --logits are ignored\n");
    if (!st && o->json) st = output_check("--json", o->json, e);
    if (!st && o->trace) st = output_check("--trace", o->trace, e);
    if (!st) {
        st = gpu_open(&g, o->device, e);
        gpu_up = !st;
        g.tune = o->tune;
    }
    if (!st) st = weights_upload(&g, &m.s, o->seed, true, &w, e);
    if (!st && o->load_only) print_load(&g, &m, &w);
    else if (!st && o->golden)
        st = golden_run(&g, &m.d, &m.s, &w, o->golden, o->plans[0], stdout, e);
    else if (!st && many) st = run_crossover(&g, &m, &w, o, e);
    else if (!st) {
        struct profile_request rq = request_of(o, o->cols, o->plans[0]);
        st = profile_run(&g, &m.d, &m.s, &w, &rq, &p, e);
        if (!st) (o->markdown ? report_markdown : report_text)(report_out, &p);
        if (!st && o->json) st = report_json_write(o->json, &p, e);
        if (!st && o->trace) st = trace_write(o->trace, &p, o->reps - 1, e);
        if (!st && o->compare) st = compare_profiles_fmt(report_out, &base, &p, o->threshold, o->markdown, NULL, e);
    }
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
    struct options o;
    struct err e = {{0}};
    int st = cli_parse(argc, argv, &o, &e);
    if (st) return fail(st, &e);
    if (o.help) {
        cli_usage(stdout);
        return 0;
    }
    if (o.version) {
        printf("lfm2-profile-stage %s\n", LFM2_VERSION);
        return 0;
    }
    if (o.list_models) {
        list_models();
        return 0;
    }
    if (o.list_devices) {
        st = gpu_list_devices(stdout, &e);
        return st ? fail(st, &e) : 0;
    }
    st = run(&o, &e);
    return st ? fail(st, &e) : 0;
}
