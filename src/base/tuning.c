/* tuning.c - the environment's tuning and test switches, read once (tuning.h lists them). */
#include "tuning.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A gemm tile "BMxBNxBK" or "BMxBNxBK:SGMxSGN" (subgroups along rows x columns; default 2x2). */
static void gemm_tile_env(const char *name, int t[5])
{
    const char *v = getenv(name);
    unsigned bm, bn, bk, sm = 2, sn = 2;
    if (!v) return;
    int n = sscanf(v, "%ux%ux%u:%ux%u", &bm, &bn, &bk, &sm, &sn);
    if ((n == 3 || n == 5) && bm >= 16 && bm <= 256 && bn >= 16 && bn <= 256 && bk >= 32 && bk <= 128 &&
        bk % 32 == 0 && sm >= 1 && sn >= 1 && sm * sn <= 16) {
        t[0] = (int)bm;
        t[1] = (int)bn;
        t[2] = (int)bk;
        t[3] = (int)sm;
        t[4] = (int)sn;
    }
}

/* The integer value of variable `name` when it lies in lo..hi, else 0. */
static int env_int(const char *name, int lo, int hi)
{
    const char *v = getenv(name);
    if (!v || !*v) return 0;
    char *end;
    long x = strtol(v, &end, 10);
    return *end || x < lo || x > hi ? 0 : (int)x;
}

/* The same for a setting whose 0 is a value: -1 when `name` is unset (out of range: 0). */
static int env_int_or_unset(const char *name, int lo, int hi)
{
    return getenv(name) ? env_int(name, lo, hi) : -1;
}

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
    t.matmul_ksl = env_int("LFM2_MATMUL_KSL", 8, 128);
    if (t.matmul_ksl & (t.matmul_ksl - 1)) t.matmul_ksl = 0; /* powers of two only */
    t.matmul_rt = env_int("LFM2_MATMUL_RT", 1, 4);
    t.matmul_pass_cols = env_int("LFM2_MATMUL_PASS_COLS", 1, 1 << 16);
    t.matvec_cols = env_int("LFM2_MATVEC_COLS", 1, 16);
    t.matvec_rt = env_int("LFM2_MATVEC_RT", 1, 4);
    t.matvec_off = env_flag("LFM2_MATVEC_OFF");
    t.matvec_words = env_flag("LFM2_MATVEC_WORDS");
    t.qmv_off = env_flag("LFM2_QMV_OFF");
    t.qmv_cols = env_int("LFM2_QMV_COLS", 1, 8);
    t.qmv_rt = env_int("LFM2_QMV_RT", 1, 4);
    t.qmv_kc = env_int("LFM2_QMV_KC", 32, 1 << 16) / 32 * 32;
    t.qmv_u = env_int("LFM2_QMV_U", 1, 4);
    t.xmv_off = env_flag("LFM2_XMV_OFF");
    t.xmv_cols = env_int("LFM2_XMV_COLS", 1, 4);
    t.xmv_nsg = env_int("LFM2_XMV_NSG", 1, 32);
    t.xmv_rb = env_int("LFM2_XMV_RB", 1, 16);
    t.xmv_nb = env_int("LFM2_XMV_NB", 1, 64);
    t.xmv_xe = env_int("LFM2_XMV_XE", 4, 256);
    t.xmv_ksplit = env_int("LFM2_XMV_KSPLIT", 1, 64);
    t.xmv_probe = env_int("LFM2_XMV_PROBE", 1, 4);
    t.qkv_split = env_flag("LFM2_QKV_SPLIT");
    t.full_barriers = env_flag("LFM2_FULL_BARRIERS");
    t.full_stage_barriers = env_flag("LFM2_FULL_STAGE_BARRIERS");
    t.bench_no_barriers = env_flag("LFM2_BENCH_NO_BARRIERS");
    t.attn_bq = env_int("LFM2_ATTN_BQ", 8, 64);
    t.attn_nt = env_int("LFM2_ATTN_NT", 32, 1024);
    t.attn_unfused = env_flag("LFM2_ATTN_UNFUSED");
    t.attn_kv_keys = env_int_or_unset("LFM2_ATTN_KV_KEYS", 0, 1 << 30);
    t.attn_split = env_int("LFM2_ATTN_SPLIT", 1, 4096);
    t.attn_split_wg = env_int("LFM2_ATTN_SPLIT_WG", 1, 1 << 20);
    t.pool_max = env_int("LFM2_POOL_MAX", 256, 1 << 30);
    t.conv_unfused = env_flag("LFM2_CONV_UNFUSED");
    t.gemm_min_cols = env_int("LFM2_GEMM_MIN_COLS", 1, 65535);
    gemm_tile_env("LFM2_GEMM_TILE", t.gemm_tile);
    gemm_tile_env("LFM2_GEMM_TILE_SWIGLU", t.gemm_tile_sw);
    t.dn_chunk_tv = env_int("LFM2_DN_CHUNK_TV", 4, 32);
    if (t.dn_chunk_tv & (t.dn_chunk_tv - 1)) t.dn_chunk_tv = 0;
    t.dn_chunk_min = env_int("LFM2_DN_CHUNK_MIN", 1, 65535);
    t.gemm_roof = env_flag("LFM2_GEMM_ROOF");
    t.gemm_splitk = env_int("LFM2_GEMM_SPLITK", 1, 64);
    t.gemm_nbuf = env_int("LFM2_GEMM_NBUF", 1, 2);
    t.gemm_pf = env_int_or_unset("LFM2_GEMM_PF", 0, 2);
    t.gemm_narrow_off = env_flag("LFM2_GEMM_NARROW_OFF");
    t.gemm_xraw_cols = env_int_or_unset("LFM2_GEMM_XRAW_COLS", 0, 65535);
    t.gemm_wdeq_cols = env_int_or_unset("LFM2_GEMM_WDEQ_COLS", 0, 65535);
    t.gemm_wdeq_bpt = env_int("LFM2_GEMM_WDEQ_BPT", 1, 8);
    t.gemm_probe = env_int("LFM2_GEMM_PROBE", 1, 4);
    t.gemm_frag = env_int_or_unset("LFM2_GEMM_FRAG", 0, 2);
    t.gemm_no_fadd = env_flag("LFM2_GEMM_NO_FADD");
    t.test_no_coopmat = env_flag("LFM2_TEST_NO_COOPMAT");
    t.test_no_timestamps = getenv("LFM2_TEST_NO_TIMESTAMPS") != NULL;
    t.test_drop_last_dispatch = getenv("LFM2_TEST_DROP_LAST_DISPATCH") != NULL;
    t.test_skip_snapshot = getenv("LFM2_TEST_SKIP_SNAPSHOT") != NULL;
    t.validation = env_flag("LFM2_VALIDATION");
    t.validation_required = getenv("LFM2_VALIDATION") && !strcmp(getenv("LFM2_VALIDATION"), "require");
    t.pipeline_stats = env_flag("LFM2_PIPELINE_STATS");
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
