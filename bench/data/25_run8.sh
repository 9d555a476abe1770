#!/usr/bin/env bash
# bench/25 run 8 (H200): prefill attention with split keys (LFM2_ATTN_SPLIT) and reversed tile order
# against the binary before (old = 3104423); tests and goldens (SwiGLU 8-subgroup tiles in the long
# goldens' 288-column steps; split attention).
D=.dev-25; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
st tests
{ for s in 1 3 4; do echo "== test_kernels attention SPLIT=$s: $(LFM2_ATTN_SPLIT=$s timeout 100 $D/test_kernels tests/fixtures attention 2>&1 | tail -1)"; done
  echo "== test_kernels gemm SwiGLU 64x128x32:2x4: $(LFM2_GEMM_TILE_SWIGLU=64x128x32:2x4 timeout 100 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1)"
} > $R/tests.txt 2>&1
OUT=$R timeout 90 bash $D/h200.sh golden_wide >/dev/null 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c >> $R/tests.txt
for m in lfm2-tiny qwen35-tiny glm-ocr-tiny; do for s in 2 4 8; do
  echo "== $m long wide SPLIT=$s: $(LFM2_ATTN_SPLIT=$s $BIN --model tests/fixtures/$m --full --wide --golden tests/fixtures/$m/golden-long.safetensors 2>&1 | tail -1)"
done; done >> $R/tests.txt
cat $R/tests.txt
st attn
{ for m in lfm2-1.2b qwen3.5-0.8b glm-ocr; do
    echo "== $m old: $($D/old/lfm2-profile-stage --model $m --full --dtype bf16 --cols 512 --slots 1 --pos 0 --wide --logits --reps 5 2>&1 | grep -E '^  attn[a-z.]*prefill' | awk '{print $1, $3}' | tr '\n' ' ')"
    for s in 1 2 3 4 8; do
      echo "== $m SPLIT=$s: $(LFM2_ATTN_SPLIT=$s $BIN --model $m --full --dtype bf16 --cols 512 --slots 1 --pos 0 --wide --logits --reps 5 2>&1 | grep -E '^  attn[a-z.]*prefill' | awk '{print $1, $3}' | tr '\n' ' ')"
    done
  done
  echo "== lfm2-1.2b 2048 tokens old: $($D/old/lfm2-profile-stage --model lfm2-1.2b --full --dtype bf16 --cols 2048 --slots 1 --pos 0 --wide --logits --reps 3 2>&1 | grep -E '^  attn[a-z.]*prefill' | awk '{print $1, $3}' | tr '\n' ' ')"
  for s in 1 4 8; do
    echo "== lfm2-1.2b 2048 tokens SPLIT=$s: $(LFM2_ATTN_SPLIT=$s $BIN --model lfm2-1.2b --full --dtype bf16 --cols 2048 --slots 1 --pos 0 --wide --logits --reps 3 2>&1 | grep -E '^  attn[a-z.]*prefill' | awk '{print $1, $3}' | tr '\n' ' ')"
  done
  echo "== lfm2-1.2b 4 x 128 old: $($D/old/lfm2-profile-stage --model lfm2-1.2b --full --dtype bf16 --cols 512 --slots 4 --pos 0 --wide --logits --reps 5 2>&1 | grep -E '^  attn[a-z.]*prefill' | awk '{print $1, $3}' | tr '\n' ' ')"
  for s in 1 4; do
    echo "== lfm2-1.2b 4 x 128 SPLIT=$s: $(LFM2_ATTN_SPLIT=$s $BIN --model lfm2-1.2b --full --dtype bf16 --cols 512 --slots 4 --pos 0 --wide --logits --reps 5 2>&1 | grep -E '^  attn[a-z.]*prefill' | awk '{print $1, $3}' | tr '\n' ' ')"
  done
} > $R/attn.txt 2>&1
cat $R/attn.txt
st walls
{ for b in $D/old/lfm2-profile-stage $BIN; do for s in 1 4; do
    [ $b != $BIN ] && [ $s = 4 ] && continue
    echo "== $b SPLIT=$s bf16 prefill 512: $(LFM2_ATTN_SPLIT=$s $b --model lfm2-1.2b --full --dtype bf16 --cols 512 --slots 1 --pos 0 --wide --logits --gap-probe --reps 5 2>&1 | grep 'wall 1× +head')"
  done; done
} > $R/walls.txt 2>&1
cat $R/walls.txt
st done
cat $R/times.txt
cd $OUT && tar czf r.tgz r && rm -rf r
