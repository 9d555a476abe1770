#!/usr/bin/env bash
# bench/25 run 14 (H200): A/B in one call: BF16 wide 128 columns with the SwiGLU pairs on the new
# 64x128x32 2x4 tiles (default) against the 64x64x64 2x2 tiles forced (the rule before), alternating;
# and the rows that moved between runs 10 and 13 (decode 64 wide, Q4_0 decode 1), again.
D=.dev-25; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage
w() { echo "== $*: $(env "$@" 2>&1 | grep 'wall 1× +head')"; }
{ $BIN --model lfm2-1.2b --full --cols 1 --pos 64 --logits --gap-probe --reps 3 >/dev/null 2>&1
  for i in 1 2; do
    w $BIN --model lfm2-1.2b --full --dtype bf16 --cols 128 --pos 64 --wide --logits --gap-probe --reps 5
    w LFM2_GEMM_TILE_SWIGLU=64x64x64:2x2 $BIN --model lfm2-1.2b --full --dtype bf16 --cols 128 --pos 64 --wide --logits --gap-probe --reps 5
  done
  for i in 1 2; do
    w $BIN --model lfm2-1.2b --full --dtype bf16 --cols 64 --pos 64 --wide --logits --gap-probe --reps 5
    w $BIN --model lfm2-1.2b --full --dtype q4_0 --cols 1 --pos 64 --logits --gap-probe --reps 5
  done
} > $R/ab.txt 2>&1
cat $R/ab.txt
cd $OUT && tar czf r.tgz r && rm -rf r
