#!/usr/bin/env bash
# bench/26 run 3 (H200): the prep fused into decode attention (attn.decode_prep) against the two
# dispatches (LFM2_ATTN_UNFUSED=1), alternating in one call, LFM2-1.2B, GLM-OCR, Qwen3.5-0.8B; and the
# tests: test_kernels (cooperative matrices) and the goldens of every family, batch and wide.
D=.dev-26; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage
F=tests/fixtures
{ LFM2_VALIDATION=0 $D/test_kernels $F 2>&1 | tail -3
  for m in "$F/lfm2-tiny golden" "$F/lfm2-tiny golden-long" "$F/lfm2-tiny/model-f16.gguf golden-f16" \
           "$F/lfm2-tiny/model-q8_0.gguf golden-q8_0" "$F/lfm2-tiny/model-q4_0.gguf golden-q4_0" \
           "$F/lfm2-tiny/model-q4_0.gguf golden-q4_0-long" "$F/qwen35-tiny golden" "$F/qwen35-tiny golden-long" \
           "$F/qwen35-tiny/model-q4_0.gguf golden-q4_0-long" "$F/glm-ocr-tiny golden" "$F/glm-ocr-tiny golden-long"; do
    set -- $m; d=$(dirname $1/x); [ -f "$1" ] && d=$(dirname $1)
    for w in "" --wide; do echo "$1 $2 $w: $($BIN --model $1 --full --golden $d/$2.safetensors $w 2>&1 | tail -1)"; done
  done
  for L in "--layers 0:3" "--layers 3:6"; do echo "split $L: $($BIN --model $F/lfm2-tiny $L --golden $F/lfm2-tiny/golden.safetensors 2>&1 | tail -1)"; done
} > $R/tests.txt 2>&1
cat $R/tests.txt
w() { echo "== $*: $(env "$@" 2>&1 | grep 'wall 1× +head')"; }
M="--full --logits --gap-probe --reps 5 --pos 64"
{ $BIN --model lfm2-1.2b $M --cols 1 >/dev/null 2>&1
  for i in 1 2; do
    for u in "" LFM2_ATTN_UNFUSED=1; do
      w $u $BIN --model lfm2-1.2b $M --dtype bf16 --cols 1
      w $u $BIN --model lfm2-1.2b $M --dtype q4_0 --cols 1
      w $u $BIN --model lfm2-1.2b $M --dtype bf16 --cols 16 --wide
      w $u $BIN --model glm-ocr $M --dtype bf16 --cols 1
      w $u $BIN --model qwen3.5-0.8b $M --dtype bf16 --cols 1
    done
  done
} > $R/ab.txt 2>&1
cat $R/ab.txt
for u in "" LFM2_ATTN_UNFUSED=1; do
  env $u $BIN --model lfm2-1.2b $M --dtype bf16 --cols 1 2>&1 | grep -E "^  (attn|shortconv|matmul)" | sed "s/^/$u /"
  env $u $BIN --model glm-ocr $M --dtype bf16 --cols 1 2>&1 | grep -E "^  (attn|matmul)" | sed "s/^/glm $u /"
done > $R/kinds.txt 2>&1
cat $R/kinds.txt
cd $OUT && tar czf r.tgz r && rm -rf r
