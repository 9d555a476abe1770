/* test_spec.c - speculative steps through the engine API on lfm2-tiny and qwen35-tiny, checked
 * against their golden logits: any accepted prefix j of a draft (0, part, all), a second draft
 * verified from a rolled back state (the snapshot ring wraps), a batch step after an uncommitted
 * draft (as accepting none), and engine_commit's refusals. Every step's logits are compared with
 * transformers'. Then a --spec profile's report and JSON name the plan, the slots and the draft. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "loader.h"
#include "testutil.h"

#define MAX_DRAFT 8

static struct gpu g;
static struct engine en;
static int S, T, V;
static const int32_t *tokens; /* [S][T] */
static const float *ref;      /* [S][T][V] */
static struct err e;

/* One step of n columns a sequence at t0..t0+n-1 (sequence s in slot s); returns the worst
 * max_rel over the sequences (infinity on a failed step or a non-finite logit). */
static double step(enum plan_kind kind, int t0, int n)
{
    int cols = S * n;
    struct step_shape sh = {.cols = cols, .n_runs = S, .n_logits = cols, .prefill = n > 1, .plan = kind};
    struct plan layers = {0}, head = {0};
    struct col_meta *cm = calloc((size_t)cols, sizeof *cm);
    struct run_meta *rm = calloc((size_t)S, sizeof *rm);
    uint32_t *idx = calloc((size_t)cols, 4);
    float *lg = malloc((size_t)cols * V * 4);
    for (int s = 0; s < S; s++) {
        rm[s] = (struct run_meta){(uint32_t)s, (uint32_t)(s * n), (uint32_t)n, (uint32_t)t0};
        for (int j = 0; j < n; j++) {
            int c = s * n + j;
            cm[c] = (struct col_meta){(uint32_t)tokens[s * T + t0 + j], (uint32_t)(t0 + j), (uint32_t)s, 1};
            idx[c] = (uint32_t)c;
        }
    }
    struct step_io io = {.cols = cm, .runs = rm, .logit_idx = idx, .logits = lg};
    int st = engine_build(&en, &sh, &layers, &head, &e);
    if (!st) st = engine_step(&en, &sh, &layers, &head, &io, 1, false, true, NULL, &e);
    T_CHECK(st == ST_OK, "%s step at %d x %d: %s", plan_kind_name(kind), t0, n, e.msg);
    double worst = st ? INFINITY : 0;
    for (int s = 0; !st && s < S; s++) {
        double dmax = 0, rmax = 0;
        for (int j = 0; j < n; j++)
            for (int v = 0; v < V; v++) {
                double o = lg[(size_t)(s * n + j) * V + v], r = ref[((size_t)s * T + t0 + j) * V + v];
                dmax = isfinite(o) ? fmax(dmax, fabs(o - r)) : INFINITY;
                rmax = fmax(rmax, fabs(r));
            }
        worst = fmax(worst, dmax / rmax);
    }
    plan_free(&layers);
    plan_free(&head);
    free(cm);
    free(rm);
    free(idx);
    free(lg);
    return worst;
}

static void commit_all(int j, int expect_pos)
{
    for (int s = 0; s < S; s++) {
        int st = engine_commit(&en, s, j, &e);
        T_CHECK(st == ST_OK, "commit slot %d j %d: %s", s, j, e.msg);
        T_CHECK(engine_slot_pos(&en, s) == (uint32_t)expect_pos, "slot %d at %u after commit, expected %d", s,
                engine_slot_pos(&en, s), expect_pos);
    }
}

/* decode 0..k-1; verify a draft of K1 at k; accept j1; [verify K2 at k+j1; accept j2;] decode to T. */
static void scenario(int k, int K1, int j1, int K2, int j2)
{
    T_CHECK(engine_reset(&en, &e) == ST_OK, "reset: %s", e.msg);
    double worst = 0;
    for (int t = 0; t < k; t++) worst = fmax(worst, step(PLAN_BATCH, t, 1));
    worst = fmax(worst, step(PLAN_SPEC, k, K1));
    int pos = k;
    if (j1 >= 0) commit_all(j1, pos += j1);
    if (K2 > 0) {
        worst = fmax(worst, step(PLAN_SPEC, pos, K2));
        commit_all(j2, pos += j2);
    }
    for (int t = pos; t < T; t++) worst = fmax(worst, step(PLAN_BATCH, t, 1));
    T_CHECK(worst <= 1e-3, "k %d draft %d accept %d, draft %d accept %d: max_rel %.3e", k, K1, j1, K2, j2, worst);
    printf("k %d draft %d accept %d, draft %d accept %d: max_rel %.3e\n", k, K1, j1, K2, j2, worst);
}

