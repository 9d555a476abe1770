/* json_read.c - a profile read back from the JSON json_write.c writes (docs/design.md "JSON and compare";
 * json_write.c lists the fields beyond it). The reader needs only the docs/design.md fields and is strict
 * about the rest: types, unique keys, bounded counts. */
#include "profile.h"

#include "input.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_EXACT 9007199254740992.0 /* 2^53: larger JSON integers are not exact */
#define MODEL_MAX_LAYERS_JSON 100000       /* layer numbers in a profile */

/* ------------------------------------------------------------------------------------------------
 * Read: each getter records the first missing or mistyped field (its dotted path) and returns a
 * default, so the reader reads straight through and checks once at the end. Counts are bounded
 * before anything is allocated, and arrays are walked, never indexed (cJSON indexing is linear). */

#define READ_MAX_REPS 100000       /* --reps at most */
#define READ_MAX_DISPATCHES 65536  /* dispatches of one step */
#define READ_MAX_KINDS 4096        /* by_kind rows */
#define READ_MAX_SAMPLES (1 << 24) /* every reps[] entry of the file together */

struct reader {
    const char *path;
    char missing[256]; /* first bad field, "" when all good */
    const char *want;  /* what that field should have been */
    long samples;      /* reps[] entries read so far */
};

static const cJSON *field(struct reader *r, const cJSON *obj, const char *at, const char *name)
{
    const cJSON *v = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, name) : NULL;
    if (!v && !r->missing[0]) {
        snprintf(r->missing, sizeof r->missing, "%.120s%s%.120s", at, at[0] ? "." : "", name);
        r->want = "present";
    }
    return v;
}

static void bad(struct reader *r, const char *at, const char *name, const char *want)
{
    if (r->missing[0]) return;
    snprintf(r->missing, sizeof r->missing, "%.120s%s%.120s", at, at[0] ? "." : "", name);
    r->want = want;
}

static double get_num(struct reader *r, const cJSON *obj, const char *at, const char *name)
{
    const cJSON *v = field(r, obj, at, name);
    if (v && !cJSON_IsNumber(v)) bad(r, at, name, "a number");
    return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

/* An integer in [lo, hi]: 4.7 is not one. */
static double check_int(struct reader *r, const cJSON *v, const char *at, const char *name,
                        double lo, double hi)
{
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo ||
        v->valuedouble > hi) {
        static char want[96];
        snprintf(want, sizeof want, "an integer in %.0f..%.0f", lo, hi);
        bad(r, at, name, want);
        return 0;
    }
    return v->valuedouble;
}

static double get_int(struct reader *r, const cJSON *obj, const char *at, const char *name,
                      double lo, double hi)
{
    const cJSON *v = field(r, obj, at, name);
    return v ? check_int(r, v, at, name, lo, hi) : 0;
}

/* Optional fields: absent (or null) gives def; present with the wrong type is an error. */
static const cJSON *opt(const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, name) : NULL;
    return cJSON_IsNull(v) ? NULL : v;
}

