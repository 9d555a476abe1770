/* pipeline.h - a pipeline-parallel deployment seen whole (--stages): the model's layers split into K
 * contiguous stages, each stage's step profiled on its own (struct profile), and what follows from
 * them: the bottleneck stage, the throughput bound against the ideal, the bubble share, the
 * activations a stage hands to the next, the per-layer costs and the split that evens the stages.
 * Pure data and arithmetic, no device: tests build pipelines synthetically.
 *
 * Units as in profile.h: µs per step, GB/s, bytes. */
#ifndef LFM2_PIPELINE_H
#define LFM2_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common.h"
#include "profile.h"

#define PIPELINE_MAX_STAGES 64

/* ---- splits: bounds[0..k] with 0 = bounds[0] < bounds[1] < ... < bounds[k] = n; stage i holds
 * layers bounds[i] .. bounds[i+1]-1. */

/* A --stages value before the model is known: a count ("4") or a list of ranges ("0:3,3:6"). */
struct pipeline_spec {
    int k;                              /* stages */
    bool given;                         /* ranges given (else an even split of k) */
    int a[PIPELINE_MAX_STAGES], b[PIPELINE_MAX_STAGES]; /* the ranges as written (given only) */
};

/* Parses the flag's value. ST_USAGE naming the value and what is expected on bad syntax, a count
 * outside 1..PIPELINE_MAX_STAGES or an empty range. */
int pipeline_spec_parse(const char *v, struct pipeline_spec *sp, struct err *e);
/* The split of n layers the spec names: an even split by layer count (the first n % k stages one
 * layer more), or the given ranges, which must tile 0..n contiguously: ST_USAGE naming the gap,
 * the overlap, the start or the end otherwise, and for a count above n. */
int pipeline_spec_bounds(const struct pipeline_spec *sp, int n, int *bounds, struct err *e);
/* The even split of n layers into k stages (1 <= k <= n). */
void pipeline_even(int n, int k, int *bounds);

/* The exact balanced split: cost[0..n) into k contiguous non-empty parts (1 <= k <= n) with the
 * smallest maximum part sum (dynamic programming over prefix sums, O(k·n²)); ties go to the split
 * whose earlier stages are shortest. Fills bounds[0..k]; returns that maximum. */
double pipeline_partition(const double *cost, int n, int k, int *bounds);
/* The largest part sum of a split. */
double pipeline_split_max(const double *cost, int k, const int *bounds);

/* What a stage's step has beyond its marginal pass (submit + wait; the last stage's logits
 * download with the head), by the stage's place in the pipeline: measured on one split's stages
 * (pipeline_fixed_from), charged to every split's stages by role (pipeline_stage_fixed). */
struct pipeline_fixed {
    bool known;    /* measured (false: every part reads 0) */
    double first;  /* the first stage's (with the embedding); K = 1: the one stage's */
    double middle; /* the median of the middle stages' (K >= 3; 0 otherwise) */
    double last;   /* the last stage's (with the head when logits); K = 1: the one stage's */
    int k;         /* the stages of the split they were measured on */
};

/* The fixed parts by role as a phrase, from their formatted values: "the one stage L" (K = 1),
 * "first F, last L" (K = 2), "first F, middle M, last L" with "(median of n)" after M where the
 * middle is the median of more than one stage. */
void pipeline_fixed_phrase(const struct pipeline_fixed *f, const char *first, const char *middle, const char *last,
                           char *buf, size_t size);

/* The fixed part that stage i of a k-stage split is charged: first for stage 0, last for stage
 * k − 1 (k = 1: last, which equals first), middle otherwise; 0 when f is not known. */
double pipeline_stage_fixed(const struct pipeline_fixed *f, int k, int i);
/* The balanced split on steps: cost[0..n) (1 <= k <= n) into k contiguous parts with the smallest
 * maximum of (the part's sum + its stage's fixed part by role), exactly: the first and last fixed
 * parts ride on layers 0 and n − 1 (always in the first and the last stage) less the middle one,
 * which every part then carries (pipeline_partition). Fills bounds[0..k]; returns that maximum, the
 * predicted slowest step. */
double pipeline_balance(const double *cost, int n, int k, const struct pipeline_fixed *f, int *bounds);

/* ---- the record */

struct pipeline_stage {
    int a, b;            /* layers a:b */
    struct profile p;    /* its profile, as a --layers a:b run gives it (owned) */
    struct est step_us;  /* its step: the gap probe's 1× wall (with the head when it ran), else the
                            wall of the timestamped step (median ± error) */
    struct est marginal_us; /* its marginal pass (with the head when it ran): submit + wait cancelled */
    double fixed_us;     /* the fixed part charged to it by role (pipeline_stage_fixed; 0: not known) */
    double predicted_us; /* its predicted step: Σ of its layers' costs + fixed_us (0: no layer costs) */
};

/* One split of the model, profiled stage by stage, and its summary (pipeline_summarize). */
struct pipeline_split {
    char how[16]; /* "even", "given" or "balanced" */
    int k;
    int bounds[PIPELINE_MAX_STAGES + 1];
    struct pipeline_stage st[PIPELINE_MAX_STAGES];
    int bottleneck;         /* the stage with the largest step */
    double sum_us, max_us;  /* Σ and max of the stages' step medians */
    double tok_s_bound;     /* cols·1e6 / max: the pipeline's throughput at this width */
    double tok_s_ideal;     /* cols·1e6 / (sum / k): the same work spread evenly */
    double bubble;          /* 1 − bound / ideal = 1 − sum / (k·max): the share of the k GPUs'
                               time that stages wait for the bottleneck in steady state (fill and
                               drain of a batch not counted) */
    double predicted_max_us; /* the largest predicted step (0: no layer costs) */
};

