/* test_model.c - model description and shard binding on every fixture, partial shards, errors
 * (bad ranges, unknown model_type, missing / misshapen / mistyped tensors in files written here),
 * and the built-in models' shapes and sizes. argv[1] = fixtures folder. No GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "testutil.h"

static const char *fixtures;

static bool has(const char *msg, const char *part)
{
    return strstr(msg, part) != NULL;
}

static int open_fixture(struct model_source *src, const char *rel)
{
    char path[1024];
    struct err e = {{0}};
    snprintf(path, sizeof path, "%s/%s", fixtures, rel);
    int st = source_open(src, path, &e);
    T_CHECK(st == ST_OK, "source_open %s: %s", path, e.msg);
    return st;
}

/* ------------------------------------------------------------------ shard invariants */

static int count_expected(const struct model_desc *d, int a, int b)
{
    int n = 0, nd;
    int64_t sh[4];
    for (int l = a; l < b; l++)
        for (int r = 0; r < W_COUNT; r++)
            n += model_layer_shape(d, l, (enum wrole)r, &nd, sh);
    return n;
}

static const struct shard_tensor *find_t(const struct shard *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->t[i].name, name)) return &s->t[i];
    return NULL;
}

/* Every index points at the tensor it names, every tensor is bound to a file view of its shape,
 * bytes is the sum of the views' bytes, and nothing outside a..b is there. */
static void check_shard(const char *what, const struct model_desc *d, const struct shard *s, int a,
                        int b)
{
    int n_globals = (a == 0 || (b == d->n_layers && d->tied)) + (b == d->n_layers) * (1 + !d->tied);
    T_CHECK(s->n == count_expected(d, a, b) + n_globals, "%s: %d tensors, expected %d + %d", what,
            s->n, count_expected(d, a, b), n_globals);
    T_CHECK(s->a == a && s->b == b && s->first == (a == 0) && s->last == (b == d->n_layers),
            "%s: range", what);
    uint64_t bytes = 0;
    int bad = 0;
    for (int i = 0; i < s->n; i++) {
        const struct shard_tensor *t = &s->t[i];
        if (!t->src) {
            bad++;
            continue;
        }
        bytes += t->src->n_bytes;
        int64_t numel = 1;
        for (int k = 0; k < t->n_dims; k++)
            numel *= t->shape[k];
        bad += tensor_numel(t->src) != numel || t->dtype != t->src->dtype;
        if (t->layer >= 0) {
            bad += t->layer < a || t->layer >= b || s->layer_index[t->layer][t->role] != i;
            char want[64];
            snprintf(want, sizeof want, "blk.%d.%s", t->layer, wrole_name((enum wrole)t->role));
            bad += strcmp(want, t->name) != 0;
        } else {
            bad += strcmp(grole_name((enum grole)t->role), t->name) != 0;
        }
        bad += strstr(t->src->name, "visual") != NULL || strstr(t->src->name, "mtp") != NULL;
    }
    T_CHECK(bad == 0, "%s: %d tensors unbound, misnamed, misindexed or of the wrong size", what,
            bad);
    T_CHECK(bytes == s->bytes && bytes > 0, "%s: bytes %llu, tensors sum to %llu", what,
            (unsigned long long)s->bytes, (unsigned long long)bytes);
    for (int l = 0; l < MODEL_MAX_LAYERS; l++)
        for (int r = 0; r < W_COUNT; r++)
            if (l < a || l >= b) bad += s->layer_index[l][r] != -1;
    T_CHECK(bad == 0, "%s: layers outside %d:%d indexed", what, a, b);
    T_CHECK((s->global_index[G_EMBED] >= 0) == (a == 0), "%s: embedding index %d", what,
            s->global_index[G_EMBED]);
    T_CHECK((s->global_index[G_FINAL_NORM] >= 0) == s->last, "%s: final norm index", what);
    T_CHECK((s->global_index[G_HEAD] >= 0) == s->last, "%s: head index", what);
    if (s->last) {
        const struct shard_tensor *h = &s->t[s->global_index[G_HEAD]];
        T_CHECK(h->role == (d->tied ? G_EMBED : G_HEAD), "%s: head is %s", what, h->name);
        if (a == 0 && d->tied)
            T_CHECK(s->global_index[G_HEAD] == s->global_index[G_EMBED], "%s: tied head index",
                    what);
    }
}

static void bind_and_check(const char *what, const struct model_source *src,
                           const struct model_desc *d, int a, int b, struct shard *s)
{
    struct err e = {{0}};
    char w[256];
    snprintf(w, sizeof w, "%s %d:%d", what, a, b);
    int st = shard_bind(src, d, a, b, s, &e);
    T_CHECK(st == ST_OK, "%s: %s", w, e.msg);
    if (st == ST_OK) check_shard(w, d, s, a, b);
}

/* ------------------------------------------------------------------ LFM2 */

