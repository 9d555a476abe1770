/* report_fmt.h - the report stage's private pieces shared by text.c, markdown.c, crossover.c and
 * figures.c (not an interface of the stage: profile.h is). Buffers are the caller's; each returns
 * buf. */
#ifndef LFM2_REPORT_FMT_H
#define LFM2_REPORT_FMT_H

#include "profile.h"

double safe_div(double a, double b);    /* a / b, 0 when b <= 0 */
bool has_head(const struct profile *p); /* some dispatch is the LM head's */
const char *bool_str(bool b);           /* "true" / "false" */

/* The report's time unit (--units): a µs figure is divided by per_us and printed with name. */
struct unit {
    double per_us;    /* 1, 1e3 or 1e6 */
    const char *name; /* "µs", "ms", "s" */
};
/* u resolved for a step of step_us (auto: µs under 10 ms, ms under 10 s, else s), and for p (its
 * kernel time, or its wall without timestamps). */
struct unit unit_for(enum report_units u, double step_us);
struct unit unit_of(enum report_units u, const struct profile *p);
/* A time in unit u (NULL: µs): in µs exactly as printf "%.*f" with dec decimals (dec < 0: fmt_us),
 * so a µs report reads as before; in ms and s three significant digits (fmt_sig3). */
const char *fmt_t(char *buf, size_t size, const struct unit *u, double us, int dec);

/* Whether the shard ends at the model's last layer (only there the LM head runs); and whether the
 * step computed logits (asked for and on such a shard). */
bool shard_has_head(const struct profile *p);
bool logits_ran(const struct profile *p);

/* A gemm path name ("khr", "nv", "fma", "cm2") with its kernel and extension: "khr (gemm_khr:
 * VK_KHR_cooperative_matrix)" (an unknown name as it is). */
const char *fmt_gemm_path(char *buf, size_t size, const char *name);
/* With gemm path cm2: "; on the fallback: K, K" naming the gemm kinds of p's dispatches that are not
 * gemm_cm2's (the products it cannot serve, on the automatic path: select_path.c), "; every
 * product on the fallback (cm2 served none): K, K" where no gemm_cm2 dispatch ran, or "; no
 * fallback"; "" for the other paths. */
const char *fmt_gemm_fallbacks(char *buf, size_t size, const struct profile *p);
/* µs with as many decimals as the size deserves ("828", "42.1", "4.26", "?" when not finite). */
const char *fmt_us(char *buf, size_t size, double v);
/* "p10–p90 a–b, MAD m, n=N" in unit u (NULL: µs, as fmt_us) */
const char *fmt_spread(char *buf, size_t size, const struct unit *u, const struct timing *t);
/* "± u" and " within noise" for a derived figure, in unit un (NULL: µs). */
const char *fmt_err(char *buf, size_t size, const struct unit *un, struct est x);
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

/* The device's arithmetic roof as the headers name it: "tensor roof 499 TFLOP/s (NV coopmat f16)",
 * "FMA roof 0.0512 TFLOP/s (f32 FMA: no cooperative matrices)", or "arithmetic roof not measured". */
const char *fmt_roof(char *buf, size_t size, const struct prof_device *d);
/* Its name in a sentence: "tensor roof" (cooperative matrices), "FMA roof" (the FMA twin's). */
const char *roof_name(const struct prof_device *d);
/* A FLOP count with its prefix: "1.20 TFLOP", "805 GFLOP", "3.10 MFLOP"; a rate given in TFLOP/s
 * the same way: "499 TFLOP/s", "43.8 GFLOP/s". */
const char *fmt_flop(char *buf, size_t size, double flops);
const char *fmt_flop_rate(char *buf, size_t size, double tflops);

/* The summary block (summary.c): its lines without indent or bullet, at most SUMMARY_MAX_LINES. */
#define SUMMARY_MAX_LINES 8
struct summary {
    char line[SUMMARY_MAX_LINES][384];
    int n;
};
void summary_lines(const struct profile *p, const struct unit *u, struct summary *s);


#endif
