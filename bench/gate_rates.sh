#!/bin/sh
# gate_rates.sh - how often the --compare gate (README "Compare") cries wolf and how often it misses,
# at 3, 5 and 10 reps (issue 35; note: bench/37_ci_gate_rates.md).
#
#   false alarms  the same configuration run PAIRS+1 times; consecutive runs compared (PAIRS pairs):
#                 exit 3 is a false alarm (target <= 1 %), exit 5 is "undecided"
#   misses        the top kind slowed 1.5x and the whole step 1.2x by the test hook LFM2_TEST_SLOW
#                 (src/base/tuning.h), each run against a baseline run: exit 3 is a catch
#   smallest      where the whole step at 1.2x is caught in fewer than 95 % of pairs, the whole step
#                 slowed 1.5x, 2x, 3x, 5x, 10x (SWEEP_PAIRS pairs each) until one is caught >= 95 %
#
# The comparisons run on saved --json files (`--compare A --current B`, no GPU); the device runs
# only the profiles. The hook records a slowed dispatch F times (a fraction: one more copy on that
# share of its grid), so the slowdown it makes is near F, not F: the report prints the measured one
# (median of the pairs' delta %).
#
# Run from the repo root:  BIN=build/lfm2-profile-stage OUT=/tmp/gate bench/gate_rates.sh
#   ARGS         the profiled run (default: --model lfm2-350m --layers 0:2 --cols 4 --pos 8)
#   REPS         rep counts (default "3 5 10"); PAIRS (default 50); SWEEP_PAIRS (default 20)
#   THRESHOLD    --threshold in % (default 10)
set -u
BIN=${BIN:-build/lfm2-profile-stage}
OUT=${OUT:-bench/out/gate_rates}
ARGS=${ARGS:---model lfm2-350m --layers 0:2 --cols 4 --pos 8}
REPS=${REPS:-3 5 10}
PAIRS=${PAIRS:-50}
SWEEP_PAIRS=${SWEEP_PAIRS:-20}
THRESHOLD=${THRESHOLD:-10}
mkdir -p "$OUT" || exit 1
summary=$OUT/rates.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }

# run NAME REPS [SLOW]: one profile saved as $dir/NAME.json
run() {
    # shellcheck disable=SC2086
    LFM2_TEST_SLOW=${3:-} "$BIN" $ARGS --reps "$2" --json "$dir/$1.json" > "$dir/$1.txt" 2>&1 ||
        { echo "gate_rates.sh: $BIN $ARGS --reps $2 failed (LFM2_TEST_SLOW='${3:-}'):"; tail -5 "$dir/$1.txt"; exit 1; }
}

# cmp A B ROW: compares two saved runs; prints the exit code and ROW's delta % (the comparison's JSON)
cmp() {
    "$BIN" --compare "$dir/$1.json" --current "$dir/$2.json" --threshold "$THRESHOLD" --json "$dir/cmp.json" \
        > "$dir/cmp.txt" 2>&1
    rc=$?
    pct=$(awk -v row="$3" '/"name":/ { name = $0; sub(/.*"name":[ \t]*"/, "", name); sub(/".*/, "", name) }
        /"delta_pct":/ && name == row { v = $0; sub(/.*"delta_pct":[ \t]*/, "", v); sub(/,.*/, "", v); print v; exit }' \
        "$dir/cmp.json" 2>/dev/null)
    echo "$rc ${pct:-nan}"
}

# tally FILE: "exit 3: a/n (p %), exit 5: u, median delta d %" over lines "rc pct"
tally() {
    sort -t' ' -k2 -g "$1" | awk '{ n++; rc[$1]++; pct[n] = $2 }
        END { printf "exit 3: %d/%d (%.1f %%), undecided (exit 5): %d, exit 0: %d, median delta %s %%",
              rc[3], n, 100 * rc[3] / n, rc[5], rc[0], pct[int((n + 1) / 2)] }'
}

rate3() { awk '$1 == 3 { c++ } END { print int(100 * c / NR) }' "$1"; }

start=$(date +%s)
say "gate_rates: $BIN $ARGS, threshold $THRESHOLD %, $PAIRS pairs"
for r in $REPS; do
    dir=$OUT/reps$r
    mkdir -p "$dir"
    i=0
    while [ $i -le "$PAIRS" ]; do run "base$i" "$r"; i=$((i + 1)); done
    # the kind to slow: the baseline's largest (the compare table lists kinds by time, largest first)
    "$BIN" --compare "$dir/base0.json" --current "$dir/base0.json" > "$dir/cmp.txt" 2>&1
    kind=$(awk '/^  kind / { getline; print $1; exit }' "$dir/cmp.txt")
    : > "$dir/same.txt"
    : > "$dir/kind.txt"
    : > "$dir/step.txt"
    i=0
    while [ $i -lt "$PAIRS" ]; do
        cmp "base$i" "base$((i + 1))" "TOTAL (GPU busy)" >> "$dir/same.txt"
        run "kind$i" "$r" "$kind=1.5"
        cmp "base$i" "kind$i" "$kind" >> "$dir/kind.txt"
        run "step$i" "$r" "*=1.2"
        cmp "base$i" "step$i" "TOTAL (GPU busy)" >> "$dir/step.txt"
        i=$((i + 1))
    done
    say "reps $r:"
    say "  same config twice:        $(tally "$dir/same.txt")"
    say "  $kind 1.5x: $(tally "$dir/kind.txt")"
    say "  whole step 1.2x:          $(tally "$dir/step.txt")"
    smallest="1.2"
    if [ "$(rate3 "$dir/step.txt")" -lt 95 ]; then
        smallest="none up to 10"
        for f in 1.5 2 3 5 10; do
            : > "$dir/sweep$f.txt"
            i=0
            while [ $i -lt "$SWEEP_PAIRS" ]; do
                run "sweep$f-$i" "$r" "*=$f"
                cmp "base$i" "sweep$f-$i" "TOTAL (GPU busy)" >> "$dir/sweep$f.txt"
                i=$((i + 1))
            done
            say "  whole step ${f}x:           $(tally "$dir/sweep$f.txt")"
            if [ "$(rate3 "$dir/sweep$f.txt")" -ge 95 ]; then smallest=$f; break; fi
        done
    fi
    say "  smallest whole-step slowdown caught >= 95 %: $smallest (hook factor; the measured delta above)"
done
say "took $(( $(date +%s) - start )) s"
