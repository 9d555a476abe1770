#!/usr/bin/env bash
# bench/34 run 2: what the narrow wide steps (16, 64 columns) spend: the profile by kind and the
# top dispatches, and gemm_bench's layer products under forced split-k counts, tiles and the CAS
# path (are the split sums' atomics the cost?).
D=.dev-34; (cd $D && tar -xJf d.tar.xz); T="timeout 120"; B=$D/lfm2-profile-stage
nvidia-smi --query-gpu=name --format=csv,noheader
for c in 16 64; do echo "== bf16 wide $c"; $T $B --model lfm2-1.2b --full --cols $c --wide --logits --reps 5 2>&1 | sed -n '/GPU busy/p;/-- by kernel/,/-- top single/p' | head -16
  $T $B --model lfm2-1.2b --full --cols $c --wide --logits --reps 5 --json $OUT/p$c.json >/dev/null 2>&1; done > $OUT/34_run2_kinds.txt; cat $OUT/34_run2_kinds.txt
s() { echo "== $*"; env "$@" 2>&1 | grep -E "^  (gemm|sum)|rror"; }
{ for c in 64 16; do
  s $T $D/gemm_bench bf16 $c 10
  for k in 1 2 4 8 32; do s LFM2_GEMM_SPLITK=$k $T $D/gemm_bench bf16 $c 10; done
  s LFM2_GEMM_NO_FADD=1 $T $D/gemm_bench bf16 $c 10
  done
  s LFM2_GEMM_TILE=64x64x32:2x2 $T $D/gemm_bench bf16 64 10
  s LFM2_GEMM_TILE=64x64x64:2x2 $T $D/gemm_bench bf16 64 10
  s LFM2_GEMM_TILE=64x32x64:4x1 $T $D/gemm_bench bf16 64 10
  s LFM2_GEMM_PF=2 $T $D/gemm_bench bf16 64 10
  s LFM2_GEMM_PF=2 $T $D/gemm_bench bf16 16 10
} > $OUT/34_run2_gemm.txt 2>&1; cat $OUT/34_run2_gemm.txt
