/* json_write.c - the profile as one JSON object (docs/design.md "JSON and compare"); json_read.c reads it back.
 *
 * Every timing is {mean, median, min, p10, p90, mad, median_err, reps: [...]}. Field names are a
 * contract with saved baselines and scripts: add fields freely, never rename. Fields beyond
 * docs/design.md: device {has_timestamps, copy_gbps, roof_tflops, roof_path}, tok_s, dispatches[]
 * {start_us, kv_bytes, flops, flops_exec}, by_kind[] {bytes, kv_bytes, bw_share, flops, flops_exec,
 * tflops, roof_share, share_of (the sum the share is of: layer_kinds_sum or head_kinds_sum,
 * the summed medians of that group's kinds)}, tok_s_head (tok/s counting the LM head that ran, 0:
 * none), gap_probe {ran, statistic, n_reps, wall1, wall2, <figure>_err,
 * <figure>_within_noise, timestamps_add, timestamp_pair_us, dispatches, barriers (the walls' plan;
 * optional on read), chained (always null: chained dispatches, a bench/28-29 experiment, were
 * removed; files of that time may hold an object, read as ignored)}, lm_head (null when the head
 * was not probed) {lm_head_err, wall1, wall2}, timing, sample_stride, steps_timed, floor_bytes, floor_us,
 * flops, flops_exec, bound {kind, x, intensity, balance, floor_us, roof_us, step_us} (derived: not
 * read back), attribution (null unless --attribution). The reader needs only the docs/design.md
 * fields. */
#include "profile.h"

#include "outfile.h"
#include "report_fmt.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
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
    cJSON_AddNullToObject(o, "chained"); /* kept for scripts (header) */
    add_num(o, "dispatches", g->dispatches);
    add_num(o, "barriers", g->barriers);
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

void report_json_variant(cJSON *obj, const struct prof_dispatch *d)
{
    if (!d->pipeline[0]) return;
    cJSON_AddStringToObject(obj, "pipeline", d->pipeline);
    cJSON *s = cJSON_AddArrayToObject(obj, "spec");
    for (int i = 0; i < d->n_spec; i++)
        cJSON_AddItemToArray(s, report_json_number(d->spec[i]));
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
    add_num(o, "kv_bytes", (double)d->kv_bytes);
    add_num(o, "flops", (double)d->flops);
    add_num(o, "flops_exec", (double)d->flops_exec);
    report_json_variant(o, d);
    cJSON_AddItemToObject(o, "us", timing_json(&d->us));
    add_num(o, "start_us", d->start_us);
    return o;
}

/* The step's FLOPs and the bound that applies to it (the summary's: profile_bound of its step). */
static void add_bound(cJSON *root, const struct profile *p)
{
    uint64_t flops, exec;
    profile_flops(p, &flops, &exec);
    add_num(root, "flops", (double)flops);
    add_num(root, "flops_exec", (double)exec);
    struct bound bd = profile_bound(p, profile_step_us(p));
    cJSON *o = cJSON_AddObjectToObject(root, "bound");
    cJSON_AddStringToObject(o, "kind", bound_kind_name(bd.kind));
    add_num(o, "x", bd.x);
    add_num(o, "intensity", bd.intensity);
    add_num(o, "balance", bd.balance);
    add_num(o, "floor_us", bd.floor_us);
    add_num(o, "roof_us", bd.roof_us);
    add_num(o, "step_us", profile_step_us(p));
}

static cJSON *kind_json(const struct prof_kind *k)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", k->kind);
    add_num(o, "n", k->n);
    cJSON_AddItemToObject(o, "us", timing_json(&k->us));
    add_num(o, "share", k->share);
    cJSON_AddStringToObject(o, "share_of", prof_kind_is_head(k->kind) ? "head_kinds_sum" : "layer_kinds_sum");
    add_num(o, "gbps", k->gbps);
    add_num(o, "bw_share", k->bw_share);
    add_num(o, "bytes", (double)k->bytes);
    add_num(o, "kv_bytes", (double)k->kv_bytes);
    add_num(o, "flops", (double)k->flops);
    add_num(o, "flops_exec", (double)k->flops_exec);
    add_num(o, "tflops", k->tflops);
    add_num(o, "roof_share", k->roof_share);
    return o;
}

