/* stats.c - timing statistics (medians, percentiles, MAD), figures with their uncertainty (struct
 * est) and the one-sided rank test of compare. */
#include "profile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------------
 * Timing statistics */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of sorted[0..n) by linear interpolation between order statistics. */
static double quantile(const double *sorted, int n, double q)
{
    double at = q * (n - 1);
    int i = (int)floor(at);
    if (i >= n - 1) return sorted[n - 1];
    return sorted[i] + (at - i) * (sorted[i + 1] - sorted[i]);
}

struct timing timing_from(const double *samples, int n)
{
    struct timing t = {0};
    if (n <= 0) return t;
    t.reps = malloc((size_t)n * sizeof(double));
    double *sorted = malloc((size_t)n * sizeof(double));
    CHECK(t.reps && sorted); /* a few doubles: out of memory here is not recoverable */
    memcpy(t.reps, samples, (size_t)n * sizeof(double));
    memcpy(sorted, samples, (size_t)n * sizeof(double));
    qsort(sorted, (size_t)n, sizeof(double), cmp_double);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += samples[i];
    t.n_reps = n;
    t.mean = sum / n;
    t.min = sorted[0];
    t.median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    t.p10 = quantile(sorted, n, 0.10);
    t.p90 = quantile(sorted, n, 0.90);
    for (int i = 0; i < n; i++)
        sorted[i] = fabs(samples[i] - t.median);
    qsort(sorted, (size_t)n, sizeof(double), cmp_double);
    t.mad = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    free(sorted);
    return t;
}

struct timing timing_copy(const struct timing *t)
{
    struct timing c = timing_from(t->reps, t->n_reps);
    /* keep the statistics as given (a profile read from JSON keeps what its writer reported) */
    c.mean = t->mean;
    c.median = t->median;
    c.min = t->min;
    return c;
}

/* ------------------------------------------------------------------------------------------------
 * Figures with their errors. The median's standard error for normal noise is 1.2533 σ/√n and
 * σ ≈ 1.4826 MAD; the MAD keeps one wild rep (a preempted submit) from inflating the error. */

struct est est_median(const struct timing *t)
{
    if (t->n_reps <= 1) return (struct est){t->median, t->n_reps == 1 ? INFINITY : 0.0};
    return (struct est){t->median, 1.2533 * 1.4826 * t->mad / sqrt((double)t->n_reps)};
}

struct est est_sub(struct est a, struct est b)
{
    return (struct est){a.v - b.v, sqrt(a.u * a.u + b.u * b.u)};
}

struct est est_exact(double v)
{
    return (struct est){v, 0.0};
}

struct est est_scale(struct est a, double k)
{
    return (struct est){k * a.v, fabs(k) * a.u};
}

bool est_within_noise(struct est x)
{
    return !(fabs(x.v) > EST_NOISE_K * x.u);
}

int est_reps_to_resolve(struct est x, double size, int n, double k)
{
    if (n < 2 || !isfinite(x.u) || !(fabs(size) > 0)) return 0;
    double want = ceil(n * pow(k * x.u / fabs(size), 2));
    return (int)MIN(MAX(want, n + 1.0), 100000.0);
}

/* ------------------------------------------------------------------------------------------------
 * Rank test. Exact null distribution of the Mann–Whitney U of sizes (m, n) by the recurrence
 * N(u; m, n) = N(u − n; m − 1, n) + N(u; m, n − 1) over arrangements (counts as doubles). */

#define RANK_EXACT_MAX 25

