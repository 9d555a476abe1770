/* html.c - --html: one self-contained page of a profile (profile.h report_html).
 *
 * Everything is inline: one <style> block and SVG charts drawn here in C; no script, no font, no
 * request to the network, so the page opens anywhere (a CI artifact, a mail attachment) and a
 * headless browser renders it with no console error (tests/html_check.sh). Sections: summary, a
 * stacked bar of the kinds (share of GPU busy), the roofline (each weight-reading kind's GB/s
 * against the measured copy bandwidth, and each kind's FLOP/s against its arithmetic intensity
 * under the measured copy bandwidth and arithmetic roof), the step's dispatch timeline, the gap-probe
 * decomposition, the crossover chart of a width list and the comparison. Each kind keeps one
 * colour in every chart. Hovering a mark shows its figures (SVG <title>). */
#include "html_priv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers -------------------------------------------------------------------------- */

/* Text with <, >, & and quotes escaped. */
void html_esc(FILE *out, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '&':
            fputs("&amp;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&#39;", out);
            break;
        default:
            fputc(*s, out);
        }
}

double html_div0(double a, double b)
{
    return b != 0 && isfinite(a / b) ? a / b : 0;
}

/* One colour per kind, the same in every chart: the kind's rank in the profile's by-kind table
 * (a head.* kind takes its layer twin's colour when the layers have it), over a 12-colour palette.
 */
const char *html_kind_colour(const struct profile *p, const char *kind)
{
    static const char *const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                          "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                                          "#9c755f", "#bab0ac", "#1f77b4", "#8cd17d"};
    const char *bare = strncmp(kind, "head.", 5) ? kind : kind + 5;
    for (int k = 0; k < p->n_kinds; k++)
        if (!strcmp(p->by_kind[k].kind, bare)) return palette[k % ARRAY_LEN(palette)];
    for (int k = 0; k < p->n_kinds; k++)
        if (!strcmp(p->by_kind[k].kind, kind)) return palette[k % ARRAY_LEN(palette)];
    return "#888";
}

const char *html_us(char *buf, size_t n, double us)
{
    char v[32];
    if (!isfinite(us))
        snprintf(buf, n, "?");
    else if (fabs(us) >= 1e6)
        snprintf(buf, n, "%s s", fmt_sig3(v, sizeof v, us / 1e6));
    else if (fabs(us) >= 1e3)
        snprintf(buf, n, "%s ms", fmt_sig3(v, sizeof v, us / 1e3));
    else
        snprintf(buf, n, "%s µs", fmt_sig3(v, sizeof v, us));
    return buf;
}

static bool has_times(const struct profile *p)
{
    return p->device.has_timestamps && p->timing != TIMING_NONE && p->n_dispatches > 0;
}

/* ---- page parts ----------------------------------------------------------------------------- */

void html_page_close(FILE *out, const char *tool, const char *version)
{
    fputs("<p class=\"note\">written by ", out);
    html_esc(out, tool);
    fputs(" ", out);
    html_esc(out, version);
    fputs("; self-contained: no script, no network.</p>\n</body></html>\n", out);
}

void html_page_open(FILE *out, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          out);
    html_esc(out, title);
    fputs("</title>\n", out);
    fputs(
        "<style>\n"
        "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px "
        "auto;max-width:1100px;"
        "color:#222;padding:0 16px}\n"
        "h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px "
        "solid #ddd;"
        "padding-bottom:4px}\n"
        ".sub{color:#666;margin:0 0 12px}\n"
        "table{border-collapse:collapse;margin:6px 0}td,th{padding:2px 10px 2px 0;text-align:left;"
        "vertical-align:top}th{color:#555;font-weight:600}td.n{text-align:right;font-variant-"
        "numeric:tabular-nums}\n"
        ".cards{display:flex;flex-wrap:wrap;gap:10px;margin:10px 0}.card{border:1px solid "
        "#ddd;border-radius:6px;"
        "padding:8px 12px;min-width:150px}.card b{display:block;font-size:18px}.card "
        "span{color:#666;font-size:12px}\n"
        ".legend{display:flex;flex-wrap:wrap;gap:4px "
        "14px;font-size:12px}.sw{display:inline-block;width:10px;"
        "height:10px;margin-right:4px;vertical-align:middle}\n"
        "svg{display:block;margin:6px 0}svg text{font:11px system-ui,sans-serif;fill:#333}\n"
        "pre{background:#f6f6f6;padding:8px;overflow:auto;font-size:12px}.note{color:#666;font-"
        "size:12px}\n"
        "</style></head><body>\n",
        out);
}

