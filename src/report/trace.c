/* trace.c - one profiled step as a Chrome trace-event file ({"traceEvents":[...]}), which Perfetto
 * (ui.perfetto.dev) and chrome://tracing open: one complete ("X") slice per dispatch on one track,
 * ts and dur in µs, named by kind, with layer, op, groups and bytes as args. The layer plan and
 * the head go on two threads of one process so the head stands apart (the LM-head thread is named
 * only when a head ran). */
#include "profile.h"

#include <cjson/cJSON.h>
#include <string.h>

enum { TRACE_PID = 1, TRACE_TID_PLAN = 1, TRACE_TID_HEAD = 2 };

static cJSON *meta_event(const char *name, int tid, const char *key, const char *value)
{
    cJSON *ev = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "name", name);
    cJSON_AddStringToObject(ev, "ph", "M");
    cJSON_AddNumberToObject(ev, "pid", TRACE_PID);
    cJSON_AddNumberToObject(ev, "tid", tid);
    cJSON *args = cJSON_AddObjectToObject(ev, "args");
    cJSON_AddStringToObject(args, key, value);
    return ev;
}

/* The dispatch's time in rep `rep`, or its median when that rep was not kept. */
static double dur_of(const struct prof_dispatch *d, int rep)
{
    return rep >= 0 && rep < d->us.n_reps ? d->us.reps[rep] : d->us.median;
}

/* Start times: the executor's start_us when it filled them (any nonzero after the first);
 * otherwise the slices are laid end to end, which hides gaps but keeps the order and sizes. */
static bool starts_filled(const struct profile *p)
{
    for (int i = 1; i < p->n_dispatches; i++)
        if (p->dispatches[i].start_us != 0.0) return true;
    return p->n_dispatches <= 1;
}

static cJSON *slice_event(const struct prof_dispatch *d, double ts, double dur)
{
    cJSON *ev = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "name", d->kind);
    cJSON_AddStringToObject(ev, "cat", prof_kind_is_head(d->kind) ? "head" : "plan");
    cJSON_AddStringToObject(ev, "ph", "X");
    cJSON_AddItemToObject(ev, "ts", report_json_number(ts));
    cJSON_AddItemToObject(ev, "dur", report_json_number(dur));
    cJSON_AddNumberToObject(ev, "pid", TRACE_PID);
    cJSON_AddNumberToObject(ev, "tid",
                            prof_kind_is_head(d->kind) ? TRACE_TID_HEAD : TRACE_TID_PLAN);
    cJSON *args = cJSON_AddObjectToObject(ev, "args");
    cJSON_AddNumberToObject(args, "index", d->index);
    cJSON_AddNumberToObject(args, "layer", d->layer);
    cJSON_AddStringToObject(args, "op", d->op);
    cJSON *g = cJSON_AddArrayToObject(args, "groups");
    for (int k = 0; k < 3; k++)
        cJSON_AddItemToArray(g, cJSON_CreateNumber(d->groups[k]));
    cJSON_AddNumberToObject(args, "bytes", (double)d->bytes);
    report_json_variant(args, d);
    return ev;
}

int trace_write(const char *path, const struct profile *p, int rep, struct err *e)
{
    if (!p->device.has_timestamps)
        return err_set(e, ST_USAGE,
                       "--trace %s: device '%s' has no timestamps, so there are no "
                       "per-dispatch times to trace",
                       path, p->device.name);
    cJSON *root = cJSON_CreateObject();
    cJSON *evs = cJSON_AddArrayToObject(root, "traceEvents");
    char title[512];
    snprintf(title, sizeof title, "%s layers %d:%d, %d cols, pos %d on %s", p->tool, p->shard.a,
             p->shard.b, p->shape.cols, p->shape.pos, p->device.name);
    cJSON_AddItemToArray(evs, meta_event("process_name", TRACE_TID_PLAN, "name", title));
    cJSON_AddItemToArray(evs, meta_event("thread_name", TRACE_TID_PLAN, "name", "layer plan"));
    bool head = false;
    for (int i = 0; i < p->n_dispatches; i++) head |= prof_kind_is_head(p->dispatches[i].kind);
    if (head) cJSON_AddItemToArray(evs, meta_event("thread_name", TRACE_TID_HEAD, "name", "LM head"));

    bool filled = starts_filled(p);
    double t = 0.0;
    for (int i = 0; i < p->n_dispatches; i++) {
        const struct prof_dispatch *d = &p->dispatches[i];
        double dur = dur_of(d, rep);
        cJSON_AddItemToArray(evs, slice_event(d, filled ? d->start_us : t, dur));
        t += dur;
    }
    cJSON_AddStringToObject(root, "displayTimeUnit", "ns");
    cJSON *meta = cJSON_AddObjectToObject(root, "metadata");
    cJSON_AddStringToObject(meta, "args", p->args);
    cJSON_AddStringToObject(meta, "driver", p->device.driver);
    cJSON_AddNumberToObject(meta, "rep", rep);
    cJSON_AddBoolToObject(meta, "starts_measured", filled);

    return report_json_save(path, "--trace", root, false, e);
}
