#!/usr/bin/env bash
# bench/25 run 7 (H200): decode step tables (BF16, Q4_0, one column), and SwiGLU 64x128x32 2x4 tiles at 256/512 (BF16)
D=.dev-25; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench
gb() { echo "== $*"; env "$@" 2>&1 | grep -E "gemm|sum" | grep -v xprep; }
for dt in bf16 q4_0; do
  $BIN --model lfm2-1.2b --full --dtype $dt --cols 1 --pos 64 --logits --gap-probe --reps 5 > $R/dec_$dt.txt 2>&1
done
sed -n '/by kernel/,$p' $R/dec_bf16.txt | head -40
grep -E "wall 1×|inter-dispatch|VERDICT" $R/dec_*.txt
{ for c in 256 512; do
    gb $GEMM_BENCH bf16 $c 5
    gb LFM2_GEMM_TILE_SWIGLU=64x128x32:2x4 $GEMM_BENCH bf16 $c 5
  done; } > $R/sw.txt 2>&1
cat $R/sw.txt
cd $OUT && tar czf r.tgz r && rm -rf r
