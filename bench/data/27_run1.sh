#!/usr/bin/env bash
# bench/27 run 1 (H200): LFM2's conv.in_proj with the short conv in its epilogue (matmul_shortconv)
# against the two dispatches (LFM2_CONV_UNFUSED=1), alternating, three rounds; the tests (test_kernels,
# LFM2 goldens in both plans, every format).
D=.dev-26; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage
F=tests/fixtures
{ $D/test_kernels $F 2>&1 | tail -1
  for m in "$F/lfm2-tiny golden" "$F/lfm2-tiny golden-long" "$F/lfm2-tiny/model-f16.gguf golden-f16" \
           "$F/lfm2-tiny/model-q8_0.gguf golden-q8_0" "$F/lfm2-tiny/model-q4_0.gguf golden-q4_0"; do
    set -- $m; d=$(dirname $1/x); [ -f "$1" ] && d=$(dirname $1)
    for w in "" --wide; do echo "$1 $2 $w: $($BIN --model $1 --full --golden $d/$2.safetensors $w 2>&1 | tail -1)"; done
  done
  for L in "--layers 0:3" "--layers 3:6"; do echo "split $L: $($BIN --model $F/lfm2-tiny $L --golden $F/lfm2-tiny/golden.safetensors 2>&1 | tail -1)"; done
} > $R/tests.txt 2>&1
cat $R/tests.txt
w() { echo "== $*: $(env "$@" 2>&1 | grep 'wall 1× +head')"; }
M="--model lfm2-1.2b --full --logits --gap-probe --reps 5 --pos 64"
{ $BIN $M --cols 1 >/dev/null 2>&1
  for i in 1 2 3; do
    for u in "" LFM2_CONV_UNFUSED=1; do
      w $u $BIN $M --dtype bf16 --cols 1
      w $u $BIN $M --dtype bf16 --cols 4
      w $u $BIN $M --dtype bf16 --cols 16
      w $u $BIN $M --dtype q4_0 --cols 1
    done
  done
} > $R/ab.txt 2>&1
cat $R/ab.txt
for u in "" LFM2_CONV_UNFUSED=1; do
  env $u $BIN $M --dtype bf16 --cols 1 2>&1 | grep -E "^  (matmul|shortconv)" | sed "s/^/$u /"
done > $R/kinds.txt 2>&1
cat $R/kinds.txt
cd $OUT && tar czf r.tgz r && rm -rf r
