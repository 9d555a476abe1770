/* common.c - errors, half-float conversion, unaligned reads, clock. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A message longer than e->msg keeps its start and its end, with " ... " between: the end is
 * where the reason is (an OS error, what was expected), and long paths would otherwise push it
 * out. */
static void err_fit(struct err *e, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    if (n >= (int)sizeof e->msg) {
        char *full = malloc((size_t)n + 1);
        if (full) {
            vsnprintf(full, (size_t)n + 1, fmt, copy);
            static const char mid[] = " ... ";
            size_t head = 300, tail = sizeof e->msg - 1 - head - (sizeof mid - 1);
            memcpy(e->msg, full, head);
            memcpy(e->msg + head, mid, sizeof mid - 1);
            memcpy(e->msg + head + sizeof mid - 1, full + (size_t)n - tail, tail + 1);
            free(full);
        }
    }
    va_end(copy);
    /* one line: names from files (tensor names, JSON keys) may hold newlines or escapes */
    for (char *c = e->msg; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
}

int err_set(struct err *e, int code, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        err_fit(e, fmt, ap);
        va_end(ap);
    }
    return code;
}

int err_wrap(struct err *e, int code, const char *fmt, ...)
{
    if (e) {
        char old[sizeof e->msg], prefix[sizeof e->msg];
        memcpy(old, e->msg, sizeof old);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(prefix, sizeof prefix, fmt, ap);
        va_end(ap);
        err_set(e, code, "%s: %s", prefix, old);
    }
    return code;
}

void check_failed(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: internal check failed: %s\n", file, line, expr);
    abort();
}

float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do {
                man <<= 1;
                e++;
            } while (!(man & 0x400));
            bits = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | man << 13;
    } else {
        bits = sign | (exp + 127 - 15) << 23 | man << 13;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    uint32_t man = x & 0x7fffff;
    if (((x >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
    if (exp >= 31) return (uint16_t)(sign | 0x7c00);
    if (exp <= 0) {
        if (exp < -10) return (uint16_t)sign;
        man |= 0x800000;
        uint32_t shift = (uint32_t)(14 - exp);
        uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t h = sign | (uint32_t)exp << 10 | man >> 13, rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
    return (uint16_t)h;
}

float bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

uint16_t rd_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
uint32_t rd_u32(const uint8_t *p) { return (uint32_t)rd_u16(p) | (uint32_t)rd_u16(p + 2) << 16; }
uint64_t rd_u64(const uint8_t *p) { return (uint64_t)rd_u32(p) | (uint64_t)rd_u32(p + 4) << 32; }

double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}
