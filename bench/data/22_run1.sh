#!/usr/bin/env bash
# bench/22 run 1 (H200): xmv.comp (x in registers) at 1 column: correctness, before/after per type,
# geometry sweep, 2-4 columns under LFM2_XMV_COLS=4, per-op tables, targets
D=.dev-22a; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
gb() { echo "== $*"; env "$@" 2>&1 | grep -E "matmul|sum|accuracy"; }
st tests
{ echo "== test_kernels gemm"; timeout 100 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1
  echo "== test_kernels gemm, xmv hooks"
  LFM2_XMV_RB=3 LFM2_XMV_NB=2 LFM2_XMV_XE=32 LFM2_XMV_NSG=8 LFM2_XMV_COLS=4 timeout 100 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1
} > $R/tests.txt 2>&1
OUT=$R timeout 60 bash $D/h200.sh golden >/dev/null 2>&1; mv $R/golden.txt $R/golden_default.txt
LFM2_XMV_COLS=4 OUT=$R timeout 60 bash $D/h200.sh golden >/dev/null 2>&1; mv $R/golden.txt $R/golden_xmv4.txt
Q=tests/fixtures/qwen35-tiny
{ for m in "$Q golden" "$Q/model-q4_0.gguf golden-q4_0" "$Q/model-q8_0.gguf golden-q8_0" "$Q/model-f16.gguf golden-f16"; do set -- $m
  echo "\$ $1 $2 XMV_COLS=4"; LFM2_XMV_COLS=4 $BIN --model $1 --full --golden $Q/$2.safetensors; echo "(exit $?)"; done; } > $R/golden_qwen.txt 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c >> $R/tests.txt
cat $R/tests.txt
st types
{ for dt in bf16 f16 q8_0 q4_0; do gb $GEMM_BENCH $dt 1 20; gb LFM2_XMV_OFF=1 $GEMM_BENCH $dt 1 20; done; } > $R/types.txt 2>&1
grep -E "^==|sum" $R/types.txt
st sweep
{ for dt in q4_0 bf16; do for nsg in 4 8; do for rb in 1 2 4 8; do for nb in 1 2; do
    [ $(($(date +%s) - t0)) -gt 330 ] && break 4
    gb LFM2_XMV_NSG=$nsg LFM2_XMV_RB=$rb LFM2_XMV_NB=$nb $GEMM_BENCH $dt 1 10; done; done; done; done; } > $R/sweep.txt 2>&1
st cols
{ for dt in bf16 q4_0 q8_0; do for c in 2 3 4; do gb $GEMM_BENCH $dt $c 10; gb LFM2_XMV_COLS=4 $GEMM_BENCH $dt $c 10; done; done; } > $R/cols.txt 2>&1
grep -E "^==|sum" $R/cols.txt
st perop
for dt in bf16 q4_0 q8_0; do
  $BIN --model lfm2-1.2b --full --dtype $dt --cols 1 --pos 64 --logits --gap-probe --json $R/bf_new_${dt}_1.json > $R/po_new_$dt.txt 2>&1
  LFM2_XMV_OFF=1 $BIN --model lfm2-1.2b --full --dtype $dt --cols 1 --pos 64 --logits --gap-probe --json $R/bf_old_${dt}_1.json > $R/po_old_$dt.txt 2>&1
done
python3 $D/per_op.py $R > $R/per_op.txt; cat $R/per_op.txt
grep -H "wall 1× +head" $R/po_*.txt
st targets
ROOF=498.8 OUT=$R timeout $((560 - $(date +%s) + t0)) bash $D/h200.sh targets > $R/targets_out.txt 2>&1
cat $R/targets.txt
st done
cat $R/times.txt
cd $OUT && tar czf r.tgz r && rm -rf r
