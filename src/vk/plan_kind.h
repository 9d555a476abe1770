/* plan_kind.h - which engine a plan is built for (Vulkan-free: kernels/select.h reads it too). */
#ifndef LFM2_PLAN_KIND_H
#define LFM2_PLAN_KIND_H

#include <stdbool.h>

/* Which engine a plan is built for (docs/design.md, Engine semantics). Kernel helpers read the plan's
 * kind to pick their implementation, so a family's plan builder is the same for every kind. */
enum plan_kind {
    PLAN_BATCH, /* matrix-vector kernels serving every column in one read of each weight */
    PLAN_WIDE,  /* tiled matrix products and kernels parallel over the columns */
    PLAN_SPEC,  /* speculative verify: chained columns with per-column state snapshots */
    PLAN_COUNT
};
const char *plan_kind_name(enum plan_kind k); /* "batch", "wide", "spec" */

/* The arithmetic of the products that run on f16 inputs (the wide plan's gemm, gemm.comp; every
 * other kernel is f32 in both): a run's --precision (docs/reference.md, "Precision"). */
enum precision {
    PRECISION_EXACT,   /* f32-accurate: activations split into f16 hi + lo, two tensor products (the
                          goldens' bar 1e-3; the default) */
    PRECISION_SERVING, /* activations and weights rounded to f16 once, one product, f32 sums: what
                          llama.cpp and production engines compute */
    PRECISION_COUNT
};
const char *precision_name(enum precision p); /* "exact", "serving" */
/* The precision named s ("exact", "serving"); false when none is. */
bool precision_parse(const char *s, enum precision *p);

#endif
