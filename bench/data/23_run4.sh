#!/usr/bin/env bash
# bench/23 run 4 (H200): the final rule (xmv for Q4_0 1-4 columns, Q8_0 1-2, k <= 4096, not the
# head) against the old binary (7df6fc5); BF16 at 2 columns with xmv for the record; targets.
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
{ gb $GEMM_BENCH q8_0 2 20; gb $D/old/gemm_bench q8_0 2 20
  gb $GEMM_BENCH bf16 2 20; gb LFM2_XMV_COLS=2 $GEMM_BENCH bf16 2 20
} > $R/gemm.txt 2>&1
grep -E "^==|sum" $R/gemm.txt
st walls
{ for c in 1 2 3; do for b in $BIN $D/old/lfm2-profile-stage; do
    echo "== q8_0 $c $b: $($b --model lfm2-1.2b --full --dtype q8_0 --cols $c --pos 64 --logits --gap-probe --reps 5 2>&1 | grep 'wall 1× +head')"
  done; done
} > $R/walls.txt 2>&1
cat $R/walls.txt
st targets
ROOF=498.8 OUT=$R timeout 200 bash $D/h200.sh targets > $R/targets_out.txt 2>&1
cat $R/targets.txt
st done
cat $R/times.txt
cd $OUT && tar czf r.tgz r && rm -rf r
