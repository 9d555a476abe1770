#!/bin/sh
# gate.sh MODE BIN ARGS... : the --compare gate run as CI runs it (issue 35), on a model the args
# name, with the test hook LFM2_TEST_SLOW (tuning.h) making a known slowdown.
#   slow REPS  every kernel 20x slower at REPS reps: exit 3, saved (--compare A --current B) and live
#   same       a saved run against itself, and the same run twice live at 10 reps: exit 0 (threshold
#              400 % live: lavapipe on a shared CPU ran 2.8x slower between two runs in a minute
#              (the other processes' load); the gate's false alarms are measured by bench/gate_rates.sh)
#   undecided  one rep a side, 3x slower: too few reps to tell, exit 5 naming the reps to rerun with
#   precheck   a live --compare against a baseline of other columns or another shard: exit 2 naming
#              the difference before the GPU opens (no Vulkan driver then: opening it would exit 1)
#   precision  a wide run in exact precision against one in serving (--precision): exit 2 naming both,
#              saved and live (before the GPU opens); the JSON records it
mode=$1; bin=$2; shift 2
reps=10
if [ "$mode" = slow ]; then reps=$1; shift; fi
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
expect() { # CODE TEXT cmd...: like expect.sh
    code=$1; text=$2; shift 2
    out=$("$@" 2>&1); rc=$?
    printf '%s\n' "$out" | tail -15
    [ "$rc" = "$code" ] || { echo "gate.sh: $mode: exit $rc, expected $code"; exit 1; }
    case "$out" in *"$text"*) ;; *) echo "gate.sh: $mode: output lacks '$text'"; exit 1;; esac
}
case $mode in
slow)
    "$bin" "$@" --reps "$reps" --json "$d/base.json" > /dev/null || exit 1
    LFM2_TEST_SLOW='*=20' "$bin" "$@" --reps "$reps" --json "$d/slow.json" > /dev/null || exit 1
    expect 3 "REGRESSION" "$bin" --compare "$d/base.json" --current "$d/slow.json"
    LFM2_TEST_SLOW='*=20' expect 3 "REGRESSION" "$bin" "$@" --reps "$reps" --compare "$d/base.json"
    ;;
same)
    "$bin" "$@" --reps 10 --json "$d/base.json" > /dev/null || exit 1
    expect 0 "no regression" "$bin" --compare "$d/base.json" --current "$d/base.json"
    expect 0 "no regression" "$bin" "$@" --reps 10 --compare "$d/base.json" --threshold 400
    ;;
undecided)
    "$bin" "$@" --reps 1 --json "$d/base.json" > /dev/null || exit 1
    LFM2_TEST_SLOW='*=3' "$bin" "$@" --reps 1 --json "$d/slow.json" > /dev/null || exit 1
    expect 5 "rerun both runs with --reps" "$bin" --compare "$d/base.json" --current "$d/slow.json"
    ;;
precheck)
    "$bin" "$@" --cols 2 --reps 1 --json "$d/base.json" > /dev/null || exit 1
    export VK_DRIVER_FILES=/nonexistent/icd.json VK_ICD_FILENAMES=/nonexistent/icd.json
    expect 2 "cannot compare: shape cols differs: base 2, current 4" "$bin" "$@" --cols 4 --compare "$d/base.json"
    expect 2 "cannot compare: shape plan differs" "$bin" "$@" --cols 2 --wide --compare "$d/base.json"
    ;;
precision)
    "$bin" "$@" --wide --cols 6 --reps 1 --json "$d/exact.json" > /dev/null || exit 1
    "$bin" "$@" --wide --cols 6 --reps 1 --precision serving --json "$d/serving.json" > /dev/null || exit 1
    grep -q '"precision":[[:space:]]*"serving"' "$d/serving.json" || { echo "gate.sh: precision: no \"precision\": \"serving\" in the JSON"; exit 1; }
    expect 2 "cannot compare: precision differs: base 'exact', current 'serving'" "$bin" --compare "$d/exact.json" --current "$d/serving.json"
    export VK_DRIVER_FILES=/nonexistent/icd.json VK_ICD_FILENAMES=/nonexistent/icd.json
    expect 2 "cannot compare: precision differs: base 'serving', current 'exact'" "$bin" "$@" --wide --cols 6 --compare "$d/serving.json"
    ;;
*) echo "gate.sh: unknown mode $mode"; exit 2;;
esac
echo "gate.sh: $mode passed"
