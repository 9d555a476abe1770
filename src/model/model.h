/* model.h - model description (family, dimensions, layer kinds) and shards (layers a..b-1 with
 * every tensor bound under one canonical name, whichever naming the file used).
 *
 * Canonical names are GGUF-style: "token_embd", "output_norm", "output", "blk.N.<role>" with the
 * role names below. Files in HF naming (with or without "model.language_model.") and GGUF files
 * both map onto them; per-family naming lives in model_<family>.c. */
#ifndef LFM2_MODEL_H
#define LFM2_MODEL_H

#include "common.h"
#include "loader.h"

#define MODEL_MAX_LAYERS 128
#define MODEL_MAX_POS (1 << 24)   /* largest max_position_embeddings / context_length read */
#define MODEL_MAX_EPS 1.0         /* norm epsilon: above 0, at most this */
#define MODEL_MAX_THETA 1e15      /* rope theta: above 0, at most this */

enum family { FAMILY_LFM2, FAMILY_QWEN35, FAMILY_GLM_OCR, FAMILY_COUNT };
const char *family_name(enum family f); /* "lfm2", "qwen3_5", "glm_ocr" */

enum layer_kind {
    LAYER_CONV,     /* LFM2 short conv */
    LAYER_ATTN,     /* full attention (all families) */
    LAYER_DELTANET, /* Qwen3.5 Gated DeltaNet */
};
const char *layer_kind_name(enum layer_kind k); /* "conv", "attn", "deltanet" */

/* Per-layer tensor roles; canonical name "blk.N.<wrole_name>". */
enum wrole {
    W_ATTN_NORM,  /* LFM2 operator_norm; Qwen/GLM input_layernorm   [H] */
    W_FFN_NORM,   /* LFM2 ffn_norm; Qwen/GLM post_attention_layernorm [H] */
    W_FFN_GATE,   /* w1 / gate_proj  [F, H] */
    W_FFN_UP,     /* w3 / up_proj    [F, H] */
    W_FFN_DOWN,   /* w2 / down_proj  [H, F] */
    W_Q,          /* [nH*hd, H] (Qwen3.5: [nH*2*hd, H], q and gate per head) */
    W_K,          /* [nKV*hd, H] */
    W_V,          /* [nKV*hd, H] */
    W_O,          /* out_proj / o_proj [H, nH*hd] */
    W_Q_NORM,     /* [hd] */
    W_K_NORM,     /* [hd] */
    W_CONV_IN,    /* LFM2 conv.in_proj [3H, H] */
    W_CONV,       /* LFM2 conv.conv [H, 3] (HF [H,1,3] is stored flat the same way) */
    W_CONV_OUT,   /* LFM2 conv.out_proj [H, H] */
    W_DN_QKV,     /* Qwen3.5 in_proj_qkv [2*nk*dk + nv*dv, H] */
    W_DN_Z,       /* in_proj_z [nv*dv, H] */
    W_DN_B,       /* in_proj_b [nv, H] */
    W_DN_A,       /* in_proj_a [nv, H] */
    W_DN_CONV,    /* conv1d [C, 4] */
    W_DN_DT,      /* dt_bias [nv] */
    W_DN_A_LOG,   /* A_log [nv] (GGUF ssm_a: -exp(A_log)) */
    W_DN_NORM,    /* norm [dv] */
    W_DN_OUT,     /* out_proj [H, nv*dv] */
    W_POST_ATTN_NORM, /* GLM post_self_attn_layernorm [H] */
    W_POST_FFN_NORM,  /* GLM post_mlp_layernorm [H] */
    W_FFN_GATE_UP,    /* GLM gate_up_proj [2F, H] */
    W_COUNT
};
const char *wrole_name(enum wrole r); /* GGUF-style role: "attn_norm", "ffn_down", ... */
/* Canonical role names (model.c) <- file names (LFM2 HF | Qwen3.5 HF | GLM-OCR HF; GGUF):
 *   attn_norm      operator_norm | input_layernorm | input_layernorm; attn_norm
 *   ffn_norm       ffn_norm | post_attention_layernorm | post_attention_layernorm;
 *                  ffn_norm (LFM2), post_attention_norm (qwen35)
 *   ffn_gate/up/down  feed_forward.w1/w3/w2 | mlp.{gate,up,down}_proj | mlp.down_proj
 *   attn_q/k/v     self_attn.{q,k,v}_proj (all)
 *   attn_output    self_attn.out_proj (LFM2) | self_attn.o_proj
 *   attn_q_norm/attn_k_norm  self_attn.{q,k}_layernorm (LFM2) | self_attn.{q,k}_norm
 *   shortconv.in_proj/conv/out_proj  conv.{in_proj,conv,out_proj} (LFM2)
 *   attn_qkv, attn_gate, ssm_beta, ssm_alpha  linear_attn.in_proj_{qkv,z,b,a} (Qwen3.5)
 *   ssm_conv1d, ssm_dt.bias, ssm_a, ssm_norm, ssm_out
 *                  linear_attn.{conv1d, dt_bias, A_log, norm, out_proj} (Qwen3.5)
 *   post_attn_norm post_self_attn_layernorm (GLM)
 *   post_ffn_norm  post_mlp_layernorm (GLM)
 *   ffn_gate_up    mlp.gate_up_proj (GLM)
 * Globals: token_embd <- embed_tokens; output_norm <- embedding_norm (LFM2; GGUF token_embd_norm
 * or output_norm) or norm; output <- lm_head. HF names may carry "model." or
 * "model.language_model."; GGUF names are "blk.N.<role>.weight" (ssm_a, ssm_dt.bias bare).
 * Anything else (model.visual.*, mtp.*, layers >= n_layers, lm_head of a tied model) is
 * ignored. */

