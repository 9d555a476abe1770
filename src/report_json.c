/* report_json.c - the profile as one JSON object (DESIGN.md "JSON and compare") and back.
 *
 * Every timing is {mean, median, min, p10, p90, mad, median_err, reps: [...]}. Field names are a
 * contract with saved baselines and scripts: add fields freely, never rename. Fields beyond
 * DESIGN.md: device {has_timestamps, copy_gbps}, tok_s, dispatches[].start_us, by_kind[] {bytes,
 * bw_share, share_of}, gap_probe {ran, statistic, n_reps, wall1, wall2, <figure>_err,
 * <figure>_within_noise, timestamps_add, timestamp_pair_us}, lm_head (null when the head was not
 * probed) {lm_head_err, wall1, wall2}, timing, sample_stride, steps_timed, floor_bytes, floor_us,
 * attribution (null unless --attribution). The reader needs only the DESIGN.md fields. */
#include "profile.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------------
 * Write */

/* cJSON prints 15 significant digits when they come within an epsilon, which loses the last bits
 * of a sample; a baseline must read back exactly, so numbers are printed in the shortest form
 * that strtod turns back into the same double. Not finite: null. */
cJSON *report_json_number(double v)
{
    if (!isfinite(v)) return cJSON_CreateNull();
    char buf[40];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) break;
    }
    return cJSON_CreateRaw(buf);
}

static void add_num(cJSON *o, const char *name, double v)
{
    cJSON_AddItemToObject(o, name, report_json_number(v));
}

static cJSON *timing_json(const struct timing *t)
{
    cJSON *o = cJSON_CreateObject();
    add_num(o, "mean", t->mean);
    add_num(o, "median", t->median);
    add_num(o, "min", t->min);
    add_num(o, "p10", t->p10);
    add_num(o, "p90", t->p90);
    add_num(o, "mad", t->mad);
    add_num(o, "median_err", est_median(t).u);
    cJSON *reps = cJSON_AddArrayToObject(o, "reps");
    for (int i = 0; i < t->n_reps; i++)
        cJSON_AddItemToArray(reps, report_json_number(t->reps[i]));
    return o;
}

/* A derived figure: value, error and whether it is within noise. */
static void add_est(cJSON *o, const char *name, struct est x)
{
    char key[64];
    add_num(o, name, x.v);
    snprintf(key, sizeof key, "%.40s_err", name);
    add_num(o, key, x.u);
    snprintf(key, sizeof key, "%.40s_within_noise", name);
    cJSON_AddBoolToObject(o, key, est_within_noise(x));
}

static cJSON *gap_probe_json(const struct profile *p)
{
    const struct gap_probe *g = &p->gap_probe;
    if (!g->ran) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ran", true);
    add_num(o, "wall1_us", g->wall1_us);
    add_num(o, "wall2_us", g->wall2_us);
    add_num(o, "marginal_us", g->marginal_us);
    add_num(o, "kernel_sum_us", g->kernel_sum_us);
    add_num(o, "gaps_us", g->gaps_us);
    add_num(o, "gaps_share", g->gaps_share);
    add_num(o, "fixed_us", g->fixed_us);
    cJSON_AddStringToObject(o, "verdict", verdict_name(g->verdict));
    cJSON_AddStringToObject(o, "statistic", "median");
    add_num(o, "n_reps", g->n_reps);
    cJSON_AddItemToObject(o, "wall1", timing_json(&g->w1));
    cJSON_AddItemToObject(o, "wall2", timing_json(&g->w2));
    add_est(o, "marginal", g->marginal);
    add_est(o, "gaps", g->gaps);
    add_est(o, "fixed", g->fixed);
    add_est(o, "timestamps_add", g->ts_add);
    add_num(o, "timestamp_pair_us", g->ts_pair_us);
    return o;
}

