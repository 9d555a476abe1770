#!/usr/bin/env bash
# bench/19 run 6 (H200): the final defaults (main at "gemm past 64 columns ..."): correctness, targets
D=.dev-19f; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
st tests
{ echo "== test_kernels"; timeout 120 $D/test_kernels tests/fixtures 2>&1 | tail -1; } > $R/tests.txt 2>&1
st goldens
OUT=$R timeout 100 bash $D/h200.sh golden_wide >/dev/null 2>&1
Q=tests/fixtures/qwen35-tiny
{ for m in "$Q golden" "$Q/model-q4_0.gguf golden-q4_0" "$Q golden-long"; do set -- $m
  echo "\$ $1 --wide $2"; $BIN --model $1 --full --wide --golden $Q/$2.safetensors; echo "(exit $?)"; done; } > $R/golden_qwen.txt 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c >> $R/tests.txt
cat $R/tests.txt
st targets
ROOF=498.8 OUT=$R timeout 150 bash $D/h200.sh targets > $R/targets_out.txt 2>&1
cat $R/targets.txt
st crossover
timeout 40 $BIN --model lfm2-1.2b --full --cols 96,128 --plans wide --pos 64 --logits --reps 3 2>&1 | sed -n '/plan crossover/,$p' > $R/crossover.txt
cat $R/crossover.txt
st done
cat $R/times.txt
