/* common.h - status codes, the error message every fallible function fills, small helpers.
 *
 * Contract: a function that can fail returns an int status (ST_OK on success) and, on failure,
 * fills `struct err` with one line naming what was wrong (file, tensor, flag, value or Vulkan
 * call) and what was expected. Only main() turns a status into an exit code. */
#ifndef LFM2_COMMON_H
#define LFM2_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* Status codes double as the tool's exit codes (docs/design.md, Command line). */
enum status {
    ST_OK = 0,
    ST_RUNTIME = 1,    /* device, memory, driver failure */
    ST_USAGE = 2,      /* bad flag, bad input file, runs that cannot be compared */
    ST_REGRESSION = 3, /* --compare found a regression */
    ST_GOLDEN = 4,     /* --golden check failed */
    ST_UNDECIDED = 5,  /* --compare: a change above the threshold that the reps are too few to tell
                          from noise (rerun with the reps it names); never a pass */
};

struct err {
    char msg[1024];
};

/* Fills e (if not NULL) with a printf-style message and returns code. */
int err_set(struct err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prepends "prefix: " to an existing message (adds context while unwinding); returns code. */
int err_wrap(struct err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Internal invariant check (never for input validation): prints file, line, expression; aborts. */
#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x)) check_failed(__FILE__, __LINE__, #x);                                            \
    } while (0)
_Noreturn void check_failed(const char *file, int line, const char *expr);

/* Half and bfloat16 widening/narrowing (round to nearest even), shared by loaders, tests, golden. */
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);

/* Unaligned little-endian reads from mapped files. */
uint16_t rd_u16(const uint8_t *p);
uint32_t rd_u32(const uint8_t *p);
uint64_t rd_u64(const uint8_t *p);

/* Monotonic wall clock in microseconds. */
double now_us(void);

#endif
