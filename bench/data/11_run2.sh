#!/usr/bin/env bash
# gemm2 device run 2: tests, gemm_bench sweep (split-k, tiles), goldens, targets, wide kinds
D=.dev-gemm2
R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench ROOF=503.0
$D/test_kernels tests/fixtures > $R/tk_coopmat.txt 2>&1
LFM2_TEST_NO_COOPMAT=1 $D/test_kernels tests/fixtures > $R/tk_twin.txt 2>&1
tail -qn1 $R/tk_*.txt
gb() { echo "== $*"; env "$@" | grep -E "gemm|sum"; }
{
for c in 64 256 512; do gb $D/gemm_bench bf16 $c 10; done
for c in 64 256; do gb LFM2_GEMM_SPLITK=1 $D/gemm_bench bf16 $c 10; done
for t in 32x32x128 64x32x128 64x64x64 32x32x64; do gb LFM2_GEMM_TILE=$t $D/gemm_bench bf16 64 10; done
for t in 64x64x64 128x64x64 64x32x128; do gb LFM2_GEMM_SPLITK=1 LFM2_GEMM_TILE=$t $D/gemm_bench bf16 256 10; done
for t in 64x64x64 128x64x64 64x64x128 128x32x64; do gb LFM2_GEMM_TILE=$t $D/gemm_bench bf16 512 10; done
gb $D/gemm_bench q4_0 512 10
gb $D/gemm_bench q4_0 64 10
} > $R/sweep.txt 2>&1
OUT=$R bash $D/h200.sh golden_wide targets wide_kinds
grep -h "checks passed\|FAIL\|exit [1-9]" $R/golden_wide.txt | sort | uniq -c
cat $R/targets.txt; grep -E "^==|GPU busy|attn.prefill" $R/wide_kinds.txt
tar czf $OUT/x.tgz -C $OUT r
