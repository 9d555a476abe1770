#!/usr/bin/env bash
# bench/31 run 2 + bench/32 run 3 (the binaries that land): Q4_0 rounded to f16 in the gemm tile
# (Q8_0 split as before): test_kernels (gemm against the f16-rounded reference), Q4_0 goldens wide
# (LFM2 all and long, Qwen3.5), BF16 Qwen3.5 goldens (the fused conv), walls against old- (fb22b27);
# the DeltaNet conv fusion at 8 columns against LFM2_CONV_UNFUSED=1.
D=.dev-33; T="timeout 120"; N=$D/lfm2-profile-stage; O=$D/old-lfm2-profile-stage
F=tests/fixtures/lfm2-tiny; Q=tests/fixtures/qwen35-tiny
w() { echo "== $*: $(env "$@" 2>&1 | grep -E 'wall 1× \+head|error' | head -2 | sed 's/.*wall 1× +head *//' | tr '\n' ' ')"; }
M="--full --logits --gap-probe --reps 5 --pos 64"
{ $T $D/test_kernels tests/fixtures 2>&1 | grep -E "FAIL|passed|device" | head -12
  for g in "$F/model-q4_0.gguf $F/golden-q4_0.safetensors" "$F/model-q4_0.gguf $F/golden-q4_0-long.safetensors" \
           "$Q/model-q4_0.gguf $Q/golden-q4_0.safetensors" "$Q/model-q4_0.gguf $Q/golden-q4_0-long.safetensors" \
           "$F/model-q8_0.gguf $F/golden-q8_0.safetensors" "$Q $Q/golden.safetensors" "$Q $Q/golden-long.safetensors"; do
    set -- $g
    for x in "" --wide; do
      r=$($T $N --model $1 --full $x --golden $2 2>&1)
      echo "== $1 $(basename $2) $x: $(echo "$r" | grep -E '^golden:|error' | tr '\n' ' ') worst $(echo "$r" | grep -E '^golden ' | awk '{print $6}' | sort -g | tail -1)"
    done
  done
  $T $N --model $Q --layers 0:2 --golden $Q/golden.safetensors 2>&1 | tail -1
  $T $N --model $Q --layers 2:4 --golden $Q/golden.safetensors 2>&1 | tail -1
} > $OUT/33_tests.txt 2>&1
cat $OUT/33_tests.txt
{ for i in 1; do
    for r in "--dtype q4_0 --wide --cols 512 --slots 1" "--dtype q4_0 --wide --cols 16" "--dtype q8_0 --wide --cols 64"; do
      w $T $O --model lfm2-1.2b $r $M; w $T $N --model lfm2-1.2b $r $M
    done
  done
  for m in qwen3.5-0.8b qwen3.5-2b; do
    for c in 8; do
      for i in 1 2; do w $T $N --model $m --cols $c $M; w LFM2_CONV_UNFUSED=1 $T $N --model $m --cols $c $M; done
    done
  done
} > $OUT/33_walls.txt 2>&1
cat $OUT/33_walls.txt