static void check_lfm2_desc(const char *what, const struct model_desc *d, enum dtype dt)
{
    static const enum layer_kind kinds[6] = {LAYER_CONV, LAYER_CONV, LAYER_ATTN,
                                             LAYER_CONV, LAYER_ATTN, LAYER_CONV};
    T_CHECK(d->family == FAMILY_LFM2 && d->n_layers == 6 && d->hidden == 128 && d->vocab == 1000 &&
                d->ffn == 256,
            "%s: family %d layers %d H %d V %d F %d", what, d->family, d->n_layers, d->hidden,
            d->vocab, d->ffn);
    T_CHECK(d->n_heads == 2 && d->n_kv_heads == 1 && d->head_dim == 64 && d->rope_dims == 64,
            "%s: heads %d/%d hd %d rope %d", what, d->n_heads, d->n_kv_heads, d->head_dim,
            d->rope_dims);
    T_CHECK(fabsf(d->rope_theta - 1e6f) < 1 && fabsf(d->eps - 1e-5f) < 1e-9f && d->rope_neox &&
                !d->norm_plus1,
            "%s: theta %g eps %g", what, d->rope_theta, d->eps);
    T_CHECK(d->tied && d->conv_cache == 3 && d->dtype == dt, "%s: tied %d L %d dtype %s", what,
            d->tied, d->conv_cache, dtype_name(d->dtype));
    T_CHECK(!memcmp(d->kind, kinds, sizeof kinds), "%s: layer kinds", what);
}

/* Compares a GGUF shard with the safetensors one: same tensors and shapes; same bytes where the
 * stored types agree (A_log / ssm_a and the DeltaNet norm are F32 in both). Returns that count. */
static int compare_shards(const char *what, const struct shard *g, const struct shard *st)
{
    int same = 0, bad = 0;
    for (int i = 0; i < g->n; i++) {
        const struct shard_tensor *t = &g->t[i], *u = find_t(st, t->name);
        if (!u) {
            bad++;
            continue;
        }
        bad += memcmp(t->shape, u->shape, sizeof t->shape) != 0;
        bad += t->src->n_bytes != dtype_bytes(t->dtype, (uint64_t)tensor_numel(t->src));
        if (t->dtype == u->dtype) {
            same++;
            bad += t->src->n_bytes != u->src->n_bytes;
        }
    }
    T_CHECK(g->n == st->n && bad == 0, "%s: %d tensors vs %d, %d differ", what, g->n, st->n, bad);
    return same;
}

static void test_lfm2(void)
{
    static const char *ggufs[3] = {"lfm2-tiny/model-f16.gguf", "lfm2-tiny/model-q8_0.gguf",
                                   "lfm2-tiny/model-q4_0.gguf"};
    static const enum dtype gtypes[3] = {DT_F16, DT_Q8_0, DT_Q4_0};
    struct model_source st_src, gg_src;
    struct model_desc d, dg;
    struct shard full, lo, hi, gfull;
    struct err e = {{0}};
    if (open_fixture(&st_src, "lfm2-tiny")) return;
    int rc = model_describe(&st_src, &d, &e);
    T_CHECK(rc == ST_OK, "lfm2 describe: %s", e.msg);
    check_lfm2_desc("lfm2 safetensors", &d, DT_BF16);

    bind_and_check("lfm2", &st_src, &d, 0, 6, &full);
    const struct shard_tensor *q2 = find_t(&full, "blk.2.attn_q"),
                              *c0 = find_t(&full, "blk.0.shortconv.conv");
    T_CHECK(q2 && q2->src && !strcmp(q2->src->name, "model.layers.2.self_attn.q_proj.weight"),
            "blk.2.attn_q");
    T_CHECK(!find_t(&full, "blk.2.shortconv.in_proj") && !find_t(&full, "blk.0.attn_q"),
            "kinds bind their tensors");
    T_CHECK(c0 && c0->n_dims == 2 && c0->shape[0] == 128 && c0->shape[1] == 3 &&
                c0->src->n_dims == 3,
            "conv kernel recorded as [H,3] from [H,1,3]");
    T_CHECK(full.global_index[G_HEAD] == full.global_index[G_EMBED], "tied head is the embedding");

    bind_and_check("lfm2", &st_src, &d, 0, 3, &lo);
    bind_and_check("lfm2", &st_src, &d, 3, 6, &hi);
    if (hi.n && lo.n && full.n) {
        const struct shard_tensor *h = &hi.t[hi.global_index[G_HEAD]];
        T_CHECK(!strcmp(h->name, "token_embd") &&
                    !strcmp(h->src->name, "model.embed_tokens.weight"),
                "3:6 head is %s (%s)", h->name, h->src->name);
        uint64_t emb = full.t[full.global_index[G_EMBED]].src->n_bytes;
        T_CHECK(lo.bytes + hi.bytes == full.bytes + emb, "0:3 + 3:6 bytes = full + embedding once");
    }

    /* GGUFs: same description but for the stored type, same tensor set; where the types agree
     * the same bytes. */
    for (int g = 0; g < 3; g++) {
        if (open_fixture(&gg_src, ggufs[g])) continue;
        rc = model_describe(&gg_src, &dg, &e);
        T_CHECK(rc == ST_OK, "%s describe: %s", ggufs[g], e.msg);
        check_lfm2_desc(ggufs[g], &dg, gtypes[g]);
        bind_and_check(ggufs[g], &gg_src, &dg, 0, 6, &gfull);
        if (full.n) compare_shards(ggufs[g], &gfull, &full);
        struct shard part;
        bind_and_check(ggufs[g], &gg_src, &dg, 3, 6, &part);
        shard_free(&part);
        shard_free(&gfull);
        source_close(&gg_src);
    }

    /* bad ranges */
    static const int bad[][2] = {{5, 2}, {0, 99}, {3, 3}, {-1, 2}, {0, 7}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct shard s;
        e.msg[0] = 0;
        rc = shard_bind(&st_src, &d, bad[i][0], bad[i][1], &s, &e);
        T_CHECK(rc == ST_USAGE && has(e.msg, "--layers") && has(e.msg, "model has 6 layers"),
                "--layers %d:%d -> %d '%s'", bad[i][0], bad[i][1], rc, e.msg);
    }
    shard_free(&full);
    shard_free(&lo);
    shard_free(&hi);
    source_close(&st_src);
}

