/* profiler.h - the profiled step: columns, warm-up, per-dispatch timestamps over --reps
 * repetitions, the gap probe; fills a struct profile for the report stage. */
#ifndef LFM2_PROFILER_H
#define LFM2_PROFILER_H

#include "cli.h"
#include "engine.h"
#include "profile.h"

int profile_run(struct gpu *g, const struct model_desc *d, const struct shard *s, const struct dev_weights *w,
                const struct options *o, struct profile *p, struct err *e);

#endif
