#!/usr/bin/env bash
# bench/33 run 1 (H200): (a) the mixed-type k_matmul_multi case's Q4_0 product (bench/31's open
# 1.7e-4): test_kernels gemm prints its kind, grid and error against the exact, f16-nearest and
# f16-toward-zero weights; (b) Q4_0 gemm tile sweep against BF16's rules (gemm_bench, the 76 layer
# products, LFM2_GEMM_TILE / LFM2_GEMM_TILE_SWIGLU / LFM2_GEMM_PF), F16 and BF16 for reference;
# (c) per-kind tables of the BF16 and Q4_0 prefill 512.
# Binaries of main (this commit) in .dev-33 (strip, tar -cJ d.tar.xz); carry [".gl", ".dev-33"].
D=.dev-33; (cd $D && tar -xJf d.tar.xz); T="timeout 150"
{ $T $D/test_kernels tests/fixtures gemm 2>&1 | grep -E "FAIL|passed|matmul_multi|toward|device" | head -30
} > $OUT/33_run1_tests.txt 2>&1
cat $OUT/33_run1_tests.txt
s() { echo "== $*"; env "$@" 2>&1 | grep -E "^  (matmul|gemm|sum)"; }
{ for t in f16 bf16 q4_0; do s $T $D/gemm_bench $t 512 10; done
  for tile in 128x64x64:2x2 128x64x32:2x2 128x64x32:4x1 128x128x32:2x4 64x64x64:2x2 256x64x32:4x2; do
    s LFM2_GEMM_TILE=$tile $T $D/gemm_bench q4_0 512 10
  done
  for tile in 64x128x32:2x4 64x64x64:2x2 64x128x32:2x2 64x128x64:2x4; do
    s LFM2_GEMM_TILE_SWIGLU=$tile $T $D/gemm_bench q4_0 512 10
  done
  for c in 16 128; do
    s $T $D/gemm_bench bf16 $c 10; s $T $D/gemm_bench q4_0 $c 10; s LFM2_GEMM_PF=1 $T $D/gemm_bench q4_0 $c 10
  done
  s LFM2_GEMM_TILE=128x64x64:2x2 $T $D/gemm_bench q4_0 128 10
  s LFM2_GEMM_TILE_SWIGLU=64x128x32:2x4 $T $D/gemm_bench q4_0 128 10
  LFM2_PIPELINE_STATS=1 $T $D/gemm_bench q4_0 512 2 2>&1 | grep -E "gemm" | sort -u | head -12
} > $OUT/33_run1_gemm.txt 2>&1
cat $OUT/33_run1_gemm.txt
M="--full --logits --pos 64 --reps 5"
{ for dt in bf16 q4_0; do
    echo "== $dt prefill 512 kinds"; $T $D/lfm2-profile-stage --model lfm2-1.2b --dtype $dt --wide --cols 512 --slots 1 $M 2>&1 | grep -E "^  [a-z_.0-9]+ +n=|busy|wall" | head -20
  done
} > $OUT/33_run1_kinds.txt 2>&1
cat $OUT/33_run1_kinds.txt
