#!/usr/bin/env bash
# bench/23 run 3 (H200): xmv by default for Q4_0 products of 2-4 columns (k <= 4096, not the head),
# against the old binary (7df6fc5); Q8_0 at 2-4 columns with and without xmv; fresh per-op JSON of
# the wide plan at 16 and 64 columns (what the preps cost now).
D=.dev-23; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
gb() { echo "== $*"; env "$@" 2>&1 | grep -E "matmul|sum"; }
st tests
{ echo "== test_kernels gemm"; timeout 100 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1; } > $R/tests.txt 2>&1
OUT=$R timeout 60 bash $D/h200.sh golden >/dev/null 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c >> $R/tests.txt
cat $R/tests.txt
st gemm
{ for c in 2 3 4; do
    gb $GEMM_BENCH q4_0 $c 20; gb $D/old/gemm_bench q4_0 $c 20
    gb $GEMM_BENCH q8_0 $c 20; gb LFM2_XMV_COLS=$c $GEMM_BENCH q8_0 $c 20
  done
} > $R/gemm.txt 2>&1
grep -E "^==|sum" $R/gemm.txt
st walls
{ for c in 1 2 3 4 8; do for b in $BIN $D/old/lfm2-profile-stage; do
    echo "== q4_0 $c $b: $($b --model lfm2-1.2b --full --dtype q4_0 --cols $c --pos 64 --logits --gap-probe --reps 5 2>&1 | grep 'wall 1× +head')"
  done; done
  echo "== plans crossover q4_0"
  $BIN --model lfm2-1.2b --full --dtype q4_0 --cols 1,2,4,8,16 --plans batch,wide --pos 64 --logits 2>&1 | tail -12
} > $R/walls.txt 2>&1
cat $R/walls.txt
st perop
for c in 16 64; do
  $BIN --model lfm2-1.2b --full --cols $c --pos 64 --wide --logits --gap-probe --json $R/wide_bf16_$c.json > $R/wide_bf16_$c.txt 2>&1
done
grep -h "wall 1× +head" $R/wide_bf16_*.txt
st done
cat $R/times.txt
cd $OUT && tar czf r.tgz r && rm -rf r