static cJSON *lm_head_json(const struct gap_probe *g)
{
    if (!g->ran || !g->head) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    add_num(o, "wall1_us", g->head_wall1_us);
    add_num(o, "wall2_us", g->head_wall2_us);
    add_num(o, "marginal_head_us", g->marginal_head_us);
    add_num(o, "lm_head_us", g->lm_head_us);
    add_num(o, "lm_head_share", g->lm_head_share);
    add_num(o, "head_kernel_sum_us", g->head_kernel_sum_us);
    add_num(o, "gbps", g->head_gbps);
    add_num(o, "gbps_f16", g->head_gbps_f16);
    add_num(o, "gbps_q4_0", g->head_gbps_q4_0);
    add_num(o, "bytes", (double)g->head_bytes_real);
    add_num(o, "bytes_f16", (double)g->head_bytes_f16);
    add_num(o, "bytes_q4_0", (double)g->head_bytes_q4_0);
    cJSON_AddBoolToObject(o, "disagree", g->disagree);
    add_est(o, "lm_head", g->lm_head);
    cJSON_AddItemToObject(o, "wall1", timing_json(&g->hw1));
    cJSON_AddItemToObject(o, "wall2", timing_json(&g->hw2));
    return o;
}

static cJSON *attribution_json(const struct prof_attribution *a)
{
    if (!a->ran) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "group_by", a->by_op ? "kind_op" : "kind");
    add_num(o, "repeat", a->repeat);
    cJSON_AddItemToObject(o, "base_us", timing_json(&a->base_us));
    cJSON *rows = cJSON_AddArrayToObject(o, "rows");
    for (int i = 0; i < a->n_rows; i++) {
        const struct prof_attrib *r = &a->rows[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "kind", r->kind);
        cJSON_AddStringToObject(x, "op", r->op);
        add_num(x, "n", r->n);
        cJSON_AddBoolToObject(x, "attributable", r->attributable);
        cJSON_AddItemToObject(x, "us", timing_json(&r->us));
        add_est(x, "diff", r->diff);
        add_num(x, "ts_us", r->ts_us);
        cJSON_AddBoolToObject(x, "ts_inflated", r->ts_inflated);
        cJSON_AddItemToArray(rows, x);
    }
    add_est(o, "sum", a->sum);
    add_est(o, "marginal", a->marginal);
    add_est(o, "closure", a->closure);
    add_num(o, "closure_share", a->closure_share);
    return o;
}

static cJSON *dispatch_json(const struct prof_dispatch *d)
{
    cJSON *o = cJSON_CreateObject();
    add_num(o, "index", d->index);
    cJSON_AddStringToObject(o, "kind", d->kind);
    add_num(o, "layer", d->layer);
    cJSON_AddStringToObject(o, "op", d->op);
    cJSON *g = cJSON_AddArrayToObject(o, "groups");
    for (int i = 0; i < 3; i++)
        cJSON_AddItemToArray(g, report_json_number(d->groups[i]));
    add_num(o, "bytes", (double)d->bytes);
    cJSON_AddItemToObject(o, "us", timing_json(&d->us));
    add_num(o, "start_us", d->start_us);
    return o;
}

static cJSON *kind_json(const struct prof_kind *k)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", k->kind);
    add_num(o, "n", k->n);
    cJSON_AddItemToObject(o, "us", timing_json(&k->us));
    add_num(o, "share", k->share);
    cJSON_AddStringToObject(o, "share_of", prof_kind_is_head(k->kind) ? "head_us" : "busy_us");
    add_num(o, "gbps", k->gbps);
    add_num(o, "bw_share", k->bw_share);
    add_num(o, "bytes", (double)k->bytes);
    return o;
}

