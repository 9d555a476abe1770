#!/usr/bin/env bash
# bench/34 run 9: Q4_0 single products at 16 and 32 columns and BF16 at 128: forced tiles and splits
# (gemm_bench), then test_kernels' matrix tests under two of the forced settings.
D=.dev-34; (cd $D && tar -xJf d.tar.xz); T="timeout 40"
nvidia-smi --query-gpu=name --format=csv,noheader
s() { echo "$(env "$@" 2>&1 | grep -E "^  gemm[._]|rror" | grep -v -E "xprep|swiglu" | sed 's/ *TFLOP.*//; s/  */ /g' | tr '\n' ' ') | $*"; }
{ s $T $D/gemm_bench q4_0 16 10
  for k in 4 16; do s LFM2_GEMM_SPLITK=$k $T $D/gemm_bench q4_0 16 10; done
  s LFM2_GEMM_PF=1 $T $D/gemm_bench q4_0 16 10; s LFM2_GEMM_FRAG=2 $T $D/gemm_bench q4_0 16 10
  for t in 64x16x32:4x1 128x16x64:4x1 32x16x64:2x1 64x16x64:2x1; do for k in 0 8 16; do
    s LFM2_GEMM_TILE=$t LFM2_GEMM_SPLITK=$k $T $D/gemm_bench q4_0 16 10; done; done
  s $T $D/gemm_bench q4_0 32 10
  for t in 128x32x32:4x1 64x32x64:2x2 128x64x32:2x2; do for k in 0 4 8; do
    s LFM2_GEMM_TILE=$t LFM2_GEMM_SPLITK=$k $T $D/gemm_bench q4_0 32 10; done; done
  s $T $D/gemm_bench bf16 128 10
  for k in 2 8; do s LFM2_GEMM_SPLITK=$k $T $D/gemm_bench bf16 128 10; done
} > $OUT/34_run9_gemm.txt 2>&1; cat $OUT/34_run9_gemm.txt
for env in "LFM2_GEMM_TILE=32x16x64:2x1 LFM2_GEMM_SPLITK=16" "LFM2_GEMM_TILE=64x16x32:4x1 LFM2_GEMM_SPLITK=16"; do
  echo "== test_kernels gemm, $env: $(env $env timeout 60 $D/test_kernels tests/fixtures gemm 2>&1 | grep -E 'FAIL|passed' | head -3 | tr '\n' ' ')"
done > $OUT/34_run9_tests.txt 2>&1; cat $OUT/34_run9_tests.txt
