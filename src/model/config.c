/* config.c - reading a family's dimensions: config.json keys (typed, range-checked, named in every
 * error) and GGUF metadata, shared by every model_<family>.c. */
#include "model_family.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ config.json */

/* The value of key in obj, NULL when absent or null (transformers writes None as null). */
static const cJSON *cfg_item(const cJSON *obj, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNull(it) ? NULL : it;
}

static const char *json_kind(const cJSON *it)
{
    if (cJSON_IsString(it)) return "a string";
    if (cJSON_IsBool(it)) return "a boolean";
    if (cJSON_IsArray(it)) return "an array";
    if (cJSON_IsObject(it)) return "an object";
    if (cJSON_IsNumber(it)) return "a number";
    return "not a JSON value";
}

int cfg_get_int(const cJSON *obj, const char *key, int lo, int hi, const char *cfg_path,
                bool required, int *v, struct err *e)
{
    const cJSON *it = cfg_item(obj, key);
    if (!it)
        return required ? err_set(e, ST_USAGE, "%s: missing '%s' (expected an integer in %d..%d)",
                                  cfg_path, key, lo, hi)
                        : ST_OK;
    if (!cJSON_IsNumber(it))
        return err_set(e, ST_USAGE, "%s: '%s' is %s (expected an integer in %d..%d)", cfg_path,
                       key, json_kind(it), lo, hi);
    double x = it->valuedouble;
    if (x != floor(x))
        return err_set(e, ST_USAGE, "%s: '%s' is %g, not an integer (expected an integer in "
                       "%d..%d)", cfg_path, key, x, lo, hi);
    if (x < lo || x > hi)
        return err_set(e, ST_USAGE, "%s: '%s' is %.17g (expected %d..%d)", cfg_path, key, x, lo,
                       hi);
    *v = (int)x;
    return ST_OK;
}

int cfg_need_int(const cJSON *obj, const char *key, int lo, int hi, const char *cfg_path, int *v,
                 struct err *e)
{
    return cfg_get_int(obj, key, lo, hi, cfg_path, true, v, e);
}

int cfg_get_num(const cJSON *obj, const char *key, double lo, double hi, const char *cfg_path,
                double *v, struct err *e)
{
    const cJSON *it = cfg_item(obj, key);
    if (!it) return ST_OK;
    if (!cJSON_IsNumber(it))
        return err_set(e, ST_USAGE, "%s: '%s' is %s (expected a number above %g, at most %g)",
                       cfg_path, key, json_kind(it), lo, hi);
    double x = it->valuedouble;
    if (!(x > lo && x <= hi))
        return err_set(e, ST_USAGE, "%s: '%s' is %g (expected a number above %g, at most %g)",
                       cfg_path, key, x, lo, hi);
    *v = x;
    return ST_OK;
}

int cfg_get_bool(const cJSON *obj, const char *key, const char *cfg_path, bool *v, struct err *e)
{
    const cJSON *it = cfg_item(obj, key);
    if (!it) return ST_OK;
    if (!cJSON_IsBool(it))
        return err_set(e, ST_USAGE, "%s: '%s' is %s (expected a boolean: true or false)", cfg_path, key,
                       json_kind(it));
    *v = cJSON_IsTrue(it);
    return ST_OK;
}

int cfg_get_obj(const cJSON *obj, const char *key, const char *cfg_path, const cJSON **v,
                struct err *e)
{
    const cJSON *it = cfg_item(obj, key);
    *v = NULL;
    if (!it) return ST_OK;
    if (!cJSON_IsObject(it))
        return err_set(e, ST_USAGE, "%s: '%s' is %s (expected an object)", cfg_path, key,
                       cJSON_IsNumber(it) ? "a number" : json_kind(it));
    *v = it;
    return ST_OK;
}

int cfg_get_arr(const cJSON *obj, const char *key, const char *cfg_path, const cJSON **v,
                struct err *e)
{
    const cJSON *it = cfg_item(obj, key);
    *v = NULL;
    if (!it) return ST_OK;
    if (!cJSON_IsArray(it))
        return err_set(e, ST_USAGE, "%s: '%s' is %s (expected an array)", cfg_path, key,
                       cJSON_IsNumber(it) ? "a number" : json_kind(it));
    *v = it;
    return ST_OK;
}

int cfg_common_dims(const cJSON *text, const char *cfg_path, struct model_desc *d, struct err *e)
{
    int st;
    if ((st = cfg_need_int(text, "num_hidden_layers", 1, MODEL_MAX_LAYERS, cfg_path, &d->n_layers,
                           e)) ||
        (st = cfg_need_int(text, "hidden_size", 1, 1 << 20, cfg_path, &d->hidden, e)) ||
        (st = cfg_need_int(text, "num_attention_heads", 1, 1 << 12, cfg_path, &d->n_heads, e)) ||
        (st =
             cfg_need_int(text, "num_key_value_heads", 1, d->n_heads, cfg_path, &d->n_kv_heads, e)))
        return st;
    if (d->n_heads % d->n_kv_heads)
        return err_set(e, ST_USAGE, "%s: %d attention heads are not a multiple of %d kv heads",
                       cfg_path, d->n_heads, d->n_kv_heads);
    if ((st = cfg_get_int(text, "vocab_size", 1, INT32_MAX, cfg_path, false, &d->vocab, e)) ||
        (st = cfg_get_int(text, "max_position_embeddings", 1, MODEL_MAX_POS, cfg_path, false,
                          &d->max_pos, e)))
        return st;
    return ST_OK;
}

