#!/usr/bin/env bash
# bench/20 run 1 (H200): narrow F16/BF16 products with the weight fragments straight from memory
# (gemm.comp WDIR, F16/BF16 and Q8_0/Q4_0; LFM2_GEMM_WDIR=0 is the code before, in the same binary): correctness, sweep of
# the slices in flight, the whole model at 1-32 columns, targets
D=.dev-20a; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
gb() { echo "== $*"; env "$@" 2>&1 | grep -E "gemm|sum|accuracy"; }
st tests
{ echo "== test_kernels"; timeout 120 $D/test_kernels tests/fixtures 2>&1 | tail -1
  for w in 1 2 8; do echo "== WDIR $w gemm"; LFM2_GEMM_WDIR=$w timeout 60 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1; done
  echo "== WDIR_COLS 64 gemm"; LFM2_GEMM_WDIR_COLS=64 timeout 60 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1
} > $R/tests.txt 2>&1
st goldens
OUT=$R timeout 100 bash $D/h200.sh golden_wide >/dev/null 2>&1
Q=tests/fixtures/qwen35-tiny
{ for m in "$Q golden" "$Q/model-q4_0.gguf golden-q4_0" "$Q golden-long"; do set -- $m
  echo "\$ $1 --wide $2"; $BIN --model $1 --full --wide --golden $Q/$2.safetensors; echo "(exit $?)"; done; } > $R/golden_qwen.txt 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c >> $R/tests.txt
cat $R/tests.txt
st sweep
{ for c in 16 1 32 8; do for w in 0 4 2 8; do gb LFM2_GEMM_WDIR=$w $D/gemm_bench bf16 $c 10; done; done
  for w in 0 4; do gb LFM2_GEMM_WDIR=$w $D/gemm_bench f16 16 10; done
  for w in 0 4 8; do gb LFM2_GEMM_WDIR_COLS=64 LFM2_GEMM_WDIR=$w $D/gemm_bench bf16 64 10; done
  for w in 0 4 8; do gb LFM2_GEMM_WDIR=$w $D/gemm_bench q4_0 16 10; done
  for w in 0 4; do gb LFM2_GEMM_WDIR=$w $D/gemm_bench q8_0 16 10; gb LFM2_GEMM_WDIR=$w $D/gemm_bench q4_0 32 10; done
} > $R/sweep.txt 2>&1
grep -E "^==|sum|accuracy" $R/sweep.txt
st whole
for w in 0 4; do echo "== WDIR $w"; LFM2_GEMM_WDIR=$w timeout 90 $BIN --model lfm2-1.2b --full --cols 1,4,16,32 --plans batch,wide --pos 64 --logits --reps 3 2>&1 | sed -n '/plan crossover/,$p'; done > $R/whole.txt 2>&1
cat $R/whole.txt
st targets
ROOF=498.8 OUT=$R timeout 150 bash $D/h200.sh targets > $R/targets_out.txt 2>&1
cat $R/targets.txt
st done
cat $R/times.txt
