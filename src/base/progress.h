/* progress.h - progress of a long phase on stderr (upload, warm-up, profiled reps, gap probe).
 *
 * A phase says nothing for its first 2 s, so quick runs stay quiet. After that: on a terminal one
 * live line, redrawn at most 10 times a second and erased when the phase ends; otherwise (a log, a
 * CI job) a plain line at each quarter of the work and one when it ends, so a log shows what a
 * slow run was doing without a line per step. */
#ifndef LFM2_PROGRESS_H
#define LFM2_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct progress {
    const char *what; /* "warm-up", "uploading", ... */
    const char *unit; /* "steps", "MB" (done and total are shown divided by scale) */
    double scale;
    uint64_t total;
    double t0_us, last_us; /* phase start; last redraw */
    int quarter;           /* plain mode: quarters already reported */
    bool tty, shown;
};

void progress_begin(struct progress *p, const char *what, uint64_t total, const char *unit, double scale);
void progress_update(struct progress *p, uint64_t done);
void progress_end(struct progress *p);

#endif
