#!/usr/bin/env bash
# bench/25 run 15 (H200): shortconv.wide with 8 columns an invocation against the binary before
# (old = 4906b5d, one column an invocation); tests and wide goldens.
D=.dev-25; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage
{ echo "== test_kernels shortconv: $(timeout 100 $D/test_kernels tests/fixtures shortconv 2>&1 | tail -1)"; } > $R/tests.txt
OUT=$R timeout 90 bash $D/h200.sh golden_wide >/dev/null 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c >> $R/tests.txt
cat $R/tests.txt
k() { grep -E '^  shortconv' | awk '{print $1, $2, $3}'; }
{ for c in 512 64 16; do for b in $D/old/lfm2-profile-stage $BIN $D/old/lfm2-profile-stage $BIN; do
    a="--cols $c --pos 64"; [ $c = 512 ] && a="--cols 512 --slots 1 --pos 0"
    echo "== $c $b: $($b --model lfm2-1.2b --full --dtype bf16 $a --wide --logits --reps 5 2>&1 | k) | $($b --model lfm2-1.2b --full --dtype bf16 $a --wide --logits --gap-probe --reps 5 2>&1 | grep 'wall 1× +head')"
  done; done
} > $R/conv.txt 2>&1
cat $R/conv.txt
cd $OUT && tar czf r.tgz r && rm -rf r
