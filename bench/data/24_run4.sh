#!/usr/bin/env bash
# bench/24 run 4 (H200): does attn.prefill's time follow its longest tile (keys walked one after
# another) or its total work? Prefills of 128/256/512 tokens and 4 x 128, LFM2-1.2B and GLM-OCR.
D=.dev-24; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage
{ for m in lfm2-1.2b glm-ocr; do for s in "128 1" "256 1" "512 1" "512 4" "512 16"; do set -- $s
    echo "== $m cols $1 slots $2: $($BIN --model $m --full --dtype bf16 --cols $1 --slots $2 --pos 0 --wide --logits --reps 3 2>&1 | grep -E '^  attn.prefill ')"
  done; done; } > $R/scale.txt 2>&1
cat $R/scale.txt
cd $OUT && tar czf r.tgz r && rm -rf r
