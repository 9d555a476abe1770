#!/usr/bin/env bash
# tests/fuzz/campaign.sh OUTDIR SECONDS TARGET:JOBS... - a long libFuzzer campaign: each target runs
# JOBS parallel jobs (libFuzzer -jobs/-workers, one shared corpus per target, seeded from
# tests/fuzz/corpus) for at most SECONDS each, then prints one line per target: executions summed over
# its jobs, the slowest and fastest job's rate, and any crash, leak, timeout or OOM artifact.
# Binaries come from build-fuzz (tests/fuzz/README.md); FUZZ_BIN overrides the folder.
#   example: tests/fuzz/campaign.sh /tmp/fz 420 compare:4 golden:2 index:2 safetensors:2 gguf:1 config:1
set -u
out=$1 secs=$2
shift 2
bin=${FUZZ_BIN:-build-fuzz}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
for spec in "$@"; do
    t=${spec%%:*} j=${spec##*:}
    mkdir -p "$out/$t/corpus" "$out/$t/art"
    (cd "$out/$t" && nice -n 19 "$root/$bin/fuzz_$t" -jobs="$j" -workers="$j" -max_total_time="$secs" \
        -timeout=60 -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 -artifact_prefix=art/ \
        corpus "$root/tests/fuzz/corpus/$t" >/dev/null 2>&1) &
done
wait
printf '%-12s %12s %6s %10s %10s %s\n' target executions jobs 'min/s' 'max/s' findings
for spec in "$@"; do
    t=${spec%%:*} j=${spec##*:}
    logs=$(ls "$out/$t"/fuzz-*.log 2>/dev/null)
    n=$(cat $logs /dev/null | sed -n 's/^stat::number_of_executed_units: *//p' | awk '{s+=$1} END {print s+0}')
    lo=$(cat $logs /dev/null | sed -n 's/^stat::average_exec_per_sec: *//p' | sort -n | head -1)
    hi=$(cat $logs /dev/null | sed -n 's/^stat::average_exec_per_sec: *//p' | sort -n | tail -1)
    done_jobs=$(cat $logs /dev/null | grep -c '^stat::number_of_executed_units')
    found=$(ls "$out/$t/art" | tr '\n' ' ')
    printf '%-12s %12s %3s/%-2s %10s %10s %s\n' "$t" "$n" "$done_jobs" "$j" "${lo:-?}" "${hi:-?}" \
        "${found:-none}"
done
