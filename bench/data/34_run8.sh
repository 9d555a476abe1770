#!/usr/bin/env bash
# bench/34 run 8: the targets table and the wide goldens with this note's rules (main 387c6c5).
D=.dev-34; (cd $D && tar -xJf d.tar.xz); B=$D/lfm2-profile-stage
nvidia-smi --query-gpu=name --format=csv,noheader
BIN=$B GEMM_BENCH=$D/gemm_bench bash bench/h200.sh golden_wide targets >/dev/null 2>&1
cp $OUT/targets.txt $OUT/34_run8_targets.txt; cat $OUT/34_run8_targets.txt
echo "goldens passed: $(grep -c '^golden: .*passed' $OUT/golden_wide.txt) of $(grep -c '^golden:' $OUT/golden_wide.txt)"
