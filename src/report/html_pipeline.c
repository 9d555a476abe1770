/* html_pipeline.c - --html with --stages: one self-contained page of a pipeline (pipeline.h
 * report_html_pipeline).
 *
 * As the profile's page (html.c): inline style and SVG, no script, no network. Sections: the
 * pipeline summary (bottleneck, throughput bound against the ideal, bubble, hand-off, for the
 * split asked for and the balanced split), the stages' step times of both splits side by side
 * (each stage a bar of its step with its p10–p90, its marginal pass inside, its predicted step as
 * a tick; the bottleneck outlined), each split's stage table, and the per-layer costs (a bar per
 * layer with its error, both splits' stage boundaries drawn over them). */
#include "html_priv.h"
#include "pipeline.h"

#include <math.h>
#include <string.h>

static const char *const stage_colours[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1",
                                            "#76b7b2", "#edc948", "#9c755f", "#ff9da7"};
#define STAGE_COLOUR(i) stage_colours[(i) % (int)ARRAY_LEN(stage_colours)]

static void page_head(FILE *out, const struct pipeline *p, const char *split)
{
    char title[640];
    snprintf(title, sizeof title, "%s: pipeline of %d stages (%s split %s), %d cols", p->tool, p->given.k,
             p->given.how, split, p->cols);
    html_page_open(out, title);
}

static void card(FILE *out, const char *value, const char *what)
{
    fputs("<div class=\"card\"><b>", out);
    html_esc(out, value);
    fputs("</b><span>", out);
    html_esc(out, what);
    fputs("</span></div>\n", out);
}

/* The cards of one split: its bottleneck, bound against ideal, bubble. */
static void split_cards(FILE *out, const struct pipeline *p, const struct pipeline_split *s)
{
    char v[64], w[160], a[32], b[32];
    const struct pipeline_stage *bn = pipeline_split_stage(p, s, s->bottleneck);
    snprintf(w, sizeof w, "%s split: bottleneck, stage %d (%d:%d)", s->how, s->bottleneck, bn->a, bn->b);
    card(out, html_us(v, sizeof v, s->max_us), w);
    snprintf(v, sizeof v, "%s / %s", fmt_sig3(a, sizeof a, s->tok_s_bound), fmt_sig3(b, sizeof b, s->tok_s_ideal));
    snprintf(w, sizeof w, "%s split: tok/s bound / ideal", s->how);
    card(out, v, w);
    snprintf(v, sizeof v, "%.1f %%", 100 * s->bubble);
    snprintf(w, sizeof w, "%s split: bubble", s->how);
    card(out, v, w);
}

/* The fixed parts the predictions charge by role. */
static void fixed_note(FILE *out, const struct pipeline *p)
{
    const struct pipeline_fixed *f = &p->fixed;
    char a[32], b[32], c[32];
    fprintf(out, "<p class=\"note\">predicted step: Σ of the stage's layers' costs + its fixed part (step − marginal "
            "of the measured %s split, by role, at least 0): ", p->given.how);
    char line[160];
    pipeline_fixed_phrase(f, html_us(a, sizeof a, f->first), html_us(b, sizeof b, f->middle),
                          html_us(c, sizeof c, f->last), line, sizeof line);
    fprintf(out, "%s</p>\n", line);
}

