#!/usr/bin/env bash
# bench/34 run 4: the single products' tiles and splits at 16-96 columns (gemm_bench bf16, the 60
# single products of LFM2-1.2B; at 128 columns the 'big' rule's 128x64x64 2x2 tiles take 1.90 ms,
# at 64 the narrow rule's 1.87: half the columns in the same time).
D=.dev-34; (cd $D && tar -xJf d.tar.xz); T="timeout 60"
nvidia-smi --query-gpu=name --format=csv,noheader
s() { echo "$(env "$@" 2>&1 | grep -E "^  gemm.bf16|rror" | sed 's/ *TFLOP.*//') | $*"; }
{ for c in 64 48 32 96 16; do
  s $T $D/gemm_bench bf16 $c 10
  s LFM2_GEMM_FRAG=2 $T $D/gemm_bench bf16 $c 10
  for t in 128x64x64:2x2 64x64x64:2x2 128x32x64:4x1 64x32x64:2x2 128x64x32:4x1; do
    s LFM2_GEMM_TILE=$t $T $D/gemm_bench bf16 $c 10
    for k in 2 4 8; do s LFM2_GEMM_TILE=$t LFM2_GEMM_SPLITK=$k $T $D/gemm_bench bf16 $c 10; done
  done
  done
  for t in 64x16x64:4x1 64x16x32:4x1 128x16x64:4x1 32x16x64:2x1 64x16x64:2x1; do
    s LFM2_GEMM_TILE=$t $T $D/gemm_bench bf16 16 10
    for k in 4 8 16; do s LFM2_GEMM_TILE=$t LFM2_GEMM_SPLITK=$k $T $D/gemm_bench bf16 16 10; done
  done
} > $OUT/34_run4_gemm.txt 2>&1; cat $OUT/34_run4_gemm.txt
