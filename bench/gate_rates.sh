#!/bin/sh
# gate_rates.sh - how often the --compare gate (README "Using --compare in CI") cries wolf and how
# often it misses, at 3, 5 and 10 reps (issue 35; note: bench/37_ci_gate_rates.md).
#
# The test hook LFM2_TEST_SLOW (src/base/tuning.h) records chosen dispatches F times, so a kind
# takes F times as long on any device; a slowdown by a ratio is two hooked runs: 1.5x is F=2
# against F=3, 1.2x F=5 against F=6 (the baseline run hooked too). Per rep count, pair i:
#   same   plain run i against plain run i+1 (PAIRS+1 runs): exit 3 is a false alarm (target <= 1 %)
#   kind   the baseline's largest kind at F=2 against F=3 (1.5x): exit 3 is a catch
#   step   every kind at F=5 against F=6 (the whole step 1.2x): exit 3 is a catch
# then, where the whole step at 1.2x is caught in fewer than 95 % of pairs, the whole step at 1.5x
# (F=2 vs 3), 2x (plain vs F=2), 3x (plain vs F=3) over SWEEP_PAIRS pairs: the smallest caught
# >= 95 %. Exit 5 ("undecided": too few reps to tell) counts as neither. The comparisons run on the
# saved --json files (`--compare A --current B`, no GPU); each rate line gives the median delta %
# of its row as measured.
#
# Run from the repo root:  BIN=build/lfm2-profile-stage OUT=/tmp/gate bench/gate_rates.sh
#   ARGS         the profiled run (default: --model lfm2-350m --layers 0:2 --cols 4 --pos 8)
#   REPS         rep counts (default "3 5 10"); PAIRS (default 50); SWEEP_PAIRS (default 20)
#   THRESHOLD    --threshold in % (default 10)
#   BUDGET_S     seconds for the whole script (default 330): the PAIRS false-alarm pairs always
#                run; the slowed pairs stop when their rep count's share is spent (the rate lines
#                say how many pairs ran)
set -u
BIN=${BIN:-build/lfm2-profile-stage}
OUT=${OUT:-bench/out/gate_rates}
ARGS=${ARGS:---model lfm2-350m --layers 0:2 --cols 4 --pos 8}
REPS=${REPS:-3 5 10}
PAIRS=${PAIRS:-50}
SWEEP_PAIRS=${SWEEP_PAIRS:-20}
THRESHOLD=${THRESHOLD:-10}
BUDGET_S=${BUDGET_S:-330}
mkdir -p "$OUT" || exit 1
summary=$OUT/rates.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
n_reps=$(echo "$REPS" | wc -w)
now() { date +%s; }

# run NAME REPS [SLOW]: one profile saved as $dir/NAME.json (kept when it exists: reruns resume)
run() {
    [ -s "$dir/$1.json" ] && return 0
    # shellcheck disable=SC2086
    LFM2_TEST_SLOW=${3:-} "$BIN" $ARGS --reps "$2" --json "$dir/$1.json" > "$dir/$1.txt" 2>&1 ||
        { echo "gate_rates.sh: $BIN $ARGS --reps $2 failed (LFM2_TEST_SLOW='${3:-}'):"; tail -5 "$dir/$1.txt"; exit 1; }
}

