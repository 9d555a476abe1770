#!/usr/bin/env bash
# bench/35 run 2: what the decode attention costs as the context grows (LFM2-1.2B BF16, layers
# 0:16, no head: kind attn.decode_prep, µs a step, timestamped medians of 3), then bench/h200.sh
# narrow34 (the 33-64 column rule against the old one; the Q4_0 16/32-column sweep).
D=.dev-35; (cd $D && tar -xJf d.tar.xz); B=$D/lfm2-profile-stage
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for row in "1 64" "1 1024" "1 4096" "16 64" "16 1024" "16 4096" "64 64" "64 1024" "256 64" "256 1024"; do
    set -- $row; w=; [ $1 -gt 8 ] && w=--wide
    echo "== cols $1 pos $2 $w"
    t0=$(date +%s)
    $B --model lfm2-1.2b --layers 0:16 --cols $1 --pos $2 $w --reps 3 2>&1 | grep -E "GPU busy|attn"
    echo "(${SECONDS}s total, this row $(( $(date +%s) - t0 ))s)"
done 2>&1 | tee $OUT/35_run2_attn.txt
[ "${SKIP_NARROW:-0}" = 1 ] || { BIN=$B GEMM_BENCH=$D/gemm_bench timeout 300 bash bench/h200.sh narrow34 >/dev/null 2>&1; cp $OUT/narrow34.txt $OUT/35_run2_narrow34.txt; grep -E "^==|^  sum" $OUT/narrow34.txt | head -120; }
