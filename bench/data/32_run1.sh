#!/usr/bin/env bash
# bench/32 run 1 (H200): Qwen3.5's DeltaNet conv in in_proj_qkv's epilogue at decode
# (matmul.comp CONV 2, kind matmul_dn_conv) against the two dispatches (LFM2_CONV_UNFUSED=1), in one
# binary ("dn-": main with the fusion), alternating; tests first (test_kernels, the qwen35-tiny
# goldens whole and split, every format). Ran as part (d) of data/31_run1.sh's call (same helpers).
D=.dev-31; T="timeout 150"
w() { echo "== $*: $(env "$@" 2>&1 | grep -E 'wall 1× \+head|error' | head -2 | tr '\n' ' ')"; }
M="--full --logits --gap-probe --reps 5 --pos 64"
Q=tests/fixtures/qwen35-tiny; DN=$D/dn-lfm2-profile-stage
{ $T $D/dn-test_kernels tests/fixtures 2>&1 | grep -E "FAIL|passed|device" | head -12
  for gf in "model.safetensors golden.safetensors" "model-f16.gguf golden-f16.safetensors" \
            "model-q8_0.gguf golden-q8_0.safetensors" "model.safetensors golden-long.safetensors"; do
    set -- $gf
    for L in "--full" "--layers 0:2" "--layers 2:4"; do
      echo "== dn $1 $2 $L: $($T $DN --model $Q/$1 $L --golden $Q/$2 2>&1 | grep -E '^golden:|error' | tr '\n' ' ')"
    done
  done
  $T $DN --model $Q/model.safetensors --full --cols 3 --reps 1 2>&1 | grep -E "matmul_dn|dn.conv" | head -3
} > $OUT/32_run1_tests.txt 2>&1
cat $OUT/32_run1_tests.txt
{ for m in qwen3.5-0.8b qwen3.5-2b; do
    for c in 1 4 16; do
      for i in 1 2; do w $T $DN --model $m --cols $c $M; w LFM2_CONV_UNFUSED=1 $T $DN --model $m --cols $c $M; done
    done
  done
  for u in 0 1; do
    echo "== LFM2_CONV_UNFUSED=$u qwen3.5-0.8b --cols 1 kinds"
    env LFM2_CONV_UNFUSED=$u $T $DN --model qwen3.5-0.8b --full --cols 1 --pos 64 --reps 5 --gap-probe 2>&1 | grep -E "^  [a-z_.0-9]+ +n=|wall|plan:" | head -24
  done
} > $OUT/32_run1_walls.txt 2>&1
cat $OUT/32_run1_walls.txt
