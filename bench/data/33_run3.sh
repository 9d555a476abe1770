#!/usr/bin/env bash
# bench/33 run 3: gemm_wdeq.comp with coalesced stores (a lane a 16-byte unit of 8 elements; run 2's
# lane wrote a block's 64 bytes in four strided stores), and Q4_0 single products past 64 columns
# on 2 x 2 subgroups with k steps of 32 (old tile: LFM2_GEMM_TILE=128x64x64:4x1). Correctness, then
# gemm_bench and whole LFM2-1.2B Q4_0 steps with the widening from 1 column against never, alternating.
D=.dev-33; (cd $D && tar -xJf d.tar.xz); T="timeout 150"; B=$D/lfm2-profile-stage
{ $T $D/test_kernels tests/fixtures gemm 2>&1 | grep -E "FAIL|passed|device" | head -12
  LFM2_GEMM_WDEQ_COLS=1 LFM2_GEMM_SPLITK=3 $T $D/test_kernels tests/fixtures gemm 2>&1 | grep -E "FAIL|passed" | head -12
  for F in tests/fixtures/lfm2-tiny tests/fixtures/qwen35-tiny; do
    for g in golden-q4_0.safetensors golden-q4_0-long.safetensors; do
      echo "== $F $g: $($T $B --model $F/model-q4_0.gguf --full --wide --golden $F/$g 2>&1 | grep -E '^golden:|error' | tr '\n' ' ')"
    done
  done
} > $OUT/33_run3_tests.txt 2>&1
cat $OUT/33_run3_tests.txt
s() { echo "== $*"; env "$@" 2>&1 | grep -E "^  (matmul|gemm|sum)"; }
{ for c in 512 256 128 64; do
    s LFM2_GEMM_WDEQ_COLS=1 $T $D/gemm_bench q4_0 $c 10; s LFM2_GEMM_WDEQ_COLS=0 $T $D/gemm_bench q4_0 $c 10
  done
  for c in 96 128; do
    s LFM2_GEMM_WDEQ_COLS=0 LFM2_GEMM_TILE=128x64x64:4x1 $T $D/gemm_bench q4_0 $c 10
  done
} > $OUT/33_run3_gemm.txt 2>&1
cat $OUT/33_run3_gemm.txt
w() { echo "== $*: $(env "$@" 2>&1 | grep -E 'wall 1× \+head|error' | head -2 | sed 's/.*wall 1× +head *//' | tr '\n' ' ')"; }
M="--full --logits --gap-probe --reps 5 --pos 64"
{ $T $B --model lfm2-1.2b --dtype q4_0 $M --cols 1 >/dev/null 2>&1
  for r in "--cols 512 --slots 1" "--cols 256" "--cols 128" "--cols 96"; do
    for i in 1 2; do w LFM2_GEMM_WDEQ_COLS=0 $T $B --model lfm2-1.2b --dtype q4_0 --wide $r $M; w LFM2_GEMM_WDEQ_COLS=1 $T $B --model lfm2-1.2b --dtype q4_0 --wide $r $M; done
  done
  echo "== q4_0 prefill 512 kinds (widened)"; LFM2_GEMM_WDEQ_COLS=1 $T $B --model lfm2-1.2b --dtype q4_0 --wide --cols 512 --slots 1 --full --logits --pos 64 --reps 5 2>&1 | grep -E "^  [a-z_.0-9]+ +n=|busy" | head -8
} > $OUT/33_run3_walls.txt 2>&1
cat $OUT/33_run3_walls.txt
