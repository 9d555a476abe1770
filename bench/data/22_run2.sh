#!/usr/bin/env bash
# bench/22 run 2 (H200): xmv with the scale and Q4_0's offset once a slot, 8 subgroups, 2 rows a
# batch for Q4_0; by default only Q8_0/Q4_0 SwiGLU pairs and the head at one column (k <= 4096).
# Correctness, default vs LFM2_XMV_OFF vs LFM2_XMV_COLS=1 (every product), per-op, targets
D=.dev-22b; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
gb() { echo "== $*"; env "$@" 2>&1 | grep -E "matmul|sum|accuracy"; }
st tests
{ echo "== test_kernels gemm"; timeout 100 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1
  echo "== test_kernels gemm, LFM2_XMV_COLS=1"; LFM2_XMV_COLS=1 timeout 100 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1
  echo "== test_kernels gemm, xmv hooks"
  LFM2_XMV_RB=3 LFM2_XMV_NB=2 LFM2_XMV_XE=32 LFM2_XMV_NSG=8 LFM2_XMV_COLS=4 timeout 100 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1
} > $R/tests.txt 2>&1
OUT=$R timeout 60 bash $D/h200.sh golden >/dev/null 2>&1; mv $R/golden.txt $R/golden_default.txt
LFM2_XMV_COLS=4 OUT=$R timeout 60 bash $D/h200.sh golden >/dev/null 2>&1; mv $R/golden.txt $R/golden_xmv4.txt
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c >> $R/tests.txt
cat $R/tests.txt
st types
{ for dt in q4_0 q8_0 bf16; do for h in LFM2_XMV_DEFAULT=1 LFM2_XMV_OFF=1 LFM2_XMV_COLS=1; do gb $h $GEMM_BENCH $dt 1 20; done; done; } > $R/types.txt 2>&1
grep -E "^==|matmul|sum" $R/types.txt
st perop
for dt in q4_0 q8_0; do
  $BIN --model lfm2-1.2b --full --dtype $dt --cols 1 --pos 64 --logits --gap-probe --json $R/bf_new_${dt}_1.json > $R/po_new_$dt.txt 2>&1
  LFM2_XMV_OFF=1 $BIN --model lfm2-1.2b --full --dtype $dt --cols 1 --pos 64 --logits --gap-probe --json $R/bf_old_${dt}_1.json > $R/po_old_$dt.txt 2>&1
  LFM2_XMV_COLS=1 $BIN --model lfm2-1.2b --full --dtype $dt --cols 1 --pos 64 --logits --gap-probe --json $R/bf_all_${dt}_1.json > $R/po_all_$dt.txt 2>&1
done
python3 $D/per_op.py $R > $R/per_op.txt; cat $R/per_op.txt
grep -H "wall 1× +head" $R/po_*.txt
st targets
ROOF=498.8 OUT=$R timeout 200 bash $D/h200.sh targets > $R/targets_out.txt 2>&1
cat $R/targets.txt
st done
cat $R/times.txt
cd $OUT && tar czf r.tgz r && rm -rf r
