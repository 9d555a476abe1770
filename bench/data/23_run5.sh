#!/usr/bin/env bash
# bench/23 run 5 (H200): the 16-column gemm's tiles: smaller row tiles (more workgroups in flight)
# and longer k steps for the SwiGLU pairs (128 workgroups of 64 x 16 today) and the singles.
D=.dev-23; R=$OUT/r; mkdir -p $R
export GEMM_BENCH=$D/gemm_bench
gb() { echo "== $*"; env "$@" 2>&1 | grep -E "matmul|gemm|sum"; }
{ for dt in bf16 q4_0; do
    gb $GEMM_BENCH $dt 16 20
    for t in 32x16x64:2x1 32x16x128:2x1 16x16x128:1x1 16x16x64:1x1 32x16x64:1x1 64x16x64:4x1; do
      for pf in 1 2; do gb LFM2_GEMM_TILE_SWIGLU=$t LFM2_GEMM_PF=$pf $GEMM_BENCH $dt 16 20; done
    done
    for t in 32x16x64:2x1 32x16x128:2x1 16x16x128:1x1 64x16x128:4x1; do gb LFM2_GEMM_TILE=$t $GEMM_BENCH $dt 16 20; done
  done
} > $R/sweep.txt 2>&1
grep -E "^==|swiglu|sum" $R/sweep.txt
cd $OUT && tar czf r.tgz r && rm -rf r
