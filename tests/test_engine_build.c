/* test_engine_build.c - engine_build builds each plan once, on kernel scratch sized before it
 * (engine.h engine_build, kernels.h k_scratch), on lfm2-tiny and qwen35-tiny in Q4_0 and
 * glm-ocr-tiny: the wide plan's prefill (the gemm's prepared x' and, under --tune
 * gemm_wdeq_cols=1, f16 copies of the Q4_0 weights), the wide and batch plans' decode
 * (attn_kv.comp's key splits, forced by --tune attn_kv_keys=0,attn_split=3). Per build: the
 * family's builders run once each and allocate nothing; each scratch buffer is exactly as large as
 * the largest use any dispatch of the plans makes of it; building a shape again allocates nothing
 * at all. A sizing that misses a product fails the build, naming the scratch. */
#include <string.h>

#include "engine.h"
#include "loader.h"
#include "testutil.h"

static struct gpu g;
static struct err e;

/* The family's hooks, wrapped: each builder call counted and checked to allocate nothing. */
static const struct family_plan *real;
static int layer_builds, head_builds, allocating_builds;
static bool short_gemm_x; /* the sizing misses every product's prepared x' */

static uint64_t allocated(void)
{
    return g.allocated[GPU_MEM_DEVICE] + g.allocated[GPU_MEM_HOST] + (uint64_t)g.n_blocks;
}

static int counted_layers(struct engine *en, const struct step_shape *sh, struct plan *p,
                          struct err *err)
{
    uint64_t before = allocated();
    layer_builds++;
    int st = real->build_layers(en, sh, p, err);
    allocating_builds += allocated() != before;
    return st;
}

static int counted_head(struct engine *en, const struct step_shape *sh, struct plan *p,
                        struct err *err)
{
    uint64_t before = allocated();
    head_builds++;
    int st = real->build_head(en, sh, p, err);
    allocating_builds += allocated() != before;
    return st;
}

static void sized_layers(const struct engine *en, const struct step_shape *sh,
                         struct sel_scratch *need)
{
    real->layers_scratch(en, sh, need);
    if (short_gemm_x) need->gemm_x = 0;
}

/* The largest use of each scratch buffer the plan's dispatches make, from their push constants:
 * a prep's x' (gemm_xprep: u32 k after 7 addresses, cols = its workgroups), a widening's copies
 * (gemm_wdeq: u32 start[5] after 12 addresses, 32-element blocks of 2-byte halves), a merge's split
 * outputs (attn_merge: u32 n_h, nspl after 3 addresses, then gated, cols). */
struct uses {
    uint64_t gemm_x, gemm_w_blocks, attn_part;
};
static void plan_uses(const struct plan *p, int hd, struct uses *u)
{
    for (int i = 0; i < p->n; i++) {
        const struct dispatch *d = &p->d[i];
        uint32_t v[5];
        if (strstr(d->kind, "gemm_xprep")) {
            memcpy(v, d->push + 56, 4);
            u->gemm_x = MAX(u->gemm_x, 4ull * d->groups[0] * v[0]);
        } else if (strstr(d->kind, "gemm_wdeq")) {
            memcpy(v, d->push + 96, sizeof v);
            u->gemm_w_blocks = MAX(u->gemm_w_blocks, (uint64_t)(v[4] - v[0]));
        } else if (strstr(d->kind, ".merge")) {
            memcpy(v, d->push + 24, 16);
            u->attn_part = MAX(u->attn_part, (uint64_t)v[3] * v[0] * v[1] * ((uint64_t)hd + 2) * 4);
        }
    }
}

/* Builds shape sh once through the counting hooks; returns the build's status. */
static int build(struct engine *en, const struct step_shape *sh, struct plan *layers,
                 struct plan *head)
{
    layer_builds = head_builds = allocating_builds = 0;
    int st = engine_build(en, sh, layers, head, &e);
    bool want_head = head && en->s->last && sh->n_logits > 0;
    T_CHECK(st != ST_OK ||
                (layer_builds == 1 && head_builds == (int)want_head && !allocating_builds),
            "%s plan of %d columns: %d layer builds, %d head builds (want 1, %d), %d allocating",
            plan_kind_name(sh->plan), sh->cols, layer_builds, head_builds, want_head,
            allocating_builds);
    return st;
}

