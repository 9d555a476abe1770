#!/usr/bin/env bash
# bench/35 run 3: attention.comp by kv head with key splits (new = b0ea671) against the kernel
# before it (old = main 5ba8957): the attention tests on the GPU, the decode attention's time as
# the context grows, old and new alternating (LFM2-1.2B BF16, layers 0:16, no head; kinds attn.*,
# µs a step, timestamped medians of 3), every family's goldens with the new binary (batch and
# wide, short and long), then issue 8's targets table with the new binary.
D=.dev-35; (cd $D && tar -xJf d.tar.xz && mv lfm2-profile-stage old && mkdir -p n && cd n && tar -xJf ../new.tar.xz)
OLD=$D/old; NEW=$D/n/lfm2-profile-stage
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
{ $D/n/test_kernels tests/fixtures attention | tail -2; LFM2_ATTN_SPLIT=1 $D/n/test_kernels tests/fixtures attention | tail -2; } 2>&1 | tee $OUT/35_run3_tests.txt
for row in "1 64" "1 1024" "1 4096" "16 64" "16 4096" "64 64" "64 1024" "256 1024"; do
    set -- $row; w=; [ $1 -gt 8 ] && w=--wide
    for b in old new; do B=$OLD; [ $b = new ] && B=$NEW
        echo "== $b cols $1 pos $2 $w"
        timeout 60 $B --model lfm2-1.2b --layers 0:16 --cols $1 --pos $2 $w --reps 3 2>&1 | grep -E "GPU busy|attn"
    done
done 2>&1 | tee $OUT/35_run3_attn.txt
echo "(${SECONDS}s)"
timeout 120 env BIN=$NEW bash bench/h200.sh golden wide_goldens >/dev/null 2>&1
G=tests/fixtures/glm-ocr-tiny; Q=tests/fixtures/qwen35-tiny
{ for gold in golden golden-long; do for L in --full "--layers 0:1" "--layers 1:3"; do echo "\$ glm $L $gold"; $NEW --model $G $L --golden $G/$gold.safetensors | tail -1; done; done
  for m in "$Q golden-long" "$Q/model-q4_0.gguf golden-q4_0-long" "$Q golden"; do set -- $m; for L in --full "--layers 0:2" "--layers 2:4"; do echo "\$ qwen $1 $L $2"; $NEW --model $1 $L --golden $Q/$2.safetensors | tail -1; done; done
  echo "\$ lfm2 long batch"; $NEW --model tests/fixtures/lfm2-tiny --full --golden tests/fixtures/lfm2-tiny/golden-long.safetensors | tail -1
} > $OUT/35_run3_batch_goldens.txt 2>&1
cat $OUT/golden.txt $OUT/wide_goldens.txt $OUT/35_run3_batch_goldens.txt > $OUT/35_run3_goldens.txt
echo "goldens: $(grep -c 'checks passed' $OUT/35_run3_goldens.txt) 'passed' lines; runs: $(grep -c '^\$ ' $OUT/35_run3_goldens.txt); not ok:"
grep -E "exit [1-9]|FAIL| off " $OUT/35_run3_goldens.txt | head
echo "(${SECONDS}s)"
timeout $(( 570 - SECONDS )) env BIN=$NEW GEMM_BENCH=$D/gemm_bench bash bench/h200.sh targets >/dev/null 2>&1
cp $OUT/targets.txt $OUT/35_run3_targets.txt; cat $OUT/35_run3_targets.txt; echo "(${SECONDS}s)"
