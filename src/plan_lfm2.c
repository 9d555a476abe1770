/* plan_lfm2.c - the LFM2 batch plan (MODELS.md, LFM2):
 *
 *   h = embed[token]                                   (first stage only)
 *   per layer:  h += mixer(rms(h, attn_norm))          conv: in_proj -> shortconv -> out_proj
 *                                                      attn: q,k,v -> prep -> attention -> out_proj
 *               h += w2(silu(w1 x) ⊙ w3 x), x = rms(h, ffn_norm)
 *   head:       logits = rms(h[need_logit], output_norm) · embedᵀ   (its own plan)
 *
 * Fusions (DESIGN.md, Speed rules): every RMSNorm rides in the projection that reads it, every
 * residual add in the epilogue of the projection that ends the block, SwiGLU in one pass over
 * w1 and w3. A conv layer is 5 dispatches, an attention layer 8. */
#include <math.h>

#include "engine.h"

#define TRY(x)                                                                                     \
    do {                                                                                           \
        int st_ = (x);                                                                             \
        if (st_) return st_;                                                                       \
    } while (0)

static const struct gpu_weight *lw(const struct engine *en, int l, enum wrole r)
{
    const struct gpu_weight *w = weights_layer(en->w, en->s, l, r);
    CHECK(w); /* shard_bind checked every tensor the layer kind needs */
    return w;
}

static int conv_block(struct engine *en, struct plan *p, const struct step_shape *sh, int l, struct err *e)
{
    struct gpu *g = en->g;
    struct k_norm norm = {lw(en, l, W_ATTN_NORM), en->d->eps, en->d->norm_plus1};
    TRY(k_matmul_norm(g, p, lw(en, l, W_CONV_IN), &norm, en->hidden.addr, en->t1.addr, sh->cols, false, l,
                      "conv.in_proj", "", e));
    struct k_state state = engine_state(en, l);
    TRY(k_shortconv(g, p, lw(en, l, W_CONV), en->t1.addr, &state, en->t2.addr, en->runs.addr, sh->n_runs, l,
                    "conv.conv", e));
    return k_matmul(g, p, lw(en, l, W_CONV_OUT), en->t2.addr, en->hidden.addr, sh->cols, true, l, "conv.out_proj",
                    "", e);
}

static int attn_block(struct engine *en, struct plan *p, const struct step_shape *sh, int l, struct err *e)
{
    struct gpu *g = en->g;
    const struct model_desc *d = en->d;
    struct k_norm norm = {lw(en, l, W_ATTN_NORM), d->eps, d->norm_plus1};
    struct k_attn_geom a = {.n_h = d->n_heads, .n_kv = d->n_kv_heads, .hd = d->head_dim, .rope_dims = d->rope_dims,
                            .theta = d->rope_theta, .eps = d->eps, .scale = 1.0f / sqrtf((float)d->head_dim),
                            .plus1 = d->norm_plus1, .interleaved = !d->rope_neox, .no_norm = false,
                            .max_blocks = en->blocks_per_slot};
    uint64_t kpool = engine_kpool_addr(en, l), vpool = engine_vpool_addr(en, l);
    int C = sh->cols;
    TRY(k_matmul_norm(g, p, lw(en, l, W_Q), &norm, en->hidden.addr, en->q.addr, C, false, l, "attn.q_proj", "", e));
    TRY(k_matmul_norm(g, p, lw(en, l, W_K), &norm, en->hidden.addr, en->k.addr, C, false, l, "attn.k_proj", "", e));
    TRY(k_matmul_norm(g, p, lw(en, l, W_V), &norm, en->hidden.addr, en->v.addr, C, false, l, "attn.v_proj", "", e));
    TRY(k_attn_prep(g, p, &a, lw(en, l, W_Q_NORM), lw(en, l, W_K_NORM), en->q.addr, en->k.addr, en->v.addr, kpool,
                    vpool, en->btab.addr, en->cols.addr, C, l, e));
    TRY(k_attention(g, p, &a, en->q.addr, kpool, vpool, en->btab.addr, en->cols.addr, en->att.addr, C, sh->prefill,
                    l, e));
    return k_matmul(g, p, lw(en, l, W_O), en->att.addr, en->hidden.addr, C, true, l, "attn.out_proj", "", e);
}

static int ffn_block(struct engine *en, struct plan *p, const struct step_shape *sh, int l, struct err *e)
{
    struct k_norm norm = {lw(en, l, W_FFN_NORM), en->d->eps, en->d->norm_plus1};
    TRY(k_matmul_swiglu(en->g, p, lw(en, l, W_FFN_GATE), lw(en, l, W_FFN_UP), &norm, en->hidden.addr, en->t1.addr,
                        sh->cols, l, "ffn_gate_up", "", e));
    return k_matmul(en->g, p, lw(en, l, W_FFN_DOWN), en->t1.addr, en->hidden.addr, sh->cols, true, l, "ffn_down", "",
                    e);
}

static int lfm2_layers(struct engine *en, const struct step_shape *sh, struct plan *p, struct err *e)
{
    const struct shard *s = en->s;
    if (s->first)
        TRY(k_embed(en->g, p, weights_global(en->w, s, G_EMBED), en->cols.addr, en->hidden.addr, sh->cols, e));
    for (int l = s->a; l < s->b; l++) {
        TRY(en->d->kind[l] == LAYER_CONV ? conv_block(en, p, sh, l, e) : attn_block(en, p, sh, l, e));
        TRY(ffn_block(en, p, sh, l, e));
    }
    return ST_OK;
}

static void lfm2_dims(const struct model_desc *d, struct engine_dims *out)
{
    out->scratch = MAX(3 * d->hidden, d->ffn); /* [B|C|X]; the SwiGLU output */
    out->q = d->n_heads * d->head_dim;
    out->kv = d->n_kv_heads * d->head_dim;
}

/* A conv layer keeps the last conv_cache - 1 values of u = B⊙X per channel. */
static uint64_t lfm2_state_bytes(const struct model_desc *d, int l)
{
    return d->kind[l] == LAYER_CONV ? (uint64_t)(d->conv_cache - 1) * (uint64_t)d->hidden * 4 : 0;
}

const struct family_plan plan_lfm2 = {
    .family = FAMILY_LFM2,
    .dims = lfm2_dims,
    .state_bytes = lfm2_state_bytes,
    .spec = true, /* the conv window's snapshots: shortconv.snap; attention needs none */
    .build_layers = lfm2_layers,
    .build_head = engine_build_head_default,
};
