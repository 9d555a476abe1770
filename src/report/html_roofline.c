/* html_roofline.c - the --html page's roofline section (html.c draws the rest): each
 * weight-reading kind's achieved GB/s against the measured copy bandwidth, and each kind's
 * achieved FLOP/s against its arithmetic intensity under the measured copy bandwidth and
 * arithmetic roof (log-log). */
#include "html_priv.h"

#include <math.h>
#include <string.h>

/* Each weight-reading kind's achieved GB/s against the copy bandwidth (the memory roof). */
static void roofline_bandwidth(FILE *out, const struct profile *p)
{
    int n = 0;
    double top = p->device.copy_gbps;
    for (int k = 0; k < p->n_kinds; k++)
        if (p->by_kind[k].bytes + p->by_kind[k].kv_bytes > 0) {
            n++;
            if (p->by_kind[k].gbps > top) top = p->by_kind[k].gbps;
        }
    if (n == 0 || top <= 0) {
        fputs("<p class=\"note\">no kind reads weights with a time here</p>\n", out);
        return;
    }
    const double L = 230, W = 1060, R = W - L - 90, row = 20;
    double H = n * row + 30;
    fprintf(out,
            "<svg width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
            "aria-label=\"bandwidth roofline\">\n",
            W, H, W, H);
    int i = 0;
    for (int k = 0; k < p->n_kinds; k++) {
        const struct prof_kind *pk = &p->by_kind[k];
        if (pk->bytes + pk->kv_bytes == 0) continue;
        double y = 4 + i++ * row, w = R * pk->gbps / top;
        char g[32];
        fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">", L - 6, y + 13);
        html_esc(out, pk->kind);
        fprintf(
            out,
            "</text><rect x=\"%.0f\" y=\"%.0f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\"><title>",
            L, y, w, row - 5, html_kind_colour(p, pk->kind));
        html_esc(out, pk->kind);
        fprintf(out, ": %s GB/s", fmt_sig3(g, sizeof g, pk->gbps));
        if (p->device.copy_gbps > 0)
            fprintf(out, " = %.0f %% of copy bandwidth", 100 * pk->bw_share);
        fprintf(out, "</title></rect><text x=\"%.2f\" y=\"%.0f\">%s GB/s</text>\n", L + w + 4,
                y + 13, g);
    }
    if (p->device.copy_gbps > 0) {
        double x = L + R * p->device.copy_gbps / top;
        char g[32];
        fprintf(
            out,
            "<line x1=\"%.2f\" x2=\"%.2f\" y1=\"0\" y2=\"%.0f\" stroke=\"#c00\" "
            "stroke-dasharray=\"4 3\"/>"
            "<text x=\"%.2f\" y=\"%.0f\" fill=\"#c00\" text-anchor=\"end\">copy %s GB/s</text>\n",
            x, x, H - 14, x, H - 2, fmt_sig3(g, sizeof g, p->device.copy_gbps));
    }
    fputs("</svg>\n<p class=\"note\">GB/s = (weight + KV bytes read) ÷ median time; the dashed "
          "line is the device-to-device copy kernel measured at start (read + write).</p>\n",
          out);
}

/* A kind on the FLOP/s roofline: it counts FLOPs and reads bytes. */
static bool on_roofline(const struct prof_kind *pk)
{
    return pk->flops > 0 && pk->bytes + pk->kv_bytes > 0 && pk->tflops > 0;
}

/* log10 scale of [lo, hi] onto [a, b] pixels */
struct logax {
    double lo, hi, a, b;
};
static double logax_at(const struct logax *x, double v)
{
    return x->a + (x->b - x->a) * (log10(v) - log10(x->lo)) / (log10(x->hi) - log10(x->lo));
}

