/* profile.h - what one profiling run measured, and everything done with it after the timings exist:
 * per-kind aggregation, gap-probe arithmetic, the text / Markdown report, JSON (write and read
 * back), the Chrome trace and the comparison of two runs (docs/design.md "Profiling contract",
 * "JSON and compare").
 *
 * Units: every time is in microseconds (µs) per step, every bandwidth in GB/s (1e9 bytes/s),
 * every byte count is bytes read from weights per step.
 *
 * Ownership: a struct profile owns its dispatches[], by_kind[] and every timing's reps[];
 * profile_free() releases them all. Strings are fixed arrays so a profile can be copied field by
 * field and read back from JSON without allocation. */
#ifndef LFM2_PROFILE_H
#define LFM2_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common.h"
#include "plan_kind.h"

/* Statistics of one quantity over the profiled repetitions, plus every sample (µs).
 * The reports quote the median with its spread: p10–p90 (the middle 80 % of the reps; with fewer
 * than 10 reps these are interpolated between the nearest samples) and the MAD (median absolute
 * deviation from the median), and the rep count. */
struct timing {
    double mean, median, min;
    double p10, p90; /* 10th / 90th percentile (linear interpolation between order statistics) */
    double mad;      /* median of |sample − median| */
    double *reps;    /* n_reps samples, in the order they were taken (owned) */
    int n_reps;
};

/* Computes mean / median / min / p10 / p90 / MAD of samples[0..n) and copies them into reps (n = 0
 * gives zeros). */
struct timing timing_from(const double *samples, int n);
void timing_free(struct timing *t);
/* A deep copy (reps duplicated). */
struct timing timing_copy(const struct timing *t);

/* A figure with its uncertainty: v ± u (µs). u is the standard error of a median, estimated from
 * the MAD: 1.2533 · 1.4826 · MAD / √n (both factors hold for normal noise); a difference of two
 * independent medians adds the errors in quadrature. A figure is "within noise" when |v| ≤ 2u
 * (about a 95 % interval). A timing of one rep has an unknown error (u = INFINITY): it is within
 * noise whatever its size. */
struct est {
    double v, u;
};
#define EST_NOISE_K 2.0
struct est est_median(const struct timing *t); /* {median, standard error of the median} */
struct est est_sub(struct est a, struct est b);
struct est est_exact(double v); /* u = 0 */
struct est est_scale(struct est a, double k); /* k·v, error scaled by |k| */
bool est_within_noise(struct est x);
/* The reps at which x's error, measured at n reps and shrinking as 1/√n, falls to |size| / k: where a
 * figure of that size leaves the noise (the advice of an inconclusive verdict). Above n, at most
 * 100000; 0 when unknown (one rep, or size 0). */
int est_reps_to_resolve(struct est x, double size, int n, double k);

#define PROF_MAX_SPEC 12 /* >= GPU_MAX_SPEC (profiler.c checks) */

/* One dispatch of the profiled step: the layer plan's dispatches first, then the head's. */
struct prof_dispatch {
    int index;          /* position in the step (0-based, layer plan then head) */
    char kind[40];      /* kernel and weight type: "matmul.bf16", "rmsnorm", "head.matmul.q4_0" */
    int layer;          /* layer index, -1 for embedding and head */
    char op[40];        /* what it computes there: "ffn_down", "conv.in_proj" */
    uint32_t groups[3]; /* workgroup counts x, y, z */
    uint64_t bytes;     /* weight bytes it reads (0: reads no weights) */
    bool bytes_again;   /* its bytes are counted by other dispatches too (plan.h): not in the floor */
    uint64_t kv_bytes;  /* attention: the KV-pool bytes of the keys the step's columns attend to,
                           each key once (a slot's keys 0 .. its last column's position); not in
                           the floor (0: reads no KV pool) */
    uint64_t flops;      /* useful FLOPs it performs for the model (products 2·rows·k·cols,
                            attention's QK and PV, convolutions; 0: element work not counted;
                            docs/figures.md) */
    uint64_t flops_exec; /* product FLOPs its arithmetic units execute for them: the exact gemm on
                            cooperative matrices runs 2 or 3 products per useful one; = flops
                            elsewhere (0 in files written before the field: taken as flops) */
    /* the kernel variant that ran: its pipeline (shader module name, "" when unknown, e.g. a file
     * written before this field) and the specialisation constants it was built with (constant_id
     * 0..n_spec-1; the shader's header names them): e.g. which gemm tile and split count */
    char pipeline[64];
    uint32_t spec[PROF_MAX_SPEC];
    int n_spec;
    struct timing us;   /* its GPU time (end − start timestamps), one sample per rep (sampled
                           timing: one per rep that timestamped it) */
    double start_us;    /* its start, from the step's first timestamp, in the rep the executor
                           keeps for the trace (any rep: the trace shows one) */
};