static void page_head(FILE *out, const struct profile *p)
{
    char title[256];
    snprintf(title, sizeof title, "%s: %s, layers %d:%d, %d cols", p->tool, p->shape.plan, p->shard.a, p->shard.b,
             p->shape.cols);
    html_page_open(out, title);
}

static void summary(FILE *out, const struct profile *p)
{
    const struct prof_shape *s = &p->shape;
    char a[48], b[48], pl[512];
    fprintf(out, "<h1 id=\"summary\">");
    html_esc(out, p->tool);
    fprintf(out, ": layers %d:%d, %d cols, pos %d</h1>\n<p class=\"sub\">", p->shard.a, p->shard.b,
            s->cols, s->pos);
    html_esc(out, p->device.name);
    fputs(" · ", out);
    html_esc(out, p->device.driver);
    fputs(" · ", out);
    html_esc(out, p->model.family);
    fprintf(out, " %s, %d layers, hidden %d, vocab %d · ", p->model.dtype, p->model.n_layers,
            p->model.hidden, p->model.vocab);
    html_esc(out, report_plan_line(pl, sizeof pl, p));
    fputs("</p>\n<div class=\"cards\">\n", out);
    if (p->busy_us.n_reps)
        fprintf(out,
                "<div class=\"card\"><b>%s</b><span>GPU busy per step (median, p10–p90 "
                "%s–%s)</span></div>\n",
                html_us(a, sizeof a, p->busy_us.median), html_us(b, sizeof b, p->busy_us.p10),
                html_us(pl, sizeof pl, p->busy_us.p90));
    if (p->head_us.n_reps)
        fprintf(out, "<div class=\"card\"><b>%s</b><span>LM head, beside busy</span></div>\n",
                html_us(a, sizeof a, p->head_us.median));
    fprintf(out,
            "<div class=\"card\"><b>%s</b><span>wall of one step (submit + wait)</span></div>\n",
            html_us(a, sizeof a, p->wall_us.median));
    fprintf(out, "<div class=\"card\"><b>%.0f</b><span>tok/s/stage at this width</span></div>\n",
            p->tok_s);
    if (profile_tok_s_head(p) > 0)
        fprintf(out, "<div class=\"card\"><b>%.0f</b><span>tok/s/stage with the LM head</span></div>\n",
                profile_tok_s_head(p));
    /* the bound that applies (the summary's): the floor counts the head's weights when it ran, and
     * the step is busy + head then */
    struct bound bd = profile_bound(p, profile_step_us(p));
    if (bd.kind != BOUND_UNKNOWN)
        fprintf(out, "<div class=\"card\"><b>× %.2f</b><span>step ÷ %s %s (%s-bound)</span></div>\n", bd.x,
                bd.kind == BOUND_COMPUTE ? roof_name(&p->device) : "weight-bytes floor",
                html_us(a, sizeof a, bd.kind == BOUND_COMPUTE ? bd.roof_us : bd.floor_us), bound_kind_name(bd.kind));
    if (p->device.copy_gbps > 0)
        fprintf(out,
                "<div class=\"card\"><b>%s GB/s</b><span>measured copy bandwidth</span></div>\n",
                fmt_sig3(a, sizeof a, p->device.copy_gbps));
    if (p->device.roof_tflops > 0)
        fprintf(out, "<div class=\"card\"><b>%s</b><span>measured %s (%s)</span></div>\n",
                fmt_flop_rate(a, sizeof a, p->device.roof_tflops),
                roof_name(&p->device), p->device.roof_path);
    if (p->gap_probe.ran)
        fprintf(out, "<div class=\"card\"><b>%s</b><span>gap-probe verdict</span></div>\n",
                verdict_name(p->gap_probe.verdict));
    struct summary sm; /* the text report's summary lines: the bound, the top kinds, the actions */
    struct unit u = unit_of(UNITS_AUTO, p);
    summary_lines(p, &u, &sm);
    fputs("</div>\n<ul class=\"note\">\n", out);
    for (int i = 2; i < sm.n; i++) { /* the step and tok/s are the cards above */
        fputs("<li>", out);
        html_esc(out, sm.line[i]);
        fputs("</li>\n", out);
    }
    fputs("</ul>\n<p class=\"note\">command: <code>", out);
    html_esc(out, p->args);
    fputs("</code></p>\n", out);
}

