/* attention.c - host side of the attention kernels: the q/k prep with RoPE, decode over the KV
 * pool, and attention tiled over queries x keys (the wide plan's prefill). */
#include "kernels_priv.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

/* ---- attention */

/* The attention geometry any GPU serves (check_geom adds the device's subgroup size). */
int k_check_heads(const struct k_attn_geom *a, struct err *e)
{
    if (a->n_h < 1 || a->n_kv < 1 || a->n_h % a->n_kv)
        return err_set(e, ST_USAGE, "attention: %d q heads and %d kv heads, expected a multiple", a->n_h, a->n_kv);
    if (a->hd < 1 || a->hd > K_MAX_HEAD_DIM || a->hd % 4)
        return err_set(e, ST_USAGE, "attention: head dim %d, expected a multiple of 4 up to %d", a->hd, K_MAX_HEAD_DIM);
    if (a->rope_dims < 0 || a->rope_dims > a->hd || a->rope_dims % 2)
        return err_set(e, ST_USAGE, "attention: rope dims %d, expected even and <= head dim %d", a->rope_dims, a->hd);
    return ST_OK;
}

static int check_geom(const struct gpu *g, const struct k_attn_geom *a, int cols, struct err *e)
{
    uint32_t sg = g->subgroup_size ? g->subgroup_size : 32;
    int rc = k_check_heads(a, e);
    if (rc) return rc;
    if (a->hd % (int)sg)
        return err_set(e, ST_USAGE, "attention: head dim %d, expected a multiple of the subgroup size %u", a->hd, sg);
    if (cols < 1 || cols > (int)MAX_GROUPS || a->max_blocks < 1)
        return err_set(e, ST_USAGE, "attention: %d columns, %d blocks a slot", cols, a->max_blocks);
    return ST_OK;
}

struct push_attn_prep {
    uint64_t q, k, v, qn, kn, kpool, vpool, btab, cols;
    uint32_t n_h, n_kv, hd, rope_dims, max_blocks, flags, gdtype;
    float eps, r_hi, r_lo;
};
_Static_assert(sizeof(struct push_attn_prep) == 112, "push_attn_prep layout");

/* What attn.prep needs beyond the geometry, checked: flags (1 norm, 2 (1 + g) gains, 4
 * interleaved, 8 gated), the gains' type, r = theta^(-2/rope_dims) as hi + lo floats (the shaders
 * form inv_freq_i = r^i in float-float, rope.glsl) and the gains' bytes. */
struct prep_params {
    uint32_t flags, gdtype;
    float r_hi, r_lo;
    uint64_t qn, kn, bytes;
};

static int prep_params(const struct k_attn_geom *a, const struct gpu_weight *q_norm, const struct gpu_weight *k_norm,
                       struct prep_params *pp, struct err *e)
{
    if (!a->no_norm) {
        int rc;
        if ((rc = k_check_gain(q_norm, a->hd, "attn.prep q_norm", e)) || (rc = k_check_gain(k_norm, a->hd, "attn.prep k_norm", e)))
            return rc;
        if (q_norm->dtype != k_norm->dtype)
            return err_set(e, ST_USAGE, "attn.prep: q_norm %s and k_norm %s differ in type", dtype_name(q_norm->dtype),
                           dtype_name(k_norm->dtype));
    }
    double r = a->rope_dims ? pow((double)a->theta, -2.0 / a->rope_dims) : 1.0;
    pp->r_hi = (float)r;
    pp->r_lo = (float)(r - (double)pp->r_hi);
    pp->flags = (a->no_norm ? 0u : 1u) | (a->plus1 ? 2u : 0u) | (a->interleaved ? 4u : 0u) | (a->gated ? 8u : 0u);
    pp->gdtype = a->no_norm ? 0u : (uint32_t)q_norm->dtype;
    pp->qn = a->no_norm ? 0 : q_norm->addr;
    pp->kn = a->no_norm ? 0 : k_norm->addr;
    pp->bytes = a->no_norm ? 0 : q_norm->bytes + k_norm->bytes;
    return ST_OK;
}

