#!/usr/bin/env bash
# bench/34 run 7: the 33-64 column rule extended to quantized weights (Q4_0, Q8_0 singles on 128x64x32
# 2x2 tiles with 8 splits) against main c11a90c (old-*): correctness, whole-model walls alternating.
D=.dev-34; (cd $D && tar -xJf d.tar.xz); T="timeout 120"; B=$D/lfm2-profile-stage; O=$D/old-lfm2-profile-stage
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$GPU"
{ $T $D/test_kernels tests/fixtures gemm 2>&1 | grep -E "FAIL|passed|device" | head -8
  F=tests/fixtures/lfm2-tiny
  for m in "model-q4_0.gguf golden-q4_0" "model-q8_0.gguf golden-q8_0" "model-q4_0.gguf golden-q4_0-long" "model-f16.gguf golden-f16"; do set -- $m
    $T $B --model $F/$1 --full --wide --golden $F/$2.safetensors 2>&1 | grep -E '^golden:|rror'; done
  for m in "model-q4_0.gguf golden-q4_0" "model-q8_0.gguf golden-q8_0"; do set -- $m
    $T $B --model tests/fixtures/qwen35-tiny/$1 --full --wide --golden tests/fixtures/qwen35-tiny/$2.safetensors 2>&1 | grep -E '^golden:|rror'; done
} > $OUT/34_run7_tests.txt 2>&1; cat $OUT/34_run7_tests.txt
w() { echo "$(env "$@" 2>&1 | grep -E 'wall 1× \+head|rror' | head -2 | sed 's/.*wall 1× +head *//; s/(median.*//' | tr '\n' ' ') | $*"; }
M="--full --logits --gap-probe --reps 5 --pos 64"
{ $T $B --model lfm2-1.2b $M --cols 1 >/dev/null 2>&1
  for i in 1 2; do for a in "q4_0 64" "q4_0 48" "q8_0 64" "bf16 64"; do set -- $a
    w $T $O --model lfm2-1.2b --dtype $1 --wide --cols $2 $M; w $T $B --model lfm2-1.2b --dtype $1 --wide --cols $2 $M; done; done
  w $T $O --model qwen3.5-0.8b --dtype q4_0 --wide --cols 64 $M; w $T $B --model qwen3.5-0.8b --dtype q4_0 --wide --cols 64 $M
  w $T $O --model qwen3.5-2b --wide --cols 64 $M; w $T $B --model qwen3.5-2b --wide --cols 64 $M
  w $T $O --model qwen3.5-0.8b --wide --cols 64 $M; w $T $B --model qwen3.5-0.8b --wide --cols 64 $M
} > $OUT/34_run7_walls.txt 2>&1; cat $OUT/34_run7_walls.txt
