/* report_fmt.c - pieces shared by the text, Markdown and crossover reports: number formats, the
 * verdict and wall sentences, the plan line, the top-dispatch order. */
#include "profile.h"
#include "report_fmt.h"
#include "select.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *fmt_sig3(char *buf, size_t size, double v)
{
    double a = fabs(v);
    if (!isfinite(v))
        snprintf(buf, size, "?");
    else if (a >= 99.95)
        snprintf(buf, size, "%.0f", v);
    else if (a >= 9.995)
        snprintf(buf, size, "%.1f", v);
    else if (a >= 0.9995 || a == 0)
        snprintf(buf, size, "%.2f", v);
    else
        snprintf(buf, size, "%.*f", 2 - (int)floor(log10(a)), v);
    return buf;
}

bool has_head(const struct profile *p)
{
    for (int i = 0; i < p->n_dispatches; i++)
        if (prof_kind_is_head(p->dispatches[i].kind)) return true;
    return false;
}

const char *bool_str(bool b)
{
    return b ? "true" : "false";
}

/* "--reps N would decide" for an inconclusive figure (N from est_reps_to_resolve), or "more
 * --reps". */
const char *fmt_reps_advice(char *buf, size_t size, int reps)
{
    if (reps > 0)
        snprintf(buf, size, "the measured spread says --reps %d would decide", reps);
    else
        snprintf(buf, size, "rerun with more --reps");
    return buf;
}

/* The LM head's one line when its figure is within noise. */
const char *head_inconclusive(char *buf, size_t size, const struct gap_probe *g)
{
    char adv[96];
    snprintf(
        buf, size, "inconclusive at %d reps: the LM head figure is within noise, so no GB/s; %s",
        g->n_reps,
        fmt_reps_advice(adv, sizeof adv,
                        est_reps_to_resolve(g->lm_head, g->lm_head.v, g->n_reps, EST_NOISE_K)));
    return buf;
}

const char *verdict_text(char *buf, size_t size, const struct gap_probe *g)
{
    switch (g->verdict) {
    case VERDICT_PER_DISPATCH:
        return "dead time is PER-DISPATCH ⇒ fusing dispatches reclaims it. Fusion is on.";
    case VERDICT_SUBMIT_POLL:
        return "dead time is NOT per-dispatch ⇒ it is submit/poll latency. Fusion buys nothing; do "
               "not write a fused kernel.";
    case VERDICT_INCONCLUSIVE: {
        /* the reps at which every figure within noise (the line, the marginal pass) leaves it */
        int reps = 0;
        bool unknown = false;
        const struct est *figs[2] = {&g->line, &g->marginal};
        for (int i = 0; i < 2; i++) {
            if (!est_within_noise(*figs[i])) continue;
            int r = est_reps_to_resolve(*figs[i], figs[i]->v, g->n_reps, EST_NOISE_K);
            unknown |= r == 0;
            reps = MAX(reps, r);
        }
        char adv[96];
        snprintf(buf, size, "inconclusive at %d reps: %s, so no recommendation; %s", g->n_reps,
                 est_within_noise(g->marginal) ? "the marginal pass is within noise"
                                               : "the dead time is within noise of the 25 % line",
                 fmt_reps_advice(adv, sizeof adv, unknown ? 0 : reps));
        return buf;
    }
    default:
        return "unknown: without timestamps the kernel-time sum is unknown";
    }
}

/* What this tool's wall measures (the seed's per-dispatch-pass remark does not apply here). */
const char *wall_meaning(const struct profile *p)
{
    if (!p->device.has_timestamps || p->timing == TIMING_NONE)
        return "wall: host submit + fence wait of ONE step: one command buffer, one submit, the "
               "plan's own "
               "barriers (no timestamps)";
    if (p->timing == TIMING_SAMPLED)
        return "wall: host submit + fence wait of ONE step: one command buffer, one submit, the "
               "plan's own "
               "barriers, plus a timestamp pair on every sampled dispatch; the gap probe times the "
               "plan without "
               "timestamps";
    return "wall: host submit + fence wait of ONE step: one command buffer, one submit, the plan's "
           "own "
           "barriers, plus a timestamp pair per dispatch; the gap probe times the plan without "
           "timestamps";
}

