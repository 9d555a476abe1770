/* model_qwen35.c - Qwen3.5 dense hybrid: Gated DeltaNet and gated attention layers (docs/models.md).
 * HF files keep zero-centred norm gains (applied as 1 + w) and A_log; GGUF files (arch qwen35)
 * store 1 + w, ssm_a = -exp(A_log) and tiled value heads, which norm_plus1 / dn_gguf_layout say. */
#include "model_family.h"

#include <math.h>
#include <string.h>

static const char *const qwen35_types[] = {"qwen3_5", "qwen3_5_text", NULL};

static const struct name_rule qwen35_layer_names[] = {
    {W_ATTN_NORM, "input_layernorm.weight", "attn_norm.weight"},
    {W_FFN_NORM, "post_attention_layernorm.weight", "post_attention_norm.weight"},
    {W_FFN_GATE, "mlp.gate_proj.weight", "ffn_gate.weight"},
    {W_FFN_UP, "mlp.up_proj.weight", "ffn_up.weight"},
    {W_FFN_DOWN, "mlp.down_proj.weight", "ffn_down.weight"},
    {W_Q, "self_attn.q_proj.weight", "attn_q.weight"},
    {W_K, "self_attn.k_proj.weight", "attn_k.weight"},
    {W_V, "self_attn.v_proj.weight", "attn_v.weight"},
    {W_O, "self_attn.o_proj.weight", "attn_output.weight"},
    {W_Q_NORM, "self_attn.q_norm.weight", "attn_q_norm.weight"},
    {W_K_NORM, "self_attn.k_norm.weight", "attn_k_norm.weight"},
    {W_DN_QKV, "linear_attn.in_proj_qkv.weight", "attn_qkv.weight"},
    {W_DN_Z, "linear_attn.in_proj_z.weight", "attn_gate.weight"},
    {W_DN_B, "linear_attn.in_proj_b.weight", "ssm_beta.weight"},
    {W_DN_A, "linear_attn.in_proj_a.weight", "ssm_alpha.weight"},
    {W_DN_CONV, "linear_attn.conv1d.weight", "ssm_conv1d.weight"},
    {W_DN_DT, "linear_attn.dt_bias", "ssm_dt.bias"},
    {W_DN_A_LOG, "linear_attn.A_log", "ssm_a"},
    {W_DN_NORM, "linear_attn.norm.weight", "ssm_norm.weight"},
    {W_DN_OUT, "linear_attn.out_proj.weight", "ssm_out.weight"},
};

static const struct name_rule qwen35_global_names[] = {
    {G_EMBED, "embed_tokens.weight", "token_embd.weight"},
    {G_FINAL_NORM, "norm.weight", "output_norm.weight"},
    {G_HEAD, "lm_head.weight", "output.weight"},
};

/* Layer i is full attention when (i + 1) % interval == 0, else DeltaNet. */
static void qwen35_interval_kinds(struct model_desc *d, int interval)
{
    for (int l = 0; l < d->n_layers; l++)
        d->kind[l] = (l + 1) % interval == 0 ? LAYER_ATTN : LAYER_DELTANET;
}

static void qwen35_defaults(struct model_desc *d)
{
    d->rope_dims = d->head_dim / 4; /* partial_rotary_factor 0.25 */
    d->rope_theta = 1e7f;
    d->rope_neox = true;
    d->eps = 1e-6f;
    d->norm_plus1 = true;
    d->tied = false;
    d->dn_dk = d->dn_dv = 128;
    d->dn_conv = 4;
    qwen35_interval_kinds(d, 4);
}

static int qwen35_check(struct model_desc *d, const char *where, struct err *e)
{
    if (d->dn_nv % d->dn_nk)
        return err_set(e, ST_USAGE,
                       "%s: %d DeltaNet value heads are not a multiple of %d key heads", where,
                       d->dn_nv, d->dn_nk);
    if (d->rope_dims <= 0 || d->rope_dims > d->head_dim || d->rope_dims % 2)
        return err_set(e, ST_USAGE, "%s: rotary dims %d, expected an even number in 2..%d", where,
                       d->rope_dims, d->head_dim);
    return ST_OK;
}

