/* golden.c - golden verify mode. */
#include "golden.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tuning.h"

#define GOLDEN_MAX_COLS 4096 /* S*T: the prefill shape runs them in one step, like --cols 4096 */

struct golden {
    struct model_source src;
    int S, T;
    int32_t *tokens;     /* [S][T] */
    float *in, *ref;     /* hidden.a [S][T][H] (a > 0); reference [S][T][width] */
    int width;           /* V (logits) or H (hidden.b) */
    char ref_name[32];
};

/* Copies an F32/I32 tensor of the expected shape out of the (unaligned) mapping. */
static int golden_tensor(const struct model_source *src, const char *name, enum dtype t, int n_dims,
                         const int64_t *shape, void **out, struct err *e)
{
    const struct tensor_view *v = source_find(src, name);
    if (!v) return err_set(e, ST_USAGE, "%s: golden has no tensor '%s'", src->path, name);
    bool ok = v->dtype == t && v->n_dims == n_dims;
    for (int i = 0; ok && i < n_dims; i++) ok = v->shape[i] == shape[i];
    if (!ok) {
        char want[64] = "", got[64] = "";
        for (int i = 0; i < n_dims; i++)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", i ? "," : "", (long long)shape[i]);
        for (int i = 0; i < v->n_dims; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? "," : "", (long long)v->shape[i]);
        return err_set(e, ST_USAGE, "%s: tensor '%s' is %s [%s], expected %s [%s] (does the golden belong to this model?)",
                       src->path, name, dtype_name(v->dtype), got, dtype_name(t), want);
    }
    *out = malloc(v->n_bytes ? v->n_bytes : 1);
    if (!*out) return err_set(e, ST_RUNTIME, "out of host memory reading %s", name);
    return tensor_read(v, 0, v->n_bytes, *out, e); /* pread: a shrunk file is an error, not SIGBUS */
}

/* A reference (or input) must be finite, and each sequence's reference not all zero: a check
 * against NaN or zeros cannot fail, so such a golden is a bad file. */
static int golden_check_values(const char *path, const char *name, const float *v, size_t n_seq,
                               size_t per_seq, struct err *e)
{
    for (size_t sq = 0; sq < n_seq; sq++) {
        double max = 0;
        for (size_t i = 0; i < per_seq; i++) {
            float x = v[sq * per_seq + i];
            if (!isfinite(x))
                return err_set(e, ST_USAGE,
                               "%s: tensor '%s' holds %g at sequence %zu, element %zu (expected "
                               "finite reference values)",
                               path, name, (double)x, sq, i);
            max = fmax(max, fabs(x));
        }
        if (!(max > 0))
            return err_set(e, ST_USAGE,
                           "%s: tensor '%s' is all zeros in sequence %zu (expected a real "
                           "reference: a check against zeros cannot fail)",
                           path, name, sq);
    }
    return ST_OK;
}

static void golden_free(struct golden *gd)
{
    free(gd->tokens);
    free(gd->in);
    free(gd->ref);
    source_close(&gd->src);
}

