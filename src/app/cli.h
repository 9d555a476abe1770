/* cli.h - the command line (docs/design.md, Command line). Parsing only checks what can be checked
 * without the model; range checks against the model happen when the shard is bound. */
#ifndef LFM2_CLI_H
#define LFM2_CLI_H

#include <stdio.h>

#include "common.h"
#include "loader.h"
#include "plan.h"
#include "profile.h"
#include "tune.h"

#define CLI_MAX_WIDTHS 16

/* --plans auto (the default): the plan a serving engine runs at each width, resolved by main.c
 * with sel_plan_auto once the model's weight type is known. */
#define CLI_PLAN_AUTO ((enum plan_kind)PLAN_COUNT)

#define SPEC_DEFAULT_DRAFT 4 /* --spec without --slots: drafts of 4 tokens, slots = cols / 4 */

struct options {
    const char *model;     /* folder, .gguf or built-in name */
    int a, b;              /* --layers a:b */
    bool layers_set, full;
    int cols, pos, slots;  /* slots 0: decode shape (one column per slot); --spec with one width sets it
                              (cols / 4); cols: the first of --cols */
    int col_list[CLI_MAX_WIDTHS]; /* --cols 1,16,64: every width (n_cols 1 for a single width) */
    int n_cols;
    enum plan_kind plans[PLAN_COUNT + 1]; /* --plans auto,batch,wide (or the one --wide / --spec gives;
                                             default CLI_PLAN_AUTO, batch for --golden) */
    int n_plans;
    bool plans_set;
    enum timing_mode timing; /* --timing full|sampled|none (default full) */
    int sample_stride;       /* --sample-stride N (0: the profiler picks) */
    int attribution;         /* --attribution: 1 by kind, --attribution-ops: 2 by kind and op */
    bool wide, spec, logits, all_logits, gap_probe;
    bool shape_set;        /* --cols, --slots, --pos, --logits or --all-logits given (--golden ignores them) */
    int reps;
    int device;            /* -1: default */
    bool list_devices, list_models, load_only, markdown, help, version;
    bool verbose;          /* --verbose: a width list prints each configuration's full report too */
    enum dtype dtype;      /* built-in models only */
    bool dtype_set;
    uint64_t seed;
    bool seed_set;
    const char *json, *trace, *compare, *current, *golden;
    const char *stages;    /* --stages K or a:b,b:c,... (stages.c parses it) */
    const char *csv, *html; /* --csv FILE: every table as CSV; --html FILE: the self-contained page */
    double threshold;      /* percent */
    struct tune tune;      /* --tune (tune.h; automatic by default) */
    enum precision precision; /* --precision exact|serving (default exact) */
    enum report_units units; /* --units us|ms|s|auto: the text and Markdown reports' time unit */
    char argline[2048];    /* the command line as given, for the JSON */
};

/* Fills o from argv. Bad flag or value: ST_USAGE naming the flag and what is expected. */
int cli_parse(int argc, char **argv, struct options *o, struct err *e);
void cli_usage(FILE *out);

#endif