int cfg_rope_theta(const cJSON *text, const char *cfg_path, float *theta, struct err *e)
{
    double v = *theta;
    const cJSON *rp;
    int st = cfg_get_obj(text, "rope_parameters", cfg_path, &rp, e);
    if (!st) st = cfg_get_num(text, "rope_theta", 0, MODEL_MAX_THETA, cfg_path, &v, e);
    if (!st && rp) st = cfg_get_num(rp, "rope_theta", 0, MODEL_MAX_THETA, cfg_path, &v, e);
    *theta = (float)v;
    return st;
}

int cfg_rope_dims(const cJSON *text, const char *cfg_path, double partial, struct model_desc *d, struct err *e)
{
    const cJSON *rp;
    int st = cfg_get_obj(text, "rope_parameters", cfg_path, &rp, e);
    if (!st && rp) st = cfg_get_num(rp, "partial_rotary_factor", 0, 1, cfg_path, &partial, e);
    if (!st) st = cfg_get_num(text, "partial_rotary_factor", 0, 1, cfg_path, &partial, e);
    if (st) return st;
    d->rope_dims = (int)lround(d->head_dim * partial);
    if (d->rope_dims <= 0 || d->rope_dims > d->head_dim || d->rope_dims % 2)
        return err_set(e, ST_USAGE, "%s: rotary dims %d, expected an even number in 2..%d", cfg_path, d->rope_dims,
                       d->head_dim);
    return ST_OK;
}

int cfg_eps(const cJSON *text, const char *key, const char *cfg_path, float *eps, struct err *e)
{
    double v = *eps;
    int st = cfg_get_num(text, key, 0, MODEL_MAX_EPS, cfg_path, &v, e);
    if (!st && !((float)v > 0))
        return err_set(e, ST_USAGE, "%s: '%s' is %g, which is 0 as a float (expected at least %g)",
                       cfg_path, key, v, (double)FLT_MIN);
    *eps = (float)v;
    return st;
}

int cfg_tied(const cJSON *root, const cJSON *text, const char *cfg_path, bool *tied, struct err *e)
{
    int st = cfg_get_bool(root, "tie_word_embeddings", cfg_path, tied, e);
    if (!st && text != root) st = cfg_get_bool(text, "tie_word_embeddings", cfg_path, tied, e);
    return st;
}

static int gguf_get_int(const struct model_source *src, const char *arch, const char *key, int lo,
                        int hi, bool required, int *v, struct err *e)
{
    char full[128];
    int64_t x;
    snprintf(full, sizeof full, "%s.%s", arch, key);
    const struct gguf_kv *kv = gguf_find(src, full);
    if (!kv)
        return required ? err_set(e, ST_USAGE,
                                  "%s: missing GGUF key '%s' (expected an integer in %d..%d)",
                                  src->path, full, lo, hi)
                        : ST_OK;
    if (!gguf_get_i64(src, full, &x))
        return err_set(e, ST_USAGE,
                       "%s: GGUF key '%s' has value type %d, not an integer (expected an integer "
                       "in %d..%d)",
                       src->path, full, (int)kv->type, lo, hi);
    if (x < lo || x > hi)
        return err_set(e, ST_USAGE, "%s: GGUF key '%s' is %lld, expected %d..%d", src->path, full,
                       (long long)x, lo, hi);
    *v = (int)x;
    return ST_OK;
}

int gguf_need_u32(const struct model_source *src, const char *arch, const char *key, int lo, int hi,
                  int *v, struct err *e)
{
    return gguf_get_int(src, arch, key, lo, hi, true, v, e);
}

int gguf_common_dims(const struct model_source *src, const char *arch, struct model_desc *d,
                     struct err *e)
{
    int st;
    if ((st = gguf_need_u32(src, arch, "block_count", 1, MODEL_MAX_LAYERS, &d->n_layers, e)) ||
        (st = gguf_need_u32(src, arch, "embedding_length", 1, 1 << 20, &d->hidden, e)) ||
        (st = gguf_need_u32(src, arch, "attention.head_count", 1, 1 << 12, &d->n_heads, e)) ||
        (st = gguf_get_int(src, arch, "vocab_size", 1, INT32_MAX, false, &d->vocab, e)) ||
        (st = gguf_get_int(src, arch, "context_length", 1, MODEL_MAX_POS, false, &d->max_pos, e)))
        return st;
    return ST_OK;
}

/* An optional float key: f32/f64 in (lo, hi]. */
static int gguf_get_real(const struct model_source *src, const char *arch, const char *key,
                         double lo, double hi, float *v, struct err *e)
{
    char full[128];
    float f;
    snprintf(full, sizeof full, "%s.%s", arch, key);
    const struct gguf_kv *kv = gguf_find(src, full);
    if (!kv) return ST_OK;
    if (!gguf_get_f32(src, full, &f))
        return err_set(e, ST_USAGE,
                       "%s: GGUF key '%s' has value type %d (expected f32 or f64 in (%g, %g])",
                       src->path, full, (int)kv->type, lo, hi);
    if (!(f > lo && f <= hi))
        return err_set(e, ST_USAGE, "%s: GGUF key '%s' is %g (expected a number above %g, at most %g)",
                       src->path, full, (double)f, lo, hi);
    *v = f;
    return ST_OK;
}

int gguf_norm_rope(const struct model_source *src, const char *arch, struct model_desc *d,
                   struct err *e)
{
    int st = gguf_get_real(src, arch, "attention.layer_norm_rms_epsilon", 0, MODEL_MAX_EPS,
                           &d->eps, e);
    if (!st) st = gguf_get_real(src, arch, "rope.freq_base", 0, MODEL_MAX_THETA, &d->rope_theta, e);
    return st;
}
