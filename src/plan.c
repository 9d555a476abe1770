/* plan.c - dispatch lists and their recording. */
#include "plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void plan_free(struct plan *p)
{
    enum plan_kind kind = p->kind;
    free(p->d);
    memset(p, 0, sizeof *p);
    p->kind = kind;
}

void plan_record_sampled(struct gpu *g, const struct plan *p, int ts_base, int stride, int phase)
{
    for (int i = 0; i < p->n; i++) {
        const struct dispatch *d = &p->d[i];
        bool ts = ts_base >= 0 && i % stride == phase;
        if (ts) gpu_cmd_timestamp(g, (uint32_t)(ts_base + 2 * i));
        gpu_cmd_dispatch(g, d->pipe, d->push, d->push_size, d->groups[0], d->groups[1], d->groups[2]);
        gpu_cmd_barrier(g);
        if (ts) gpu_cmd_timestamp(g, (uint32_t)(ts_base + 2 * i + 1));
    }
}

void plan_record(struct gpu *g, const struct plan *p, int ts_base) { plan_record_sampled(g, p, ts_base, 1, 0); }
