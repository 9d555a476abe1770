/* profile.h - what one profiling run measured, and everything done with it after the timings exist:
 * per-kind aggregation, gap-probe arithmetic, the text / Markdown report, JSON (write and read
 * back), the Chrome trace and the comparison of two runs (DESIGN.md "Profiling contract",
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

/* Statistics of one quantity over the profiled repetitions, plus every sample (µs). */
struct timing {
    double mean, median, min;
    double *reps; /* n_reps samples, in the order they were taken (owned) */
    int n_reps;
};

/* Computes mean / median / min of samples[0..n) and copies them into reps (n = 0 gives zeros). */
struct timing timing_from(const double *samples, int n);
void timing_free(struct timing *t);

/* One dispatch of the profiled step: the layer plan's dispatches first, then the head's. */
struct prof_dispatch {
    int index;          /* position in the step (0-based, layer plan then head) */
    char kind[40];      /* kernel and weight type: "matmul.bf16", "rmsnorm", "head.matmul.q4_0" */
    int layer;          /* layer index, -1 for embedding and head */
    char op[40];        /* what it computes there: "ffn_down", "conv.in_proj" */
    uint32_t groups[3]; /* workgroup counts x, y, z */
    uint64_t bytes;     /* weight bytes it reads (0: reads no weights) */
    struct timing us;   /* its GPU time (end − start timestamps), one sample per rep */
    double start_us;    /* its start, from the step's first timestamp, in the rep the executor
                           keeps for the trace (any rep: the trace shows one) */
};

/* One row of the by-kernel table (filled by profile_by_kind). */
struct prof_kind {
    char kind[40];
    int n;            /* dispatches of this kind per step */
    struct timing us; /* per rep: sum of its dispatches' times in that rep */
    double share;     /* of busy (layer kinds) or of the head's sum (kinds starting "head.") */
    double gbps;      /* bytes / mean time; 0 for kinds that read no weights */
    double bw_share;  /* gbps / device copy_gbps (0 when either is unknown) */
    uint64_t bytes;   /* weight bytes all its dispatches read per step */
};

/* The gap probe: host wall of submit + wait with the plan recorded 1× and 2× in one command buffer
 * and no timestamps, minimum over the probe reps (gap_probe_compute fills the derived terms). */
struct gap_probe {
    bool ran;
    double wall1_us, wall2_us; /* min wall, plan 1× and 2× */
    double marginal_us;        /* wall2 − wall1: one plan pass, submit and wait cancelled */
    double kernel_sum_us;      /* the plan's timestamp kernel sum (busy), head excluded */
    double gaps_us;            /* marginal − kernel sum: inter-dispatch dead time */
    double gaps_share;         /* gaps / marginal */
    double fixed_us;           /* wall1 − marginal: fixed submit + poll cost */
    bool per_dispatch;         /* verdict: gaps > 25 % of marginal (fusion reclaims them) */
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
    bool disagree;            /* |head_kernel_sum − lm_head| > 10 % of the larger */
};

struct prof_device {
    char name[256];
    char driver[128];           /* driver name and version as the device reports them */
    char api[32];               /* "Vulkan 1.3.239" */
    double timestamp_period_ns; /* ns per timestamp tick */
    uint32_t timestamp_valid_bits;
    bool has_timestamps; /* false: no per-dispatch times; busy/head/dispatch us are empty */
    double copy_gbps; /* measured device-to-device copy bandwidth (read + write), 0: not measured */
};

struct prof_model {
    char family[32]; /* "lfm2", "qwen3_5", "glm_ocr" */
    int n_layers;    /* of the whole model */
    int hidden;
    int vocab;
    char dtype[16];   /* weight storage: "bf16", "f16", "q8_0", "q4_0", "mixed" */
    char source[512]; /* checkpoint folder, .gguf path or "builtin:<name>" */
};

struct prof_shape {
    char plan[16]; /* "batch", "wide" or "spec" */
    int cols, pos, slots;
    int draft; /* spec: draft tokens a slot (cols / slots); 0 for the other plans */
    bool logits;
};

struct profile {
    char tool[64]; /* "lfm2-profile-stage" */
    char version[32];
    char args[2048]; /* the command line, space-joined */
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
    double tok_s; /* cols·1e6 / busy mean (from wall mean when the device has no timestamps) */
};

/* Frees everything a profile owns and zeroes it. */
void profile_free(struct profile *p);

/* true for dispatches and kinds of the LM head ("head." prefix). */
bool prof_kind_is_head(const char *kind);

/* Optional helper for the executor: computes busy_us (layer dispatches) and head_us ("head."
 * dispatches) per rep from the dispatches' samples, then tok_s. Needs has_timestamps. */
void profile_totals(struct profile *p);

/* Groups dispatches by kind into p->by_kind (replacing any previous table): per-kind timing per
 * rep, share (head kinds: of the head's sum), GB/s, share of copy bandwidth; sorted by total time
 * descending. Also sets tok_s. */
void profile_by_kind(struct profile *p);

/* The gap-probe arithmetic of DESIGN.md; sets g->ran. With head false the head terms are zero. */
void gap_probe_compute(struct gap_probe *g, double w1_min_us, double w2_min_us,
                       double kernel_sum_us, bool head, double hw1_min_us, double hw2_min_us,
                       double head_kernel_sum_us, uint64_t head_bytes_real, uint64_t vocab,
                       uint64_t hidden);

/* Reports. The text keeps the seed's headings word for word. */
void report_text(FILE *out, const struct profile *p);
void report_markdown(FILE *out, const struct profile *p);

/* JSON (schema: DESIGN.md "JSON and compare"). write: ST_RUNTIME when the file cannot be written.
 * read: fills *p (caller frees with profile_free); ST_USAGE naming the file and the field when the
 * file is missing, not JSON, or lacks a field. */
int report_json_write(const char *path, const struct profile *p, struct err *e);
int report_json_read(const char *path, struct profile *p, struct err *e);
/* Prints root (pretty or compact) to path and deletes root; errors name `flag` and path. Shared by
 * --json and --trace. */
struct cJSON;
int report_json_save(const char *path, const char *flag, struct cJSON *root, bool pretty,
                     struct err *e);
/* A JSON number that reads back as exactly v (null when v is not finite). */
struct cJSON *report_json_number(double v);

/* Chrome trace-event JSON ({"traceEvents":[...]}, opens in Perfetto / chrome://tracing): one "X"
 * slice per dispatch, ts = start_us, dur = that dispatch's sample in rep `rep` (its median when rep
 * is out of range). Returns ST_USAGE when the device had no timestamps, ST_RUNTIME on write
 * failure. */
int trace_write(const char *path, const struct profile *p, int rep, struct err *e);

/* Compares two runs on medians. ST_USAGE when they are not the same experiment (message names the
 * difference); prints the per-kind and total table to out; ST_REGRESSION when the total or a
 * common kind is slower by more than threshold_pct percent AND by more than 1 µs per step; ST_OK
 * otherwise. */
#define COMPARE_NOISE_US 1.0
int compare_profiles(FILE *out, const struct profile *base, const struct profile *cur,
                     double threshold_pct, struct err *e);

#endif