/* One row of the by-kernel table (filled by profile_by_kind). */
struct prof_kind {
    char kind[40];
    int n;            /* dispatches of this kind per step */
    struct timing us; /* per rep: sum of its dispatches' times in that rep */
    double share;     /* of the sum of its group's medians: the layer kinds' (so the layer kinds'
                         shares add up to 100 %), or the head kinds' (kinds starting "head.") */
    double gbps;      /* (bytes + kv_bytes) / median time; 0 for kinds that read neither */
    double bw_share;  /* gbps / device copy_gbps (0 when either is unknown) */
    uint64_t bytes;   /* weight bytes all its dispatches read per step */
    uint64_t kv_bytes; /* KV-pool bytes all its dispatches read per step (attention) */
    uint64_t flops, flops_exec; /* all its dispatches' per step (struct prof_dispatch) */
    double tflops;     /* flops / median time, TFLOP/s (1e12 FLOP/s); 0 for kinds that count none */
    double roof_share; /* tflops / device tensor roof (0 when either is unknown) */
};

/* --attribution: one row per kind (or per kind and op): the in-place cost of its dispatches
 * without timestamps, measured as the step with those dispatches run one extra time (into scratch
 * copies of their outputs) minus the plain step, per rep (attribution.c says how). */
struct prof_attrib {
    char kind[40];
    char op[40];       /* "" when grouped by kind only */
    int n;             /* dispatches in the group */
    struct timing us;  /* per rep: wall(step + group repeated) − wall(step), µs */
    struct est diff;   /* median of us and its standard error */
    double ts_us;      /* the group's timestamp figure (median of its per-rep sum; 0: none) */
    bool ts_inflated;  /* ts_us exceeds diff by more than 10 % and by more than diff's noise */
    bool attributable; /* false: some dispatch of the group declares no outputs (not measured) */
};

struct prof_attribution {
    bool ran;
    bool by_op;               /* rows are kind × op */
    int repeat;               /* the plan recorded this many times per measured step */
    struct prof_attrib *rows; /* n_rows, owned */
    int n_rows;
    struct timing base_us; /* wall of the plain step (the baseline of every row) */
    struct est sum;        /* Σ of the rows' differentials */
    struct est marginal;   /* the uninstrumented marginal pass of the same plan (layers + head) */
    struct est closure;    /* sum − marginal */
    double closure_share;  /* closure / marginal */
};

/* How a verdict came out. */
enum verdict {
    VERDICT_UNKNOWN,      /* no kernel sum (no timestamps) */
    VERDICT_SUBMIT_POLL,  /* gaps below 25 % of the marginal pass beyond noise */
    VERDICT_PER_DISPATCH, /* gaps above 25 % of the marginal pass beyond noise */
    VERDICT_INCONCLUSIVE, /* the 25 % line lies inside the noise of the gaps, or the marginal pass
                             inside its own: no advice from figures within noise */
};
const char *
verdict_name(enum verdict v); /* "unknown", "submit-poll", "per-dispatch", "inconclusive" */

/* The gap probe: host wall of submit + wait with the plan recorded 1× and 2× in one command buffer
 * and no timestamps, over --reps probe reps. Statistic: the median on both sides of every
 * subtraction (walls and timestamp sums alike); every derived term carries its uncertainty
 * (struct est) and a term within its noise is printed as such. The scalar fields keep the JSON
 * schema; the *_est fields hold value and error. */
