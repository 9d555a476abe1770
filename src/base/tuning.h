/* tuning.h - the tuning and test switches the environment may set, read once, in one place.
 * Kernels and the GPU core ask tuning() instead of calling getenv, so every knob is listed here
 * with its meaning, and a run's knobs are fixed for its whole life.
 *
 *   LFM2_MATMUL_KSL=8..128 (power of 2)  matmul k-slices per row group (bench/ runs)
 *   LFM2_MATMUL_RT=1..4                   matmul rows a row group keeps (bench/ runs)
 *   LFM2_MATMUL_PASS_COLS=1..16           columns one matmul pass serves (bench/ runs)
 *   LFM2_MATVEC_COLS=1..16                columns up to which matvec.comp serves (bench/ runs)
 *   LFM2_MATVEC_RT=1..4                   matvec rows a subgroup keeps (bench/ runs)
 *   LFM2_QMV_COLS=1..8                    qmv.comp for every Q4_0/Q8_0 product up to this many columns
 *                                         (default: Q4_0 at one column; tests, bench/16)
 *   LFM2_QMV_RT=1..4                      qmv rows a subgroup keeps (bench/16)
 *   LFM2_QMV_KC=32..65536                 qmv: at most this many k staged at a time (bench/16, tests)
 *   LFM2_QMV_U=1..4                       qmv: units a lane loads ahead per row (bench/16, tests)
 *   LFM2_XMV_COLS=1..4                    xmv.comp for every product up to this many columns
 *                                         (default: the shapes of kernels.c
 *                                         k_xmv_serves; tests, bench/22)
 *   LFM2_XMV_NSG=1..32                    xmv subgroups a workgroup (at least its k groups; bench/22)
 *   LFM2_XMV_RB=1..16                     xmv rows a subgroup loads at once (bench/22, tests)
 *   LFM2_XMV_NB=1..64                     xmv batches of rows a subgroup takes (bench/22, tests)
 *   LFM2_XMV_XE=4..256                    xmv: at most this many x elements a lane holds (its k
 *                                         groups follow; bench/22, tests)
 *   LFM2_XMV_KSPLIT=1..64                 xmv: workgroups along k where a product may split (1:
 *                                         never; default kernels.c xmv_ksplits; bench/24, tests)
 *   LFM2_ATTN_KV_KEYS=N                   attention (decode, batch-plan prefill) by kv head
 *                                         (attn_kv.comp) where a column may hold more than N keys
 *                                         (0: always; any width), by q head (attention.comp) elsewhere
 *                                         (default: kernels.h k_attn_by_kv_head; tests, bench/35)
 *   LFM2_ATTN_SPLIT=1..4096               attn_kv.comp: key splits a column (1: none; tests, bench/35)
 *   LFM2_ATTN_SPLIT_WG=N                  attn_kv.comp: the workgroups the automatic split aims at
 *                                         (default K_ATTN_SPLIT_WG; bench/35)
 *   LFM2_ATTN_BQ=8..64                    wide prefill attention: query columns a tile (bench/ runs)
 *   LFM2_ATTN_NT=32..1024                 wide prefill attention: threads a workgroup where its
 *                                         layout fits (bench/24)
 *   LFM2_GEMM_MIN_COLS=1..65535           wide plan: columns from which gemm serves (tests, bench/)
 *   LFM2_GEMM_TILE=BMxBNxBK[:SMxSN]       gemm tile of single products and the head (BM, BN 16..256,
 *                                         BK 32..128 multiple of 32; cooperative matrices: SM x SN
 *                                         subgroups along rows x columns, default 2x2); its split
 *                                         count is the general rule's (not the 33-64 column rule's
 *                                         8), or LFM2_GEMM_SPLITK's
 *   LFM2_GEMM_TILE_SWIGLU=...             the same for the SwiGLU pairs
 *   LFM2_GEMM_SPLITK=1..64                gemm: k splits of a product without SwiGLU (1: none;
 *                                         tests run the twin split, bench/ runs)
 *   LFM2_GEMM_XRAW_COLS=0..65535          gemm: widths up to which a product with no norm may split
 *                                         its plain x while staging it, with no prep (0: never;
 *                                         default: every width; bench/19)
 *   LFM2_GEMM_WDEQ_COLS=0..65535          gemm: widths from which a Q4_0 product runs on an f16 copy
 *                                         of its weights (gemm_wdeq.comp; 0: never; default 256
 *                                         with cooperative matrices, never on the twin; bench/33)
 *   LFM2_GEMM_WDEQ_BPT=1..8               gemm_wdeq.comp: Q4_0 blocks a lane (loads issued together)
 *   LFM2_GEMM_PF=0|1|2                    gemm: k steps fetched ahead into registers (one buffer;
 *                                         0: none, loads just before the staging, also out of
 *                                         range; bench/25)
 *   LFM2_GEMM_NBUF=1|2                    gemm: shared tile buffers (2: double-buffered; bench/)
 *   LFM2_TEST_NO_COOPMAT                  run the gemm's FMA twin on a device with cooperative
 *                                         matrices (tests: compare both on the H200)
 *   LFM2_POOL_MAX=BYTES                   the largest buffer the engine packs its state or KV pools
 *                                         into (default the device's largest allocation; tests)
 *   LFM2_TEST_NO_TIMESTAMPS               behave as a device without timestamps (tests)
 *   LFM2_TEST_DROP_LAST_DISPATCH          golden: drop the step's last dispatch (tests)
 *   LFM2_TEST_SKIP_SNAPSHOT               spec: shortconv, dn.conv, dn.recurrent write no snapshot
 *                                         (tests: a broken rollback)
 *   LFM2_VALIDATION=1                     enable the Khronos validation layer (tests) */
