/* golden.h - golden verify mode (docs/design.md "Golden verify mode"): runs a golden file's S
 * sequences of T tokens through the loaded shard in the decode, prefill and mixed shapes and
 * compares hidden.b (or the logits when the shard ends at N) with the reference; with --spec, the
 * speculative verify, commit and rollback instead. */
#ifndef LFM2_GOLDEN_H
#define LFM2_GOLDEN_H

#include <stdio.h>

#include "engine.h"

/* Prints one line per (shape, sequence) and a summary to out. plan PLAN_BATCH or PLAN_WIDE runs
 * the three shapes through plans of that kind; PLAN_SPEC runs the spec check instead (lines
 * "golden spec" and "golden rollback"). ST_GOLDEN when any check is off by more than 1e-3 (or not
 * finite); ST_USAGE when the golden does not fit the model. */
int golden_run(struct gpu *g, const struct model_desc *d, const struct shard *s, const struct dev_weights *w,
               const char *path, enum plan_kind plan, FILE *out, struct err *e);

/* Opens and checks the golden file against the model and shard without the GPU (main runs it
 * before opening the device): shapes, sizes, token range, finite non-zero references. */
int golden_validate(const char *path, const struct model_desc *d, const struct shard *s, struct err *e);

#endif
