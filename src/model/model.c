/* model.c - model description, the parts every family shares: family detection, canonical
 * names, expected shapes, file tensor names, describe. What differs per family lives in
 * model_<family>.c behind struct family_ops; config.c reads dimensions, shard.c binds a..b-1. */
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

void model_canonical_name(int layer, int role, char *buf, size_t n)
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

bool model_is_weight_dtype(enum dtype t)
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

void model_shape_str(int n_dims, const int64_t *shape, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < n_dims && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%" PRId64, i ? ", " : "", shape[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* Equal shapes, or a conv kernel stored as [C,1,K] where [C,K] is expected (same bytes). */
bool model_shape_matches(const struct tensor_view *v, int n_dims, const int64_t *shape)
{
    if (v->rank > v->n_dims) return false; /* folded: never a decoder weight */
    if (v->n_dims == 3 && n_dims == 2)
        return v->shape[0] == shape[0] && v->shape[1] == 1 && v->shape[2] == shape[1];
    if (v->n_dims != n_dims) return false;
    for (int i = 0; i < n_dims; i++)
        if (v->shape[i] != shape[i]) return false;
    return true;
}

/* ------------------------------------------------------------------ file names */

static const char HF_VL_PREFIX[] = "model.language_model.";
static const char HF_PREFIX[] = "model.";

/* Maps a file tensor name onto (layer, role); layer -1 for globals. False: not a decoder tensor
 * of this family (vision tower, MTP, unknown), which binding ignores. */
bool model_parse_name(const struct family_ops *ops, bool gguf, const char *name, int *layer,
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
        bool decoder = model_parse_name(ops, gguf, name, &l, &r) && l < d->n_layers;
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

int model_err_missing(const struct model_source *src, const struct family_ops *ops, int layer,
                       int role, struct err *e)
{
    char canon[64], fname[256];
    model_canonical_name(layer, role, canon, sizeof canon);
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
        if (model_parse_name(ops, gguf, src->tensors[i].name, &l, &r) && l == layer && r == role)
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
    if (!v) return model_err_missing(src, ops, 0, gate, e);
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
        if (!emb) return model_err_missing(src, ops, -1, G_EMBED, e);
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
