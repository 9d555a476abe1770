/* model.c - model description and shard binding, the parts every family shares: family detection,
 * canonical names, expected shapes, binding a..b-1 to file tensors with presence/shape/dtype
 * checks. What differs per family lives in model_<family>.c behind struct family_ops. */
#include "model_family.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ names */

const char *family_name(enum family f)
{
    static const char *const names[FAMILY_COUNT] = {"lfm2", "qwen3_5", "glm_ocr"};
    return (unsigned)f < FAMILY_COUNT ? names[f] : "?";
}

const char *layer_kind_name(enum layer_kind k)
{
    switch (k) {
    case LAYER_CONV:
        return "conv";
    case LAYER_ATTN:
        return "attn";
    case LAYER_DELTANET:
        return "deltanet";
    }
    return "?";
}

/* Canonical role names: GGUF's where GGUF has the tensor (ffn_norm, not Qwen's GGUF
 * "post_attention_norm", because it is the same role as LFM2's ffn_norm), new unique names for
 * GLM's extra norms and fused gate_up. */
const char *wrole_name(enum wrole r)
{
    static const char *const names[W_COUNT] = {
        [W_ATTN_NORM] = "attn_norm",
        [W_FFN_NORM] = "ffn_norm",
        [W_FFN_GATE] = "ffn_gate",
        [W_FFN_UP] = "ffn_up",
        [W_FFN_DOWN] = "ffn_down",
        [W_Q] = "attn_q",
        [W_K] = "attn_k",
        [W_V] = "attn_v",
        [W_O] = "attn_output",
        [W_Q_NORM] = "attn_q_norm",
        [W_K_NORM] = "attn_k_norm",
        [W_CONV_IN] = "shortconv.in_proj",
        [W_CONV] = "shortconv.conv",
        [W_CONV_OUT] = "shortconv.out_proj",
        [W_DN_QKV] = "attn_qkv",
        [W_DN_Z] = "attn_gate",
        [W_DN_B] = "ssm_beta",
        [W_DN_A] = "ssm_alpha",
        [W_DN_CONV] = "ssm_conv1d",
        [W_DN_DT] = "ssm_dt.bias",
        [W_DN_A_LOG] = "ssm_a",
        [W_DN_NORM] = "ssm_norm",
        [W_DN_OUT] = "ssm_out",
        [W_POST_ATTN_NORM] = "post_attn_norm",
        [W_POST_FFN_NORM] = "post_ffn_norm",
        [W_FFN_GATE_UP] = "ffn_gate_up",
    };
    return (unsigned)r < W_COUNT ? names[r] : "?";
}

const char *grole_name(enum grole r)
{
    static const char *const names[G_COUNT] = {"token_embd", "output_norm", "output"};
    return (unsigned)r < G_COUNT ? names[r] : "?";
}

static void canonical_name(int layer, int role, char *buf, size_t n)
{
    if (layer < 0)
        snprintf(buf, n, "%s", grole_name((enum grole)role));
    else
        snprintf(buf, n, "blk.%d.%s", layer, wrole_name((enum wrole)role));
}

const struct family_ops *family_ops_get(enum family f)
{
    switch (f) {
    case FAMILY_LFM2:
        return &family_lfm2;
    case FAMILY_QWEN35:
        return &family_qwen35;
    case FAMILY_GLM_OCR:
        return &family_glm;
    case FAMILY_COUNT:
        break;
    }
    return NULL;
}

static bool is_weight_dtype(enum dtype t)
{
    return t == DT_F32 || t == DT_F16 || t == DT_BF16 || t == DT_Q8_0 || t == DT_Q4_0;
}

/* ------------------------------------------------------------------ shapes */

bool shape_set(int *n_dims, int64_t shape[4], int64_t a, int64_t b)
{
    memset(shape, 0, 4 * sizeof shape[0]);
    shape[0] = a;
    if (b < 0) {
        *n_dims = 1;
    } else {
        *n_dims = 2;
        shape[1] = b;
    }
    return true;
}

