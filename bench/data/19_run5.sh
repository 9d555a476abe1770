#!/usr/bin/env bash
# bench/19 run 5 (H200, one call for what runs 4 and 5 were to do): fragment scheduling in the gemm's
# products (LFM2_GEMM_FRAG, .dev-19e = main with the hook); 128 x 64 split tiles for single
# products past 64 columns (.dev-19d) against past 128 (.dev-19c); correctness; targets; crossover
A=.dev-19c; B=.dev-19d; D=.dev-19e; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
gb() { echo "== $*"; env "$@" 2>&1 | grep -E "gemm|sum"; }
st tests
{ echo "== default"; timeout 120 $D/test_kernels tests/fixtures 2>&1 | tail -1
  for f in 1 2; do echo "== FRAG $f"; LFM2_GEMM_FRAG=$f timeout 100 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1; done
} > $R/tests.txt 2>&1
st goldens
OUT=$R timeout 150 bash $D/h200.sh golden golden_wide >/dev/null 2>&1
Q=tests/fixtures/qwen35-tiny; F=tests/fixtures/lfm2-tiny
{ for m in "$Q golden" "$Q/model-q4_0.gguf golden-q4_0" "$Q golden-long"; do set -- $m
  echo "\$ $1 --wide $2"; $BIN --model $1 --full --wide --golden $Q/$2.safetensors; echo "(exit $?)"; done
  for f in 1 2; do for m in "$F $F/golden-long" "$F/model-q4_0.gguf $F/golden-q4_0-long" "$Q $Q/golden-long"; do set -- $m
  echo "\$ FRAG $f $1 --wide $2"; LFM2_GEMM_FRAG=$f $BIN --model $1 --full --wide --golden $2.safetensors; echo "(exit $?)"; done; done
  echo "\$ big64 $F long"; $B/lfm2-profile-stage --model $F --full --wide --golden $F/golden-long.safetensors; echo "(exit $?)"
} > $R/golden_more.txt 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c >> $R/tests.txt
cat $R/tests.txt
st frag
{ for c in 512 256 64 16; do for f in 0 1 2; do gb LFM2_GEMM_FRAG=$f $D/gemm_bench bf16 $c 10; done; done
  for f in 0 1 2; do gb LFM2_GEMM_FRAG=$f LFM2_GEMM_PROBE=2 $D/gemm_bench bf16 512 10; done
  for f in 0 1 2; do gb LFM2_GEMM_FRAG=$f $D/gemm_bench q4_0 512 5; done
} > $R/frag.txt 2>&1
grep -E "^==|sum" $R/frag.txt
st big
{ for c in 96 128; do gb $A/gemm_bench bf16 $c 10; gb $B/gemm_bench bf16 $c 10; done
  gb LFM2_GEMM_TILE=128x64x64:2x2 $A/gemm_bench bf16 64 10
  for b in $A $B; do echo "== $b bf16 128 whole"; $b/lfm2-profile-stage --model lfm2-1.2b --full --cols 128 --pos 64 --wide --logits --gap-probe --reps 3 2>&1 | grep -E "GPU busy|wall 1"; done
} > $R/big.txt 2>&1
grep -E "^==|sum|wall 1" $R/big.txt
st targets
OUT=$R timeout 200 bash $D/h200.sh targets > $R/targets_out.txt 2>&1
for f in 1 2; do mkdir -p $R/f$f; LFM2_GEMM_FRAG=$f OUT=$R/f$f ROOF=498.8 timeout 200 bash $D/h200.sh targets > /dev/null 2>&1; done
cat $R/targets.txt; grep -h "wide" $R/f1/targets.txt $R/f2/targets.txt
st crossover
{ echo "== crossover bf16"; timeout 150 $B/lfm2-profile-stage --model lfm2-1.2b --full --cols 1,4,16,64,128,256,512 --plans batch,wide --pos 64 --logits --reps 3 2>&1 | sed -n '/plan crossover/,$p'
  echo "== crossover q4_0"; timeout 120 $B/lfm2-profile-stage --model lfm2-1.2b --full --dtype q4_0 --cols 1,4,16,64,128 --plans batch,wide --pos 64 --logits --reps 3 2>&1 | sed -n '/plan crossover/,$p'
  for b in $D; do echo "== $b qwen3.5-2b prefill 512"; timeout 60 $b/lfm2-profile-stage --model qwen3.5-2b --full --cols 512 --slots 1 --pos 0 --wide --logits --gap-probe --reps 3 2>&1 | grep -E "GPU busy|wall 1"; done
} > $R/crossover.txt 2>&1
cat $R/crossover.txt
st done
cd $OUT && tar czf r5.tgz r
