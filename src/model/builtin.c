/* builtin.c - the built-in models: the real shapes of docs/models.md, weights made on the GPU.
 *
 * Storage types: matrices (2-D, embedding and untied head included) take the --dtype; 1-D tensors
 * (every norm gain, dt_bias, A_log) and conv kernels stay F32, as real GGUFs keep them. Init rules
 * (docs/design.md): matrices N(0, 1/fan_in) with fan_in = the last dim (3 for the LFM2 conv kernel, 4
 * for the DeltaNet conv), embeddings N(0, 1), gains 1 + 0.1 N, zero-centred gains (Qwen3.5, which
 * built-ins describe in HF layout, norm_plus1) 0.1 N, A_log = log U(1,16), dt_bias = U(-1,1). */
#include "model_family.h"

#include <stdio.h>
#include <string.h>

const struct builtin_model builtin_models[] = {
    {"lfm2-350m",
     "LFM2-350M: H 1024, 16 layers (6 attention), 16/8 heads, ffn 4608, vocab 65536, tied"},
    {"lfm2-700m",
     "LFM2-700M: H 1536, 16 layers (6 attention), 24/8 heads, ffn 6912, vocab 65536, tied"},
    {"lfm2-1.2b",
     "LFM2-1.2B: H 2048, 16 layers (6 attention), 32/8 heads, ffn 8192, vocab 65536, tied"},
    {"lfm2.5-1.2b", "LFM2.5-1.2B: same shape as LFM2-1.2B"},
    {"lfm2-2.6b",
     "LFM2-2.6B: H 2048, 30 layers (8 attention), 32/8 heads, ffn 10752, vocab 65536, tied"},
    {"qwen3.5-0.8b",
     "Qwen3.5-0.8B: H 1024, 24 layers (6 attention), 8/2 heads, DeltaNet 16/16, ffn 3584, "
     "vocab 248320, tied"},
    {"qwen3.5-2b",
     "Qwen3.5-2B: H 2048, 24 layers (6 attention), 8/2 heads, DeltaNet 16/16, ffn 6144, "
     "vocab 248320, tied"},
    {"qwen3.5-4b",
     "Qwen3.5-4B: H 2560, 32 layers (8 attention), 16/4 heads, DeltaNet 16/32, ffn 9216, "
     "vocab 248320, tied"},
    {"qwen3.5-9b",
     "Qwen3.5-9B: H 4096, 32 layers (8 attention), 16/4 heads, DeltaNet 16/32, ffn 12288, "
     "vocab 248320, untied"},
    {"glm-ocr",
     "GLM-OCR text decoder: H 1536, 16 layers, 16/8 heads (head 128), ffn 4608, vocab 59392, "
     "untied"},
};
const int n_builtin_models = (int)ARRAY_LEN(builtin_models);

/* Shapes, in the order of builtin_models. attn: LFM2's attention layers (the others are conv);
 * Qwen3.5 and GLM use their family's default layer kinds. */
struct builtin_shape {
    enum family family;
    int n_layers, hidden, ffn, n_heads, n_kv_heads, head_dim, vocab;
    int dn_nk, dn_nv;
    bool tied;
    const int *attn;
    int n_attn;
};

static const int lfm2_16_attn[] = {2, 5, 8, 10, 12, 14};
static const int lfm2_30_attn[] = {2, 5, 9, 13, 17, 21, 24, 27};
#define LFM2_16 .attn = lfm2_16_attn, .n_attn = (int)ARRAY_LEN(lfm2_16_attn)

static const struct builtin_shape builtin_shapes[] = {
    {FAMILY_LFM2, 16, 1024, 4608, 16, 8, 64, 65536, 0, 0, true, LFM2_16},
    {FAMILY_LFM2, 16, 1536, 6912, 24, 8, 64, 65536, 0, 0, true, LFM2_16},
    {FAMILY_LFM2, 16, 2048, 8192, 32, 8, 64, 65536, 0, 0, true, LFM2_16},
    {FAMILY_LFM2, 16, 2048, 8192, 32, 8, 64, 65536, 0, 0, true, LFM2_16},
    {FAMILY_LFM2, 30, 2048, 10752, 32, 8, 64, 65536, 0, 0, true, lfm2_30_attn,
     (int)ARRAY_LEN(lfm2_30_attn)},
    {FAMILY_QWEN35, 24, 1024, 3584, 8, 2, 256, 248320, 16, 16, true, NULL, 0},
    {FAMILY_QWEN35, 24, 2048, 6144, 8, 2, 256, 248320, 16, 16, true, NULL, 0},
    {FAMILY_QWEN35, 32, 2560, 9216, 16, 4, 256, 248320, 16, 32, true, NULL, 0},
    {FAMILY_QWEN35, 32, 4096, 12288, 16, 4, 256, 248320, 16, 32, false, NULL, 0},
    {FAMILY_GLM_OCR, 16, 1536, 4608, 16, 8, 128, 59392, 0, 0, false, NULL, 0},
};
_Static_assert(ARRAY_LEN(builtin_shapes) == ARRAY_LEN(builtin_models),
               "one shape per built-in model");

