#!/usr/bin/env bash
# bench/25 run 5 (H200): gemm with PF = 0 (loads just before staging: fewer registers, more
# workgroups a multiprocessor) against the defaults, 64-512 columns; tests under PF = 0.
D=.dev-25; R=$OUT/r; mkdir -p $R
export GEMM_BENCH=$D/gemm_bench
gb() { echo "== $*"; env LFM2_PIPELINE_STATS=1 "$@" 2>&1 | grep -E "gemm|sum|accuracy" | grep -v xprep | sed -E 's/ Binary Size.*Shared Memory Size=/ shared=/'; }
{ echo "== test_kernels gemm PF=0"; LFM2_GEMM_PF=0 timeout 100 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1; } > $R/tests.txt
cat $R/tests.txt
{ for dt in f16 bf16 q4_0; do
    gb $GEMM_BENCH $dt 512 5
    gb LFM2_GEMM_PF=0 $GEMM_BENCH $dt 512 5
  done
  gb LFM2_GEMM_PF=0 LFM2_GEMM_FRAG=0 $GEMM_BENCH f16 512 5
  gb LFM2_GEMM_PF=0 LFM2_GEMM_FRAG=1 $GEMM_BENCH f16 512 5
  gb LFM2_GEMM_PF=0 LFM2_GEMM_SPLITK=1 $GEMM_BENCH f16 512 5
  for c in 64 128 256; do
    gb $GEMM_BENCH bf16 $c 5
    gb LFM2_GEMM_PF=0 $GEMM_BENCH bf16 $c 5
  done
} > $R/gemm5.txt 2>&1
cat $R/gemm5.txt
cd $OUT && tar czf r.tgz r && rm -rf r
