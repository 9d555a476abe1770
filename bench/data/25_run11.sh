#!/usr/bin/env bash
# bench/25 run 11 (H200): 8-subgroup tiles with one fragment set (FRAG 0/1: fewer registers, so 2
# workgroups of 256 threads a multiprocessor), with one or two k steps in flight; and gemm_bench shm
# after its timing helper was shared.
D=.dev-25; R=$OUT/r; mkdir -p $R
export GEMM_BENCH=$D/gemm_bench
gb() { echo "== $*"; env LFM2_PIPELINE_STATS=1 "$@" 2>&1 | grep -E "gemm|sum" | grep -v xprep | sed -E 's/ Binary Size.*Shared Memory Size=/ shared=/'; }
{ gb $GEMM_BENCH f16 512 5
  for fr in 0 1; do
    gb LFM2_GEMM_FRAG=$fr $GEMM_BENCH f16 512 5
    gb LFM2_GEMM_FRAG=$fr LFM2_GEMM_TILE=128x128x32:2x4 $GEMM_BENCH f16 512 5
    gb LFM2_GEMM_FRAG=$fr LFM2_GEMM_PF=2 LFM2_GEMM_TILE=128x128x32:2x4 $GEMM_BENCH f16 512 5
    gb LFM2_GEMM_FRAG=$fr LFM2_GEMM_TILE=256x64x32:4x2 $GEMM_BENCH f16 512 5
    gb LFM2_GEMM_FRAG=$fr LFM2_GEMM_PF=2 LFM2_GEMM_TILE=256x64x32:4x2 $GEMM_BENCH f16 512 5
  done
} > $R/gemm11.txt 2>&1
cat $R/gemm11.txt
$GEMM_BENCH shm 2>&1 | head -4 > $R/shm11.txt; cat $R/shm11.txt
cd $OUT && tar czf r.tgz r && rm -rf r
