#!/usr/bin/env bash
# bench/24 run 9 (H200): main after the review's mends (lanes4.glsl shared by attn_prefill, dn_chunk,
# dn_recurrent; split_ok passed down): the whole test_kernels, goldens in both plans, prefill attention.
D=.dev-24; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage
{ echo "== test_kernels"; timeout 150 $D/test_kernels tests/fixtures 2>&1 | tail -1; } > $R/tests.txt 2>&1
OUT=$R timeout 60 bash $D/h200.sh golden >/dev/null 2>&1
OUT=$R timeout 90 bash $D/h200.sh golden_wide >/dev/null 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c >> $R/tests.txt
cat $R/tests.txt
for m in lfm2-1.2b glm-ocr qwen3.5-0.8b; do
  echo "== $m prefill 512: $($BIN --model $m --full --dtype bf16 --cols 512 --slots 1 --pos 0 --wide --logits --reps 3 2>&1 | grep -E '^  (attn(.gated)?.prefill|dn.chunk) ' | tr -s ' ' | tr '\n' ';')"
done > $R/attn.txt 2>&1
cat $R/attn.txt
cd $OUT && tar czf r.tgz r && rm -rf r
