#!/usr/bin/env bash
# bench/25 run 4 (H200): coopmat_shm.comp: the product loop's rate from shared memory
D=.dev-25; R=$OUT/r; mkdir -p $R
LFM2_PIPELINE_STATS=1 $D/gemm_bench shm > $R/shm.txt 2> $R/shm_stats.txt
cat $R/shm.txt
grep -o "spec.*Register Count=[0-9]*" $R/shm_stats.txt | sed -E 's/\[CS\]://' | sort -u
cd $OUT && tar czf r.tgz r && rm -rf r
