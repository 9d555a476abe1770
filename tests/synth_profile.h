/* synth_profile.h - a synthetic profile for the report and compare tests (no GPU, no timing):
 * a small LFM2-like shard with layer dispatches of several kinds and an LM head, every dispatch
 * with n_reps fresh random samples around a per-kind base time. Header-only, static. */
#ifndef LFM2_SYNTH_PROFILE_H
#define LFM2_SYNTH_PROFILE_H

#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "testutil.h"

struct synth_dispatch {
    const char *kind;
    int layer;
    const char *op;
    uint64_t bytes;
    double base_us;
};

static const struct synth_dispatch synth_plan[] = {
    {"embed.bf16", -1, "embed", 4096 * 2, 2.0},
    {"rmsnorm", 0, "attn_norm", 0, 3.0},
    {"matmul.bf16", 0, "conv.in_proj", 3 * 1024 * 1024 * 2, 40.0},
    {"shortconv", 0, "conv", 0, 5.0},
    {"matmul.bf16", 0, "conv.out_proj", 1024 * 1024 * 2, 15.0},
    {"rmsnorm", 0, "ffn_norm", 0, 3.0},
    {"matmul.bf16", 0, "ffn_gate_up", 2 * 4608 * 1024 * 2, 110.0},
    {"swiglu", 0, "ffn_act", 0, 4.0},
    {"matmul.bf16", 0, "ffn_down", 4608 * 1024 * 2, 60.0},
    {"rmsnorm", 1, "attn_norm", 0, 3.0},
    {"attn.decode", 1, "attn", 0, 25.0},
    {"head.rmsnorm", -1, "final_norm", 0, 2.5},
    {"head.matmul.bf16", -1, "lm_head", 65536ull * 1024 * 2, 90.0},
};
#define SYNTH_N ((int)(sizeof synth_plan / sizeof synth_plan[0]))
#define SYNTH_VOCAB 65536
#define SYNTH_HIDDEN 1024

/* Replaces d->us by samples base·(1 + 0.2·u), u fresh uniform. */
static inline void synth_times(struct prof_dispatch *d, double base, int n_reps, struct t_rng *r)
{
    double s[64];
    for (int i = 0; i < n_reps && i < 64; i++)
        s[i] = base * (1.0 + 0.2 * t_rng_uniform(r));
    timing_free(&d->us);
    d->us = timing_from(s, n_reps);
}

/* Fills the step's start offsets end to end with a fresh 1-3 µs gap before each dispatch. */
static inline void synth_starts(struct profile *p, int rep, struct t_rng *r)
{
    double t = 0;
    for (int i = 0; i < p->n_dispatches; i++) {
        t += 1.0 + 2.0 * t_rng_uniform(r);
        p->dispatches[i].start_us = t;
        t += p->dispatches[i].us.reps[rep];
    }
}

/* Recomputes everything derived from the dispatches (totals, by-kind, gap probe). */
static inline void synth_derive(struct profile *p)
{
    profile_totals(p);
    profile_by_kind(p);
    double marginal = p->busy_us.min * 1.6; /* per-dispatch gaps: 37.5 % of the marginal pass */
    double lm = p->head_us.min * 1.05;
    gap_probe_compute(&p->gap_probe, 300.0 + marginal, 300.0 + 2 * marginal, p->busy_us.min, true,
                      300.0 + marginal + lm, 300.0 + 2 * (marginal + lm), p->head_us.min,
                      synth_plan[SYNTH_N - 1].bytes, SYNTH_VOCAB, SYNTH_HIDDEN);
    p->gap_probe.dispatches = 13; /* the walls' plan: stages fewer than dispatches, as with products side by side */
    p->gap_probe.barriers = 9;
}