int k_attn_prep(struct gpu *g, struct plan *p, const struct k_attn_geom *a, const struct gpu_weight *q_norm,
                const struct gpu_weight *k_norm, uint64_t q, uint64_t k, uint64_t v, uint64_t kpool,
                uint64_t vpool, uint64_t btab, uint64_t cols_meta, int cols, int layer, struct err *e)
{
    struct prep_params pp = {0};
    int rc = check_geom(g, a, cols, e);
    if (!rc) rc = prep_params(a, q_norm, k_norm, &pp, e);
    if (rc) return rc;
    const struct gpu_pipeline *pipe;
    if ((rc = gpu_pipeline(g, "attn_prep", NULL, 0, &pipe, e))) return rc;
    struct push_attn_prep pc = {
        q, k, v, pp.qn, pp.kn, kpool, vpool, btab, cols_meta,
        (uint32_t)a->n_h, (uint32_t)a->n_kv, (uint32_t)a->hd, (uint32_t)a->rope_dims, (uint32_t)a->max_blocks,
        pp.flags, pp.gdtype, a->eps, pp.r_hi, pp.r_lo,
    };
    /* groups of 256 / (hd / 4) heads (attn_prep.comp) */
    uint32_t hpw = 256u / ((uint32_t)a->hd / 4u);
    struct dispatch *d = k_add(p, pipe, &pc, sizeof pc, k_div_up((uint64_t)(a->n_h + 2 * a->n_kv), hpw), (uint32_t)cols,
                               "attn.prep", layer, "attn.prep", pp.bytes);
    dispatch_outputs(d, 3, offsetof(struct push_attn_prep, q), offsetof(struct push_attn_prep, kpool),
                     offsetof(struct push_attn_prep, vpool));
    return ST_OK;
}

struct push_attention {
    uint64_t q, kpool, vpool, btab, cols, dst;
    uint32_t n_h, n_kv, max_blocks;
    float scale;
    uint32_t gated, kper; /* kper: attn_kv.comp's keys a split (0 elsewhere) */
};
_Static_assert(sizeof(struct push_attention) == 72, "push_attention layout");

/* attention.comp's and attn_kv.comp's block: the above, then the fused prep's fields (zero
 * without it), then attn_kv.comp's splits' partial outputs */
struct push_attn_decode {
    struct push_attention a;
    uint64_t k, v, qn, kn;
    uint32_t pflags; /* prep flags | gains' dtype << 4 | rope_dims << 8 */
    float eps, r_hi, r_lo;
    uint64_t part;
};
_Static_assert(sizeof(struct push_attn_decode) == 128, "push_attn_decode layout");

struct push_attn_merge {
    uint64_t part, q, dst;
    uint32_t n_h, nspl, gated, cols;
};
_Static_assert(sizeof(struct push_attn_merge) == 40, "push_attn_merge layout");

/* KV-pool bytes one key costs an attention dispatch: its k and v rows (f32) of every kv head. */
static uint64_t attn_key_bytes(const struct k_attn_geom *a)
{
    return 2ull * (uint64_t)a->n_kv * (uint64_t)a->hd * 4;
}

/* ---- attention tiled over queries × keys (the wide plan's prefill) */

struct push_attn_prefill {
    struct push_attention a;
    uint32_t n_cols, pad;
};
_Static_assert(sizeof(struct push_attn_prefill) == 80, "push_attn_prefill layout");

static int attention_tiled(struct gpu *g, struct plan *p, const struct k_attn_geom *a,
                           const struct push_attention *base, int cols, int layer, struct err *e)
{
    uint32_t hd = (uint32_t)a->hd, bq = 0, nt = 0, kv2 = 0;
    uint64_t need = 0;
    struct sel s = k_sel_of(g, p);
    if (!sel_attn_prefill_tile(&s, hd, cols, &bq, &nt, &kv2, &need))
        return err_set(e, ST_USAGE,
                       "attn.prefill: head dim %d: no tile of 8..64 columns fits %u bytes of shared memory and %u "
                       "threads (8 columns need %llu bytes)",
                       a->hd, g->shared_mem, nt, (unsigned long long)need);
    uint32_t spec[4] = {hd, bq, nt, kv2};
    const struct gpu_pipeline *pipe;
    int rc = gpu_pipeline(g, "attn_prefill", spec, 4, &pipe, e);
    if (rc) return rc;
    struct push_attn_prefill pc = {*base, (uint32_t)cols, 0};
    struct dispatch *d = k_add(p, pipe, &pc, sizeof pc, k_div_up((uint64_t)cols, bq), (uint32_t)a->n_h,
                               a->gated ? "attn.gated.prefill" : "attn.prefill", layer, "attn", 0);
    d->kv_key_bytes = attn_key_bytes(a);
    d->attn_pair_flops = k_attn_pair_flops(a);
    dispatch_outputs(d, 1, offsetof(struct push_attention, dst));
    return ST_OK;
}