static double opt_num(struct reader *r, const cJSON *obj, const char *at, const char *name,
                      double def)
{
    const cJSON *v = opt(obj, name);
    if (!v) return def;
    if (!cJSON_IsNumber(v)) bad(r, at, name, "a number");
    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

static double opt_int(struct reader *r, const cJSON *obj, const char *at, const char *name,
                      double hi)
{
    const cJSON *v = opt(obj, name);
    return v ? check_int(r, v, at, name, 0, hi) : 0;
}

static bool get_bool(struct reader *r, const cJSON *obj, const char *at, const char *name)
{
    const cJSON *v = field(r, obj, at, name);
    if (v && !cJSON_IsBool(v)) bad(r, at, name, "true or false");
    return cJSON_IsTrue(v);
}

static void get_str(struct reader *r, const cJSON *obj, const char *at, const char *name, char *dst,
                    size_t size)
{
    const cJSON *v = field(r, obj, at, name);
    if (v && !cJSON_IsString(v)) bad(r, at, name, "a string");
    snprintf(dst, size, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

static const cJSON *get_obj(struct reader *r, const cJSON *obj, const char *at, const char *name)
{
    const cJSON *v = field(r, obj, at, name);
    if (v && !cJSON_IsObject(v)) bad(r, at, name, "an object");
    return cJSON_IsObject(v) ? v : NULL;
}

static const cJSON *get_arr(struct reader *r, const cJSON *obj, const char *at, const char *name)
{
    const cJSON *v = field(r, obj, at, name);
    if (v && !cJSON_IsArray(v)) bad(r, at, name, "an array");
    return cJSON_IsArray(v) ? v : NULL;
}

/* Entries of an array, or -1 (and the field marked bad) when there are more than max. */
static int array_len(struct reader *r, const cJSON *arr, const char *at, const char *name, int max)
{
    int n = 0;
    for (const cJSON *it = arr ? arr->child : NULL; it; it = it->next)
        if (++n > max) {
            static char want[64];
            snprintf(want, sizeof want, "at most %d entries", max);
            bad(r, at, name, want);
            return -1;
        }
    return n;
}

static struct timing get_timing(struct reader *r, const cJSON *obj, const char *at,
                                const char *name)
{
    char here[256];
    snprintf(here, sizeof here, "%s%s%s", at, at[0] ? "." : "", name);
    const cJSON *o = get_obj(r, obj, at, name);
    double mean = get_num(r, o, here, "mean"), median = get_num(r, o, here, "median");
    double min = get_num(r, o, here, "min");
    const cJSON *reps = get_arr(r, o, here, "reps");
    int n = array_len(r, reps, here, "reps", READ_MAX_REPS);
    if (n > 0 && r->samples + n > READ_MAX_SAMPLES) {
        bad(r, here, "reps", "at most 16777216 samples in the whole file");
        n = -1;
    }
    struct timing t = {0};
    if (n < 0 || r->missing[0]) return t; /* the read fails anyway: allocate nothing */
    r->samples += n;
    double *s = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    CHECK(s);
    int i = 0;
    for (const cJSON *v = reps->child; v; v = v->next, i++) {
        if (!cJSON_IsNumber(v)) bad(r, here, "reps[]", "numbers");
        s[i] = cJSON_IsNumber(v) ? v->valuedouble : 0.0;
    }
    t = timing_from(s, n);
    free(s);
    /* keep the written statistics: they are what the writer reported */
    t.mean = mean;
    t.median = median;
    t.min = min;
    return t;
}

static void read_dispatch(struct reader *r, const cJSON *o, int i, struct prof_dispatch *d)
{
    char at[64];
    snprintf(at, sizeof at, "dispatches[%d]", i);
    d->index = (int)get_int(r, o, at, "index", 0, INT32_MAX);
    get_str(r, o, at, "kind", d->kind, sizeof d->kind);
    d->layer = (int)get_int(r, o, at, "layer", -1, MODEL_MAX_LAYERS_JSON);
    get_str(r, o, at, "op", d->op, sizeof d->op);
    const cJSON *g = get_arr(r, o, at, "groups");
    if (g && array_len(r, g, at, "groups", 3) != 3) bad(r, at, "groups", "3 integers");
    int k = 0;
    for (const cJSON *v = g ? g->child : NULL; v && k < 3; v = v->next, k++)
        d->groups[k] = (uint32_t)check_int(r, v, at, "groups", 0, UINT32_MAX);
    d->bytes = (uint64_t)get_int(r, o, at, "bytes", 0, JSON_MAX_EXACT);
    d->kv_bytes = (uint64_t)opt_int(r, o, at, "kv_bytes", JSON_MAX_EXACT); /* files from before it: 0 */
    d->flops = (uint64_t)opt_int(r, o, at, "flops", JSON_MAX_EXACT);           /* before FLOP counts: 0 */
    d->flops_exec = (uint64_t)opt_int(r, o, at, "flops_exec", JSON_MAX_EXACT);
    if (opt(o, "pipeline")) { /* files from before the field have neither */
        get_str(r, o, at, "pipeline", d->pipeline, sizeof d->pipeline);
        const cJSON *s = get_arr(r, o, at, "spec");
        d->n_spec = array_len(r, s, at, "spec", PROF_MAX_SPEC);
        k = 0;
        for (const cJSON *v = s ? s->child : NULL; v && k < PROF_MAX_SPEC; v = v->next, k++)
            d->spec[k] = (uint32_t)check_int(r, v, at, "spec", 0, UINT32_MAX);
        if (d->n_spec < 0) d->n_spec = 0;
    }
    d->us = get_timing(r, o, at, "us");
    d->start_us = opt_num(r, o, at, "start_us", 0.0);
}

static void read_kind(struct reader *r, const cJSON *o, int i, struct prof_kind *k)
{
    char at[64];
    snprintf(at, sizeof at, "by_kind[%d]", i);
    get_str(r, o, at, "kind", k->kind, sizeof k->kind);
    k->n = (int)get_int(r, o, at, "n", 0, INT32_MAX);
    k->us = get_timing(r, o, at, "us");
    k->share = get_num(r, o, at, "share");
    k->gbps = get_num(r, o, at, "gbps");
    k->bw_share = opt_num(r, o, at, "bw_share", 0.0);
    k->bytes = (uint64_t)opt_int(r, o, at, "bytes", JSON_MAX_EXACT);
    k->kv_bytes = (uint64_t)opt_int(r, o, at, "kv_bytes", JSON_MAX_EXACT);
    k->flops = (uint64_t)opt_int(r, o, at, "flops", JSON_MAX_EXACT);
    k->flops_exec = (uint64_t)opt_int(r, o, at, "flops_exec", JSON_MAX_EXACT);
    k->tflops = opt_num(r, o, at, "tflops", 0.0);
    k->roof_share = opt_num(r, o, at, "roof_share", 0.0);
}

static void read_gap_probe(struct reader *r, const cJSON *root, struct profile *p)
{
    struct gap_probe *g = &p->gap_probe;
    const cJSON *o = field(r, root, "", "gap_probe");
    if (o && !cJSON_IsNull(o)) {
        o = get_obj(r, root, "", "gap_probe");
        g->ran = true;
        g->wall1_us = get_num(r, o, "gap_probe", "wall1_us");
        g->wall2_us = get_num(r, o, "gap_probe", "wall2_us");
        g->marginal_us = get_num(r, o, "gap_probe", "marginal_us");
        g->kernel_sum_us = get_num(r, o, "gap_probe", "kernel_sum_us");
        g->gaps_us = get_num(r, o, "gap_probe", "gaps_us");
        g->gaps_share = get_num(r, o, "gap_probe", "gaps_share");
        g->fixed_us = get_num(r, o, "gap_probe", "fixed_us");
        char verdict[32];
        get_str(r, o, "gap_probe", "verdict", verdict, sizeof verdict);
        g->per_dispatch = strcmp(verdict, "per-dispatch") == 0;
        for (int v = VERDICT_UNKNOWN; v <= VERDICT_INCONCLUSIVE; v++)
            if (!strcmp(verdict, verdict_name((enum verdict)v))) g->verdict = (enum verdict)v;
        g->dispatches = (int)opt_int(r, o, "gap_probe", "dispatches", INT32_MAX); /* absent before bench/31 */
        g->barriers = (int)opt_int(r, o, "gap_probe", "barriers", INT32_MAX);
    }
    const cJSON *h = field(r, root, "", "lm_head");
    if (!h || cJSON_IsNull(h)) return;
    h = get_obj(r, root, "", "lm_head");
    g->head = true;
    g->head_wall1_us = get_num(r, h, "lm_head", "wall1_us");
    g->head_wall2_us = get_num(r, h, "lm_head", "wall2_us");
    g->marginal_head_us = get_num(r, h, "lm_head", "marginal_head_us");
    g->lm_head_us = get_num(r, h, "lm_head", "lm_head_us");
    g->lm_head_share = get_num(r, h, "lm_head", "lm_head_share");
    g->head_kernel_sum_us = get_num(r, h, "lm_head", "head_kernel_sum_us");
    g->head_gbps = get_num(r, h, "lm_head", "gbps");
    g->head_gbps_f16 = get_num(r, h, "lm_head", "gbps_f16");
    g->head_gbps_q4_0 = get_num(r, h, "lm_head", "gbps_q4_0");
    g->head_bytes_real = (uint64_t)get_int(r, h, "lm_head", "bytes", 0, JSON_MAX_EXACT);
    g->head_bytes_f16 = (uint64_t)get_int(r, h, "lm_head", "bytes_f16", 0, JSON_MAX_EXACT);
    g->head_bytes_q4_0 = (uint64_t)get_int(r, h, "lm_head", "bytes_q4_0", 0, JSON_MAX_EXACT);
    g->disagree = get_bool(r, h, "lm_head", "disagree");
}

/* "tune" back into key=value,... (optional: files written before it carry none). */
static void read_tune(struct reader *r, const cJSON *root, char *dst, size_t size)
{
    size_t used = 0;
    dst[0] = 0;
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "tune"), *v;
    if (o && !cJSON_IsObject(o)) bad(r, "", "tune", "an object");
    if (!cJSON_IsObject(o)) return;
    cJSON_ArrayForEach(v, o)
    {
        int n = cJSON_IsNumber(v) ? snprintf(dst + used, size - used, "%s%s=%.0f", used ? "," : "", v->string, v->valuedouble)
                : cJSON_IsString(v) ? snprintf(dst + used, size - used, "%s%s=%s", used ? "," : "", v->string, v->valuestring)
                                    : (bad(r, "tune", v->string, "a number or a string"), 0);
        if (n < 0 || (size_t)n >= size - used) break;
        used += (size_t)n;
    }
}

static void read_profile(struct reader *r, const cJSON *root, struct profile *p)
{
    get_str(r, root, "", "tool", p->tool, sizeof p->tool);
    get_str(r, root, "", "version", p->version, sizeof p->version);
    get_str(r, root, "", "args", p->args, sizeof p->args);
    read_tune(r, root, p->tune, sizeof p->tune);
    const cJSON *hooks = cJSON_GetObjectItemCaseSensitive(root, "test_hooks"); /* optional: added later */
    if (hooks && !cJSON_IsString(hooks)) bad(r, "", "test_hooks", "a string");
    snprintf(p->test_hooks, sizeof p->test_hooks, "%s", cJSON_IsString(hooks) ? hooks->valuestring : "");
    /* optional: files written before --precision ran exact, the only precision then */
    const cJSON *prec = cJSON_GetObjectItemCaseSensitive(root, "precision");
    enum precision pr = PRECISION_EXACT;
    if (prec && !(cJSON_IsString(prec) && precision_parse(prec->valuestring, &pr)))
        bad(r, "", "precision", "\"exact\" or \"serving\"");
    snprintf(p->precision, sizeof p->precision, "%s", precision_name(pr));

    const cJSON *o = get_obj(r, root, "", "device");
    get_str(r, o, "device", "name", p->device.name, sizeof p->device.name);
    get_str(r, o, "device", "driver", p->device.driver, sizeof p->device.driver);
    get_str(r, o, "device", "api", p->device.api, sizeof p->device.api);
    p->device.timestamp_period_ns = get_num(r, o, "device", "timestamp_period_ns");
    p->device.timestamp_valid_bits = (uint32_t)get_int(r, o, "device", "timestamp_valid_bits", 0, 64);
    const cJSON *v = opt(o, "has_timestamps"); /* optional */
    if (v && !cJSON_IsBool(v)) bad(r, "device", "has_timestamps", "true or false");
    p->device.has_timestamps = v ? cJSON_IsTrue(v) : p->device.timestamp_valid_bits > 0;
    p->device.copy_gbps = opt_num(r, o, "device", "copy_gbps", 0.0);
    p->device.roof_tflops = opt_num(r, o, "device", "roof_tflops", 0.0); /* files before the roof: 0 */
    if (opt(o, "roof_path")) get_str(r, o, "device", "roof_path", p->device.roof_path, sizeof p->device.roof_path);
    v = opt(o, "gemm_path"); /* optional: added later */
    if (v && !cJSON_IsString(v)) bad(r, "device", "gemm_path", "a string");
    snprintf(p->device.gemm_path, sizeof p->device.gemm_path, "%s", cJSON_IsString(v) ? v->valuestring : "");

    o = get_obj(r, root, "", "model");
    get_str(r, o, "model", "family", p->model.family, sizeof p->model.family);
    p->model.n_layers = (int)get_int(r, o, "model", "n_layers", 0, MODEL_MAX_LAYERS_JSON);
    p->model.hidden = (int)get_int(r, o, "model", "hidden", 0, INT32_MAX);
    p->model.vocab = (int)get_int(r, o, "model", "vocab", 0, INT32_MAX);
    get_str(r, o, "model", "dtype", p->model.dtype, sizeof p->model.dtype);
    get_str(r, o, "model", "source", p->model.source, sizeof p->model.source);

    o = get_obj(r, root, "", "shard");
    p->shard.a = (int)get_int(r, o, "shard", "a", 0, MODEL_MAX_LAYERS_JSON);
    p->shard.b = (int)get_int(r, o, "shard", "b", 0, MODEL_MAX_LAYERS_JSON);

    o = get_obj(r, root, "", "shape");
    get_str(r, o, "shape", "plan", p->shape.plan, sizeof p->shape.plan);
    /* optional: files before the auto plan */
    if (opt(o, "plan_auto")) p->shape.plan_auto = get_bool(r, o, "shape", "plan_auto");
    p->shape.gemm_min_cols = (int)opt_int(r, o, "shape", "gemm_min_cols", 4096);
    p->shape.cols = (int)get_int(r, o, "shape", "cols", 0, INT32_MAX);
    p->shape.pos = (int)get_int(r, o, "shape", "pos", 0, INT32_MAX);
    p->shape.slots = (int)get_int(r, o, "shape", "slots", 0, INT32_MAX);
    p->shape.draft = (int)opt_int(r, o, "shape", "draft", INT32_MAX); /* optional: before --spec */
    p->shape.logits = get_bool(r, o, "shape", "logits");
    /* optional: files before the prefill shape took one logit a slot gave every column one */
    p->shape.logit_cols = (int)opt_int(r, o, "shape", "logit_cols", INT32_MAX);
    if (!cJSON_GetObjectItemCaseSensitive(o, "logit_cols")) p->shape.logit_cols = p->shape.logits ? p->shape.cols : 0;

    p->busy_us = get_timing(r, root, "", "busy_us");
    p->head_us = get_timing(r, root, "", "head_us");
    p->wall_us = get_timing(r, root, "", "wall_us");
    p->tok_s = opt_num(r, root, "", "tok_s", 0.0);
    v = cJSON_GetObjectItemCaseSensitive(root, "timing"); /* optional: files before issue 13 */
    p->timing = cJSON_IsString(v) && !strcmp(v->valuestring, "sampled") ? TIMING_SAMPLED
                : cJSON_IsString(v) && !strcmp(v->valuestring, "none")  ? TIMING_NONE
                                                                         : TIMING_FULL;

    const cJSON *ds = get_arr(r, root, "", "dispatches");
    int n = array_len(r, ds, "", "dispatches", READ_MAX_DISPATCHES);
    if (n < 0 || r->missing[0]) return;
    p->dispatches = calloc((size_t)(n > 0 ? n : 1), sizeof *p->dispatches);
    CHECK(p->dispatches);
    p->n_dispatches = n;
    int i = 0;
    for (const cJSON *it = ds->child; it && !r->missing[0]; it = it->next, i++)
        read_dispatch(r, it, i, &p->dispatches[i]);

    const cJSON *ks = get_arr(r, root, "", "by_kind");
    n = array_len(r, ks, "", "by_kind", READ_MAX_KINDS);
    if (n < 0 || r->missing[0]) return;
    p->by_kind = calloc((size_t)(n > 0 ? n : 1), sizeof *p->by_kind);
    CHECK(p->by_kind);
    p->n_kinds = n;
    i = 0;
    for (const cJSON *it = ks->child; it && !r->missing[0]; it = it->next, i++)
        read_kind(r, it, i, &p->by_kind[i]);

    read_gap_probe(r, root, p);
}

int report_json_parse(const char *path, const char *text, size_t len, struct profile *p,
                      struct err *e)
{
    memset(p, 0, sizeof *p);
    cJSON *root = NULL;
    int st = input_json_parse(path, "the profile JSON", text, len, &root, e);
    if (st) return st;
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return err_set(e, ST_USAGE,
                       "%s: top level is not a JSON object; expected a profile written "
                       "by --json",
                       path);
    }
    if (cJSON_GetObjectItemCaseSensitive(root, "pipeline")) {
        cJSON_Delete(root);
        return err_set(e, ST_USAGE, "%s: a --stages pipeline file; compare it with another pipeline file", path);
    }
    st = report_json_profile_read(path, root, p, e);
    cJSON_Delete(root);
    return st;
}

int report_json_profile_read(const char *path, const struct cJSON *obj, struct profile *p, struct err *e)
{
    memset(p, 0, sizeof *p);
    struct reader r = {.path = path};
    read_profile(&r, obj, p);
    if (r.missing[0]) {
        profile_free(p);
        return err_set(e, ST_USAGE,
                       "%s: field '%s' missing or wrong: expected %s (a profile written "
                       "by --json)",
                       path, r.missing, r.want);
    }
    return ST_OK;
}

int report_json_read(const char *path, struct profile *p, struct err *e)
{
    memset(p, 0, sizeof *p);
    char *text = NULL;
    size_t len = 0;
    int st = input_read(path, "the profile JSON", INPUT_JSON_MAX, &text, &len, e);
    if (st) return st;
    st = report_json_parse(path, text, len, p, e);
    free(text);
    return st;
}
