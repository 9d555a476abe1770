/* tuning.c - the environment's test switches, read once (tuning.h lists them). */
#include "tuning.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

const struct tuning *tuning(void)
{
    static struct tuning t;
    static bool read;
    if (read) return &t;
    read = true;
    t.test_no_coopmat = env_flag("LFM2_TEST_NO_COOPMAT");
    t.test_no_timestamps = getenv("LFM2_TEST_NO_TIMESTAMPS") != NULL;
    t.test_drop_last_dispatch = getenv("LFM2_TEST_DROP_LAST_DISPATCH") != NULL;
    t.test_skip_snapshot = getenv("LFM2_TEST_SKIP_SNAPSHOT") != NULL;
    t.validation = env_flag("LFM2_VALIDATION");
    return &t;
}
