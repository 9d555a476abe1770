#!/usr/bin/env bash
# bench/25 run 6 (H200): 8-subgroup workgroups with and without loads in flight (PF 1 / 0), 512 columns
D=.dev-25; R=$OUT/r; mkdir -p $R
export GEMM_BENCH=$D/gemm_bench
gb() { echo "== $*"; env LFM2_PIPELINE_STATS=1 "$@" 2>&1 | grep -E "gemm|sum" | grep -v xprep | sed -E 's/ Binary Size.*Shared Memory Size=/ shared=/'; }
{ for pf in 1 0; do
    gb LFM2_GEMM_PF=$pf LFM2_GEMM_TILE=128x128x32:2x4 LFM2_GEMM_TILE_SWIGLU=128x64x32:4x2 $GEMM_BENCH f16 512 5
    gb LFM2_GEMM_PF=$pf LFM2_GEMM_TILE=128x64x64:4x2 LFM2_GEMM_TILE_SWIGLU=64x64x64:2x4 $GEMM_BENCH f16 512 5
    gb LFM2_GEMM_PF=$pf LFM2_GEMM_TILE=256x64x32:4x2 LFM2_GEMM_TILE_SWIGLU=64x128x32:2x4 $GEMM_BENCH f16 512 5
    gb LFM2_GEMM_PF=$pf LFM2_GEMM_TILE=128x64x32:4x2 LFM2_GEMM_TILE_SWIGLU=64x64x32:2x4 $GEMM_BENCH f16 512 5
  done
  gb LFM2_GEMM_PF=2 LFM2_GEMM_TILE=128x64x32:2x2 LFM2_GEMM_TILE_SWIGLU=64x64x32:2x2 $GEMM_BENCH f16 512 5
} > $R/gemm6.txt 2>&1
cat $R/gemm6.txt
cd $OUT && tar czf r.tgz r && rm -rf r
