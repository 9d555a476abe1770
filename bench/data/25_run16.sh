#!/usr/bin/env bash
# bench/25 run 16 (H200): attn.prep with groups of heads a workgroup and one sincos table a column,
# against the binary before (old = 4906b5d); LFM2-1.2B, Qwen3.5-0.8B, GLM-OCR at 512-token prefills
# and LFM2-1.2B at 1 and 16 columns; tests and goldens.
D=.dev-25; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage
{ echo "== test_kernels attention: $(timeout 100 $D/test_kernels tests/fixtures attention 2>&1 | tail -1)"; } > $R/tests.txt
OUT=$R timeout 60 bash $D/h200.sh golden >/dev/null 2>&1
OUT=$R timeout 90 bash $D/h200.sh golden_wide >/dev/null 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c >> $R/tests.txt
for m in qwen35-tiny glm-ocr-tiny; do for w in "" --wide; do echo "== $m $w long: $($BIN --model tests/fixtures/$m --full $w --golden tests/fixtures/$m/golden-long.safetensors 2>&1 | tail -1)"; done; done >> $R/tests.txt
cat $R/tests.txt
k() { grep -E '^  attn.prep' | awk '{print $1, $2, $3}'; }
{ for m in lfm2-1.2b qwen3.5-0.8b glm-ocr; do for b in $D/old/lfm2-profile-stage $BIN $D/old/lfm2-profile-stage $BIN; do
    echo "== $m 512 $b: $($b --model $m --full --dtype bf16 --cols 512 --slots 1 --pos 0 --wide --logits --reps 5 2>&1 | k) | $($b --model $m --full --dtype bf16 --cols 512 --slots 1 --pos 0 --wide --logits --gap-probe --reps 5 2>&1 | grep 'wall 1× +head')"
  done; done
  for c in 1 16; do for b in $D/old/lfm2-profile-stage $BIN $D/old/lfm2-profile-stage $BIN; do
    w=""; [ $c = 16 ] && w=--wide
    echo "== lfm2-1.2b $c $b: $($b --model lfm2-1.2b --full --dtype bf16 --cols $c --pos 64 $w --logits --reps 5 2>&1 | k) | $($b --model lfm2-1.2b --full --dtype bf16 --cols $c --pos 64 $w --logits --gap-probe --reps 5 2>&1 | grep 'wall 1× +head')"
  done; done
} > $R/prep.txt 2>&1
cat $R/prep.txt
cd $OUT && tar czf r.tgz r && rm -rf r
