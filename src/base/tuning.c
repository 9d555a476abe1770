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
    t.qmv_cols = env_int("LFM2_QMV_COLS", 1, 8);
    t.qmv_rt = env_int("LFM2_QMV_RT", 1, 4);
    t.qmv_kc = env_int("LFM2_QMV_KC", 32, 1 << 16) / 32 * 32;
    t.qmv_u = env_int("LFM2_QMV_U", 1, 4);
    t.xmv_cols = env_int("LFM2_XMV_COLS", 1, 4);
    t.xmv_nsg = env_int("LFM2_XMV_NSG", 1, 32);
    t.xmv_rb = env_int("LFM2_XMV_RB", 1, 16);
    t.xmv_nb = env_int("LFM2_XMV_NB", 1, 64);
    t.xmv_xe = env_int("LFM2_XMV_XE", 4, 256);
    t.xmv_ksplit = env_int("LFM2_XMV_KSPLIT", 1, 64);
    t.attn_bq = env_int("LFM2_ATTN_BQ", 8, 64);
    t.attn_nt = env_int("LFM2_ATTN_NT", 32, 1024);
    t.attn_kv_keys = env_int_or_unset("LFM2_ATTN_KV_KEYS", 0, 1 << 30);
    t.attn_split = env_int("LFM2_ATTN_SPLIT", 1, 4096);
    t.attn_split_wg = env_int("LFM2_ATTN_SPLIT_WG", 1, 1 << 20);
    t.pool_max = env_int("LFM2_POOL_MAX", 256, 1 << 30);
    t.gemm_min_cols = env_int("LFM2_GEMM_MIN_COLS", 1, 65535);
    gemm_tile_env("LFM2_GEMM_TILE", t.gemm_tile);
    gemm_tile_env("LFM2_GEMM_TILE_SWIGLU", t.gemm_tile_sw);
    t.gemm_splitk = env_int("LFM2_GEMM_SPLITK", 1, 64);
    t.gemm_nbuf = env_int("LFM2_GEMM_NBUF", 1, 2);
    t.gemm_pf = env_int_or_unset("LFM2_GEMM_PF", 0, 2);
    t.gemm_xraw_cols = env_int_or_unset("LFM2_GEMM_XRAW_COLS", 0, 65535);
    t.gemm_wdeq_cols = env_int_or_unset("LFM2_GEMM_WDEQ_COLS", 0, 65535);
    t.gemm_wdeq_bpt = env_int("LFM2_GEMM_WDEQ_BPT", 1, 8);
    t.test_no_coopmat = env_flag("LFM2_TEST_NO_COOPMAT");
    t.test_no_timestamps = getenv("LFM2_TEST_NO_TIMESTAMPS") != NULL;
    t.test_drop_last_dispatch = getenv("LFM2_TEST_DROP_LAST_DISPATCH") != NULL;
    t.test_skip_snapshot = getenv("LFM2_TEST_SKIP_SNAPSHOT") != NULL;
    t.validation = env_flag("LFM2_VALIDATION");
    return &t;
}
