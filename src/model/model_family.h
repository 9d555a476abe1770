/* model_family.h - internal: what each model family (model_<family>.c) tells the generic model code
 * (model.c, builtin.c). Not for use outside the model description stage.
 *
 * A family is data plus three functions: its config/GGUF names, a naming table that maps file
 * tensor names onto canonical roles, a reader of config.json, a reader of GGUF metadata, and the
 * expected shape of each role in a layer. Everything else (binding, checks, built-ins) is generic.
 */
#ifndef LFM2_MODEL_FAMILY_H
#define LFM2_MODEL_FAMILY_H

#include "model.h"

/* One tensor role as files name it. For layer roles the names follow "layers.N." (HF, after the
 * "model." or "model.language_model." prefix) or "blk.N." (GGUF); global names follow the prefix
 * (HF; "lm_head.weight" also matches unprefixed) or stand alone (GGUF). NULL: not in that format.
 */
struct name_rule {
    int role;         /* enum wrole (layer table) or enum grole (global table) */
    const char *hf;   /* e.g. "feed_forward.w2.weight" */
    const char *gguf; /* e.g. "ffn_down.weight" */
};

struct family_ops {
    enum family family;
    const char *const *config_types; /* model_type values, NULL-terminated */
    const char *gguf_arch;           /* general.architecture, or NULL when no GGUF form exists */
    const struct name_rule *layer_names;
    int n_layer_names;
    const struct name_rule *global_names;
    int n_global_names;
    /* Fill dims, kinds, eps, rope, tied from config.json. `text` is text_config when present, else
     * the root; `cfg_path` names the file in messages. d->family and d->source are already set. */
    int (*describe_config)(const cJSON *text, const cJSON *root, const char *cfg_path,
                           const struct model_source *src, struct model_desc *d, struct err *e);
    /* Same from GGUF metadata (NULL: the family has no GGUF form). */
    int (*describe_gguf)(const struct model_source *src, struct model_desc *d, struct err *e);
    /* Family constants the files may override: eps, rope theta/style/dims, norm_plus1, conv_cache,
     * default layer kinds. Needs n_layers, hidden and head_dim set. Built-ins use them as they are.
     */
    void (*set_defaults)(struct model_desc *d);
    /* Shape of role r in layer l (torch order); false when the layer has no such tensor. */
    bool (*layer_shape)(const struct model_desc *d, int l, enum wrole r, int *n_dims,
                        int64_t shape[4]);
};

extern const struct family_ops family_lfm2, family_qwen35, family_glm;
const struct family_ops *family_ops_get(enum family f);

/* ---- helpers shared by the families (model.c) */

/* Sets a 1-D (b < 0) or 2-D shape; returns true. */
bool shape_set(int *n_dims, int64_t shape[4], int64_t a, int64_t b);
/* SwiGLU FFN with separate gate/up [F,H] and down [H,F]. */
bool shape_ffn(const struct model_desc *d, enum wrole r, int *n_dims, int64_t shape[4]);
/* Attention projections; q_rows_per_head = head_dim (or 2*head_dim for a gated q); qk_norm adds
 * W_Q_NORM / W_K_NORM [head_dim]. */
bool shape_attn(const struct model_desc *d, enum wrole r, int64_t q_rows_per_head, bool qk_norm,
                int *n_dims, int64_t shape[4]);

/* Typed keys. Absent (or null) optional keys leave *v as it is; a present key of the wrong type or
 * out of range is ST_USAGE naming cfg_path, the key, the value and what was expected. */
int cfg_get_int(const cJSON *obj, const char *key, int lo, int hi, const char *cfg_path,
                bool required, int *v, struct err *e);
/* Integer key that must be present and in [lo, hi]. */
int cfg_need_int(const cJSON *obj, const char *key, int lo, int hi, const char *cfg_path, int *v,
                 struct err *e);
/* Finite number in (lo, hi]. */
int cfg_get_num(const cJSON *obj, const char *key, double lo, double hi, const char *cfg_path,
                double *v, struct err *e);
