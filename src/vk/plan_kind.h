/* plan_kind.h - which engine a plan is built for (Vulkan-free: kernels/select.h reads it too). */
#ifndef LFM2_PLAN_KIND_H
#define LFM2_PLAN_KIND_H

/* Which engine a plan is built for (docs/design.md, Engine semantics). Kernel helpers read the plan's
 * kind to pick their implementation, so a family's plan builder is the same for every kind. */
enum plan_kind {
    PLAN_BATCH, /* matrix-vector kernels serving every column in one read of each weight */
    PLAN_WIDE,  /* tiled matrix products and kernels parallel over the columns */
    PLAN_SPEC,  /* speculative verify: chained columns with per-column state snapshots */
    PLAN_COUNT
};
const char *plan_kind_name(enum plan_kind k); /* "batch", "wide", "spec" */

#endif