/* The layer kinds as one bar of their shares of the layer kinds' sum, with a legend (head kinds apart). */
static void kinds_bar(FILE *out, const struct profile *p)
{
    fputs("<h2 id=\"kinds\">Where GPU busy goes, by kind</h2>\n", out);
    const double W = 1060, H = 34;
    fprintf(out,
            "<svg width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
            "aria-label=\"stacked bar of kinds\">\n",
            W, H, W, H);
    double x = 0, total = profile_kinds_sum(p, false);
    for (int k = 0; k < p->n_kinds; k++) {
        const struct prof_kind *pk = &p->by_kind[k];
        if (prof_kind_is_head(pk->kind)) continue;
        double w = W * html_div0(pk->us.median, total);
        fprintf(out, "<rect x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\"><title>",
                x, w, H, html_kind_colour(p, pk->kind));
        html_esc(out, pk->kind);
        fprintf(out, ": %.1f µs, %.1f %% of the layer kinds' sum</title></rect>\n", pk->us.median, 100 * pk->share);
        x += w;
    }
    fputs("</svg>\n<div class=\"legend\">\n", out);
    for (int k = 0; k < p->n_kinds; k++) {
        const struct prof_kind *pk = &p->by_kind[k];
        fprintf(out, "<span class=\"kind\"><i class=\"sw\" style=\"background:%s\"></i>",
                html_kind_colour(p, pk->kind));
        char a[32];
        html_esc(out, pk->kind);
        fprintf(out, " %s (%.1f %%%s)</span>\n", html_us(a, sizeof a, pk->us.median), 100 * pk->share,
                prof_kind_is_head(pk->kind) ? " of the head" : "");
    }
    fputs("</div>\n", out);
}

/* The step's dispatches on their timestamps (the rep the executor kept), one lane per plan. */
static void timeline(FILE *out, const struct profile *p)
{
    fputs("<h2 id=\"timeline\">The step's dispatches in time</h2>\n", out);
    double end = 0;
    for (int i = 0; i < p->n_dispatches; i++) {
        double e = p->dispatches[i].start_us + p->dispatches[i].us.median;
        if (e > end) end = e;
    }
    if (end <= 0) {
        fputs("<p class=\"note\">no timestamps</p>\n", out);
        return;
    }
    const double W = 1060, lane = 26, top = 4;
    bool head = false;
    for (int i = 0; i < p->n_dispatches; i++)
        head = head || prof_kind_is_head(p->dispatches[i].kind);
    double H = top + (head ? 2 : 1) * lane + 22;
    fprintf(out,
            "<svg width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
            "aria-label=\"dispatch timeline\">\n",
            W, H, W, H);
    for (int i = 0; i < p->n_dispatches; i++) {
        const struct prof_dispatch *d = &p->dispatches[i];
        double x = W * d->start_us / end, w = W * d->us.median / end;
        double y = top + (prof_kind_is_head(d->kind) ? lane : 0);
        fprintf(
            out,
            "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\"><title>[%d] ",
            x, y, w > 0.5 ? w : 0.5, lane - 4, html_kind_colour(p, d->kind), d->index);
        html_esc(out, d->kind);
        fputs(" ", out);
        html_esc(out, d->op);
        fprintf(out, " layer %d: %.2f µs at %.1f µs</title></rect>\n", d->layer, d->us.median,
                d->start_us);
    }
    char a[32];
    for (int t = 0; t <= 4; t++) {
        double x = W * t / 4;
        fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"%s\">%s</text>\n", x, H - 4,
                t == 0   ? "start"
                : t == 4 ? "end"
                         : "middle",
                html_us(a, sizeof a, end * t / 4));
    }
    fprintf(
        out,
        "</svg>\n<p class=\"note\">%sstart times from one rep's timestamps, widths the dispatches' "
        "medians; white is time between dispatches (timestamps included). Hover a dispatch for its "
        "figures.</p>\n",
        head ? "top lane: the layer plan; lower lane: the LM head; " : "");
}