#ifndef LFM2_TUNING_H
#define LFM2_TUNING_H

#include <stdbool.h>

struct tuning {
    int matmul_ksl;       /* 0: automatic */
    int matmul_rt;        /* 0: automatic */
    int matmul_pass_cols; /* 0: K_MATMUL_MAX_COLS */
    int attn_bq;          /* 0: automatic (any fitting tile: taken) */
    int attn_nt;          /* 0: automatic (kernels.c attention_tiled) */
    int attn_kv_keys;     /* -1: k_attn_by_kv_head's rule */
    int attn_split;       /* 0: automatic (kernels.c attention_decode) */
    int attn_split_wg;    /* 0: K_ATTN_SPLIT_WG */
    int matvec_cols;      /* 0: K_MATVEC_COLS */
    int matvec_rt;        /* 0: automatic */
    int qmv_cols;         /* 0: automatic (kernels.c qmv_serves) */
    int qmv_rt;           /* 0: automatic */
    int qmv_kc;           /* 0: automatic (the shared memory's room) */
    int qmv_u;            /* 0: 2 */
    int xmv_cols;         /* 0: automatic (kernels.c k_xmv_serves) */
    int xmv_nsg, xmv_rb, xmv_nb, xmv_xe; /* 0: automatic (kernels.c xmv_geometry) */
    int xmv_ksplit;       /* 0: automatic (kernels.c xmv_ksplits) */
    int gemm_min_cols;    /* 0: automatic (k_gemm_min_cols) */
    int gemm_tile[5];     /* single products: BM, BN, BK, subgroups along rows x columns; zeros: automatic */
    int gemm_tile_sw[5];  /* the same for the SwiGLU pairs */
    int gemm_splitk;      /* 0: automatic */
    int gemm_nbuf;        /* 0: automatic */
    int gemm_pf;          /* -1: automatic */
    int gemm_xraw_cols;   /* -1: every width; 0: never (also out of range) */
    int gemm_wdeq_bpt;    /* 0: automatic (gemm_wdeq.comp BPT) */
    int gemm_wdeq_cols;   /* -1: automatic (kernels.c K_GEMM_WDEQ_COLS); 0: never; N: from N columns, any device */
    bool test_no_coopmat;
    bool test_no_timestamps;
    bool test_drop_last_dispatch;
    bool test_skip_snapshot;
    bool validation;
    int pool_max;         /* 0: the device's largest allocation (engine.h struct engine_pool) */
};

/* The environment's switches, read on the first call; values out of range read as 0 (automatic). */
const struct tuning *tuning(void);

#endif
