/* fuzz_common.h - what the libFuzzer targets share: the small models of tests/fuzz/data (made by
 * make_seeds.py) and a scratch file for inputs that must come from a path. Every target checks
 * the one contract of the loaders: a status of ST_OK or ST_USAGE (ST_RUNTIME only for memory),
 * a one-line message, and no crash, leak, hang or sanitizer report. */
#ifndef LFM2_FUZZ_COMMON_H
#define LFM2_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loader.h"
#include "model.h"

#ifndef FUZZ_DIR
#error "FUZZ_DIR: the tests/fuzz folder"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline void fuzz_check(int st, const struct err *e)
{
    if (st != ST_OK && st != ST_USAGE && st != ST_RUNTIME) {
        fprintf(stderr, "unexpected status %d: %s\n", st, e->msg);
        abort();
    }
    if (st && (!e->msg[0] || strchr(e->msg, '\n'))) {
        fprintf(stderr, "status %d with an empty or multi-line message: \"%s\"\n", st, e->msg);
        abort();
    }
}

/* Describe and bind the whole model, then a one-layer shard at each end (the paths main takes). */
static inline int fuzz_describe_bind(const struct model_source *s, struct err *e)
{
    struct model_desc d;
    struct shard sh;
    int st = model_describe(s, &d, e);
    if (st) return st;
    if (!(st = shard_bind(s, &d, 0, d.n_layers, &sh, e))) shard_free(&sh);
    if (!st && d.n_layers > 1 && !(st = shard_bind(s, &d, d.n_layers - 1, d.n_layers, &sh, e)))
        shard_free(&sh);
    if (!st && d.n_layers > 1 && !(st = shard_bind(s, &d, 1, d.n_layers, &sh, e))) shard_free(&sh);
    return st;
}

/* A per-process scratch file under /dev/shm (or /tmp) holding data. */
static inline const char *fuzz_scratch(const char *name, const uint8_t *data, size_t size)
{
    static char path[256];
    if (!path[0]) {
        const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(path, sizeof path, "%s/lfm2fuzz.%d.%s", base, (int)getpid(), name);
    }
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    return path;
}

#endif