static void run_model(const char *fx, const char *model, const char *file, bool q4)
{
    char path[512];
    struct model_source src;
    struct model_desc d;
    struct shard sd;
    struct dev_weights w = {0};
    snprintf(path, sizeof path, "%s/%s%s%s", fx, model, file ? "/" : "", file ? file : "");
    int st = source_open(&src, path, &e);
    if (!st) st = model_describe(&src, &d, &e);
    if (!st) st = shard_bind(&src, &d, 0, d.n_layers, &sd, &e);
    if (!st) st = weights_upload(&g, &sd, 0, false, &w, &e);
    T_CHECK(st == ST_OK, "setup %s: %s", path, e.msg);
    if (st) return;
    struct engine en;
    st = engine_init(&en, &g, &d, &sd, &w, 16, 8, 64, 16, &e);
    T_CHECK(st == ST_OK, "engine %s: %s", path, e.msg);
    struct family_plan counted = *en.fp;
    real = en.fp;
    counted.build_layers = counted_layers;
    counted.build_head = counted_head;
    counted.layers_scratch = sized_layers;
    en.fp = &counted;
    const struct step_shape shapes[] = {
        {.cols = 16, .n_runs = 2, .n_logits = 16, .prefill = true, .plan = PLAN_WIDE},
        {.cols = 8, .n_runs = 8, .n_logits = 8, .prefill = false, .plan = PLAN_WIDE},
        {.cols = 8, .n_runs = 8, .n_logits = 0, .prefill = false, .plan = PLAN_BATCH},
    };
    struct plan layers[3] = {{0}}, head[3] = {{0}};
    struct uses u = {0};
    for (int i = 0; !st && i < 3; i++) {
        st = build(&en, &shapes[i], &layers[i], &head[i]);
        T_CHECK(st == ST_OK, "%s: build %d: %s", path, i, e.msg);
        plan_uses(&layers[i], d.head_dim, &u);
        plan_uses(&head[i], d.head_dim, &u);
    }
    /* every kind of scratch in use, each buffer as large as its largest use: x' and the split
     * outputs exactly, the halves of gemm_w the largest widening's copies and their 256-byte
     * alignment (at most 4 copies a widening) */
    uint64_t half = en.scratch.gemm_w.size / 2, copies = 64 * u.gemm_w_blocks;
    T_CHECK(u.gemm_x && en.scratch.gemm_x.size == u.gemm_x,
            "%s: gemm_x %llu bytes, largest use %llu", path,
            (unsigned long long)en.scratch.gemm_x.size, (unsigned long long)u.gemm_x);
    T_CHECK(!q4 || (copies && half >= copies && half < copies + 4 * 256),
            "%s: gemm_w halves of %llu bytes, largest "
            "widening %llu",
            path, (unsigned long long)half, (unsigned long long)copies);
    T_CHECK(q4 || !en.scratch.gemm_w.size, "%s: gemm_w %llu bytes without Q4_0 weights", path,
            (unsigned long long)en.scratch.gemm_w.size);
    T_CHECK(u.attn_part && en.scratch.attn_part.size == u.attn_part,
            "%s: attn_part %llu bytes, largest use %llu", path,
            (unsigned long long)en.scratch.attn_part.size, (unsigned long long)u.attn_part);
    /* a shape built again: no allocation, sizing included */
    uint64_t before = allocated();
    struct plan again = {0}, again_head = {0};
    if (!st)
        T_CHECK(build(&en, &shapes[0], &again, &again_head) == ST_OK && allocated() == before,
                "%s: the wide prefill built again allocated %llu bytes", path,
                (unsigned long long)(allocated() - before));
    /* a sizing that misses the prepared x' (a fresh engine): the build fails and says so */
    struct engine en2;
    struct plan p2 = {0};
    if (!st) st = engine_init(&en2, &g, &d, &sd, &w, 16, 8, 64, 16, &e);
    if (!st) {
        en2.fp = &counted;
        short_gemm_x = true;
        st = engine_build(&en2, &shapes[0], &p2, NULL, &e);
        short_gemm_x = false;
        T_CHECK(st == ST_RUNTIME && strstr(e.msg, "kernel scratch for its prepared activations"),
                "%s: a short gemm_x: %d %s", path, st, e.msg);
        engine_free(&en2);
    }
    for (int i = 0; i < 3; i++) {
        plan_free(&layers[i]);
        plan_free(&head[i]);
    }
    plan_free(&again);
    plan_free(&again_head);
    plan_free(&p2);
    engine_free(&en);
    weights_free(&w);
    shard_free(&sd);
    source_close(&src);
}

int main(int argc, char **argv)
{
    t_init(argc, argv);
    const char *fx = argc > 1 ? argv[1] : "tests/fixtures";
    int st = gpu_open(&g, -1, &e);
    T_CHECK(st == ST_OK, "gpu_open: %s", e.msg);
    if (st) return t_finish();
    g.tune.gemm_wdeq_cols = 1;
    g.tune.attn_kv_keys = 0;
    g.tune.attn_split = 3;
    T_CASE("lfm2_q4_0", "", run_model(fx, "lfm2-tiny", "model-q4_0.gguf", true));
    T_CASE("qwen35_q4_0", "", run_model(fx, "qwen35-tiny", "model-q4_0.gguf", true));
    T_CASE("glm", "", run_model(fx, "glm-ocr-tiny", NULL, false));
    T_CHECK(gpu_close(&g, &e) == ST_OK, "gpu_close: %s", e.msg);
    return t_finish();
}
