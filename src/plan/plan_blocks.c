/* plan_blocks.c - blocks shared by the family plans (plan_blocks.h). */
#include "plan_blocks.h"

#include <math.h>

const struct gpu_weight *plan_weight(const struct engine *en, int l, enum wrole r)
{
    const struct gpu_weight *w = weights_layer(en->w, en->s, l, r);
    CHECK(w);
    return w;
}

struct k_attn_geom plan_attn_geom(const struct engine *en, int l, bool gated)
{
    const struct model_desc *d = en->d;
    const struct gpu_weight *qn = weights_layer(en->w, en->s, l, W_Q_NORM), *kn = weights_layer(en->w, en->s, l, W_K_NORM);
    return (struct k_attn_geom){.n_h = d->n_heads, .n_kv = d->n_kv_heads, .hd = d->head_dim, .rope_dims = d->rope_dims,
                                .theta = d->rope_theta, .eps = d->eps, .scale = 1.0f / sqrtf((float)d->head_dim),
                                .plus1 = d->norm_plus1, .interleaved = !d->rope_neox, .no_norm = !qn || !kn,
                                .max_blocks = en->blocks_per_slot, .gated = gated};
}

void plan_need(struct sel_scratch *need, struct sel_scratch one) { sel_scratch_max(need, &one); }

void plan_attn_scratch(const struct engine *en, const struct step_shape *sh, int l, bool gated, bool accumulate,
                       struct sel_scratch *need)
{
    struct k_norm norm = {plan_weight(en, l, W_ATTN_NORM), en->d->eps, en->d->norm_plus1};
    struct k_attn_geom a = plan_attn_geom(en, l, gated);
    const struct gpu_weight *qkv[3] = {plan_weight(en, l, W_Q), plan_weight(en, l, W_K), plan_weight(en, l, W_V)};
    const struct gpu_weight *o = plan_weight(en, l, W_O);
    plan_need(need, k_matmul_scratch(en->g, sh->plan, 3, qkv, false, &norm, false, sh->cols));
    plan_need(need, k_attn_scratch(en->g, sh->plan, &a, sh->cols, sh->n_runs, sh->prefill));
    plan_need(need, k_matmul_scratch(en->g, sh->plan, 1, &o, false, NULL, accumulate, sh->cols));
}

void plan_ffn_scratch(const struct engine *en, const struct step_shape *sh, int l, const struct gpu_weight *gate,
                      const struct gpu_weight *up, bool accumulate, struct sel_scratch *need)
{
    struct k_norm norm = {plan_weight(en, l, W_FFN_NORM), en->d->eps, en->d->norm_plus1};
    const struct gpu_weight *gu[2] = {gate, up}, *down = plan_weight(en, l, W_FFN_DOWN);
    plan_need(need, k_matmul_scratch(en->g, sh->plan, 2, gu, true, &norm, false, sh->cols));
    plan_need(need, k_matmul_scratch(en->g, sh->plan, 1, &down, false, NULL, accumulate, sh->cols));
}

int plan_attn_block(struct engine *en, struct plan *p, const struct step_shape *sh, int l, uint64_t y,
                    bool accumulate, struct err *e)
{
    struct gpu *g = en->g;
    const struct model_desc *d = en->d;
    const struct gpu_weight *qn = weights_layer(en->w, en->s, l, W_Q_NORM), *kn = weights_layer(en->w, en->s, l, W_K_NORM);
    struct k_norm norm = {plan_weight(en, l, W_ATTN_NORM), d->eps, d->norm_plus1};
    struct k_attn_geom a = plan_attn_geom(en, l, false);
    uint64_t kpool = engine_kpool_addr(en, l), vpool = engine_vpool_addr(en, l);
    int C = sh->cols;
    /* q, k, v: one product of the three weights stacked where the kernel allows (kernels.h) */
    const struct gpu_weight *qkv[3] = {plan_weight(en, l, W_Q), plan_weight(en, l, W_K), plan_weight(en, l, W_V)};
    const uint64_t qkv_out[3] = {en->q.addr, en->k.addr, en->v.addr};
    const char *const qkv_ops[3] = {"attn.q_proj", "attn.k_proj", "attn.v_proj"};
    TRY(k_matmul_multi(g, p, 3, qkv, qkv_out, &norm, en->hidden.addr, C, l, qkv_ops, "attn.qkv_proj", e));
    TRY(k_attn_step(g, p, &a, qn, kn, en->q.addr, en->k.addr, en->v.addr, kpool, vpool, en->btab.addr, en->cols.addr,
                    en->att.addr, C, sh->n_runs, sh->prefill, l, e));
    return k_matmul(g, p, plan_weight(en, l, W_O), en->att.addr, y, C, accumulate, l, "attn.out_proj", "", e);
}

int plan_ffn_block(struct engine *en, struct plan *p, const struct step_shape *sh, int l,
                   const struct gpu_weight *gate, const struct gpu_weight *up, uint64_t y, bool accumulate,
                   struct err *e)
{
    struct k_norm norm = {plan_weight(en, l, W_FFN_NORM), en->d->eps, en->d->norm_plus1};
    TRY(k_matmul_swiglu(en->g, p, gate, up, &norm, en->hidden.addr, en->t1.addr, sh->cols, l, "ffn_gate_up", "", e));
    return k_matmul(en->g, p, plan_weight(en, l, W_FFN_DOWN), en->t1.addr, y, sh->cols, accumulate, l, "ffn_down", "",
                    e);
}
