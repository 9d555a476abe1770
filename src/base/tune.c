/* tune.c - --tune key=value: the table of keys, their ranges, parsing and printing (tune.h). */
#include "tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum key_kind {
    K_INT,   /* lo..hi */
    K_POW2,  /* lo..hi, a power of two */
    K_MUL32, /* lo..hi, rounded down to a multiple of 32 */
    K_TILE,  /* BMxBNxBK[:SMxSN] */
    K_NAME,  /* one of names[lo..hi] (stored as its index) */
};

/* K_NAME keys' values, by index (enum gemm_path's order). */
static const char *const names[] = {"auto", "khr", "nv", "fma", "cm2"};

const char *gemm_path_name(enum gemm_path p)
{
    return p >= GEMM_PATH_AUTO && p <= GEMM_PATH_CM2 ? names[p] : "?";
}

struct key {
    const char *name;
    size_t off;
    enum key_kind kind;
    long lo, hi;
    bool test; /* test-only: tune_parse_all reads it, the CLI's tune_parse does not (tune.h) */
};

#define KEY(f, kind, lo, hi)                                                                       \
    {                                                                                              \
#f, offsetof(struct tune, f), kind, lo, hi, false                                          \
    }
#define TEST_KEY(f, kind, lo, hi)                                                                  \
    {                                                                                              \
#f, offsetof(struct tune, f), kind, lo, hi, true                                           \
    }
static const struct key keys[] = {
    TEST_KEY(matmul_ksl, K_POW2, 8, 128),
    TEST_KEY(matmul_rt, K_INT, 1, 4),
    TEST_KEY(matmul_pass_cols, K_INT, 1, 16),
    TEST_KEY(matvec_cols, K_INT, 1, 16),
    TEST_KEY(matvec_rt, K_INT, 1, 4),
    TEST_KEY(qmv_cols, K_INT, 1, 8),
    TEST_KEY(qmv_rt, K_INT, 1, 4),
    TEST_KEY(qmv_kc, K_MUL32, 32, 65536),
    TEST_KEY(qmv_u, K_INT, 1, 4),
    KEY(xmv_cols, K_INT, 1, 4),
    TEST_KEY(xmv_nsg, K_INT, 1, 32),
    TEST_KEY(xmv_rb, K_INT, 1, 16),
    TEST_KEY(xmv_nb, K_INT, 1, 64),
    TEST_KEY(xmv_xe, K_INT, 4, 256),
    TEST_KEY(xmv_ksplit, K_INT, 1, 64),
    KEY(attn_kv_keys, K_INT, 0, 1 << 30),
    KEY(attn_split, K_INT, 1, 4096),
    TEST_KEY(attn_split_wg, K_INT, 1, 1 << 20),
    TEST_KEY(attn_bq, K_INT, 8, 64),
    TEST_KEY(attn_nt, K_INT, 32, 1024),
    KEY(gemm_min_cols, K_INT, 1, 65535),
    {"gemm_tile", offsetof(struct tune, gemm_tile), K_TILE, 0, 0, false},
    {"gemm_tile_swiglu", offsetof(struct tune, gemm_tile_sw), K_TILE, 0, 0, true},
    KEY(gemm_splitk, K_INT, 1, 64),
    TEST_KEY(gemm_nbuf, K_INT, 1, 2),
    TEST_KEY(gemm_pf, K_INT, 0, 2),
    TEST_KEY(gemm_xraw_cols, K_INT, 0, 65535),
    KEY(gemm_wdeq_cols, K_INT, 0, 65535),
    TEST_KEY(gemm_wdeq_bpt, K_INT, 1, 8),
    KEY(gemm_path, K_NAME, GEMM_PATH_AUTO, GEMM_PATH_CM2),
    KEY(pool_max, K_INT, 256, 1 << 30),
};

struct tune tune_default(void)
{
    return (struct tune){
        .attn_kv_keys = -1, .gemm_pf = -1, .gemm_xraw_cols = -1, .gemm_wdeq_cols = -1};
}

/* The automatic value of an integer key (what tune_default holds). */
static int key_unset(const struct key *k)
{
    static const struct tune d = {
        .attn_kv_keys = -1, .gemm_pf = -1, .gemm_xraw_cols = -1, .gemm_wdeq_cols = -1};
    return *(const int *)((const char *)&d + k->off);
}

/* The keys a parse reads, space-separated: the product's, or (all) every key. */
static const char *key_list(bool all)
{
    static char lists[2][1024];
    char *list = lists[all];
    if (!list[0]) {
        size_t used = 0;
        for (size_t i = 0; i < ARRAY_LEN(keys); i++)
            if (all || !keys[i].test)
                used += (size_t)snprintf(list + used, sizeof lists[0] - used, "%s%s",
                                         used ? " " : "", keys[i].name);
    }
    return list;
}

const char *tune_keys(void)
{
    return key_list(false);
}

