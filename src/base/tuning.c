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
    t.validation_required = getenv("LFM2_VALIDATION") && !strcmp(getenv("LFM2_VALIDATION"), "require");
    return &t;
}

/* LFM2_TEST_SLOW="KIND=F,..." (tuning.h), parsed once; a malformed entry is reported, never
 * ignored in silence: a gate measurement on a hook that did nothing would pass for a miss. */
#define TEST_SLOW_MAX 8
static struct {
    char kind[40];
    int copies;
} test_slow[TEST_SLOW_MAX];
static int n_test_slow = -1;

static void test_slow_read(void)
{
    n_test_slow = 0;
    const char *v = getenv("LFM2_TEST_SLOW");
    while (v && *v) {
        const char *end = strchr(v, ','), *eq = strchr(v, '=');
        size_t len = end ? (size_t)(end - v) : strlen(v);
        char *num_end = NULL;
        long f = eq && eq < v + len ? strtol(eq + 1, &num_end, 10) : 0;
        if (!eq || eq >= v + len || eq == v || (size_t)(eq - v) >= sizeof test_slow[0].kind || num_end != v + len ||
            f < 1 || f > 64 || n_test_slow == TEST_SLOW_MAX) {
            fprintf(stderr, "warning: LFM2_TEST_SLOW entry '%.*s' ignored: expected KIND=F with an integer F in 1..64 "
                    "(at most %d entries)\n", (int)len, v, TEST_SLOW_MAX);
        } else {
            snprintf(test_slow[n_test_slow].kind, sizeof test_slow[0].kind, "%.*s", (int)(eq - v), v);
            test_slow[n_test_slow++].copies = (int)f;
        }
        v = end ? end + 1 : NULL;
    }
}

int tuning_test_slow(const char *kind)
{
    if (n_test_slow < 0) test_slow_read();
    for (int i = 0; i < n_test_slow; i++) {
        const char *k = test_slow[i].kind;
        size_t n = strlen(k);
        bool prefix = n > 0 && k[n - 1] == '*';
        if (prefix ? !strncmp(kind, k, n - 1) : !strcmp(kind, k)) return test_slow[i].copies;
    }
    return 1;
}

void tuning_describe(char *buf, size_t n)
{
    static const char *const hooks[] = {"LFM2_TEST_NO_COOPMAT", "LFM2_TEST_NO_TIMESTAMPS", "LFM2_TEST_DROP_LAST_DISPATCH",
                                        "LFM2_TEST_SKIP_SNAPSHOT", "LFM2_TEST_SLOW"};
    size_t used = 0;
    if (n) buf[0] = 0;
    for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++) {
        const char *v = getenv(hooks[i]);
        if (!v) continue;
        int w = snprintf(buf + used, n - used, "%s%s%s%s", used ? "," : "", hooks[i], *v ? "=" : "", v);
        if (w < 0 || (size_t)w >= n - used) break;
        used += (size_t)w;
    }
}
