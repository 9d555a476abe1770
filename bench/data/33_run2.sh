#!/usr/bin/env bash
# bench/33 run 2: Q4_0 products through an f16 copy of their weights (gemm_wdeq.comp) in the wide
# plan. (a) correctness: test_kernels gemm (default: widening from 128 columns; and every width,
# split 3 ways), the Q4_0 goldens in the wide plan both ways; (b) gemm_bench: the 76 layer products
# at 16-512 columns, widened (LFM2_GEMM_WDEQ_COLS=1) against the Q4_0 tile (=0), F16 beside;
# (c) whole steps of LFM2-1.2B Q4_0, alternating.
# Binaries of this commit in .dev-33 (strip, tar -cJ d.tar.xz); carry [".gl", ".dev-33"].
D=.dev-33; (cd $D && tar -xJf d.tar.xz); T="timeout 150"; B=$D/lfm2-profile-stage
{ $T $D/test_kernels tests/fixtures gemm 2>&1 | grep -E "FAIL|passed|device" | head -12
  LFM2_GEMM_WDEQ_COLS=1 LFM2_GEMM_SPLITK=3 $T $D/test_kernels tests/fixtures gemm 2>&1 | grep -E "FAIL|passed" | head -12
  for F in tests/fixtures/lfm2-tiny tests/fixtures/qwen35-tiny; do
    for g in golden-q4_0.safetensors golden-q4_0-long.safetensors; do
      for env in LFM2_GEMM_WDEQ_COLS=1 LFM2_GEMM_WDEQ_COLS=0; do
        echo "== $F $g $env: $(env $env $T $B --model $F/model-q4_0.gguf --full --wide --golden $F/$g 2>&1 | grep -E '^golden:|error' | tr '\n' ' ')"
        env $env $T $B --model $F/model-q4_0.gguf --full --wide --golden $F/$g 2>&1 | grep -E "^golden" | awk '{print $2, $4, $6, $7}' | sort -k4 -g | tail -1
      done
    done
  done
} > $OUT/33_run2_tests.txt 2>&1
cat $OUT/33_run2_tests.txt
s() { echo "== $*"; env "$@" 2>&1 | grep -E "^  (matmul|gemm|sum)"; }
{ for c in 512 256 128 96 64 16; do
    s LFM2_GEMM_WDEQ_COLS=1 $T $D/gemm_bench q4_0 $c 10; s LFM2_GEMM_WDEQ_COLS=0 $T $D/gemm_bench q4_0 $c 10
  done
  s $T $D/gemm_bench f16 512 10; s $T $D/gemm_bench f16 128 10
  s LFM2_GEMM_WDEQ_COLS=0 LFM2_GEMM_TILE=128x64x32:2x2 $T $D/gemm_bench q4_0 96 10
} > $OUT/33_run2_gemm.txt 2>&1
cat $OUT/33_run2_gemm.txt
w() { echo "== $*: $(env "$@" 2>&1 | grep -E 'wall 1× \+head|error' | head -2 | sed 's/.*wall 1× +head *//' | tr '\n' ' ')"; }
M="--full --logits --gap-probe --reps 5 --pos 64"
{ $T $B --model lfm2-1.2b --dtype q4_0 $M --cols 1 >/dev/null 2>&1
  for r in "--cols 512 --slots 1" "--cols 256" "--cols 128" "--cols 64"; do
    for i in 1 2; do w LFM2_GEMM_WDEQ_COLS=0 $T $B --model lfm2-1.2b --dtype q4_0 --wide $r $M; w LFM2_GEMM_WDEQ_COLS=1 $T $B --model lfm2-1.2b --dtype q4_0 --wide $r $M; done
  done
  for r in "--cols 512 --slots 1" "--cols 16"; do w $T $B --model lfm2-1.2b --dtype bf16 --wide $r $M; done
  echo "== q4_0 prefill 512 kinds (default)"; $T $B --model lfm2-1.2b --dtype q4_0 --wide --cols 512 --slots 1 --full --logits --pos 64 --reps 5 2>&1 | grep -E "^  [a-z_.0-9]+ +n=|busy" | head -12
} > $OUT/33_run2_walls.txt 2>&1
cat $OUT/33_run2_walls.txt
