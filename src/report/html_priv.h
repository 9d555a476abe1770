/* html_priv.h - what html.c, html_roofline.c and html_pipeline.c share (the --html pages; not an
 * interface of the stage: profile.h report_html and pipeline.h report_html_pipeline are). */
#ifndef LFM2_HTML_PRIV_H
#define LFM2_HTML_PRIV_H

#include "profile.h"
#include "report_fmt.h"

/* Text with <, >, & and quotes escaped. */
void html_esc(FILE *out, const char *s);
/* µs as µs, ms or s with three significant digits. */
const char *html_us(char *buf, size_t n, double us);
/* A page's start up to <body>: the doctype, the title (escaped here) and the one <style> block
 * every page shares. */
void html_page_open(FILE *out, const char *title);
/* A page's end: the tool and version that wrote it, and </body></html>. */
void html_page_close(FILE *out, const char *tool, const char *version);
/* a / b, 0 when b is 0 or the quotient not finite */
double html_div0(double a, double b);
/* One colour per kind, the same in every chart (html.c says how). */
const char *html_kind_colour(const struct profile *p, const char *kind);
/* The roofline section: GB/s per kind against the copy bandwidth, FLOP/s per kind against the
 * arithmetic roof (html_roofline.c). */
void html_roofline(FILE *out, const struct profile *p);

#endif