static int golden_open(struct golden *gd, const char *path, const struct model_desc *d, const struct shard *s,
                       struct err *e)
{
    memset(gd, 0, sizeof *gd);
    /* a missing golden is named as one (source_open would suggest a checkpoint or built-in) */
    struct stat fst;
    if (stat(path, &fst) != 0)
        return err_set(e, ST_USAGE, "--golden %s: the golden file is missing: %s (expected a golden .safetensors file)",
                       path, strerror(errno));
    if (S_ISDIR(fst.st_mode))
        return err_set(e, ST_USAGE, "--golden %s: is a folder (expected a golden .safetensors file)", path);
    int st = source_open(&gd->src, path, e);
    if (st) return st;
    const struct tensor_view *tok = source_find(&gd->src, "tokens");
    if (!tok || tok->n_dims != 2 || tok->dtype != DT_I32 || tok->shape[0] < 1 || tok->shape[1] < 2)
        return err_set(e, ST_USAGE, "%s: not a golden file (expected tensor 'tokens' I32 [S, T], T >= 2)", path);
    /* bounded before anything is allocated: the prefill shape runs all S*T columns in one step */
    int64_t S = tok->shape[0], T = tok->shape[1];
    int max_t = d->max_pos > 0 ? d->max_pos : GOLDEN_MAX_COLS;
    if (S > GOLDEN_MAX_COLS || T > max_t || S * T > GOLDEN_MAX_COLS)
        return err_set(e, ST_USAGE,
                       "%s: tokens is [%lld, %lld]: too large (expected S*T <= %d columns, the "
                       "most one step holds, and T <= %d%s)",
                       path, (long long)S, (long long)T, GOLDEN_MAX_COLS, max_t,
                       d->max_pos > 0 ? ", the model's max_position_embeddings" : "");
    gd->S = (int)S;
    gd->T = (int)T;
    int n_hidden = 0;
    for (int i = 0; i < gd->src.n_tensors; i++) n_hidden += !strncmp(gd->src.tensors[i].name, "hidden.", 7);
    if (n_hidden != d->n_layers + 1)
        return err_set(e, ST_USAGE, "%s: golden has %d hidden.i tensors for %d layers, the model has %d layers",
                       path, n_hidden, n_hidden - 1, d->n_layers);
    int64_t ts[2] = {gd->S, gd->T};
    if ((st = golden_tensor(&gd->src, "tokens", DT_I32, 2, ts, (void **)&gd->tokens, e))) return st;
    for (int i = 0; i < gd->S * gd->T; i++)
        if (gd->tokens[i] < 0 || gd->tokens[i] >= d->vocab)
            return err_set(e, ST_USAGE, "%s: token %d outside the model's vocabulary of %d", path, gd->tokens[i],
                           d->vocab);
    char name[32];
    int64_t hs[3] = {gd->S, gd->T, d->hidden}, ls[3] = {gd->S, gd->T, d->vocab};
    if (!s->first) {
        snprintf(name, sizeof name, "hidden.%d", s->a);
        if ((st = golden_tensor(&gd->src, name, DT_F32, 3, hs, (void **)&gd->in, e))) return st;
    }
    if (gd->in && (st = golden_check_values(path, name, gd->in, (size_t)gd->S, (size_t)gd->T * d->hidden, e)))
        return st;
    if (s->last) {
        snprintf(gd->ref_name, sizeof gd->ref_name, "logits");
        gd->width = d->vocab;
        st = golden_tensor(&gd->src, "logits", DT_F32, 3, ls, (void **)&gd->ref, e);
    } else {
        snprintf(gd->ref_name, sizeof gd->ref_name, "hidden.%d", s->b);
        gd->width = d->hidden;
        st = golden_tensor(&gd->src, gd->ref_name, DT_F32, 3, hs, (void **)&gd->ref, e);
    }
    if (st) return st;
    return golden_check_values(path, gd->ref_name, gd->ref, (size_t)gd->S, (size_t)gd->T * gd->width, e);
}

int golden_validate(const char *path, const struct model_desc *d, const struct shard *s, struct err *e)
{
    struct golden gd;
    int st = golden_open(&gd, path, d, s, e);
    golden_free(&gd);
    return st;
}

/* The plans of one step width (n columns a slot) and plan kind, built once and reused by every
 * step of it. */
struct golden_plans {
    int n; /* 0: unused */
    enum plan_kind kind;
    struct step_shape shape;
    struct plan layers, head;
};
#define GOLDEN_WIDTHS 3 /* decode (1), mixed (T/2), prefill (T); spec runs: decode (1), spec (m) */

static int golden_plans_for(struct engine *en, struct golden_plans *cache, int S, int n, enum plan_kind kind,
                            struct golden_plans **out, struct err *e)
{
    struct golden_plans *gp = NULL;
    for (int i = 0; i < GOLDEN_WIDTHS && !gp; i++)
        if ((cache[i].n == n && cache[i].kind == kind) || cache[i].n == 0) gp = &cache[i];
    CHECK(gp);
    *out = gp;
    if (gp->n == n) return ST_OK;
    gp->n = n;
    gp->kind = kind;
    int cols = S * n;
    gp->shape = (struct step_shape){
        .cols = cols, .n_runs = S, .n_logits = en->s->last ? cols : 0, .prefill = n > 1, .plan = kind};
    int st = engine_build(en, &gp->shape, &gp->layers, en->s->last ? &gp->head : NULL, e);
    /* Test hook: drop the step's last dispatch so its output stays unwritten (poisoned). */
    if (!st && tuning()->test_drop_last_dispatch) (gp->head.n ? &gp->head : &gp->layers)->n--;
    return st;
}

static void golden_plans_free(struct golden_plans *cache)
{
    for (int i = 0; i < GOLDEN_WIDTHS; i++) {
        plan_free(&cache[i].layers);
        plan_free(&cache[i].head);
    }
}

