/* plan_qwen35.c - the Qwen3.5 batch plan (docs/models.md, Qwen3.5 dense hybrid):
 *
 *   h = embed[token]                                     (first stage only)
 *   per layer:  x = rms1p(h, input_layernorm)
 *     DeltaNet: qkv, z, b, a = x·W*ᵀ -> dn.conv (+SiLU, per-slot window) -> dn.recurrent (l2norm,
 *               β, g, gated delta rule; state per slot) -> dn.norm_gate (w ⊙ norm(o) ⊙ silu(z))
 *               -> h += out_proj
 *     attention: q|gate, k, v = x·W*ᵀ -> attn.prep (rms1p q/k norms, partial NeoX RoPE, KV write)
 *               -> attention (o ⊙ σ(gate), fused) -> h += o_proj
 *     h += down(silu(gate x) ⊙ up x), x = rms1p(h, post_attention_layernorm)
 *   head:       logits = rms1p(h[need_logit], norm) · headᵀ   (the shared head plan)
 *
 * Fusions as in plan_lfm2.c: the input norm rides in every projection that reads it, residual adds
 * in the epilogue of out_proj / o_proj / down, SwiGLU in one pass. A DeltaNet layer is 8
 * dispatches + 2 FFN, an attention layer 6 + 2; at decode, where matmul.comp serves in_proj_qkv,
 * the conv rides in its epilogue (k_dn_conv_step: a stage fewer) and z, b, a may go as one stacked
 * product (k_matmul_multi). rms1p's +1: norm_plus1 (HF files); GGUF gains hold
 * 1 + w already. The GGUF value-head order (tiled) and ssm_a = −exp(A_log): dn.gguf.
 *
 * Not yet, and what the other plans need from DeltaNet:
 *  - Prefill runs go through dn.recurrent (token by token inside one dispatch; exact, final state
 *    as decode needs). A chunked form (dn.chunk: chunks of 64, intra-chunk products) was 5 % slower
 *    on the H200 at a 512-token Qwen3.5-2B prefill (bench/13) and was removed; git keeps it.
 *  - The four input projections are four products of the same normed x (k_matmul_multi: in the
 *    wide plan one gemm_xprep serves them, bench/17); concatenating in_proj_qkv | z | b | a at
 *    upload would make them one pass (the wide plan's tiles want that too).
 *
 * --spec (engine.h, "Speculative steps"; bench/14): dn.conv and dn.recurrent take the layer's
 * struct k_state, read entry cur of each slot and, in a spec plan, write the conv window and the
 * DeltaNet state ([nv][dk][dv] f32) as they stand after draft column i into entry cur + i + 1 of
 * the slot's ring (kinds dn.conv.snap, dn.recurrent.snap), so that accepting any prefix costs
 * nothing. Gated attention needs no snapshot. */
#include "plan_blocks.h"

static const struct gpu_weight *lw(const struct engine *en, int l, enum wrole r) { return plan_weight(en, l, r); }

static struct k_dn_geom dn_geom(const struct model_desc *d)
{
    return (struct k_dn_geom){.nk = d->dn_nk, .nv = d->dn_nv, .dk = d->dn_dk, .dv = d->dn_dv, .conv = d->dn_conv,
                              .gguf = d->dn_gguf_layout};
}

/* Buffers: qkv t1 [C][2·nk·dk + nv·dv], conv output t2, z in q [C][nv·dv], b in k and a in v
 * [C][nv], o (and its gated norm, in place) in att [C][nv·dv]. */
static int deltanet_block(struct engine *en, struct plan *p, const struct step_shape *sh, int l, struct err *e)
{
    struct gpu *g = en->g;
    const struct model_desc *d = en->d;
    struct k_norm norm = {lw(en, l, W_ATTN_NORM), d->eps, d->norm_plus1};
    struct k_dn_geom dn = dn_geom(d);
    struct k_state state = engine_state(en, l);
    uint64_t h = en->hidden.addr;
    int C = sh->cols;
    /* the four input projections of one normed x (kernels.h k_matmul_multi: one prep in the wide
     * plan), then the conv; at decode the conv rides in qkv's epilogue (k_dn_conv_step) */
    const struct gpu_weight *in[4] = {lw(en, l, W_DN_QKV), lw(en, l, W_DN_Z), lw(en, l, W_DN_B), lw(en, l, W_DN_A)};
    const uint64_t in_out[4] = {en->t1.addr, en->q.addr, en->k.addr, en->v.addr};
    const char *const in_ops[4] = {"dn.in_proj_qkv", "dn.in_proj_z", "dn.in_proj_b", "dn.in_proj_a"};
    int fuse = k_dn_conv_fuses(g, p, in[0], C, sh->n_runs);
    TRY(k_matmul_multi(g, p, 4 - fuse, in + fuse, in_out + fuse, &norm, h, C, l, in_ops + fuse, "dn.in_proj", e));
    if (fuse)
        TRY(k_dn_conv_step(g, p, &dn, in[0], &norm, h, lw(en, l, W_DN_CONV), &state, en->t2.addr, en->cols.addr, C,
                           sh->n_runs, l, e));
    else
        TRY(k_dn_conv(g, p, &dn, lw(en, l, W_DN_CONV), en->t1.addr, &state, en->t2.addr, en->runs.addr, C,
                      sh->n_runs, l, e));
    TRY(k_dn_recurrent(g, p, &dn, lw(en, l, W_DN_DT), lw(en, l, W_DN_A_LOG), en->t2.addr, en->k.addr, en->v.addr,
                       &state, en->att.addr, en->runs.addr, sh->n_runs, l, e));
    TRY(k_dn_norm_gate(g, p, &dn, lw(en, l, W_DN_NORM), en->att.addr, en->q.addr, C, d->eps, l, e));
    return k_matmul(g, p, lw(en, l, W_DN_OUT), en->att.addr, h, C, true, l, "dn.out_proj", "", e);
}

