#!/usr/bin/env bash
# bench/35 run 7: where attention.comp (by q head) and the landed attn_kv.comp (run 6's rework) cross,
# by family, width and keys: q = LFM2_ATTN_KV_KEYS=100000, kv = LFM2_ATTN_KV_KEYS=0 (µs a step of the
# attention kinds, timestamped medians of 3, and the wall). Then, on whatever card came,
# bench/h200.sh wide_goldens and targets (issue 8's done-when asks for them on an H200).
# Sections in the order given (default: sweep goldens targets); LIMIT: seconds the call may run.
# Build: d.tar.xz = main at 47401df (lfm2-profile-stage, gemm_bench); carry .gl, .dev-35.
D=.dev-35; (cd $D && tar -xJf d.tar.xz); M=$D/lfm2-profile-stage
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
sweep() {
for row in "lfm2-1.2b 0:16 1 128" "lfm2-1.2b 0:16 1 256" "lfm2-1.2b 0:16 1 384" "lfm2-1.2b 0:16 1 512" \
    "lfm2-1.2b 0:16 16 256" "lfm2-1.2b 0:16 16 512" "lfm2-1.2b 0:16 16 1024" \
    "lfm2-1.2b 0:16 32 64" "lfm2-1.2b 0:16 32 256" "lfm2-1.2b 0:16 64 128" "lfm2-1.2b 0:16 64 256" \
    "lfm2-1.2b 0:16 128 64" "lfm2-1.2b 0:16 128 1024" \
    "qwen3.5-2b 0:8 1 256" "qwen3.5-2b 0:8 1 512" "qwen3.5-2b 0:8 1 1024" "qwen3.5-2b 0:8 16 1024" \
    "glm-ocr 0:4 1 128" "glm-ocr 0:4 1 256" "glm-ocr 0:4 1 512" "glm-ocr 0:4 16 1024"; do
    set -- $row; w=; [ $3 -gt 8 ] && w=--wide
    for b in q kv; do
        [ $SECONDS -gt $(( ${LIMIT:-575} - 15 )) ] && break 2
        case $b in q) E=LFM2_ATTN_KV_KEYS=100000;; kv) E=LFM2_ATTN_KV_KEYS=0;; esac
        echo "== $b $1 cols $3 pos $4 $w"
        env $E timeout 45 $M --model $1 --layers $2 --cols $3 --pos $4 $w --reps 3 2>&1 | grep -E "GPU busy|^  attn"
    done
done 2>&1 | tee $OUT/35_run7_attn.txt
}
goldens() {
BIN=$M timeout 200 bash bench/h200.sh wide_goldens >/dev/null 2>&1; cp $OUT/wide_goldens.txt $OUT/35_run7_wide_goldens.txt; rm -f $OUT/wide_goldens.txt
echo "wide goldens passed: $(grep -c '^golden: .*passed' $OUT/35_run7_wide_goldens.txt) of $(grep -c '^\$ ' $OUT/35_run7_wide_goldens.txt) runs"
}
targets() {
timeout $(( ${LIMIT:-575} - SECONDS )) env BIN=$M GEMM_BENCH=$D/gemm_bench bash bench/h200.sh targets >/dev/null 2>&1
cp $OUT/targets.txt $OUT/35_run7_targets.txt; cat $OUT/35_run7_targets.txt; echo "(${SECONDS}s)"
}
for s in ${@:-sweep goldens targets}; do $s; echo "(${SECONDS}s)"; done
