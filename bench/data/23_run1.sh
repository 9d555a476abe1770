#!/usr/bin/env bash
# bench/23 run 1 (H200): Q4_0/Q8_0 widened without int-to-float conversions (wslot.glsl q4_word4,
# q8_word4) in every kernel; new binaries against the old (7df6fc5) in the same call.
D=.dev-23; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
gb() { echo "== $*"; env "$@" 2>&1 | grep -E "matmul|sum|accuracy"; }
st tests
{ echo "== test_kernels gemm"; timeout 100 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1
  echo "== test_kernels gemm, LFM2_XMV_COLS=1"; LFM2_XMV_COLS=1 timeout 100 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1
} > $R/tests.txt 2>&1
OUT=$R timeout 60 bash $D/h200.sh golden >/dev/null 2>&1
OUT=$R timeout 90 bash $D/h200.sh golden_wide >/dev/null 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c >> $R/tests.txt
cat $R/tests.txt
st gemm
{ for dt in q4_0 q8_0 bf16; do for c in 1 16 512; do
    n=20; [ $c = 512 ] && n=5
    gb $GEMM_BENCH $dt $c $n; gb $D/old/gemm_bench $dt $c $n
  done; done
  for c in 1 2 4; do gb LFM2_XMV_COLS=4 $GEMM_BENCH q4_0 $c 20; gb LFM2_XMV_COLS=4 $GEMM_BENCH q8_0 $c 20; done
  gb $GEMM_BENCH q4_0 2 20; gb $GEMM_BENCH q4_0 4 20
} > $R/gemm.txt 2>&1
grep -E "^==|sum" $R/gemm.txt
st perop
for dt in q4_0 q8_0; do
  $BIN --model lfm2-1.2b --full --dtype $dt --cols 1 --pos 64 --logits --gap-probe --json $R/bf_new_${dt}_1.json > $R/po_new_$dt.txt 2>&1
  $D/old/lfm2-profile-stage --model lfm2-1.2b --full --dtype $dt --cols 1 --pos 64 --logits --gap-probe --json $R/bf_old_${dt}_1.json > $R/po_old_$dt.txt 2>&1
done
python3 $D/per_op.py $R > $R/per_op.txt; cat $R/per_op.txt
grep -H "wall 1× +head" $R/po_*.txt
st targets
ROOF=498.8 OUT=$R timeout 200 bash $D/h200.sh targets > $R/targets_out.txt 2>&1
cat $R/targets.txt
for b in $BIN $D/old/lfm2-profile-stage; do for a in "--cols 16 --pos 64 --wide" "--cols 512 --slots 1 --pos 0 --wide"; do
  echo "== $b q4_0 $a"; $b --model lfm2-1.2b --full --dtype q4_0 $a --logits --gap-probe --reps 3 2>&1 | grep "wall 1× +head"
done; done > $R/q4_wide_ab.txt 2>&1
cat $R/q4_wide_ab.txt
st done
cat $R/times.txt
cd $OUT && tar czf r.tgz r && rm -rf r