bool shape_ffn(const struct model_desc *d, enum wrole r, int *n_dims, int64_t shape[4])
{
    switch (r) {
    case W_FFN_GATE:
    case W_FFN_UP:
        return shape_set(n_dims, shape, d->ffn, d->hidden);
    case W_FFN_DOWN:
        return shape_set(n_dims, shape, d->hidden, d->ffn);
    default:
        return false;
    }
}

bool shape_attn(const struct model_desc *d, enum wrole r, int64_t q_rows_per_head, bool qk_norm,
                int *n_dims, int64_t shape[4])
{
    int64_t hd = d->head_dim, h = d->hidden;
    switch (r) {
    case W_Q:
        return shape_set(n_dims, shape, d->n_heads * q_rows_per_head, h);
    case W_K:
    case W_V:
        return shape_set(n_dims, shape, d->n_kv_heads * hd, h);
    case W_O:
        return shape_set(n_dims, shape, h, d->n_heads * hd);
    case W_Q_NORM:
    case W_K_NORM:
        return qk_norm && shape_set(n_dims, shape, hd, -1);
    default:
        return false;
    }
}

bool model_layer_shape(const struct model_desc *d, int l, enum wrole r, int *n_dims,
                       int64_t shape[4])
{
    const struct family_ops *ops = family_ops_get(d->family);
    if (!ops || l < 0 || l >= d->n_layers || (unsigned)r >= W_COUNT) return false;
    return ops->layer_shape(d, l, r, n_dims, shape);
}

bool model_global_shape(const struct model_desc *d, enum grole r, int *n_dims, int64_t shape[4])
{
    switch (r) {
    case G_EMBED:
    case G_HEAD:
        return shape_set(n_dims, shape, d->vocab, d->hidden);
    case G_FINAL_NORM:
        return shape_set(n_dims, shape, d->hidden, -1);
    case G_COUNT:
        break;
    }
    return false;
}

