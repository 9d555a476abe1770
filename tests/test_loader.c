/* test_loader.c - opens every model and golden file of the fixtures folder (argv[1]) and checks
 * tensor counts derived from each model's structure, names, torch-order shapes, dtypes, GGUF
 * metadata, and sample values decoded here independently of the loader (Q4_0 and Q8_0 blocks by
 * the format rule against the F16 file, BF16 safetensors against the F16 GGUF). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"
#include "testutil.h"

static const char *fixtures;

static const char *fx(const char *rel)
{
    static char buf[8][1024];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, sizeof buf[0], "%s/%s", fixtures, rel);
    return b;
}

static bool open_ok(struct model_source *s, const char *path)
{
    struct err e = {{0}};
    int rc = source_open(s, path, &e);
    T_CHECK(rc == ST_OK, "source_open %s: %s", path, e.msg);
    return rc == ST_OK;
}

/* Every view lies inside the mapping of the file it names, with the size its shape implies. */
static void check_views(const struct model_source *s)
{
    int bad = 0;
    for (int i = 0; i < s->n_tensors; i++) {
        const struct tensor_view *t = &s->tensors[i];
        const struct mapping *m = NULL;
        for (int k = 0; k < s->n_maps; k++)
            if (strcmp(s->maps[k].path, t->file) == 0) m = &s->maps[k];
        bool inside =
            m && t->data >= m->base && (uint64_t)(t->data - m->base) + t->n_bytes <= m->size;
        bool sized = t->n_bytes == dtype_bytes(t->dtype, (uint64_t)tensor_numel(t));
        if (!inside || !sized) {
            if (bad++ < 3)
                fprintf(stderr, "  view %s: inside %d sized %d\n", t->name, inside, sized);
        }
        if (source_find(s, t->name) != t) bad++;
    }
    T_CHECK(bad == 0, "%s: %d tensor views outside their mapping, mis-sized or not findable",
            s->path, bad);
}

static const struct tensor_view *need(const struct model_source *s, const char *name)
{
    const struct tensor_view *t = source_find(s, name);
    T_CHECK(t != NULL, "%s: tensor %s missing", s->path, name);
    return t;
}

static void check_shape(const struct model_source *s, const char *name, enum dtype dt, int n_dims,
                        int64_t d0, int64_t d1, int64_t d2)
{
    const struct tensor_view *t = need(s, name);
    if (!t) return;
    int64_t want[3] = {d0, d1, d2};
    bool ok = t->n_dims == n_dims && t->dtype == dt;
    for (int i = 0; i < n_dims && i < 3; i++)
        ok = ok && t->shape[i] == want[i];
    T_CHECK(ok, "%s %s: got %s rank %d [%lld,%lld,%lld], want %s rank %d [%lld,%lld,%lld]", s->path,
            name, dtype_name(t->dtype), t->n_dims, (long long)t->shape[0], (long long)t->shape[1],
            (long long)t->shape[2], dtype_name(dt), n_dims, (long long)d0, (long long)d1,
            (long long)d2);
}

/* ---- element decoding, written from the format rules (docs/formats.md), not from the loader ----------
 */

static float half_at(const uint8_t *p)
{
    return f16_to_f32((uint16_t)(p[0] | p[1] << 8));
}