static int qwen35_config_kinds(const cJSON *text, const char *cfg_path, struct model_desc *d,
                               struct err *e)
{
    const cJSON *types;
    int interval = 0;
    int st = cfg_get_arr(text, "layer_types", cfg_path, &types, e);
    if (st) return st;
    if (!types) {
        if ((st = cfg_get_int(text, "full_attention_interval", 1, 1 << 20, cfg_path, false,
                              &interval, e)))
            return st;
        if (interval) qwen35_interval_kinds(d, interval);
        return ST_OK;
    }
    if (cJSON_GetArraySize(types) != d->n_layers)
        return err_set(e, ST_USAGE, "%s: layer_types has %d entries, expected %d", cfg_path,
                       cJSON_GetArraySize(types), d->n_layers);
    for (int l = 0; l < d->n_layers; l++) {
        const char *t = cJSON_GetStringValue(cJSON_GetArrayItem(types, l));
        if (t && !strcmp(t, "linear_attention"))
            d->kind[l] = LAYER_DELTANET;
        else if (t && !strcmp(t, "full_attention"))
            d->kind[l] = LAYER_ATTN;
        else
            return err_set(
                e, ST_USAGE,
                "%s: layer_types[%d] is '%s', expected linear_attention or full_attention",
                cfg_path, l, t ? t : "(not a string)");
    }
    return ST_OK;
}

static int qwen35_describe_config(const cJSON *text, const cJSON *root, const char *cfg_path,
                                  const struct model_source *src, struct model_desc *d,
                                  struct err *e)
{
    (void)src;
    int st;
    if ((st = cfg_common_dims(text, cfg_path, d, e)) ||
        (st = cfg_need_int(text, "head_dim", 2, 1 << 12, cfg_path, &d->head_dim, e)))
        return st;
    qwen35_defaults(d);
    if ((st = cfg_need_int(text, "linear_num_key_heads", 1, 1 << 12, cfg_path, &d->dn_nk, e)) ||
        (st = cfg_need_int(text, "linear_num_value_heads", 1, 1 << 12, cfg_path, &d->dn_nv, e)) ||
        (st = cfg_need_int(text, "linear_key_head_dim", 1, 1 << 12, cfg_path, &d->dn_dk, e)) ||
        (st = cfg_need_int(text, "linear_value_head_dim", 1, 1 << 12, cfg_path, &d->dn_dv, e)) ||
        (st = cfg_need_int(text, "linear_conv_kernel_dim", 1, 64, cfg_path, &d->dn_conv, e)))
        return st;
    if ((st = cfg_eps(text, "rms_norm_eps", cfg_path, &d->eps, e)) ||
        (st = cfg_rope_theta(text, cfg_path, &d->rope_theta, e)) ||
        (st = cfg_rope_dims(text, cfg_path, 0.25, d, e)) ||
        (st = cfg_tied(root, text, cfg_path, &d->tied, e)))
        return st;
    if ((st = qwen35_config_kinds(text, cfg_path, d, e))) return st;
    return qwen35_check(d, cfg_path, e);
}

/* qwen35.attention.recurrent_layers (bool per layer) first, as llama.cpp reads it; else
 * qwen35.full_attention_interval; else every 4th layer. */
static int qwen35_gguf_kinds(const struct model_source *src, struct model_desc *d, struct err *e)
{
    const struct gguf_kv *kv = gguf_find(src, "qwen35.attention.recurrent_layers");
    if (kv && kv->type != GGUF_ARRAY)
        return err_set(e, ST_USAGE,
                       "%s: qwen35.attention.recurrent_layers has value type %d (expected an array "
                       "of bools)",
                       src->path, (int)kv->type);
    if (kv) {
        if (kv->count != (uint64_t)d->n_layers)
            return err_set(e, ST_USAGE,
                           "%s: qwen35.attention.recurrent_layers has %llu entries, expected %d",
                           src->path, (unsigned long long)kv->count, d->n_layers);
        for (int l = 0; l < d->n_layers; l++) {
            int64_t rec;
            if (!gguf_array_i64(kv, (uint64_t)l, &rec))
                return err_set(e, ST_USAGE,
                               "%s: qwen35.attention.recurrent_layers is not a bool array",
                               src->path);
            d->kind[l] = rec ? LAYER_DELTANET : LAYER_ATTN;
        }
        return ST_OK;
    }
    int interval = 4, st;
    if (gguf_find(src, "qwen35.full_attention_interval") &&
        (st = gguf_need_u32(src, "qwen35", "full_attention_interval", 1, MODEL_MAX_LAYERS,
                            &interval, e)))
        return st;
    qwen35_interval_kinds(d, interval);
    return ST_OK;
}

