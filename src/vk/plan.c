/* plan.c - dispatch lists and their recording. */
#include "plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuning.h"

struct dispatch *plan_add(struct plan *p, const struct gpu_pipeline *pipe, const void *push, uint32_t push_size,
                          uint32_t gx, uint32_t gy, uint32_t gz)
{
    CHECK(push_size <= PLAN_PUSH_MAX);
    CHECK(gx > 0 && gy > 0 && gz > 0);
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 64;
        p->d = realloc(p->d, (size_t)p->cap * sizeof *p->d);
        CHECK(p->d);
    }
    struct dispatch *d = &p->d[p->n++];
    memset(d, 0, sizeof *d);
    d->pipe = pipe;
    memcpy(d->push, push, push_size);
    d->push_size = push_size;
    d->groups[0] = gx;
    d->groups[1] = gy;
    d->groups[2] = gz;
    d->layer = -1;
    return d;
}

void dispatch_tag(struct dispatch *d, const char *kind, int layer, const char *op, uint64_t bytes)
{
    snprintf(d->kind, sizeof d->kind, "%s", kind);
    snprintf(d->op, sizeof d->op, "%s", op);
    d->layer = layer;
    d->bytes = bytes;
}

void dispatch_flops(struct dispatch *d, uint64_t flops, uint32_t exec_mult)
{
    d->flops = flops;
    d->flops_exec = flops * exec_mult;
}

void dispatch_outputs(struct dispatch *d, int n, ...)
{
    CHECK(n >= 0 && n <= DISPATCH_MAX_OUTS);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        size_t at = va_arg(ap, size_t);
        CHECK(at + 8 <= d->push_size);
        d->out_at[i] = (uint8_t)at;
    }
    va_end(ap);
    d->n_out = (uint8_t)n;
}

const char *plan_kind_name(enum plan_kind k)
{
    static const char *const names[PLAN_COUNT] = {"batch", "wide", "spec"};
    return k < PLAN_COUNT ? names[k] : "?";
}

const char *precision_name(enum precision p)
{
    static const char *const names[PRECISION_COUNT] = {"exact", "serving"};
    return p < PRECISION_COUNT ? names[p] : "?";
}

bool precision_parse(const char *s, enum precision *p)
{
    for (int i = 0; s && i < PRECISION_COUNT; i++)
        if (!strcmp(s, precision_name((enum precision)i))) {
            *p = (enum precision)i;
            return true;
        }
    return false;
}

void plan_hoist_last(struct plan *p, uint64_t lo, uint64_t hi)
{
    CHECK(p->n >= 1 && lo < hi);
    int at = 0; /* the new index: just after the last earlier dispatch that touches [lo, hi) */
    for (int i = p->n - 2; i >= 0 && !at; i--) {
        const struct dispatch *d = &p->d[i];
        for (uint32_t o = 0; o + 8 <= d->push_size && !at; o += 8) {
            uint64_t a;
            memcpy(&a, d->push + o, 8);
            if (a >= lo && a < hi) at = i + 1;
        }
    }
    struct dispatch last = p->d[p->n - 1];
    memmove(&p->d[at + 1], &p->d[at], (size_t)(p->n - 1 - at) * sizeof *p->d);
    p->d[at] = last;
}

void plan_free(struct plan *p)
{
    enum plan_kind kind = p->kind;
    const struct plan_bufs *bufs = p->bufs;
    struct k_scratch *scratch = p->scratch;
    free(p->d);
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->bufs = bufs;
    p->scratch = scratch;
}

/* Bit i set when address a lies in buffer i. */
static uint32_t buf_bit(const struct plan_bufs *b, uint64_t a)
{
    for (int i = 0; i < b->n; i++)
        if (a >= b->lo[i] && a < b->hi[i]) return 1u << i;
    return 0;
}

/* The buffers dispatch d touches (every 8-byte push field that points into one: reads and writes;
 * a scalar pair that happens to look like an address only costs a barrier) and those it writes
 * (its declared outputs). Returns false when a write is not known to land in a plan buffer. */
static bool dispatch_bufs(const struct plan_bufs *b, const struct dispatch *d, uint32_t *touch, uint32_t *write)
{
    uint64_t a;
    *touch = *write = 0;
    for (uint32_t at = 0; at + 8 <= d->push_size; at += 8) {
        memcpy(&a, d->push + at, 8);
        *touch |= buf_bit(b, a);
    }
    for (int o = 0; o < d->n_out; o++) {
        memcpy(&a, d->push + d->out_at[o], 8);
        uint32_t bit = buf_bit(b, a);
        if (!bit) return false;
        *write |= bit;
    }
    return d->n_out > 0;
}

void plan_barriers(const struct plan *p, bool timed, bool *after)
{
    /* only the barriers the data needs (plan.h), for untimed plans that know their buffers:
     * buffers written / read since the last barrier */
    bool track = p->bufs && !timed;
    uint32_t written = 0, read = 0;
    for (int i = 0; i < p->n; i++) {
        uint32_t touch = 0, write = 0;
        bool known = track && dispatch_bufs(p->bufs, &p->d[i], &touch, &write);
        if (i > 0 && known && !after[i - 1] && ((touch & written) || (write & read))) {
            after[i - 1] = true;
            written = read = 0;
        }
        after[i] = !known;
        if (!known && i > 0) after[i - 1] = true; /* unknown: a barrier on both sides */
        if (after[i]) written = read = 0;
        else {
            written |= write;
            read |= touch;
        }
    }
    if (p->n > 0) after[p->n - 1] = true;
}

/* LFM2_TEST_SLOW (test hook): dispatch d recorded `copies` − 1 more times, each after a barrier so
 * none overlaps the one before: the dispatch takes `copies` times as long, on any device. */
static void record_test_slow(struct gpu *g, const struct dispatch *d, int copies)
{
    for (int k = 1; k < copies; k++) {
        gpu_cmd_barrier_compute(g);
        gpu_cmd_dispatch(g, d->pipe, d->push, d->push_size, d->groups[0], d->groups[1], d->groups[2]);
    }
}

void plan_record_sampled(struct gpu *g, const struct plan *p, int ts_base, int stride, int phase)
{
    bool *after = malloc((size_t)(p->n ? p->n : 1) * sizeof *after);
    CHECK(after);
    bool timed = ts_base >= 0;
    plan_barriers(p, timed, after);
    for (int i = 0; i < p->n; i++) {
        const struct dispatch *d = &p->d[i];
        bool ts = timed && i % stride == phase;
        if (ts) gpu_cmd_timestamp(g, (uint32_t)(ts_base + 2 * i));
        gpu_cmd_dispatch(g, d->pipe, d->push, d->push_size, d->groups[0], d->groups[1], d->groups[2]);
        int copies = tuning_test_slow(d->kind);
        if (copies > 1) record_test_slow(g, d, copies);
        /* between two dispatches a compute-only barrier; after the plan's last one the full
         * barrier, since a copy may follow */
        if (after[i] && i + 1 < p->n) gpu_cmd_barrier_compute(g);
        else if (after[i]) gpu_cmd_barrier(g);
        if (ts) gpu_cmd_timestamp(g, (uint32_t)(ts_base + 2 * i + 1));
    }
    free(after);
}

void plan_record(struct gpu *g, const struct plan *p, int ts_base) { plan_record_sampled(g, p, ts_base, 1, 0); }
