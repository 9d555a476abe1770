#!/usr/bin/env bash
# bench/25 run 2 (H200): registers and times of gemm variants at 512 columns (F16): fragment sets,
# double-buffered 32-deep k steps, the low part's cost with split-k off on both sides.
D=.dev-25; R=$OUT/r; mkdir -p $R
export GEMM_BENCH=$D/gemm_bench
gb() { echo "== $*"; env LFM2_PIPELINE_STATS=1 "$@" 2>&1 | grep -E "gemm|sum|accuracy" | sed -E 's/ Binary Size.*Shared Memory Size=/ shared=/'; }
{ gb LFM2_GEMM_FRAG=0 $GEMM_BENCH f16 512 5
  gb LFM2_GEMM_FRAG=1 $GEMM_BENCH f16 512 5
  gb LFM2_GEMM_SPLITK=1 $GEMM_BENCH f16 512 5
  gb LFM2_GEMM_SPLITK=1 LFM2_GEMM_ROOF=1 $GEMM_BENCH f16 512 5
  gb LFM2_GEMM_TILE=128x64x32:2x2 LFM2_GEMM_TILE_SWIGLU=64x64x32:2x2 $GEMM_BENCH f16 512 5
  gb LFM2_GEMM_NBUF=2 LFM2_GEMM_TILE=128x64x32:2x2 LFM2_GEMM_TILE_SWIGLU=64x64x32:2x2 $GEMM_BENCH f16 512 5
  gb LFM2_GEMM_NBUF=2 LFM2_GEMM_FRAG=1 LFM2_GEMM_TILE=128x64x32:2x2 LFM2_GEMM_TILE_SWIGLU=64x64x32:2x2 $GEMM_BENCH f16 512 5
  gb LFM2_GEMM_NBUF=2 LFM2_GEMM_TILE=128x128x32:2x4 LFM2_GEMM_TILE_SWIGLU=128x64x32:4x2 $GEMM_BENCH f16 512 5
} > $R/gemm2.txt 2>&1
cat $R/gemm2.txt
cd $OUT && tar czf r.tgz r && rm -rf r