static cJSON *profile_json(const struct profile *p)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "tool", p->tool);
    cJSON_AddStringToObject(root, "version", p->version);
    cJSON_AddStringToObject(root, "args", p->args);

    cJSON *dev = cJSON_AddObjectToObject(root, "device");
    cJSON_AddStringToObject(dev, "name", p->device.name);
    cJSON_AddStringToObject(dev, "driver", p->device.driver);
    cJSON_AddStringToObject(dev, "api", p->device.api);
    add_num(dev, "timestamp_period_ns", p->device.timestamp_period_ns);
    add_num(dev, "timestamp_valid_bits", p->device.timestamp_valid_bits);
    cJSON_AddBoolToObject(dev, "has_timestamps", p->device.has_timestamps);
    add_num(dev, "copy_gbps", p->device.copy_gbps);

    cJSON *m = cJSON_AddObjectToObject(root, "model");
    cJSON_AddStringToObject(m, "family", p->model.family);
    add_num(m, "n_layers", p->model.n_layers);
    add_num(m, "hidden", p->model.hidden);
    add_num(m, "vocab", p->model.vocab);
    cJSON_AddStringToObject(m, "dtype", p->model.dtype);
    cJSON_AddStringToObject(m, "source", p->model.source);

    cJSON *sh = cJSON_AddObjectToObject(root, "shard");
    add_num(sh, "a", p->shard.a);
    add_num(sh, "b", p->shard.b);

    cJSON *s = cJSON_AddObjectToObject(root, "shape");
    cJSON_AddStringToObject(s, "plan", p->shape.plan);
    add_num(s, "cols", p->shape.cols);
    add_num(s, "pos", p->shape.pos);
    add_num(s, "slots", p->shape.slots);
    add_num(s, "draft", p->shape.draft);
    cJSON_AddBoolToObject(s, "logits", p->shape.logits);

    cJSON_AddItemToObject(root, "busy_us", timing_json(&p->busy_us));
    cJSON_AddItemToObject(root, "head_us", timing_json(&p->head_us));
    cJSON_AddItemToObject(root, "wall_us", timing_json(&p->wall_us));
    add_num(root, "tok_s", p->tok_s);

    cJSON *ds = cJSON_AddArrayToObject(root, "dispatches");
    for (int i = 0; i < p->n_dispatches; i++)
        cJSON_AddItemToArray(ds, dispatch_json(&p->dispatches[i]));
    cJSON *ks = cJSON_AddArrayToObject(root, "by_kind");
    for (int i = 0; i < p->n_kinds; i++)
        cJSON_AddItemToArray(ks, kind_json(&p->by_kind[i]));

    cJSON_AddItemToObject(root, "gap_probe", gap_probe_json(p));
    cJSON_AddItemToObject(root, "lm_head", lm_head_json(&p->gap_probe));
    cJSON_AddStringToObject(root, "timing", timing_mode_name(p->timing));
    add_num(root, "sample_stride", p->sample_stride);
    add_num(root, "steps_timed", p->steps_timed);
    add_num(root, "floor_bytes", (double)p->floor_bytes);
    add_num(root, "floor_us", p->floor_us);
    cJSON_AddItemToObject(root, "attribution", attribution_json(&p->attribution));
    return root;
}

int report_json_save(const char *path, const char *flag, struct cJSON *root, bool pretty,
                     struct err *e)
{
    char *text = pretty ? cJSON_Print(root) : cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!text)
        return err_set(e, ST_RUNTIME, "%s %s: out of memory formatting the JSON", flag, path);
    FILE *f = fopen(path, "w");
    if (!f) {
        int rc = err_set(e, ST_RUNTIME, "%s %s: cannot open for writing: %s", flag, path,
                         strerror(errno));
        cJSON_free(text);
        return rc;
    }
    size_t n = strlen(text);
    bool ok = fwrite(text, 1, n, f) == n && fputc('\n', f) != EOF;
    ok = (fclose(f) == 0) && ok;
    cJSON_free(text);
    if (!ok) return err_set(e, ST_RUNTIME, "%s %s: write failed (disk full?)", flag, path);
    return ST_OK;
}

int report_json_write(const char *path, const struct profile *p, struct err *e)
{
    return report_json_save(path, "--json", profile_json(p), true, e);
}

/* ------------------------------------------------------------------------------------------------
 * Read: each getter records the first missing or mistyped field (its dotted path) and returns a
 * default, so the reader reads straight through and checks once at the end. */

