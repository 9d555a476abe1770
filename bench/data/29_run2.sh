#!/usr/bin/env bash
# bench/29 run 2 (H200, never run: run 0 and run 3 decided the question first): the second round of
# run 1's walls in the other order (chained first), LFM2_CHAIN=2 (plain activation loads) and the
# no-barrier bound (LFM2_BENCH_NO_BARRIERS, wrong results) on the LFM2 rows, and the timestamped
# per-kernel times under 0 and 1 at one column and wide 16 (what the coherent loads cost the
# kernels). Set up as run 1 (.dev-29/run.sh).
D=.dev-29; export BIN=$D/lfm2-profile-stage
T="timeout 120"
w() { echo "== $*: $(env "$@" 2>&1 | grep -E 'wall 1× \+head|chained dispatches|self-test|error' | head -3 | tr '\n' ' ')"; }
M="--full --logits --gap-probe --reps 5 --pos 64"
rows=("lfm2-1.2b --dtype bf16 --cols 1" "lfm2-1.2b --dtype q4_0 --cols 1" "lfm2-1.2b --dtype bf16 --cols 4"
      "lfm2-1.2b --dtype bf16 --cols 16" "lfm2-1.2b --dtype bf16 --wide --cols 16" "lfm2-1.2b --dtype q4_0 --wide --cols 16"
      "lfm2-1.2b --dtype bf16 --wide --cols 64" "lfm2-1.2b --dtype bf16 --wide --cols 512 --slots 1"
      "qwen3.5-0.8b --cols 1" "qwen3.5-0.8b --wide --cols 16" "glm-ocr --cols 1")
{ $T $BIN --model lfm2-1.2b $M --cols 1 >/dev/null 2>&1
  for r in "${rows[@]}"; do
    for c in 1 0; do w LFM2_CHAIN=$c $T $BIN --model $r $M; done
  done
  for r in "${rows[@]:0:7}"; do
    w LFM2_CHAIN=2 $T $BIN --model $r $M
    w LFM2_BENCH_NO_BARRIERS=1 $T $BIN --model $r $M
  done
} > $OUT/29_ab2.txt 2>&1
cat $OUT/29_ab2.txt
for r in "lfm2-1.2b --dtype bf16 --cols 1" "lfm2-1.2b --dtype bf16 --wide --cols 16"; do
  for c in 0 1; do
    LFM2_CHAIN=$c $T $BIN --model $r $M 2>&1 | grep -E "^  [a-z]" | sed "s/^/chain=$c $r: /"
  done
done > $OUT/29_kinds.txt 2>&1
cat $OUT/29_kinds.txt
