#!/usr/bin/env bash
# bench/23 run 7 (H200): where the wide plan should hand narrow steps to the gemm: every width from
# 2 to 12 through the gemm (LFM2_GEMM_MIN_COLS=2) against the default (matrix-vector kernels
# below 16 columns, 8 for Q4_0), LFM2-1.2B whole step, per type.
D=.dev-23; R=$OUT/r; mkdir -p $R
BIN=$D/lfm2-profile-stage
{ for dt in bf16 q8_0 q4_0; do for c in 2 3 4 6 8 12; do
    a=$($BIN --model lfm2-1.2b --full --dtype $dt --cols $c --pos 64 --wide --logits --gap-probe --reps 5 2>&1 | grep 'wall 1× +head' | awk '{print $4}')
    b=$(LFM2_GEMM_MIN_COLS=2 $BIN --model lfm2-1.2b --full --dtype $dt --cols $c --pos 64 --wide --logits --gap-probe --reps 5 2>&1 | grep 'wall 1× +head' | awk '{print $4}')
    echo "$dt $c default $a gemm $b"
  done; done
} > $R/mincols.txt 2>&1
cat $R/mincols.txt
cd $OUT && tar czf r.tgz r && rm -rf r
