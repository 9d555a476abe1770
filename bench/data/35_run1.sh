#!/usr/bin/env bash
# bench/35 run 1: every family's wide goldens, then issue 8's targets table (main at the commit named
# in the note); narrow34 follows in run 2.
D=.dev-35; (cd $D && tar -xJf d.tar.xz); B=$D/lfm2-profile-stage
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
BIN=$B GEMM_BENCH=$D/gemm_bench bash bench/h200.sh wide_goldens targets >/dev/null 2>&1
cp $OUT/targets.txt $OUT/35_run1_targets.txt; cp $OUT/wide_goldens.txt $OUT/35_run1_goldens.txt; cat $OUT/35_run1_targets.txt
echo "goldens passed: $(grep -c '^golden: .*passed' $OUT/wide_goldens.txt) of $(grep -c '^\$ lfm2' $OUT/wide_goldens.txt) runs"
grep -B3 -E '^\(exit [1-9]' $OUT/wide_goldens.txt | head -20
