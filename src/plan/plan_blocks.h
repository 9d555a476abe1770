/* plan_blocks.h - the blocks that family plans (plan_<family>.c) share: a layer's weight by role,
 * the attention block and the SwiGLU FFN block. They append kernel helpers only, and the kernel
 * helpers pick their implementation by the plan's kind, so one block serves the batch, wide and
 * spec plans alike. */
#ifndef LFM2_PLAN_BLOCKS_H
#define LFM2_PLAN_BLOCKS_H

#include "engine.h"

/* Returns from the calling builder when a helper fails. */
#define TRY(x)                                                                                     \
    do {                                                                                           \
        int st_ = (x);                                                                             \
        if (st_) return st_;                                                                       \
    } while (0)

/* Layer l's weight of role r (shard_bind checked every tensor the layer kind needs). */
const struct gpu_weight *plan_weight(const struct engine *en, int l, enum wrole r);

/* Attention of layer l, reading the residual stream h (en->hidden):
 *   q, k, v = rms(h, attn_norm) · W{q,k,v}ᵀ;  per-head q/k RMSNorm (only when the layer has
 *   q_norm / k_norm tensors) and RoPE (NeoX halves or interleaved pairs, from the description);
 *   paged causal attention;  y (+)= att · W_oᵀ.
 * accumulate: add into y (the residual add fused into the output projection). 6 dispatches. */
int plan_attn_block(struct engine *en, struct plan *p, const struct step_shape *sh, int l, uint64_t y,
                    bool accumulate, struct err *e);

/* SwiGLU FFN of layer l: y (+)= down(silu(gate x) ⊙ up x), x = rms(h, ffn_norm); the SwiGLU output
 * goes through en->t1. gate and up: [F, H] each (separate tensors, or the halves of a fused
 * stack). 2 dispatches. */
int plan_ffn_block(struct engine *en, struct plan *p, const struct step_shape *sh, int l,
                   const struct gpu_weight *gate, const struct gpu_weight *up, uint64_t y, bool accumulate,
                   struct err *e);

/* The geometry of layer l's attention (gated: Qwen3.5's q | gate rows; no q/k norm where the layer
 * has no q_norm / k_norm tensors). */
struct k_attn_geom plan_attn_geom(const struct engine *en, int l, bool gated);

/* ---- the kernels' scratch the blocks take (engine.h family_plan layers_scratch): each mirrors its
 * builder's products with the same arguments, max'ed into need. */

/* need = the field-wise max of need and one. */
void plan_need(struct sel_scratch *need, struct sel_scratch one);
/* plan_attn_block's (gated: Qwen3.5's attention, which builds its own block the same way). */
void plan_attn_scratch(const struct engine *en, const struct step_shape *sh, int l, bool gated, bool accumulate,
                       struct sel_scratch *need);
/* plan_ffn_block's. */
void plan_ffn_scratch(const struct engine *en, const struct step_shape *sh, int l, const struct gpu_weight *gate,
                      const struct gpu_weight *up, bool accumulate, struct sel_scratch *need);

#endif
