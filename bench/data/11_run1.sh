#!/usr/bin/env bash
# gemm2 device run 1: correctness (coopmat + twin), gemm_bench variants, pipeline stats, targets
D=.dev-gemm2
R=$OUT/r; mkdir -p $R
export B=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $R/smi.txt 2>&1
( time $D/test_kernels tests/fixtures ) > $R/tk_coopmat.txt 2>&1
( LFM2_TEST_NO_COOPMAT=1 $D/test_kernels tests/fixtures ) > $R/tk_twin.txt 2>&1
( LFM2_GEMM_SPLITK=3 LFM2_GEMM_NBUF=2 LFM2_GEMM_TILE=32x32x32 $D/test_kernels tests/fixtures gemm ) > $R/tk_split_coopmat.txt 2>&1
( LFM2_TEST_NO_COOPMAT=1 LFM2_GEMM_SPLITK=3 LFM2_GEMM_NBUF=2 LFM2_GEMM_TILE=32x32x32 $D/test_kernels tests/fixtures gemm ) > $R/tk_split_twin.txt 2>&1
grep -h "passed\|FAIL" $R/tk_*.txt | head -20
LFM2_PIPELINE_STATS=1 $D/gemm_bench bf16 64 1 1 > $R/stats.txt 2>&1
for c in 64 256 512; do echo "== bf16 $c"; $D/gemm_bench bf16 $c 10; done > $R/gb_auto.txt 2>&1
for c in 64 256; do echo "== bf16 $c SPLITK=1"; LFM2_GEMM_SPLITK=1 $D/gemm_bench bf16 $c 10; done > $R/gb_nosplit.txt 2>&1
for c in 64 512; do echo "== bf16 $c NBUF=1"; LFM2_GEMM_NBUF=1 $D/gemm_bench bf16 $c 10; done > $R/gb_nbuf1.txt 2>&1
echo "== q4_0 512"; $D/gemm_bench q4_0 512 10 >> $R/gb_auto.txt 2>&1
grep -h "^==\|sum\|accuracy" $R/gb_*.txt
OUT=$R bash $D/h200.sh golden_wide targets wide_kinds
grep -c "PASS\|pass" $R/golden_wide.txt; grep -i "fail\|exit [1-9]" $R/golden_wide.txt | head
cat $R/targets.txt
tar czf $OUT/x.tgz -C $OUT r