/* A tile "BMxBNxBK" or "BMxBNxBK:SMxSN" into t[5]. */
static bool parse_tile(const char *v, int t[5])
{
    unsigned bm, bn, bk, sm = 2, sn = 2;
    char tail;
    int n = sscanf(v, "%ux%ux%u:%ux%u%c", &bm, &bn, &bk, &sm, &sn, &tail);
    if (n != 5 && !(n == 3 && sscanf(v, "%*ux%*ux%*u%c", &tail) != 1)) return false;
    if (bm < 16 || bm > 256 || bn < 16 || bn > 256 || bk < 32 || bk > 128 || bk % 32 || sm < 1 ||
        sn < 1 || sm * sn > 16)
        return false;
    int v5[5] = {(int)bm, (int)bn, (int)bk, (int)sm, (int)sn};
    memcpy(t, v5, sizeof v5);
    return true;
}

/* A K_NAME key's values, "a|b|c". */
static const char *name_list(const struct key *k)
{
    static char list[128];
    size_t used = 0;
    for (long i = k->lo; i <= k->hi; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i > k->lo ? "|" : "", names[i]);
    return list;
}

static int parse_one(struct tune *t, const char *kv, size_t len, bool all, struct err *e)
{
    const char *eq = memchr(kv, '=', len);
    size_t nlen = eq ? (size_t)(eq - kv) : len;
    const struct key *k = NULL;
    for (size_t i = 0; i < ARRAY_LEN(keys) && !k; i++)
        if ((all || !keys[i].test) && strlen(keys[i].name) == nlen &&
            !strncmp(keys[i].name, kv, nlen))
            k = &keys[i];
    if (!k)
        return err_set(e, ST_USAGE, "--tune %.*s: unknown key (expected one of: %s)", (int)nlen, kv,
                       key_list(all));
    char v[64];
    size_t vlen = eq ? len - nlen - 1 : 0;
    if (!eq || !vlen || vlen >= sizeof v)
        return err_set(e, ST_USAGE, "--tune %.*s: expected %s=value", (int)len, kv, k->name);
    memcpy(v, eq + 1, vlen);
    v[vlen] = 0;
    int *field = (int *)((char *)t + k->off);
    if (k->kind == K_TILE) {
        if (!parse_tile(v, field))
            return err_set(
                e, ST_USAGE,
                "--tune %s=%s: expected BMxBNxBK or BMxBNxBK:SMxSN (BM, BN 16..256; BK 32..128, a "
                "multiple of 32; SM x SN at most 16)",
                k->name, v);
        return ST_OK;
    }
    if (k->kind == K_NAME) {
        for (long i = k->lo; i <= k->hi; i++)
            if (!strcmp(v, names[i])) {
                *field = (int)i;
                return ST_OK;
            }
        return err_set(e, ST_USAGE, "--tune %s=%s: expected one of %s", k->name, v, name_list(k));
    }
    char *end;
    long x = strtol(v, &end, 10);
    bool ok = *end == 0 && x >= k->lo && x <= k->hi && (k->kind != K_POW2 || !(x & (x - 1)));
    if (!ok)
        return err_set(e, ST_USAGE, "--tune %s=%s: expected an integer in %ld..%ld%s", k->name, v,
                       k->lo, k->hi, k->kind == K_POW2 ? ", a power of 2" : "");
    *field = k->kind == K_MUL32 ? (int)(x / 32 * 32) : (int)x;
    return ST_OK;
}

static int parse(struct tune *t, const char *arg, bool all, struct err *e)
{
    if (!arg || !*arg)
        return err_set(e, ST_USAGE, "--tune needs key=value[,key=value] (keys: %s)", key_list(all));
    for (const char *at = arg;;) {
        const char *comma = strchr(at, ',');
        size_t len = comma ? (size_t)(comma - at) : strlen(at);
        int rc = parse_one(t, at, len, all, e);
        if (rc) return rc;
        if (!comma) return ST_OK;
        at = comma + 1;
    }
}

int tune_parse(struct tune *t, const char *arg, struct err *e)
{
    return parse(t, arg, false, e);
}

int tune_parse_all(struct tune *t, const char *arg, struct err *e)
{
    return parse(t, arg, true, e);
}

void tune_format(const struct tune *t, char *buf, size_t n)
{
    size_t used = 0;
    if (n) buf[0] = 0;
    for (size_t i = 0; i < ARRAY_LEN(keys) && used < n; i++) {
        const struct key *k = &keys[i];
        const int *f = (const int *)((const char *)t + k->off);
        const char *sep = used ? "," : "";
        int w;
        if (k->kind == K_TILE) {
            if (!f[0]) continue;
            w = snprintf(buf + used, n - used, "%s%s=%dx%dx%d:%dx%d", sep, k->name, f[0], f[1],
                         f[2], f[3], f[4]);
        } else if (k->kind == K_NAME) {
            if (*f == key_unset(k)) continue;
            w = snprintf(buf + used, n - used, "%s%s=%s", sep, k->name, names[*f]);
        } else {
            if (*f == key_unset(k)) continue;
            w = snprintf(buf + used, n - used, "%s%s=%d", sep, k->name, *f);
        }
        if (w < 0) break;
        used += (size_t)w;
    }
}
