#!/usr/bin/env bash
# bench/25 run 13 (H200): main with the SwiGLU 8-subgroup tiles from 128 columns (attention tiles
# in reverse order): tests, goldens, the issue-8 targets.
D=.dev-25; R=$OUT/r; mkdir -p $R
export BIN=$D/lfm2-profile-stage GEMM_BENCH=$D/gemm_bench
t0=$(date +%s); st() { echo "== $1 at $(($(date +%s) - t0)) s" >>$R/times.txt; }
st tests
{ echo "== test_kernels: $(timeout 200 $D/test_kernels tests/fixtures gemm 2>&1 | tail -1)"; } > $R/tests.txt 2>&1
OUT=$R timeout 60 bash $D/h200.sh golden >/dev/null 2>&1
OUT=$R timeout 90 bash $D/h200.sh golden_wide >/dev/null 2>&1
grep -h "checks passed\|FAIL\|(exit [1-9]" $R/golden*.txt | sort | uniq -c >> $R/tests.txt
for m in qwen35-tiny glm-ocr-tiny; do echo "== $m long wide: $($BIN --model tests/fixtures/$m --full --wide --golden tests/fixtures/$m/golden-long.safetensors 2>&1 | tail -1)"; done >> $R/tests.txt
cat $R/tests.txt
st targets
ROOF=498.8 OUT=$R timeout 300 bash $D/h200.sh targets > $R/targets_out.txt 2>&1
cat $R/targets_out.txt
st done
cat $R/times.txt
cd $OUT && tar czf r.tgz r && rm -rf r
