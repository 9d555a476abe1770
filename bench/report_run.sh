#!/usr/bin/env bash
# bench/report_run.sh - issue 37 on an H100/H200 (device tool, `build/` carried): does plan auto
# pick the faster plan at each width, and the HTML/CSV/text reports of one real run for docs/.
#   run command: bash bench/report_run.sh   (outputs under $OUT, or bench/out when unset)
# Crossover: LFM2-1.2B with the head, BF16 and Q4_0, widths 1..64, plans batch, wide and auto; auto
# should match the faster of batch and wide at each width (same kernels as one of them).
set -u
B=${BIN:-build/lfm2-profile-stage}
O=${OUT:-bench/out}
mkdir -p "$O"
for dt in bf16 q4_0; do
    "$B" --model lfm2-1.2b --full --logits --dtype $dt --cols 1,4,5,6,8,16,64 --plans batch,wide,auto --reps 20 \
        --csv "$O/37_crossover_$dt.csv" --html "$O/37_crossover_$dt.html" > "$O/37_crossover_$dt.txt" 2>&1
    echo "crossover $dt: exit $?"
done
# one report for docs/: the default (auto) plan at 16 columns, text, HTML and CSV
"$B" --model lfm2-1.2b --full --logits --cols 16 --gap-probe --reps 20 --json "$O/37_report.json" \
    --csv "$O/37_report.csv" --html "$O/37_report.html" > "$O/37_report.txt" 2>&1
echo "report: exit $?"
