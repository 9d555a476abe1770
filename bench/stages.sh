#!/usr/bin/env bash
# bench/stages.sh - --stages on the GPU (issue 40, bench/38_pipeline_stages.md): LFM2-1.2B,
# LFM2-2.6B and Qwen3.5-2B (built-ins, bf16, random weights) at 1, 16 and 64 columns (decode
# shape, pos 64, logits on the last stage), K = 2 and 4: the even split, the per-layer marginal
# passes, the balanced split predicted and measured. One file per run in $OUT (text and JSON);
# summary.txt collects the pipeline tables. Run from the repo root:
#   BIN=build/lfm2-profile-stage OUT=dir bash bench/stages.sh
# Overrides: MODELS="lfm2-1.2b", COLS="1 16", KS="2", REPS=10, PLAN64=--wide (the plan at 64
# columns; 1 and 16 columns run the batch plan).
set -u
B=${BIN:-build/lfm2-profile-stage}
O=${OUT:-bench/out}
MODELS=${MODELS:-lfm2-1.2b lfm2-2.6b qwen3.5-2b}
COLS=${COLS:-1 16 64}
KS=${KS:-2 4}
REPS=${REPS:-10}
PLAN64=${PLAN64:---wide}
mkdir -p "$O"
start=$(date +%s)
"$B" --list-devices > "$O/devices.txt" 2>&1
for k in $KS; do
    for m in $MODELS; do
        for c in $COLS; do
            plan=""
            [ "$c" -ge 64 ] && plan=$PLAN64
            name="$(basename "$m").c$c.k$k"
            t0=$(date +%s)
            "$B" --model "$m" --stages "$k" --cols "$c" --pos 64 --logits --reps "$REPS" $plan \
                --json "$O/$name.json" > "$O/$name.txt" 2> "$O/$name.err"
            rc=$?
            echo "$name: exit $rc, $(( $(date +%s) - t0 )) s (total $(( $(date +%s) - start )) s)"
            {
                echo "### $name ($m, $c cols, K=$k${plan:+, $plan}): exit $rc"
                sed -n '/^== pipeline:/,$p' "$O/$name.txt"
                tail -3 "$O/$name.err"
                echo
            } >> "$O/summary.txt"
        done
    done
done
echo "all runs: $(( $(date +%s) - start )) s"
