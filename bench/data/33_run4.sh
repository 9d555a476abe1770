#!/usr/bin/env bash
# bench/33 run 4: the widening beside the previous product: gemm_wdeq's copies in two halves taken in
# turn, each widening moved back to just after the last product that read a copy (plan_hoist_last),
# the halves plan buffers (engine.c), so no barrier separates the two. Correctness (the Q4_0 goldens
# widened at every width: their steps run with the data's barriers), then whole LFM2-1.2B Q4_0 steps
# widened against not (LFM2_GEMM_WDEQ_COLS=1 / 0), alternating, and per-kind tables.
D=.dev-33; (cd $D && tar -xJf d.tar.xz); T="timeout 150"; B=$D/lfm2-profile-stage
{ $T $D/test_kernels tests/fixtures gemm 2>&1 | grep -E "FAIL|passed|device" | head -12
  for F in tests/fixtures/lfm2-tiny tests/fixtures/qwen35-tiny; do
    for g in golden-q4_0.safetensors golden-q4_0-long.safetensors; do
      for L in "--full" "--layers 1:3"; do
        echo "== $F $g $L: $(LFM2_GEMM_WDEQ_COLS=1 $T $B --model $F/model-q4_0.gguf $L --wide --golden $F/$g 2>&1 | grep -E '^golden:|error' | tr '\n' ' ')"
      done
    done
  done
} > $OUT/33_run4_tests.txt 2>&1
cat $OUT/33_run4_tests.txt
w() { echo "== $*: $(env "$@" 2>&1 | grep -E 'wall 1× \+head|error' | head -2 | sed 's/.*wall 1× +head *//; s/(median.*//' | tr '\n' ' ')"; }
M="--full --logits --gap-probe --reps 5 --pos 64"
{ $T $B --model lfm2-1.2b --dtype q4_0 $M --cols 1 >/dev/null 2>&1
  for r in "--cols 512 --slots 1" "--cols 256" "--cols 128" "--cols 96"; do
    for i in 1 2; do w LFM2_GEMM_WDEQ_COLS=0 $T $B --model lfm2-1.2b --dtype q4_0 --wide $r $M; w LFM2_GEMM_WDEQ_COLS=1 $T $B --model lfm2-1.2b --dtype q4_0 --wide $r $M; done
  done
  for r in "--cols 512 --slots 1" "--cols 128"; do w $T $B --model lfm2-1.2b --dtype f16 --wide $r $M; done
  for c in 512 128; do
    echo "== q4_0 $c kinds (widened)"; LFM2_GEMM_WDEQ_COLS=1 $T $B --model lfm2-1.2b --dtype q4_0 --wide --cols $c --slots 1 --full --logits --pos 64 --reps 5 2>&1 | grep -E "^  [a-z_.0-9]+ +n=|busy" | head -6
  done
} > $OUT/33_run4_walls.txt 2>&1
cat $OUT/33_run4_walls.txt
