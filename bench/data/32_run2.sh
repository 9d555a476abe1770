#!/usr/bin/env bash
# bench/32 run 2: why the fused DeltaNet conv lost at 16 columns (run 1): registers of the
# matmul pipelines (LFM2_PIPELINE_STATS), per-kind at 16 columns, and dn2 (loads before stores in
# the epilogue) against the two dispatches, alternating.
D=.dev-32; T="timeout 100"; A=$D/dn-lfm2-profile-stage; B=$D/dn2-lfm2-profile-stage
w() { echo "== $*: $(env "$@" 2>&1 | grep -E 'wall 1× \+head|error' | head -2 | sed 's/.*wall 1× +head *//' | tr '\n' ' ')"; }
M="--full --logits --gap-probe --reps 5 --pos 64"
{ for b in $A $B; do
    echo "== $b stats"; LFM2_PIPELINE_STATS=1 $T $b --model qwen3.5-0.8b --full --cols 16 --reps 1 2>&1 | grep -E "pipeline matmul_bf16" | sort -u
  done
  for u in "$A" "$B" "LFM2_CONV_UNFUSED=1 $B"; do
    echo "== $u kinds 16"; env $u --model qwen3.5-0.8b --full --cols 16 --pos 64 --reps 3 2>&1 | grep -E "^  [a-z_.0-9]+ +n=" | head -8
  done
} > $OUT/32_run2_diag.txt 2>&1
cat $OUT/32_run2_diag.txt
{ for m in qwen3.5-0.8b qwen3.5-2b; do
    for c in 1 4 16; do
      for i in 1 2; do w $T $B --model $m --cols $c $M; w LFM2_CONV_UNFUSED=1 $T $B --model $m --cols $c $M; done
    done
  done
} > $OUT/32_run2_walls.txt 2>&1
cat $OUT/32_run2_walls.txt
