#!/usr/bin/env bash
# bench/21 run 3 (H200): the quantized wide tiles of run 2 as defaults (128 x 64 split 4 x 1 singles
# past 64 columns, 64 x 128 SwiGLU from 512): correctness, gemm_bench, targets
D=.dev-21a; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
gb() { echo "== $*"; env "$@" 2>&1 | grep -E "gemm|sum|accuracy"; }
st tests
{ echo "== test_kernels gemm"; timeout 100 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1; } > $R/tests.txt 2>&1
OUT=$R timeout 100 bash $D/h200.sh golden_wide >/dev/null 2>&1
Q=tests/fixtures/qwen35-tiny
{ for m in "$Q/model-q4_0.gguf golden-q4_0" "$Q golden-long"; do set -- $m
  echo "\$ $1 --wide $2"; $BIN --model $1 --full --wide --golden $Q/$2.safetensors; echo "(exit $?)"; done; } > $R/golden_qwen.txt 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c >> $R/tests.txt
cat $R/tests.txt
st gemm
{ for c in 512 256 128; do gb $D/gemm_bench q4_0 $c 5; done; gb $D/gemm_bench q8_0 512 5; } > $R/gemm.txt 2>&1
grep -E "^==|gemm\.|swiglu|sum" $R/gemm.txt
st targets
ROOF=498.8 OUT=$R timeout 150 bash $D/h200.sh targets > $R/targets_out.txt 2>&1
cat $R/targets.txt
st done
cat $R/times.txt
