/* plan_lfm2.c - the LFM2 plan (docs/models.md, LFM2), the same for every plan kind (the kernel helpers
 * pick their implementation by p->kind: matrix-vector or tiled, serial or parallel short conv):
 *
 *   h = embed[token]                                   (first stage only)
 *   per layer:  h += mixer(rms(h, attn_norm))          conv: in_proj -> shortconv -> out_proj
 *                                                      attn: q,k,v -> prep -> attention -> out_proj
 *               h += w2(silu(w1 x) ⊙ w3 x), x = rms(h, ffn_norm)
 *   head:       logits = rms(h[need_logit], output_norm) · embedᵀ   (its own plan)
 *
 * Fusions (docs/design.md, Speed rules): every RMSNorm rides in the projection that reads it, every
 * residual add in the epilogue of the projection that ends the block, SwiGLU in one pass over
 * w1 and w3. In the batch plan a conv layer is 5 dispatches and an attention layer 6 (q/k/v
 * stacked); at decode 4 and 5: the short conv rides in in_proj's epilogue (k_conv_step) and the
 * prep in the attention (k_attn_step). */
#include "plan_blocks.h"

static int conv_block(struct engine *en, struct plan *p, const struct step_shape *sh, int l, struct err *e)
{
    struct gpu *g = en->g;
    struct k_norm norm = {plan_weight(en, l, W_ATTN_NORM), en->d->eps, en->d->norm_plus1};
    struct k_state state = engine_state(en, l);
    TRY(k_conv_step(g, p, plan_weight(en, l, W_CONV_IN), &norm, en->hidden.addr, plan_weight(en, l, W_CONV), &state,
                    en->t1.addr, en->t2.addr, en->runs.addr, en->cols.addr, sh->cols, sh->n_runs, l, e));
    return k_matmul(g, p, plan_weight(en, l, W_CONV_OUT), en->t2.addr, en->hidden.addr, sh->cols, true, l,
                    "conv.out_proj", "", e);
}

/* LFM2's attention (q/k norms, NeoX RoPE) and FFN both end in the residual add. */
static int ffn_block(struct engine *en, struct plan *p, const struct step_shape *sh, int l, struct err *e)
{
    return plan_ffn_block(en, p, sh, l, plan_weight(en, l, W_FFN_GATE), plan_weight(en, l, W_FFN_UP), en->hidden.addr,
                          true, e);
}

static int lfm2_layers(struct engine *en, const struct step_shape *sh, struct plan *p, struct err *e)
{
    const struct shard *s = en->s;
    if (s->first)
        TRY(k_embed(en->g, p, weights_global(en->w, s, G_EMBED), en->cols.addr, en->hidden.addr, sh->cols, e));
    for (int l = s->a; l < s->b; l++) {
        TRY(en->d->kind[l] == LAYER_CONV ? conv_block(en, p, sh, l, e)
                                          : plan_attn_block(en, p, sh, l, en->hidden.addr, true, e));
        TRY(ffn_block(en, p, sh, l, e));
    }
    return ST_OK;
}

/* The scratch lfm2_layers takes: conv.in_proj as a normed product (where the conv rides in its
 * epilogue matmul.comp serves it, which takes none either way), conv.out_proj, the shared blocks. */
static void lfm2_layers_scratch(const struct engine *en, const struct step_shape *sh, struct sel_scratch *need)
{
    for (int l = en->s->a; l < en->s->b; l++) {
        if (en->d->kind[l] == LAYER_CONV) {
            struct k_norm norm = {plan_weight(en, l, W_ATTN_NORM), en->d->eps, en->d->norm_plus1};
            const struct gpu_weight *in = plan_weight(en, l, W_CONV_IN), *out = plan_weight(en, l, W_CONV_OUT);
            plan_need(need, k_matmul_scratch(en->g, sh->plan, 1, &in, false, &norm, false, sh->cols));
            plan_need(need, k_matmul_scratch(en->g, sh->plan, 1, &out, false, NULL, true, sh->cols));
        } else {
            plan_attn_scratch(en, sh, l, false, true, need);
        }
        plan_ffn_scratch(en, sh, l, plan_weight(en, l, W_FFN_GATE), plan_weight(en, l, W_FFN_UP), true, need);
    }
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
    .layers_scratch = lfm2_layers_scratch,
    .head_scratch = engine_head_scratch_default,
};