struct gap_probe {
    bool ran;
    int n_reps;             /* probe reps (one sample of each wall per rep) */
    struct timing w1, w2;   /* walls, plan 1× and 2× (owned) */
    struct timing hw1, hw2; /* the same with the head appended (owned; empty without head) */
    enum verdict verdict;
    struct est marginal, gaps, fixed, lm_head, ts_add; /* value ± error of the derived terms */
    struct est line;           /* 0.75·marginal − busy: gaps above (> 0) or below 25 % of a pass */
    double ts_pair_us;         /* ts_add per timestamped dispatch: the cost of one timestamp pair */
    double wall1_us, wall2_us; /* median wall, plan 1× and 2× */
    double marginal_us;        /* wall2 − wall1: one plan pass, submit and wait cancelled */
    double kernel_sum_us;      /* the plan's timestamp kernel sum (busy), head excluded */
    double gaps_us;            /* marginal − kernel sum: inter-dispatch dead time */
    double gaps_share;         /* gaps / marginal */
    double fixed_us;           /* wall1 − marginal: fixed submit + poll cost */
    bool per_dispatch;         /* verdict == VERDICT_PER_DISPATCH (fusion reclaims the gaps) */
    /* the same pair with the LM head appended (last stage with --logits) */
    bool head;
    double head_wall1_us, head_wall2_us;
    double marginal_head_us;   /* head_wall2 − head_wall1 */
    double lm_head_us;         /* marginal_head − marginal */
    double lm_head_share;      /* lm_head / marginal_head */
    double head_kernel_sum_us; /* the head's timestamp sum, to cross-check lm_head */
    double head_gbps;          /* head_bytes_real / lm_head */
    double head_gbps_f16, head_gbps_q4_0;
    uint64_t head_bytes_real; /* the head's weight bytes in its stored dtype */
    uint64_t head_bytes_f16;  /* V·H·2 */
    uint64_t head_bytes_q4_0; /* V·H·0.5625 (18 bytes per 32 weights) */
    bool disagree;            /* |head_kernel_sum − lm_head| > 10 % of the larger, beyond noise */
    /* the walls' plan (layers, no head): its dispatches and the pipeline barriers of its untimed
     * recording (plan_barriers: only where data flows, and one after the last), i.e. its dependent
     * stages, whose serial latency bounds narrow steps (bench/26); 0 / 0 where unknown (older files) */
    int dispatches, barriers;
};

/* Inputs of the gap-probe arithmetic: timings of the probe and the timestamped run (any may be
 * empty: n_reps 0). */
struct gap_probe_in {
    const struct timing *w1, *w2;   /* probe walls without the head */
    const struct timing *hw1, *hw2; /* with the head (NULL: no head) */
    const struct timing *busy;      /* the layer plan's timestamp sum per rep */
    const struct timing *head_sum;  /* the head's timestamp sum per rep */
    const struct timing *wall_ts;   /* wall of the timestamped step (for "timestamps add") */
    int n_timestamped;              /* timestamp pairs in that step (per-pair cost) */
    uint64_t head_bytes_real, vocab, hidden;
};

struct prof_device {
    char name[256];
    char driver[128];           /* driver name and version as the device reports them */
    char api[32];               /* "Vulkan 1.3.239" */
    double timestamp_period_ns; /* ns per timestamp tick */
    uint32_t timestamp_valid_bits;
    bool has_timestamps; /* false: no per-dispatch times; busy/head/dispatch us are empty */
    double copy_gbps; /* measured device-to-device copy bandwidth (read + write), 0: not measured */
    double roof_tflops; /* measured arithmetic roof of the wide plan's gemm units, TFLOP/s (1e12
                           FLOP/s; gpu_tensor_roof), 0: not measured */
    char roof_path[32]; /* what roof_tflops measured: "NV coopmat f16" (cooperative matrices) or
                           "f32 FMA" (the FMA twin's); "" when not measured */
    char gemm_path[8]; /* the wide plan's gemm path: "khr", "nv", "fma", "cm2" (tune.h enum gemm_path); "": a
                          file written before this field */
};

struct prof_model {
    char family[32]; /* "lfm2", "qwen3_5", "glm_ocr" */
    int n_layers;    /* of the whole model */
    int hidden;
    int vocab;
    char dtype[16];   /* weight storage: "bf16", "f16", "q8_0", "q4_0", "mixed" */
    char source[4096]; /* checkpoint folder, .gguf path or "builtin:<name>" */
};

struct prof_shape {
    char plan[16]; /* "batch", "wide" or "spec" */
    bool plan_auto;    /* the plan was the auto choice (select.h sel_plan_auto), not named on the command line */
    int gemm_min_cols; /* the narrowest step the wide plan tiles its matrix products at (0: unknown,
                          e.g. a file written before this field): below it they are batch's */
    int cols, pos, slots;
    int draft; /* spec: draft tokens a slot (cols / slots); 0 for the other plans */
    bool logits;
    int logit_cols; /* columns with a logit: cols, or slots for the prefill shape (0: none) */
};

