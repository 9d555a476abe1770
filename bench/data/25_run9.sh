#!/usr/bin/env bash
# bench/25 run 9 (H200): Q4_0 / Q8_0 SwiGLU tiles at 512 columns (8 subgroups), registers
D=.dev-25; R=$OUT/r; mkdir -p $R
export GEMM_BENCH=$D/gemm_bench
gb() { echo "== $*"; env LFM2_PIPELINE_STATS=1 "$@" 2>&1 | grep -E "gemm_swiglu|sum" | grep -v xprep | sed -E 's/ Binary Size.*Shared Memory Size=/ shared=/'; }
{ for dt in q4_0 q8_0; do
    gb $GEMM_BENCH $dt 512 5
    gb LFM2_GEMM_TILE_SWIGLU=64x64x32:2x4 $GEMM_BENCH $dt 512 5
    gb LFM2_GEMM_TILE_SWIGLU=64x64x32:4x2 $GEMM_BENCH $dt 512 5
    gb LFM2_GEMM_TILE_SWIGLU=32x128x32:2x4 $GEMM_BENCH $dt 512 5
    gb LFM2_GEMM_TILE_SWIGLU=64x64x32:2x2 $GEMM_BENCH $dt 512 5
  done
  gb $GEMM_BENCH q4_0 256 5
  gb LFM2_GEMM_TILE_SWIGLU=64x64x32:2x4 $GEMM_BENCH q4_0 256 5
} > $R/qsw.txt 2>&1
cat $R/qsw.txt
cd $OUT && tar czf r.tgz r && rm -rf r