/* One step over columns (s, t) for s in 0..S-1, t in t0..t0+n-1: sequence s in slot s. */
static int golden_step(struct engine *en, struct golden_plans *cache, const struct golden *gd, int t0, int n,
                       enum plan_kind kind, float *out, struct err *e)
{
    const struct model_desc *d = en->d;
    int S = gd->S, cols = S * n;
    struct golden_plans *gp = NULL;
    struct col_meta *cm = calloc((size_t)cols, sizeof *cm);
    struct run_meta *rm = calloc((size_t)S, sizeof *rm);
    uint32_t *idx = calloc((size_t)cols, 4);
    float *hin = en->s->first ? NULL : malloc((size_t)cols * d->hidden * 4);
    float *res = malloc((size_t)cols * gd->width * 4);
    int st = (!cm || !rm || !idx || !res || (!en->s->first && !hin))
                 ? err_set(e, ST_RUNTIME, "out of host memory")
                 : golden_plans_for(en, cache, S, n, kind, &gp, e);
    if (!st) {
        for (int s = 0; s < S; s++) {
            rm[s] = (struct run_meta){.slot = (uint32_t)s, .first_col = (uint32_t)(s * n), .n_cols = (uint32_t)n,
                                      .pos0 = (uint32_t)t0};
            for (int j = 0; j < n; j++) {
                int c = s * n + j, t = t0 + j;
                cm[c] = (struct col_meta){.token = (uint32_t)gd->tokens[s * gd->T + t], .pos = (uint32_t)t,
                                          .slot = (uint32_t)s, .need_logit = en->s->last};
                idx[c] = (uint32_t)c;
                if (hin) memcpy(hin + (size_t)c * d->hidden, gd->in + ((size_t)s * gd->T + t) * d->hidden,
                                (size_t)d->hidden * 4);
            }
        }
        struct step_io io = {.cols = cm, .runs = rm, .logit_idx = idx, .hidden_in = hin,
                             .hidden_out = en->s->last ? NULL : res, .logits = en->s->last ? res : NULL};
        st = engine_step(en, &gp->shape, &gp->layers, en->s->last ? &gp->head : NULL, &io, 1, false, true, NULL, e);
    }
    if (!st)
        for (int s = 0; s < S; s++)
            for (int j = 0; j < n; j++)
                memcpy(out + ((size_t)s * gd->T + t0 + j) * gd->width, res + (size_t)(s * n + j) * gd->width,
                       (size_t)gd->width * 4);
    free(cm);
    free(rm);
    free(idx);
    free(hin);
    free(res);
    return st;
}

/* Runs the golden in one shape through plans of the given kind; out gets [S][T][width]. */
static int golden_shape(struct engine *en, struct golden_plans *cache, const struct golden *gd, const char *shape,
                        enum plan_kind plan, float *out, struct err *e)
{
    int st = engine_reset(en, e);
    if (st) return st;
    int T = gd->T, k = T / 2;
    if (!strcmp(shape, "prefill")) return golden_step(en, cache, gd, 0, T, plan, out, e);
    int t = 0;
    if (!strcmp(shape, "mixed")) {
        if ((st = golden_step(en, cache, gd, 0, k, plan, out, e))) return st;
        t = k;
    }
    for (; t < T; t++)
        if ((st = golden_step(en, cache, gd, t, 1, plan, out, e))) return st;
    return ST_OK;
}

/* Compares sequence sq at positions t0..t1-1 with the reference; prints one line, counts it. */
static void golden_check(FILE *out, const struct golden *gd, const float *res, const char *shape, int sq, int t0,
                         int t1, double tol, int *passed, int *checks)
{
    size_t base = ((size_t)sq * gd->T + t0) * gd->width, n = (size_t)(t1 - t0) * gd->width;
    double ref_max = 0, diff_max = 0;
    bool finite = true;
    for (size_t i = base; i < base + n; i++) {
        double r = gd->ref[i], o = res[i];
        if (!isfinite(o)) finite = false;
        ref_max = fmax(ref_max, fabs(r));
        diff_max = fmax(diff_max, fabs(o - r));
    }
    /* never against a zero or non-finite max|ref| (golden_open refuses such files; a zero stretch
     * of a sequence fails here rather than passing on 0/0) */
    double rel = finite && ref_max > 0 && isfinite(ref_max) ? diff_max / ref_max : NAN;
    bool ok = finite && rel <= tol;
    (*checks)++;
    *passed += ok;
    fprintf(out, "golden %s seq %d %s max_rel %.3e %s\n", shape, sq, gd->ref_name, rel, ok ? "ok" : "FAIL");
}

double golden_tolerance(enum plan_kind plan, enum precision prec)
{
    return plan == PLAN_WIDE && prec == PRECISION_SERVING ? GOLDEN_TOL_SERVING : GOLDEN_TOL_EXACT;
}

/* Draft length of the spec check: m = min(8, T - k) tokens after k = T/2 committed ones. */
static int golden_draft(int T) { return MIN(8, T - T / 2); }

/* The spec plan's check (docs/design.md "Golden verify mode", Plans): every sequence commits its first
 * k = T/2 tokens in decode steps, verifies a draft of m tokens (the golden's own continuation) in
 * one spec step, compared at k..k+m-1 ("spec"); accepts j = m/2, so its state must become snapshot
 * j, and decodes k+j..T-1 from there, compared ("rollback"). */
