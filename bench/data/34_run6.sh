#!/usr/bin/env bash
# bench/34 run 6: after the 33-64 column rule for unsplit weights: the same question for Q4_0 and
# Q8_0 singles (gemm_bench, forced tiles and splits), the SwiGLU pairs' tiles at 16 and 64 columns;
# on an H200 also the targets table with the new rule.
D=.dev-34; (cd $D && tar -xJf d.tar.xz); T="timeout 60"; B=$D/lfm2-profile-stage
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$GPU"
s() { echo "$(env "$@" 2>&1 | grep -E "^  gemm[._]|rror" | grep -v xprep | sed 's/ *TFLOP.*//; s/  */ /g' | tr '\n' ' ') | $*"; }
{ for c in 64 48; do for dt in q4_0 q8_0; do
    s $T $D/gemm_bench $dt $c 10
    for t in 128x64x32:2x2 64x64x64:2x2 64x32x64:2x2 128x32x32:4x1; do for k in 4 8; do
      s LFM2_GEMM_TILE=$t LFM2_GEMM_SPLITK=$k $T $D/gemm_bench $dt $c 10; done; done
  done; done
  for t in 64x64x32:2x2 64x32x64:2x2 64x32x64:4x1 32x64x64:2x2 64x64x64:4x1; do s LFM2_GEMM_TILE_SWIGLU=$t $T $D/gemm_bench bf16 64 10; done
  s $T $D/gemm_bench bf16 16 10
  for t in 32x16x64:2x1 64x16x32:4x1 128x16x32:4x1 32x16x64:1x1 64x16x64:2x1; do s LFM2_GEMM_TILE_SWIGLU=$t $T $D/gemm_bench bf16 16 10; done
} > $OUT/34_run6_gemm.txt 2>&1; cat $OUT/34_run6_gemm.txt
case "$GPU" in *H200*) BIN=$B GEMM_BENCH=$D/gemm_bench bash bench/h200.sh targets golden_wide >/dev/null 2>&1
  cp $OUT/targets.txt $OUT/34_run6_targets_h200.txt; cat $OUT/34_run6_targets_h200.txt; grep -c "^golden: .*passed" $OUT/golden_wide.txt ;; esac
