#!/usr/bin/env bash
# bench/34 run 5: the 33-64 column rule (single products of unsplit weights on 128x64x64 2x2 tiles
# with 8 splits) against the old one (old-*: main c11a90c's rules): correctness, gemm_bench,
# whole-model walls alternating; the SwiGLU pairs' tiles at 64 columns; then the targets table.
D=.dev-34; (cd $D && tar -xJf d.tar.xz); T="timeout 120"; B=$D/lfm2-profile-stage; O=$D/old-lfm2-profile-stage
nvidia-smi --query-gpu=name --format=csv,noheader
{ $T $D/test_kernels tests/fixtures gemm 2>&1 | grep -E "FAIL|passed|device" | head -8
  for g in golden golden-long; do $T $B --model tests/fixtures/lfm2-tiny --full --wide --golden tests/fixtures/lfm2-tiny/$g.safetensors 2>&1 | grep -E '^golden:|rror'; done
} > $OUT/34_run5_tests.txt 2>&1; cat $OUT/34_run5_tests.txt
s() { echo "$(env "$@" 2>&1 | grep -E "^  gemm.(bf16|f16)|rror" | sed 's/ *TFLOP.*//' | tr '\n' ' ') | $*"; }
{ for c in 40 48 64; do s $T $D/old-gemm_bench bf16 $c 10; s $T $D/gemm_bench bf16 $c 10; done
  s $T $D/old-gemm_bench f16 64 10; s $T $D/gemm_bench f16 64 10
  for t in 64x64x32:2x2 64x32x64:2x2 64x32x64:4x1 32x64x64:2x2 64x64x64:4x1 128x32x32:4x1; do s LFM2_GEMM_TILE_SWIGLU=$t $T $D/gemm_bench bf16 64 10; done
} > $OUT/34_run5_gemm.txt 2>&1; cat $OUT/34_run5_gemm.txt
w() { echo "$(env "$@" 2>&1 | grep -E 'wall 1× \+head|rror' | head -2 | sed 's/.*wall 1× +head *//; s/(median.*//' | tr '\n' ' ') | $*"; }
M="--full --logits --gap-probe --reps 5 --pos 64"
{ $T $B --model lfm2-1.2b $M --cols 1 >/dev/null 2>&1
  for i in 1 2; do for c in 48 64; do w $T $O --model lfm2-1.2b --wide --cols $c $M; w $T $B --model lfm2-1.2b --wide --cols $c $M; done; done
  w $T $O --model lfm2-1.2b --dtype f16 --wide --cols 64 $M; w $T $B --model lfm2-1.2b --dtype f16 --wide --cols 64 $M
  w $T $O --model qwen3.5-0.8b --wide --cols 64 $M; w $T $B --model qwen3.5-0.8b --wide --cols 64 $M
  w $T $O --model lfm2-1.2b --wide --cols 32 $M; w $T $B --model lfm2-1.2b --wide --cols 32 $M
} > $OUT/34_run5_walls.txt 2>&1; cat $OUT/34_run5_walls.txt
BIN=$B GEMM_BENCH=$D/gemm_bench bash bench/h200.sh targets >/dev/null 2>&1; cp $OUT/targets.txt $OUT/34_run5_targets.txt; cat $OUT/34_run5_targets.txt