/* The KV bytes and outputs of an attention.comp / attn_kv.comp dispatch: its output at push offset
 * `out`, and with the prep fused the two pools it writes k and v into. */
static void attn_decode_outputs(struct dispatch *d, const struct k_attn_geom *a, bool fused, size_t out)
{
    d->kv_key_bytes = attn_key_bytes(a);
    d->attn_pair_flops = k_attn_pair_flops(a);
    if (fused)
        dispatch_outputs(d, 3, out, offsetof(struct push_attn_decode, a.kpool), offsetof(struct push_attn_decode, a.vpool));
    else
        dispatch_outputs(d, 1, out);
}

/* attention.comp, a workgroup per (q head, column) whose subgroups walk every NSG-th key one at a
 * time (fused: with the prep, PREP = 1). */
static int attention_by_q_head(struct gpu *g, struct plan *p, const struct k_attn_geom *a,
                               const struct push_attn_decode *pc, int cols, const char *kind, bool fused,
                               uint64_t bytes, int layer, struct err *e)
{
    struct sel s = k_sel_of(g, p);
    uint32_t sg = g->subgroup_size ? g->subgroup_size : 32, nsg = sel_attn_q_subgroups(&s, (uint32_t)a->hd, fused);
    uint32_t spec[5] = {sg, (uint32_t)a->hd, nsg, sg * nsg, fused};
    const struct gpu_pipeline *pipe;
    int rc = gpu_pipeline(g, "attention", spec, 5, &pipe, e);
    if (rc) return rc;
    struct dispatch *d = k_add(p, pipe, pc, sizeof *pc, (uint32_t)a->n_h, (uint32_t)cols, kind, layer, "attn", bytes);
    attn_decode_outputs(d, a, fused, offsetof(struct push_attn_decode, a.dst));
    return ST_OK;
}

/* Attention outside the wide plan's prefill: by kv head where sel_attn_by_kv_head says (attn_kv.comp,
 * a workgroup per (kv head, column, key split), its splits merged by attn_merge.comp), else
 * attention.comp (above), which measured faster at short contexts and narrow steps, or where the kv
 * head's group would not fit the shared memory. */
static int attention_decode(struct gpu *g, struct plan *p, const struct k_attn_geom *a, struct push_attn_decode *pc,
                            int cols, bool prefill, bool fused, uint64_t bytes, int layer, struct err *e)
{
    const char *kind = fused ? (a->gated ? "attn.gated.decode_prep" : "attn.decode_prep")
                             : a->gated ? (prefill ? "attn.gated.prefill" : "attn.gated.decode")
                                        : (prefill ? "attn.prefill" : "attn.decode");
    uint32_t keys = (uint32_t)a->max_blocks * K_KV_BLOCK;
    struct sel s = k_sel_of(g, p);
    struct sel_attn_kv kv;
    if (!sel_attn_kv(&s, a->n_h, a->n_kv, a->hd, keys, cols, prefill, fused, &kv))
        return attention_by_q_head(g, p, a, pc, cols, kind, fused, bytes, layer, e);
    uint32_t sg = g->subgroup_size ? g->subgroup_size : 32, hd = (uint32_t)a->hd, gq = (uint32_t)(a->n_h / a->n_kv);
    uint32_t n_kv = (uint32_t)a->n_kv, nt = kv.nt, nspl = kv.nspl;
    if ((uint64_t)n_kv * nspl > MAX_GROUPS)
        return err_set(e, ST_USAGE, "attention: %u kv heads × %u key splits pass %u workgroups", n_kv, nspl,
                       (unsigned)MAX_GROUPS);
    if (nspl > 1) {
        struct k_scratch *sc = p->scratch;
        int rc = k_scratch_take(sc ? &sc->attn_part : NULL, sc ? sc->attn_part.size : 0, kv.part,
                                "key splits' outputs (attn_part)", "attn", &pc->part, e);
        if (rc) return rc;
        pc->a.kper = kv.kper;
    }
    uint32_t spec[6] = {sg, hd, gq, nt, fused, nspl > 1};
    const struct gpu_pipeline *pipe;
    int rc = gpu_pipeline(g, "attn_kv", spec, 6, &pipe, e);
    if (rc) return rc;
    struct dispatch *d = k_add(p, pipe, pc, sizeof *pc, n_kv * nspl, (uint32_t)cols, kind, layer, "attn", bytes);
    attn_decode_outputs(d, a, fused,
                        nspl > 1 ? offsetof(struct push_attn_decode, part) : offsetof(struct push_attn_decode, a.dst));
    if (nspl == 1) return ST_OK;
    uint32_t mspec[1] = {hd};
    if ((rc = gpu_pipeline(g, "attn_merge", mspec, 1, &pipe, e))) return rc;
    struct push_attn_merge pm = {pc->part, pc->a.q, pc->a.dst, (uint32_t)a->n_h, nspl, a->gated, (uint32_t)cols};
    d = k_add(p, pipe, &pm, sizeof pm, (uint32_t)a->n_h, (uint32_t)cols, a->gated ? "attn.gated.merge" : "attn.merge",
              layer, "attn", 0);
    dispatch_outputs(d, 1, offsetof(struct push_attn_merge, dst));
    return ST_OK;
}

