#!/usr/bin/env bash
# bench/23 run 6 (H200): Q4_0 at 5-8 columns through xmv in passes of <= 4 columns, against the
# old binary (7df6fc5: matvec); the targets once more (run 4's call was noisy).
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
{ for c in 5 6 8; do gb $GEMM_BENCH q4_0 $c 20; gb $D/old/gemm_bench q4_0 $c 20; done; } > $R/gemm.txt 2>&1
grep -E "^==|sum" $R/gemm.txt
st walls
{ for c in 1 2 4 5 6 8; do for b in $BIN $D/old/lfm2-profile-stage; do
    echo "== q4_0 $c $b: $($b --model lfm2-1.2b --full --dtype q4_0 --cols $c --pos 64 --logits --gap-probe --reps 5 2>&1 | grep 'wall 1× +head')"
  done; done
  echo "== plans crossover q4_0"
  $BIN --model lfm2-1.2b --full --dtype q4_0 --cols 1,2,4,8,16 --plans batch,wide --pos 64 --logits 2>&1 | tail -12
} > $R/walls.txt 2>&1
cat $R/walls.txt
st targets
ROOF=498.8 OUT=$R timeout 200 bash $D/h200.sh targets > $R/targets_out.txt 2>&1
cat $R/targets.txt
st done
cat $R/times.txt
cd $OUT && tar czf r.tgz r && rm -rf r