static int golden_spec(struct engine *en, struct golden_plans *cache, const struct golden *gd, float *res, FILE *out,
                       int *passed, int *checks, struct err *e)
{
    int st = engine_reset(en, e);
    int T = gd->T, k = T / 2, m = golden_draft(T), j = m / 2;
    for (int t = 0; !st && t < k; t++) st = golden_step(en, cache, gd, t, 1, PLAN_BATCH, res, e);
    if (!st) st = golden_step(en, cache, gd, k, m, PLAN_SPEC, res, e);
    for (int sq = 0; !st && sq < gd->S; sq++)
        golden_check(out, gd, res, "spec", sq, k, k + m, GOLDEN_TOL_EXACT, passed, checks);
    for (int sq = 0; !st && sq < gd->S; sq++) {
        st = engine_commit(en, sq, j, e);
        if (!st && engine_slot_pos(en, sq) != (uint32_t)(k + j))
            st = err_set(e, ST_RUNTIME, "commit: slot %d at position %u, expected %d", sq, engine_slot_pos(en, sq),
                         k + j);
    }
    for (int t = k + j; !st && t < T; t++) st = golden_step(en, cache, gd, t, 1, PLAN_BATCH, res, e);
    for (int sq = 0; !st && sq < gd->S; sq++)
        golden_check(out, gd, res, "rollback", sq, k + j, T, GOLDEN_TOL_EXACT, passed, checks);
    return st;
}

int golden_run(struct gpu *g, const struct model_desc *d, const struct shard *s, const struct dev_weights *w,
               const char *path, enum plan_kind plan, FILE *out, struct err *e)
{
    struct golden gd;
    double tol = golden_tolerance(plan, g->precision);
    int st = golden_open(&gd, path, d, s, e);
    /* the widest step's path (the prefill's S x T columns) and the one-token steps' (S columns):
     * automatic serving takes gemm_cm2 only from K_CM2_AUTO_COLS columns */
    enum gemm_path gp = GEMM_PATH_FMA, gp1 = GEMM_PATH_FMA;
    if (!st) st = k_gemm_path(g, gd.S * gd.T, &gp, e);
    if (!st) st = k_gemm_path(g, gd.S, &gp1, e);
    char narrow[64] = "";
    if (!st && gp1 != gp)
        snprintf(narrow, sizeof narrow, " from %d columns, %s below", K_CM2_AUTO_COLS, gemm_path_name(gp1));
    if (!st) /* the report's header line (docs/design.md: stdout starts with the device and driver) */
        fprintf(out, "lfm2-profile-stage %s  device: %s  driver: %s  golden %s: %d sequences of %d tokens, layers %d:%d, "
                     "%s plan, precision %s%s (tolerance %.0e), gemm path %s%s\n", LFM2_VERSION, g->props.deviceName,
                g->driver_name, path, gd.S, gd.T, s->a, s->b, plan_kind_name(plan), precision_name(g->precision),
                g->precision != PRECISION_EXACT && plan != PLAN_WIDE ? ": no kernel of this plan rounds" : "", tol,
                gemm_path_name(gp), narrow);
    struct engine en;
    float *res = NULL;
    if (!st)
        st = engine_init_spec(&en, g, d, s, w, gd.S * gd.T, gd.S, gd.T, gd.S * gd.T,
                              plan == PLAN_SPEC ? golden_draft(gd.T) : 0, e);
    if (!st && !(res = malloc((size_t)gd.S * gd.T * gd.width * 4))) st = err_set(e, ST_RUNTIME, "out of host memory");
    struct golden_plans cache[GOLDEN_WIDTHS] = {0};
    int passed = 0, checks = 0;
    static const char *shapes[] = {"decode", "prefill", "mixed"};
    if (!st && plan == PLAN_SPEC) st = golden_spec(&en, cache, &gd, res, out, &passed, &checks, e);
    for (size_t si = 0; !st && plan != PLAN_SPEC && si < ARRAY_LEN(shapes); si++) {
        if ((st = golden_shape(&en, cache, &gd, shapes[si], plan, res, e))) break;
        for (int sq = 0; sq < gd.S; sq++) golden_check(out, &gd, res, shapes[si], sq, 0, gd.T, tol, &passed, &checks);
    }
    if (!st) {
        fprintf(out, "golden: %d/%d checks passed\n", passed, checks);
        if (passed != checks)
            st = err_set(e, ST_GOLDEN, "%s: %d of %d golden checks failed (tolerance %.0e, precision %s)", path,
                         checks - passed, checks, tol, precision_name(g->precision));
    }
    golden_plans_free(cache);
    free(res);
    golden_free(&gd);
    return st;
}
