#!/usr/bin/env bash
# bench/25 run 1 (H200): where the prefill gemm's time goes at 512 columns: registers a pipeline,
# the low part's cost (LFM2_GEMM_ROOF: x as one f16), probes, fragment orders, per kind of the step.
D=.dev-25; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
gb() { echo "== $*"; env "$@" 2>&1 | grep -E "matmul|gemm|sum|accuracy"; }
st stats
for dt in f16 bf16 q4_0; do LFM2_PIPELINE_STATS=1 $GEMM_BENCH $dt 512 1 2>&1 | grep -E "^pipeline gemm" | sort -u; done > $R/stats.txt
cut -c1-400 $R/stats.txt
st gemm
{ gb $GEMM_BENCH f16 512 5
  gb LFM2_GEMM_ROOF=1 $GEMM_BENCH f16 512 5
  for pr in 1 2 3; do gb LFM2_GEMM_PROBE=$pr LFM2_GEMM_FRAG=0 $GEMM_BENCH f16 512 5; done
  gb LFM2_GEMM_FRAG=0 $GEMM_BENCH f16 512 5
  gb LFM2_GEMM_FRAG=1 $GEMM_BENCH f16 512 5
  gb $GEMM_BENCH q4_0 512 5
} > $R/gemm.txt 2>&1
cat $R/gemm.txt
st kinds
for dt in bf16 q4_0; do
  $BIN --model lfm2-1.2b --full --dtype $dt --cols 512 --slots 1 --pos 0 --wide --logits --gap-probe --reps 5 > $R/pre_$dt.txt 2>&1
done
head -60 $R/pre_bf16.txt
grep -E "wall|gemm|attn|conv|norm|head" $R/pre_q4_0.txt | head -30
st done
cat $R/times.txt
cd $OUT && tar czf r.tgz r && rm -rf r
