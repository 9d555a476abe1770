#!/usr/bin/env bash
# bench/21 run 1 (H200): compute-only barriers between dispatches (LFM2_FULL_STAGE_BARRIERS=1 is
# the code before, in the same binary): goldens, targets both ways, gap probe at 1 and 16 columns
D=.dev-21a; R=$OUT/r; mkdir -p $R/old $R/new
export BIN=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
st goldens
OUT=$R timeout 120 bash $D/h200.sh golden golden_wide >/dev/null 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c > $R/tests.txt
cat $R/tests.txt
st probe
for i in 1 2; do for v in new old; do
  e=""; [ $v = old ] && e="LFM2_FULL_STAGE_BARRIERS=1"
  for m in "1 batch" "16 wide" "512 wide"; do set -- $m; w=""; [ $2 = wide ] && w=--wide
    pos=64; [ $1 = 512 ] && pos=0
    echo "== $v cols $1 $2 (pass $i)"; env $e $BIN --model lfm2-1.2b --full --cols $1 --pos $pos $w --logits --gap-probe --reps 5 2>&1 | grep -E "GPU busy|wall 1|wall 2|gap"
  done; done; done > $R/probe.txt 2>&1
cat $R/probe.txt
st targets
OUT=$R/new ROOF=498.8 timeout 150 bash $D/h200.sh targets > /dev/null 2>&1
LFM2_FULL_STAGE_BARRIERS=1 OUT=$R/old ROOF=498.8 timeout 150 bash $D/h200.sh targets > /dev/null 2>&1
paste $R/new/targets.txt $R/old/targets.txt | cut -c1-200
st done
cat $R/times.txt