static void summary(FILE *out, const struct pipeline *p, const char *split)
{
    const struct profile *p0 = &p->given.st[0].p;
    char pl[512], a[32], b[32], c[32];
    fputs("<h1 id=\"pipeline\">", out);
    html_esc(out, p->tool);
    fprintf(out, ": pipeline of %d stages (%s split %s), %d cols</h1>\n<p class=\"sub\">", p->given.k, p->given.how,
            split, p->cols);
    html_esc(out, p0->device.name);
    fputs(" · ", out);
    html_esc(out, p0->model.family);
    fprintf(out, " %s, %d layers, hidden %d · ", p0->model.dtype, p->n_layers, p->hidden);
    html_esc(out, report_plan_line(pl, sizeof pl, p0));
    fputs("</p>\n<div class=\"cards\">\n", out);
    split_cards(out, p, &p->given);
    if (p->balanced.k && !p->balanced_is_given) split_cards(out, p, &p->balanced);
    if (p->given.k > 1) {
        char w[200];
        snprintf(a, sizeof a, "%s kB", fmt_sig3(c, sizeof c, (double)p->handoff_bytes / 1e3));
        if (p->handoff_us > 0)
            snprintf(w, sizeof w, "hand-off a boundary (%d cols × %d hidden × 4 B): %s at %s GB/s device → "
                     "host-visible; %d %s %s a step", p->cols, p->hidden, html_us(b, sizeof b, p->handoff_us),
                     fmt_sig3(c, sizeof c, p->d2h_gbps), p->given.k - 1,
                     p->given.k == 2 ? "boundary adds" : "boundaries add",
                     html_us(pl, sizeof pl, p->handoff_us * (p->given.k - 1)));
        else
            snprintf(w, sizeof w, "hand-off a boundary (%d cols × %d hidden × 4 B; transfer bandwidth not measured)",
                     p->cols, p->hidden);
        card(out, a, w);
    }
    fprintf(out, "</div>\n<p class=\"note\">bound: cols ÷ the slowest stage's step, the pipeline's throughput at "
            "this width; ideal: cols ÷ (sum of the steps ÷ %d), the same work spread evenly; bubble: 1 − bound ÷ "
            "ideal, the stages' time spent waiting for the bottleneck (fill and drain not counted).</p>\n",
            p->given.k);
    if (p->balanced.k) {
        char bs[512];
        pipeline_split_text(&p->balanced, bs, sizeof bs);
        fprintf(out, "<p class=\"note\">balanced split %s: predicted slowest step %s (the %s split: %s)%s</p>\n", bs,
                html_us(a, sizeof a, p->balanced.predicted_max_us), p->given.how,
                html_us(b, sizeof b, p->given.predicted_max_us),
                p->balanced_is_given ? "; the same split as asked for, profiled once" : "");
    }
    if (p->layer_cost && p->fixed.known) fixed_note(out, p);
}

/* One split's bars from x0 over width gw: step (light, with its p10–p90 whisker), marginal
 * (solid, inside), predicted (a black tick); the bottleneck outlined and labelled. */
static void split_bars(FILE *out, const struct pipeline *p, const struct pipeline_split *s, double x0, double gw,
                       double ymax, double H, double B, double T)
{
    double slot = gw / s->k, bw = fmin(70, slot * 0.7);
    char a[32], b[32], c[32], d[32];
#define Y(v) (H - B - (H - B - T) * (v) / ymax)
    for (int i = 0; i < s->k; i++) {
        const struct pipeline_stage *st = pipeline_split_stage(p, s, i);
        const struct timing *t = pipeline_stage_wall(st);
        double x = x0 + slot * i + (slot - bw) / 2, y = Y(st->step_us.v);
        bool bn = i == s->bottleneck;
        fprintf(out, "<g class=\"stage\"><title>%s split, stage %d, layers %d:%d%s: step %s (p10–p90 %s–%s), "
                "marginal %s", s->how, i, st->a, st->b, bn ? " (bottleneck)" : "",
                html_us(a, sizeof a, st->step_us.v), html_us(b, sizeof b, t->p10), html_us(c, sizeof c, t->p90),
                html_us(d, sizeof d, st->marginal_us.v));
        if (p->layer_cost) fprintf(out, ", predicted step %s", html_us(a, sizeof a, st->predicted_us));
        fprintf(out, ", %.0f %% of the slowest</title>\n", 100 * html_div0(st->step_us.v, s->max_us));
        fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" fill-opacity=\"0.35\"%s/>\n",
                x, y, bw, H - B - y, STAGE_COLOUR(i), bn ? " stroke=\"#000\" stroke-width=\"2\"" : "");
        if (st->marginal_us.v > 0) {
            double ym = Y(fmin(st->marginal_us.v, ymax));
            fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n", x + bw * 0.25,
                    ym, bw * 0.5, H - B - ym, STAGE_COLOUR(i));
        }
        if (t->p10 > 0 && t->p90 > 0)
            fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", x + bw / 2,
                    Y(t->p10), x + bw / 2, Y(fmin(t->p90, ymax)));
        if (p->layer_cost && st->predicted_us > 0)
            fprintf(out, "<line class=\"predicted\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" "
                    "stroke-width=\"3\"/>\n", x - 4, Y(st->predicted_us), x + bw + 4, Y(st->predicted_us));
        fprintf(out, "</g>\n<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%d: %d:%d</text>\n", x + bw / 2,
                H - B + 14, i, st->a, st->b);
        if (bn)
            fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-weight=\"bold\">bottleneck</text>\n",
                    x + bw / 2, Y(fmin(fmax(st->step_us.v, t->p90), ymax)) - 6);
    }
    /* the split's mean stage: where every stage would be with the same work spread evenly */
    double mean = s->sum_us / s->k;
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e15759\" stroke-dasharray=\"5 4\">"
            "<title>%s split: mean stage %s (the ideal)</title></line>\n", x0, Y(mean), x0 + gw, Y(mean), s->how,
            html_us(a, sizeof a, mean));
    fprintf(out, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" font-weight=\"bold\">%s split: bound %s tok/s, "
            "bubble %.1f %%</text>\n", x0 + gw / 2, H - B + 30, s->how, fmt_sig3(a, sizeof a, s->tok_s_bound),
            100 * s->bubble);
