/* testutil.h - tiny test harness shared by every tests/test_*.c program.
 * A test program's main calls t_init(argc, argv) first, runs its named cases through T_CASE, calls
 * T_CHECK freely and returns t_finish(): it prints "N passed, M failed" and returns nonzero when
 * anything failed, when no check ran at all, or when the case filter matched no case.
 * Command line of every test program: test_NAME [FIXTURES [FILTER]]: argv[1] the fixtures folder,
 * argv[2] the case filter (t_case). */
#ifndef LFM2_TESTUTIL_H
#define LFM2_TESTUTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

extern int t_pass, t_fail;

#define T_CHECK(cond, ...)                                                                         \
    do {                                                                                           \
        if (cond) {                                                                                \
            t_pass++;                                                                              \
        } else {                                                                                   \
            t_fail++;                                                                              \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

int t_finish(void);

/* Named cases. t_init takes the case filter from argv[2]: a comma-separated list of words, each a
 * case name, a shell pattern of names ("xmv*") or a tag; no filter admits every case. t_case(name,
 * tags) says whether the case `name` (tags: space-separated words, "" for none) runs, and records it:
 * t_finish fails a filter that admitted no case and lists the program's cases. */
void t_init(int argc, char **argv);
bool t_case(const char *name, const char *tags);
#define T_CASE(name, tags, call)                                                                   \
    do {                                                                                           \
        if (t_case(name, tags)) call;                                                              \
    } while (0)

/* Deterministic random numbers (xorshift64*), fresh per seed. */
struct t_rng {
    uint64_t s;
};
void t_rng_seed(struct t_rng *r, uint64_t seed);
uint32_t t_rng_u32(struct t_rng *r);
float t_rng_uniform(struct t_rng *r);  /* [0, 1) */
float t_rng_normal(struct t_rng *r);   /* N(0, 1) */

/* Writes n bytes to path; returns 0 on success. */
int t_write_file(const char *path, const void *data, size_t n);
/* Makes a fresh temporary directory and returns its path (static storage per call site ok). */
const char *t_tmpdir(void);
/* Runs a shell command, captures stdout+stderr into out (truncated), returns the exit code. */
int t_run(const char *cmd, char *out, size_t out_size);

/* Parses a JSON file (NULL when missing or invalid); caller frees with cJSON_Delete. */
struct cJSON *t_json_file(const char *path);
/* Follows a dotted path with [i] indices ("dispatches[0].us.reps") through a cJSON tree. */
const struct cJSON *t_json_at(const struct cJSON *root, const char *path);

#endif