/* One segment of the gap-probe bar. */
static void seg(FILE *out, double *x, double us, double scale, const char *fill, const char *what)
{
    if (!(us > 0)) return;
    char a[32];
    fprintf(out,
            "<rect x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"30\" fill=\"%s\"><title>%s: "
            "%s</title></rect>\n",
            *x, us * scale, fill, what, html_us(a, sizeof a, us));
    if (us * scale > 90)
        fprintf(out, "<text x=\"%.2f\" y=\"19\" fill=\"#fff\">%s %s</text>\n", *x + 4, what,
                html_us(a, sizeof a, us));
    *x += us * scale;
}

static void gap_probe(FILE *out, const struct profile *p)
{
    const struct gap_probe *g = &p->gap_probe;
    fputs("<h2 id=\"gap-probe\">Gap probe: one step's wall, decomposed</h2>\n", out);
    if (!g->ran) {
        fputs("<p class=\"note\">not run (--gap-probe)</p>\n", out);
        return;
    }
    const double W = 1060;
    bool ts = g->verdict != VERDICT_UNKNOWN;
    /* the segments add up to the 1× wall; a negative term (noise) is not drawn, so the bar spans
     * the larger of the wall and the drawn segments */
    double drawn = fmax(g->fixed_us, 0) +
                   (ts ? fmax(g->kernel_sum_us, 0) + fmax(g->gaps_us, 0) : fmax(g->marginal_us, 0));
    double whole = fmax(fmax(g->wall1_us, drawn), 1), scale = W / whole, x = 0;
    fprintf(out,
            "<svg width=\"%.0f\" height=\"30\" viewBox=\"0 0 %.0f 30\" role=\"img\" "
            "aria-label=\"gap probe\">\n",
            W, W);
    seg(out, &x, g->fixed_us, scale, "#9c9c9c", "fixed submit + wait");
    if (ts) {
        seg(out, &x, g->kernel_sum_us, scale, "#4e79a7", "kernels");
        seg(out, &x, g->gaps_us, scale, "#e15759", "gaps between dispatches");
    } else {
        seg(out, &x, g->marginal_us, scale, "#4e79a7", "one plan pass");
    }
    fputs("</svg>\n<table>\n", out);
    char a[32], b[32];
    fprintf(out, "<tr><th>wall, plan 1×</th><td class=\"n\">%s</td></tr>\n",
            html_us(a, sizeof a, g->wall1_us));
    fprintf(out, "<tr><th>wall, plan 2×</th><td class=\"n\">%s</td></tr>\n",
            html_us(a, sizeof a, g->wall2_us));
    fprintf(out, "<tr><th>marginal pass (2× − 1×)</th><td class=\"n\">%s</td><td>± %s</td></tr>\n",
            html_us(a, sizeof a, g->marginal_us), html_us(b, sizeof b, g->marginal.u));
    if (ts) {
        fprintf(out, "<tr><th>kernel sum</th><td class=\"n\">%s</td></tr>\n",
                html_us(a, sizeof a, g->kernel_sum_us));
        fprintf(out,
                "<tr><th>gaps (marginal − kernels)</th><td class=\"n\">%s</td><td>%.1f %% of the "
                "pass%s</td></tr>\n",
                html_us(a, sizeof a, g->gaps_us), 100 * g->gaps_share,
                est_within_noise(g->gaps) ? ", within noise" : "");
    }
    fprintf(out, "<tr><th>fixed (1× − marginal)</th><td class=\"n\">%s</td></tr>\n",
            html_us(a, sizeof a, g->fixed_us));
    if (g->head)
        fprintf(out,
                "<tr><th>LM head (marginal with − without)</th><td class=\"n\">%s</td><td>%s "
                "GB/s</td></tr>\n",
                html_us(a, sizeof a, g->lm_head_us), fmt_sig3(b, sizeof b, g->head_gbps));
    fprintf(out, "<tr><th>verdict</th><td colspan=\"2\">%s</td></tr>\n</table>\n",
            verdict_name(g->verdict));
}