enum grole { G_EMBED, G_FINAL_NORM, G_HEAD, G_COUNT }; /* token_embd, output_norm, output */
const char *grole_name(enum grole r);

struct model_desc {
    enum family family;
    int n_layers;
    int hidden;        /* H */
    int vocab;         /* V */
    int ffn;           /* F, from the gate weight's shape when a file is read */
    int n_heads;       /* attention query heads */
    int n_kv_heads;    /* attention kv heads */
    int head_dim;      /* attention head dim */
    int max_pos;       /* max_position_embeddings / context_length; 0 when the files say none */
    int rope_dims;     /* rotated dims per head (64 for Qwen3.5, head_dim otherwise) */
    float rope_theta;
    bool rope_neox;    /* pairs (i, i+d/2); false: interleaved pairs (2i, 2i+1) (GLM) */
    float eps;         /* RMSNorm epsilon */
    bool norm_plus1;   /* gains applied as (1 + w) (Qwen3.5 HF files); GGUF stores 1+w already */
    bool tied;         /* head = embedding */
    int conv_cache;    /* LFM2 L_cache (3): state keeps conv_cache-1 values */
    /* Qwen3.5 Gated DeltaNet */
    int dn_nk, dn_nv, dn_dk, dn_dv, dn_conv;
    bool dn_gguf_layout; /* GGUF: ssm_a = -exp(A_log), value heads tiled */
    enum layer_kind kind[MODEL_MAX_LAYERS];
    enum dtype dtype;  /* dominant weight type (the matrices'), for reports */
    char source[4096]; /* folder, file or built-in name (a whole path: PATH_MAX) */
};

/* Reads family and dimensions from config.json (safetensors) or GGUF metadata. Unknown family:
 * ST_USAGE listing the supported ones. */
int model_describe(const struct model_source *src, struct model_desc *d, struct err *e);
/* Shape of role r in layer l (torch order); false when that layer kind has no such tensor. */
bool model_layer_shape(const struct model_desc *d, int l, enum wrole r, int *n_dims, int64_t shape[4]);
bool model_global_shape(const struct model_desc *d, enum grole r, int *n_dims, int64_t shape[4]);

/* How a built-in model's tensor is made on the GPU. */
enum winit {
    WINIT_MATRIX,  /* N(0, 1/fan_in) */
    WINIT_EMBED,   /* N(0, 1) */
    WINIT_NORM,    /* 1 + 0.1 N(0,1) */
    WINIT_NORM0,   /* 0.1 N(0,1) (zero-centred gains) */
    WINIT_A_LOG,   /* log(U(1,16)) */
    WINIT_DT_BIAS, /* U(-1,1) */
};

/* One tensor of a shard: from a file (src) or made on the GPU (built-in, src NULL). */
struct shard_tensor {
    char name[64];          /* canonical */
    int layer;              /* -1 for globals */
    int role;               /* enum wrole, or enum grole for globals */
    enum dtype dtype;
    int n_dims;
    int64_t shape[4];
    const struct tensor_view *src;
    enum winit init;
};

struct shard {
    int a, b;               /* layers a..b-1 */
    bool first, last;       /* a == 0; b == n_layers */
    struct shard_tensor *t;
    int n;
    int layer_index[MODEL_MAX_LAYERS][W_COUNT]; /* index into t, -1 when absent */
    int global_index[G_COUNT];                  /* index into t, -1 when not in this shard */
    uint64_t bytes;         /* sum of tensor bytes as stored */
};

/* Binds layers a..b-1 (plus the embedding when a == 0, final norm and head when b == N; a tied
 * head binds the embedding). Checks every tensor is present with the expected shape and a
 * supported dtype. a:b out of range or empty: ST_USAGE.
 * Tied head: one shard_tensor (role G_EMBED, "token_embd") with global_index[G_HEAD] pointing at
 * it; on a later stage (a > 0) it is in t[] but global_index[G_EMBED] stays -1 (nothing to embed),
 * and bytes counts it once. layer_index is by absolute layer number. Conv kernels stored [C,1,K]
 * bind where [C,K] is expected (same bytes; the shard records [C,K]). fan_in of a matrix = its last
 * dim. */
int shard_bind(const struct model_source *src, const struct model_desc *d, int a, int b, struct shard *s,
               struct err *e);
void shard_free(struct shard *s);
/* Counts the file tensors that no shard of this model binds (vision tower, MTP layer, a tied
 * model's lm_head, anything unknown) and names them by kind in `what` ("vision tower (27), MTP
 * layer (13)"). */
int model_ignored(const struct model_source *src, const struct model_desc *d, char *what, size_t n);

/* Built-in models (real shapes, weights made on the GPU). */
struct builtin_model {
    const char *name;
    const char *about;
};
extern const struct builtin_model builtin_models[];
extern const int n_builtin_models;
/* Fills d for built-in `name` stored as `dtype`; ST_USAGE if unknown. */
int builtin_describe(const char *name, enum dtype dtype, struct model_desc *d, struct err *e);
/* Like shard_bind for a built-in: every tensor has src == NULL and its init rule. Matrices (2-D,
 * embedding and untied head included) are stored as d->dtype (F16 when a block type does not
 * divide the row); 1-D tensors (norm gains, dt_bias, A_log) and conv kernels stay F32. */
int builtin_shard(const struct model_desc *d, int a, int b, struct shard *s, struct err *e);

#endif
