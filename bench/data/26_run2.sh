#!/usr/bin/env bash
# bench/26 run 2 (H200): the whole step with no barriers between dispatches (LFM2_BENCH_NO_BARRIERS,
# wrong results: the dispatches overlap freely) against the plan's barriers, alternating in one call:
# how much of a narrow step is the serial chain (drain, launch, ramp) rather than bytes.
D=.dev-26; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage
w() { echo "== $*: $(env "$@" 2>&1 | grep 'wall 1× +head')"; }
M="--model lfm2-1.2b --full --logits --gap-probe --reps 5"
{ $BIN $M --cols 1 --pos 64 >/dev/null 2>&1
  for i in 1 2; do
    for nb in "" LFM2_BENCH_NO_BARRIERS=1; do
      w $nb $BIN $M --dtype bf16 --cols 1 --pos 64
      w $nb $BIN $M --dtype q4_0 --cols 1 --pos 64
      w $nb $BIN $M --dtype bf16 --cols 16 --pos 64 --wide
      w $nb $BIN $M --dtype q4_0 --cols 16 --pos 64 --wide
      w $nb $BIN $M --dtype bf16 --cols 64 --pos 64 --wide
      w $nb $BIN $M --dtype bf16 --cols 512 --slots 1 --pos 0 --wide
    done
  done
} > $R/nobarriers.txt 2>&1
cat $R/nobarriers.txt
cd $OUT && tar czf r.tgz r && rm -rf r