static int attn_block(struct engine *en, struct plan *p, const struct step_shape *sh, int l, struct err *e)
{
    struct gpu *g = en->g;
    const struct model_desc *d = en->d;
    struct k_norm norm = {lw(en, l, W_ATTN_NORM), d->eps, d->norm_plus1};
    struct k_attn_geom a = plan_attn_geom(en, l, true);
    uint64_t kpool = engine_kpool_addr(en, l), vpool = engine_vpool_addr(en, l);
    int C = sh->cols;
    const struct gpu_weight *qkv[3] = {lw(en, l, W_Q), lw(en, l, W_K), lw(en, l, W_V)};
    const uint64_t qkv_out[3] = {en->q.addr, en->k.addr, en->v.addr};
    const char *const qkv_ops[3] = {"attn.q_proj", "attn.k_proj", "attn.v_proj"};
    TRY(k_matmul_multi(g, p, 3, qkv, qkv_out, &norm, en->hidden.addr, C, l, qkv_ops, "attn.qkv_proj", e));
    TRY(k_attn_step(g, p, &a, lw(en, l, W_Q_NORM), lw(en, l, W_K_NORM), en->q.addr, en->k.addr, en->v.addr, kpool,
                    vpool, en->btab.addr, en->cols.addr, en->att.addr, C, sh->n_runs, sh->prefill, l, e));
    return k_matmul(g, p, lw(en, l, W_O), en->att.addr, en->hidden.addr, C, true, l, "attn.o_proj", "", e);
}

static int mlp_block(struct engine *en, struct plan *p, const struct step_shape *sh, int l, struct err *e)
{
    return plan_ffn_block(en, p, sh, l, lw(en, l, W_FFN_GATE), lw(en, l, W_FFN_UP), en->hidden.addr, true, e);
}

static int qwen35_layers(struct engine *en, const struct step_shape *sh, struct plan *p, struct err *e)
{
    const struct shard *s = en->s;
    if (s->first)
        TRY(k_embed(en->g, p, weights_global(en->w, s, G_EMBED), en->cols.addr, en->hidden.addr, sh->cols, e));
    for (int l = s->a; l < s->b; l++) {
        TRY(en->d->kind[l] == LAYER_DELTANET ? deltanet_block(en, p, sh, l, e) : attn_block(en, p, sh, l, e));
        TRY(mlp_block(en, p, sh, l, e));
    }
    return ST_OK;
}

/* The scratch qwen35_layers takes: the DeltaNet's input projections as k_matmul_multi takes them
 * (qkv apart where its conv rides in its epilogue, matmul.comp's, which takes none), dn.out_proj;
 * the attention and MLP blocks. */
static void qwen35_layers_scratch(const struct engine *en, const struct step_shape *sh, struct sel_scratch *need)
{
    int C = sh->cols;
    for (int l = en->s->a; l < en->s->b; l++) {
        if (en->d->kind[l] == LAYER_DELTANET) {
            struct k_norm norm = {lw(en, l, W_ATTN_NORM), en->d->eps, en->d->norm_plus1};
            const struct gpu_weight *in[4] = {lw(en, l, W_DN_QKV), lw(en, l, W_DN_Z), lw(en, l, W_DN_B),
                                              lw(en, l, W_DN_A)};
            const struct gpu_weight *out = lw(en, l, W_DN_OUT);
            int fuse = k_dn_conv_fuses(en->g, &(struct plan){.kind = sh->plan}, in[0], C, sh->n_runs);
            plan_need(need, k_matmul_scratch(en->g, sh->plan, 4 - fuse, in + fuse, false, &norm, false, C));
            plan_need(need, k_matmul_scratch(en->g, sh->plan, 1, &out, false, NULL, true, C));
        } else {
            plan_attn_scratch(en, sh, l, true, true, need);
        }
        plan_ffn_scratch(en, sh, l, lw(en, l, W_FFN_GATE), lw(en, l, W_FFN_UP), true, need);
    }
}

static void qwen35_dims(const struct model_desc *d, struct engine_dims *out)
{
    int channels = 2 * d->dn_nk * d->dn_dk + d->dn_nv * d->dn_dv, vdim = d->dn_nv * d->dn_dv;
    out->scratch = MAX(channels, d->ffn);              /* qkv and its conv; the SwiGLU output */
    out->q = MAX(2 * d->n_heads * d->head_dim, vdim);  /* q | gate per head; z; o of the delta rule */
    out->kv = MAX(d->n_kv_heads * d->head_dim, d->dn_nv); /* k, v; b, a */
}

/* A DeltaNet layer keeps its delta-rule state and conv window per slot (kernels.h). */
static uint64_t qwen35_state_bytes(const struct model_desc *d, int l)
{
    struct k_dn_geom dn = dn_geom(d);
    return d->kind[l] == LAYER_DELTANET ? k_dn_state_bytes(&dn) : 0;
}

const struct family_plan plan_qwen35 = {
    .family = FAMILY_QWEN35,
    .dims = qwen35_dims,
    .state_bytes = qwen35_state_bytes,
    .spec = true, /* DeltaNet snapshots: dn.conv.snap, dn.recurrent.snap; attention needs none */
    .build_layers = qwen35_layers,
    .build_head = engine_build_head_default,
    .layers_scratch = qwen35_layers_scratch,
    .head_scratch = engine_head_scratch_default,
};
