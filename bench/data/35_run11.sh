#!/usr/bin/env bash
# bench/35 run 11 (not yet run): the attention line at 2-15 columns, which runs 6-10 did not measure
# (k_attn_by_kv_head gives them the 512-key line), by q head (LFM2_ATTN_KV_KEYS=100000) and by kv
# head (LFM2_ATTN_KV_KEYS=0), µs a step of the attention kinds (timestamped medians of 5) and the
# gap-probe wall; then a batch-plan prefill at a long history past 64 columns (the rule keeps it by
# q head, unmeasured). Build: d.tar.xz = main (lfm2-profile-stage); carry .gl, .dev-35.
D=.dev-35; (cd $D && tar -xJf d.tar.xz); M=$D/lfm2-profile-stage
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for row in "lfm2-1.2b 0:16 2 256" "lfm2-1.2b 0:16 4 256" "lfm2-1.2b 0:16 8 256" "lfm2-1.2b 0:16 4 384" \
    "lfm2-1.2b 0:16 8 384" "qwen3.5-2b 0:8 4 512" "glm-ocr 0:4 4 256" "glm-ocr 0:4 8 384"; do
    set -- $row
    for E in LFM2_ATTN_KV_KEYS=100000 LFM2_ATTN_KV_KEYS=0; do
        [ $SECONDS -gt $(( ${LIMIT:-575} - 40 )) ] && break 2
        echo "== $E $1 cols $3 pos $4: $(env $E timeout 45 $M --model $1 --layers $2 --cols $3 --pos $4 --reps 5 \
            --gap-probe 2>&1 | grep -E '^GPU busy|^  attn|wall 1×' | tr -s ' ' | tr '\n' ' ')"
    done
done 2>&1 | tee $OUT/35_run11_attn.txt
for E in LFM2_ATTN_KV_KEYS=100000 LFM2_ATTN_KV_KEYS=0; do
    echo "== $E lfm2-1.2b prefill 128 columns of one slot at 1024: $(env $E timeout 60 $M --model lfm2-1.2b \
        --layers 0:16 --cols 128 --slots 1 --pos 1024 --reps 3 2>&1 | grep -E '^GPU busy|^  attn' | tr -s ' ' | tr '\n' ' ')"
done 2>&1 | tee -a $OUT/35_run11_attn.txt
echo "(${SECONDS}s)"
