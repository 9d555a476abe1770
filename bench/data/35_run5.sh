#!/usr/bin/env bash
# bench/35 run 5 (session of 2026-12-06): run 4 with every family's wide goldens (bench/h200.sh
# wide_goldens: LFM2 four formats whole/split/long, Qwen3.5, GLM-OCR) through the new binary in place
# of run 4's eight long goldens, the batch plan's goldens of every family kept; then the targets.
# new = main at 0498523 with data/35_attn_kv_split.patch applied; old = main at 0498523.
D=.dev-35; (cd $D && tar -xJf d.tar.xz && mv lfm2-profile-stage old && mkdir -p n && cd n && tar -xJf ../new.tar.xz)
OLD=$D/old; NEW=$D/n/lfm2-profile-stage
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
{ timeout 60 $D/n/test_kernels tests/fixtures attention | tail -2; LFM2_ATTN_SPLIT=1 timeout 60 $D/n/test_kernels tests/fixtures attention | tail -2; } 2>&1 | tee $OUT/35_run5_tests.txt
for row in "1 64" "1 4096" "16 64" "16 4096" "64 64" "64 1024"; do
    set -- $row; w=; [ $1 -gt 8 ] && w=--wide
    for b in old new; do B=$OLD; [ $b = new ] && B=$NEW
        echo "== $b cols $1 pos $2 $w"
        timeout 45 $B --model lfm2-1.2b --layers 0:16 --cols $1 --pos $2 $w --reps 3 2>&1 | grep -E "GPU busy|attn"
    done
done 2>&1 | tee $OUT/35_run5_attn.txt
echo "(${SECONDS}s)"
F=tests/fixtures/lfm2-tiny; G=tests/fixtures/glm-ocr-tiny; Q=tests/fixtures/qwen35-tiny
for m in "$F golden-long" "$F/model-q4_0.gguf golden-q4_0-long" "$Q golden-long" "$Q/model-q4_0.gguf golden-q4_0-long" "$G golden-long" "$F golden" "$Q golden" "$G golden"; do
    set -- $m; d=$(dirname $1); [ -d $1 ] && d=$1
    echo "\$ $1 $2: $(timeout 30 $NEW --model $1 --full --golden $d/$2.safetensors 2>&1 | tail -1)"
done 2>&1 | tee $OUT/35_run5_goldens.txt
BIN=$NEW timeout 200 bash bench/h200.sh wide_goldens >/dev/null 2>&1; cp $OUT/wide_goldens.txt $OUT/35_run5_wide_goldens.txt
echo "wide goldens passed: $(grep -c '^golden: .*passed' $OUT/wide_goldens.txt) of $(grep -c '^\$ ' $OUT/wide_goldens.txt) runs"
grep -B3 -E '^\(exit [1-9]' $OUT/wide_goldens.txt | head -20
echo "(${SECONDS}s)"
timeout $(( 570 - SECONDS )) env BIN=$NEW GEMM_BENCH=$D/gemm_bench ROOF=503 bash bench/h200.sh targets >/dev/null 2>&1
cp $OUT/targets.txt $OUT/35_run5_targets.txt; cat $OUT/35_run5_targets.txt; echo "(${SECONDS}s)"
