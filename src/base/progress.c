/* progress.c - progress lines on stderr (progress.h). */
#include "progress.h"

#include <stdio.h>
#include <unistd.h>

#include "common.h"

#define QUIET_US 2e6   /* a phase shorter than this prints nothing */
#define REDRAW_US 1e5  /* terminal: at most 10 redraws a second */

void progress_begin(struct progress *p, const char *what, uint64_t total, const char *unit, double scale)
{
    *p = (struct progress){.what = what, .unit = unit, .scale = scale > 0 ? scale : 1, .total = total,
                           .t0_us = now_us(), .tty = isatty(2)};
}

static void line(const struct progress *p, uint64_t done, double t)
{
    fprintf(stderr, "%s %.0f/%.0f %s (%.0f%%) %.1f s", p->what, (double)done / p->scale, (double)p->total / p->scale,
            p->unit, 100.0 * (double)done / (double)(p->total ? p->total : 1), (t - p->t0_us) * 1e-6);
}

void progress_update(struct progress *p, uint64_t done)
{
    double t = now_us();
    if (t - p->t0_us < QUIET_US) return;
    if (p->tty) {
        if (p->shown && t - p->last_us < REDRAW_US && done < p->total) return;
        fputs("\r\033[K", stderr);
        line(p, done, t);
        fflush(stderr);
        p->shown = true;
        p->last_us = t;
        return;
    }
    int q = p->total ? (int)(4 * done / p->total) : 4;
    if (q <= p->quarter || q >= 4) return; /* the end is progress_end's line */
    p->quarter = q;
    line(p, done, t);
    fputc('\n', stderr);
    p->shown = true;
}

void progress_end(struct progress *p)
{
    double t = now_us();
    if (p->tty && p->shown) fputs("\r\033[K", stderr);
    else if (!p->tty && t - p->t0_us >= QUIET_US)
        fprintf(stderr, "%s done: %.0f %s in %.1f s\n", p->what, (double)p->total / p->scale, p->unit,
                (t - p->t0_us) * 1e-6);
    fflush(stderr);
    p->shown = false;
}
