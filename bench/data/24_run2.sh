#!/usr/bin/env bash
# bench/24 run 2 (H200): attn.prefill with [[unroll]] on its fixed loops (run 1: LFM2's 120 us a
# layer unchanged by the prefetch); pipeline statistics (registers, stack) of old and new; tile
# widths; the whole test_kernels and goldens in both plans; the targets.
D=.dev-24; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
st stats
for b in $BIN $D/old/lfm2-profile-stage; do
  echo "== $b"; LFM2_PIPELINE_STATS=1 $b --model lfm2-1.2b --full --dtype bf16 --cols 512 --slots 1 --pos 0 --wide --logits --reps 1 2>&1 | grep -i -A8 'attn_prefill' | head -24
  LFM2_PIPELINE_STATS=1 $b --model qwen3.5-0.8b --full --dtype bf16 --cols 512 --slots 1 --pos 0 --wide --logits --reps 1 2>&1 | grep -i -A8 'attn_prefill' | head -12
done > $R/stats.txt 2>&1
head -c 6000 $R/stats.txt
st attn
{ for b in $BIN $D/old/lfm2-profile-stage; do for bq in "" 16 64; do
    echo "== $b bf16 prefill 512 BQ=${bq:-default}: $(env ${bq:+LFM2_ATTN_BQ=$bq} $b --model lfm2-1.2b --full --dtype bf16 --cols 512 --slots 1 --pos 0 --wide --logits --reps 5 2>&1 | grep -E '^  attn.prefill ')"
  done
  echo "== $b qwen3.5-0.8b prefill 512: $($b --model qwen3.5-0.8b --full --dtype bf16 --cols 512 --slots 1 --pos 0 --wide --logits --reps 3 2>&1 | grep -E '^  attn.gated')"
  echo "== $b glm-ocr prefill 512: $($b --model glm-ocr --full --dtype bf16 --cols 512 --slots 1 --pos 0 --wide --logits --reps 3 2>&1 | grep -E '^  attn.prefill')"
  echo "== $b bf16 prefill 512 wall: $($b --model lfm2-1.2b --full --dtype bf16 --cols 512 --slots 1 --pos 0 --wide --logits --gap-probe --reps 5 2>&1 | grep 'wall 1× +head')"
  echo "== $b mixed 4x128 wall: $($b --model lfm2-1.2b --full --dtype bf16 --cols 512 --slots 4 --pos 0 --wide --logits --gap-probe --reps 5 2>&1 | grep 'wall 1× +head')"
done; } > $R/attn.txt 2>&1
cat $R/attn.txt
st tests
{ echo "== test_kernels"; timeout 150 $D/test_kernels tests/fixtures 2>&1 | tail -1; } > $R/tests.txt 2>&1
OUT=$R timeout 60 bash $D/h200.sh golden >/dev/null 2>&1
OUT=$R timeout 90 bash $D/h200.sh golden_wide >/dev/null 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c >> $R/tests.txt
cat $R/tests.txt
st targets
ROOF=498.8 OUT=$R timeout 200 bash $D/h200.sh targets > $R/targets_out.txt 2>&1
cat $R/targets.txt
st done
cat $R/times.txt
cd $OUT && tar czf r.tgz r && rm -rf r
