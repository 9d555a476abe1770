/* session.h - internal to src/app: what main.c (one shard) and stages.c (every stage of a
 * pipeline) share, so a stage is opened and profiled exactly as a `--layers a:b` run of the same
 * flags opens and profiles it. */
#ifndef LFM2_SESSION_H
#define LFM2_SESSION_H

#include "cli.h"
#include "loader.h"
#include "model.h"
#include "profile.h"
#include "profiler.h"

/* The model --model names, described: a built-in (no source) or a file source. */
struct app_model {
    struct model_source src;
    bool have_src;
    struct model_desc d;
};

bool app_is_builtin(const char *name);
/* Opens and describes --model (a built-in, a folder or a file), refusing --dtype/--seed on a
 * checkpoint and suggesting the built-in a near miss meant. */
int app_model_open(const struct options *o, struct app_model *m, struct err *e);
/* Binds layers a:b of the model (a built-in's or the file's tensors). */
int app_shard_bind(const struct app_model *m, int a, int b, struct shard *s, struct err *e);
void app_model_close(struct app_model *m);

/* The plan that runs at `cols` columns for a plan of the command line: auto resolved by the rule
 * (select.h sel_plan_auto) for the model's dominant weight type and --tune, the others as named. */
enum plan_kind app_plan_at(const struct options *o, enum plan_kind plan, int cols, const struct model_desc *d);
/* The profiler's request for one width and plan of the command line. */
struct profile_request app_request(const struct options *o, int cols, enum plan_kind plan,
                                   const struct model_desc *d);

#endif