static void shape_str(int n_dims, const int64_t *shape, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < n_dims && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%" PRId64, i ? ", " : "", shape[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* Equal shapes, or a conv kernel stored as [C,1,K] where [C,K] is expected (same bytes). */
static bool shape_matches(const struct tensor_view *v, int n_dims, const int64_t *shape)
{
    if (v->rank > v->n_dims) return false; /* folded: never a decoder weight */
    if (v->n_dims == 3 && n_dims == 2)
        return v->shape[0] == shape[0] && v->shape[1] == 1 && v->shape[2] == shape[1];
    if (v->n_dims != n_dims) return false;
    for (int i = 0; i < n_dims; i++)
        if (v->shape[i] != shape[i]) return false;
    return true;
}

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

/* ------------------------------------------------------------------ file names */

static const char HF_VL_PREFIX[] = "model.language_model.";
static const char HF_PREFIX[] = "model.";

/* Maps a file tensor name onto (layer, role); layer -1 for globals. False: not a decoder tensor
 * of this family (vision tower, MTP, unknown), which binding ignores. */
static bool parse_name(const struct family_ops *ops, bool gguf, const char *name, int *layer,
                       int *role)
{
    const char *rest = name;
    const char *layers_word = gguf ? "blk." : "layers.";
    if (!gguf) {
        if (!strncmp(rest, HF_VL_PREFIX, sizeof HF_VL_PREFIX - 1))
            rest += sizeof HF_VL_PREFIX - 1;
        else if (!strncmp(rest, HF_PREFIX, sizeof HF_PREFIX - 1))
            rest += sizeof HF_PREFIX - 1;
    }
    size_t lw = strlen(layers_word);
    if (!strncmp(rest, layers_word, lw) && rest[lw] >= '0' && rest[lw] <= '9') {
        char *end;
        long l = strtol(rest + lw, &end, 10);
        if (*end != '.' || l < 0 || l >= MODEL_MAX_LAYERS) return false;
        *layer = (int)l; /* even when the role is unknown: model_ignored reads it */
        for (int i = 0; i < ops->n_layer_names; i++) {
            const char *want = gguf ? ops->layer_names[i].gguf : ops->layer_names[i].hf;
            if (want && !strcmp(end + 1, want)) {
                *layer = (int)l;
                *role = ops->layer_names[i].role;
                return true;
            }
        }
        return false;
    }
    for (int i = 0; i < ops->n_global_names; i++) {
        const char *want = gguf ? ops->global_names[i].gguf : ops->global_names[i].hf;
        /* "lm_head.weight" sits outside the "model." prefix */
        if (want && (!strcmp(rest, want) || !strcmp(name, want))) {
            *layer = -1;
            *role = ops->global_names[i].role;
            return true;
        }
    }
    return false;
}

/* The name this source would give (layer, role), for messages. HF: the prefix the file uses. */
static void file_name(const struct model_source *src, const struct family_ops *ops, int layer,
                      int role, char *buf, size_t n)
{
    bool gguf = src->kind == SOURCE_GGUF;
    const struct name_rule *rules = layer < 0 ? ops->global_names : ops->layer_names;
    int n_rules = layer < 0 ? ops->n_global_names : ops->n_layer_names;
    const char *suffix = NULL;
    for (int i = 0; i < n_rules && !suffix; i++)
        if (rules[i].role == role) suffix = gguf ? rules[i].gguf : rules[i].hf;
    if (!suffix) {
        snprintf(buf, n, "(no %s name)", gguf ? "GGUF" : "HF");
        return;
    }
    if (gguf) {
        if (layer < 0)
            snprintf(buf, n, "%s", suffix);
        else
            snprintf(buf, n, "blk.%d.%s", layer, suffix);
        return;
    }
    const char *prefix = HF_PREFIX;
    for (int i = 0; i < src->n_tensors; i++)
        if (!strncmp(src->tensors[i].name, HF_VL_PREFIX, sizeof HF_VL_PREFIX - 1))
            prefix = HF_VL_PREFIX;
    if (layer < 0 && !strncmp(suffix, "lm_head.", 8))
        snprintf(buf, n, "%s", suffix);
    else if (layer < 0)
        snprintf(buf, n, "%s%s", prefix, suffix);
    else
        snprintf(buf, n, "%slayers.%d.%s", prefix, layer, suffix);
}

/* What an ignored tensor is, for --load-only's summary. */
enum ignored_kind { IGN_VISION, IGN_MTP, IGN_OTHER, IGN_COUNT };

/* l: the layer number the name carries (-1: none); layers past the last are the MTP layer. */
static enum ignored_kind ignored_kind(const struct model_desc *d, const char *name, int l)
{
    if (strstr(name, "visual.") || strstr(name, "vision")) return IGN_VISION;
    if (!strncmp(name, "mtp.", 4) || strstr(name, ".mtp.") || l >= d->n_layers) return IGN_MTP;
    return IGN_OTHER;
}

int model_ignored(const struct model_source *src, const struct model_desc *d, char *what, size_t n)
{
    static const char *const names[IGN_COUNT] = {"vision tower", "MTP layer", "other"};
    const struct family_ops *ops = family_ops_get(d->family);
    bool gguf = src->kind == SOURCE_GGUF;
    int count[IGN_COUNT] = {0}, total = 0;
    CHECK(ops);
    for (int i = 0; i < src->n_tensors; i++) {
        const char *name = src->tensors[i].name;
        int l = -1, r = -1;
        bool decoder = parse_name(ops, gguf, name, &l, &r) && l < d->n_layers;
        if (decoder && !(l < 0 && r == G_HEAD && d->tied)) continue;
        count[decoder ? IGN_OTHER : ignored_kind(d, name, l)]++;
        total++;
    }
    size_t k = 0;
    if (n) what[0] = 0;
    for (int c = 0; c < IGN_COUNT && k < n; c++)
        if (count[c]) k += (size_t)snprintf(what + k, n - k, "%s%s (%d)", k ? ", " : "", names[c], count[c]);
    return total;
}

static int err_missing(const struct model_source *src, const struct family_ops *ops, int layer,
                       int role, struct err *e)
{
    char canon[64], fname[256];
    canonical_name(layer, role, canon, sizeof canon);
    file_name(src, ops, layer, role, fname, sizeof fname);
    return err_set(e, ST_USAGE, "%s: missing tensor '%s' (%s name '%s')", src->path, canon,
                   src->kind == SOURCE_GGUF ? "GGUF" : "HF", fname);
}

const struct tensor_view *model_find_view(const struct model_source *src,
                                          const struct family_ops *ops, int layer, int role)
{
    bool gguf = src->kind == SOURCE_GGUF;
    for (int i = 0; i < src->n_tensors; i++) {
        int l, r;
        if (parse_name(ops, gguf, src->tensors[i].name, &l, &r) && l == layer && r == role)
            return &src->tensors[i];
    }
    return NULL;
}

/* ------------------------------------------------------------------ describe */

static const struct family_ops *const all_families[FAMILY_COUNT] = {&family_lfm2, &family_qwen35,
                                                                    &family_glm};

static void supported_types(bool gguf, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
    for (int f = 0; f < FAMILY_COUNT; f++) {
        const struct family_ops *ops = all_families[f];
        if (gguf) {
            if (ops->gguf_arch && k < n)
                k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? ", " : "", ops->gguf_arch);
            continue;
        }
        for (int i = 0; ops->config_types[i] && k < n; i++)
            k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? ", " : "", ops->config_types[i]);
    }
}