int cfg_get_bool(const cJSON *obj, const char *key, const char *cfg_path, bool *v, struct err *e);
/* Object / array keys: *v NULL when absent. */
int cfg_get_obj(const cJSON *obj, const char *key, const char *cfg_path, const cJSON **v,
                struct err *e);
int cfg_get_arr(const cJSON *obj, const char *key, const char *cfg_path, const cJSON **v,
                struct err *e);
/* The dims every config names alike: num_hidden_layers, hidden_size, num_attention_heads,
 * num_key_value_heads (required), vocab_size and max_position_embeddings (optional). */
int cfg_common_dims(const cJSON *text, const char *cfg_path, struct model_desc *d, struct err *e);
/* RoPE theta: rope_parameters.rope_theta, else rope_theta, else *theta as it is; (0, 1e15]. */
int cfg_rope_theta(const cJSON *text, const char *cfg_path, float *theta, struct err *e);
/* rope_dims = head_dim · partial_rotary_factor (rope_parameters or the top of text, in (0, 1]; else
 * `partial`); ST_USAGE naming cfg_path unless it is even and in 2..head_dim. Needs head_dim set. */
int cfg_rope_dims(const cJSON *text, const char *cfg_path, double partial, struct model_desc *d, struct err *e);
/* Norm epsilon under `key`, in (0, 1]; else *eps as it is. */
int cfg_eps(const cJSON *text, const char *key, const char *cfg_path, float *eps, struct err *e);
/* tie_word_embeddings at the root, then in text_config (which wins). */
int cfg_tied(const cJSON *root, const cJSON *text, const char *cfg_path, bool *tied, struct err *e);
/* Same for GGUF: "<arch>.<key>" integer in [lo, hi], required. */
int gguf_need_u32(const struct model_source *src, const char *arch, const char *key, int lo, int hi,
                  int *v, struct err *e);

/* Same from GGUF: <arch>.block_count, embedding_length, attention.head_count (required),
 * vocab_size and context_length (optional; a present one must be a valid integer). */
int gguf_common_dims(const struct model_source *src, const char *arch, struct model_desc *d,
                     struct err *e);
/* Overrides eps and theta with <arch>.attention.layer_norm_rms_epsilon / rope.freq_base if set
 * (f32/f64 in (0, 1] and (0, 1e15]; anything else is ST_USAGE). */
int gguf_norm_rope(const struct model_source *src, const char *arch, struct model_desc *d,
                   struct err *e);

/* The view bound to canonical (layer, role) in src, or NULL. layer < 0: global role. */
const struct tensor_view *model_find_view(const struct model_source *src,
                                          const struct family_ops *ops, int layer, int role);

/* Storage type of a built-in tensor: `matrix` for weight matrices (2-D, rows a multiple of 32
 * elements for the block types, else F16), F32 for 1-D tensors and conv kernels. */
enum dtype model_builtin_dtype(enum dtype matrix, bool global, int role, int n_dims,
                               const int64_t shape[4]);

/* Lays out the tensors of shard a..b-1 (names, layers, roles, shapes, indices; dtype F32, src NULL,
 * init WINIT_MATRIX) as shard_bind and builtin_shard both need; checks a:b. */
int shard_layout(const struct model_desc *d, int a, int b, struct shard *s, struct err *e);


/* Shared by model.c, config.c and shard.c (the generic model code). */
void model_canonical_name(int layer, int role, char *buf, size_t n); /* "blk.<l>.<role>", or the global role */
bool model_is_weight_dtype(enum dtype t);
void model_shape_str(int n_dims, const int64_t *shape, char *buf, size_t n); /* "[a, b]" */
bool model_shape_matches(const struct tensor_view *v, int n_dims, const int64_t *shape);
/* A file tensor name -> (layer, role) for this family and format; false when it names none. */
bool model_parse_name(const struct family_ops *ops, bool gguf, const char *name, int *layer, int *role);
/* The error for a tensor the shard needs and the file lacks (names the file's name for it). */
int model_err_missing(const struct model_source *src, const struct family_ops *ops, int layer, int role,
                      struct err *e);

#endif
