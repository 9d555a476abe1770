#!/usr/bin/env bash
# bench/25 run 17 (H200): dn.conv.wide with 8 columns an invocation against the binary before
# (old = b286e54); Qwen3.5-2B and -0.8B 512-token prefills; Qwen3.5 goldens wide.
D=.dev-25; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage
{ for g in golden golden-long; do echo "== qwen35-tiny wide $g: $($BIN --model tests/fixtures/qwen35-tiny --full --wide --golden tests/fixtures/qwen35-tiny/$g.safetensors 2>&1 | tail -1)"; done
  echo "== qwen35-tiny q4_0 wide long: $($BIN --model tests/fixtures/qwen35-tiny/model-q4_0.gguf --full --wide --golden tests/fixtures/qwen35-tiny/golden-q4_0-long.safetensors 2>&1 | tail -1)"
  echo "== test_kernels: $(timeout 60 $D/test_kernels tests/fixtures all 2>&1 | tail -1)"; } > $R/tests.txt 2>&1
cat $R/tests.txt
{ for m in qwen3.5-2b qwen3.5-0.8b; do for b in $D/old/lfm2-profile-stage $BIN $D/old/lfm2-profile-stage $BIN; do
    echo "== $m 512 $b: $($b --model $m --full --dtype bf16 --cols 512 --slots 1 --pos 0 --wide --logits --gap-probe --reps 3 2>&1 | grep -E '^  dn.conv|wall 1× \+head' | awk '{print $1, $2, $3, $4, $5}' | tr '\n' ' ')"
  done; done
} > $R/dnconv.txt 2>&1
cat $R/dnconv.txt
cd $OUT && tar czf r.tgz r && rm -rf r
