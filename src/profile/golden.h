/* golden.h - golden verify mode (docs/design.md "Golden verify mode"): runs a golden file's S
 * sequences of T tokens through the loaded shard in the decode, prefill and mixed shapes and
 * compares hidden.b (or the logits when the shard ends at N) with the reference; with --spec, the
 * speculative verify, commit and rollback instead. */
#ifndef LFM2_GOLDEN_H
#define LFM2_GOLDEN_H

#include <stdio.h>

#include "engine.h"

/* The bar max_rel must stay under: 1e-3 for f32-accurate products (every plan in exact precision,
 * and the batch and spec plans in either: their kernels are f32); the wide plan in serving
 * precision (f16 activations and weights, plan_kind.h) its own, set from the error measured on every
 * fixture with a margin (bench/41_serving_precision.md, docs/reference.md "Precision"). */
#define GOLDEN_TOL_EXACT 1e-3
#define GOLDEN_TOL_SERVING 4e-3
double golden_tolerance(enum plan_kind plan, enum precision prec);

/* Prints one line per (shape, sequence) and a summary to out. plan PLAN_BATCH or PLAN_WIDE runs
 * the three shapes through plans of that kind; PLAN_SPEC runs the spec check instead (lines
 * "golden spec" and "golden rollback"). The device's precision (g->precision) applies. ST_GOLDEN
 * when any check is off by more than golden_tolerance (or not finite); ST_USAGE when the golden
 * does not fit the model. */
int golden_run(struct gpu *g, const struct model_desc *d, const struct shard *s, const struct dev_weights *w,
               const char *path, enum plan_kind plan, FILE *out, struct err *e);

/* Opens and checks the golden file against the model and shard without the GPU (main runs it
 * before opening the device): shapes, sizes, token range, finite non-zero references. */
int golden_validate(const char *path, const struct model_desc *d, const struct shard *s, struct err *e);

#endif