static double u_tail_exact(int m, int n, double u_obs)
{
    int umax = m * n;
    /* f[i][j][u] for i <= m, j <= n, rolled over i */
    double *prev = calloc((size_t)(n + 1) * (umax + 1), sizeof(double));
    double *cur = calloc((size_t)(n + 1) * (umax + 1), sizeof(double));
    CHECK(prev && cur);
#define F(a, j, u) (a)[(size_t)(j) * (umax + 1) + (u)]
    for (int j = 0; j <= n; j++)
        F(prev, j, 0) = 1; /* i = 0: one arrangement, U = 0 */
    for (int i = 1; i <= m; i++) {
        memset(cur, 0, (size_t)(n + 1) * (umax + 1) * sizeof(double));
        F(cur, 0, 0) = 1;
        for (int j = 1; j <= n; j++)
            for (int u = 0; u <= i * j; u++)
                F(cur, j, u) = (u >= j ? F(prev, j, u - j) : 0) + F(cur, j - 1, u);
        double *t = prev;
        prev = cur;
        cur = t;
    }
    double total = 0, tail = 0;
    for (int u = 0; u <= umax; u++) {
        total += F(prev, n, u);
        if (u >= u_obs - 1e-9) tail += F(prev, n, u);
    }
#undef F
    free(prev);
    free(cur);
    return tail / total;
}

/* Sorted copy of v[0..n) (caller frees). */
static double *sorted_copy(const double *v, int n)
{
    double *s = malloc((size_t)n * sizeof *s);
    CHECK(s);
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return s;
}

/* U of y over x (pairs with y above x, ties half) and the ties' term Σ (t³ − t) over the groups of
 * equal values in both samples together: one merge of the two sorted samples, O(n log n) in all.
 * Counts are doubles: 100 k reps a side give U up to 1e10 and t³ up to 8e15, exact in a double. */
static double rank_u(const double *x, int nx, const double *y, int ny, double *ties)
{
    double *sx = sorted_copy(x, nx), *sy = sorted_copy(y, ny);
    double u = 0;
    *ties = 0;
    int i = 0, j = 0; /* sx[0..i) and sy[0..j) lie below the current value */
    while (i < nx || j < ny) {
        double v = j >= ny || (i < nx && sx[i] < sy[j]) ? sx[i] : sy[j];
        int i1 = i, j1 = j;
        while (i1 < nx && sx[i1] == v) i1++;
        while (j1 < ny && sy[j1] == v) j1++;
        double tx = i1 - i, ty = j1 - j, t = tx + ty;
        u += ty * ((double)i + 0.5 * tx); /* each y of the group: the x below it, the tied x half */
        *ties += t * t * t - t;
        i = i1;
        j = j1;
    }
    free(sx);
    free(sy);
    return u;
}

double rank_test_greater(const double *x, int nx, const double *y, int ny)
{
    if (nx <= 0 || ny <= 0) return 1.0;
    double ties, u = rank_u(x, nx, y, ny, &ties);
    if (nx <= RANK_EXACT_MAX && ny <= RANK_EXACT_MAX) return u_tail_exact(ny, nx, ceil(u - 1e-9));
    /* normal approximation with continuity and tie correction, in doubles: the int product
     * nx·ny·(nx+ny+1) overflowed from 1024 reps a side (issue 35) */
    double m = nx, n = ny, big_n = m + n;
    double var = m * n / 12.0 * ((big_n + 1) - ties / (big_n * (big_n - 1)));
    if (!(var > 0)) return 1.0; /* every rep of both sides equal: nothing is greater */
    return 0.5 * erfc((u - 0.5 - 0.5 * m * n) / sqrt(var) / sqrt(2.0));
}

double rank_test_min_p(int nx, int ny)
{
    /* complete separation: 1 / C(nx + ny, nx) */
    double c = 1;
    for (int k = 1; k <= MIN(nx, ny); k++) c = c * (MAX(nx, ny) + k) / k;
    return nx > 0 && ny > 0 ? 1.0 / c : 1.0;
}

const char *verdict_name(enum verdict v)
{
    switch (v) {
    case VERDICT_SUBMIT_POLL:
        return "submit-poll";
    case VERDICT_PER_DISPATCH:
        return "per-dispatch";
    case VERDICT_INCONCLUSIVE:
        return "inconclusive";
    default:
        return "unknown";
    }
}

const char *timing_mode_name(enum timing_mode m)
{
    return m == TIMING_SAMPLED ? "sampled" : m == TIMING_NONE ? "none" : "full";
}