/* Share of a dispatch's time in its own plan: busy for layers, head sum for head. */
double dispatch_share(const struct profile *p, const struct prof_dispatch *d)
{
    double whole = prof_kind_is_head(d->kind) ? p->head_us.median : p->busy_us.median;
    return safe_div(d->us.median, whole);
}

/* Indices of dispatches sorted by median time, descending (stable on index). Caller frees. */
int *top_order(const struct profile *p)
{
    int *idx = malloc((size_t)(p->n_dispatches > 0 ? p->n_dispatches : 1) * sizeof(int));
    CHECK(idx);
    for (int i = 0; i < p->n_dispatches; i++)
        idx[i] = i;
    /* insertion sort: a plan has a few hundred dispatches and this keeps ties in step order */
    for (int i = 1; i < p->n_dispatches; i++) {
        int v = idx[i], j = i - 1;
        while (j >= 0 && p->dispatches[idx[j]].us.median < p->dispatches[v].us.median) {
            idx[j + 1] = idx[j];
            j--;
        }
        idx[j + 1] = v;
    }
    return idx;
}

int n_top(const struct profile *p)
{
    return p->n_dispatches < 8 ? p->n_dispatches : 8;
}

/* Whether the top table lists a head dispatch beside layer ones (two denominators). */
bool top_mixes(const struct profile *p, const int *idx)
{
    bool head = false, layer = false;
    for (int t = 0; t < n_top(p); t++)
        *(prof_kind_is_head(p->dispatches[idx[t]].kind) ? &head : &layer) = true;
    return head && layer;
}

/* µs with as many decimals as the size deserves. */
const char *fmt_us(char *buf, size_t size, double v)
{
    double a = fabs(v);
    if (!isfinite(v))
        snprintf(buf, size, "?");
    else if (a >= 100)
        snprintf(buf, size, "%.0f", v);
    else if (a >= 10)
        snprintf(buf, size, "%.1f", v);
    else
        snprintf(buf, size, "%.2f", v);
    return buf;
}

/* "p10–p90 a–b, MAD m, n=N" */
const char *fmt_spread(char *buf, size_t size, const struct unit *u, const struct timing *t)
{
    char a[32], b[32], m[32];
    snprintf(buf, size, "p10–p90 %s–%s, MAD %s, n=%d", fmt_t(a, sizeof a, u, t->p10, -1),
             fmt_t(b, sizeof b, u, t->p90, -1), fmt_t(m, sizeof m, u, t->mad, -1), t->n_reps);
    return buf;
}

/* "± u" and ": within noise" for a derived figure. */
const char *fmt_err(char *buf, size_t size, const struct unit *un, struct est x)
{
    char u[32];
    snprintf(buf, size, "± %-5s%s", fmt_t(u, sizeof u, un, x.u, -1),
             est_within_noise(x) ? " within noise" : "");
    return buf;
}

struct unit unit_for(enum report_units u, double step_us)
{
    static const struct unit us = {1, "µs"}, ms = {1e3, "ms"}, s = {1e6, "s"};
    if (u == UNITS_US) return us;
    if (u == UNITS_MS) return ms;
    if (u == UNITS_S) return s;
    return step_us < 1e4 ? us : step_us < 1e7 ? ms : s;
}

struct unit unit_of(enum report_units u, const struct profile *p)
{
    bool ts = p->device.has_timestamps && p->busy_us.n_reps;
    return unit_for(u, ts ? p->busy_us.median + p->head_us.median : p->wall_us.median);
}

const char *roof_name(const struct prof_device *d)
{
    return strcmp(d->roof_path, "f32 FMA") == 0 ? "FMA roof" : "tensor roof";
}

