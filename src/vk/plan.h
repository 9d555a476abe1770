/* plan.h - a plan is the list of dispatches of one step, built once for a shard and a width.
 *
 * Every dispatch carries what it needs to be recorded again and again with no host work beyond
 * vkCmd* calls (pipeline, push constants holding buffer device addresses and scalars, group
 * counts) and what the profiler reports about it (kind, layer, op, bytes of weights it reads).
 * Recording puts a full memory barrier after each dispatch, or, for a plan that knows the buffers
 * its dispatches write (plan_bufs) and is recorded without timestamps, only before a dispatch that
 * touches what an earlier one since the last barrier wrote, or writes what one read. */
#ifndef LFM2_PLAN_H
#define LFM2_PLAN_H

#include "common.h"
#include "gpu.h"
#include "plan_kind.h"

#define PLAN_PUSH_MAX 128
#define DISPATCH_MAX_OUTS 5 /* a gemm prep: x' and 4 zeroed outputs */


struct dispatch {
    const struct gpu_pipeline *pipe;
    uint8_t push[PLAN_PUSH_MAX]; /* push-constant bytes, laid out as the shader's block */
    uint32_t push_size;
    uint32_t groups[3];
    char kind[40];  /* kernel and weight type: "matmul.bf16", "rmsnorm", "attn.decode", "head.matmul.q4_0" */
    int layer;      /* layer index, -1 for embedding and head */
    char op[40];    /* what it computes there: "ffn_down", "conv.in_proj", "attn.q_proj" */
    uint64_t bytes; /* weight bytes it reads (0 for kernels that read no weights) */
    bool bytes_again; /* those bytes are tagged on the products it serves too, so the step's floor
                         counts them there (the widening of Q4_0 weights into f16 copies) */
    uint64_t kv_key_bytes; /* attention: KV-pool bytes one key costs it (the k and v rows of its kv
                              heads); the profiler multiplies by the keys of the step it profiles */
    /* Arithmetic, for the roofline: the useful FLOPs the dispatch performs for the model (a
     * product 2·rows·k·cols, a SwiGLU product twice that; 0 for kernels whose element work is not
     * counted: docs/figures.md lists which are), and the product FLOPs its arithmetic units
     * execute for them: the wide plan's exact gemm on cooperative matrices multiplies the f16 high
     * and low parts of its activations (and of F32/Q8_0 weights) separately, so 2 or 3 times
     * flops; equal to flops elsewhere. */
    uint64_t flops, flops_exec;
    uint64_t attn_pair_flops; /* attention: FLOPs one (column, key) pair costs it (QK and PV over its
                                 q heads: 4·n_h·head_dim); the profiler multiplies by the pairs of
                                 the step it profiles */
    /* Its outputs, for --attribution (which records a dispatch again with its outputs redirected
     * to scratch copies): byte offsets into push of the 64-bit device addresses it writes through
     * (in-place operands such as an accumulated y or a state it reads and writes included).
     * n_out 0: not declared, so the dispatch cannot be repeated harmlessly. */
    uint8_t n_out;
    uint8_t out_at[DISPATCH_MAX_OUTS];
};

/* The buffers (device address ranges) a plan's dispatches may write: an engine's activations,
 * state and KV. Everything else a dispatch's push names (weights) is only read. */
#define PLAN_MAX_BUFS 40
struct plan_bufs {
    int n;
    uint64_t lo[PLAN_MAX_BUFS], hi[PLAN_MAX_BUFS]; /* [lo, hi) */
};

struct k_scratch; /* the kernels' device scratch (kernels.h), owned by the engine */

struct plan {
    struct dispatch *d;
    int n, cap;
    enum plan_kind kind;           /* set before the builder runs; kept by plan_free */
    const struct plan_bufs *bufs; /* NULL: a barrier after every dispatch; kept by plan_free */
    struct k_scratch *scratch;    /* the ranges kernels that need scratch take (NULL: none; such a
                                     kernel then fails); set before the builder runs; kept by plan_free */
};

/* Appends a dispatch; the plan grows as needed. Returns the new dispatch (zeroed but for the
 * arguments) so the caller can fill tags. */
struct dispatch *plan_add(struct plan *p, const struct gpu_pipeline *pipe, const void *push, uint32_t push_size,
                          uint32_t gx, uint32_t gy, uint32_t gz);
/* Sets the tags of a dispatch (kind, layer, op, bytes). */
void dispatch_tag(struct dispatch *d, const char *kind, int layer, const char *op, uint64_t bytes);
/* Sets the dispatch's FLOPs: flops useful, flops·exec_mult executed (dispatch above). */
void dispatch_flops(struct dispatch *d, uint64_t flops, uint32_t exec_mult);
/* Declares the dispatch's n outputs: n push offsets (size_t each) of the addresses it writes. */
void dispatch_outputs(struct dispatch *d, int n, ...);
/* Moves the plan's last dispatch back to just after the last earlier dispatch whose push holds an
 * address in [lo, hi) (to the start when none does), so that it may run beside the dispatches it
 * passes. Only for a dispatch that reads nothing a plan dispatch writes and writes only [lo, hi)
 * (gemm.c: the widening of Q4_0 weights into their f16 copy); whether a barrier must separate
 * it from its neighbours is decided at recording as for any dispatch (plan_barriers). */
void plan_hoist_last(struct plan *p, uint64_t lo, uint64_t hi);
void plan_free(struct plan *p);

/* The barrier schedule of a recording: after[i] (i < p->n) says whether a barrier follows dispatch
 * i. Every one when timed or when the plan does not know its buffers; else only where dispatch i+1
 * touches a buffer written since the last barrier or writes one read since, and on both sides of a
 * dispatch whose outputs are undeclared or outside the plan's buffers. The last is always true.
 * The recording and the
 * gap probe's count of stages both take it from here. */
void plan_barriers(const struct plan *p, bool timed, bool *after);

/* Records the plan into the command buffer being recorded. With ts_base >= 0, timestamp query
 * ts_base + 2i is written before dispatch i and ts_base + 2i + 1 after it (and its barrier): a
 * timed plan keeps a barrier after every dispatch so each time is its own. The recording ends with
 * a barrier either way. */
void plan_record(struct gpu *g, const struct plan *p, int ts_base);

/* The same, timestamping only dispatches i with i % stride == phase (sampled timing; query
 * numbers stay ts_base + 2i and ts_base + 2i + 1). stride 1, phase 0: plan_record. */
void plan_record_sampled(struct gpu *g, const struct plan *p, int ts_base, int stride, int phase);

#endif