#undef Y
}

static double split_ymax(const struct pipeline *p, const struct pipeline_split *s)
{
    double m = 0;
    for (int i = 0; i < s->k; i++) {
        const struct pipeline_stage *st = pipeline_split_stage(p, s, i);
        m = fmax(m, fmax(st->step_us.v, fmax(st->predicted_us, st->marginal_us.v)));
        m = fmax(m, pipeline_stage_wall(st)->p90);
    }
    return m;
}

static void stage_chart(FILE *out, const struct pipeline *p)
{
    const struct pipeline_split *g = &p->given, *bs = &p->balanced;
    bool two = bs->k && !p->balanced_is_given;
    fputs("<h2 id=\"stages\">Stage step times: the split asked for beside the balanced split</h2>\n", out);
    const double W = 1060, H = 300, L = 70, B = 40, T = 22;
    double ymax = fmax(split_ymax(p, g), two ? split_ymax(p, bs) : 0) * 1.05;
    if (!(ymax > 0)) ymax = 1;
    fprintf(out, "<svg width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
            "aria-label=\"stage step times\">\n", W, H, W, H);
    fprintf(out, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#999\"/>\n", L, H - B, W, H - B);
    char a[32];
    for (int t = 0; t <= 4; t++) {
        double y = H - B - (H - B - T) * t / 4;
        fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%s</text>\n", L - 4, y + 4,
                html_us(a, sizeof a, ymax * t / 4));
    }
    double gw = (W - L) / (two ? 2 : 1);
    split_bars(out, p, g, L, gw - 10, ymax, H, B, T);
    if (two) split_bars(out, p, bs, L + gw + 10, gw - 10, ymax, H, B, T);
    fputs("</svg>\n<p class=\"note\">each stage: light bar its step (the gap probe's 1× wall, median) with its "
          "p10–p90, solid bar its marginal pass (2× − 1× walls: the work a stage adds in a running pipeline)", out);
    if (p->layer_cost) fputs(", black tick its predicted step (Σ of its layers' costs + its fixed part)", out);
    fputs("; the outlined stage is the bottleneck; the dashed red line is the split's mean stage, where every stage "
          "would be with the work spread evenly. Hover a stage for its figures.", out);
    if (bs->k && p->balanced_is_given) fputs(" The balanced split is the split asked for: profiled once.", out);
    fputs("</p>\n", out);
}

static void stage_table(FILE *out, const struct pipeline *p, const struct pipeline_split *s)
{
    char split[512], a[32], b[32], c[32], d[32], f[32];
    pipeline_split_text(s, split, sizeof split);
    fprintf(out, "<table class=\"split\"><tr><th colspan=\"7\">%s split %s</th></tr>\n<tr><th>stage</th><th>layers"
            "</th><th>step</th><th>p10–p90</th><th>of slowest</th><th>marginal</th><th>predicted step</th></tr>\n",
            s->how, split);
    for (int i = 0; i < s->k; i++) {
        const struct pipeline_stage *st = pipeline_split_stage(p, s, i);
        const struct timing *t = pipeline_stage_wall(st);
        fprintf(out, "<tr><td><i class=\"sw\" style=\"background:%s\"></i>%d%s</td><td>%d:%d</td><td class=\"n\">%s"
                "</td><td class=\"n\">%s–%s</td><td class=\"n\">%.0f %%</td><td class=\"n\">%s</td><td class=\"n\">%s"
                "</td></tr>\n", STAGE_COLOUR(i), i, i == s->bottleneck ? " (bottleneck)" : "", st->a, st->b,
                html_us(a, sizeof a, st->step_us.v), html_us(b, sizeof b, t->p10), html_us(c, sizeof c, t->p90),
                100 * html_div0(st->step_us.v, s->max_us), html_us(d, sizeof d, st->marginal_us.v),
                p->layer_cost ? html_us(f, sizeof f, st->predicted_us) : "-");
    }
    fputs("</table>\n", out);
}

/* The x of the boundary before layer l. */
static double layer_x(double L, double W, int n, int l)
{
    return L + (W - L) * l / n;
}