const char *fmt_roof(char *buf, size_t size, const struct prof_device *d)
{
    char r[32];
    if (d->roof_tflops <= 0)
        snprintf(buf, size, "arithmetic roof not measured");
    else if (strcmp(roof_name(d), "FMA roof") == 0)
        snprintf(buf, size, "FMA roof %s (f32 FMA: no cooperative matrices)", fmt_flop_rate(r, sizeof r, d->roof_tflops));
    else
        snprintf(buf, size, "tensor roof %s (%s)", fmt_flop_rate(r, sizeof r, d->roof_tflops), d->roof_path);
    return buf;
}

/* v with the largest of the prefixes T, G, M, k it reaches, then unit: "1.20 TFLOP". */
static const char *fmt_prefixed(char *buf, size_t size, double v, const char *unit)
{
    static const struct {
        double scale;
        const char *name;
    } pre[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
    char x[32];
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        if (v >= pre[i].scale) {
            snprintf(buf, size, "%s %s%s", fmt_sig3(x, sizeof x, v / pre[i].scale), pre[i].name, unit);
            return buf;
        }
    snprintf(buf, size, "%s %s", fmt_sig3(x, sizeof x, v), unit);
    return buf;
}

const char *fmt_flop(char *buf, size_t size, double flops) { return fmt_prefixed(buf, size, flops, "FLOP"); }

const char *fmt_flop_rate(char *buf, size_t size, double tflops)
{
    return fmt_prefixed(buf, size, tflops * 1e12, "FLOP/s");
}

const char *fmt_t(char *buf, size_t size, const struct unit *u, double us, int dec)
{
    if (u && u->per_us != 1) return fmt_sig3(buf, size, us / u->per_us);
    if (dec < 0) return fmt_us(buf, size, us);
    snprintf(buf, size, "%.*f", dec, us);
    return buf;
}

bool report_units_parse(const char *s, enum report_units *u)
{
    static const struct {
        const char *name;
        enum report_units u;
    } names[] = {
        {"auto", UNITS_AUTO}, {"us", UNITS_US}, {"µs", UNITS_US}, {"ms", UNITS_MS}, {"s", UNITS_S}};
    for (size_t i = 0; s && i < ARRAY_LEN(names); i++)
        if (!strcmp(s, names[i].name)) {
            *u = names[i].u;
            return true;
        }
    return false;
}

bool shard_has_head(const struct profile *p)
{
    /* files without the model's layer count: whether a head dispatch is there */
    return p->model.n_layers > 0 ? p->shard.b >= p->model.n_layers : has_head(p);
}

bool logits_ran(const struct profile *p)
{
    return p->shape.logits && shard_has_head(p);
}

/* The distinct kinds of the step's weight-reading dispatches (its matrix products), in step order:
 * "matmul_swiglu.bf16, matmul.bf16, head.matmul.bf16"; at most 6, then "...". */
static const char *weight_kinds(char *buf, size_t size, const struct profile *p)
{
    size_t used = 0;
    int n = 0;
    buf[0] = 0;
    for (int i = 0; i < p->n_dispatches; i++) {
        const struct prof_dispatch *d = &p->dispatches[i];
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = p->dispatches[j].bytes && !strcmp(p->dispatches[j].kind, d->kind);
        if (!d->bytes || seen || used >= size) continue;
        int w = n == 6 ? snprintf(buf + used, size - used, ", ...")
                       : snprintf(buf + used, size - used, "%s%s", n ? ", " : "", d->kind);
        if (w < 0) break;
        used += (size_t)w;
        if (n++ == 6) break;
    }
    return buf;
}

const char *report_plan_line(char *buf, size_t size, const struct profile *p)
{
    const struct prof_shape *s = &p->shape;
    char k[256];
    weight_kinds(k, sizeof k, p);
    bool as_batch = !strcmp(s->plan, "wide") && s->gemm_min_cols > 0 && s->cols < s->gemm_min_cols;
    int n = snprintf(buf, size, "plan %s%s", s->plan_auto ? "auto -> " : "", s->plan);
    if (n < 0 || (size_t)n >= size) return buf;
    if (s->plan_auto && s->gemm_min_cols > 0)
        n += snprintf(buf + n, size - (size_t)n,
                      " (the plan a serving engine runs at %d cols: wide from %d)", s->cols,
                      s->gemm_min_cols);
    else if (as_batch)
        n += snprintf(buf + n, size - (size_t)n,
                      " (below %d cols its matrix products run the batch plan's kernels)",
                      s->gemm_min_cols);
    if (n > 0 && (size_t)n < size) {
        int m = profile_serving_dispatches(p);
        if (strcmp(profile_precision(p), "serving") != 0)
            n += snprintf(buf + n, size - (size_t)n, "; precision %s (f32-accurate)",
                          profile_precision(p));
        else if (m > 0)
            n += snprintf(buf + n, size - (size_t)n,
                          "; precision serving (f16 activations, one product: %d dispatch%s)", m,
                          m == 1 ? "" : "es");
        else
            n += snprintf(buf + n, size - (size_t)n,
                          "; precision serving (no kernel of this step rounds: all f32)");
    }
    if (n > 0 && (size_t)n < size && k[0])
        snprintf(buf + n, size - (size_t)n, "; kernels reading weights: %s", k);
    return buf;
}

/* The gap probe's plan in words (text and markdown): its dispatches and dependent stages. */
const char *plan_sentence(char *buf, size_t n, const struct gap_probe *g)
{
    snprintf(buf, n,
             "the plan: %d dispatch%s in %d stage%s, a barrier after each stage, only where data "
             "flows: each "
             "stage waits for the one before",
             g->dispatches, g->dispatches == 1 ? "" : "es", g->barriers,
             g->barriers == 1 ? "" : "s");
    return buf;
}

const char *fmt_gemm_fallbacks(char *buf, size_t size, const struct profile *p)
{
    buf[0] = 0;
    if (strcmp(p->device.gemm_path, "cm2")) return buf;
    /* the fallback kinds, each once, and whether gemm_cm2 served any product: where it served
     * none (e.g. Q8_0 weights in automatic serving) the header says so, since the path names the
     * device's choice, not what ran */
    char kinds[256] = "";
    size_t at = 0;
    bool any_cm2 = false;
    for (int i = 0; i < p->n_dispatches; i++) {
        const char *k = p->dispatches[i].kind;
        if (!strncmp(k, "head.", 5)) k += 5;
        any_cm2 = any_cm2 || !strncmp(k, "gemm_cm2", 8);
        if (strncmp(k, "gemm", 4) || !strncmp(k, "gemm_cm2", 8) || !strncmp(k, "gemm_xprep", 10) ||
            !strncmp(k, "gemm_wdeq", 9))
            continue;
        bool seen = false;
        for (int j = 0; j < i && !seen; j++) seen = !strcmp(p->dispatches[j].kind, p->dispatches[i].kind);
        if (seen || at + 1 >= sizeof kinds) continue;
        int n = snprintf(kinds + at, sizeof kinds - at, "%s%s", at ? ", " : "", p->dispatches[i].kind);
        at = n < 0 ? at : MIN(sizeof kinds - 1, at + (size_t)n);
    }
    if (!at) snprintf(buf, size, "; no fallback");
    else snprintf(buf, size, "%s%s", any_cm2 ? "; on the fallback: " : "; every product on the fallback (cm2 served none): ",
                  kinds);
    return buf;
}

const char *fmt_gemm_path(char *buf, size_t size, const char *name)
{
    for (int p = GEMM_PATH_KHR; p <= GEMM_PATH_CM2; p++)
        if (!strcmp(name, gemm_path_name((enum gemm_path)p))) {
            snprintf(buf, size, "%s (%s: %s)", name, sel_gemm_path_kernel((enum gemm_path)p),
                     sel_gemm_path_label((enum gemm_path)p));
            return buf;
        }
    snprintf(buf, size, "%s", name);
    return buf;
}
