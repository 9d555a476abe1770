/* profiler.h - the profiled step: columns, warm-up, per-dispatch timestamps over the reps, the gap
 * probe and the attribution mode; fills a struct profile for the report stage.
 *
 * The profiler takes a request, not the command line: main.c (and golden mode, tests) fill one
 * struct profile_request, so new modes add a field here instead of threading options through. */
#ifndef LFM2_PROFILER_H
#define LFM2_PROFILER_H

#include "engine.h"
#include "profile.h"

enum attribution_mode {
    ATTRIBUTION_OFF,
    ATTRIBUTION_KIND, /* one row per kind */
    ATTRIBUTION_OP,   /* one row per kind × op */
};

struct profile_request {
    enum plan_kind plan; /* PLAN_BATCH, PLAN_WIDE, PLAN_SPEC */
    bool plan_auto;      /* plan was the auto choice (select.h sel_plan_auto: "plan auto -> ...") */
    int gemm_min_cols;   /* the width from which the wide plan's gemm serves (0: the default rule's) */
    enum precision precision; /* the gemm's arithmetic (--precision; profile_run applies it to the device) */
    int cols, pos;       /* columns of the step; its position (warm-up fills 0 .. pos-1) */
    int slots;           /* 0: decode shape (one column per slot); N: prefill shape */
    bool logits;         /* columns want logits (the head runs on a last stage): every column in
                            the decode shape and with spec, each slot's last in the prefill shape */
    bool all_logits;     /* with logits: every column, in the prefill shape too */
    int reps;            /* profiled repetitions (also the gap probe's and attribution's) */
    enum timing_mode timing;
    int sample_stride; /* TIMING_SAMPLED: 0 picks one (about 8) */
    bool gap_probe;
    enum attribution_mode attribution;
    uint64_t seed;       /* seeds hidden_in of a stage that does not start at layer 0 */
    const char *argline; /* the command line, for the JSON ("" when none) */
};

/* The request's defaults: batch plan, 16 columns, pos 64, decode shape, 10 reps, full timing. */
struct profile_request profile_request_default(void);

/* The run's identity as its profile will carry it (model, shard, shape), before anything runs: a
 * live --compare checks it against the baseline before loading weights (compare_identity). */
void profile_identity(const struct model_desc *d, const struct shard *s, const struct profile_request *rq,
                      struct profile *p);

int profile_run(struct gpu *g, const struct model_desc *d, const struct shard *s,
                const struct dev_weights *w, const struct profile_request *rq, struct profile *p,
                struct err *e);

#endif
