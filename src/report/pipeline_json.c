/* pipeline_json.c - --stages as JSON, read back, and compared stage by stage (pipeline.h).
 *
 * The file: {"pipeline": {version, split, k, bounds, cols, hidden, n_layers, handoff, bottleneck,
 * sum_us, max_us, tok_s_bound, tok_s_ideal, bubble_share, predicted_max_us, stages: [{index, a, b,
 * step_us, marginal_us, fixed_us, predicted_us, share_of_slowest}], layer_costs_from, layer_costs,
 * fixed_us: {first, middle, last}, balanced, balanced_is_given},
 * "stages": [one --json profile per stage], "balanced_stages": [...]}. The top-level "pipeline"
 * object is what tells a pipeline file from a single profile. */
#include "pipeline.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "input.h"

/* 2 since `predicted_us` is a step (Σ of the layer costs + the stage's fixed part, `fixed_us`); in
 * version 1 it was the Σ alone, a marginal pass. The reader takes both: it reads the split and the
 * stages' measured steps, which mean the same in each. */
#define PIPELINE_JSON_VERSION 2

static cJSON *est_json(struct est x)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "v", report_json_number(x.v));
    cJSON_AddItemToObject(o, "u", report_json_number(x.u));
    return o;
}

static cJSON *split_json(const struct pipeline_split *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "split", s->how);
    cJSON_AddNumberToObject(o, "k", s->k);
    cJSON *b = cJSON_AddArrayToObject(o, "bounds");
    for (int i = 0; i <= s->k; i++) cJSON_AddItemToArray(b, cJSON_CreateNumber(s->bounds[i]));
    cJSON_AddNumberToObject(o, "bottleneck", s->bottleneck);
    cJSON_AddItemToObject(o, "sum_us", report_json_number(s->sum_us));
    cJSON_AddItemToObject(o, "max_us", report_json_number(s->max_us));
    cJSON_AddItemToObject(o, "tok_s_bound", report_json_number(s->tok_s_bound));
    cJSON_AddItemToObject(o, "tok_s_ideal", report_json_number(s->tok_s_ideal));
    cJSON_AddItemToObject(o, "bubble_share", report_json_number(s->bubble));
    cJSON_AddItemToObject(o, "predicted_max_us", report_json_number(s->predicted_max_us));
    cJSON *st = cJSON_AddArrayToObject(o, "stages");
    for (int i = 0; i < s->k; i++) {
        const struct pipeline_stage *x = &s->st[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "index", i);
        cJSON_AddNumberToObject(j, "a", x->a);
        cJSON_AddNumberToObject(j, "b", x->b);
        cJSON_AddItemToObject(j, "step_us", est_json(x->step_us));
        cJSON_AddItemToObject(j, "marginal_us", est_json(x->marginal_us));
        cJSON_AddItemToObject(j, "fixed_us", report_json_number(x->fixed_us));
        cJSON_AddItemToObject(j, "predicted_us", report_json_number(x->predicted_us));
        cJSON_AddItemToObject(j, "share_of_slowest",
                              report_json_number(s->max_us > 0 ? x->step_us.v / s->max_us : 0));
        cJSON_AddItemToArray(st, j);
    }
    return o;
}

static cJSON *profiles_json(const struct pipeline_split *s)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < s->k; i++) cJSON_AddItemToArray(a, report_json_profile(&s->st[i].p));
    return a;
}

