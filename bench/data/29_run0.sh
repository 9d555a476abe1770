#!/usr/bin/env bash
# bench/29 run 0 (H200): the short first call, for when device calls are being taken back: a few
# chained goldens (the self-test runs before the first), what one link costs at 132 workgroups,
# and three walls barriers (0) / chained (1), and chained with the wait's pause between reads
# (LFM2_CHAIN_BACKOFF=3: 32 integer steps, 6: 256). Set up as run 1 (.dev-29/, this script as run0.sh).
D=.dev-29; export BIN=$D/lfm2-profile-stage
F=tests/fixtures; LT=$F/lfm2-tiny; QT=$F/qwen35-tiny
T="timeout 120"
g() { echo "$*: $(env "$@" 2>&1 | grep -E 'golden: |failed|error|self-test' | tail -2 | tr '\n' ' ')"; }
{ g LFM2_CHAIN=1 $T $BIN --model $LT --full --golden $LT/golden.safetensors
  g LFM2_CHAIN=1 $T $BIN --model $LT/model-q4_0.gguf --full --golden $LT/golden-q4_0.safetensors
  g LFM2_CHAIN=1 $T $BIN --model $QT --full --golden $QT/golden.safetensors
  g LFM2_CHAIN=1 $T $BIN --model $LT --full --wide --golden $LT/golden-long.safetensors
  g LFM2_CHAIN=1 $T $BIN --model $QT --full --wide --golden $QT/golden-long.safetensors
  $T $D/gemm_bench chain 256 132; LFM2_CHAIN_BACKOFF=3 $T $D/gemm_bench chain 256 132
} > $OUT/29_run0_tests.txt 2>&1
cat $OUT/29_run0_tests.txt
w() { echo "== $*: $(env "$@" 2>&1 | grep -E 'wall 1× \+head|chained dispatches|self-test|error' | head -3 | tr '\n' ' ')"; }
M="--full --logits --gap-probe --reps 5 --pos 64"
{ $T $BIN --model lfm2-1.2b $M --cols 1 >/dev/null 2>&1
  for r in "lfm2-1.2b --dtype bf16 --cols 1" "lfm2-1.2b --dtype q4_0 --cols 1" "lfm2-1.2b --dtype bf16 --wide --cols 16"; do
    for c in 0 1 0 1 "1 LFM2_CHAIN_BACKOFF=3" "1 LFM2_CHAIN_BACKOFF=6"; do w LFM2_CHAIN=$c $T $BIN --model $r $M; done
  done
} > $OUT/29_run0_walls.txt 2>&1
cat $OUT/29_run0_walls.txt
# bench/30: quant codes to floats without conversion instructions. old = 71411f9 (I2F), new = this
# binary; walls alternating and per-op JSONs (barriers, no chain), Q4_0 and Q8_0 one column and 4.
O=$D/old-lfm2-profile-stage; P=$OUT/pj; mkdir -p $P
{ $T $D/test_kernels tests/fixtures 2>&1 | tail -1
  for dt in q4_0 q8_0; do for c in 1 4; do
    for i in 1 2; do
      w $T $O --model lfm2-1.2b --dtype $dt --cols $c $M
      w $T $BIN --model lfm2-1.2b --dtype $dt --cols $c $M
    done
    $T $O --model lfm2-1.2b --dtype $dt --cols $c --full --logits --pos 64 --reps 5 --json $P/bf_old_${dt}_$c.json >/dev/null 2>&1
    $T $BIN --model lfm2-1.2b --dtype $dt --cols $c --full --logits --pos 64 --reps 5 --json $P/bf_new_${dt}_$c.json >/dev/null 2>&1
  done; done
  for pl in "--wide --cols 16" "--wide --cols 512 --slots 1"; do
    w $T $O --model lfm2-1.2b --dtype q4_0 $pl $M; w $T $BIN --model lfm2-1.2b --dtype q4_0 $pl $M
  done
  python3 bench/per_op.py $P
} > $OUT/30_codes.txt 2>&1
cat $OUT/30_codes.txt