/* Decades of [lo, hi] as grid lines and labels (vertical: along y, labelled as FLOP/s). */
static void logax_grid(FILE *out, const struct logax *ax, bool vertical, double from, double to)
{
    for (double d = pow(10, ceil(log10(ax->lo))); d <= ax->hi * 1.0001; d *= 10) {
        double at = logax_at(ax, d);
        char lab[48];
        if (vertical)
            fmt_flop_rate(lab, sizeof lab, d * 1e-12);
        else
            fmt_sig3(lab, sizeof lab, d);
        if (vertical)
            fprintf(out,
                    "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                    from, to, at, at, from - 4, at + 4, lab);
        else
            fprintf(out,
                    "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                    at, at, from, to, at, to + 14, lab);
    }
}

/* Each kind's achieved FLOP/s against its arithmetic intensity (FLOPs per byte read), log-log,
 * under the two measured roofs: the copy bandwidth's slope (bytes/s × FLOP/byte) and the
 * arithmetic roof's flat line; they meet at the device's balance. */
static void roofline_flops(FILE *out, const struct profile *p)
{
    const struct prof_device *dv = &p->device;
    double imin = INFINITY, imax = 0, rmin = INFINITY, rmax = 0; /* FLOP/byte, FLOP/s */
    int n = 0;
    for (int k = 0; k < p->n_kinds; k++) {
        const struct prof_kind *pk = &p->by_kind[k];
        if (!on_roofline(pk)) continue;
        double in = (double)pk->flops / (double)(pk->bytes + pk->kv_bytes), f = pk->tflops * 1e12;
        imin = fmin(imin, in);
        imax = fmax(imax, in);
        rmin = fmin(rmin, f);
        rmax = fmax(rmax, f);
        n++;
    }
    if (n == 0) {
        fputs("<p class=\"note\">FLOP/s: no kind here both counts FLOPs and reads bytes</p>\n",
              out);
        return;
    }
    double roof = dv->roof_tflops * 1e12, bw = dv->copy_gbps * 1e9, balance = html_div0(roof, bw);
    if (balance > 0) {
        imin = fmin(imin, balance);
        imax = fmax(imax, balance);
    }
    if (roof > 0) rmax = fmax(rmax, roof);
    const double W = 1060, H = 360, L = 90, T = 12, B = H - 40, R = W - 60;
    struct logax x = {pow(10, floor(log10(imin / 2))), pow(10, ceil(log10(imax * 2))), L, R};
    struct logax y = {pow(10, floor(log10(rmin / 2))), pow(10, ceil(log10(rmax * 2))), B, T};
    fprintf(out,
            "<svg width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
            "aria-label=\"FLOP/s roofline\">\n",
            W, H, W, H);
    logax_grid(out, &x, false, T, B);
    logax_grid(out, &y, true, L, R);
    fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">FLOP per byte read</text>\n",
            (L + R) / 2, H - 4);
    fprintf(out,
            "<text x=\"14\" y=\"%.0f\" transform=\"rotate(-90 14 %.0f)\" text-anchor=\"middle\">"
            "achieved FLOP/s</text>\n",
            (T + B) / 2, (T + B) / 2);
    char a[32], b[32];
    if (bw > 0) { /* the bandwidth's slope up to the roof (or the chart's top) */
        double x1 = x.lo, x2 = fmin(x.hi, roof > 0 ? balance : y.hi / bw);
        double y1 = fmax(bw * x1, y.lo);
        x1 = y1 / bw;
        fprintf(out,
                "<line class=\"bw-roof\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"#c00\" "
                "stroke-dasharray=\"4 3\"><title>copy bandwidth %s GB/s</title></line>\n",
                logax_at(&x, x1), logax_at(&y, y1), logax_at(&x, x2),
                logax_at(&y, fmin(bw * x2, y.hi)), fmt_sig3(a, sizeof a, dv->copy_gbps));
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#c00\">copy %s GB/s</text>\n",
                logax_at(&x, x1) + 4, logax_at(&y, y1) - 6, a);
    }
    if (roof > 0) {
        double x1 = bw > 0 ? balance : x.lo, yr = logax_at(&y, roof);
        fprintf(out,
                "<line class=\"tensor-roof\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"#06c\" "
                "stroke-width=\"2\"><title>%s</title></line>\n",
                logax_at(&x, x1), yr, R, yr, fmt_roof(b, sizeof b, dv));
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#06c\" text-anchor=\"end\">roof %s ", R,
                yr - 6, fmt_flop_rate(a, sizeof a, dv->roof_tflops));
        html_esc(out, dv->roof_path);
        fputs("</text>\n", out);
    }
    for (int k = 0; k < p->n_kinds; k++) {
        const struct prof_kind *pk = &p->by_kind[k];
        if (!on_roofline(pk)) continue;
        double in = (double)pk->flops / (double)(pk->bytes + pk->kv_bytes);
        double cx = logax_at(&x, in), cy = logax_at(&y, pk->tflops * 1e12);
        fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"%s\"><title>", cx, cy,
                html_kind_colour(p, pk->kind));
        html_esc(out, pk->kind);
        fprintf(out, ": %s at %s FLOP/byte", fmt_flop_rate(a, sizeof a, pk->tflops),
                fmt_sig3(b, sizeof b, in));
        if (roof > 0) fprintf(out, " = %.1f %% of the roof", 100 * pk->roof_share);
        fprintf(out, "</title></circle><text x=\"%.1f\" y=\"%.1f\">", cx + 8, cy + 4);
        html_esc(out, pk->kind);
        fputs("</text>\n", out);
    }
    fputs("</svg>\n<p class=\"note\">FLOP/s = a kind's useful FLOPs ÷ median time (products "
          "2·rows·k·cols, "
          "attention's QK and PV, convolutions); FLOP per byte = those FLOPs ÷ (weight + KV bytes "
          "read). "
          "The solid line is the arithmetic roof measured at start on registers (the units the "
          "wide plan's "
          "gemm multiplies on), the dashed slope the copy bandwidth; a kind left of their meeting "
          "point "
          "is bound by memory, right of it by arithmetic.</p>\n",
          out);
}

/* The roofline: achieved GB/s against the copy bandwidth, and FLOP/s against the arithmetic roof.
 */
void html_roofline(FILE *out, const struct profile *p)
{
    fputs("<h2 id=\"roofline\">Roofline: achieved bandwidth and FLOP/s per kind</h2>\n", out);
    roofline_bandwidth(out, p);
    roofline_flops(out, p);
}
