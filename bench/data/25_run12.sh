#!/usr/bin/env bash
# bench/25 run 12 (H200): 8-subgroup tiles at 32-128 columns (BF16), SwiGLU pairs and single products
D=.dev-25; R=$OUT/r; mkdir -p $R
export GEMM_BENCH=$D/gemm_bench
gb() { echo "== $*"; env "$@" 2>&1 | grep -E "gemm|sum" | grep -v xprep; }
{ for c in 32 64 128; do
    gb $GEMM_BENCH bf16 $c 7
    gb LFM2_GEMM_TILE_SWIGLU=64x128x32:2x4 $GEMM_BENCH bf16 $c 7
    gb LFM2_GEMM_TILE_SWIGLU=64x64x32:2x4 $GEMM_BENCH bf16 $c 7
    gb LFM2_GEMM_TILE_SWIGLU=32x128x32:2x4 $GEMM_BENCH bf16 $c 7
    gb LFM2_GEMM_TILE_SWIGLU=64x32x64:4x2 $GEMM_BENCH bf16 $c 7
    gb LFM2_GEMM_TILE=128x64x64:4x2 $GEMM_BENCH bf16 $c 7
    gb LFM2_GEMM_TILE=128x32x64:4x2 $GEMM_BENCH bf16 $c 7
  done
} > $R/gemm12.txt 2>&1
cat $R/gemm12.txt
cd $OUT && tar czf r.tgz r && rm -rf r
