#!/usr/bin/env bash
# bench/24 run 8 (H200): xmv for the Q4_0 LM head (1-8 columns) and BF16's q/k/v stacked and LM
# head at one column, against the binary before (old2 = 5641626); tests; the targets.
D=.dev-24; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
st tests
{ echo "== test_kernels gemm"; timeout 100 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1; } > $R/tests.txt 2>&1
OUT=$R timeout 60 bash $D/h200.sh golden >/dev/null 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c >> $R/tests.txt
cat $R/tests.txt
st walls
{ for dt in q4_0 bf16; do for c in 1 2 4 8; do
    [ $dt = bf16 ] && [ $c -gt 2 ] && continue
    for tag in new old; do
      b=$BIN; [ $tag = old ] && b=$D/old2/lfm2-profile-stage
      echo "== $dt $c $tag: $($b --model lfm2-1.2b --full --dtype $dt --cols $c --pos 64 --logits --gap-probe --reps 5 --json $R/bf_${tag}_${dt}_$c.json 2>&1 | grep 'wall 1× +head')"
    done
  done; done
  for dt in q4_0 bf16; do for b in $BIN $D/old2/lfm2-profile-stage; do
    echo "== $dt 1 again $b: $($b --model lfm2-1.2b --full --dtype $dt --cols 1 --pos 64 --logits --gap-probe --reps 5 2>&1 | grep 'wall 1× +head')"
  done; done
} > $R/walls.txt 2>&1
cat $R/walls.txt
python3 $D/per_op.py $R > $R/per_op.txt; grep -E 'column|lm_head|qkv|total' $R/per_op.txt
st targets
ROOF=498.8 OUT=$R timeout 200 bash $D/h200.sh targets > $R/targets_out.txt 2>&1
cat $R/targets.txt
st done
cat $R/times.txt
cd $OUT && tar czf r.tgz r && rm -rf r
