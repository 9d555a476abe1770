#!/usr/bin/env bash
# bench/19 run 4 (H200): 128 x 64 split tiles for single products past 64 columns (.dev-19d) against
# past 128 (.dev-19c); the crossover table on LFM2-1.2B
A=.dev-19c; D=.dev-19d; R=$OUT/r; mkdir -p $R
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
gb() { echo "== $*"; env "$@" 2>&1 | grep -E "gemm|sum"; }
st gemm_bench
{ for c in 96 128; do gb $A/gemm_bench bf16 $c 10; gb $D/gemm_bench bf16 $c 10; done
  gb $A/gemm_bench bf16 64 10; gb LFM2_GEMM_TILE=128x64x64:2x2 $A/gemm_bench bf16 64 10
  gb $A/gemm_bench q4_0 128 10
} > $R/gemm_bench.txt 2>&1
cat $R/gemm_bench.txt | grep -v accuracy
st whole
{ for b in $A $D; do echo "== $b bf16 128"; $b/lfm2-profile-stage --model lfm2-1.2b --full --cols 128 --pos 64 --wide --logits --gap-probe --reps 3 2>&1 | grep -E "GPU busy|wall 1"; done
  echo "== crossover bf16"; $D/lfm2-profile-stage --model lfm2-1.2b --full --cols 1,4,16,64,128,256,512 --plans batch,wide --pos 64 --logits --reps 3 2>&1 | sed -n '/crossover/,$p'
  echo "== crossover q4_0"; $D/lfm2-profile-stage --model lfm2-1.2b --full --dtype q4_0 --cols 1,4,16,64,128,256 --plans batch,wide --pos 64 --logits --reps 3 2>&1 | sed -n '/crossover/,$p'
} > $R/whole.txt 2>&1
cat $R/whole.txt
st done