static struct push_attention attention_push(const struct k_attn_geom *a, uint64_t q, uint64_t kpool, uint64_t vpool,
                                            uint64_t btab, uint64_t cols_meta, uint64_t out)
{
    return (struct push_attention){q, kpool, vpool, btab, cols_meta, out, (uint32_t)a->n_h, (uint32_t)a->n_kv,
                                   (uint32_t)a->max_blocks, a->scale, a->gated, 0};
}

int k_attention(struct gpu *g, struct plan *p, const struct k_attn_geom *a, uint64_t q, uint64_t kpool,
                uint64_t vpool, uint64_t btab, uint64_t cols_meta, uint64_t out, int cols, bool prefill,
                int layer, struct err *e)
{
    int rc = check_geom(g, a, cols, e);
    if (rc) return rc;
    struct push_attention pc = attention_push(a, q, kpool, vpool, btab, cols_meta, out);
    if (prefill && p->kind == PLAN_WIDE) return attention_tiled(g, p, a, &pc, cols, layer, e);
    struct push_attn_decode pd = {.a = pc};
    return attention_decode(g, p, a, &pd, cols, prefill, false, 0, layer, e);
}

struct sel_scratch k_attn_scratch(const struct gpu *g, enum plan_kind kind, const struct k_attn_geom *a, int cols,
                                  int n_runs, bool prefill)
{
    struct sel s = k_sel(g, kind);
    return sel_attn_scratch(&s, a->n_h, a->n_kv, a->hd, (int64_t)a->max_blocks * K_KV_BLOCK, cols, n_runs, prefill);
}

int k_attn_step(struct gpu *g, struct plan *p, const struct k_attn_geom *a, const struct gpu_weight *q_norm,
                const struct gpu_weight *k_norm, uint64_t q, uint64_t k, uint64_t v, uint64_t kpool, uint64_t vpool,
                uint64_t btab, uint64_t cols_meta, uint64_t out, int cols, int n_runs, bool prefill, int layer,
                struct err *e)
{
    struct sel s = k_sel_of(g, p);
    if (!sel_attn_fuses_prep(&s, cols, n_runs)) {
        int rc = k_attn_prep(g, p, a, q_norm, k_norm, q, k, v, kpool, vpool, btab, cols_meta, cols, layer, e);
        if (rc) return rc;
        return k_attention(g, p, a, q, kpool, vpool, btab, cols_meta, out, cols, prefill, layer, e);
    }
    struct prep_params pp = {0};
    int rc = check_geom(g, a, cols, e);
    if (!rc) rc = prep_params(a, q_norm, k_norm, &pp, e);
    if (rc) return rc;
    struct push_attn_decode pd = {
        .a = attention_push(a, q, kpool, vpool, btab, cols_meta, out),
        .k = k, .v = v, .qn = pp.qn, .kn = pp.kn, .pflags = pp.flags | pp.gdtype << 4 | (uint32_t)a->rope_dims << 8,
        .eps = a->eps, .r_hi = pp.r_hi, .r_lo = pp.r_lo,
    };
    return attention_decode(g, p, a, &pd, cols, prefill, true, pp.bytes, layer, e);
}
