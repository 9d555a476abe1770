/* plan_glm.c - the GLM-OCR text decoder plan (docs/models.md, GLM-OCR):
 *
 *   h = embed[token]                                              (first stage only)
 *   per layer:  h += rms(attn(rms(h, attn_norm)), post_attn_norm)
 *               h += rms(down(silu(gate x) ⊙ up x), post_ffn_norm),  x = rms(h, ffn_norm)
 *   head:       logits = rms(h[need_logit], output_norm) · lm_headᵀ  (untied; its own plan)
 *
 * Attention is the shared block (plan_blocks.c): no q/k norm tensors, so attn.prep skips the
 * norm; RoPE interleaved (pairs 2i, 2i+1) over rope_dims = the whole head, θ from the config (1e4).
 * The post-norms sit between a projection and the residual add, so the add cannot ride in the
 * projection's epilogue: the projection writes t2 and rmsnorm_add does h += rms(t2, w) in one
 * pass. gate_up_proj [2F, H] is stored as two weights, [gate | up] (weights_part), which the fused
 * SwiGLU reads as LFM2's w1 and w3. 10 dispatches a layer.
 *
 * Other plans (wide, spec): this builder only appends the shared helpers, which pick their kernels
 * by p->kind. What GLM asks of them: rmsnorm_add at every width (one workgroup per column: it
 * serves any width as it is); attention with interleaved RoPE, no q/k norm and head_dim 128; the
 * SwiGLU on two halves of one stack. No recurrent state: a spec step needs no snapshots, a
 * rollback is only the KV positions past the accepted prefix (so .spec holds as it is). */
#include "plan_blocks.h"

static int glm_layer(struct engine *en, struct plan *p, const struct step_shape *sh, int l, struct err *e)
{
    const struct model_desc *d = en->d;
    uint64_t t = en->t2.addr, h = en->hidden.addr;
    TRY(plan_attn_block(en, p, sh, l, t, false, e));
    TRY(k_rmsnorm_add(en->g, p, plan_weight(en, l, W_POST_ATTN_NORM), t, h, sh->cols, d->eps, d->norm_plus1, l,
                      "post_attn_norm", e));
    const struct gpu_weight *gu = plan_weight(en, l, W_FFN_GATE_UP);
    struct gpu_weight gate = weights_part(gu, 0, 2), up = weights_part(gu, 1, 2);
    TRY(plan_ffn_block(en, p, sh, l, &gate, &up, t, false, e));
    return k_rmsnorm_add(en->g, p, plan_weight(en, l, W_POST_FFN_NORM), t, h, sh->cols, d->eps, d->norm_plus1, l,
                         "post_ffn_norm", e);
}

static int glm_layers(struct engine *en, const struct step_shape *sh, struct plan *p, struct err *e)
{
    const struct shard *s = en->s;
    if (s->first)
        TRY(k_embed(en->g, p, weights_global(en->w, s, G_EMBED), en->cols.addr, en->hidden.addr, sh->cols, e));
    for (int l = s->a; l < s->b; l++)
        TRY(glm_layer(en, p, sh, l, e));
    return ST_OK;
}

static void glm_layers_scratch(const struct engine *en, const struct step_shape *sh, struct sel_scratch *need)
{
    for (int l = en->s->a; l < en->s->b; l++) {
        const struct gpu_weight *gu = plan_weight(en, l, W_FFN_GATE_UP);
        struct gpu_weight gate = weights_part(gu, 0, 2), up = weights_part(gu, 1, 2);
        plan_attn_scratch(en, sh, l, false, false, need);
        plan_ffn_scratch(en, sh, l, &gate, &up, false, need);
    }
}

static void glm_dims(const struct model_desc *d, struct engine_dims *out)
{
    out->scratch = MAX(d->hidden, d->ffn); /* a projection's output before its post-norm; the SwiGLU output */
    out->q = d->n_heads * d->head_dim;     /* head_dim from the config: 128, not H / heads */
    out->kv = d->n_kv_heads * d->head_dim;
}

static uint64_t glm_state_bytes(const struct model_desc *d, int l)
{
    (void)d, (void)l;
    return 0; /* attention only: KV, no recurrent state */
}

const struct family_plan plan_glm = {
    .family = FAMILY_GLM_OCR,
    .dims = glm_dims,
    .state_bytes = glm_state_bytes,
    .spec = true, /* no recurrent state to snapshot; a draft's K/V land at their positions */
    .build_layers = glm_layers,
    .build_head = engine_build_head_default,
    .layers_scratch = glm_layers_scratch,
    .head_scratch = engine_head_scratch_default,
};