static int qwen35_describe_gguf(const struct model_source *src, struct model_desc *d, struct err *e)
{
    int st, inner;
    if ((st = gguf_common_dims(src, "qwen35", d, e)) ||
        (st = gguf_need_u32(src, "qwen35", "attention.head_count_kv", 1, d->n_heads, &d->n_kv_heads,
                            e)) ||
        (st = gguf_need_u32(src, "qwen35", "attention.key_length", 2, 1 << 12, &d->head_dim, e)))
        return st;
    qwen35_defaults(d);
    d->norm_plus1 = false; /* GGUF gains hold 1 + w */
    d->dn_gguf_layout = true;
    d->tied = true; /* model_describe: untied when an output tensor exists */
    if ((st = gguf_need_u32(src, "qwen35", "ssm.group_count", 1, 1 << 12, &d->dn_nk, e)) ||
        (st = gguf_need_u32(src, "qwen35", "ssm.time_step_rank", 1, 1 << 12, &d->dn_nv, e)) ||
        (st = gguf_need_u32(src, "qwen35", "ssm.state_size", 1, 1 << 12, &d->dn_dk, e)) ||
        (st = gguf_need_u32(src, "qwen35", "ssm.inner_size", 1, 1 << 24, &inner, e)) ||
        (st = gguf_need_u32(src, "qwen35", "ssm.conv_kernel", 1, 64, &d->dn_conv, e)))
        return st;
    if (inner % d->dn_nv)
        return err_set(e, ST_USAGE,
                       "%s: qwen35.ssm.inner_size %d is not a multiple of %d value heads",
                       src->path, inner, d->dn_nv);
    d->dn_dv = inner / d->dn_nv;
    if (gguf_find(src, "qwen35.rope.dimension_count") &&
        (st = gguf_need_u32(src, "qwen35", "rope.dimension_count", 2, d->head_dim, &d->rope_dims,
                            e)))
        return st;
    if ((st = gguf_norm_rope(src, "qwen35", d, e))) return st;
    if ((st = qwen35_gguf_kinds(src, d, e))) return st;
    return qwen35_check(d, src->path, e);
}

static bool qwen35_deltanet_shape(const struct model_desc *d, enum wrole r, int *n_dims,
                                  int64_t shape[4])
{
    int64_t h = d->hidden, nv = d->dn_nv, vdim = (int64_t)d->dn_nv * d->dn_dv;
    int64_t channels = 2 * (int64_t)d->dn_nk * d->dn_dk + vdim; /* [q | k | v] */
    switch (r) {
    case W_DN_QKV:
        return shape_set(n_dims, shape, channels, h);
    case W_DN_Z:
        return shape_set(n_dims, shape, vdim, h);
    case W_DN_B:
    case W_DN_A:
        return shape_set(n_dims, shape, nv, h);
    case W_DN_CONV:
        return shape_set(n_dims, shape, channels, d->dn_conv);
    case W_DN_DT:
    case W_DN_A_LOG:
        return shape_set(n_dims, shape, nv, -1);
    case W_DN_NORM:
        return shape_set(n_dims, shape, d->dn_dv, -1);
    case W_DN_OUT:
        return shape_set(n_dims, shape, h, vdim);
    default:
        return false;
    }
}

static bool qwen35_layer_shape(const struct model_desc *d, int l, enum wrole r, int *n_dims,
                               int64_t shape[4])
{
    switch (r) {
    case W_ATTN_NORM:
    case W_FFN_NORM:
        return shape_set(n_dims, shape, d->hidden, -1);
    case W_FFN_GATE:
    case W_FFN_UP:
    case W_FFN_DOWN:
        return shape_ffn(d, r, n_dims, shape);
    default:
        break;
    }
    if (d->kind[l] == LAYER_ATTN) /* q_proj yields q and its gate per head */
        return shape_attn(d, r, 2 * (int64_t)d->head_dim, true, n_dims, shape);
    return qwen35_deltanet_shape(d, r, n_dims, shape);
}

const struct family_ops family_qwen35 = {
    .family = FAMILY_QWEN35,
    .config_types = qwen35_types,
    .gguf_arch = "qwen35",
    .layer_names = qwen35_layer_names,
    .n_layer_names = (int)ARRAY_LEN(qwen35_layer_names),
    .global_names = qwen35_global_names,
    .n_global_names = (int)ARRAY_LEN(qwen35_global_names),
    .describe_config = qwen35_describe_config,
    .describe_gguf = qwen35_describe_gguf,
    .set_defaults = qwen35_defaults,
    .layer_shape = qwen35_layer_shape,
};