static int describe_gguf(const struct model_source *src, struct model_desc *d,
                         const struct family_ops **out, struct err *e)
{
    char arch[64], list[256];
    const struct gguf_kv *kv = gguf_find(src, "general.architecture");
    supported_types(true, list, sizeof list);
    if (!kv)
        return err_set(e, ST_USAGE, "%s: GGUF file without general.architecture (expected one of %s)",
                       src->path, list);
    if (kv->type != GGUF_STRING)
        return err_set(e, ST_USAGE,
                       "%s: general.architecture has value type %d, not a string (expected one of "
                       "%s)",
                       src->path, (int)kv->type, list);
    if (!gguf_get_str(src, "general.architecture", arch, sizeof arch))
        return err_set(e, ST_USAGE,
                       "%s: general.architecture '%.40s...' is %llu bytes long (expected one of %s)",
                       src->path, (const char *)kv->data, (unsigned long long)kv->count, list);
    if (strlen(arch) != kv->count)
        return err_set(e, ST_USAGE,
                       "%s: general.architecture contains a NUL byte (expected one of %s)",
                       src->path, list);
    for (int f = 0; f < FAMILY_COUNT; f++) {
        const struct family_ops *ops = all_families[f];
        if (ops->gguf_arch && !strcmp(ops->gguf_arch, arch)) {
            *out = ops;
            d->family = ops->family;
            return ops->describe_gguf(src, d, e);
        }
    }
    return err_set(e, ST_USAGE, "%s: unknown general.architecture '%s' (supported: %s)", src->path,
                   arch, list);
}

static int describe_config(const struct model_source *src, struct model_desc *d,
                           const struct family_ops **out, struct err *e)
{
    char cfg_path[4200], list[256];
    snprintf(cfg_path, sizeof cfg_path, "%s/config.json", src->path);
    if (!src->config)
        return err_set(e, ST_USAGE,
                       "%s: no config.json beside the weights (a model is a checkpoint folder with "
                       "config.json, a .gguf file, or a built-in name)",
                       src->path);
    const cJSON *root = src->config;
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    const char *type = cJSON_GetStringValue(mt);
    supported_types(false, list, sizeof list);
    if (!type)
        return err_set(e, ST_USAGE, "%s: %s 'model_type' (expected a string: %s)", cfg_path,
                       mt ? "non-string" : "missing", list);
    for (int f = 0; f < FAMILY_COUNT; f++) {
        const struct family_ops *ops = all_families[f];
        for (int i = 0; ops->config_types[i]; i++) {
            if (strcmp(ops->config_types[i], type)) continue;
            const cJSON *text;
            int st = cfg_get_obj(root, "text_config", cfg_path, &text, e);
            if (st) return st;
            if (!text) text = root;
            *out = ops;
            d->family = ops->family;
            return ops->describe_config(text, root, cfg_path, src, d, e);
        }
    }
    return err_set(e, ST_USAGE, "%s: unknown model_type '%.64s' (supported: %s)", cfg_path, type,
                   list);
}

