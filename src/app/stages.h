/* stages.h - --stages: every stage of a pipeline-parallel split profiled in turn on the one device,
 * the per-layer costs, the balanced split profiled again, and the pipeline report (pipeline.h);
 * --compare of two pipeline files stage by stage. */
#ifndef LFM2_STAGES_H
#define LFM2_STAGES_H

#include "cli.h"

/* Whether the options ask for --stages, or compare a saved pipeline file (--compare A --current B
 * where A is one). */
bool stages_wanted(const struct options *o);
/* Runs it; the status as main's run() returns one (ST_USAGE on bad flags, ST_REGRESSION when a
 * stage regressed against the baseline). */
int stages_run(const struct options *o, struct err *e);

#endif