# cmp A B ROW >> FILE: compares two saved runs; prints the exit code and ROW's delta %
cmp() {
    "$BIN" --compare "$dir/$1.json" --current "$dir/$2.json" --threshold "$THRESHOLD" --json "$dir/cmp.json" \
        > "$dir/cmp.txt" 2>&1
    rc=$?
    pct=$(awk -v row="$3" '/"name":/ { name = $0; sub(/.*"name":[ \t]*"/, "", name); sub(/".*/, "", name) }
        /"delta_pct":/ && name == row { v = $0; sub(/.*"delta_pct":[ \t]*/, "", v); sub(/,.*/, "", v); print v; exit }' \
        "$dir/cmp.json" 2>/dev/null)
    echo "$rc ${pct:-nan}"
}

# tally FILE: the exit codes and the median delta over lines "rc pct"
tally() {
    sort -t' ' -k2 -g "$1" | awk '{ n++; rc[$1]++; pct[n] = $2 }
        END { if (!n) { print "no pairs"; exit }
              printf "exit 3 in %d/%d pairs (%.1f %%); exit 5 (undecided) %d, exit 0 %d; median delta %+.1f %%",
              rc[3], n, 100 * rc[3] / n, rc[5], rc[0], pct[int((n + 1) / 2)] }'
}

rate3() { awk '$1 == 3 { c++ } END { print NR ? int(100 * c / NR) : 0 }' "$1"; }

start=$(now)
say "gate_rates: $BIN $ARGS, --threshold $THRESHOLD, up to $PAIRS pairs, budget $BUDGET_S s"
k=0
for r in $REPS; do
    k=$((k + 1))
    until_s=$((start + BUDGET_S * k / n_reps))
    dir=$OUT/reps$r
    mkdir -p "$dir"
    run base0 "$r"
    # the kind to slow: the baseline's largest (the compare table lists kinds by time, largest first)
    "$BIN" --compare "$dir/base0.json" --current "$dir/base0.json" > "$dir/cmp.txt" 2>&1
    kind=$(awk '/^  kind / { getline; print $1; exit }' "$dir/cmp.txt")
    : > "$dir/same.txt"
    : > "$dir/kind.txt"
    : > "$dir/step.txt"
    i=0
    while [ $i -lt "$PAIRS" ]; do # every false-alarm pair, whatever the budget
        run "base$((i + 1))" "$r"
        cmp "base$i" "base$((i + 1))" "TOTAL (GPU busy)" >> "$dir/same.txt"
        i=$((i + 1))
    done
    i=0
    sweep_until=$((until_s - (until_s - $(now)) / 4)) # the last quarter for the sweep
    while [ $i -lt "$PAIRS" ] && { [ $i -lt 5 ] || [ "$(now)" -lt "$sweep_until" ]; }; do # 5 at least
        run "kind2_$i" "$r" "$kind=2"
        run "kind3_$i" "$r" "$kind=3"
        cmp "kind2_$i" "kind3_$i" "$kind" >> "$dir/kind.txt"
        run "step5_$i" "$r" "*=5"
        run "step6_$i" "$r" "*=6"
        cmp "step5_$i" "step6_$i" "TOTAL (GPU busy)" >> "$dir/step.txt"
        i=$((i + 1))
    done
    say "reps $r:"
    say "  same configuration twice:   $(tally "$dir/same.txt")"
    say "  $kind 1.5x (F 2 vs 3): $(tally "$dir/kind.txt")"
    say "  whole step 1.2x (F 5 vs 6): $(tally "$dir/step.txt")"
    smallest="1.2x"
    if [ "$(rate3 "$dir/step.txt")" -lt 95 ]; then
        smallest="none up to 3x in the time"
        : > "$dir/sweep1.5.txt"
        : > "$dir/sweep2.txt"
        : > "$dir/sweep3.txt"
        i=0
        while [ $i -lt "$SWEEP_PAIRS" ] && [ "$(now)" -lt "$until_s" ]; do
            run "all2_$i" "$r" "*=2"
            run "all3_$i" "$r" "*=3"
            cmp "all2_$i" "all3_$i" "TOTAL (GPU busy)" >> "$dir/sweep1.5.txt"
            cmp "base$i" "all2_$i" "TOTAL (GPU busy)" >> "$dir/sweep2.txt"
            cmp "base$i" "all3_$i" "TOTAL (GPU busy)" >> "$dir/sweep3.txt"
            i=$((i + 1))
        done
        for f in 1.5 2 3; do
            say "  whole step ${f}x:              $(tally "$dir/sweep$f.txt")"
            if [ "$(rate3 "$dir/sweep$f.txt")" -ge 95 ] && [ "$smallest" = "none up to 3x in the time" ]; then
                smallest="${f}x"
            fi
        done
    fi
    say "  smallest whole-step slowdown caught >= 95 %: $smallest"
done
say "took $(($(now) - start)) s"
