#!/usr/bin/env bash
# bench/19 run 3 (H200): XRAW by tile width, PF=2 for Q singles at 32 columns; correctness; targets
A=.dev-19; D=.dev-19c; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
st tests
{ echo "== default"; timeout 120 $D/test_kernels tests/fixtures 2>&1 | tail -1; } > $R/tests.txt 2>&1
st goldens
OUT=$R timeout 150 bash $D/h200.sh golden golden_wide >/dev/null 2>&1
Q=tests/fixtures/qwen35-tiny
{ for m in "$Q golden" "$Q/model-q4_0.gguf golden-q4_0" "$Q golden-long"; do set -- $m
  echo "\$ $1 --wide $2"; $BIN --model $1 --full --wide --golden $Q/$2.safetensors; echo "(exit $?)"; done; } > $R/golden_qwen.txt 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c >> $R/tests.txt
cat $R/tests.txt
st gemm_bench
gb() { echo "== $*"; env "$@" 2>&1 | grep -E "gemm|sum"; }
{ for c in 32 128 256 512; do gb $D/gemm_bench bf16 $c 10; gb LFM2_GEMM_XRAW_COLS=0 $D/gemm_bench bf16 $c 10; done
  gb $D/gemm_bench q4_0 32 10; gb $A/gemm_bench q4_0 32 10; gb $D/gemm_bench q4_0 512 5; gb LFM2_GEMM_XRAW_COLS=0 $D/gemm_bench q4_0 512 5
} > $R/gemm_bench.txt 2>&1
st whole
{ for a in "bf16 32" "q4_0 32" "bf16 256"; do set -- $a; for b in $A $D; do
    echo "== $b $1 $2"; $b/lfm2-profile-stage --model lfm2-1.2b --full --dtype $1 --cols $2 --pos 64 --wide --logits --gap-probe --reps 3 2>&1 | grep -E "GPU busy|wall 1|gemm_xprep  |gemm"; done; done
} > $R/whole.txt 2>&1
st targets
OUT=$R timeout 200 bash $D/h200.sh targets > $R/targets_out.txt 2>&1
cat $R/targets.txt 2>/dev/null || cat $R/targets_out.txt
st done
cd $OUT && tar czf r3.tgz r
