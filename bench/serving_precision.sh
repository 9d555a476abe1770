#!/usr/bin/env bash
# bench/serving_precision.sh [BIN [FIXTURES]] - the golden error of every fixture in both precisions
# (bench/41_serving_precision.md): each model file against its goldens through the wide plan, whole
# and split at the ctests' layer, --precision exact and serving; one row a (model, golden, layers):
# the largest max_rel over its checks, exact and serving, and their ratio. Also the batch plan's
# serving run of each short golden (its kernels are f32: the same figure as exact). Runs on any
# device (lavapipe: the FMA twin rounds as the tensor cores do; ~3 CPU-minutes).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/lfm2-profile-stage}
fx=${2:-$root/tests/fixtures}

worst() { # the largest max_rel of a golden run's lines (exit status ignored: a FAIL is a figure too)
    "$bin" "$@" 2>/dev/null | awk '$1 == "golden" && $6 == "max_rel" {if ($7 + 0 > m) m = $7 + 0} END {printf "%.3e", m}'
}

row() { # MODEL GOLDEN LAYERS PLAN
    local model=$1 gold=$2 layers=$3 plan=$4 shard
    [ "$layers" = full ] && shard=(--full) || shard=(--layers "$layers")
    local ex sv
    ex=$(worst --model "$model" "${shard[@]}" $plan --precision exact --golden "$gold")
    sv=$(worst --model "$model" "${shard[@]}" $plan --precision serving --golden "$gold")
    printf '| %s | %s | %s | %s | %s | %s | %.0f |\n' "${model#"$fx"/}" "$(basename "$gold" .safetensors)" "$layers" \
        "${plan:---batch}" "$ex" "$sv" "$(awk -v a="$ex" -v b="$sv" 'BEGIN {print (a + 0 > 0 ? b / a : 0)}')"
}

echo "| model | golden | layers | plan | exact max_rel | serving max_rel | serving / exact |"
echo "|---|---|---|---|---:|---:|---:|"
for fam in lfm2-tiny:3 qwen35-tiny:2; do
    d=$fx/${fam%:*} k=${fam#*:}
    n=$(awk -F: '/"num_hidden_layers"/ {gsub(/[^0-9]/, "", $2); print $2; exit}' "$d/config.json")
    for pair in model.safetensors:golden model-f16.gguf:golden-f16 model-q8_0.gguf:golden-q8_0 model-q4_0.gguf:golden-q4_0; do
        m=$d/${pair%:*} g=$d/${pair#*:}.safetensors
        [ "${pair%:*}" = model.safetensors ] && m=$d
        for l in full 0:$k $k:$n; do row "$m" "$g" "$l" --wide; done
        row "$m" "$g" full ""
    done
    row "$d" "$d/golden-long.safetensors" full --wide
    row "$d/model-q4_0.gguf" "$d/golden-q4_0-long.safetensors" full --wide
done
g=$fx/glm-ocr-tiny
for l in full 0:1 1:3; do row "$g" "$g/golden.safetensors" "$l" --wide; done
row "$g" "$g/golden.safetensors" full ""
row "$g" "$g/golden-long.safetensors" full --wide