/* ------------------------------------------------------------------ Qwen3.5 */

static void check_qwen_desc(const char *what, const struct model_desc *d, bool gguf)
{
    T_CHECK(d->family == FAMILY_QWEN35 && d->n_layers == 4 && d->hidden == 128 &&
                d->vocab == 1000 && d->ffn == 256,
            "%s: family %d layers %d H %d V %d F %d", what, d->family, d->n_layers, d->hidden,
            d->vocab, d->ffn);
    T_CHECK(d->n_heads == 2 && d->n_kv_heads == 1 && d->head_dim == 256 && d->rope_dims == 64 &&
                d->rope_neox,
            "%s: heads %d/%d hd %d rope %d", what, d->n_heads, d->n_kv_heads, d->head_dim,
            d->rope_dims);
    T_CHECK(fabsf(d->rope_theta - 1e7f) < 1 && fabsf(d->eps - 1e-6f) < 1e-10f,
            "%s: theta %g eps %g", what, d->rope_theta, d->eps);
    T_CHECK(d->dn_nk == 2 && d->dn_nv == 4 && d->dn_dk == 128 && d->dn_dv == 128 && d->dn_conv == 4,
            "%s: dn %d %d %d %d %d", what, d->dn_nk, d->dn_nv, d->dn_dk, d->dn_dv, d->dn_conv);
    T_CHECK(d->tied && d->norm_plus1 == !gguf && d->dn_gguf_layout == gguf,
            "%s: tied %d plus1 %d gguf layout %d", what, d->tied, d->norm_plus1, d->dn_gguf_layout);
    T_CHECK(d->kind[0] == LAYER_DELTANET && d->kind[1] == LAYER_DELTANET &&
                d->kind[2] == LAYER_DELTANET && d->kind[3] == LAYER_ATTN,
            "%s: layer kinds", what);
}

static void test_qwen35(void)
{
    static const char *paths[4] = {"qwen35-tiny", "qwen35-tiny/model-f16.gguf",
                                   "qwen35-tiny/model-q8_0.gguf", "qwen35-tiny/model-q4_0.gguf"};
    struct model_source st_src;
    struct shard st_full = {0};
    if (open_fixture(&st_src, paths[0])) return;
    for (int p = 0; p < 4; p++) {
        struct model_source gg_src, *src = p ? &gg_src : &st_src;
        struct model_desc d;
        struct shard full, mid;
        struct err e = {{0}};
        if (p && open_fixture(&gg_src, paths[p])) continue;
        int rc = model_describe(src, &d, &e);
        T_CHECK(rc == ST_OK, "%s describe: %s", paths[p], e.msg);
        check_qwen_desc(paths[p], &d, p > 0);
        bind_and_check(paths[p], src, &d, 0, 4, &full);
        const struct shard_tensor *q = find_t(&full, "blk.3.attn_q"),
                                  *cv = find_t(&full, "blk.0.ssm_conv1d"),
                                  *al = find_t(&full, "blk.1.ssm_a"),
                                  *fn = find_t(&full, "blk.0.ffn_norm");
        T_CHECK(q && q->shape[0] == 1024 && cv && cv->shape[0] == 1024 && cv->shape[1] == 4,
                "%s: q/conv shapes", paths[p]);
        T_CHECK(al && al->dtype == DT_F32 && fn, "%s: ssm_a F32, ffn_norm bound", paths[p]);
        if (p == 0 && fn)
            T_CHECK(!strcmp(fn->src->name,
                            "model.language_model.layers.0.post_attention_layernorm.weight"),
                    "ffn_norm is post_attention_layernorm");
        if (p == 1 && fn)
            T_CHECK(!strcmp(fn->src->name, "blk.0.post_attention_norm.weight"), "gguf ffn_norm");
        if (p == 0) st_full = full;
        if (p > 0 && st_full.n) {
            int same = compare_shards(paths[p], &full, &st_full);
            T_CHECK(same >= 6, "%s: %d tensors stored alike", paths[p], same);
        }

        bind_and_check(paths[p], src, &d, 1, 3, &mid);
        bool only_12 = mid.n > 0;
        for (int i = 0; i < mid.n; i++)
            only_12 &= mid.t[i].layer == 1 || mid.t[i].layer == 2;
        T_CHECK(only_12 && mid.n == 28, "%s 1:3: %d tensors, layers 1 and 2 only", paths[p], mid.n);
        shard_free(&mid);
        if (p) {
            shard_free(&full);
            source_close(&gg_src);
        }
    }
    shard_free(&st_full);
    source_close(&st_src);
}

