#!/usr/bin/env bash
# one call: qmv's measurement (bench/16), then gemm3's sweep (bench/18)
O=$OUT
mkdir -p $O/q
D=.dev-qmv; R=$O/q
BIN=$D/lfm2-profile-stage OUT=$R timeout 240 bash $D/h200.sh qmv >$R/qmv_tail.txt 2>&1; cat $R/qmv.txt
BIN=$D/lfm2-profile-stage OUT=$R timeout 60 bash $D/h200.sh golden >/dev/null 2>&1
grep "checks passed" $R/golden.txt | sort | uniq -c
timeout 120 $D/test_kernels tests/fixtures >$R/test_kernels.txt 2>&1; tail -1 $R/test_kernels.txt
python3 $D/per_op.py $R >$R/per_op.txt; cat $R/per_op.txt
(cd $O && tar czf qmv.tgz q && rm -rf q)
OUT=$O timeout 330 bash .dev-gemm3/run1.sh
(cd $O && tar czf gemm3.tgz r); grep -E "^==|sum" $O/r/sweep.txt | tail -5
