#!/usr/bin/env bash
# final H200 call of 2026-12-03: merged main (qmv, qwide, gemm3): correctness, then bench/18 numbers
D=.dev-final; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
st tests
{ echo "== default"; $D/test_kernels tests/fixtures 2>&1 | tail -1
  echo "== narrow 32 forced"; LFM2_GEMM_TILE=128x32x64:4x1 LFM2_GEMM_TILE_SWIGLU=64x32x64:4x1 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1
  echo "== qmv all"; LFM2_QMV_COLS=8 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1
} > $R/tests.txt 2>&1
cat $R/tests.txt
st goldens
OUT=$R timeout 150 bash $D/h200.sh golden golden_wide >/dev/null 2>&1
Q=tests/fixtures/qwen35-tiny
{ for m in "$Q golden" "$Q/model-q4_0.gguf golden-q4_0" "$Q golden-long"; do set -- $m
  echo "\$ $1 --wide $2"; $BIN --model $1 --full --wide --golden $Q/$2.safetensors; echo "(exit $?)"; done; } > $R/golden_qwen_wide.txt 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c
st gemm_bench
gb() { echo "== $*"; env "$@" 2>&1 | grep -E "gemm|sum|accuracy"; }
G=$D/gemm_bench
{ for c in 16 32 64; do gb $G bf16 $c 10; gb LFM2_GEMM_NARROW_OFF=1 $G bf16 $c 10; done
  gb $G bf16 512 10
  for pr in 1 2 3; do gb LFM2_GEMM_PROBE=$pr $G bf16 512 10; gb LFM2_GEMM_PROBE=$pr $G bf16 64 10; done
  gb $G q4_0 16 10; gb LFM2_GEMM_NARROW_OFF=1 $G q4_0 16 10
} > $R/gemm_bench.txt 2>&1
st targets
OUT=$R timeout 200 bash $D/h200.sh targets > $R/targets_out.txt 2>&1
cat $R/targets.txt 2>/dev/null || cat $R/targets_out.txt
st extra
{ for a in "--cols 16" "--cols 32"; do for env in X=1 LFM2_GEMM_NARROW_OFF=1; do
    echo "== $env $a"; env $env $BIN --model lfm2-1.2b --full $a --pos 64 --wide --logits --gap-probe --reps 3 2>&1 | grep -E "GPU busy|wall 1"; done; done
  for env in X=1 LFM2_QMV_OFF=1; do echo "== q4_0 1 $env"; env $env $BIN --model lfm2-1.2b --full --dtype q4_0 --cols 1 --pos 64 --logits --gap-probe --reps 3 2>&1 | grep -E "GPU busy|wall 1"; done
} > $R/extra.txt 2>&1
cat $R/extra.txt
st done
cd $OUT && tar czf final.tgz r
