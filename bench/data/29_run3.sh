#!/usr/bin/env bash
# bench/29 run 3 (H200): after run 0 showed chained links slower than barriers, the rest of the
# record: what a link costs at 1, 1024 and 4096 workgroups (and with the wait's pause), the
# chained walls of the rows run 0 did not cover, and today's no-barrier bound. Set up as run 0
# (.dev-29/, this script as run3.sh; binary of 71411f9).
D=.dev-29; export BIN=$D/lfm2-profile-stage
T="timeout 120"
{ for a in "256 1" "256 1024" "64 4096"; do $T $D/gemm_bench chain $a; done
  LFM2_CHAIN_BACKOFF=6 $T $D/gemm_bench chain 256 132
} > $OUT/29_run3_link_cost.txt 2>&1
cat $OUT/29_run3_link_cost.txt
w() { echo "== $*: $(env "$@" 2>&1 | grep -E 'wall 1× \+head|chained dispatches|self-test|error' | head -3 | tr '\n' ' ')"; }
M="--full --logits --gap-probe --reps 5 --pos 64"
{ $T $BIN --model lfm2-1.2b $M --cols 1 >/dev/null 2>&1
  for r in "qwen3.5-0.8b --cols 1" "glm-ocr --cols 1" "lfm2-1.2b --dtype q4_0 --wide --cols 16" \
           "lfm2-1.2b --dtype bf16 --wide --cols 64" "lfm2-1.2b --dtype bf16 --wide --cols 512 --slots 1"; do
    for c in 0 1; do w LFM2_CHAIN=$c $T $BIN --model $r $M; done
  done
  for r in "lfm2-1.2b --dtype bf16 --cols 1" "lfm2-1.2b --dtype bf16 --wide --cols 16"; do
    w LFM2_BENCH_NO_BARRIERS=1 $T $BIN --model $r $M
  done
} > $OUT/29_run3_walls.txt 2>&1
cat $OUT/29_run3_walls.txt
