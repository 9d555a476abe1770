/* testutil.c - the shared test harness. */
#include "testutil.h"

#include <cjson/cJSON.h>

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

int t_pass, t_fail;

static const char *case_filter;    /* argv[2], or NULL: every case */
static int cases_run;
static char case_names[2048];      /* every case seen, for the message of a filter that matched none */

void t_init(int argc, char **argv) { case_filter = argc > 2 && argv[2][0] ? argv[2] : NULL; }

/* Whether word is one of tags' space-separated words. */
static bool has_tag(const char *tags, const char *word, size_t n)
{
    for (const char *t = tags; *t;) {
        size_t m = strcspn(t, " ");
        if (m == n && strncmp(t, word, n) == 0) return true;
        t += m;
        t += strspn(t, " ");
    }
    return false;
}

bool t_case(const char *name, const char *tags)
{
    size_t used = strlen(case_names);
    snprintf(case_names + used, sizeof case_names - used, "%s%s", used ? " " : "", name);
    bool run = case_filter == NULL;
    for (const char *f = case_filter; f && *f && !run;) {
        size_t n = strcspn(f, ",");
        char word[128];
        snprintf(word, sizeof word, "%.*s", (int)n, f);
        run = fnmatch(word, name, 0) == 0 || has_tag(tags, f, n);
        f += n;
        f += *f == ',';
    }
    cases_run += run;
    return run;
}

int t_finish(void)
{
    printf("%d passed, %d failed\n", t_pass, t_fail);
    if (case_filter && cases_run == 0) {
        fprintf(stderr, "FAIL: the case filter '%s' matches none of this program's cases: %s\n", case_filter,
                case_names[0] ? case_names : "(none reached)");
        return 1;
    }
    if (t_pass + t_fail == 0) {
        fprintf(stderr, "FAIL: no check ran\n");
        return 1;
    }
    return t_fail ? 1 : 0;
}

void t_rng_seed(struct t_rng *r, uint64_t seed) { r->s = seed * 0x9E3779B97F4A7C15ull + 0x1234567ull; }

uint32_t t_rng_u32(struct t_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return (uint32_t)((r->s * 0x2545F4914F6CDD1Dull) >> 32);
}

float t_rng_uniform(struct t_rng *r) { return (float)(t_rng_u32(r) >> 8) * (1.0f / 16777216.0f); }

float t_rng_normal(struct t_rng *r)
{
    float u1 = t_rng_uniform(r), u2 = t_rng_uniform(r);
    if (u1 < 1e-7f) u1 = 1e-7f;
    return sqrtf(-2.0f * logf(u1)) * cosf(6.2831853f * u2);
}

int t_write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, n, f);
    fclose(f);
    return w == n ? 0 : -1;
}

const char *t_tmpdir(void)
{
    static char buf[64];
    strcpy(buf, "/tmp/lfm2test.XXXXXX");
    return mkdtemp(buf);
}

int t_run(const char *cmd, char *out, size_t out_size)
{
    char full[4096];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (!p) return -1;
    size_t n = 0;
    if (out && out_size) {
        n = fread(out, 1, out_size - 1, p);
        out[n] = 0;
    }
    char sink[4096];
    while (fread(sink, 1, sizeof sink, p) > 0) {
    }
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

cJSON *t_json_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[1 << 22];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return cJSON_Parse(buf);
}

const cJSON *t_json_at(const cJSON *root, const char *path)
{
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s", path);
    const cJSON *cur = root;
    for (char *save = NULL, *tok = strtok_r(tmp, ".", &save); tok && cur; tok = strtok_r(NULL, ".", &save)) {
        char *br = strchr(tok, '[');
        int idx = -1;
        if (br) {
            idx = atoi(br + 1);
            *br = 0;
        }
        cur = cJSON_GetObjectItemCaseSensitive(cur, tok);
        if (cur && idx >= 0) cur = cJSON_IsArray(cur) ? cJSON_GetArrayItem(cur, idx) : NULL;
    }
    return cur;
}
