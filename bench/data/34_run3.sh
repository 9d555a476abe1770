#!/usr/bin/env bash
# bench/34 run 3: do the split-k sums' float atomics bound the narrow products? gemm_bench bf16 with
# the split sums stored instead of added (LFM2_GEMM_PROBE=4: wrong results, timing only), 16-512 columns.
D=.dev-34; (cd $D && tar -xJf d.tar.xz); T="timeout 120"
nvidia-smi --query-gpu=name --format=csv,noheader
s() { echo "== $*"; env "$@" 2>&1 | grep -E "^  (gemm|sum)|rror"; }
{ for c in 16 64 128 256 512; do
  s $T $D/gemm_bench bf16 $c 10
  s LFM2_GEMM_PROBE=4 $T $D/gemm_bench bf16 $c 10
  done
  for k in 16 32; do s LFM2_GEMM_PROBE=4 LFM2_GEMM_SPLITK=$k $T $D/gemm_bench bf16 64 10; done
  s LFM2_GEMM_PROBE=4 LFM2_GEMM_SPLITK=4 $T $D/gemm_bench bf16 512 10
} > $OUT/34_run3_gemm.txt 2>&1; cat $OUT/34_run3_gemm.txt