/* ------------------------------------------------------------------ GLM-OCR */

static void test_glm(void)
{
    struct model_source src;
    struct model_desc d;
    struct shard full, tail;
    struct err e = {{0}};
    if (open_fixture(&src, "glm-ocr-tiny")) return;
    int rc = model_describe(&src, &d, &e);
    T_CHECK(rc == ST_OK, "glm describe: %s", e.msg);
    T_CHECK(d.family == FAMILY_GLM_OCR && d.n_layers == 3 && d.hidden == 128 && d.vocab == 1000 &&
                d.ffn == 256 && d.n_heads == 2 && d.n_kv_heads == 1 && d.head_dim == 64 &&
                d.rope_dims == 64,
            "glm dims: layers %d H %d V %d F %d heads %d/%d hd %d", d.n_layers, d.hidden, d.vocab,
            d.ffn, d.n_heads, d.n_kv_heads, d.head_dim);
    T_CHECK(!d.tied && !d.rope_neox && !d.norm_plus1 && fabsf(d.rope_theta - 1e4f) < 1e-3f &&
                fabsf(d.eps - 1e-5f) < 1e-9f && d.dtype == DT_BF16,
            "glm flags: tied %d neox %d theta %g", d.tied, d.rope_neox, d.rope_theta);
    T_CHECK(d.kind[0] == LAYER_ATTN && d.kind[1] == LAYER_ATTN && d.kind[2] == LAYER_ATTN,
            "glm kinds");
    bind_and_check("glm", &src, &d, 0, 3, &full);
    const struct shard_tensor *gu = find_t(&full, "blk.1.ffn_gate_up"),
                              *pa = find_t(&full, "blk.1.post_attn_norm"),
                              *pf = find_t(&full, "blk.1.post_ffn_norm"),
                              *fn = find_t(&full, "blk.1.ffn_norm");
    T_CHECK(gu && gu->shape[0] == 512 && pa && pf && fn, "glm roles");
    if (pa && pf && fn) {
        T_CHECK(
            !strcmp(pa->src->name,
                    "model.language_model.layers.1.post_self_attn_layernorm.weight") &&
                !strcmp(pf->src->name, "model.language_model.layers.1.post_mlp_layernorm.weight") &&
                !strcmp(fn->src->name,
                        "model.language_model.layers.1.post_attention_layernorm.weight"),
            "glm norm mapping");
    }
    if (full.n) {
        const struct shard_tensor *h = &full.t[full.global_index[G_HEAD]];
        T_CHECK(!strcmp(h->src->name, "lm_head.weight") &&
                    full.global_index[G_HEAD] != full.global_index[G_EMBED],
                "glm head is lm_head");
    }
    bind_and_check("glm", &src, &d, 2, 3, &tail);
    T_CHECK(tail.n > 0 && !find_t(&tail, "token_embd"), "untied last stage has no embedding");
    shard_free(&full);
    shard_free(&tail);
    source_close(&src);
}

/* ------------------------------------------------------------------ files written here */

struct wt {
    char name[96];
    const char *dtype; /* "F32" or "I8" */
    int n_dims;
    int64_t shape[3];
};

