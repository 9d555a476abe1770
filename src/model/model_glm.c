/* model_glm.c - GLM-OCR text decoder: attention layers with four plain RMSNorms, fused gate_up
 * FFN, interleaved RoPE, untied head (docs/models.md). The vision tower (model.visual.*) and the MTP
 * layer (index n_layers) are not part of it and are never bound. No GGUF form. */
#include "model_family.h"

#include <math.h>

static const char *const glm_types[] = {"glm_ocr", "glm_ocr_text", NULL};

static const struct name_rule glm_layer_names[] = {
    {W_ATTN_NORM, "input_layernorm.weight", NULL},
    {W_POST_ATTN_NORM, "post_self_attn_layernorm.weight", NULL},
    {W_FFN_NORM, "post_attention_layernorm.weight", NULL},
    {W_POST_FFN_NORM, "post_mlp_layernorm.weight", NULL},
    {W_FFN_GATE_UP, "mlp.gate_up_proj.weight", NULL},
    {W_FFN_DOWN, "mlp.down_proj.weight", NULL},
    {W_Q, "self_attn.q_proj.weight", NULL},
    {W_K, "self_attn.k_proj.weight", NULL},
    {W_V, "self_attn.v_proj.weight", NULL},
    {W_O, "self_attn.o_proj.weight", NULL},
};

static const struct name_rule glm_global_names[] = {
    {G_EMBED, "embed_tokens.weight", NULL},
    {G_FINAL_NORM, "norm.weight", NULL},
    {G_HEAD, "lm_head.weight", NULL},
};

static void glm_defaults(struct model_desc *d)
{
    d->rope_dims = d->head_dim;
    d->rope_theta = 1e4f;
    d->rope_neox = false; /* pairs (2i, 2i+1) */
    d->eps = 1e-5f;
    d->norm_plus1 = false;
    d->tied = false;
    for (int l = 0; l < d->n_layers; l++)
        d->kind[l] = LAYER_ATTN;
}

static int glm_describe_config(const cJSON *text, const cJSON *root, const char *cfg_path,
                               const struct model_source *src, struct model_desc *d, struct err *e)
{
    (void)src;
    int st;
    if ((st = cfg_common_dims(text, cfg_path, d, e)) ||
        (st = cfg_need_int(text, "head_dim", 2, 1 << 12, cfg_path, &d->head_dim, e)))
        return st;
    glm_defaults(d);
    if ((st = cfg_eps(text, "rms_norm_eps", cfg_path, &d->eps, e)) ||
        (st = cfg_rope_theta(text, cfg_path, &d->rope_theta, e)) ||
        (st = cfg_rope_dims(text, cfg_path, 1.0, d, e)))
        return st;
    return cfg_tied(root, text, cfg_path, &d->tied, e);
}

static bool glm_layer_shape(const struct model_desc *d, int l, enum wrole r, int *n_dims,
                            int64_t shape[4])
{
    (void)l;
    int64_t h = d->hidden;
    switch (r) {
    case W_ATTN_NORM:
    case W_POST_ATTN_NORM:
    case W_FFN_NORM:
    case W_POST_FFN_NORM:
        return shape_set(n_dims, shape, h, -1);
    case W_FFN_GATE_UP:
        return shape_set(n_dims, shape, 2 * (int64_t)d->ffn, h);
    case W_FFN_DOWN:
        return shape_ffn(d, r, n_dims, shape);
    default:
        return shape_attn(d, r, d->head_dim, false, n_dims, shape);
    }
}

const struct family_ops family_glm = {
    .family = FAMILY_GLM_OCR,
    .config_types = glm_types,
    .gguf_arch = NULL,
    .layer_names = glm_layer_names,
    .n_layer_names = (int)ARRAY_LEN(glm_layer_names),
    .global_names = glm_global_names,
    .n_global_names = (int)ARRAY_LEN(glm_global_names),
    .describe_config = glm_describe_config,
    .describe_gguf = NULL,
    .set_defaults = glm_defaults,
    .layer_shape = glm_layer_shape,
};
