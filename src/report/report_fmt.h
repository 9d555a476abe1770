/* report_fmt.h - the report stage's private pieces shared by text.c, markdown.c, crossover.c and
 * figures.c (not an interface of the stage: profile.h is). Buffers are the caller's; each returns
 * buf. */
#ifndef LFM2_REPORT_FMT_H
#define LFM2_REPORT_FMT_H

#include "profile.h"

double safe_div(double a, double b); /* a / b, 0 when b <= 0 */
bool has_head(const struct profile *p); /* some dispatch is the LM head's */
const char *bool_str(bool b);           /* "true" / "false" */

/* µs with as many decimals as the size deserves ("828", "42.1", "4.26", "?" when not finite). */
const char *fmt_us(char *buf, size_t size, double v);
/* "p10–p90 a–b, MAD m, n=N" */
const char *fmt_spread(char *buf, size_t size, const struct timing *t);
/* "± u" and " within noise" for a derived figure. */
const char *fmt_err(char *buf, size_t size, struct est x);
/* "the measured spread says --reps N would decide", or "rerun with more --reps" (reps 0). */
const char *fmt_reps_advice(char *buf, size_t size, int reps);

/* The gap probe's sentences: the verdict, the LM head's within-noise line, the plan's dispatches
 * and stages ("the plan: N dispatches in M stages, ..."). */
const char *verdict_text(char *buf, size_t size, const struct gap_probe *g);
const char *head_inconclusive(char *buf, size_t size, const struct gap_probe *g);
const char *plan_sentence(char *buf, size_t n, const struct gap_probe *g);
/* What the wall measures, by timing mode. */
const char *wall_meaning(const struct profile *p);

/* The top single dispatches: indices by median time descending (caller frees), how many are listed,
 * whether they mix head and layer dispatches, and a dispatch's share of its own plan's sum. */
int *top_order(const struct profile *p);
int n_top(const struct profile *p);
bool top_mixes(const struct profile *p, const int *idx);
double dispatch_share(const struct profile *p, const struct prof_dispatch *d);

#endif
