/* model_lfm2.c - LFM2 / LFM2.5: short-conv and attention layers, tied head (docs/models.md). */
#include "model_family.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const lfm2_types[] = {"lfm2", NULL};

static const struct name_rule lfm2_layer_names[] = {
    {W_ATTN_NORM, "operator_norm.weight", "attn_norm.weight"},
    {W_FFN_NORM, "ffn_norm.weight", "ffn_norm.weight"},
    {W_FFN_GATE, "feed_forward.w1.weight", "ffn_gate.weight"},
    {W_FFN_UP, "feed_forward.w3.weight", "ffn_up.weight"},
    {W_FFN_DOWN, "feed_forward.w2.weight", "ffn_down.weight"},
    {W_Q, "self_attn.q_proj.weight", "attn_q.weight"},
    {W_K, "self_attn.k_proj.weight", "attn_k.weight"},
    {W_V, "self_attn.v_proj.weight", "attn_v.weight"},
    {W_O, "self_attn.out_proj.weight", "attn_output.weight"},
    {W_Q_NORM, "self_attn.q_layernorm.weight", "attn_q_norm.weight"},
    {W_K_NORM, "self_attn.k_layernorm.weight", "attn_k_norm.weight"},
    {W_CONV_IN, "conv.in_proj.weight", "shortconv.in_proj.weight"},
    {W_CONV, "conv.conv.weight", "shortconv.conv.weight"},
    {W_CONV_OUT, "conv.out_proj.weight", "shortconv.out_proj.weight"},
};

/* llama.cpp wrote the final norm as token_embd_norm at first, output_norm later: accept both. */
static const struct name_rule lfm2_global_names[] = {
    {G_EMBED, "embed_tokens.weight", "token_embd.weight"},
    {G_FINAL_NORM, "embedding_norm.weight", "token_embd_norm.weight"},
    {G_FINAL_NORM, NULL, "output_norm.weight"},
    {G_HEAD, "lm_head.weight", "output.weight"},
};

static void lfm2_defaults(struct model_desc *d)
{
    d->rope_dims = d->head_dim;
    d->rope_theta = 1e6f;
    d->rope_neox = true;
    d->eps = 1e-5f;
    d->norm_plus1 = false;
    d->tied = true;
    d->conv_cache = 3;
    for (int l = 0; l < d->n_layers; l++)
        d->kind[l] = LAYER_CONV;
}

static int lfm2_head_dim(struct model_desc *d, const char *where, struct err *e)
{
    if (d->hidden % d->n_heads)
        return err_set(e, ST_USAGE, "%s: hidden size %d is not a multiple of %d heads", where,
                       d->hidden, d->n_heads);
    d->head_dim = d->hidden / d->n_heads;
    return ST_OK;
}

/* layer_types ("conv" / "full_attention") or full_attn_idxs, whichever is set. */
static int lfm2_config_kinds(const cJSON *text, const char *cfg_path, struct model_desc *d,
                             struct err *e)
{
    const cJSON *types, *idxs;
    int st = cfg_get_arr(text, "layer_types", cfg_path, &types, e);
    if (!st) st = cfg_get_arr(text, "full_attn_idxs", cfg_path, &idxs, e);
    if (st) return st;
    if (types) {
        if (cJSON_GetArraySize(types) != d->n_layers)
            return err_set(e, ST_USAGE, "%s: layer_types has %d entries, expected %d", cfg_path,
                           cJSON_GetArraySize(types), d->n_layers);
        int l = 0;
        for (const cJSON *it = types->child; it; it = it->next, l++) {
            const char *t = cJSON_GetStringValue(it);
            if (t && !strcmp(t, "conv"))
                d->kind[l] = LAYER_CONV;
            else if (t && !strcmp(t, "full_attention"))
                d->kind[l] = LAYER_ATTN;
            else
                return err_set(e, ST_USAGE,
                               "%s: layer_types[%d] is '%.64s', expected conv or full_attention",
                               cfg_path, l, t ? t : "(not a string)");
        }
        return ST_OK;
    }
    if (idxs) {
        for (const cJSON *it = idxs->child; it; it = it->next) {
            double x = cJSON_IsNumber(it) ? it->valuedouble : -1.0;
            if (!cJSON_IsNumber(it) || x != floor(x) || x < 0 || x >= d->n_layers)
                return err_set(e, ST_USAGE,
                               "%s: full_attn_idxs holds %s%g, expected integer layer numbers "
                               "0..%d",
                               cfg_path, cJSON_IsNumber(it) ? "" : "a non-number ",
                               cJSON_IsNumber(it) ? x : 0.0, d->n_layers - 1);
            d->kind[(int)x] = LAYER_ATTN;
        }
        return ST_OK;
    }
    return err_set(e, ST_USAGE, "%s: neither layer_types nor full_attn_idxs is set", cfg_path);
}