int pipeline_json_write(const char *path, const struct pipeline *p, struct err *e)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *pl = split_json(&p->given);
    cJSON_AddItemToObject(root, "pipeline", pl);
    cJSON_AddNumberToObject(pl, "version", PIPELINE_JSON_VERSION);
    cJSON_AddStringToObject(pl, "tool", p->tool);
    cJSON_AddStringToObject(pl, "args", p->args);
    cJSON_AddNumberToObject(pl, "cols", p->cols);
    cJSON_AddNumberToObject(pl, "hidden", p->hidden);
    cJSON_AddNumberToObject(pl, "n_layers", p->n_layers);
    cJSON *h = cJSON_AddObjectToObject(pl, "handoff");
    cJSON_AddNumberToObject(h, "bytes", (double)p->handoff_bytes);
    cJSON_AddItemToObject(h, "d2h_gbps", report_json_number(p->d2h_gbps));
    cJSON_AddItemToObject(h, "us_per_boundary", report_json_number(p->handoff_us));
    cJSON_AddNumberToObject(h, "boundaries", p->given.k - 1);
    cJSON_AddItemToObject(h, "us_per_step", report_json_number(p->handoff_us * (p->given.k - 1)));
    cJSON_AddStringToObject(pl, "layer_costs_from", !p->layer_cost ? "" : p->layer_cost_shares ? "stage_shares"
                                                                                            : "one_layer_shards");
    if (p->layer_cost) {
        cJSON *lc = cJSON_AddArrayToObject(pl, "layer_costs");
        for (int l = 0; l < p->n_layers; l++) {
            cJSON *j = est_json(p->layer_cost[l]);
            cJSON_AddNumberToObject(j, "layer", l);
            cJSON_AddItemToArray(lc, j);
        }
    } else {
        cJSON_AddNullToObject(pl, "layer_costs");
    }
    if (p->fixed.known) {
        cJSON *f = cJSON_AddObjectToObject(pl, "fixed_us");
        cJSON_AddItemToObject(f, "first", report_json_number(p->fixed.first));
        if (p->fixed.k >= 3) cJSON_AddItemToObject(f, "middle", report_json_number(p->fixed.middle));
        else cJSON_AddNullToObject(f, "middle");
        cJSON_AddItemToObject(f, "last", report_json_number(p->fixed.last));
    } else {
        cJSON_AddNullToObject(pl, "fixed_us");
    }
    if (p->balanced.k) cJSON_AddItemToObject(pl, "balanced", split_json(&p->balanced));
    else cJSON_AddNullToObject(pl, "balanced");
    cJSON_AddBoolToObject(pl, "balanced_is_given", p->balanced_is_given);
    cJSON_AddItemToObject(root, "stages", profiles_json(&p->given));
    cJSON_AddItemToObject(root, "balanced_stages",
                          p->balanced.k && !p->balanced_is_given ? profiles_json(&p->balanced) : cJSON_CreateArray());
    return report_json_save(path, "--json", root, true, e);
}

bool pipeline_json_sniff(const char *path)
{
    cJSON *root = NULL;
    struct err e;
    if (input_json_object(path, "the pipeline JSON", &root, &e)) return false;
    bool is = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "pipeline"));
    cJSON_Delete(root);
    return is;
}

static int bad(const char *path, const char *field, struct err *e)
{
    return err_set(e, ST_USAGE, "%s: field '%s' missing or wrong (a pipeline file written by --stages --json)", path,
                   field);
}

static int read_int(const cJSON *o, const char *name, int lo, int hi, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi || v->valuedouble != (int)v->valuedouble)
        return 1;
    *out = (int)v->valuedouble;
    return 0;
}

static int read_split(const char *path, const cJSON *pl, const cJSON *profiles, int n_layers, struct pipeline_split *s,
                      struct err *e)
{
    const cJSON *how = cJSON_GetObjectItemCaseSensitive(pl, "split");
    if (!cJSON_IsString(how)) return bad(path, "pipeline.split", e);
    snprintf(s->how, sizeof s->how, "%s", how->valuestring);
    if (read_int(pl, "k", 1, PIPELINE_MAX_STAGES, &s->k)) return bad(path, "pipeline.k", e);
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(pl, "bounds");
    if (!cJSON_IsArray(b) || cJSON_GetArraySize(b) != s->k + 1) return bad(path, "pipeline.bounds", e);
    int i = 0;
    for (const cJSON *it = b->child; it; it = it->next, i++) {
        if (!cJSON_IsNumber(it) || it->valuedouble != (int)it->valuedouble || it->valuedouble < 0 ||
            it->valuedouble > n_layers || (i > 0 && (int)it->valuedouble <= s->bounds[i - 1]))
            return bad(path, "pipeline.bounds", e);
        s->bounds[i] = (int)it->valuedouble;
    }
    if (!cJSON_IsArray(profiles) || cJSON_GetArraySize(profiles) != s->k) return bad(path, "stages", e);
    i = 0;
    int k = s->k;
    s->k = 0; /* counts the profiles read, so pipeline_free frees exactly those */
    for (const cJSON *it = profiles->child; it; it = it->next, i++) {
        struct pipeline_stage *st = &s->st[i];
        int rc = report_json_profile_read(path, it, &st->p, e);
        if (rc) return err_wrap(e, rc, "stage %d", i);
        s->k++;
        st->a = s->bounds[i];
        st->b = s->bounds[i + 1];
        if (st->p.shard.a != st->a || st->p.shard.b != st->b) return bad(path, "stages[].shard", e);
        pipeline_stage_times(st);
    }
    CHECK(s->k == k);
    return ST_OK;
}

