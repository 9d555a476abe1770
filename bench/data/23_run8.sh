#!/usr/bin/env bash
# bench/23 run 8 (H200): main with every change of this note: the whole test_kernels, the goldens
# in both plans (cooperative matrices now take the 6-15-column steps), the crossover tables.
D=.dev-23; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage
{ echo "== test_kernels"; timeout 100 $D/test_kernels tests/fixtures 2>&1 | tail -1; } > $R/tests.txt 2>&1
OUT=$R timeout 60 bash $D/h200.sh golden >/dev/null 2>&1
OUT=$R timeout 90 bash $D/h200.sh golden_wide >/dev/null 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c >> $R/tests.txt
cat $R/tests.txt
for dt in bf16 q4_0; do
  echo "== crossover $dt"; timeout 40 $BIN --model lfm2-1.2b --full --dtype $dt --cols 2,4,6,8 --plans batch,wide --pos 64 --logits 2>&1 | tail -14
done > $R/crossover.txt 2>&1
cat $R/crossover.txt
cd $OUT && tar czf r.tgz r && rm -rf r
