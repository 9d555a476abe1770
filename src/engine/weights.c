/* weights.c - device upload of a shard's tensors. */
#include "weights.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"

/* Weights are read from their file with pread (tensor_read) into the staging buffer, never
 * copied out of the mapping: a file that shrinks while the tool runs gives a short read (exit 1
 * with a message), where touching the mapping past the new end would kill the tool with SIGBUS. */
struct file_read {
    const struct tensor_view *v;
    uint64_t base; /* byte of the tensor where this read starts (a part of a fused stack) */
    int st;        /* first failure, its message in err */
    struct err err;
};

static void file_fill(void *ctx, uint64_t at, uint64_t n, void *out)
{
    struct file_read *r = ctx;
    if (!r->st) r->st = tensor_read(r->v, r->base + at, n, out, &r->err);
    if (r->st) memset(out, 0, (size_t)n);
}

struct repack_ctx {
    const struct shard_tensor *t;
    int64_t rows, k;
    const uint8_t *blocks; /* the file bytes of this part, read whole */
};

static void repack_fill(void *ctx, uint64_t at, uint64_t n, void *out)
{
    const struct repack_ctx *c = ctx;
    weight_repack(c->t->dtype, c->rows, c->k, c->blocks, at, n, out);
}

/* Row blocks a tensor is stored as on the device. A fused [gate | up] stack (GLM's gate_up_proj
 * [2F, H]) is two weights of F rows, each in the device layout of its own at a 256-aligned
 * stride (weights_part): in the repacked Q8_0/Q4_0 layout the scales follow ALL quant bytes, so
 * rows F..2F of one repacked tensor would not be a weight a kernel can read. */
static int row_parts(const struct shard_tensor *t) { return t->layer >= 0 && t->role == W_FFN_GATE_UP ? 2 : 1; }

static uint64_t part_stride(const struct gpu_weight *w, int n_parts)
{
    uint64_t b = weight_bytes(w->dtype, w->rows / n_parts, w->k);
    return n_parts == 1 ? b : (b + 255) & ~(uint64_t)255;
}

struct gpu_weight weights_part(const struct gpu_weight *w, int part, int n_parts)
{
    struct gpu_weight v = *w;
    CHECK(n_parts >= 1 && part >= 0 && part < n_parts && w->rows % n_parts == 0);
    v.rows = w->rows / n_parts;
    v.bytes = weight_bytes(w->dtype, v.rows, w->k);
    v.addr = w->addr + (uint64_t)part * part_stride(w, n_parts);
    return v;
}

/* Fills a file tensor's device range, part by part (file bytes == device bytes per part): plain
 * types stream through the staging buffer, Q8_0/Q4_0 are read whole and repacked as they stream. */
static int upload_file_tensor(struct gpu *g, const struct shard_tensor *t, const struct gpu_weight *w,
                              const struct gpu_buf *buf, struct err *e)
{
    int parts = row_parts(t), st = ST_OK;
    for (int i = 0; !st && i < parts; i++) {
        struct gpu_weight v = weights_part(w, i, parts);
        uint64_t off = v.addr - w->addr, at = (uint64_t)i * v.bytes;
        if (t->dtype != DT_Q8_0 && t->dtype != DT_Q4_0) {
            struct file_read r = {t->src, at, ST_OK, {{0}}};
            st = gpu_upload_fn(g, buf, off, v.bytes, file_fill, &r, e);
            if (!st && r.st) *e = r.err;
            if (!st) st = r.st;
            continue;
        }
        uint8_t *blocks = malloc(v.bytes ? v.bytes : 1);
        if (!blocks)
            return err_set(e, ST_RUNTIME, "out of host memory reading tensor %s (%llu bytes)", t->name,
                           (unsigned long long)v.bytes);
        st = tensor_read(t->src, at, v.bytes, blocks, e);
        struct repack_ctx c = {t, v.rows, v.k, blocks};
        if (!st) st = gpu_upload_fn(g, buf, off, v.bytes, repack_fill, &c, e);
        free(blocks);
    }
    return st;
}

/* [rows, k] view of a tensor: 1-D -> [1, n]; ≥2-D -> [outer product, last dim]. */
static void as_matrix(const struct shard_tensor *t, int64_t *rows, int64_t *k)
{
    *k = t->n_dims ? t->shape[t->n_dims - 1] : 1;
    *rows = 1;
    for (int i = 0; i + 1 < t->n_dims; i++) *rows *= t->shape[i];
}

/* The built-in init rule of a tensor as a winit draw (docs/design.md, Built-in models). */
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
    for (int k = 0; !st && k < s->n; k++) {
        const struct shard_tensor *t = &s->t[k];
        struct gpu_weight *w = &out->w[k];
        struct gpu_buf buf;
        as_matrix(t, &w->rows, &w->k);
        w->dtype = t->dtype;
        w->bytes = weight_bytes(t->dtype, w->rows, w->k);
        int parts = row_parts(t);
        if (w->rows % parts) {
            st = err_set(e, ST_USAGE, "tensor %s: %lld rows do not split into %d equal parts", t->name,
                         (long long)w->rows, parts);
            break;
        }
        if ((st = gpu_alloc(g, parts * part_stride(w, parts), GPU_MEM_DEVICE, &buf, e))) {
            err_wrap(e, st, "tensor %s", t->name);
            break;
        }
        w->addr = buf.addr;
        out->bytes += w->bytes;
        if (t->src) {
            if (t->src->n_bytes != w->bytes)
                st = err_set(e, ST_USAGE, "%s: tensor %s has %llu bytes, expected %llu", t->src->file, t->name,
                             (unsigned long long)t->src->n_bytes, (unsigned long long)w->bytes);
            else
                st = upload_file_tensor(g, t, w, &buf, e);
        } else {
            enum winit_mode mode = WINIT_NORMAL;
            float a = 1, b = 0;
            init_rule(t, w->k, &mode, &a, &b);
            for (int i = 0; !st && i < parts; i++) { /* part i draws as tensor i·n + index */
                struct gpu_weight v = weights_part(w, i, parts);
                st = k_winit(g, &init, &v, (uint32_t)seed, (uint32_t)(i * s->n + k), mode, a, b, e);
            }
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