static int builtin_find(const char *name, struct err *e)
{
    char list[512];
    size_t k = 0;
    for (int i = 0; i < n_builtin_models; i++)
        if (!strcmp(builtin_models[i].name, name)) return i;
    list[0] = 0;
    for (int i = 0; i < n_builtin_models && k < sizeof list; i++)
        k += (size_t)snprintf(list + k, sizeof list - k, "%s%s", i ? ", " : "",
                              builtin_models[i].name);
    err_set(e, ST_USAGE, "--model %s: not a folder, .gguf file or built-in model (built-in: %s)",
            name, list);
    return -1;
}

int builtin_describe(const char *name, enum dtype dtype, struct model_desc *d, struct err *e)
{
    int i = builtin_find(name, e);
    if (i < 0) return ST_USAGE;
    if (dtype != DT_F32 && dtype != DT_F16 && dtype != DT_BF16 && dtype != DT_Q8_0 &&
        dtype != DT_Q4_0)
        return err_set(e, ST_USAGE, "--dtype %s: built-in weights are bf16, f16, q8_0 or q4_0",
                       dtype_name(dtype));
    const struct builtin_shape *m = &builtin_shapes[i];
    memset(d, 0, sizeof *d);
    d->family = m->family;
    d->n_layers = m->n_layers;
    d->hidden = m->hidden;
    d->head_dim = m->head_dim;
    family_ops_get(m->family)->set_defaults(d);
    d->vocab = m->vocab;
    d->ffn = m->ffn;
    d->n_heads = m->n_heads;
    d->n_kv_heads = m->n_kv_heads;
    d->dn_nk = m->dn_nk;
    d->dn_nv = m->dn_nv;
    d->tied = m->tied;
    for (int k = 0; k < m->n_attn; k++)
        d->kind[m->attn[k]] = LAYER_ATTN;
    d->dtype = dtype;
    snprintf(d->source, sizeof d->source, "%s", builtin_models[i].name);
    return ST_OK;
}

static bool is_norm_role(int role)
{
    return role == W_ATTN_NORM || role == W_FFN_NORM || role == W_Q_NORM || role == W_K_NORM ||
           role == W_POST_ATTN_NORM || role == W_POST_FFN_NORM;
}

static enum winit builtin_init(const struct model_desc *d, const struct shard_tensor *t)
{
    enum winit gain = d->norm_plus1 ? WINIT_NORM0 : WINIT_NORM;
    if (t->layer < 0) {
        if (t->role == G_EMBED) return WINIT_EMBED;
        return t->role == G_FINAL_NORM ? gain : WINIT_MATRIX;
    }
    if (is_norm_role(t->role)) return gain;
    switch (t->role) {
    case W_DN_NORM:
        return WINIT_NORM; /* plain gain even in Qwen3.5 */
    case W_DN_A_LOG:
        return WINIT_A_LOG;
    case W_DN_DT:
        return WINIT_DT_BIAS;
    default:
        return WINIT_MATRIX;
    }
}

int builtin_shard(const struct model_desc *d, int a, int b, struct shard *s, struct err *e)
{
    int st = shard_layout(d, a, b, s, e);
    if (st) return st;
    for (int k = 0; k < s->n; k++) {
        struct shard_tensor *t = &s->t[k];
        t->dtype = model_builtin_dtype(d->dtype, t->layer < 0, t->role, t->n_dims, t->shape);
        t->init = builtin_init(d, t);
        uint64_t numel = 1;
        for (int i = 0; i < t->n_dims; i++)
            numel *= (uint64_t)t->shape[i];
        s->bytes += dtype_bytes(t->dtype, numel);
    }
    return ST_OK;
}