static void boundaries(FILE *out, const struct pipeline_split *s, int n, double L, double W, double H, double B,
                       double T, const char *colour, const char *dash, double label_y)
{
    for (int i = 1; i < s->k; i++) {
        double x = layer_x(L, W, n, s->bounds[i]);
        fprintf(out, "<line class=\"boundary\" x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"%s\" "
                "stroke-width=\"2\"%s%s%s><title>%s split: stage %d starts at layer %d</title></line>\n", x, T, x,
                H - B, colour, *dash ? " stroke-dasharray=\"" : "", dash, *dash ? "\"" : "", s->how, i, s->bounds[i]);
        fprintf(out, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" fill=\"%s\">%s</text>\n", x, label_y, colour,
                s->how);
    }
}

static void layer_chart(FILE *out, const struct pipeline *p)
{
    fputs("<h2 id=\"layers\">Per-layer costs and the stage boundaries</h2>\n", out);
    if (!p->layer_cost) {
        fputs("<p class=\"note\">no per-layer costs on this run</p>\n", out);
        return;
    }
    int n = p->n_layers;
    double ymax = 0;
    for (int l = 0; l < n; l++)
        ymax = fmax(ymax, p->layer_cost[l].v + (isfinite(p->layer_cost[l].u) ? p->layer_cost[l].u : 0));
    ymax = ymax > 0 ? ymax * 1.05 : 1;
    const double W = 1060, H = 260, L = 70, B = 24, T = 30;
    fprintf(out, "<svg width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
            "aria-label=\"per-layer costs\">\n", W, H, W, H);
    fprintf(out, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#999\"/>\n", L, H - B, W, H - B);
    char a[32], b[32];
    for (int t = 0; t <= 4; t++)
        fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%s</text>\n", L - 4,
                H - B - (H - B - T) * t / 4 + 4, html_us(a, sizeof a, ymax * t / 4));
    const struct pipeline_split *g = &p->given;
    int stage = 0, every = n > 32 ? (n + 15) / 16 : 1;
    double slot = (W - L) / n, bw = fmax(1, slot * 0.8);
    for (int l = 0; l < n; l++) {
        while (stage + 1 < g->k && l >= g->bounds[stage + 1])
            stage++;
        const struct est *c = &p->layer_cost[l];
        double v = fmax(c->v, 0), x = layer_x(L, W, n, l) + (slot - bw) / 2;
        double y = H - B - (H - B - T) * v / ymax;
        fprintf(out, "<rect class=\"layer\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>"
                "layer %d: %s ± %s (%s stage %d)</title></rect>\n", x, y, bw, H - B - y, STAGE_COLOUR(stage), l,
                html_us(a, sizeof a, c->v), isfinite(c->u) ? html_us(b, sizeof b, c->u) : "?", g->how, stage);
        if (isfinite(c->u) && c->u > 0)
            fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", x + bw / 2,
                    H - B - (H - B - T) * fmax(c->v - c->u, 0) / ymax, x + bw / 2,
                    H - B - (H - B - T) * (c->v + c->u) / ymax);
        if (l % every == 0)
            fprintf(out, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%d</text>\n", x + bw / 2, H - B + 14, l);
    }
    boundaries(out, g, n, L, W, H, B, T, "#333", "", 12);
    if (p->balanced.k) boundaries(out, &p->balanced, n, L, W, H, B, T, "#e15759", "6 4", 24);
    fprintf(out, "</svg>\n<p class=\"note\">a bar per layer, coloured by its stage in the %s split, with ± its "
            "error; layer costs from %s (layer 0 with the embedding, the last with the head when logits). Solid "
            "lines: the %s split's stage boundaries; dashed red: the balanced split's (the exact partition of "
            "these costs, each stage with its fixed part, with the smallest slowest step).</p>\n", g->how,
            p->layer_cost_shares ? "each layer's share of its stage's kernel time × the stage's marginal pass"
                                 : "the marginal pass of each one-layer shard", g->how);
}

void report_html_pipeline(FILE *out, const struct pipeline *p)
{
    char split[512];
    pipeline_split_text(&p->given, split, sizeof split);
    page_head(out, p, split);
    summary(out, p, split);
    stage_chart(out, p);
    stage_table(out, p, &p->given);
    if (p->balanced.k && !p->balanced_is_given) stage_table(out, p, &p->balanced);
    layer_chart(out, p);
    fputs("<p class=\"note\">command: <code>", out);
    html_esc(out, p->args);
    fputs("</code></p>\n", out);
    html_page_close(out, p->tool, p->version);
}