static inline void synth_profile(struct profile *p, uint64_t seed, int n_reps)
{
    struct t_rng r;
    t_rng_seed(&r, seed);
    memset(p, 0, sizeof *p);
    strcpy(p->tool, "lfm2-profile-stage");
    strcpy(p->version, "0.1.0");
    strcpy(p->args,
           "lfm2-profile-stage --model lfm2-350m --layers 0:16 --cols 4 --pos 16 --logits");
    strcpy(p->device.name, "Synthetic GPU 9000");
    strcpy(p->device.driver, "synthdrv 1.2.3");
    strcpy(p->device.api, "Vulkan 1.3.239");
    p->device.timestamp_period_ns = 1.0 + t_rng_uniform(&r);
    p->device.timestamp_valid_bits = 64;
    p->device.has_timestamps = true;
    p->device.copy_gbps = 3000.0 + 1000.0 * t_rng_uniform(&r);
    strcpy(p->device.gemm_path, "nv");
    strcpy(p->model.family, "lfm2");
    p->model.n_layers = 16;
    p->model.hidden = SYNTH_HIDDEN;
    p->model.vocab = SYNTH_VOCAB;
    strcpy(p->model.dtype, "bf16");
    strcpy(p->model.source, "builtin:lfm2-350m");
    p->shard.a = 0;
    p->shard.b = 16;
    strcpy(p->shape.plan, "batch");
    p->shape.cols = 4;
    p->shape.pos = 16;
    p->shape.slots = 4;
    p->shape.logits = true;
    p->n_dispatches = SYNTH_N;
    p->dispatches = calloc(SYNTH_N, sizeof *p->dispatches);
    for (int i = 0; i < SYNTH_N; i++) {
        struct prof_dispatch *d = &p->dispatches[i];
        const struct synth_dispatch *s = &synth_plan[i];
        d->index = i;
        snprintf(d->kind, sizeof d->kind, "%s", s->kind);
        snprintf(d->op, sizeof d->op, "%s", s->op);
        d->layer = s->layer;
        d->groups[0] = 1 + t_rng_u32(&r) % 4096;
        d->groups[1] = 1 + t_rng_u32(&r) % 16;
        d->groups[2] = 1;
        d->bytes = s->bytes;
        if (strstr(s->kind, "matmul")) { /* bf16 products of 4 columns: 2·rows·k·4 = 4·bytes */
            d->flops = 4 * s->bytes;
            d->flops_exec = prof_kind_is_head(s->kind) ? 2 * d->flops : d->flops;
        }
        if (i % 3 != 2) { /* a kernel variant on two dispatches of three (none: a file from before) */
            snprintf(d->pipeline, sizeof d->pipeline, "synth_%d", i);
            d->n_spec = 1 + i % PROF_MAX_SPEC;
            for (int k = 0; k < d->n_spec; k++) d->spec[k] = t_rng_u32(&r);
        }
        synth_times(d, s->base_us, n_reps, &r);
    }
    synth_starts(p, n_reps - 1, &r);
    double wall[64];
    for (int i = 0; i < n_reps && i < 64; i++)
        wall[i] = 700.0 + 50.0 * t_rng_uniform(&r);
    p->wall_us = timing_from(wall, n_reps);
    synth_derive(p);
}

/* Replaces every sample t of every dispatch of `kind` by t·factor + delta µs, then re-derives. */
static inline void synth_adjust_kind(struct profile *p, const char *kind, double factor,
                                     double delta)
{
    for (int i = 0; i < p->n_dispatches; i++) {
        struct prof_dispatch *d = &p->dispatches[i];
        if (strcmp(d->kind, kind) != 0) continue;
        double s[64];
        int n = d->us.n_reps;
        for (int k = 0; k < n; k++)
            s[k] = d->us.reps[k] * factor + delta;
        timing_free(&d->us);
        d->us = timing_from(s, n);
    }
    synth_derive(p);
}

/* Redraws every sample of every dispatch as base·shift·(1 + noise·(u − ½)), u fresh uniform from
 * seed: noise 0.02 gives tight reps, 1.0 reps spread over ±50 %. Then re-derives. */
static inline void synth_reshape(struct profile *p, double shift, double noise, uint64_t seed)
{
    struct t_rng r;
    t_rng_seed(&r, seed);
    for (int i = 0; i < p->n_dispatches; i++) {
        struct prof_dispatch *d = &p->dispatches[i];
        double s[64];
        int n = d->us.n_reps;
        for (int k = 0; k < n && k < 64; k++)
            s[k] = synth_plan[i].base_us * shift * (1.0 + noise * (t_rng_uniform(&r) - 0.5));
        timing_free(&d->us);
        d->us = timing_from(s, n);
    }
    synth_derive(p);
}

#endif
