/* select_scratch.c - the device scratch the chosen kernels use (select.h "device scratch"): the
 * rules of select.c composed per helper call, so that the engine can size its scratch before it
 * builds a plan and the kernels take their ranges by the same rules as they record. */
#include "select.h"

void sel_scratch_max(struct sel_scratch *acc, const struct sel_scratch *b)
{
    acc->gemm_x = MAX(acc->gemm_x, b->gemm_x);
    acc->gemm_w = MAX(acc->gemm_w, b->gemm_w);
    acc->attn_part = MAX(acc->attn_part, b->attn_part);
    acc->gemm_part = MAX(acc->gemm_part, b->gemm_part);
}

uint64_t sel_gemm_wdeq_layout(const struct sel *s, int cols, int n, const struct sel_weight w[],
                              bool wide[], uint64_t at[])
{
    uint64_t bytes = 0;
    for (int i = 0; i < n; i++) {
        wide[i] = sel_gemm_wdeq_serves(s, cols, &w[i]);
        at[i] = bytes;
        if (wide[i]) bytes += (2 * (uint64_t)w[i].rows * (uint64_t)w[i].k + 255) / 256 * 256;
    }
    return bytes;
}

/* gemm_xprep.comp writes x' as f32 [cols][k] for the twin, as f16 hi/lo pairs or f16 values (the
 * same bytes) for cooperative matrices: 4 bytes an element; as plain f16 [cols][k] for gemm_cm2 in
 * serving precision (gemm_xprep_f16, read in the GIVEN_F16 mode): 2 where every product that reads
 * a prep reads that one; none runs where every product reads the plain x (sel_gemm no_prep). */
uint64_t sel_gemm_prep_bytes(const struct sel *s, bool norm, int n, const struct sel_gemm c[],
                             int64_t k, int cols)
{
    (void)s;
    (void)norm; /* in the choices: no_prep */
    bool raw = true, f16 = true;
    for (int i = 0; i < n; i++) {
        raw = raw && c[i].no_prep;
        f16 = f16 && (c[i].no_prep || (c[i].cm2 && c[i].cm2_x == SEL_CM2_X_GIVEN_F16));
    }
    return raw ? 0 : (f16 ? 2 : 4) * (uint64_t)cols * (uint64_t)k;
}

bool sel_gemm_multi(const struct sel *s, int n, const struct sel_weight w[], int cols)
{
    bool gemm = n > 1;
    for (int i = 0; i < n; i++)
        gemm = gemm && sel_gemm_serves(s, cols, w[i].dtype) && w[i].k == w[0].k &&
               !sel_gemm_cm2_refusal(s, &w[i], false, false, cols) ==
                   !sel_gemm_cm2_refusal(s, &w[0], false, false, cols);
    return gemm;
}

/* The gemm products of n weights of one x that share one prep (one weight; a SwiGLU pair; or
 * k_matmul_multi's products): their f16 copies, then the prep their choices ask for. */
static struct sel_scratch gemm_scratch(const struct sel *s, int n, const struct sel_weight w[],
                                       bool swiglu, bool norm, bool accumulate, int cols)
{
    struct sel_scratch need = {0};
    bool wide[SEL_PRODUCT_MAX];
    uint64_t at[SEL_PRODUCT_MAX];
    struct sel_gemm c[SEL_PRODUCT_MAX];
    struct err e = {0};
    need.gemm_w = sel_gemm_wdeq_layout(s, cols, n, w, wide, at);
    int n_products = swiglu ? 1 : n;
    for (int i = 0; i < n_products; i++) {
        struct sel_weight f = w[i];
        if (wide[i]) f.dtype = DT_F16; /* the product runs on the copy */
        if (sel_gemm(s, &f, swiglu, cols, accumulate, !norm, "scratch", &c[i], &e)) return need;
        if (c[i].cm2) need.gemm_part = MAX(need.gemm_part, sel_gemm_cm2_part_bytes(&c[i].cm2_tile, f.rows, f.k, cols));
    }
    need.gemm_part *= SEL_PRODUCT_MAX; /* one slice a product of the call (sel_scratch gemm_part) */
    need.gemm_x = sel_gemm_prep_bytes(s, norm, n_products, c, w[0].k, cols);
    return need;
}

/* matmul.c's routing: the matrix-vector kernels and matmul.comp take no scratch; the gemm serves
 * where sel_gemm_serves (the matrix-vector kernels step aside there); a multi call is one gemm
 * group where sel_gemm_multi, else its products one by one. */
struct sel_scratch sel_product_scratch(const struct sel *s, const struct sel_product *m)
{
    struct sel_scratch need = {0};
    if (m->n < 1 || m->n > SEL_PRODUCT_MAX || (m->swiglu && m->n != 2)) return need;
    if (m->swiglu || m->n == 1) {
        if (!sel_gemm_serves(s, m->cols, m->w[0].dtype)) return need;
        return gemm_scratch(s, m->n, m->w, m->swiglu, m->norm, m->accumulate, m->cols);
    }
    if (sel_gemm_multi(s, m->n, m->w, m->cols))
        return gemm_scratch(s, m->n, m->w, false, m->norm, false, m->cols);
    for (int i = 0; i < m->n; i++) {
        if (!sel_gemm_serves(s, m->cols, m->w[i].dtype)) continue;
        struct sel_scratch one = gemm_scratch(s, 1, &m->w[i], false, m->norm, false, m->cols);
        sel_scratch_max(&need, &one);
    }
    return need;
}

/* attention.c's routing: the wide plan's tiled prefill and attention.comp take none; attn_kv.comp
 * its splits' outputs. */
struct sel_scratch sel_attn_scratch(const struct sel *s, int n_h, int n_kv, int hd, int64_t keys,
                                    int cols, int n_runs, bool prefill)
{
    struct sel_scratch need = {0};
    bool fused = sel_attn_fuses_prep(s, cols, n_runs);
    if (!fused && prefill && s->plan == PLAN_WIDE) return need;
    struct sel_attn_kv kv;
    if (sel_attn_kv(s, n_h, n_kv, hd, keys, cols, prefill, fused, &kv)) need.attn_part = kv.part;
    return need;
}
