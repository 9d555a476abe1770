#!/usr/bin/env bash
# bench/24 run 1 (H200): xmv with long k split over workgroups (ffn_down at Q4_0/Q8_0, 1-8 columns)
# against the same binary with LFM2_XMV_KSPLIT=1 (no split: qmv/matvec as before); the split count
# swept; F16 against BF16 at 512 columns (what the BF16 -> f16 conversion in the gemm's staging costs);
# attn.prefill with the next KV block's loads in flight and a 4-lane softmax, against the old binary.
D=.dev-24; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
gb() { echo "== $*"; env "$@" 2>&1 | grep -E "matmul|gemm|sum|accuracy"; }
st tests
{ echo "== test_kernels gemm"; timeout 100 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1
  echo "== test_kernels gemm, LFM2_XMV_KSPLIT=3"; LFM2_XMV_KSPLIT=3 timeout 100 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1
  echo "== test_kernels attention"; timeout 100 $D/test_kernels tests/fixtures attention 2>&1 | tail -1
} > $R/tests.txt 2>&1
OUT=$R timeout 60 bash $D/h200.sh golden >/dev/null 2>&1
OUT=$R timeout 90 bash $D/h200.sh golden_wide >/dev/null 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c >> $R/tests.txt
cat $R/tests.txt
st perop
for dt in q4_0 q8_0; do
  $BIN --model lfm2-1.2b --full --dtype $dt --cols 1 --pos 64 --logits --gap-probe --json $R/bf_new_${dt}_1.json > $R/po_new_$dt.txt 2>&1
  LFM2_XMV_KSPLIT=1 $BIN --model lfm2-1.2b --full --dtype $dt --cols 1 --pos 64 --logits --gap-probe --json $R/bf_old_${dt}_1.json > $R/po_old_$dt.txt 2>&1
done
python3 $D/per_op.py $R > $R/per_op.txt; cat $R/per_op.txt
grep -H "wall 1× +head" $R/po_*.txt
st walls
{ for dt in q4_0 q8_0; do for c in 1 2 4 8; do
    [ $dt = q8_0 ] && [ $c -gt 2 ] && continue
    for ks in "" 1 2 8; do
      echo "== $dt $c KSPLIT=${ks:-default}: $(env ${ks:+LFM2_XMV_KSPLIT=$ks} $BIN --model lfm2-1.2b --full --dtype $dt --cols $c --pos 64 --logits --gap-probe --reps 5 2>&1 | grep 'wall 1× +head')"
    done
  done; done
  for c in 1 4; do for ks in "" 1; do
    echo "== q4_0 $c KSPLIT=${ks:-default} again: $(env ${ks:+LFM2_XMV_KSPLIT=$ks} $BIN --model lfm2-1.2b --full --dtype q4_0 --cols $c --pos 64 --logits --gap-probe --reps 5 2>&1 | grep 'wall 1× +head')"
  done; done
} > $R/walls.txt 2>&1
cat $R/walls.txt
st attn
{ for dt in bf16; do for b in $BIN $D/old/lfm2-profile-stage; do
    $b --model lfm2-1.2b --full --dtype $dt --cols 512 --slots 1 --pos 0 --wide --logits --reps 5 > $R/pre_$(basename $(dirname $b))_$dt.txt 2>&1
    echo "== $b $dt prefill 512: $(grep -E '^  attn.prefill ' $R/pre_$(basename $(dirname $b))_$dt.txt)"
    echo "== $b $dt prefill 512 wall: $($b --model lfm2-1.2b --full --dtype $dt --cols 512 --slots 1 --pos 0 --wide --logits --gap-probe --reps 5 2>&1 | grep 'wall 1× +head')"
  done; done
  for b in $BIN $D/old/lfm2-profile-stage; do
    echo "== $b qwen3.5-0.8b prefill 512: $($b --model qwen3.5-0.8b --full --dtype bf16 --cols 512 --slots 1 --pos 0 --wide --logits --reps 3 2>&1 | grep -E '^  attn')"
  done
} > $R/attn.txt 2>&1
cat $R/attn.txt
st gemm512
{ for dt in f16 bf16; do gb $GEMM_BENCH $dt 512 5; done; gb $GEMM_BENCH f16 512 5; } > $R/gemm512.txt 2>&1
cat $R/gemm512.txt
st done
cat $R/times.txt
cd $OUT && tar czf r.tgz r && rm -rf r
