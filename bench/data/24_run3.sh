#!/usr/bin/env bash
# bench/24 run 3 (H200): attn.prefill's threads a workgroup swept (LFM2_ATTN_NT) with its tile
# widths; whole prefill steps of Qwen3.5-0.8B and GLM-OCR, new against old (8f241fa).
D=.dev-24; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
st sweep
{ for m in lfm2-1.2b glm-ocr qwen3.5-0.8b; do for nt in 64 128 256 512; do for bq in "" 16; do
    echo "== $m NT=$nt BQ=${bq:-default}: $(env LFM2_ATTN_NT=$nt ${bq:+LFM2_ATTN_BQ=$bq} $BIN --model $m --full --dtype bf16 --cols 512 --slots 1 --pos 0 --wide --logits --reps 3 2>&1 | grep -E '^  attn(.gated)?.prefill ')"
  done; done; done
  LFM2_PIPELINE_STATS=1 LFM2_ATTN_NT=256 $BIN --model lfm2-1.2b --full --dtype bf16 --cols 512 --slots 1 --pos 0 --wide --logits --reps 1 2>&1 | grep 'attn_prefill'
} > $R/sweep.txt 2>&1
cat $R/sweep.txt
st walls
{ for m in qwen3.5-0.8b glm-ocr; do for b in $BIN $D/old/lfm2-profile-stage; do
    echo "== $m $b prefill 512: $($b --model $m --full --dtype bf16 --cols 512 --slots 1 --pos 0 --wide --logits --gap-probe --reps 5 2>&1 | grep 'wall 1× +head')"
  done; done; } > $R/walls.txt 2>&1
cat $R/walls.txt
st done
cat $R/times.txt
cd $OUT && tar czf r.tgz r && rm -rf r
