#!/usr/bin/env bash
# bench/35 run 6 (not yet run): the rework of attn_kv.comp (data/35_attn_kv2.patch: key lanes of
# HD/4 invocations summing their keys' v units into all GQ heads, 16 rows in flight; attn_merge
# parallel over the splits) against main after bench/35 landed the kernel for long contexts.
# Variants a row (µs a step of the attention kinds, timestamped medians of 3, and the wall):
#   q   main, LFM2_ATTN_KV_KEYS=100000: attention.comp (by q head) everywhere
#   kv1 main, LFM2_ATTN_KV_KEYS=0: run 5's attn_kv.comp everywhere
#   kv2 the patch, LFM2_ATTN_KV_KEYS=0: the rework everywhere (kv2wg: split target 2048)
# If kv2 beats q at 65 keys, K_ATTN_KV_KEYS can drop (to 0: attention.comp goes). Then the rework's
# tests on the GPU, every family's goldens through it (LFM2_ATTN_KV_KEYS=0, batch plan and
# bench/h200.sh wide_goldens) and the targets. Build: d.tar.xz = main (lfm2-profile-stage,
# gemm_bench), new2.tar.xz = main + the patch (lfm2-profile-stage, test_kernels); carry .gl, .dev-35.
# LIMIT: seconds the call may run (default 575).
D=.dev-35; (cd $D && tar -xJf d.tar.xz && mkdir -p n2 && cd n2 && tar -xJf ../new2.tar.xz)
M=$D/lfm2-profile-stage; N2=$D/n2/lfm2-profile-stage
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for row in "lfm2-1.2b 0:16 1 64" "lfm2-1.2b 0:16 1 1024" "lfm2-1.2b 0:16 1 4096" "lfm2-1.2b 0:16 16 64" "lfm2-1.2b 0:16 16 4096" \
    "lfm2-1.2b 0:16 64 64" "lfm2-1.2b 0:16 64 1024" "qwen3.5-2b 0:8 1 64" "qwen3.5-2b 0:8 1 4096" "glm-ocr 0:4 1 64" "glm-ocr 0:4 1 4096"; do
    set -- $row; w=; [ $3 -gt 8 ] && w=--wide
    vs="q kv1 kv2"; [ $1 = lfm2-1.2b ] && [ $4 = 4096 ] && vs="q kv1 kv2 kv2wg"
    for b in $vs; do
        case $b in q) B=$M; E=LFM2_ATTN_KV_KEYS=100000;; kv1) B=$M; E=LFM2_ATTN_KV_KEYS=0;; kv2) B=$N2; E=LFM2_ATTN_KV_KEYS=0;;
            kv2wg) B=$N2; E="LFM2_ATTN_KV_KEYS=0 LFM2_ATTN_SPLIT_WG=2048";; esac
        echo "== $b $1 cols $3 pos $4 $w"
        env $E timeout 45 $B --model $1 --layers $2 --cols $3 --pos $4 $w --reps 3 2>&1 | grep -E "GPU busy|^  attn"
    done
done 2>&1 | tee $OUT/35_run6_attn.txt
echo "(${SECONDS}s)"
{ for s in "" 1 7; do LFM2_ATTN_KV_KEYS=0 LFM2_ATTN_SPLIT=$s timeout 60 $D/n2/test_kernels tests/fixtures attention | tail -2; done; } 2>&1 | tee $OUT/35_run6_tests.txt
F=tests/fixtures/lfm2-tiny; G=tests/fixtures/glm-ocr-tiny; Q=tests/fixtures/qwen35-tiny
export LFM2_ATTN_KV_KEYS=0
for m in "$F golden-long" "$F/model-q4_0.gguf golden-q4_0-long" "$Q golden-long" "$Q/model-q4_0.gguf golden-q4_0-long" "$G golden-long" "$F golden" "$Q golden" "$G golden"; do
    set -- $m; d=$(dirname $1); [ -d $1 ] && d=$1
    echo "\$ $1 $2: $(timeout 30 $N2 --model $1 --full --golden $d/$2.safetensors 2>&1 | tail -1)"
done 2>&1 | tee $OUT/35_run6_goldens.txt
BIN=$N2 timeout 200 bash bench/h200.sh wide_goldens >/dev/null 2>&1; cp $OUT/wide_goldens.txt $OUT/35_run6_wide_goldens.txt; rm -f $OUT/wide_goldens.txt
echo "wide goldens passed: $(grep -c '^golden: .*passed' $OUT/35_run6_wide_goldens.txt) of $(grep -c '^\$ ' $OUT/35_run6_wide_goldens.txt) runs"
unset LFM2_ATTN_KV_KEYS
echo "(${SECONDS}s)"
timeout $(( ${LIMIT:-575} - SECONDS )) env BIN=$N2 GEMM_BENCH=$D/gemm_bench ROOF=503 bash bench/h200.sh targets >/dev/null 2>&1
cp $OUT/targets.txt $OUT/35_run6_targets.txt; cat $OUT/35_run6_targets.txt; echo "(${SECONDS}s)"
