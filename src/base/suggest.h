/* suggest.h - "did you mean": the known name closest to a misspelt one (flags, built-in models). */
#ifndef LFM2_SUGGEST_H
#define LFM2_SUGGEST_H

/* Edit distance (insert, delete, substitute, swap two neighbours: each 1) between a and b, letters
 * compared without case. Names longer than SUGGEST_MAX_LEN count as far from everything. */
#define SUGGEST_MAX_LEN 64
int suggest_distance(const char *a, const char *b);

/* The name of names[0..n) closest to s, or NULL when none is close: a name that differs only in
 * case always is; otherwise the distance must be at most 1 + strlen(s) / 4 (so a typo or two, never
 * an unrelated word). Ties go to the first. */
const char *suggest_closest(const char *s, const char *const *names, int n);

#endif
