#!/usr/bin/env bash
# bench/35 run 8: k_attn_by_kv_head's line from runs 6-7 (new = main with the rule: by kv head at one
# column past max(256, 2 x head dim) keys, past 512 at 2-63 columns, at any context from 64 decode
# columns) against main at 47401df (old: past 512 keys up to 64 columns), on the rows the line moves
# and the widths no run measured (256 columns); µs a step of the attention kinds and the wall.
# Then the rule's tests on the GPU and the targets table with it. d.tar.xz = old (lfm2-profile-stage,
# gemm_bench), r.tar.xz = new (lfm2-profile-stage, test_kernels); carry .gl, .dev-35. LIMIT: seconds.
D=.dev-35; (cd $D && tar -xJf d.tar.xz && mkdir -p r && cd r && tar -xJf ../r.tar.xz)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for row in "lfm2-1.2b 0:16 1 256" "lfm2-1.2b 0:16 1 384" "glm-ocr 0:4 1 256" "qwen3.5-2b 0:8 1 512" \
    "lfm2-1.2b 0:16 64 64" "lfm2-1.2b 0:16 128 64" "lfm2-1.2b 0:16 128 1024" "lfm2-1.2b 0:16 256 64" "lfm2-1.2b 0:16 256 1024"; do
    set -- $row; w=; [ $3 -gt 8 ] && w=--wide
    for b in old new; do
        [ $SECONDS -gt $(( ${LIMIT:-575} - 120 )) ] && break 2
        B=$D/lfm2-profile-stage; [ $b = new ] && B=$D/r/lfm2-profile-stage
        echo "== $b $1 cols $3 pos $4 $w"
        timeout 45 $B --model $1 --layers $2 --cols $3 --pos $4 $w --reps 3 2>&1 | grep -E "GPU busy|^  attn"
    done
done 2>&1 | tee $OUT/35_run8_attn.txt
echo "(${SECONDS}s)"
timeout 60 $D/r/test_kernels tests/fixtures attention 2>&1 | tail -2 | tee $OUT/35_run8_tests.txt
timeout $(( ${LIMIT:-575} - SECONDS )) env BIN=$D/r/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench ROOF=499 bash bench/h200.sh targets >/dev/null 2>&1
cp $OUT/targets.txt $OUT/35_run8_targets.txt; cat $OUT/35_run8_targets.txt; echo "(${SECONDS}s)"
