/* profile_step.h - the profile stage's private view of one prepared step, shared by profiler.c
 * (timestamps, gap probe) and attribution.c (not an interface of the stage: profiler.h is). */
#ifndef LFM2_PROFILE_STEP_H
#define LFM2_PROFILE_STEP_H

#include "profiler.h"

/* The step every measurement runs: its engine, shape, plans (head NULL when it does not run) and
 * columns, and the reps to take. */
struct step_ctx {
    struct engine *en;
    const struct step_shape *sh;
    const struct plan *layers, *head;
    const struct step_io *io;
    uint64_t keys; /* step_keys: the attention dispatches' KV bytes are kv_key_bytes times these */
    uint64_t pairs; /* k_attn_step_pairs: their FLOPs are attn_pair_flops times these (plan.h) */
    int reps;
};

/* --attribution: fills p->attribution (rows by kind, or by kind and op with by_op), measured over
 * c->reps paired reps (attribution.c says how). */
int profile_attribution(const struct step_ctx *c, bool by_op, struct profile *p, struct err *e);

#endif