/* How the per-dispatch times were taken. */
enum timing_mode {
    TIMING_FULL,    /* every dispatch bracketed by a timestamp pair in every rep */
    TIMING_SAMPLED, /* rep r brackets dispatches i with i % stride == r % stride; stride·reps
                       steps give every dispatch `reps` samples (fewer timestamps a step) */
    TIMING_NONE,    /* no timestamps (device without them, or asked): walls only */
};
const char *timing_mode_name(enum timing_mode m); /* "full", "sampled", "none" */

struct profile {
    char tool[64]; /* "lfm2-profile-stage" */
    char version[32];
    char args[2048]; /* the command line, space-joined */
    char tune[512];  /* the run's --tune overrides as key=value,... (tune.h tune_format; "" none) */
    char test_hooks[256]; /* LFM2_TEST_* hooks set for the run (tuning.h tuning_describe; "" none) */
    char precision[16]; /* the run's --precision: "exact" or "serving" (plan_kind.h; files written
                           before the field: "exact", the only one then) */
    struct prof_device device;
    struct prof_model model;
    struct {
        int a, b;
    } shard; /* layers a:b */
    struct prof_shape shape;
    struct timing busy_us; /* layer plan's kernel sum per step, one sample per rep */
    struct timing head_us; /* head's kernel sum per step (n_reps 0 when no head dispatches) */
    struct timing wall_us; /* host submit + wait of one profiled step (with timestamps) */
    struct prof_dispatch *dispatches; /* n_dispatches, owned */
    int n_dispatches;
    struct prof_kind *by_kind; /* n_kinds, owned, filled by profile_by_kind */
    int n_kinds;
    struct gap_probe gap_probe;
    double tok_s; /* cols·1e6 / busy median (from the wall median when there are no timestamps) */
    enum timing_mode timing; /* how dispatches were timed */
    int sample_stride;       /* TIMING_SAMPLED: dispatches between two timestamped ones */
    int steps_timed;         /* timestamped steps run (reps, or reps·stride when sampled) */
    uint64_t floor_bytes;    /* weight bytes the step must read at least (each weight once) */
    double floor_us;         /* floor_bytes ÷ copy bandwidth (0: bandwidth unknown) */
    struct prof_attribution attribution;
};

/* Frees everything a profile owns and zeroes it. */
void profile_free(struct profile *p);

/* The run's precision: "exact" or "serving" (a profile made without it, e.g. synthetic: "exact"). */
const char *profile_precision(const struct profile *p);

/* Dispatches of the step that ran in serving precision: their pipeline is a _serving variant
 * (shaders/variants.txt's flag). 0 in exact precision, and in serving where no gemm ran. */
int profile_serving_dispatches(const struct profile *p);

/* true for dispatches and kinds of the LM head ("head." prefix). */
bool prof_kind_is_head(const char *kind);

/* Optional helper for the executor: computes busy_us (layer dispatches) and head_us ("head."
 * dispatches) per rep from the dispatches' samples, then tok_s. Needs has_timestamps. */
void profile_totals(struct profile *p);

/* Groups dispatches by kind into p->by_kind (replacing any previous table): per-kind timing per
 * rep, share (of the layer kinds' summed medians; head kinds: of the head kinds'), GB/s, share of
 * copy bandwidth; sorted by total time descending. Also sets tok_s. */
void profile_by_kind(struct profile *p);
/* The denominator of the by-kind shares: the sum of the medians of the layer kinds (head false) or
 * of the head kinds (head true). Not GPU busy's median: a median of per-rep sums is not the sum of
 * the per-kind medians, so shares of busy did not add up to 100 %. */
double profile_kinds_sum(const struct profile *p, bool head);
/* tok/s at this width counting the LM head that ran: cols·1e6 / (busy + head) medians, or from the
 * gap probe's 1× wall with the head when there are no timestamps (0: unknown, or no head ran). */
double profile_tok_s_head(const struct profile *p);

/* The gap-probe arithmetic of docs/design.md on timings (median both sides, errors from the reps);
 * sets g->ran and copies the probe's walls into g (freed by gap_probe_free / profile_free). */
void gap_probe_compute_reps(struct gap_probe *g, const struct gap_probe_in *in);
void gap_probe_free(struct gap_probe *g);
/* The same on exact scalars (no spread: nothing is within noise). With head false the head terms
 * are zero. */
