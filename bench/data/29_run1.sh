#!/usr/bin/env bash
# bench/29 run 1 (H200, never run: run 0 and run 3 decided the question first; it replaces
# data/28_run1.sh): chained dispatches in every plan, by stage. Copy build/lfm2-profile-stage,
# build/test_kernels and build/gemm_bench into .dev-29/ beside this script (as run.sh), carry
# [".gl", ".dev-29"], command:
#   for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig;
#   export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; bash .dev-29/run.sh
# 1. correctness with the chain on, on cooperative matrices: test_kernels' CHAIN pipelines; goldens
#    of every family and format in the batch, wide and spec plans, split, long (288-column wide
#    prefill steps), the chunked DeltaNet; LFM2_CHAIN=2 (plain activation loads) on a few;
# 2. what one dependent dispatch costs: barrier / chained link / none (gemm_bench chain, 1 to 4096
#    workgroups a dispatch);
# 3. walls (gap probe, with the head), barriers (0) / chained (1) alternating, one round of every
#    row of issue 8's table and the other families. Run 2 has the second round and the bounds.
# Results go straight to $OUT (a run cut short keeps what it wrote).
D=.dev-29; export BIN=$D/lfm2-profile-stage
F=tests/fixtures; LT=$F/lfm2-tiny; QT=$F/qwen35-tiny; GT=$F/glm-ocr-tiny
T="timeout 120"
g() { echo "$*: $(env "$@" 2>&1 | grep -E 'golden: |failed|error' | tail -1)"; }
{ LFM2_CHAIN=1 $T $D/test_kernels $F 2>&1 | tail -1
  for plan in "" --wide --spec; do
    for m in "$LT golden" "$LT/model-f16.gguf golden-f16" "$LT/model-q8_0.gguf golden-q8_0" "$LT/model-q4_0.gguf golden-q4_0" \
             "$QT golden" "$QT/model-q4_0.gguf golden-q4_0" "$GT golden"; do
      set -- $m; d=$(dirname $1/x); [ -f "$1" ] && d=$(dirname $1)
      g LFM2_CHAIN=1 $T $BIN --model $1 --full $plan --golden $d/$2.safetensors
    done
    g LFM2_CHAIN=1 $T $BIN --model $LT --layers 3:6 $plan --golden $LT/golden.safetensors
  done
  g LFM2_CHAIN=1 $T $BIN --model $LT --full --wide --golden $LT/golden-long.safetensors
  g LFM2_CHAIN=1 $T $BIN --model $QT --full --wide --golden $QT/golden-long.safetensors
  g LFM2_CHAIN=1 $T $BIN --model $GT --full --wide --golden $GT/golden-long.safetensors
  g LFM2_CHAIN=1 $T $BIN --model $LT/model-q4_0.gguf --full --wide --golden $LT/golden-q4_0-long.safetensors
  g LFM2_CHAIN=1 LFM2_DN_CHUNK_MIN=8 $T $BIN --model $QT --full --wide --golden $QT/golden-long.safetensors
  g LFM2_CHAIN=2 $T $BIN --model $LT --full --golden $LT/golden.safetensors
  g LFM2_CHAIN=2 $T $BIN --model $LT --full --wide --golden $LT/golden-long.safetensors
} > $OUT/29_tests.txt 2>&1
cat $OUT/29_tests.txt
{ for a in "256 1" "256 132" "256 1024" "64 4096"; do $T $D/gemm_bench chain $a; done; } > $OUT/29_link_cost.txt 2>&1
cat $OUT/29_link_cost.txt
w() { echo "== $*: $(env "$@" 2>&1 | grep -E 'wall 1× \+head|chained dispatches|self-test|error' | head -3 | tr '\n' ' ')"; }
M="--full --logits --gap-probe --reps 5 --pos 64"
rows=("lfm2-1.2b --dtype bf16 --cols 1" "lfm2-1.2b --dtype q4_0 --cols 1" "lfm2-1.2b --dtype bf16 --cols 4"
      "lfm2-1.2b --dtype bf16 --cols 16" "lfm2-1.2b --dtype bf16 --wide --cols 16" "lfm2-1.2b --dtype q4_0 --wide --cols 16"
      "lfm2-1.2b --dtype bf16 --wide --cols 64" "lfm2-1.2b --dtype bf16 --wide --cols 512 --slots 1"
      "qwen3.5-0.8b --cols 1" "qwen3.5-0.8b --wide --cols 16" "glm-ocr --cols 1")
{ $T $BIN --model lfm2-1.2b $M --cols 1 >/dev/null 2>&1
  for r in "${rows[@]}"; do
    for c in 0 1; do w LFM2_CHAIN=$c $T $BIN --model $r $M; done
  done
} > $OUT/29_ab1.txt 2>&1
cat $OUT/29_ab1.txt