struct reader {
    const char *path;
    char missing[256]; /* first bad field, "" when all good */
    const char *want;  /* what that field should have been */
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

static struct timing get_timing(struct reader *r, const cJSON *obj, const char *at,
                                const char *name)
{
    char here[256];
    snprintf(here, sizeof here, "%s%s%s", at, at[0] ? "." : "", name);
    const cJSON *o = get_obj(r, obj, at, name);
    double mean = get_num(r, o, here, "mean"), median = get_num(r, o, here, "median");
    double min = get_num(r, o, here, "min");
    const cJSON *reps = get_arr(r, o, here, "reps");
    int n = cJSON_GetArraySize(reps);
    double *s = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    CHECK(s);
    for (int i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetArrayItem(reps, i);
        if (!cJSON_IsNumber(v)) bad(r, here, "reps[]", "numbers");
        s[i] = cJSON_IsNumber(v) ? v->valuedouble : 0.0;
    }
    struct timing t = timing_from(s, n);
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
    d->index = (int)get_num(r, o, at, "index");
    get_str(r, o, at, "kind", d->kind, sizeof d->kind);
    d->layer = (int)get_num(r, o, at, "layer");
    get_str(r, o, at, "op", d->op, sizeof d->op);
    const cJSON *g = get_arr(r, o, at, "groups");
    if (g && cJSON_GetArraySize(g) != 3) bad(r, at, "groups", "3 numbers");
    for (int k = 0; k < 3 && g; k++) {
        const cJSON *v = cJSON_GetArrayItem(g, k);
        d->groups[k] = cJSON_IsNumber(v) ? (uint32_t)v->valuedouble : 0;
    }
    d->bytes = (uint64_t)get_num(r, o, at, "bytes");
    d->us = get_timing(r, o, at, "us");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "start_us"); /* optional */
    d->start_us = cJSON_IsNumber(st) ? st->valuedouble : 0.0;
}

static void read_kind(struct reader *r, const cJSON *o, int i, struct prof_kind *k)
{
    char at[64];
    snprintf(at, sizeof at, "by_kind[%d]", i);
    get_str(r, o, at, "kind", k->kind, sizeof k->kind);
    k->n = (int)get_num(r, o, at, "n");
    k->us = get_timing(r, o, at, "us");
    k->share = get_num(r, o, at, "share");
    k->gbps = get_num(r, o, at, "gbps");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "bw_share"); /* optional */
    k->bw_share = cJSON_IsNumber(v) ? v->valuedouble : 0.0;
    v = cJSON_GetObjectItemCaseSensitive(o, "bytes");
    k->bytes = cJSON_IsNumber(v) ? (uint64_t)v->valuedouble : 0;
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
    g->head_bytes_real = (uint64_t)get_num(r, h, "lm_head", "bytes");
    g->head_bytes_f16 = (uint64_t)get_num(r, h, "lm_head", "bytes_f16");
    g->head_bytes_q4_0 = (uint64_t)get_num(r, h, "lm_head", "bytes_q4_0");
    g->disagree = get_bool(r, h, "lm_head", "disagree");
}

