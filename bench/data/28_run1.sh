#!/usr/bin/env bash
# bench/28 run 1 (H200, NOT YET RUN; superseded by data/29_run1.sh, which covers it): chained
# dispatches. Copy build/lfm2-profile-stage and build/test_kernels into .dev-28/ beside this script
# (as run.sh), carry [".gl", ".dev-28"], command:
#   for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig;
#   export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; bash .dev-28/run.sh
# 1. correctness on the H200 with the chain on (test_kernels' CHAIN pipelines; goldens of every
#    family and format, split, long, spec; LFM2_CHAIN=2's plain loads too);
# 2. walls (gap probe, with the head): barriers (0) / chained, coherent (1) / chained, plain (2),
#    alternating, two rounds; LFM2_BENCH_NO_BARRIERS as the bound;
# 3. per-kernel times of the timestamped step (barriers either way) under each: what coherent
#    activation loads cost the kernels themselves.
D=.dev-28; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage
F=tests/fixtures
T="timeout 120"
{ LFM2_CHAIN=1 $D/test_kernels $F 2>&1 | tail -1
  for c in 1 2; do
    for m in "$F/lfm2-tiny golden" "$F/lfm2-tiny golden-long" "$F/lfm2-tiny/model-f16.gguf golden-f16" \
             "$F/lfm2-tiny/model-q8_0.gguf golden-q8_0" "$F/lfm2-tiny/model-q4_0.gguf golden-q4_0" \
             "$F/qwen35-tiny golden" "$F/qwen35-tiny/model-q4_0.gguf golden-q4_0" "$F/glm-ocr-tiny golden"; do
      set -- $m; d=$(dirname $1/x); [ -f "$1" ] && d=$(dirname $1)
      echo "chain=$c $1 $2: $(LFM2_CHAIN=$c $T $BIN --model $1 --full --golden $d/$2.safetensors 2>&1 | tail -1)"
    done
    echo "chain=$c split: $(LFM2_CHAIN=$c $T $BIN --model $F/lfm2-tiny --layers 3:6 --golden $F/lfm2-tiny/golden.safetensors 2>&1 | tail -1)"
    echo "chain=$c spec: $(LFM2_CHAIN=$c $T $BIN --model $F/qwen35-tiny --full --spec --golden $F/qwen35-tiny/golden.safetensors 2>&1 | tail -1)"
  done
} > $R/tests.txt 2>&1
cat $R/tests.txt
w() { echo "== $*: $(env "$@" 2>&1 | grep -E 'wall 1× \+head|chained dispatches|error' | head -2 | tr '\n' ' ')"; }
M="--full --logits --gap-probe --reps 5 --pos 64"
{ $T $BIN --model lfm2-1.2b $M --cols 1 >/dev/null 2>&1
  for i in 1 2; do
    for c in 0 1 2; do
      w LFM2_CHAIN=$c $T $BIN --model lfm2-1.2b $M --dtype bf16 --cols 1
      w LFM2_CHAIN=$c $T $BIN --model lfm2-1.2b $M --dtype q4_0 --cols 1
      w LFM2_CHAIN=$c $T $BIN --model lfm2-1.2b $M --dtype bf16 --cols 4
      w LFM2_CHAIN=$c $T $BIN --model lfm2-1.2b $M --dtype bf16 --cols 16
      w LFM2_CHAIN=$c $T $BIN --model qwen3.5-0.8b $M --cols 1
      w LFM2_CHAIN=$c $T $BIN --model glm-ocr $M --cols 1
    done
  done
  w LFM2_BENCH_NO_BARRIERS=1 $T $BIN --model lfm2-1.2b $M --dtype bf16 --cols 1
  w LFM2_BENCH_NO_BARRIERS=1 $T $BIN --model lfm2-1.2b $M --dtype q4_0 --cols 1
} > $R/ab.txt 2>&1
cat $R/ab.txt
for c in 0 1 2; do
  LFM2_CHAIN=$c $T $BIN --model lfm2-1.2b $M --dtype bf16 --cols 1 2>&1 | grep -E "^  [a-z]|chained" | sed "s/^/chain=$c /"
done > $R/kinds.txt 2>&1
cat $R/kinds.txt
cd $OUT && tar czf r.tgz r && rm -rf r