/* Element i of an F32/F16/BF16 tensor. */
static float plain_at(const struct tensor_view *t, int64_t i)
{
    const uint8_t *p = t->data;
    if (t->dtype == DT_F32) {
        uint32_t b = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
                     (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
        float f;
        memcpy(&f, &b, 4);
        return f;
    }
    if (t->dtype == DT_F16) return half_at(p + 2 * i);
    if (t->dtype == DT_BF16) return bf16_to_f32((uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
    return NAN;
}

/* Block b of a Q4_0 / Q8_0 tensor: 32 values and the scale d. */
static float quant_block(const struct tensor_view *t, int64_t b, float out[32])
{
    if (t->dtype == DT_Q4_0) {
        const uint8_t *p = t->data + 18 * b;
        float d = half_at(p);
        for (int j = 0; j < 16; j++) {
            out[j] = (float)((p[2 + j] & 15) - 8) * d;
            out[j + 16] = (float)((p[2 + j] >> 4) - 8) * d;
        }
        return d;
    }
    const uint8_t *p = t->data + 34 * b;
    float d = half_at(p);
    for (int j = 0; j < 32; j++)
        out[j] = (float)(int8_t)p[2 + j] * d;
    return d;
}

/* Blocks of quantized token_embd rows against the F16 file: within step*|d| of the exact value. */
static void check_quant_vs_f16(const char *quant_file, const char *f16_file, const char *name,
                               float step)
{
    struct model_source q, h;
    if (!open_ok(&q, quant_file)) return;
    if (!open_ok(&h, f16_file)) {
        source_close(&q);
        return;
    }
    const struct tensor_view *tq = need(&q, name), *th = need(&h, name);
    if (tq && th) {
        int64_t row = tq->shape[tq->n_dims - 1], blocks_per_row = row / 32,
                rows = tensor_numel(tq) / row;
        int64_t probe_rows[3] = {0, 1, rows - 1};
        double worst = 0;
        int n = 0;
        for (int r = 0; r < 3; r++) {
            for (int64_t b = 0; b < MIN(blocks_per_row, 2); b++) {
                float v[32];
                float d = fabsf(quant_block(tq, probe_rows[r] * blocks_per_row + b, v));
                for (int j = 0; j < 32; j++) {
                    float ref = plain_at(th, probe_rows[r] * row + b * 32 + j);
                    worst = fmax(worst, fabs(v[j] - ref) / (step * d + 1e-3f * fabsf(ref) + 1e-7f));
                    n++;
                }
            }
        }
        T_CHECK(worst <= 1.0 && n == 3 * MIN(blocks_per_row, 2) * 32,
                "%s %s: worst |q - f16| is %.3f of the allowed step (%d values)", quant_file, name,
                worst, n);
    }
    source_close(&q);
    source_close(&h);
}

/* First n elements of a safetensors tensor against the GGUF's (plus `add`, for Qwen3.5's norms). */
static void check_same_values(const struct model_source *st, const char *st_name,
                              const struct model_source *gg, const char *gg_name, int n, float add)
{
    const struct tensor_view *a = need(st, st_name), *b = need(gg, gg_name);
    if (!a || !b) return;
    double worst = 0;
    for (int i = 0; i < n; i++) {
        float x = plain_at(a, i) + add, y = plain_at(b, i);
        worst = fmax(worst, fabs(x - y) / (fabs(x) * 1e-3 + 1e-6));
    }
    T_CHECK(worst <= 1.0 && isfinite(worst), "%s vs %s: values differ (%.3f of tolerance)", st_name,
            gg_name, worst);
}

/* Short-convolution filters (k = 3 or 4) cannot be blocked along ne[0]: they stay F32. */
static bool is_conv_filter(const char *name)
{
    return strstr(name, "conv.weight") || strstr(name, "conv1d");
}

/* ---- LFM2 ---------------------------------------------------------------------------------------
 */

static const char *const lfm2_common[] = {"attn_norm", "ffn_norm", "ffn_gate", "ffn_up",
                                          "ffn_down"};
static const char *const lfm2_conv_gguf[] = {"shortconv.conv", "shortconv.in_proj",
                                             "shortconv.out_proj"};
static const char *const lfm2_attn_gguf[] = {"attn_q",      "attn_k",      "attn_v",
                                             "attn_output", "attn_q_norm", "attn_k_norm"};
static const char *const lfm2_common_st[] = {"operator_norm", "ffn_norm", "feed_forward.w1",
                                             "feed_forward.w2", "feed_forward.w3"};
static const char *const lfm2_conv_st[] = {"conv.conv", "conv.in_proj", "conv.out_proj"};
static const char *const lfm2_attn_st[] = {"self_attn.q_proj",      "self_attn.k_proj",
                                           "self_attn.v_proj",      "self_attn.out_proj",
                                           "self_attn.q_layernorm", "self_attn.k_layernorm"};

/* Layer i is attention (1) or conv (0), from config.json's layer_types. */
static int lfm2_layers(const cJSON *config, int kinds[], int max)
{
    const cJSON *lt = cJSON_GetObjectItemCaseSensitive(config, "layer_types");
    int n = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, lt)
    {
        if (n < max)
            kinds[n] = cJSON_IsString(it) && strcmp(it->valuestring, "full_attention") == 0;
        n++;
    }
    return n;
}

static void check_names(const struct model_source *s, const char *fmt, int layer,
                        const char *const *parts, int n)
{
    for (int k = 0; k < n; k++) {
        char name[256];
        snprintf(name, sizeof name, fmt, layer, parts[k]);
        need(s, name);
    }
}

static void test_lfm2_safetensors(void)
{
    struct model_source s;
    if (!open_ok(&s, fx("lfm2-tiny"))) return;
    T_CHECK(s.kind == SOURCE_SAFETENSORS && s.config != NULL, "lfm2-tiny: kind %d config %p",
            s.kind, (void *)s.config);
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(s.config, "model_type");
    T_CHECK(cJSON_IsString(mt) && strcmp(mt->valuestring, "lfm2") == 0, "lfm2-tiny: model_type");
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(s.st_metadata, "format");
    T_CHECK(cJSON_IsString(fmt) && strcmp(fmt->valuestring, "pt") == 0,
            "lfm2-tiny: __metadata__.format");
    int kinds[64], n_layers = lfm2_layers(s.config, kinds, 64), n_attn = 0;
    T_CHECK(n_layers == 6, "lfm2-tiny: %d layer_types", n_layers);
    for (int i = 0; i < n_layers; i++) {
        n_attn += kinds[i];
        check_names(&s, "model.layers.%d.%s.weight", i, lfm2_common_st, 5);
        if (kinds[i])
            check_names(&s, "model.layers.%d.%s.weight", i, lfm2_attn_st, 6);
        else
            check_names(&s, "model.layers.%d.%s.weight", i, lfm2_conv_st, 3);
    }
    /* embedding + final norm; per layer 5 shared; conv 3 more, attention 6 more (tied: no head) */
    int want = 2 + n_layers * 5 + (n_layers - n_attn) * 3 + n_attn * 6;
    T_CHECK(s.n_tensors == want && want == 56, "lfm2-tiny: %d tensors, expected %d", s.n_tensors,
            want);
    int not_bf16 = 0;
    for (int i = 0; i < s.n_tensors; i++)
        not_bf16 += s.tensors[i].dtype != DT_BF16;
    T_CHECK(not_bf16 == 0, "lfm2-tiny: %d tensors not BF16", not_bf16);
    check_shape(&s, "model.embed_tokens.weight", DT_BF16, 2, 1000, 128, 0);
    check_shape(&s, "model.layers.0.conv.conv.weight", DT_BF16, 3, 128, 1, 3);
    check_shape(&s, "model.layers.0.conv.in_proj.weight", DT_BF16, 2, 384, 128, 0);
    check_shape(&s, "model.layers.2.self_attn.k_proj.weight", DT_BF16, 2, 64, 128, 0);
    check_shape(&s, "model.layers.2.self_attn.q_layernorm.weight", DT_BF16, 1, 64, 0, 0);
    check_shape(&s, "model.layers.5.feed_forward.w2.weight", DT_BF16, 2, 128, 256, 0);
    T_CHECK(source_find(&s, "lm_head.weight") == NULL, "lfm2-tiny is tied: no lm_head expected");
    check_views(&s);

    struct model_source g;
    if (open_ok(&g, fx("lfm2-tiny/model-f16.gguf"))) {
        check_same_values(&s, "model.embed_tokens.weight", &g, "token_embd.weight", 4096, 0);
        check_same_values(&s, "model.layers.0.feed_forward.w1.weight", &g, "blk.0.ffn_gate.weight",
                          1024, 0);
        check_same_values(&s, "model.layers.3.ffn_norm.weight", &g, "blk.3.ffn_norm.weight", 128,
                          0);
        check_same_values(&s, "model.embedding_norm.weight", &g, "token_embd_norm.weight", 128, 0);
        source_close(&g);
    }
    source_close(&s);
}

static void test_lfm2_gguf(const char *file, enum dtype quant)
{
    struct model_source s;
    if (!open_ok(&s, fx(file))) return;
    T_CHECK(s.kind == SOURCE_GGUF && s.config == NULL && s.gguf_version == 3,
            "%s: kind/config/version", file);
    uint32_t blocks = 0, align = 0, ctx = 0;
    T_CHECK(gguf_get_u32(&s, "lfm2.block_count", &blocks) && blocks == 6, "%s: block_count %u",
            file, blocks);
    T_CHECK(gguf_get_u32(&s, "general.alignment", &align) && align == 32, "%s: alignment %u", file,
            align);
    T_CHECK(gguf_get_u32(&s, "lfm2.context_length", &ctx) && ctx == 4096, "%s: context_length %u",
            file, ctx);
    char arch[32];
    T_CHECK(gguf_get_str(&s, "general.architecture", arch, sizeof arch) &&
                strcmp(arch, "lfm2") == 0,
            "%s: arch", file);
    T_CHECK(!gguf_get_str(&s, "general.architecture", arch, 4), "%s: too small buffer must fail",
            file);
    float theta = 0, eps = 0;
    T_CHECK(gguf_get_f32(&s, "lfm2.rope.freq_base", &theta) && theta == 1e6f, "%s: freq_base %g",
            file, theta);
    T_CHECK(gguf_get_f32(&s, "lfm2.attention.layer_norm_rms_epsilon", &eps) &&
                fabsf(eps - 1e-5f) < 1e-9f,
            "%s: eps %g", file, eps);
    T_CHECK(!gguf_get_f32(&s, "lfm2.block_count", &eps) &&
                !gguf_get_u32(&s, "general.architecture", &blocks) &&
                !gguf_get_u32(&s, "no.such.key", &blocks) && gguf_find(&s, "no.such.key") == NULL,
            "%s: lookups of the wrong type or missing keys must fail", file);

    const struct gguf_kv *kv = gguf_find(&s, "lfm2.attention.head_count_kv");
    static const int64_t want_kv[6] = {0, 0, 1, 0, 1, 0};
    int kinds[6] = {0};
    bool kv_ok = kv && kv->type == GGUF_ARRAY && kv->count == 6;
    for (int i = 0; i < 6 && kv_ok; i++) {
        int64_t v = -1;
        kv_ok = gguf_array_i64(kv, (uint64_t)i, &v) && v == want_kv[i];
        kinds[i] = v > 0;
    }
    int64_t dummy;
    T_CHECK(kv_ok && !gguf_array_i64(kv, 6, &dummy), "%s: head_count_kv array", file);
    const struct gguf_kv *tok = gguf_find(&s, "tokenizer.ggml.tokens");
    T_CHECK(tok && tok->type == GGUF_ARRAY && tok->elem_type == GGUF_STRING && tok->count == 1000 &&
                memcmp(tok->data, "\x06\0\0\0\0\0\0\0<tok0>", 14) == 0,
            "%s: tokenizer.ggml.tokens", file);

    int n_attn = 0;
    for (int i = 0; i < 6; i++) {
        n_attn += kinds[i];
        check_names(&s, "blk.%d.%s.weight", i, lfm2_common, 5);
        if (kinds[i])
            check_names(&s, "blk.%d.%s.weight", i, lfm2_attn_gguf, 6);
        else
            check_names(&s, "blk.%d.%s.weight", i, lfm2_conv_gguf, 3);
    }
    int want = 2 + 6 * 5 + (6 - n_attn) * 3 + n_attn * 6;
    T_CHECK(s.n_tensors == want && n_attn == 2, "%s: %d tensors, expected %d", file, s.n_tensors,
            want);
    /* Matrices are quantized; norms and the (k=3) conv filters stay F32. */
    int wrong = 0;
    for (int i = 0; i < s.n_tensors; i++) {
        const struct tensor_view *t = &s.tensors[i];
        enum dtype dt = t->n_dims == 2 && !is_conv_filter(t->name) ? quant : DT_F32;
        if (t->dtype != dt && wrong++ < 3)
            fprintf(stderr, "  %s: %s is %s\n", file, t->name, dtype_name(t->dtype));
    }
    T_CHECK(wrong == 0, "%s: %d tensors of the wrong dtype", file, wrong);
    check_shape(&s, "token_embd.weight", quant, 2, 1000, 128, 0);
    check_shape(&s, "blk.0.shortconv.conv.weight", DT_F32, 2, 128, 3, 0);
    check_shape(&s, "blk.0.shortconv.in_proj.weight", quant, 2, 384, 128, 0);
    check_shape(&s, "blk.2.attn_k.weight", quant, 2, 64, 128, 0);
    check_shape(&s, "blk.2.attn_q_norm.weight", DT_F32, 1, 64, 0, 0);
    check_shape(&s, "blk.5.ffn_down.weight", quant, 2, 128, 256, 0);
    check_shape(&s, "token_embd_norm.weight", DT_F32, 1, 128, 0, 0);
    check_views(&s);
    source_close(&s);
}

/* ---- Qwen3.5 ------------------------------------------------------------------------------------
 */

static const char *const qw_lin_st[] = {"linear_attn.A_log",
                                        "linear_attn.conv1d.weight",
                                        "linear_attn.dt_bias",
                                        "linear_attn.in_proj_a.weight",
                                        "linear_attn.in_proj_b.weight",
                                        "linear_attn.in_proj_qkv.weight",
                                        "linear_attn.in_proj_z.weight",
                                        "linear_attn.norm.weight",
                                        "linear_attn.out_proj.weight"};
static const char *const qw_attn_st[] = {"self_attn.q_proj.weight", "self_attn.k_proj.weight",
                                         "self_attn.v_proj.weight", "self_attn.o_proj.weight",
                                         "self_attn.q_norm.weight", "self_attn.k_norm.weight"};
static const char *const qw_common_st[] = {"mlp.gate_proj.weight", "mlp.up_proj.weight",
                                           "mlp.down_proj.weight", "input_layernorm.weight",
                                           "post_attention_layernorm.weight"};

static int count_prefix(const struct model_source *s, const char *prefix)
{
    int n = 0;
    for (int i = 0; i < s->n_tensors; i++)
        n += strncmp(s->tensors[i].name, prefix, strlen(prefix)) == 0;
    return n;
}

static void test_qwen35_safetensors(void)
{
    struct model_source s;
    if (!open_ok(&s, fx("qwen35-tiny"))) return;
    const cJSON *tc = cJSON_GetObjectItemCaseSensitive(s.config, "text_config");
    int kinds[64], n_layers = lfm2_layers(tc, kinds, 64), n_attn = 0;
    T_CHECK(n_layers == 4, "qwen35-tiny: %d layer_types", n_layers);
    for (int i = 0; i < n_layers; i++) {
        n_attn += kinds[i];
        check_names(&s, "model.language_model.layers.%d.%s", i, qw_common_st, 5);
        if (kinds[i])
            check_names(&s, "model.language_model.layers.%d.%s", i, qw_attn_st, 6);
        else
            check_names(&s, "model.language_model.layers.%d.%s", i, qw_lin_st, 9);
    }
    int want = 2 + n_layers * 5 + n_attn * 6 + (n_layers - n_attn) * 9;
    int lang = count_prefix(&s, "model.language_model."), vis = count_prefix(&s, "model.visual.");
    T_CHECK(lang == want && want == 55, "qwen35-tiny: %d language tensors, expected %d", lang,
            want);
    T_CHECK(vis > 0 && lang + vis == s.n_tensors, "qwen35-tiny: %d vision + %d language != %d", vis,
            lang, s.n_tensors);
    int wrong = 0;
    for (int i = 0; i < s.n_tensors; i++) {
        const char *n = s.tensors[i].name;
        enum dtype dt = strstr(n, "A_log") || strstr(n, "linear_attn.norm") ? DT_F32 : DT_BF16;
        wrong += s.tensors[i].dtype != dt;
    }
    T_CHECK(wrong == 0, "qwen35-tiny: %d tensors of the wrong dtype", wrong);
    check_shape(&s, "model.language_model.layers.0.linear_attn.conv1d.weight", DT_BF16, 3, 1024, 1,
                4);
    check_shape(&s, "model.language_model.layers.0.linear_attn.A_log", DT_F32, 1, 4, 0, 0);
    check_shape(&s, "model.language_model.layers.3.self_attn.q_proj.weight", DT_BF16, 2, 1024, 128,
                0);
    /* A rank-5 vision tensor keeps its element count (dims past the 4th fold into the last). */
    const struct tensor_view *pe = need(&s, "model.visual.patch_embed.proj.weight");
    T_CHECK(pe && pe->n_dims == 4 && pe->shape[0] == 64 && tensor_numel(pe) == 64 * 3 * 2 * 16 * 16,
            "qwen35-tiny: rank-5 patch_embed");
    check_views(&s);

    struct model_source g;
    if (open_ok(&g, fx("qwen35-tiny/model-f16.gguf"))) {
        /* llama.cpp's converter adds 1 to Qwen3.5 norm gains (not ssm_norm). */
        check_same_values(&s, "model.language_model.layers.0.input_layernorm.weight", &g,
                          "blk.0.attn_norm.weight", 128, 1.0f);
        check_same_values(&s, "model.language_model.norm.weight", &g, "output_norm.weight", 128,
                          1.0f);
        check_same_values(&s, "model.language_model.layers.0.linear_attn.norm.weight", &g,
                          "blk.0.ssm_norm.weight", 128, 0);
        check_same_values(&s, "model.language_model.embed_tokens.weight", &g, "token_embd.weight",
                          4096, 0);
        /* ssm_a = -exp(A_log), heads reordered: every value must match one of the originals. */
        const struct tensor_view *a = need(&s, "model.language_model.layers.0.linear_attn.A_log"),
                                 *b = need(&g, "blk.0.ssm_a");
        int matched = 0;
        for (int i = 0; a && b && i < 4; i++)
            for (int k = 0; k < 4; k++)
                if (fabsf(plain_at(b, i) + expf(plain_at(a, k))) < 1e-5f * expf(plain_at(a, k))) {
                    matched++;
                    break;
                }
        T_CHECK(matched == 4, "qwen35: ssm_a vs -exp(A_log): %d of 4 match", matched);
        source_close(&g);
    }
    source_close(&s);
}

static void test_qwen35_gguf(const char *file, enum dtype quant)
{
    struct model_source s;
    if (!open_ok(&s, fx(file))) return;
    uint32_t blocks = 0, interval = 0, kvh = 0;
    T_CHECK(gguf_get_u32(&s, "qwen35.block_count", &blocks) && blocks == 4, "%s: block_count %u",
            file, blocks);
    T_CHECK(gguf_get_u32(&s, "qwen35.full_attention_interval", &interval) && interval == 4,
            "%s: interval", file);
    T_CHECK(gguf_get_u32(&s, "qwen35.attention.head_count_kv", &kvh) && kvh == 1,
            "%s: head_count_kv", file);
    const struct gguf_kv *tok = gguf_find(&s, "tokenizer.ggml.tokens");
    T_CHECK(tok && tok->elem_type == GGUF_STRING && tok->count == 1000, "%s: tokens", file);
    int n_attn = 0;
    for (uint32_t i = 0; i < blocks && interval; i++)
        n_attn += (i + 1) % interval == 0;
    /* per layer: ffn 3 + 2 norms; DeltaNet 9 (dt, a, conv, norm, out, qkv, gate, beta, alpha); attn
     * 6 */
    int want = 2 + (int)blocks * 5 + n_attn * 6 + ((int)blocks - n_attn) * 9;
    T_CHECK(s.n_tensors == want && want == 55, "%s: %d tensors, expected %d", file, s.n_tensors,
            want);
    int wrong = 0;
    for (int i = 0; i < s.n_tensors; i++) {
        const struct tensor_view *t = &s.tensors[i];
        enum dtype dt = t->n_dims == 2 && !is_conv_filter(t->name) ? quant : DT_F32;
        wrong += t->dtype != dt;
    }
    T_CHECK(wrong == 0, "%s: %d tensors of the wrong dtype", file, wrong);
    check_shape(&s, "token_embd.weight", quant, 2, 1000, 128, 0);
    check_shape(&s, "blk.0.ssm_conv1d.weight", DT_F32, 2, 1024, 4, 0);
    check_shape(&s, "blk.0.ssm_beta.weight", quant, 2, 4, 128, 0);
    check_shape(&s, "blk.3.attn_q.weight", quant, 2, 1024, 128, 0);
    check_shape(&s, "blk.3.attn_output.weight", quant, 2, 128, 512, 0);
    check_views(&s);
    source_close(&s);
}

/* ---- GLM-OCR
 * ------------------------------------------------------------------------------------- */

static void test_glm(void)
{
    struct model_source s;
    if (!open_ok(&s, fx("glm-ocr-tiny"))) return;
    const cJSON *tc = cJSON_GetObjectItemCaseSensitive(s.config, "text_config");
    const cJSON *nl = cJSON_GetObjectItemCaseSensitive(tc, "num_hidden_layers");
    int n_layers = cJSON_IsNumber(nl) ? nl->valueint : -1;
    static const char *const parts[] = {"input_layernorm",    "post_attention_layernorm",
                                        "post_mlp_layernorm", "post_self_attn_layernorm",
                                        "mlp.gate_up_proj",   "mlp.down_proj",
                                        "self_attn.q_proj",   "self_attn.k_proj",
                                        "self_attn.v_proj",   "self_attn.o_proj"};
    for (int i = 0; i < n_layers; i++)
        check_names(&s, "model.language_model.layers.%d.%s.weight", i, parts, 10);
    /* embedding + final norm + untied lm_head, 10 per layer */
    int want = 3 + n_layers * 10;
    int lang =
        count_prefix(&s, "model.language_model.") + (source_find(&s, "lm_head.weight") != NULL);
    T_CHECK(n_layers == 3 && lang == want, "glm-ocr-tiny: %d language tensors, expected %d", lang,
            want);
    T_CHECK(s.n_tensors == lang + count_prefix(&s, "model.visual."),
            "glm-ocr-tiny: unexpected tensors");
    check_shape(&s, "lm_head.weight", DT_BF16, 2, 1000, 128, 0);
    check_shape(&s, "model.language_model.layers.0.mlp.gate_up_proj.weight", DT_BF16, 2, 512, 128,
                0);
    check_views(&s);
    source_close(&s);
}

/* ---- golden files
 * ---------------------------------------------------------------------------------- */

static void test_golden(const char *file, int hidden, int vocab)
{
    struct model_source s;
    if (!open_ok(&s, fx(file))) return;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(s.st_metadata, "format");
    const cJSON *nl = cJSON_GetObjectItemCaseSensitive(s.st_metadata, "n_layers");
    T_CHECK(cJSON_IsString(f) && strcmp(f->valuestring, "golden-v1") == 0, "%s: format", file);
    int n = cJSON_IsString(nl) ? atoi(nl->valuestring) : -1;
    T_CHECK(n > 0 && s.n_tensors == 2 + n + 1, "%s: %d tensors for %d layers", file, s.n_tensors,
            n);
    check_shape(&s, "tokens", DT_I32, 2, 3, 16, 0);
    check_shape(&s, "logits", DT_F32, 3, 3, 16, vocab);
    for (int i = 0; i <= n; i++) {
        char name[32];
        snprintf(name, sizeof name, "hidden.%d", i);
        check_shape(&s, name, DT_F32, 3, 3, 16, hidden);
    }
    const struct tensor_view *tk = source_find(&s, "tokens"), *lg = source_find(&s, "logits");
    int bad_tok = 0, bad_logit = 0;
    for (int i = 0; tk && i < 48; i++) {
        int32_t v;
        memcpy(&v, tk->data + 4 * i, 4);
        bad_tok += v < 0 || v >= vocab;
    }
    double amax = 0;
    for (int64_t i = 0; lg && i < tensor_numel(lg); i++) {
        float v = plain_at(lg, i);
        bad_logit += !isfinite(v);
        amax = fmax(amax, fabs(v));
    }
    T_CHECK(bad_tok == 0 && bad_logit == 0 && amax > 0.1,
            "%s: tokens out of range %d, bad logits %d, max %g", file, bad_tok, bad_logit, amax);
    check_views(&s);
    source_close(&s);
}

int main(int argc, char **argv)
{
    t_init(argc, argv);
    fixtures = argc > 1 ? argv[1] : "tests/fixtures";
    T_CASE("lfm2_safetensors", "lfm2", test_lfm2_safetensors());
    T_CASE("lfm2_gguf_f16", "lfm2 gguf", test_lfm2_gguf("lfm2-tiny/model-f16.gguf", DT_F16));
    T_CASE("lfm2_gguf_q8_0", "lfm2 gguf", test_lfm2_gguf("lfm2-tiny/model-q8_0.gguf", DT_Q8_0));
    T_CASE("lfm2_gguf_q4_0", "lfm2 gguf", test_lfm2_gguf("lfm2-tiny/model-q4_0.gguf", DT_Q4_0));
    if (t_case("lfm2_quant_vs_f16", "lfm2 gguf")) {
        check_quant_vs_f16(fx("lfm2-tiny/model-q4_0.gguf"), fx("lfm2-tiny/model-f16.gguf"),
                           "token_embd.weight", 1.0f);
        check_quant_vs_f16(fx("lfm2-tiny/model-q8_0.gguf"), fx("lfm2-tiny/model-f16.gguf"),
                           "token_embd.weight", 0.6f);
        check_quant_vs_f16(fx("lfm2-tiny/model-q4_0.gguf"), fx("lfm2-tiny/model-f16.gguf"),
                           "blk.2.attn_q.weight", 1.0f);
    }
    T_CASE("qwen35_safetensors", "qwen35", test_qwen35_safetensors());
    T_CASE("qwen35_gguf_f16", "qwen35 gguf", test_qwen35_gguf("qwen35-tiny/model-f16.gguf", DT_F16));
    T_CASE("qwen35_gguf_q8_0", "qwen35 gguf", test_qwen35_gguf("qwen35-tiny/model-q8_0.gguf", DT_Q8_0));
    T_CASE("qwen35_gguf_q4_0", "qwen35 gguf", test_qwen35_gguf("qwen35-tiny/model-q4_0.gguf", DT_Q4_0));
    if (t_case("qwen35_quant_vs_f16", "qwen35 gguf")) {
        check_quant_vs_f16(fx("qwen35-tiny/model-q4_0.gguf"), fx("qwen35-tiny/model-f16.gguf"),
                           "token_embd.weight", 1.0f);
        check_quant_vs_f16(fx("qwen35-tiny/model-q8_0.gguf"), fx("qwen35-tiny/model-f16.gguf"),
                           "blk.0.ffn_down.weight", 0.6f);
    }
    T_CASE("glm", "", test_glm());
    static const char *const golds[] = {"golden.safetensors", "golden-f16.safetensors",
                                        "golden-q8_0.safetensors", "golden-q4_0.safetensors"};
    if (t_case("goldens", "golden")) {
        for (size_t i = 0; i < ARRAY_LEN(golds); i++) {
            char p[128];
            snprintf(p, sizeof p, "lfm2-tiny/%s", golds[i]);
            test_golden(p, 128, 1000);
            snprintf(p, sizeof p, "qwen35-tiny/%s", golds[i]);
            test_golden(p, 128, 1000);
        }
    }
    T_CASE("golden_glm", "golden", test_golden("glm-ocr-tiny/golden.safetensors", 128, 1000));
    return t_finish();
}
