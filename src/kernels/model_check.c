/* model_check.c - the shapes the kernels serve, checked from a model's description and shard
 * before the GPU opens. */
#include "kernels_priv.h"

/* ---- shapes served, before the GPU opens */

/* Roles whose weight is a matrix product's (k = shape[1], torch order [rows, k]). */
static bool is_matrix_role(int layer, int role, const struct model_desc *d, const struct shard *s)
{
    if (layer < 0) return role == G_HEAD || (role == G_EMBED && d->tied && s->last);
    switch ((enum wrole)role) {
    case W_FFN_GATE: case W_FFN_UP: case W_FFN_DOWN: case W_FFN_GATE_UP:
    case W_Q: case W_K: case W_V: case W_O:
    case W_CONV_IN: case W_CONV_OUT:
    case W_DN_QKV: case W_DN_Z: case W_DN_B: case W_DN_A: case W_DN_OUT:
        return true;
    default:
        return false;
    }
}

static int model_shape_check(const struct model_desc *d, const struct shard *s, struct err *e)
{
    bool attn = false, dn = false;
    for (int l = s->a; l < s->b; l++) {
        attn |= d->kind[l] == LAYER_ATTN;
        dn |= d->kind[l] == LAYER_DELTANET;
    }
    struct k_attn_geom a = {.n_h = d->n_heads, .n_kv = d->n_kv_heads, .hd = d->head_dim, .rope_dims = d->rope_dims};
    int rc = attn ? k_check_heads(&a, e) : ST_OK;
    if (rc) return rc;
    struct k_dn_geom g = {.nk = d->dn_nk, .nv = d->dn_nv, .dk = d->dn_dk, .dv = d->dn_dv, .conv = d->dn_conv};
    if (dn && (rc = k_dn_shape_check(&g, e))) return rc;
    for (int i = 0; i < s->n; i++) {
        const struct shard_tensor *t = &s->t[i];
        if (t->n_dims != 2 || !is_matrix_role(t->layer, t->role, d, s)) continue;
        if (!k_is_weight_type(t->dtype))
            return err_set(e, ST_USAGE, "matmul %s: weight type %s is not served", t->name, dtype_name(t->dtype));
        if (!k_matmul_k_served(t->dtype, t->shape[1]))
            return err_set(e, ST_USAGE, "matmul %s: weight [%lld, %lld] of type %s: k must be a multiple of %lld",
                           t->name, (long long)t->shape[0], (long long)t->shape[1], dtype_name(t->dtype),
                           (long long)sel_slot_elems(t->dtype));
    }
    return ST_OK;
}

int k_model_check(const struct model_desc *d, const struct shard *s, struct err *e)
{
    struct err ke = {{0}};
    int rc = model_shape_check(d, s, &ke);
    if (rc) return err_set(e, rc, "%s: %s (the kernels cannot run this model)", d->source, ke.msg);
    return ST_OK;
}
