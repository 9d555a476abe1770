/* weights.c - device upload of a shard's tensors. */
#include "weights.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"

struct repack_ctx {
    const struct shard_tensor *t;
    int64_t rows, k;
};

static void repack_fill(void *ctx, uint64_t at, uint64_t n, void *out)
{
    const struct repack_ctx *c = ctx;
    weight_repack(c->t->dtype, c->rows, c->k, c->t->src->data, at, n, out);
}

/* [rows, k] view of a tensor: 1-D -> [1, n]; ≥2-D -> [outer product, last dim]. */
static void as_matrix(const struct shard_tensor *t, int64_t *rows, int64_t *k)
{
    *k = t->n_dims ? t->shape[t->n_dims - 1] : 1;
    *rows = 1;
    for (int i = 0; i + 1 < t->n_dims; i++) *rows *= t->shape[i];
}

/* The built-in init rule of a tensor as a winit draw (DESIGN.md, Built-in models). */
static void init_rule(const struct shard_tensor *t, int64_t k, enum winit_mode *mode, float *a, float *b)
{
    switch (t->init) {
    case WINIT_MATRIX: *mode = WINIT_NORMAL, *a = 1.0f / sqrtf((float)k), *b = 0; break;
    case WINIT_EMBED: *mode = WINIT_NORMAL, *a = 1, *b = 0; break;
    case WINIT_NORM: *mode = WINIT_NORMAL, *a = 0.1f, *b = 1; break;
    case WINIT_NORM0: *mode = WINIT_NORMAL, *a = 0.1f, *b = 0; break;
    case WINIT_A_LOG: *mode = WINIT_LOG_UNIFORM, *a = 1, *b = 16; break;
    case WINIT_DT_BIAS: *mode = WINIT_UNIFORM, *a = -1, *b = 1; break;
    }
}

/* Built-in weights are made by winit dispatches, submitted in batches of about this many bytes so
 * progress can be shown and one submit never runs for minutes on a CPU device. */
#define WINIT_BATCH_BYTES (256ull << 20)

static int flush_init(struct gpu *g, struct plan *init, struct err *e)
{
    if (!init->n) return ST_OK;
    int st = gpu_cmd_begin(g, e);
    if (!st) {
        plan_record(g, init, -1);
        st = gpu_submit_wait(g, NULL, e);
    }
    init->n = 0;
    return st;
}

int weights_upload(struct gpu *g, const struct shard *s, uint64_t seed, bool progress, struct dev_weights *out,
                   struct err *e)
{
    memset(out, 0, sizeof *out);
    double t0 = now_us();
    out->w = calloc((size_t)(s->n ? s->n : 1), sizeof *out->w);
    if (!out->w) return err_set(e, ST_RUNTIME, "out of host memory");
    out->n = s->n;
    struct plan init = {0};
    int st = ST_OK;
    uint64_t done = 0, pending = 0;
    struct progress pr;
    progress_begin(&pr, s->n && !s->t[0].src ? "making weights" : "uploading", s->bytes, "MB", 1e6);
    for (int i = 0; !st && i < s->n; i++) {
        const struct shard_tensor *t = &s->t[i];
        struct gpu_weight *w = &out->w[i];
        struct gpu_buf buf;
        as_matrix(t, &w->rows, &w->k);
        w->dtype = t->dtype;
        w->bytes = weight_bytes(t->dtype, w->rows, w->k);
        if ((st = gpu_alloc(g, w->bytes, GPU_MEM_DEVICE, &buf, e))) {
            err_wrap(e, st, "tensor %s", t->name);
            break;
        }
        w->addr = buf.addr;
        out->bytes += w->bytes;
        if (t->src) {
            if (t->src->n_bytes != w->bytes)
                st = err_set(e, ST_USAGE, "%s: tensor %s has %llu bytes, expected %llu", t->src->file, t->name,
                             (unsigned long long)t->src->n_bytes, (unsigned long long)w->bytes);
            else if (t->dtype == DT_Q8_0 || t->dtype == DT_Q4_0) {
                struct repack_ctx c = {t, w->rows, w->k};
                st = gpu_upload_fn(g, &buf, 0, w->bytes, repack_fill, &c, e);
            } else {
                st = gpu_upload(g, &buf, 0, t->src->data, w->bytes, e);
            }
        } else {
            enum winit_mode mode = WINIT_NORMAL;
            float a = 1, b = 0;
            init_rule(t, w->k, &mode, &a, &b);
            st = k_winit(g, &init, w, (uint32_t)seed, (uint32_t)i, mode, a, b, e);
            pending += w->bytes;
            if (!st && pending >= WINIT_BATCH_BYTES) {
                st = flush_init(g, &init, e);
                pending = 0;
            }
        }
        done += w->bytes;
        if (progress && !pending) progress_update(&pr, done);
    }
    if (!st) st = flush_init(g, &init, e);
    if (progress) progress_end(&pr);
    plan_free(&init);
    out->upload_ms = (now_us() - t0) * 1e-3;
    return st;
}

void weights_free(struct dev_weights *w)
{
    free(w->w);
    memset(w, 0, sizeof *w);
}

const struct gpu_weight *weights_layer(const struct dev_weights *w, const struct shard *s, int l, enum wrole r)
{
    if (l < s->a || l >= s->b) return NULL;
    int i = s->layer_index[l][r];
    return i < 0 ? NULL : &w->w[i];
}

const struct gpu_weight *weights_global(const struct dev_weights *w, const struct shard *s, enum grole r)
{
    int i = s->global_index[r];
    return i < 0 ? NULL : &w->w[i];
}
