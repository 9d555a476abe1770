#!/usr/bin/env bash
# bench/26 run 1 (H200): the L2 prefetch (LFM2_L2_PREFETCH=MB, 0 = off) against none, alternating in
# one call: whole steps of LFM2-1.2B with the head (gap-probe wall 1x +head, no timestamps), and one
# timed per-kernel profile of the BF16 one-column step with the prefetch (products reading warm).
D=.dev-26; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage
w() { echo "== $*: $(env "$@" 2>&1 | grep 'wall 1× +head')"; }
M="--model lfm2-1.2b --full --logits --gap-probe --reps 5"
{ $BIN $M --cols 1 --pos 64 >/dev/null 2>&1
  for i in 1 2; do
    for pf in 0 4 8 16 32; do w LFM2_L2_PREFETCH=$pf $BIN $M --dtype bf16 --cols 1 --pos 64; done
  done
  for i in 1 2; do
    for pf in 0 8 16; do w LFM2_L2_PREFETCH=$pf $BIN $M --dtype q4_0 --cols 1 --pos 64; done
  done
  for i in 1 2; do
    for pf in 0 8 16; do w LFM2_L2_PREFETCH=$pf $BIN $M --dtype bf16 --cols 16 --pos 64 --wide; done
  done
  for i in 1 2; do
    for pf in 0 16; do w LFM2_L2_PREFETCH=$pf $BIN $M --dtype bf16 --cols 64 --pos 64 --wide; done
    for pf in 0 16; do w LFM2_L2_PREFETCH=$pf $BIN $M --dtype q4_0 --cols 16 --pos 64 --wide; done
    for pf in 0 16; do w LFM2_L2_PREFETCH=$pf $BIN $M --dtype bf16 --cols 512 --slots 1 --pos 0 --wide; done
  done
} > $R/ab.txt 2>&1
cat $R/ab.txt
LFM2_L2_PREFETCH=16 $BIN $M --dtype bf16 --cols 1 --pos 64 > $R/decode1_pf16.txt 2>&1
LFM2_L2_PREFETCH=0 $BIN $M --dtype bf16 --cols 1 --pos 64 > $R/decode1_pf0.txt 2>&1
grep -A 14 "by kernel" $R/decode1_pf16.txt $R/decode1_pf0.txt
cd $OUT && tar czf r.tgz r && rm -rf r
