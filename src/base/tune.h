/* tune.h - the kernel geometry overrides of one run (--tune key=value[,key=value], repeatable):
 * the input of the kernel choice (kernels/select.h) besides shape, type, plan and device. Each
 * key replaces one automatic choice; none is needed to run. A run's tune is recorded in its JSON
 * ("tune") and printed in the report header; --compare warns when two runs' tunes differ.
 *
 * The CLI's keys (tune_parse; 0 or unset: automatic; the rule each replaces is in
 * kernels/select.c), the choices a perf engineer compares:
 *   gemm_min_cols=1..65535      wide plan: columns from which gemm serves (plan auto: wide)
 *   gemm_tile=BMxBNxBK[:SMxSN]  gemm tile of single products (BM, BN 16..256, BK 32..128 a
 *                               multiple of 32; SM x SN subgroups, at most 16, default 2x2)
 *   gemm_splitk=1..64           gemm k splits of a product without SwiGLU
 *   gemm_wdeq_cols=0..65535     gemm: widths from which Q4_0 runs on an f16 copy (0: never)
 *   gemm_path=auto|khr|nv|fma|cm2  the wide plan's gemm on VK_KHR_cooperative_matrix (gemm_khr),
 *                               VK_NV_cooperative_matrix (gemm) or the FMA twin (gemm_fma); auto:
 *                               the first of those the device has (select.c sel_gemm_path); cm2:
 *                               gemm_cm2 on VK_NV_cooperative_matrix2, forced only (select_path.c);
 *                               a path the device lacks is a usage error naming the extension
 *   xmv_cols=1..4               xmv.comp for every product up to this many columns
 *   attn_kv_keys=0..2^30        attention by kv head where a column may hold more keys
 *   attn_split=1..4096          attn_kv.comp key splits a column (1: none)
 *   pool_max=256..2^30          the largest buffer the engine packs state or KV pools into
 *
 * Test-only keys (tune_parse_all: tests/test_kernels.c, tests/test_select.c, bench/gemm_bench.c;
 * the CLI refuses them as unknown). They exist to put every kernel variant under test:
 *   matmul_ksl=8..128 (power of 2)  matmul.comp k-slices a row group
 *   matmul_rt=1..4                  matmul.comp rows a row group keeps
 *   matmul_pass_cols=1..16          columns one matmul.comp pass serves
 *   matvec_cols=1..16               matvec.comp for every product up to this many columns
 *   matvec_rt=1..4                  matvec.comp rows a subgroup keeps
 *   qmv_cols=1..8                   qmv.comp for every Q4_0/Q8_0 product up to this many columns
 *   qmv_rt=1..4, qmv_kc=32..65536, qmv_u=1..4  qmv.comp rows a subgroup, k staged at a time
 *                                   (rounded down to 32), units a lane loads ahead
 *   xmv_nsg=1..32, xmv_rb=1..16, xmv_nb=1..64, xmv_xe=4..256  xmv.comp subgroups a workgroup,
 *                                   rows loaded at once, batches of rows, x elements a lane
 *   xmv_ksplit=1..64                xmv.comp workgroups along k where a product may split
 *   attn_split_wg=1..2^20           attn_kv.comp: the workgroups the automatic split aims at
 *   attn_bq=8..64, attn_nt=32..1024 wide prefill attention: query columns a tile, threads
 *   gemm_tile_swiglu=...            gemm_tile for the SwiGLU pairs
 *   gemm_nbuf=1..2                  gemm shared tile buffers
 *   gemm_pf=0..2                    gemm k steps fetched ahead (0: none)
 *   gemm_xraw_cols=0..65535         gemm: widths up to which a product may stage its plain x
 *                                   (0: never)
 *   gemm_wdeq_bpt=1..8              gemm_wdeq.comp Q4_0 blocks a lane */
#ifndef LFM2_TUNE_H
#define LFM2_TUNE_H

#include <stdbool.h>
#include <stddef.h>

#include "common.h"

/* The wide plan's gemm: which kernel computes its tiles' products (tune gemm_path). */
enum gemm_path {
    GEMM_PATH_AUTO = 0, /* the device's best (select.c sel_gemm_path) */
    GEMM_PATH_KHR,      /* gemm_khr: gemm.comp on VK_KHR_cooperative_matrix (the portable one) */
    GEMM_PATH_NV,       /* gemm: gemm.comp on VK_NV_cooperative_matrix */
    GEMM_PATH_FMA,      /* gemm_fma: gemm.comp's shared-memory FMA twin (every device) */
    GEMM_PATH_CM2,      /* gemm_cm2: gemm_cm2.comp on VK_NV_cooperative_matrix2; automatic in serving
                           precision, and a product it cannot serve takes NV v1 / the device's
                           other path (select_path.c) */
};
/* "auto", "khr", "nv", "fma", "cm2" (tune_parse reads them back). */
const char *gemm_path_name(enum gemm_path p);

struct tune {
    int matmul_ksl, matmul_rt, matmul_pass_cols;
    int matvec_cols, matvec_rt;
    int qmv_cols, qmv_rt, qmv_kc, qmv_u;
    int xmv_cols, xmv_nsg, xmv_rb, xmv_nb, xmv_xe, xmv_ksplit;
    int attn_kv_keys; /* -1: automatic */
    int attn_split, attn_split_wg, attn_bq, attn_nt;
    int gemm_min_cols;
    int gemm_tile[5];    /* BM, BN, BK, subgroups along rows x columns; zeros: automatic */
    int gemm_tile_sw[5]; /* the same for the SwiGLU pairs */
    int gemm_splitk, gemm_nbuf;
    int gemm_pf;        /* -1: automatic */
    int gemm_xraw_cols; /* -1: every width */
    int gemm_wdeq_cols; /* -1: automatic */
    int gemm_wdeq_bpt;
    int gemm_path; /* enum gemm_path; GEMM_PATH_AUTO: automatic */
    int pool_max; /* 0: the device's largest allocation */
};

/* Every key automatic. */
struct tune tune_default(void);

/* Applies "key=value[,key=value...]" of the CLI's keys to t. Unknown key (a test-only one too):
 * ST_USAGE listing the CLI's keys; bad value: ST_USAGE naming the key and its range. */
int tune_parse(struct tune *t, const char *arg, struct err *e);

/* tune_parse over every key, the test-only ones too (test and bench programs, never the CLI). */
int tune_parse_all(struct tune *t, const char *arg, struct err *e);

/* The keys set in t as "key=value,key=value" in the table's order ("" when none; the same text
 * tune_parse reads back). */
void tune_format(const struct tune *t, char *buf, size_t n);

/* The CLI's keys, space-separated (for messages). */
const char *tune_keys(void);

#endif
