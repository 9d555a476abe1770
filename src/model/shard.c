/* shard.c - a shard: layers a..b-1 laid out by canonical name and bound to file tensors with
 * presence, shape and dtype checks. */
#include "model_family.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ shards */

static void shard_push(struct shard *s, int layer, int role, int n_dims, const int64_t *shape)
{
    struct shard_tensor *t = &s->t[s->n];
    memset(t, 0, sizeof *t);
    model_canonical_name(layer, role, t->name, sizeof t->name);
    t->layer = layer;
    t->role = role;
    t->dtype = DT_F32;
    t->n_dims = n_dims;
    memcpy(t->shape, shape, sizeof t->shape);
    t->init = WINIT_MATRIX;
    if (layer >= 0)
        s->layer_index[layer][role] = s->n;
    else
        s->global_index[role] = s->n;
    s->n++;
}

/* The tied head is the embedding: one tensor, reached through global_index[G_HEAD]. On a later
 * stage (a > 0) global_index[G_EMBED] stays -1 (nothing to embed) although the tensor is there. */
int shard_layout(const struct model_desc *d, int a, int b, struct shard *s, struct err *e)
{
    int n_dims;
    int64_t shape[4];
    memset(s, 0, sizeof *s);
    memset(s->layer_index, -1, sizeof s->layer_index);
    memset(s->global_index, -1, sizeof s->global_index);
    if (a < 0 || b > d->n_layers)
        return err_set(e, ST_USAGE, "--layers %d:%d: out of range (model has %d layers)", a, b,
                       d->n_layers);
    if (a >= b)
        return err_set(e, ST_USAGE,
                       "--layers %d:%d: empty range, a must be below b (model has %d layers)", a, b,
                       d->n_layers);
    s->a = a;
    s->b = b;
    s->first = a == 0;
    s->last = b == d->n_layers;
    int cap = (b - a) * W_COUNT + G_COUNT;
    s->t = calloc((size_t)cap, sizeof *s->t);
    if (!s->t) return err_set(e, ST_RUNTIME, "out of host memory for shard %d:%d", a, b);

    if (s->first || (s->last && d->tied)) {
        model_global_shape(d, G_EMBED, &n_dims, shape);
        shard_push(s, -1, G_EMBED, n_dims, shape);
    }
    for (int l = a; l < b; l++)
        for (int r = 0; r < W_COUNT; r++)
            if (model_layer_shape(d, l, (enum wrole)r, &n_dims, shape))
                shard_push(s, l, r, n_dims, shape);
    if (s->last) {
        model_global_shape(d, G_FINAL_NORM, &n_dims, shape);
        shard_push(s, -1, G_FINAL_NORM, n_dims, shape);
        if (d->tied) {
            s->global_index[G_HEAD] = s->global_index[G_EMBED];
        } else {
            model_global_shape(d, G_HEAD, &n_dims, shape);
            shard_push(s, -1, G_HEAD, n_dims, shape);
        }
    }
    if (!s->first) s->global_index[G_EMBED] = -1;
    CHECK(s->n <= cap);
    return ST_OK;
}

static int bind_one(const struct model_source *src, const struct family_ops *ops,
                    const struct tensor_view *v, struct shard_tensor *t, struct err *e)
{
    char got[96], want[96];
    if (!v) return model_err_missing(src, ops, t->layer, t->role, e);
    if (!model_shape_matches(v, t->n_dims, t->shape)) {
        tensor_shape_str(v, got, sizeof got);
        model_shape_str(t->n_dims, t->shape, want, sizeof want);
        return err_set(e, ST_USAGE, "%s: tensor '%s' (%s) has shape %s, expected %s", v->file,
                       v->name, t->name, got, want);
    }
    if (!model_is_weight_dtype(v->dtype))
        return err_set(
            e, ST_USAGE,
            "%s: unsupported dtype %s for tensor '%s' (weights: F32, F16, BF16, Q8_0, Q4_0)",
            v->file, dtype_name(v->dtype), v->name);
    t->src = v;
    t->dtype = v->dtype;
    return ST_OK;
}

int shard_bind(const struct model_source *src, const struct model_desc *d, int a, int b,
               struct shard *s, struct err *e)
{
    const struct family_ops *ops = family_ops_get(d->family);
    CHECK(ops);
    int st = shard_layout(d, a, b, s, e);
    if (st) return st;

    /* Every file tensor of this shard's layers and the globals, by (layer, role). */
    const struct tensor_view **layer_views = calloc((size_t)(b - a) * W_COUNT, sizeof *layer_views);
    const struct tensor_view *global_views[G_COUNT] = {0};
    if (!layer_views) {
        shard_free(s);
        return err_set(e, ST_RUNTIME, "out of host memory binding shard %d:%d", a, b);
    }
    bool gguf = src->kind == SOURCE_GGUF;
    for (int i = 0; i < src->n_tensors && !st; i++) {
        const struct tensor_view *v = &src->tensors[i];
        int l, r;
        if (!model_parse_name(ops, gguf, v->name, &l, &r)) continue;
        if (l >= 0 && (l < a || l >= b)) continue;
        const struct tensor_view **slot =
            l >= 0 ? &layer_views[(l - a) * W_COUNT + r] : &global_views[r];
        if (*slot) {
            char canon[64];
            model_canonical_name(l, r, canon, sizeof canon);
            st = err_set(e, ST_USAGE, "%s: tensors '%s' and '%s' both name '%s'", src->path,
                         (*slot)->name, v->name, canon);
        }
        *slot = v;
    }
    for (int k = 0; k < s->n && !st; k++) {
        struct shard_tensor *t = &s->t[k];
        const struct tensor_view *v =
            t->layer >= 0 ? layer_views[(t->layer - a) * W_COUNT + t->role] : global_views[t->role];
        st = bind_one(src, ops, v, t, e);
        if (!st) s->bytes += v->n_bytes;
    }
    free(layer_views);
    if (st) shard_free(s);
    return st;
}

void shard_free(struct shard *s)
{
    free(s->t);
    s->t = NULL;
    s->n = 0;
}

/* ------------------------------------------------------------------ built-in storage types */

enum dtype model_builtin_dtype(enum dtype matrix, bool global, int role, int n_dims,
                               const int64_t shape[4])
{
    if (n_dims != 2) return DT_F32;
    if (!global && (role == W_CONV || role == W_DN_CONV)) return DT_F32;
    if (shape[1] % dtype_block(matrix) != 0) return DT_F16;
    return matrix;
}