void gap_probe_compute(struct gap_probe *g, double w1_min_us, double w2_min_us,
                       double kernel_sum_us, bool head, double hw1_min_us, double hw2_min_us,
                       double head_kernel_sum_us, uint64_t head_bytes_real, uint64_t vocab,
                       uint64_t hidden);

/* Weight bytes a step must read, each weight once: the dispatches grouped by (layer, op), each
 * group's largest byte count (a matmul of many columns runs in passes, each tagged with the whole
 * weight); dispatches whose bytes other dispatches carry too (bytes_again) left out. */
uint64_t profile_floor_bytes(const struct profile *p);
/* The step's FLOPs, layers and head: the useful ones (*flops) and those the arithmetic units
 * executed for them (*exec; a dispatch's flops_exec 0, as in older files, counts as its flops). */
void profile_flops(const struct profile *p, uint64_t *flops, uint64_t *exec);

/* The bound that applies to a step (the summary, the width table, the HTML page): the larger of
 * its two lower bounds, the memory floor (weight bytes ÷ copy bandwidth) and the compute roof
 * (useful FLOPs ÷ the measured arithmetic roof). Equivalently: compute-bound when the step's
 * arithmetic intensity (FLOPs per weight byte) passes the device's balance (roof FLOP/s ÷ copy
 * bytes/s), memory-bound otherwise; unknown with neither figure. */
enum bound_kind { BOUND_UNKNOWN, BOUND_MEMORY, BOUND_COMPUTE };
const char *bound_kind_name(enum bound_kind k); /* "memory", "compute", "unknown" */
/* Which bound applies given the two lower bounds (µs, 0: unknown): compute when roof_us passes
 * floor_us, memory when only the floor is known or it is the larger. */
enum bound_kind bound_pick(double floor_us, double roof_us);
struct bound {
    enum bound_kind kind;
    double intensity; /* FLOPs ÷ weight bytes, FLOP/byte (0: no bytes) */
    double balance;   /* roof FLOP/s ÷ copy bytes/s, FLOP/byte (0: either unknown) */
    double floor_us;  /* bytes ÷ copy bandwidth (0: unknown) */
    double roof_us;   /* FLOPs ÷ roof (0: unknown, or no FLOPs counted) */
    double x;         /* step ÷ the applying bound's time (0: unknown) */
};
/* From the figures: useful FLOPs, weight bytes, copy GB/s, roof TFLOP/s (0: not measured), the
 * step's time in µs. */
struct bound bound_of(uint64_t flops, uint64_t bytes, double copy_gbps, double roof_tflops, double step_us);
/* The same for a profile's step (its floor_bytes and FLOPs) of step_us. */
struct bound profile_bound(const struct profile *p, double step_us);
/* The step's time as the summary states it and sets against its bound (µs; summary.c): kernel sums
 * with timestamps (layers + head), else the gap probe's 1× wall (with the head when it ran), else
 * the profiled wall. */
double profile_step_us(const struct profile *p);

/* --attribution arithmetic: per row its differential (median ± error), its timestamp figure from
 * the dispatches, the inflation flag, then the sum and the closure against `marginal`. */
void attribution_compute(struct profile *p, struct est marginal);

/* Number formatting shared by the reports: three significant digits, no exponent ("0.0123",
 * "4.26", "828", "4290"). */
const char *fmt_sig3(char *buf, size_t size, double v);

/* The plan line of the reports: "plan auto -> wide (the plan a serving engine runs at 16 cols: wide
 * from 6); kernels reading weights: gemm_fma.bf16, ..." or, for the wide plan below its gemm width, that its
 * matrix products are the batch plan's. */
const char *report_plan_line(char *buf, size_t size, const struct profile *p);

/* --units: the time unit of the text and Markdown profile reports (JSON, CSV stay in µs). auto:
 * µs for steps under 10 ms, ms under 10 s, else s (one unit for the whole report, so its columns
 * compare). */
enum report_units { UNITS_AUTO, UNITS_US, UNITS_MS, UNITS_S };
/* "auto", "us", "ms", "s" (also "µs") into *u; false for anything else. */
bool report_units_parse(const char *s, enum report_units *u);

/* Reports. The text keeps the seed's headings word for word (in µs; another unit replaces "µs"
 * and nothing else). Both start with the summary block (summary.c) after the header. report_text
 * and report_markdown are the _in forms with UNITS_AUTO. */