/* What the files say beyond the metadata: FFN width from the gate's shape, vocab from the
 * embedding when the metadata has none, the dominant matrix type, GGUF tying. */
static int describe_from_tensors(const struct model_source *src, const struct family_ops *ops,
                                 struct model_desc *d, struct err *e)
{
    int n_dims;
    int64_t shape[4];
    enum wrole gate =
        ops->layer_shape(d, 0, W_FFN_GATE, &n_dims, shape) ? W_FFN_GATE : W_FFN_GATE_UP;
    const struct tensor_view *v = model_find_view(src, ops, 0, gate);
    if (!v) return err_missing(src, ops, 0, gate, e);
    int64_t rows = v->n_dims == 2 ? v->shape[0] : 0;
    if (gate == W_FFN_GATE_UP) rows = rows % 2 ? 0 : rows / 2;
    if (v->n_dims != 2 || v->shape[1] != d->hidden || rows <= 0 || rows > INT32_MAX) {
        char got[96];
        tensor_shape_str(v, got, sizeof got);
        return err_set(e, ST_USAGE, "%s: tensor '%s' has shape %s, expected [%s, %d]", v->file,
                       v->name, got, gate == W_FFN_GATE ? "ffn" : "2*ffn", d->hidden);
    }
    d->ffn = (int)rows;
    const struct tensor_view *down = model_find_view(src, ops, 0, W_FFN_DOWN);
    d->dtype = down ? down->dtype : v->dtype;

    if (src->kind == SOURCE_GGUF) d->tied = model_find_view(src, ops, -1, G_HEAD) == NULL;
    if (d->vocab <= 0) {
        const struct tensor_view *emb = model_find_view(src, ops, -1, G_EMBED);
        if (!emb) return err_missing(src, ops, -1, G_EMBED, e);
        if (emb->n_dims != 2 || emb->shape[0] <= 0 || emb->shape[0] > INT32_MAX)
            return err_set(e, ST_USAGE, "%s: tensor '%s' is not a [vocab, hidden] matrix",
                           emb->file, emb->name);
        d->vocab = (int)emb->shape[0];
    }
    return ST_OK;
}

int model_describe(const struct model_source *src, struct model_desc *d, struct err *e)
{
    const struct family_ops *ops = NULL;
    memset(d, 0, sizeof *d);
    snprintf(d->source, sizeof d->source, "%s", src->path ? src->path : "");
    int st = src->kind == SOURCE_GGUF ? describe_gguf(src, d, &ops, e)
                                      : describe_config(src, d, &ops, e);
    if (st) return st;
    CHECK(d->n_layers >= 1 && d->n_layers <= MODEL_MAX_LAYERS);
    if (d->n_kv_heads < 1 || d->n_heads % d->n_kv_heads)
        return err_set(e, ST_USAGE,
                       "%s: %d attention heads are not a multiple of %d kv heads (expected "
                       "head_count a multiple of head_count_kv)",
                       src->path, d->n_heads, d->n_kv_heads);
    return describe_from_tensors(src, ops, d, e);
}

/* ------------------------------------------------------------------ shards */

static void shard_push(struct shard *s, int layer, int role, int n_dims, const int64_t *shape)
{
    struct shard_tensor *t = &s->t[s->n];
    memset(t, 0, sizeof *t);
    canonical_name(layer, role, t->name, sizeof t->name);
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
    if (!v) return err_missing(src, ops, t->layer, t->role, e);
    if (!shape_matches(v, t->n_dims, t->shape)) {
        tensor_shape_str(v, got, sizeof got);
        shape_str(t->n_dims, t->shape, want, sizeof want);
        return err_set(e, ST_USAGE, "%s: tensor '%s' (%s) has shape %s, expected %s", v->file,
                       v->name, t->name, got, want);
    }
    if (!is_weight_dtype(v->dtype))
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
        if (!parse_name(ops, gguf, v->name, &l, &r)) continue;
        if (l >= 0 && (l < a || l >= b)) continue;
        const struct tensor_view **slot =
            l >= 0 ? &layer_views[(l - a) * W_COUNT + r] : &global_views[r];
        if (*slot) {
            char canon[64];
            canonical_name(l, r, canon, sizeof canon);
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