/* Writes a safetensors file of tensors filled with fresh random values. */
static int write_safetensors(const char *path, const struct wt *ts, int n, struct t_rng *rng)
{
    size_t hcap = 65536, hl = 0, off = 0;
    char *h = malloc(hcap);
    hl += (size_t)snprintf(h + hl, hcap - hl, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (int i = 0; i < n; i++) {
        size_t numel = 1, es = strcmp(ts[i].dtype, "F32") ? 1 : 4;
        for (int k = 0; k < ts[i].n_dims; k++)
            numel *= (size_t)ts[i].shape[k];
        hl += (size_t)snprintf(h + hl, hcap - hl, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[",
                               ts[i].name, ts[i].dtype);
        for (int k = 0; k < ts[i].n_dims; k++)
            hl += (size_t)snprintf(h + hl, hcap - hl, "%s%lld", k ? "," : "",
                                   (long long)ts[i].shape[k]);
        hl += (size_t)snprintf(h + hl, hcap - hl, "],\"data_offsets\":[%zu,%zu]}", off,
                               off + numel * es);
        off += numel * es;
    }
    hl += (size_t)snprintf(h + hl, hcap - hl, "}");
    while (hl % 8)
        h[hl++] = ' ';
    size_t total = 8 + hl + off;
    uint8_t *buf = malloc(total);
    uint64_t n64 = hl;
    memcpy(buf, &n64, 8);
    memcpy(buf + 8, h, hl);
    for (size_t i = 0; i < off / 4; i++) {
        float f = t_rng_normal(rng) + 0.01f;
        memcpy(buf + 8 + hl + 4 * i, &f, 4);
    }
    int rc = t_write_file(path, buf, total);
    free(buf);
    free(h);
    return rc;
}

static void add_t(struct wt *ts, int *n, const char *prefix, int layer, const char *suffix,
                  int n_dims, int64_t a, int64_t b, int64_t c)
{
    struct wt *t = &ts[(*n)++];
    if (layer >= 0)
        snprintf(t->name, sizeof t->name, "%slayers.%d.%s", prefix, layer, suffix);
    else
        snprintf(t->name, sizeof t->name, "%s%s", prefix, suffix);
    t->dtype = "F32";
    t->n_dims = n_dims;
    t->shape[0] = a;
    t->shape[1] = b;
    t->shape[2] = c;
}

/* A tiny LFM2 checkpoint: H 32, layers conv + attention (2 heads / 1 kv, head 16), ffn 64, V 64. */
static int tiny_lfm2(struct wt *ts, const char *prefix)
{
    int n = 0;
    add_t(ts, &n, prefix, -1, "embed_tokens.weight", 2, 64, 32, 0);
    add_t(ts, &n, prefix, -1, "embedding_norm.weight", 1, 32, 0, 0);
    for (int l = 0; l < 2; l++) {
        add_t(ts, &n, prefix, l, "operator_norm.weight", 1, 32, 0, 0);
        add_t(ts, &n, prefix, l, "ffn_norm.weight", 1, 32, 0, 0);
        add_t(ts, &n, prefix, l, "feed_forward.w1.weight", 2, 64, 32, 0);
        add_t(ts, &n, prefix, l, "feed_forward.w3.weight", 2, 64, 32, 0);
        add_t(ts, &n, prefix, l, "feed_forward.w2.weight", 2, 32, 64, 0);
    }
    add_t(ts, &n, prefix, 0, "conv.in_proj.weight", 2, 96, 32, 0);
    add_t(ts, &n, prefix, 0, "conv.conv.weight", 3, 32, 1, 3);
    add_t(ts, &n, prefix, 0, "conv.out_proj.weight", 2, 32, 32, 0);
    add_t(ts, &n, prefix, 1, "self_attn.q_proj.weight", 2, 32, 32, 0);
    add_t(ts, &n, prefix, 1, "self_attn.k_proj.weight", 2, 16, 32, 0);
    add_t(ts, &n, prefix, 1, "self_attn.v_proj.weight", 2, 16, 32, 0);
    add_t(ts, &n, prefix, 1, "self_attn.out_proj.weight", 2, 32, 32, 0);
    add_t(ts, &n, prefix, 1, "self_attn.q_layernorm.weight", 1, 16, 0, 0);
    add_t(ts, &n, prefix, 1, "self_attn.k_layernorm.weight", 1, 16, 0, 0);
    return n;
}

static const char TINY_CONFIG[] = "{\"model_type\": \"%s\", \"hidden_size\": 32, "
                                  "\"num_hidden_layers\": 2, \"num_attention_heads\": 2,"
                                  " \"num_key_value_heads\": 1, \"vocab_size\": 64, "
                                  "\"intermediate_size\": 999, \"norm_eps\": 1e-5,"
                                  " \"rope_theta\": 1000000.0, \"conv_L_cache\": 3, "
                                  "\"layer_types\": null, \"full_attn_idxs\": [1],"
                                  " \"tie_embedding\": true}";

/* Writes config + weights into dir, opens, describes and binds 0:2; returns the bind status. */
static int try_tiny(const char *dir, const char *type, const struct wt *ts, int n, struct err *e,
                    int *describe_rc)
{
    char path[1024], cfg[1024];
    struct t_rng rng;
    t_rng_seed(&rng, 77 + (uint64_t)n);
    snprintf(path, sizeof path, "%s/config.json", dir);
    snprintf(cfg, sizeof cfg, TINY_CONFIG, type);
    T_CHECK(t_write_file(path, cfg, strlen(cfg)) == 0, "write %s", path);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    T_CHECK(write_safetensors(path, ts, n, &rng) == 0, "write %s", path);
    struct model_source src;
    struct model_desc d;
    struct shard s = {0};
    int rc = source_open(&src, dir, e);
    T_CHECK(rc == ST_OK, "open %s: %s", dir, e->msg);
    if (rc) return -1;
    *describe_rc = model_describe(&src, &d, e);
    if (*describe_rc == ST_OK) {
        T_CHECK(
            d.ffn == 64 && d.kind[0] == LAYER_CONV && d.kind[1] == LAYER_ATTN && d.head_dim == 16,
            "tiny describe: ffn %d from w1 (config says 999), kinds from full_attn_idxs", d.ffn);
        rc = shard_bind(&src, &d, 0, 2, &s, e);
        if (rc == ST_OK) check_shard("tiny", &d, &s, 0, 2);
        shard_free(&s);
    }
    source_close(&src);
    return *describe_rc ? *describe_rc : rc;
}

/* Tensors no shard binds are counted by kind for --load-only: a vision tower, an MTP layer (a layer
 * past the last, or mtp.*), anything else. */
static void test_ignored(void)
{
    const char *dir = t_tmpdir();
    T_CHECK(dir != NULL, "tmpdir");
    if (!dir) return;
    struct wt ts[40];
    int n = tiny_lfm2(ts, "model.");
    add_t(ts, &n, "model.", 2, "eh_proj.weight", 2, 32, 64, 0);    /* layer 2 of 2: the MTP layer */
    add_t(ts, &n, "model.", 2, "input_layernorm.weight", 1, 32, 0, 0);
    add_t(ts, &n, "", -1, "model.visual.blocks.0.attn.qkv.weight", 2, 48, 16, 0);
    add_t(ts, &n, "", -1, "mtp.fc.weight", 2, 32, 64, 0);
    add_t(ts, &n, "", -1, "lm_head.weight", 2, 64, 32, 0);          /* tied model: unused */
    char path[1024], cfg[1024];
    struct t_rng rng;
    t_rng_seed(&rng, 5);
    snprintf(path, sizeof path, "%s/config.json", dir);
    snprintf(cfg, sizeof cfg, TINY_CONFIG, "lfm2");
    T_CHECK(t_write_file(path, cfg, strlen(cfg)) == 0, "write %s", path);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    T_CHECK(write_safetensors(path, ts, n, &rng) == 0, "write %s", path);
    struct model_source src;
    struct model_desc d;
    struct err e = {{0}};
    int rc = source_open(&src, dir, &e);
    if (!rc) rc = model_describe(&src, &d, &e);
    T_CHECK(rc == ST_OK, "open tiny with extras: %s", e.msg);
    if (rc) return;
    char what[256];
    int k = model_ignored(&src, &d, what, sizeof what);
    T_CHECK(k == 5 && !strcmp(what, "vision tower (1), MTP layer (3), other (1)"), "ignored %d: '%s'", k, what);
    source_close(&src);
    if (open_fixture(&src, "glm-ocr-tiny")) return;
    rc = model_describe(&src, &d, &e);
    k = rc ? -1 : model_ignored(&src, &d, what, sizeof what);
    T_CHECK(k == 25 && !strcmp(what, "vision tower (25)"), "glm-ocr-tiny ignored %d: '%s'", k, what);
    source_close(&src);
}

static void test_written_files(void)
{
    char dir[64];
    const char *t = t_tmpdir();
    T_CHECK(t != NULL, "tmpdir");
    if (!t) return;
    snprintf(dir, sizeof dir, "%s", t);
    struct wt ts[40];
    struct err e = {{0}};
    int drc, rc, n;

    n = tiny_lfm2(ts, "model.");
    rc = try_tiny(dir, "lfm2", ts, n, &e, &drc);
    T_CHECK(rc == ST_OK, "well-formed tiny LFM2 binds: %s", e.msg);

    n = tiny_lfm2(ts, "model.language_model.");
    rc = try_tiny(dir, "lfm2", ts, n, &e, &drc);
    T_CHECK(rc == ST_OK, "VL-prefixed tiny LFM2 binds: %s", e.msg);

    n = tiny_lfm2(ts, "model.");
    rc = try_tiny(dir, "llama", ts, n, &e, &drc);
    T_CHECK(drc == ST_USAGE && has(e.msg, "unknown model_type 'llama'") &&
                has(e.msg, "lfm2, qwen3_5, qwen3_5_text, glm_ocr, glm_ocr_text"),
            "unknown model_type: %d '%s'", drc, e.msg);

    n = tiny_lfm2(ts, "model.");
    for (int i = 0; i < n; i++)
        if (!strcmp(ts[i].name, "model.layers.1.feed_forward.w2.weight")) ts[i] = ts[--n];
    rc = try_tiny(dir, "lfm2", ts, n, &e, &drc);
    T_CHECK(rc == ST_USAGE && has(e.msg, "'blk.1.ffn_down'") &&
                has(e.msg, "model.layers.1.feed_forward.w2.weight"),
            "missing tensor: %d '%s'", rc, e.msg);

    n = tiny_lfm2(ts, "model.");
    for (int i = 0; i < n; i++)
        if (!strcmp(ts[i].name, "model.layers.1.self_attn.k_proj.weight")) ts[i].shape[0] = 32;
    rc = try_tiny(dir, "lfm2", ts, n, &e, &drc);
    T_CHECK(rc == ST_USAGE && has(e.msg, "model.layers.1.self_attn.k_proj.weight") &&
                has(e.msg, "[32, 32]") && has(e.msg, "[16, 32]"),
            "wrong shape: %d '%s'", rc, e.msg);

    n = tiny_lfm2(ts, "model.");
    for (int i = 0; i < n; i++)
        if (!strcmp(ts[i].name, "model.layers.0.ffn_norm.weight")) ts[i].dtype = "I8";
    rc = try_tiny(dir, "lfm2", ts, n, &e, &drc);
    T_CHECK(rc == ST_USAGE && has(e.msg, "unsupported dtype I8") &&
                has(e.msg, "model.layers.0.ffn_norm.weight"),
            "wrong dtype: %d '%s'", rc, e.msg);

    n = tiny_lfm2(ts, "model.");
    for (int i = 0; i < n; i++)
        if (!strcmp(ts[i].name, "model.layers.0.feed_forward.w1.weight")) ts[i] = ts[--n];
    rc = try_tiny(dir, "lfm2", ts, n, &e, &drc);
    T_CHECK(drc == ST_USAGE && has(e.msg, "blk.0.ffn_gate") && has(e.msg, "feed_forward.w1"),
            "describe without the gate: %d '%s'", drc, e.msg);

    /* a GGUF of another architecture: no tensors, one key */
    uint8_t g[128];
    size_t k = 0;
    uint32_t u32;
    uint64_t u64;
#define PUT(v) (memcpy(g + k, &(v), sizeof(v)), k += sizeof(v))
    memcpy(g, "GGUF", 4), k = 4;
    u32 = 3, PUT(u32);
    u64 = 0, PUT(u64);
    u64 = 1, PUT(u64);
    u64 = 20, PUT(u64);
    memcpy(g + k, "general.architecture", 20), k += 20;
    u32 = 8, PUT(u32);
    u64 = 5, PUT(u64);
    memcpy(g + k, "llama", 5), k += 5;
#undef PUT
    char path[128];
    snprintf(path, sizeof path, "%s/other.gguf", dir);
    T_CHECK(t_write_file(path, g, k) == 0, "write %s", path);
    struct model_source src;
    struct model_desc d;
    rc = source_open(&src, path, &e);
    T_CHECK(rc == ST_OK, "open %s: %s", path, e.msg);
    if (rc == ST_OK) {
        rc = model_describe(&src, &d, &e);
        T_CHECK(rc == ST_USAGE && has(e.msg, "'llama'") && has(e.msg, "lfm2, qwen35"),
                "gguf arch: %d '%s'", rc, e.msg);
        source_close(&src);
    }

    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    T_CHECK(system(cmd) == 0, "cleanup");
}

/* ------------------------------------------------------------------ built-ins */

static uint64_t layer_bytes(const struct shard *s, bool layers)
{
    uint64_t n = 0;
    for (int i = 0; i < s->n; i++) {
        const struct shard_tensor *t = &s->t[i];
        if ((t->layer >= 0) != layers) continue;
        uint64_t numel = 1;
        for (int k = 0; k < t->n_dims; k++)
            numel *= (uint64_t)t->shape[k];
        n += dtype_bytes(t->dtype, numel);
    }
    return n;
}

static bool near(double x, double want, double rel)
{
    return fabs(x - want) <= rel * want;
}

static void test_builtins(void)
{
    struct err e = {{0}};
    struct model_desc d;
    struct shard s;
    for (int i = 0; i < n_builtin_models; i++) {
        const char *name = builtin_models[i].name;
        int rc = builtin_describe(name, DT_BF16, &d, &e);
        T_CHECK(rc == ST_OK && !strcmp(d.source, name), "builtin %s: %s", name, e.msg);
        if (rc) continue;
        rc = builtin_shard(&d, 0, d.n_layers, &s, &e);
        T_CHECK(rc == ST_OK, "builtin_shard %s: %s", name, e.msg);
        if (rc) continue;
        int bad = 0, n_attn = 0;
        for (int l = 0; l < d.n_layers; l++)
            n_attn += d.kind[l] == LAYER_ATTN;
        for (int k = 0; k < s.n; k++) {
            const struct shard_tensor *t = &s.t[k];
            bad += t->src != NULL;
            bad += t->n_dims == 1 && t->dtype != DT_F32;
            bad += t->n_dims == 2 && t->role != W_CONV && t->role != W_DN_CONV &&
                   t->dtype != DT_BF16 && t->layer >= 0;
            if (t->layer < 0 && t->role == G_EMBED)
                bad += t->init != WINIT_EMBED || t->dtype != DT_BF16;
            if (t->layer >= 0 &&
                (t->role == W_FFN_DOWN || t->role == W_CONV || t->role == W_DN_CONV))
                bad += t->init != WINIT_MATRIX;
            if (t->layer >= 0 && t->role == W_ATTN_NORM)
                bad += t->init != (d.family == FAMILY_QWEN35 ? WINIT_NORM0 : WINIT_NORM);
            if (t->layer >= 0 && t->role == W_DN_NORM) bad += t->init != WINIT_NORM;
            if (t->layer >= 0 && t->role == W_DN_A_LOG) bad += t->init != WINIT_A_LOG;
            if (t->layer >= 0 && t->role == W_DN_DT) bad += t->init != WINIT_DT_BIAS;
        }
        T_CHECK(bad == 0, "%s: %d tensors with a wrong type or init", name, bad);
        T_CHECK(s.n == count_expected(&d, 0, d.n_layers) + 2 + !d.tied, "%s: %d tensors", name,
                s.n);
        T_CHECK(s.bytes == layer_bytes(&s, true) + layer_bytes(&s, false), "%s: bytes", name);
        double params = (double)s.bytes / 2; /* nearly all bf16 */
        if (!strcmp(name, "lfm2-1.2b") || !strcmp(name, "lfm2.5-1.2b")) {
            T_CHECK(near((double)layer_bytes(&s, true), 2.07e9, 0.02) &&
                        near((double)layer_bytes(&s, false), 0.2684e9, 0.02),
                    "%s: layers %.3g B, globals %.3g B", name, (double)layer_bytes(&s, true),
                    (double)layer_bytes(&s, false));
            T_CHECK(n_attn == 6 && d.kind[2] == LAYER_ATTN && d.kind[14] == LAYER_ATTN &&
                        d.kind[15] == LAYER_CONV,
                    "%s kinds", name);
        }
        if (!strcmp(name, "lfm2-350m"))
            T_CHECK(near(params, 0.354e9, 0.05), "%s: %.3g params", name, params);
        if (!strcmp(name, "lfm2-2.6b"))
            T_CHECK(n_attn == 8 && d.kind[27] == LAYER_ATTN, "%s kinds", name);
        if (!strcmp(name, "qwen3.5-0.8b"))
            T_CHECK(params > 0.7e9 && params < 0.95e9, "%s: %.3g params", name, params);
        if (!strcmp(name, "qwen3.5-9b"))
            T_CHECK(params > 8.5e9 && params < 10e9 && !d.tied &&
                        s.global_index[G_HEAD] != s.global_index[G_EMBED] && n_attn == 8 &&
                        d.kind[3] == LAYER_ATTN,
                    "%s: %.3g params", name, params);
        if (!strcmp(name, "glm-ocr"))
            T_CHECK(!d.tied && d.head_dim == 128 && !d.rope_neox && n_attn == 16, "%s: desc", name);
        shard_free(&s);
    }

    /* q4_0: 18 bytes per 32 matrix elements; a later tied stage carries the embedding as its head
     */
    int rc = builtin_describe("lfm2-1.2b", DT_Q4_0, &d, &e);
    T_CHECK(rc == ST_OK, "q4_0: %s", e.msg);
    rc = builtin_shard(&d, 4, 16, &s, &e);
    T_CHECK(rc == ST_OK && !s.first && s.last && s.global_index[G_EMBED] == -1 &&
                s.global_index[G_HEAD] >= 0,
            "lfm2-1.2b 4:16 head: %s", e.msg);
    if (rc == ST_OK) {
        const struct shard_tensor *h = &s.t[s.global_index[G_HEAD]];
        T_CHECK(h->role == G_EMBED && h->dtype == DT_Q4_0 && h->init == WINIT_EMBED,
                "tied head is the embedding");
        shard_free(&s);
    }
    rc = builtin_shard(&d, 0, 16, &s, &e);
    if (rc == ST_OK) {
        T_CHECK(near((double)layer_bytes(&s, true), 2.07e9 / 2 * 18 / 32, 0.02),
                "q4_0 layers %.3g B", (double)layer_bytes(&s, true));
        shard_free(&s);
    }
    rc = builtin_shard(&d, 3, 17, &s, &e);
    T_CHECK(rc == ST_USAGE && has(e.msg, "model has 16 layers"), "builtin 3:17: %s", e.msg);
    rc = builtin_describe("lfm2-7b", DT_BF16, &d, &e);
    T_CHECK(rc == ST_USAGE && has(e.msg, "lfm2-7b") && has(e.msg, "qwen3.5-9b"),
            "unknown builtin: %s", e.msg);
    rc = builtin_describe("lfm2-350m", DT_I8, &d, &e);
    T_CHECK(rc == ST_USAGE && has(e.msg, "--dtype"), "builtin dtype I8: %s", e.msg);
}

static void test_names(void)
{
    T_CHECK(!strcmp(family_name(FAMILY_QWEN35), "qwen3_5") &&
                !strcmp(layer_kind_name(LAYER_DELTANET), "deltanet"),
            "family / kind names");
    int bad = 0;
    for (int i = 0; i < W_COUNT; i++)
        for (int j = 0; j < i; j++)
            bad += !strcmp(wrole_name((enum wrole)i), wrole_name((enum wrole)j));
    T_CHECK(bad == 0, "role names are unique");
    T_CHECK(!strcmp(wrole_name(W_POST_ATTN_NORM), "post_attn_norm") &&
                !strcmp(grole_name(G_HEAD), "output"),
            "role names");
}

int main(int argc, char **argv)
{
    t_init(argc, argv);
    fixtures = argc > 1 ? argv[1] : getenv("FIXTURES");
    if (!fixtures) {
        fprintf(stderr, "usage: test_model FIXTURES_DIR\n");
        return 2;
    }
    T_CASE("names", "", test_names());
    T_CASE("lfm2", "", test_lfm2());
    T_CASE("qwen35", "", test_qwen35());
    T_CASE("glm", "", test_glm());
    T_CASE("ignored", "", test_ignored());
    T_CASE("written_files", "", test_written_files());
    T_CASE("builtins", "", test_builtins());
    return t_finish();
}
