#!/usr/bin/env bash
# bench/35 run 4, the first device call for branch attn-kv-split (runs 1-3 never got a device; run 3, this
# with every golden, was dropped): the attention tests on the GPU, then the
# decode attention old (5ba8957) against new (b0ea671) as the context grows (LFM2-1.2B BF16, layers
# 0:16, no head; µs a step, timestamped medians of 3), the long goldens of every family with the
# new binary, then issue 8's targets as far as the time goes.
D=.dev-35; (cd $D && tar -xJf d.tar.xz && mv lfm2-profile-stage old && mkdir -p n && cd n && tar -xJf ../new.tar.xz)
OLD=$D/old; NEW=$D/n/lfm2-profile-stage
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
{ $D/n/test_kernels tests/fixtures attention | tail -2; LFM2_ATTN_SPLIT=1 $D/n/test_kernels tests/fixtures attention | tail -2; } 2>&1 | tee $OUT/35_run4_tests.txt
for row in "1 64" "1 4096" "16 64" "16 4096" "64 64" "64 1024"; do
    set -- $row; w=; [ $1 -gt 8 ] && w=--wide
    for b in old new; do B=$OLD; [ $b = new ] && B=$NEW
        echo "== $b cols $1 pos $2 $w"
        timeout 45 $B --model lfm2-1.2b --layers 0:16 --cols $1 --pos $2 $w --reps 3 2>&1 | grep -E "GPU busy|attn"
    done
done 2>&1 | tee $OUT/35_run4_attn.txt
echo "(${SECONDS}s)"
F=tests/fixtures/lfm2-tiny; G=tests/fixtures/glm-ocr-tiny; Q=tests/fixtures/qwen35-tiny
for m in "$F golden-long" "$F/model-q4_0.gguf golden-q4_0-long" "$Q golden-long" "$Q/model-q4_0.gguf golden-q4_0-long" "$G golden-long" "$F golden" "$Q golden" "$G golden"; do
    set -- $m; d=$(dirname $1); [ -d $1 ] && d=$1
    for w in "" --wide; do echo "\$ $1 $2 $w: $($NEW --model $1 --full $w --golden $d/$2.safetensors 2>&1 | tail -1)"; done
done 2>&1 | tee $OUT/35_run4_goldens.txt
echo "(${SECONDS}s)"
timeout $(( 560 - SECONDS )) env BIN=$NEW GEMM_BENCH=$D/gemm_bench ROOF=503 bash bench/h200.sh targets >/dev/null 2>&1
cp $OUT/targets.txt $OUT/35_run4_targets.txt; cat $OUT/35_run4_targets.txt; echo "(${SECONDS}s)"
