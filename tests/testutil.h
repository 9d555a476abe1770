/* testutil.h - tiny test harness shared by every tests/test_*.c program.
 * A test program calls T_CHECK/T_NEAR freely and returns t_finish() from main: it prints
 * "N passed, M failed" and returns nonzero when anything failed. argv[1] is the fixtures folder. */
#ifndef LFM2_TESTUTIL_H
#define LFM2_TESTUTIL_H

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
