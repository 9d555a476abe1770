#!/usr/bin/env bash
# bench/34 run 1 (H200 wanted): (a) gemm.comp's loader subgroups (WS, LFM2_GEMM_WS): correctness,
# then gemm_bench against the default; (b) the state at main c11a90c on the issue's card: the wide
# goldens on the coopmat kernels, the targets table; (c) the Q4_0 widening's crossover.
D=.dev-34; (cd $D && tar -xJf d.tar.xz); T="timeout 120"; B=$D/lfm2-profile-stage
export BIN=$B GEMM_BENCH=$D/gemm_bench OUT
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
{ for ws in 4 2; do echo "== WS=$ws"; LFM2_GEMM_WS=$ws timeout 90 $D/test_kernels tests/fixtures gemm 2>&1 | grep -E "FAIL|passed|device|rror" | head -8; done
  echo "== WS=4 goldens: $(for g in golden golden-long; do LFM2_GEMM_WS=4 timeout 30 $B --model tests/fixtures/lfm2-tiny --full --wide --golden tests/fixtures/lfm2-tiny/$g.safetensors 2>&1 | grep -E '^golden:|rror'; done | tr '\n' ' ')"
} > $OUT/34_run1_ws_tests.txt 2>&1; cat $OUT/34_run1_ws_tests.txt
s() { echo "== $*"; env "$@" 2>&1 | grep -E "^  (gemm|sum)|rror"; }
{ for i in 1 2; do
  s $T $D/gemm_bench bf16 512 10
  s LFM2_GEMM_WS=4 $T $D/gemm_bench bf16 512 10
  s LFM2_GEMM_WS=4 LFM2_GEMM_TILE_SWIGLU=64x64x32:2x2 $T $D/gemm_bench bf16 512 10
  done
  s LFM2_GEMM_NBUF=2 LFM2_GEMM_TILE=128x64x32:2x2 $T $D/gemm_bench bf16 512 10
  s LFM2_GEMM_TILE=128x64x32:2x2 $T $D/gemm_bench bf16 512 10
  s LFM2_GEMM_WS=2 $T $D/gemm_bench bf16 512 10
  s LFM2_GEMM_WS=8 $T $D/gemm_bench bf16 512 10
  s LFM2_GEMM_WS=4 LFM2_GEMM_FRAG=0 $T $D/gemm_bench bf16 512 10
  s $T $D/gemm_bench bf16 64 10
  s LFM2_GEMM_WS=4 $T $D/gemm_bench bf16 64 10
} > $OUT/34_run1_gemm.txt 2>&1; cat $OUT/34_run1_gemm.txt
{ $T $D/test_kernels tests/fixtures gemm 2>&1 | grep -E "FAIL|passed|device" | head -8
  bash bench/h200.sh golden_wide 2>&1 | grep -E '^\$|^golden:|rror' ; } > $OUT/34_run1_tests.txt 2>&1
echo "goldens passed: $(grep -cE '^golden: .*pass' $OUT/34_run1_tests.txt)"; grep -E "FAIL|passed|fail" $OUT/34_run1_tests.txt | head
bash bench/h200.sh targets > $OUT/34_run1_targets.txt 2>&1; cat $OUT/34_run1_targets.txt
w() { echo "== $*: $(env "$@" 2>&1 | grep -E 'wall 1× \+head|rror' | head -2 | sed 's/.*wall 1× +head *//; s/(median.*//' | tr '\n' ' ')"; }
M="--full --logits --gap-probe --reps 5 --pos 64"
{ for c in 128 256; do for env in LFM2_GEMM_WDEQ_COLS=0 LFM2_GEMM_WDEQ_COLS=128; do
      w $env $T $B --model lfm2-1.2b --dtype q4_0 --wide --cols $c $M; done; done
} > $OUT/34_run1_walls.txt 2>&1; cat $OUT/34_run1_walls.txt