static int lfm2_describe_config(const cJSON *text, const cJSON *root, const char *cfg_path,
                                const struct model_source *src, struct model_desc *d, struct err *e)
{
    (void)src;
    int st;
    if ((st = cfg_common_dims(text, cfg_path, d, e)) || (st = lfm2_head_dim(d, cfg_path, e)))
        return st;
    lfm2_defaults(d);
    if ((st = cfg_rope_theta(text, cfg_path, &d->rope_theta, e)) ||
        (st = cfg_eps(text, "norm_eps", cfg_path, &d->eps, e)) ||
        (st = cfg_get_int(text, "conv_L_cache", 2, 16, cfg_path, false, &d->conv_cache, e)) ||
        (st = cfg_get_bool(text, "tie_embedding", cfg_path, &d->tied, e)) ||
        (st = cfg_tied(root, text, cfg_path, &d->tied, e)))
        return st;
    return lfm2_config_kinds(text, cfg_path, d, e);
}

/* lfm2.attention.head_count_kv: per-layer array (0 = conv layer), or one number; then the layers
 * with an attn_q tensor are the attention layers. */
static int lfm2_gguf_kinds(const struct model_source *src, struct model_desc *d, struct err *e)
{
    const struct gguf_kv *kv = gguf_find(src, "lfm2.attention.head_count_kv");
    uint32_t u;
    if (kv && kv->type == GGUF_ARRAY) {
        if (kv->count != (uint64_t)d->n_layers)
            return err_set(e, ST_USAGE,
                           "%s: lfm2.attention.head_count_kv has %llu entries, expected %d",
                           src->path, (unsigned long long)kv->count, d->n_layers);
        for (int l = 0; l < d->n_layers; l++) {
            int64_t n;
            if (!gguf_array_i64(kv, (uint64_t)l, &n) || n < 0 || n > d->n_heads)
                return err_set(e, ST_USAGE, "%s: lfm2.attention.head_count_kv[%d] is not 0..%d",
                               src->path, l, d->n_heads);
            d->kind[l] = n ? LAYER_ATTN : LAYER_CONV;
            if (n && d->n_kv_heads && n != d->n_kv_heads)
                return err_set(e, ST_USAGE,
                               "%s: lfm2.attention.head_count_kv[%d] is %lld, but an earlier "
                               "attention layer has %d (expected one kv head count)",
                               src->path, l, (long long)n, d->n_kv_heads);
            if (n) d->n_kv_heads = (int)n;
        }
    } else if (gguf_get_u32(src, "lfm2.attention.head_count_kv", &u) && u >= 1 &&
               u <= (uint32_t)d->n_heads) {
        d->n_kv_heads = (int)u;
        for (int l = 0; l < d->n_layers; l++) {
            char name[64];
            snprintf(name, sizeof name, "blk.%d.attn_q.weight", l);
            d->kind[l] = source_find(src, name) ? LAYER_ATTN : LAYER_CONV;
        }
    } else {
        return err_set(e, ST_USAGE,
                       "%s: missing or invalid GGUF key 'lfm2.attention.head_count_kv'", src->path);
    }
    if (d->n_kv_heads == 0) d->n_kv_heads = d->n_heads; /* no attention layer: unused */
    return ST_OK;
}

static int lfm2_describe_gguf(const struct model_source *src, struct model_desc *d, struct err *e)
{
    int st;
    if ((st = gguf_common_dims(src, "lfm2", d, e)) || (st = lfm2_head_dim(d, src->path, e)))
        return st;
    lfm2_defaults(d);
    if ((st = lfm2_gguf_kinds(src, d, e))) return st;
    if ((st = gguf_norm_rope(src, "lfm2", d, e))) return st;
    if (gguf_find(src, "lfm2.shortconv.l_cache") &&
        (st = gguf_need_u32(src, "lfm2", "shortconv.l_cache", 2, 16, &d->conv_cache, e)))
        return st;
    return ST_OK;
}

static bool lfm2_layer_shape(const struct model_desc *d, int l, enum wrole r, int *n_dims,
                             int64_t shape[4])
{
    int64_t h = d->hidden;
    switch (r) {
    case W_ATTN_NORM:
    case W_FFN_NORM:
        return shape_set(n_dims, shape, h, -1);
    case W_FFN_GATE:
    case W_FFN_UP:
    case W_FFN_DOWN:
        return shape_ffn(d, r, n_dims, shape);
    default:
        break;
    }
    if (d->kind[l] == LAYER_ATTN) return shape_attn(d, r, d->head_dim, true, n_dims, shape);
    switch (r) {
    case W_CONV_IN:
        return shape_set(n_dims, shape, 3 * h, h);
    case W_CONV:
        return shape_set(n_dims, shape, h, d->conv_cache);
    case W_CONV_OUT:
        return shape_set(n_dims, shape, h, h);
    default:
        return false;
    }
}

const struct family_ops family_lfm2 = {
    .family = FAMILY_LFM2,
    .config_types = lfm2_types,
    .gguf_arch = "lfm2",
    .layer_names = lfm2_layer_names,
    .n_layer_names = (int)ARRAY_LEN(lfm2_layer_names),
    .global_names = lfm2_global_names,
    .n_global_names = (int)ARRAY_LEN(lfm2_global_names),
    .describe_config = lfm2_describe_config,
    .describe_gguf = lfm2_describe_gguf,
    .set_defaults = lfm2_defaults,
    .layer_shape = lfm2_layer_shape,
};