static void read_profile(struct reader *r, const cJSON *root, struct profile *p)
{
    get_str(r, root, "", "tool", p->tool, sizeof p->tool);
    get_str(r, root, "", "version", p->version, sizeof p->version);
    get_str(r, root, "", "args", p->args, sizeof p->args);

    const cJSON *o = get_obj(r, root, "", "device");
    get_str(r, o, "device", "name", p->device.name, sizeof p->device.name);
    get_str(r, o, "device", "driver", p->device.driver, sizeof p->device.driver);
    get_str(r, o, "device", "api", p->device.api, sizeof p->device.api);
    p->device.timestamp_period_ns = get_num(r, o, "device", "timestamp_period_ns");
    p->device.timestamp_valid_bits = (uint32_t)get_num(r, o, "device", "timestamp_valid_bits");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "has_timestamps"); /* optional */
    p->device.has_timestamps = v ? cJSON_IsTrue(v) : p->device.timestamp_valid_bits > 0;
    v = cJSON_GetObjectItemCaseSensitive(o, "copy_gbps");
    p->device.copy_gbps = cJSON_IsNumber(v) ? v->valuedouble : 0.0;

    o = get_obj(r, root, "", "model");
    get_str(r, o, "model", "family", p->model.family, sizeof p->model.family);
    p->model.n_layers = (int)get_num(r, o, "model", "n_layers");
    p->model.hidden = (int)get_num(r, o, "model", "hidden");
    p->model.vocab = (int)get_num(r, o, "model", "vocab");
    get_str(r, o, "model", "dtype", p->model.dtype, sizeof p->model.dtype);
    get_str(r, o, "model", "source", p->model.source, sizeof p->model.source);

    o = get_obj(r, root, "", "shard");
    p->shard.a = (int)get_num(r, o, "shard", "a");
    p->shard.b = (int)get_num(r, o, "shard", "b");

    o = get_obj(r, root, "", "shape");
    get_str(r, o, "shape", "plan", p->shape.plan, sizeof p->shape.plan);
    p->shape.cols = (int)get_num(r, o, "shape", "cols");
    p->shape.pos = (int)get_num(r, o, "shape", "pos");
    p->shape.slots = (int)get_num(r, o, "shape", "slots");
    v = cJSON_GetObjectItemCaseSensitive(o, "draft"); /* optional: files from before the spec plan */
    p->shape.draft = cJSON_IsNumber(v) ? (int)v->valuedouble : 0;
    p->shape.logits = get_bool(r, o, "shape", "logits");

    p->busy_us = get_timing(r, root, "", "busy_us");
    p->head_us = get_timing(r, root, "", "head_us");
    p->wall_us = get_timing(r, root, "", "wall_us");
    v = cJSON_GetObjectItemCaseSensitive(root, "tok_s");
    p->tok_s = cJSON_IsNumber(v) ? v->valuedouble : 0.0;
    v = cJSON_GetObjectItemCaseSensitive(root, "timing"); /* optional: files before issue 13 */
    p->timing = cJSON_IsString(v) && !strcmp(v->valuestring, "sampled") ? TIMING_SAMPLED
                : cJSON_IsString(v) && !strcmp(v->valuestring, "none")  ? TIMING_NONE
                                                                         : TIMING_FULL;

    const cJSON *ds = get_arr(r, root, "", "dispatches");
    int n = cJSON_GetArraySize(ds);
    p->dispatches = calloc((size_t)(n > 0 ? n : 1), sizeof *p->dispatches);
    CHECK(p->dispatches);
    p->n_dispatches = n;
    for (int i = 0; i < n; i++)
        read_dispatch(r, cJSON_GetArrayItem(ds, i), i, &p->dispatches[i]);

    const cJSON *ks = get_arr(r, root, "", "by_kind");
    n = cJSON_GetArraySize(ks);
    p->by_kind = calloc((size_t)(n > 0 ? n : 1), sizeof *p->by_kind);
    CHECK(p->by_kind);
    p->n_kinds = n;
    for (int i = 0; i < n; i++)
        read_kind(r, cJSON_GetArrayItem(ks, i), i, &p->by_kind[i]);

    read_gap_probe(r, root, p);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1) break;
        char *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    bool failed = ferror(f);
    fclose(f);
    if (failed) {
        free(buf);
        return NULL;
    }
    if (buf) buf[n] = 0;
    *len = n;
    return buf;
}

int report_json_read(const char *path, struct profile *p, struct err *e)
{
    memset(p, 0, sizeof *p);
    size_t len = 0;
    char *text = slurp(path, &len);
    if (!text)
        return err_set(e, ST_USAGE, "%s: cannot read the profile JSON: %s", path, strerror(errno));
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root) {
        const char *where = cJSON_GetErrorPtr();
        long off = where && where >= text && where <= text + len ? (long)(where - text) : -1;
        free(text);
        return err_set(e, ST_USAGE,
                       "%s: not valid JSON (near byte %ld); expected a profile written "
                       "by --json",
                       path, off);
    }
    free(text);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return err_set(e, ST_USAGE,
                       "%s: top level is not a JSON object; expected a profile written "
                       "by --json",
                       path);
    }
    struct reader r = {.path = path};
    read_profile(&r, root, p);
    cJSON_Delete(root);
    if (r.missing[0]) {
        profile_free(p);
        return err_set(e, ST_USAGE,
                       "%s: field '%s' missing or wrong: expected %s (a profile written "
                       "by --json)",
                       path, r.missing, r.want);
    }
    return ST_OK;
}