/* The "tune" object: {key: value} of the run's --tune overrides (numbers, or strings for tiles),
 * {} when none. */
static void add_tune(cJSON *root, const char *tune)
{
    cJSON *o = cJSON_AddObjectToObject(root, "tune");
    for (const char *at = tune; *at;) {
        const char *comma = strchr(at, ','), *end = comma ? comma : at + strlen(at), *eq = memchr(at, '=', (size_t)(end - at));
        if (eq) {
            char key[64], val[64];
            snprintf(key, sizeof key, "%.*s", (int)(eq - at), at);
            snprintf(val, sizeof val, "%.*s", (int)(end - eq - 1), eq + 1);
            char *num_end;
            long x = strtol(val, &num_end, 10);
            if (val[0] && !*num_end) cJSON_AddNumberToObject(o, key, (double)x);
            else cJSON_AddStringToObject(o, key, val);
        }
        at = comma ? comma + 1 : end;
    }
}

static cJSON *profile_json(const struct profile *p)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "tool", p->tool);
    cJSON_AddStringToObject(root, "version", p->version);
    cJSON_AddStringToObject(root, "args", p->args);
    add_tune(root, p->tune);
    cJSON_AddStringToObject(root, "test_hooks", p->test_hooks);
    cJSON_AddStringToObject(root, "precision", profile_precision(p));

    cJSON *dev = cJSON_AddObjectToObject(root, "device");
    cJSON_AddStringToObject(dev, "name", p->device.name);
    cJSON_AddStringToObject(dev, "driver", p->device.driver);
    cJSON_AddStringToObject(dev, "api", p->device.api);
    add_num(dev, "timestamp_period_ns", p->device.timestamp_period_ns);
    add_num(dev, "timestamp_valid_bits", p->device.timestamp_valid_bits);
    cJSON_AddBoolToObject(dev, "has_timestamps", p->device.has_timestamps);
    add_num(dev, "copy_gbps", p->device.copy_gbps);
    add_num(dev, "roof_tflops", p->device.roof_tflops);
    cJSON_AddStringToObject(dev, "roof_path", p->device.roof_path);
    cJSON_AddStringToObject(dev, "gemm_path", p->device.gemm_path);

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
    cJSON_AddBoolToObject(s, "plan_auto", p->shape.plan_auto);
    add_num(s, "gemm_min_cols", p->shape.gemm_min_cols);
    add_num(s, "cols", p->shape.cols);
    add_num(s, "pos", p->shape.pos);
    add_num(s, "slots", p->shape.slots);
    add_num(s, "draft", p->shape.draft);
    cJSON_AddBoolToObject(s, "logits", p->shape.logits);
    add_num(s, "logit_cols", p->shape.logit_cols);

    cJSON_AddItemToObject(root, "busy_us", timing_json(&p->busy_us));
    cJSON_AddItemToObject(root, "head_us", timing_json(&p->head_us));
    cJSON_AddItemToObject(root, "wall_us", timing_json(&p->wall_us));
    add_num(root, "tok_s", p->tok_s);
    add_num(root, "tok_s_head", profile_tok_s_head(p)); /* with the LM head that ran (0: none) */

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
    add_bound(root, p);
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
    /* "-": standard output, as Unix tools do; a file: written whole or not at all (outfile.h) */
    struct outfile f;
    int st = outfile_open(&f, flag, path, e);
    if (!st) st = outfile_write(&f, text, strlen(text), e);
    if (!st) st = outfile_write(&f, "\n", 1, e);
    if (st) outfile_abort(&f);
    else st = outfile_commit(&f, e);
    cJSON_free(text);
    return st;
}

cJSON *report_json_profile(const struct profile *p) { return profile_json(p); }

int report_json_write(const char *path, const struct profile *p, struct err *e)
{
    return report_json_save(path, "--json", profile_json(p), true, e);
}
