#!/usr/bin/env bash
# bench/24 run 6 (H200): attn.prefill with two KV blocks a step (32 keys: half the barriers and
# softmax passes a key) against one (LFM2_ATTN_NBS=1) in the same binary; tests and wide goldens.
D=.dev-24; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
st tests
{ echo "== test_kernels attention"; timeout 100 $D/test_kernels tests/fixtures attention 2>&1 | grep -E "FAIL|passed" | head -20
  echo "== test_kernels attention, LFM2_ATTN_NBS=1"; LFM2_ATTN_NBS=1 timeout 100 $D/test_kernels tests/fixtures attention 2>&1 | tail -1
} > $R/tests.txt 2>&1
OUT=$R timeout 90 bash $D/h200.sh golden_wide >/dev/null 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c >> $R/tests.txt
cat $R/tests.txt
st attn
{ for m in lfm2-1.2b glm-ocr qwen3.5-0.8b; do for s in "512 1" "128 1" "512 4"; do set -- $s; for n in "" 1; do
    echo "== $m cols $1 slots $2 NBS=${n:-default}: $(env ${n:+LFM2_ATTN_NBS=$n} $BIN --model $m --full --dtype bf16 --cols $1 --slots $2 --pos 0 --wide --logits --reps 3 2>&1 | grep -E '^  attn(.gated)?.prefill ')"
  done; done; done
  LFM2_PIPELINE_STATS=1 $BIN --model glm-ocr --full --dtype bf16 --cols 512 --slots 1 --pos 0 --wide --logits --reps 1 2>&1 | grep 'attn_prefill'
  LFM2_PIPELINE_STATS=1 $BIN --model lfm2-1.2b --full --dtype bf16 --cols 512 --slots 1 --pos 0 --wide --logits --reps 1 2>&1 | grep 'attn_prefill'
} > $R/attn.txt 2>&1
cat $R/attn.txt
st walls
{ for m in lfm2-1.2b glm-ocr; do for n in "" 1; do
    echo "== $m prefill 512 NBS=${n:-default}: $(env ${n:+LFM2_ATTN_NBS=$n} $BIN --model $m --full --dtype bf16 --cols 512 --slots 1 --pos 0 --wide --logits --gap-probe --reps 5 2>&1 | grep 'wall 1× +head')"
  done; done; } > $R/walls.txt 2>&1
cat $R/walls.txt
st done
cat $R/times.txt
cd $OUT && tar czf r.tgz r && rm -rf r