/* A crossover row's plan as the command line named it: "auto" for "auto -> wide". */
static void plan_key(const char *plan, char *key, size_t n)
{
    const char *arrow = strstr(plan, " -> ");
    snprintf(key, n, "%.*s", arrow ? (int)(arrow - plan) : (int)strlen(plan), plan);
}

static bool plan_is(const char *plan, const char *key)
{
    char k[24];
    plan_key(plan, k, sizeof k);
    return !strcmp(k, key);
}

/* Step time against width, one line per plan (log-scaled width axis). */
static void crossover(FILE *out, const struct crossover_row *rows, int n)
{
    fputs("<h2 id=\"crossover\">Plan crossover</h2>\n", out);
    double wmin = 1e9, wmax = 0, smax = 0;
    for (int i = 0; i < n; i++) {
        if (!rows[i].ok) continue;
        wmin = fmin(wmin, rows[i].cols);
        wmax = fmax(wmax, rows[i].cols);
        smax = fmax(smax, rows[i].step_us.v);
    }
    const double W = 1060, H = 260, L = 70, B = 30, T = 10, R = 150;
    if (smax > 0) {
        double lw = log((double)wmax) - log((double)wmin);
        fprintf(out,
                "<svg width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
                "aria-label=\"crossover chart\">\n",
                W, H, W, H);
        fprintf(out, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#999\"/>\n", L,
                H - B, W - R, H - B);
        fprintf(out, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#999\"/>\n", L,
                T, L, H - B);
        char a[32];
        for (int t = 0; t <= 4; t++) {
            double y = H - B - (H - B - T) * t / 4;
            fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%s</text>\n", L - 4,
                    y + 4, html_us(a, sizeof a, smax * t / 4));
        }
        static const char *const line_colours[] = {"#4e79a7", "#f28e2b", "#59a14f",
                                                   "#e15759", "#b07aa1", "#9c755f"};
        /* one line per plan of the command line: "auto -> batch" and "auto -> wide" are one line */
        char plans[8][24];
        double label_y[8];
        int n_plans = 0;
        for (int i = 0; i < n; i++) {
            char key[24];
            plan_key(rows[i].plan, key, sizeof key);
            int k = 0;
            while (k < n_plans && strcmp(plans[k], key))
                k++;
            if (k == n_plans && n_plans < 8) snprintf(plans[n_plans++], sizeof plans[0], "%s", key);
        }
        for (int k = 0; k < n_plans; k++) {
            const char *c = line_colours[k % ARRAY_LEN(line_colours)];
            fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", c);
            double lx = 0, ly = 0;
            for (int i = 0; i < n; i++) {
                if (!rows[i].ok || !plan_is(rows[i].plan, plans[k])) continue;
                lx = L + (lw > 0 ? (W - R - L) * (log((double)rows[i].cols) - log(wmin)) / lw
                                 : (W - R - L) / 2);
                ly = H - B - (H - B - T) * rows[i].step_us.v / smax;
                fprintf(out, "%.1f,%.1f ", lx, ly);
            }
            fputs("\"/>\n", out);
            for (int i = 0; i < n; i++) {
                if (!rows[i].ok || !plan_is(rows[i].plan, plans[k])) continue;
                double x = L + (lw > 0 ? (W - R - L) * (log((double)rows[i].cols) - log(wmin)) / lw
                                       : (W - R - L) / 2);
                double y = H - B - (H - B - T) * rows[i].step_us.v / smax;
                fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"><title>", x, y,
                        c);
                html_esc(out, rows[i].plan);
                fprintf(out, " at %d cols: %s, %.0f tok/s</title></circle>\n", rows[i].cols,
                        html_us(a, sizeof a, rows[i].step_us.v), rows[i].tok_s);
                if (k == 0)
                    fprintf(out, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%d</text>\n",
                            x, H - B + 16, rows[i].cols);
            }
            /* end labels 12 px apart at least, so lines that end together stay readable */
            for (int j = 0; j < k; j++)
                if (fabs(ly - label_y[j]) < 12) ly = label_y[j] + 12;
            label_y[k] = ly;
            fprintf(out, "<text x=\"%.0f\" y=\"%.1f\" fill=\"%s\">", lx + 8, ly + 4, c);
            html_esc(out, plans[k]);
            fputs("</text>\n", out);
        }
        fprintf(
            out,
            "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">width (columns)</text>\n</svg>\n",
            (L + W - R) / 2, H - 2);
    }
    fputs("<table><tr><th>width</th><th>plan</th><th>step</th><th>±</th><th>tok/s</th><th>× "
          "floor/roof</th>"
          "<th>note</th></tr>\n",
          out);
    for (int i = 0; i < n; i++) {
        const struct crossover_row *r = &rows[i];
        char a[32], b[32], same[64];
        crossover_same_kernels(rows, i, same, sizeof same);
        fprintf(out, "<tr><td class=\"n\">%d</td><td>", r->cols);
        html_esc(out, r->plan);
        if (!r->ok) {
            fputs("</td><td colspan=\"5\">failed: ", out);
            html_esc(out, r->why);
            fputs("</td></tr>\n", out);
            continue;
        }
        fprintf(out,
                "</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%.0f</td><td "
                "class=\"n\">",
                html_us(a, sizeof a, r->step_us.v), html_us(b, sizeof b, r->step_us.u), r->tok_s);
        enum bound_kind bk = bound_pick(r->floor_us, r->roof_us);
        if (bk == BOUND_COMPUTE) fprintf(out, "%.2f roof", html_div0(r->step_us.v, r->roof_us));
        else if (bk == BOUND_MEMORY) fprintf(out, "%.2f floor", html_div0(r->step_us.v, r->floor_us));
        fputs("</td><td>", out);
        html_esc(out, same);
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n<p class=\"note\">step: the gap probe's 1× wall (no timestamps), median ± its "
          "standard "
          "error.</p>\n",
          out);
}

