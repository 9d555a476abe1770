#!/usr/bin/env bash
# bench/21 run 2 (H200): tile sweep for split weights (Q4_0, Q8_0) at 512 and 256 columns with the
# existing hooks (LFM2_GEMM_TILE[_SWIGLU], SPLITK, FRAG); test_kernels gemm under the candidates
D=.dev-21a; R=$OUT/r; mkdir -p $R
gb() { echo "== $*"; env "$@" 2>&1 | grep -E "gemm|sum|accuracy"; }
G=$D/gemm_bench
{ gb $G q4_0 512 5
  gb LFM2_GEMM_FRAG=0 $G q4_0 512 5
  gb LFM2_GEMM_TILE=128x64x32:4x1 LFM2_GEMM_SPLITK=2 $G q4_0 512 5
  gb LFM2_GEMM_TILE=128x64x32:4x1 $G q4_0 512 5
  gb LFM2_GEMM_TILE=128x64x32:2x2 $G q4_0 512 5
  gb LFM2_GEMM_TILE=64x128x32:2x2 $G q4_0 512 5
  gb LFM2_GEMM_TILE=64x64x32:2x2 $G q4_0 512 5
  gb LFM2_GEMM_TILE_SWIGLU=64x64x32:4x1 $G q4_0 512 5
  gb LFM2_GEMM_TILE_SWIGLU=128x64x32:4x2 $G q4_0 512 5
  gb LFM2_GEMM_TILE_SWIGLU=64x128x32:2x2 $G q4_0 512 5
  gb LFM2_GEMM_TILE_SWIGLU=32x64x64:2x2 $G q4_0 512 5
  gb $G q8_0 512 5
  gb $G q4_0 256 5
  gb LFM2_GEMM_TILE=128x64x32:4x1 LFM2_GEMM_SPLITK=2 $G q4_0 256 5
} > $R/sweep.txt 2>&1
grep -E "^==|sum" $R/sweep.txt
