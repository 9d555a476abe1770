/* session.c - opening the model and building a profile request from the command line, shared by
 * main.c and stages.c (session.h). */
#include "session.h"

#include <string.h>
#include <unistd.h>

#include "select.h"
#include "suggest.h"

bool app_is_builtin(const char *name)
{
    for (int i = 0; i < n_builtin_models; i++)
        if (!strcmp(builtin_models[i].name, name)) return true;
    return false;
}

/* --model NAME that is neither a file nor a built-in but close to a built-in's name (case, a typo):
 * ST_USAGE naming it; ST_OK otherwise (source_open then says what is wrong with the path). */
static int builtin_near_miss(const char *model, struct err *e)
{
    if (access(model, F_OK) == 0) return ST_OK;
    const char *names[64];
    int n = 0;
    for (int i = 0; i < n_builtin_models && n < (int)ARRAY_LEN(names); i++) names[n++] = builtin_models[i].name;
    const char *near = suggest_closest(model, names, n);
    if (!near) return ST_OK;
    return err_set(e, ST_USAGE, "--model %s: no such file or folder, and not a built-in model: did you mean %s? "
                   "(--list-models lists them)", model, near);
}

int app_model_open(const struct options *o, struct app_model *m, struct err *e)
{
    memset(m, 0, sizeof *m);
    if (!o->model) return err_set(e, ST_USAGE, "--model is required (a folder, a .gguf file or a built-in name: --list-models)");
    if (app_is_builtin(o->model)) return builtin_describe(o->model, o->dtype, &m->d, e);
    int st = builtin_near_miss(o->model, e);
    if (st) return st;
    if (o->dtype_set) return err_set(e, ST_USAGE, "--dtype applies to built-in models only; %s is a checkpoint (its file decides the types)", o->model);
    if (o->seed_set) return err_set(e, ST_USAGE, "--seed applies to built-in models only; %s is a checkpoint", o->model);
    if ((st = source_open(&m->src, o->model, e))) return st;
    m->have_src = true;
    return model_describe(&m->src, &m->d, e);
}

int app_shard_bind(const struct app_model *m, int a, int b, struct shard *s, struct err *e)
{
    return m->have_src ? shard_bind(&m->src, &m->d, a, b, s, e) : builtin_shard(&m->d, a, b, s, e);
}

void app_model_close(struct app_model *m)
{
    if (m->have_src) source_close(&m->src);
    m->have_src = false;
}

enum plan_kind app_plan_at(const struct options *o, enum plan_kind plan, int cols, const struct model_desc *d)
{
    return plan == CLI_PLAN_AUTO ? sel_plan_auto(cols, sel_gemm_min_cols(&o->tune, d->dtype)) : plan;
}

struct profile_request app_request(const struct options *o, int cols, enum plan_kind plan,
                                   const struct model_desc *d)
{
    struct profile_request rq = profile_request_default();
    rq.plan = app_plan_at(o, plan, cols, d);
    rq.plan_auto = plan == CLI_PLAN_AUTO;
    rq.gemm_min_cols = sel_gemm_min_cols(&o->tune, d->dtype);
    rq.precision = o->precision;
    rq.cols = cols;
    rq.pos = o->pos;
    rq.slots = o->slots;
    if (rq.plan == PLAN_SPEC && !rq.slots) rq.slots = cols / SPEC_DEFAULT_DRAFT; /* drafts of 4 (docs/design.md) */
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