void report_text(FILE *out, const struct profile *p);
void report_text_in(FILE *out, const struct profile *p, enum report_units u);
void report_markdown_in(FILE *out, const struct profile *p, enum report_units u);
/* Only the header (device, model, shard): a width list prints it once above its table. */
void report_text_header(FILE *out, const struct profile *p);
void report_markdown_header(FILE *out, const struct profile *p);
void report_markdown(FILE *out, const struct profile *p);

/* JSON (schema: docs/design.md "JSON and compare"). write: ST_RUNTIME when the file cannot be written.
 * read: fills *p (caller frees with profile_free); ST_USAGE naming the file and the field when the
 * file is missing, not JSON, or lacks a field. */
int report_json_write(const char *path, const struct profile *p, struct err *e);
int report_json_read(const char *path, struct profile *p, struct err *e);
/* The same from text[0..len) (path names it in messages). Strict: one JSON object, unique keys,
 * integers where integers are meant, optional fields of the right type, bounded counts. */
int report_json_parse(const char *path, const char *text, size_t len, struct profile *p,
                      struct err *e);
struct cJSON;
/* One profile as the JSON object --json writes, and read back from such an object (a stage of a
 * --stages file; path names the file in messages). */
struct cJSON *report_json_profile(const struct profile *p);
int report_json_profile_read(const char *path, const struct cJSON *obj, struct profile *p,
                             struct err *e);
/* Prints root (pretty or compact) to path and deletes root; errors name `flag` and path. Shared by
 * --json and --trace. */
int report_json_save(const char *path, const char *flag, struct cJSON *root, bool pretty,
                     struct err *e);
/* A JSON number that reads back as exactly v (null when v is not finite). */
struct cJSON *report_json_number(double v);
/* Adds dispatch d's kernel variant to obj: "pipeline" and "spec" (nothing when d names none). The
 * --json dispatches and the --trace slices' args. */
void report_json_variant(struct cJSON *obj, const struct prof_dispatch *d);

/* Chrome trace-event JSON ({"traceEvents":[...]}, opens in Perfetto / chrome://tracing): one "X"
 * slice per dispatch, ts = start_us, dur = that dispatch's sample in rep `rep` (its median when rep
 * is out of range). Returns ST_USAGE when the device had no timestamps, ST_RUNTIME on write
 * failure. */
int trace_write(const char *path, const struct profile *p, int rep, struct err *e);

/* Compares two runs on medians. ST_USAGE when they are not the same experiment (message names the
 * difference); prints the per-kind and total table to out; ST_REGRESSION when the total or a
 * common kind is slower by more than threshold_pct percent AND by more than 1 µs per step AND
 * beyond noise; ST_UNDECIDED when none is but one such change is too few reps to tell; ST_OK
 * otherwise. */
#define COMPARE_NOISE_US 1.0
/* Whether b and c are the same experiment: model (family, layers, hidden, vocab, dtype), shard,
 * shape (plan, cols, pos, slots, draft, logits) and, with device, the device and its timestamps.
 * ST_USAGE naming the first difference ("cannot compare: shape cols differs: base 2, current 4"). */
int compare_identity(const struct profile *b, const struct profile *c, bool device, struct err *e);
/* A comparison fails CI, so its noise rule is free of any assumption about the noise's shape where
 * the reps allow: a change counts when the one-sided Mann–Whitney p-value is below COMPARE_ALPHA (one
 * false alarm in a thousand rows of pure noise). Below about COMPARE_MIN_REPS reps a side no p-value
 * gets that low (rank_test_min_p), and the separation rule decides instead: every current rep above
 * every base rep by more than the threshold, the floor and compare_gap_multiple() times the two
 * sides' ranges together. A change above the threshold that neither decides is undecided
 * (ST_UNDECIDED) with the reps a side that would decide. The ± printed beside each delta is
 * COMPARE_NOISE_K standard errors of the difference of the medians. */
#define COMPARE_ALPHA 0.001
#define COMPARE_MIN_REPS 7
#define COMPARE_NOISE_K 2.0

/* One-sided Mann–Whitney (Wilcoxon rank-sum) test: the probability, if x and y came from one
 * distribution, of a rank sum of y as large as observed (ties share ranks). Exact for nx, ny <= 25,
 * normal approximation with continuity and tie correction above; O(n log n) (sorts both sides),
 * doubles throughout (any n up to the JSON cap of 100 k reps). 1 when either side is empty. */