static void refusals(void)
{
    T_CHECK(engine_reset(&en, &e) == ST_OK, "reset: %s", e.msg);
    T_CHECK(engine_commit(&en, 0, 0, &e) == ST_USAGE && strstr(e.msg, "no uncommitted draft"),
            "commit without draft: %s", e.msg);
    T_CHECK(engine_commit(&en, S, 0, &e) == ST_USAGE && strstr(e.msg, "slot"), "commit past the slots: %s", e.msg);
    step(PLAN_SPEC, 0, 4);
    T_CHECK(engine_commit(&en, 0, 5, &e) == ST_USAGE && strstr(e.msg, "draft of 4"), "accept 5 of 4: %s", e.msg);
    T_CHECK(engine_commit(&en, 0, -1, &e) == ST_USAGE, "accept -1: %s", e.msg);
    T_CHECK(engine_commit(&en, 0, 4, &e) == ST_OK && engine_slot_pos(&en, 0) == 4, "accept 4 of 4: %s", e.msg);
    T_CHECK(engine_commit(&en, 0, 1, &e) == ST_USAGE, "a second commit of one draft: %s", e.msg);
    struct step_shape sh = {.cols = S * (MAX_DRAFT + 1), .n_runs = S, .prefill = true, .plan = PLAN_SPEC};
    struct plan p = {0};
    T_CHECK(engine_build(&en, &sh, &p, NULL, &e) != ST_OK && strstr(e.msg, "snapshots"), "draft past max: %s", e.msg);
    plan_free(&p);
}

/* The binary: a --spec profile's header and JSON shape. */
static void profile_json(const char *fx)
{
    static char out[1 << 16];
    char cmd[2048], json[512];
    snprintf(json, sizeof json, "%s/spec.json", t_tmpdir());
    snprintf(cmd, sizeof cmd, "%s --model %s/lfm2-tiny --full --spec --cols 6 --slots 2 --pos 3 --reps 1 --json %s",
             getenv("LFM2_BIN"), fx, json);
    int rc = t_run(cmd, out, sizeof out);
    T_CHECK(rc == 0 && strstr(out, "spec=true") && strstr(out, "plan spec: 2 slots × drafts of 3 tokens") &&
                strstr(out, "shortconv.snap") && strstr(out, "head.matmul"),
            "spec profile (exit %d)\n%s", rc, out);
    cJSON *j = t_json_file(json);
    const cJSON *plan = j ? t_json_at(j, "shape.plan") : NULL, *draft = j ? t_json_at(j, "shape.draft") : NULL;
    const cJSON *logits = j ? t_json_at(j, "shape.logits") : NULL;
    T_CHECK(plan && cJSON_IsString(plan) && !strcmp(plan->valuestring, "spec"), "shape.plan");
    T_CHECK(draft && cJSON_IsNumber(draft) && draft->valueint == 3, "shape.draft");
    T_CHECK(logits && cJSON_IsTrue(logits), "shape.logits: a verify wants every logit");
    cJSON_Delete(j);
}

/* The scenarios on one model of the fixtures (lfm2-tiny: short-conv windows; qwen35-tiny: DeltaNet
 * conv windows and delta-rule states). */
static void run_model(const char *fx, const char *model)
{
    char path[512];
    struct model_source src, gold;
    struct model_desc d;
    struct shard sd;
    struct dev_weights w = {0};
    printf("-- %s\n", model);
    snprintf(path, sizeof path, "%s/%s", fx, model);
    int st = source_open(&src, path, &e);
    if (!st) st = model_describe(&src, &d, &e);
    if (!st) st = shard_bind(&src, &d, 0, d.n_layers, &sd, &e);
    snprintf(path, sizeof path, "%s/%s/golden.safetensors", fx, model);
    if (!st) st = source_open(&gold, path, &e);
    if (!st) st = weights_upload(&g, &sd, 0, false, &w, &e);
    T_CHECK(st == ST_OK, "setup %s: %s", model, e.msg);
    if (st) return;
    const struct tensor_view *tk = source_find(&gold, "tokens"), *lg = source_find(&gold, "logits");
    S = (int)tk->shape[0];
    T = (int)tk->shape[1];
    V = d.vocab;
    int32_t *tok_copy = malloc(tk->n_bytes); /* the mapping is unaligned */
    float *ref_copy = malloc(lg->n_bytes);
    memcpy(tok_copy, tk->data, tk->n_bytes);
    memcpy(ref_copy, lg->data, lg->n_bytes);
    tokens = tok_copy;
    ref = ref_copy;
    st = engine_init_spec(&en, &g, &d, &sd, &w, S * T, S, T, S * T, MAX_DRAFT, &e);
    T_CHECK(st == ST_OK, "engine: %s", e.msg);
    if (!st) {
        scenario(4, 8, 0, 0, 0);  /* accept none: the committed entry was never written */
        scenario(4, 8, 3, 5, 5);  /* part, then a second draft from snapshot 3, all of it */
        scenario(4, 8, 8, 4, 2);  /* all: cur 8, the second draft's snapshots wrap to entries 0.. */
        scenario(4, 8, -1, 0, 0); /* no commit: the next batch step starts from snapshot 0 */
        scenario(8, 1, 1, 0, 0);  /* a draft of one */
        refusals();
        engine_free(&en);
    }
    free(tok_copy);
    free(ref_copy);
    weights_free(&w);
    shard_free(&sd);
    source_close(&gold);
    source_close(&src);
}

int main(int argc, char **argv)
{
    t_init(argc, argv);
    const char *fx = argc > 1 ? argv[1] : "tests/fixtures";
    int st = gpu_open(&g, -1, &e);
    T_CHECK(st == ST_OK, "gpu_open: %s", e.msg);
    if (st) return t_finish();
    T_CASE("lfm2", "", run_model(fx, "lfm2-tiny"));
    T_CASE("qwen35", "", run_model(fx, "qwen35-tiny"));
    if (getenv("LFM2_BIN")) T_CASE("profile_json", "", profile_json(fx));
    T_CHECK(gpu_close(&g, &e) == ST_OK, "gpu_close: %s", e.msg);
    return t_finish();
}