/* Per-kind medians, base against current, and the comparison's own text. */
static void comparison(FILE *out, const struct profile *base, const struct profile *cur,
                       const char *text)
{
    fputs("<h2 id=\"compare\">Comparison with the baseline</h2>\n", out);
    fputs("<table><tr><th>kind</th><th>base</th><th>current</th><th>delta</th><th></th></tr>\n",
          out);
    for (int i = 0; i < base->n_kinds; i++)
        for (int j = 0; j < cur->n_kinds; j++) {
            const struct prof_kind *b = &base->by_kind[i], *c = &cur->by_kind[j];
            if (strcmp(b->kind, c->kind)) continue;
            char x[32], y[32];
            double pct = 100 * html_div0(c->us.median - b->us.median, b->us.median);
            fprintf(out, "<tr><td><i class=\"sw\" style=\"background:%s\"></i>",
                    html_kind_colour(cur, b->kind));
            html_esc(out, b->kind);
            fprintf(
                out,
                "</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%+.1f %%</td>"
                "<td><svg width=\"200\" height=\"12\"><rect x=\"%.1f\" y=\"1\" width=\"%.1f\" "
                "height=\"10\" "
                "fill=\"%s\"/></svg></td></tr>\n",
                html_us(x, sizeof x, b->us.median), html_us(y, sizeof y, c->us.median), pct,
                pct < 0 ? 100 + fmax(pct, -100) : 100.0, fmin(fabs(pct), 100),
                pct > 0 ? "#e15759" : "#59a14f");
        }
    fputs("</table>\n<pre>", out);
    html_esc(out, text ? text : "");
    fputs("</pre>\n", out);
}

void report_html(FILE *out, const struct profile *p, const struct crossover_row *rows, int n,
                 const struct profile *base, const char *compare_text)
{
    page_head(out, p);
    summary(out, p);
    if (n > 0)
        fprintf(out,
                "<p class=\"note\">a width list: the figures down to the gap probe are its first "
                "configuration "
                "(%d cols, plan %s); every configuration is in the <a "
                "href=\"#crossover\">crossover</a> "
                "below.</p>\n",
                p->shape.cols, p->shape.plan);
    if (has_times(p)) {
        kinds_bar(out, p);
        html_roofline(out, p);
        timeline(out, p);
    } else {
        fputs("<h2 id=\"kinds\">Kinds</h2><p class=\"note\">no per-dispatch timestamps on this "
              "run</p>\n",
              out);
    }
    gap_probe(out, p);
    if (n > 0) crossover(out, rows, n);
    if (base) comparison(out, base, p, compare_text);
    html_page_close(out, p->tool, p->version);
}