double rank_test_greater(const double *x, int nx, const double *y, int ny);
/* The least p-value the rank test can give at these sizes: 1 / C(nx + ny, nx). */
double rank_test_min_p(int nx, int ny);
/* The separation rule's multiple k of the ranges at nb and nc reps: the k at which reps of one
 * evenly spread (uniform) distribution pass the rule with probability COMPARE_ALPHA (2 a side:
 * 11.9, 3: 1.66, 5: 0.19); 0 where the rank test can decide. */
double compare_gap_multiple(int nb, int nc);
int compare_profiles(FILE *out, const struct profile *base, const struct profile *cur,
                     double threshold_pct, struct err *e);
/* The same, as Markdown when markdown is set, and with json_path != NULL also written as JSON
 * ({base, current, threshold_pct, rows: [{name, base_us, current_us, delta_us, delta_pct,
 * noise_us, p_value, verdict, reason, reps_to_decide (undecided rows)}], regression, undecided,
 * reps_to_decide}). A row is a regression only when its median change is above threshold_pct AND
 * above COMPARE_NOISE_US AND beyond the two runs' noise (rank test p < COMPARE_ALPHA, or the
 * separation rule at too few reps); a change above the threshold but inside the noise is printed
 * "within noise" and does not fail; one the reps are too few to tell is "UNDECIDED" and the call
 * returns ST_UNDECIDED (when nothing regressed), e naming the reps that would decide. */
int compare_profiles_fmt(FILE *out, const struct profile *base, const struct profile *cur,
                         double threshold_pct, bool markdown, const char *json_path, struct err *e);

/* --cols with a list, or --plans: one row per width × plan, then the summary table. */
struct crossover_row {
    int cols;
    char plan[24]; /* the plan that ran; "auto -> wide" when the auto rule chose it */
    bool ok; /* false: the plan failed; why holds the message */
    char why[256];
    struct est step_us; /* the gap probe's 1× wall (with the head when it ran): no timestamps */
    double busy_us;     /* timestamp kernel sum median (head included), 0: no timestamps */
    double tok_s;       /* cols · 1e6 / step */
    double floor_us;    /* weights ÷ measured copy bandwidth */
    double roof_us;     /* useful FLOPs ÷ measured arithmetic roof (0: either unknown); the larger
                           of floor_us and roof_us is the bound that applies (bound_pick) */
    uint64_t kernels_sig; /* hash of every dispatch's kernel variant (pipeline and constants) in step
                             order; 0: unknown (no dispatches), matches no other row */
    uint64_t matrix_sig;  /* the same over the dispatches that read weights (the matrix products) */
};
/* Two rows of one width whose plans ran the same kernels: the crossover table marks the later one
 * ("same kernels as batch", or "same matrix kernels as batch" when only the weight-reading
 * dispatches agree). Writes "" when no earlier row of its width matches. */
void crossover_same_kernels(const struct crossover_row *rows, int i, char *buf, size_t size);
/* Fills row from a finished profile. */
void crossover_row_from(struct crossover_row *row, const struct profile *p);
/* The summary table: width, plan, step, busy, tok/s, × floor, and per width the faster plan
 * (or "within noise" when the two steps are). */
void report_crossover(FILE *out, const struct crossover_row *rows, int n, bool markdown);
/* The same in a --units unit (report_crossover: µs; auto: by the table's slowest step). */
void report_crossover_in(FILE *out, const struct crossover_row *rows, int n, bool markdown,
                         enum report_units units);

/* --csv (export.c says the layout): each table appended to out (a memory stream: ftell says whether
 * a blank line must separate it from the one before). */
void csv_profile(FILE *out, const struct profile *p); /* by_kind and dispatch sections */
void csv_crossover(FILE *out, const struct crossover_row *rows, int n);
void csv_compare(FILE *out, const struct profile *base, const struct profile *cur);

/* --html: one self-contained page (html.c): the summary, a stacked bar of the kinds, a roofline,
 * the step's dispatch timeline, the gap-probe decomposition, the crossover chart of a width list
 * (rows, n; 0 when none) and a comparison (base != NULL: compare_text, the comparison's text
 * report, beside its per-kind chart). Appended to out. */
void report_html(FILE *out, const struct profile *p, const struct crossover_row *rows, int n,
                 const struct profile *base, const char *compare_text);


#endif
