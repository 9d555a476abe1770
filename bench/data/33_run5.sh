#!/usr/bin/env bash
# bench/33 run 5 (H200 wanted: the issue's targets): the landed widening (from 256 columns) on the
# target card; gemm_wdeq.comp with 1, 2, 4 blocks a lane (LFM2_GEMM_WDEQ_BPT); correctness first.
D=.dev-33; (cd $D && tar -xJf d.tar.xz); T="timeout 150"; B=$D/lfm2-profile-stage
{ $T $D/test_kernels tests/fixtures gemm 2>&1 | grep -E "FAIL|passed|device" | head -8
  LFM2_GEMM_WDEQ_COLS=1 LFM2_GEMM_WDEQ_BPT=3 LFM2_GEMM_SPLITK=3 $T $D/test_kernels tests/fixtures gemm 2>&1 | grep -E "FAIL|passed" | head -8
  for F in tests/fixtures/lfm2-tiny tests/fixtures/qwen35-tiny; do
    for g in golden-q4_0.safetensors golden-q4_0-long.safetensors; do
      echo "== $F $g: $(LFM2_GEMM_WDEQ_COLS=1 $T $B --model $F/model-q4_0.gguf --full --wide --golden $F/$g 2>&1 | grep -E '^golden:|error' | tr '\n' ' ')"
    done
  done
} > $OUT/33_run5_tests.txt 2>&1
cat $OUT/33_run5_tests.txt
s() { echo "== $*"; env "$@" 2>&1 | grep -E "^  (gemm_wdeq|sum)"; }
{ for b in 1 2 4; do s LFM2_GEMM_WDEQ_COLS=1 LFM2_GEMM_WDEQ_BPT=$b $T $D/gemm_bench q4_0 512 10; done
} > $OUT/33_run5_gemm.txt 2>&1
cat $OUT/33_run5_gemm.txt
w() { echo "== $*: $(env "$@" 2>&1 | grep -E 'wall 1× \+head|error' | head -2 | sed 's/.*wall 1× +head *//; s/(median.*//' | tr '\n' ' ')"; }
M="--full --logits --gap-probe --reps 5 --pos 64"
{ $T $B --model lfm2-1.2b --dtype q4_0 $M --cols 1 >/dev/null 2>&1
  for i in 1 2; do
    for env in LFM2_GEMM_WDEQ_COLS=0 LFM2_GEMM_WDEQ_BPT=1 LFM2_GEMM_WDEQ_BPT=2 LFM2_GEMM_WDEQ_BPT=4; do
      w $env $T $B --model lfm2-1.2b --dtype q4_0 --wide --cols 512 --slots 1 $M
    done
  done
  for i in 1 2; do for env in LFM2_GEMM_WDEQ_COLS=0 LFM2_GEMM_WDEQ_BPT=1; do w $env $T $B --model lfm2-1.2b --dtype q4_0 --wide --cols 256 $M; done; done
  w $T $B --model lfm2-1.2b --dtype bf16 --wide --cols 512 --slots 1 $M
  w $T $B --model lfm2-1.2b --dtype f16 --wide --cols 512 --slots 1 $M
  w $T $B --model lfm2-1.2b --dtype q4_0 --wide --cols 128 $M
} > $OUT/33_run5_walls.txt 2>&1
cat $OUT/33_run5_walls.txt