struct pipeline {
    char tool[64], version[32], args[2048];
    int n_layers, hidden, cols;
    /* what a K-GPU deployment adds a step: the hidden state of every column crosses each of the
     * k − 1 stage boundaries (the engine's residual stream is f32) */
    uint64_t handoff_bytes; /* cols · hidden · 4 */
    double d2h_gbps;        /* measured device → host-visible transfer bandwidth (0: unknown) */
    double handoff_us;      /* handoff_bytes over d2h_gbps, one boundary (0: unknown) */
    /* per-layer costs, n_layers of them (with the embedding for layer 0 and the head for the last
     * layer when the columns want logits): from the given split's stage runs where they have
     * timestamps (pipeline_layer_costs_from), else the marginal pass of each one-layer shard */
    struct est *layer_cost; /* owned; NULL when not measured */
    bool layer_cost_shares; /* layer_cost came from the stages' kernel-time shares */
    struct pipeline_fixed fixed; /* the stages' fixed parts by role, from the given split's runs */
    struct pipeline_split given;    /* the split --stages asked for */
    struct pipeline_split balanced; /* the split from the layer costs (k 0: not run) */
    bool balanced_is_given;         /* the balanced split equals the given one (profiled once) */
};

/* Frees every stage's profile and the layer costs, and zeroes p. */
void pipeline_free(struct pipeline *p);
/* The step and marginal of a finished stage profile (stage fields step_us, marginal_us). */
void pipeline_stage_times(struct pipeline_stage *s);
/* p->fixed from the stages of split s (their times filled): each stage's step − marginal medians,
 * clamped at 0 (noise can make it negative); the middle stages' median. Not known (all 0) when a
 * stage's gap probe did not run. */
void pipeline_fixed_from(struct pipeline *p, const struct pipeline_split *s);
/* Per-layer costs from the stage runs of split s (their times filled by pipeline_stage_times):
 * each layer's cost is its share of its stage's kernel time (the stage's dispatches summed by
 * layer, medians, each less the timestamps' own cost a dispatch, the embedding counted with the
 * stage's first layer and the head with its last) times the stage's marginal pass, so a stage's
 * layers sum to its marginal pass. Allocates p->layer_cost and returns true; false (nothing
 * allocated) when a stage has no timestamped dispatches (--timing none) or s does not cover every
 * layer. */
bool pipeline_layer_costs_from(struct pipeline *p, const struct pipeline_split *s);
/* Fills the split's summary (bottleneck, sums, throughputs, bubble), every stage's fixed part by
 * role (p->fixed) and, when p has layer costs, every stage's predicted step. */
void pipeline_summarize(const struct pipeline *p, struct pipeline_split *s);

/* The stage's step timing whose median is step_us: the gap probe's 1× wall (with the head when it
 * ran), else the timestamped step's wall (p10 and p90 for the tables). */
const struct timing *pipeline_stage_wall(const struct pipeline_stage *st);
/* Stage i of split s as profiled: the given split's stage when s is the balanced split and equals
 * the given one (profiled once: its own stages hold no profile). */
const struct pipeline_stage *pipeline_split_stage(const struct pipeline *p, const struct pipeline_split *s, int i);
/* The split's ranges, "0:3,3:6". */
void pipeline_split_text(const struct pipeline_split *s, char *buf, size_t size);

/* Text (Markdown when markdown) report of the pipeline: the split's stage table, bottleneck,
 * throughput, bubble, hand-off; the layer costs and the balanced split beside its prediction. Times
 * in units (--units: auto picks by the slowest stage step, as the profile report does). */
void pipeline_report(FILE *out, const struct pipeline *p, bool markdown, enum report_units units);

/* --csv (export.c says the layout): the pipeline's tables appended to out (a memory stream). */
void csv_pipeline(FILE *out, const struct pipeline *p);
/* --html: one self-contained page of the pipeline (html_pipeline.c): the summary, the stages' step
 * times of the given and the balanced split side by side, the per-layer costs with both splits'
 * boundaries. */
void report_html_pipeline(FILE *out, const struct pipeline *p);

/* ---- JSON (pipeline_json.c): {"pipeline": {summary}, "stages": [profile, ...], "balanced_stages":
 * [profile, ...]}; the top-level "pipeline" object marks the file. */
int pipeline_json_write(const char *path, const struct pipeline *p, struct err *e);
/* Reads a file written by pipeline_json_write: the given split's stages (profiles, ranges) and
 * the summary fields; ST_USAGE naming the file and field otherwise. */
int pipeline_json_read(const char *path, struct pipeline *p, struct err *e);
/* Whether path holds a pipeline file (a JSON object with a top-level "pipeline"): false for
 * anything else, unreadable files included (the ordinary reader then says what is wrong). */
bool pipeline_json_sniff(const char *path);
/* Compares two pipelines stage by stage with compare_profiles_fmt: ST_USAGE when the splits
 * differ (message names them) or a stage pair is not comparable, ST_REGRESSION when any stage
 * regressed, ST_OK otherwise. */
int pipeline_compare(FILE *out, const struct pipeline *base, const struct pipeline *cur, double threshold_pct,
                     bool markdown, struct err *e);

#endif
