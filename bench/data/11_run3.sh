#!/usr/bin/env bash
# gemm2 device run 3 (final): tests (every gemm path), gemm_bench sweep, goldens, targets, wide kinds
D=.dev-gemm2
R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench ROOF=503.0
T=$D/test_kernels
{
echo "== default"; $T tests/fixtures
echo "== twin"; LFM2_TEST_NO_COOPMAT=1 $T tests/fixtures
echo "== split 3, 2 buffers, 32x32x32 (float atomic add)"; LFM2_GEMM_SPLITK=3 LFM2_GEMM_NBUF=2 LFM2_GEMM_TILE=32x32x32 $T tests/fixtures gemm
echo "== same, CAS"; LFM2_GEMM_NO_FADD=1 LFM2_GEMM_SPLITK=3 LFM2_GEMM_NBUF=2 LFM2_GEMM_TILE=32x32x32 $T tests/fixtures gemm
echo "== split 4, 128x64x64"; LFM2_GEMM_SPLITK=4 LFM2_GEMM_TILE=128x64x64 $T tests/fixtures gemm
echo "== twin split 3 2 buffers 32x32x32"; LFM2_TEST_NO_COOPMAT=1 LFM2_GEMM_SPLITK=3 LFM2_GEMM_NBUF=2 LFM2_GEMM_TILE=32x32x32 $T tests/fixtures gemm
} > $R/tests.txt 2>&1
grep -E "^==|passed|FAIL|atomic" $R/tests.txt
gb() { echo "== $*"; env "$@" | grep -E "gemm|sum"; }
{
for c in 64 256 512; do gb $D/gemm_bench bf16 $c 10; done
gb LFM2_GEMM_NO_FADD=1 $D/gemm_bench bf16 64 10
for c in 64 256 512; do for s in 2 4 8; do gb LFM2_GEMM_TILE=128x64x64 LFM2_GEMM_SPLITK=$s $D/gemm_bench bf16 $c 10; done; done
for c in 256 512; do gb LFM2_GEMM_TILE=64x64x64 LFM2_GEMM_SPLITK=2 $D/gemm_bench bf16 $c 10; done
gb $D/gemm_bench q4_0 64 10
gb $D/gemm_bench q4_0 512 10
gb $D/gemm_bench f16 512 10
} > $R/sweep.txt 2>&1
OUT=$R bash $D/h200.sh golden_wide targets wide_kinds
grep -h "checks passed\|FAIL\|exit [1-9]" $R/golden_wide.txt | sort | uniq -c
{ for cfg in "X=1" "LFM2_GEMM_TILE=128x64x64 LFM2_GEMM_SPLITK=2" "LFM2_GEMM_TILE=128x64x64 LFM2_GEMM_SPLITK=4"; do
  for a in "--cols 64 --pos 64" "--cols 256 --pos 64" "--cols 512 --slots 1 --pos 0"; do
    echo "== $cfg $a"; env $cfg $BIN --model lfm2-1.2b --full $a --wide --logits --gap-probe --reps 3 | grep -E "GPU busy|gap|wall 1"
  done; done; } > $R/cfg.txt 2>&1
cat $R/targets.txt
tar czf $OUT/x.tgz -C $OUT r