int pipeline_json_read(const char *path, struct pipeline *p, struct err *e)
{
    memset(p, 0, sizeof *p);
    cJSON *root = NULL;
    int st = input_json_object(path, "the pipeline JSON", &root, e);
    if (st) return st;
    const cJSON *pl = cJSON_GetObjectItemCaseSensitive(root, "pipeline");
    int version = 0;
    if (!cJSON_IsObject(pl)) st = err_set(e, ST_USAGE, "%s: no top-level 'pipeline' object: not a --stages file", path);
    else if (read_int(pl, "version", 1, PIPELINE_JSON_VERSION, &version)) st = bad(path, "pipeline.version", e);
    else if (read_int(pl, "cols", 1, 1 << 20, &p->cols)) st = bad(path, "pipeline.cols", e);
    else if (read_int(pl, "hidden", 1, 1 << 24, &p->hidden)) st = bad(path, "pipeline.hidden", e);
    else if (read_int(pl, "n_layers", 1, 1 << 16, &p->n_layers)) st = bad(path, "pipeline.n_layers", e);
    if (!st) st = read_split(path, pl, cJSON_GetObjectItemCaseSensitive(root, "stages"), p->n_layers, &p->given, e);
    if (!st) pipeline_summarize(p, &p->given);
    cJSON_Delete(root);
    if (st) pipeline_free(p);
    return st;
}

int pipeline_compare(FILE *out, const struct pipeline *base, const struct pipeline *cur, double threshold_pct,
                     bool markdown, struct err *e)
{
    const struct pipeline_split *b = &base->given, *c = &cur->given;
    bool same = b->k == c->k;
    for (int i = 0; same && i <= b->k; i++) same = b->bounds[i] == c->bounds[i];
    if (!same) {
        char x[512] = "", y[512] = "";
        for (int i = 0; i < b->k; i++)
            snprintf(x + strlen(x), sizeof x - strlen(x), "%s%d:%d", i ? "," : "", b->bounds[i], b->bounds[i + 1]);
        for (int i = 0; i < c->k; i++)
            snprintf(y + strlen(y), sizeof y - strlen(y), "%s%d:%d", i ? "," : "", c->bounds[i], c->bounds[i + 1]);
        return err_set(e, ST_USAGE, "cannot compare: the pipelines' splits differ: base %s, current %s", x, y);
    }
    int worst = ST_OK;
    for (int i = 0; i < b->k; i++) {
        fprintf(out, markdown ? "\n### stage %d (layers %d:%d)\n\n" : "\n== stage %d (layers %d:%d) ==\n", i,
                b->st[i].a, b->st[i].b);
        int st = compare_profiles_fmt(out, &b->st[i].p, &c->st[i].p, threshold_pct, markdown, NULL, e);
        if (st && st != ST_REGRESSION) return err_wrap(e, st, "stage %d (layers %d:%d)", i, b->st[i].a, b->st[i].b);
        if (st == ST_REGRESSION) worst = ST_REGRESSION;
    }
    char x[16], y[16];
    fprintf(out, "%spipeline: slowest stage %s → %s µs (stage %d → %d); bubble %.1f %% → %.1f %%; %s\n",
            markdown ? "\n" : "\n", fmt_sig3(x, sizeof x, b->max_us), fmt_sig3(y, sizeof y, c->max_us), b->bottleneck,
            c->bottleneck, 100 * b->bubble, 100 * c->bubble,
            worst == ST_REGRESSION ? "REGRESSION in a stage" : "no stage regressed");
    return worst;
}
