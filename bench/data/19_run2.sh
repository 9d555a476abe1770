#!/usr/bin/env bash
# bench/19 run 2 (H200): the narrow gemm defaults and XRAW against run 1's binary (.dev-19, before),
# correctness with cooperative matrices, goldens, targets
A=.dev-19; D=.dev-19b; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
st tests
{ echo "== default"; timeout 120 $D/test_kernels tests/fixtures 2>&1 | tail -1
  echo "== xraw everywhere"; LFM2_GEMM_XRAW_COLS=65535 timeout 100 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1
} > $R/tests.txt 2>&1
cat $R/tests.txt
st goldens
OUT=$R timeout 150 bash $D/h200.sh golden golden_wide >/dev/null 2>&1
Q=tests/fixtures/qwen35-tiny; F=tests/fixtures/lfm2-tiny
{ for m in "$Q golden" "$Q/model-q4_0.gguf golden-q4_0" "$Q golden-long"; do set -- $m
  echo "\$ $1 --wide $2"; $BIN --model $1 --full --wide --golden $Q/$2.safetensors; echo "(exit $?)"; done
  for m in "$F $F/golden-long" "$F/model-q4_0.gguf $F/golden-q4_0-long" "$Q $Q/golden-long" "$F $F/golden"; do set -- $m
  echo "\$ XRAW all $1 --wide $2"; LFM2_GEMM_XRAW_COLS=65535 $BIN --model $1 --full --wide --golden $2.safetensors; echo "(exit $?)"; done
} > $R/golden_more.txt 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c
st gemm_bench
gb() { echo "== $*"; env "$@" 2>&1 | grep -E "gemm|sum"; }
{ for c in 16 32 64; do gb $A/gemm_bench bf16 $c 10; gb $D/gemm_bench bf16 $c 10; done
  gb $A/gemm_bench q4_0 16 10; gb $D/gemm_bench q4_0 16 10
  gb $A/gemm_bench q4_0 64 10; gb $D/gemm_bench q4_0 64 10; gb LFM2_GEMM_PF=2 $D/gemm_bench q4_0 32 10; gb $D/gemm_bench q4_0 32 10
  for c in 128 512; do gb $D/gemm_bench bf16 $c 10; gb LFM2_GEMM_XRAW_COLS=65535 $D/gemm_bench bf16 $c 10; done
} > $R/gemm_bench.txt 2>&1
st whole
{ for a in "bf16 16" "bf16 32" "bf16 64" "q4_0 16" "q4_0 64"; do set -- $a; for b in $A $D; do
    echo "== $b $1 $2"; $b/lfm2-profile-stage --model lfm2-1.2b --full --dtype $1 --cols $2 --pos 64 --wide --logits --gap-probe --reps 3 2>&1 | grep -E "GPU busy|wall 1|gemm_xprep  |gemm"; done; done
  for x in 0 65535; do echo "== $D xraw $x prefill 512"; LFM2_GEMM_XRAW_COLS=$x $BIN --model lfm2-1.2b --full --cols 512 --slots 1 --pos 0 --wide --logits --gap-probe --reps 3 2>&1 | grep -E "GPU busy|wall 1"; done
} > $R/whole.txt 2>&1
st targets
OUT=$R timeout 200 bash $D/h200.sh targets > $R/targets_out.txt 2>&1
cat $R/targets.txt 2>/dev/null || cat $R/targets_out.txt
st done
cd $OUT && tar czf r2.tgz r
