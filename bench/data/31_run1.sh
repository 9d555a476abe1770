#!/usr/bin/env bash
# bench/31 run 1 (H200): (a) the wide plan's Q8_0/Q4_0 weights rounded to f16 once in the gemm tile
# (one weight part, two tensor products instead of three): accuracy (test_kernels gemm, the Q
# goldens' max_rel, old against new) and speed (gemm_bench, whole steps, alternating);
# (b) what bounds xmv.comp at one column: its timing probes (LFM2_XMV_PROBE 1 loads only, 2 no
# scale loads, 3 no loads, 4 no x staging) on the 76 layer products of LFM2-1.2B, Q4_0 and BF16 (xmv on all);
# (c) the removal of chained dispatches (1630c74) left the barrier path's speed alone: walls of
# main before it (cebea82, "base-") against main after it, alternating.
# Ran 2026-12-05 10:23 UTC on an H100 (nvidia-h100-x1; no H200 came), with part (d) = bench/32 run 1
# (data/32_run1.sh). To rerun: build cebea82 as
# base-*, main as old-* (it has the probes), and main with data/31_qround.diff applied as the new
# binaries; copy build/{lfm2-profile-stage,test_kernels,gemm_bench} of each into .dev-31/ under
# those prefixes (the new ones without one), this script as run.sh; carry [".gl", ".dev-31"];
# command as bench/29's (dpkg -x the .gl debs, ldconfig, VK_DRIVER_FILES, bash .dev-31/run.sh).
# About 5 minutes.
D=.dev-31; N=$D/lfm2-profile-stage; O=$D/old-lfm2-profile-stage
T="timeout 150"
F=tests/fixtures/lfm2-tiny
{ $T $D/test_kernels tests/fixtures gemm 2>&1 | grep -E "FAIL|passed|gemm" | tail -8
  for b in old- ""; do
    for m in "model-q4_0.gguf golden-q4_0.safetensors" "model-q8_0.gguf golden-q8_0.safetensors" \
             "model-q4_0.gguf golden-q4_0-long.safetensors"; do
      set -- $m
      echo "== ${b:-new} $1 $2"
      $T $D/${b}lfm2-profile-stage --model $F/$1 --full --wide --golden $F/$2 2>&1 | grep -E "^golden" | awk '{print $2, $4, $6, $7}' | sort -k4 -g | tail -3
    done
  done
} > $OUT/31_run1_tests.txt 2>&1
cat $OUT/31_run1_tests.txt
w() { echo "== $*: $(env "$@" 2>&1 | grep -E 'wall 1× \+head|error' | head -2 | tr '\n' ' ')"; }
M="--full --logits --gap-probe --reps 5 --pos 64"
{ $T $N --model lfm2-1.2b $M --cols 1 >/dev/null 2>&1
  for r in "--dtype q4_0 --wide --cols 16" "--dtype q4_0 --wide --cols 512 --slots 1" "--dtype q8_0 --wide --cols 64"; do
    for i in 1 2; do w $T $O --model lfm2-1.2b $r $M; w $T $N --model lfm2-1.2b $r $M; done
  done
} > $OUT/31_run1_walls.txt 2>&1
cat $OUT/31_run1_walls.txt
s() { echo "== $*"; env "$@" 2>&1 | grep -E "^  (matmul|gemm|sum)"; }
{ for c in 16 512; do s $T $D/old-gemm_bench q4_0 $c 10; s $T $D/gemm_bench q4_0 $c 10; done
  for p in 0 1 2 3 4 0; do s LFM2_XMV_PROBE=$p $T $D/gemm_bench q4_0 1 20; done
  for p in 0 1 3; do s LFM2_XMV_COLS=1 LFM2_XMV_PROBE=$p $T $D/gemm_bench bf16 1 20; done
  LFM2_PIPELINE_STATS=1 $T $D/gemm_bench q4_0 1 2 2>&1 | grep -i -E "xmv" | sort -u | head -8
} > $OUT/31_run1_gemm.txt 2>&1
cat $OUT/31_run1_gemm.txt
echo "(d) at $(date +%T), ${SECONDS}s in"
# (d) bench/32: Qwen3.5's DeltaNet conv in in_proj_qkv's epilogue at decode (dn- binaries = main
# + the fusion; LFM2_CONV_UNFUSED=1 the old two dispatches), correctness then walls, alternating
Q=tests/fixtures/qwen35-tiny; DN=$D/dn-lfm2-profile-stage
{ $T $D/dn-test_kernels tests/fixtures 2>&1 | grep -E "FAIL|passed|device" | head -12
  for gf in "model.safetensors golden.safetensors" "model-f16.gguf golden-f16.safetensors" \
            "model-q8_0.gguf golden-q8_0.safetensors" "model.safetensors golden-long.safetensors"; do
    set -- $gf
    for L in "--full" "--layers 0:2" "--layers 2:4"; do
      echo "== dn $1 $2 $L: $($T $DN --model $Q/$1 $L --golden $Q/$2 2>&1 | grep -E '^golden:|error' | tr '\n' ' ')"
    done
  done
  $T $DN --model $Q/model.safetensors --full --cols 3 --reps 1 2>&1 | grep -E "matmul_dn|dn.conv" | head -3
} > $OUT/32_run1_tests.txt 2>&1
cat $OUT/32_run1_tests.txt
{ for m in qwen3.5-0.8b qwen3.5-2b; do
    for c in 1 4 16; do
      for i in 1 2; do w $T $DN --model $m --cols $c $M; w LFM2_CONV_UNFUSED=1 $T $DN --model $m --cols $c $M; done
    done
  done
  for u in 0 1; do
    echo "== LFM2_CONV_UNFUSED=$u qwen3.5-0.8b --cols 1 kinds"
    env LFM2_CONV_UNFUSED=$u $T $DN --model qwen3.5-0.8b --full --cols 1 --pos 64 --reps 5 --gap-probe 2>&1 | grep -E "^  [a-z_.0-9]+ +n=|wall|plan:" | head -24
  done
} > $OUT/32_run1_walls.txt 2>&1
cat $OUT/32_run1_walls.txt
echo "(c) at $(date +%T), ${SECONDS}s in"
[ $SECONDS -gt 380 ] && { echo "(c) skipped: ${SECONDS}s in"; exit 0; }
# (c): the barrier path before and after the removal of chained dispatches
{ for r in "--dtype bf16 --cols 1" "--dtype q4_0 --cols 1" "--dtype bf16 --wide --cols 16" \
           "--dtype bf16 --wide --cols 512 --slots 1" "qwen3.5-0.8b --cols 1"; do
    set -- $r; m=lfm2-1.2b; case $1 in qwen*) m=$1; shift;; esac
    for i in 1 2; do w $T $D/base-lfm2-profile-stage --model $m "$@" $M; w $T $O --model $m "$@" $M; done
  done
} > $OUT/31_run1_removal.txt 2>&1
cat $OUT/31_run1_removal.txt
