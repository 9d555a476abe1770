#!/usr/bin/env bash
# bench/23 run 2 (H200): xmv with the first batch's loads before x is staged and NB batches
# pipelined over two register sets; sweep NB x RB (x NSG) against the old binary (7df6fc5).
D=.dev-23; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
gb() { echo "== $*"; env "$@" 2>&1 | grep -E "matmul|sum"; }
st tests
{ echo "== test_kernels gemm"; timeout 100 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1
  echo "== test_kernels gemm, LFM2_XMV_COLS=2 NB=3"; LFM2_XMV_COLS=2 LFM2_XMV_NB=3 timeout 100 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1
} > $R/tests.txt 2>&1
LFM2_XMV_NB=4 OUT=$R timeout 60 bash $D/h200.sh golden >/dev/null 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c >> $R/tests.txt
cat $R/tests.txt
st sweep
{ for dt in q4_0 q8_0; do
    gb $D/old/gemm_bench $dt 1 20
    for nb in 1 2 4 8; do for rb in 1 2 4; do gb LFM2_XMV_NB=$nb LFM2_XMV_RB=$rb $GEMM_BENCH $dt 1 20; done; done
    for nb in 2 4; do gb LFM2_XMV_NB=$nb LFM2_XMV_NSG=4 $GEMM_BENCH $dt 1 20; done
    for nb in 1 2 4; do gb LFM2_XMV_COLS=1 LFM2_XMV_NB=$nb $GEMM_BENCH $dt 1 20; done
  done
  gb $D/old/gemm_bench bf16 1 20
  for nb in 1 2 4; do for rb in 1 2; do gb LFM2_XMV_COLS=1 LFM2_XMV_NB=$nb LFM2_XMV_RB=$rb $GEMM_BENCH bf16 1 20; done; done
} > $R/sweep.txt 2>&1
grep -E "^==|sum" $R/sweep.txt
st walls
{ for dt in q4_0 q8_0 bf16; do
    for h in OLD LFM2_XMV_NB=1 LFM2_XMV_NB=2 LFM2_XMV_NB=4 "LFM2_XMV_NB=4 LFM2_XMV_RB=1" "LFM2_XMV_NB=2 LFM2_XMV_COLS=1"; do
      b=$BIN; [ "$h" = OLD ] && b=$D/old/lfm2-profile-stage
      echo "== $dt $h: $(env ${h/OLD/X=1} $b --model lfm2-1.2b --full --dtype $dt --cols 1 --pos 64 --logits --gap-probe --reps 5 2>&1 | grep 'wall 1× +head')"
    done
  done
} > $R/walls.txt 2>&1
cat $R/walls.txt
st done
cat $R/times.txt
cd $OUT && tar czf r.tgz r && rm -rf r
