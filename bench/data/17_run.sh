#!/usr/bin/env bash
# bench/17's H200 call (device tool, carry [".gl", ".dev-qwide"]): D holds main's binary (before/)
# and this branch's (after/: lfm2-profile-stage, test_kernels). Outputs into $OUT/r, tarred at the
# end; most wanted first (the device budget was short).
set -u
D=${D:-.dev-qwide}
O=$OUT/r
mkdir -p "$O"
Q=tests/fixtures/qwen35-tiny
G=tests/fixtures/glm-ocr-tiny
A=$D/after/lfm2-profile-stage
t0=$(date +%s)
stamp() { echo "== $1 at $(($(date +%s) - t0)) s" >>"$O/times.txt"; }
# before / after: Qwen3.5-2B 512-token prefill, LFM2-1.2B 64 decode columns (wide)
QA="--model qwen3.5-2b --full --cols 512 --slots 1 --pos 0 --wide --logits --gap-probe --reps 3"
LA="--model lfm2-1.2b --full --cols 64 --pos 64 --wide --logits --gap-probe --reps 3"
for b in before after; do stamp "qwen $b"; "$D/$b/lfm2-profile-stage" $QA --json "$O/q_$b.json" >"$O/q_$b.txt" 2>&1; done
stamp tests
"$D/after/test_kernels" tests/fixtures >"$O/tests.txt" 2>&1; echo "(exit $?)" >>"$O/tests.txt"
for b in before after; do stamp "lfm2 $b"; "$D/$b/lfm2-profile-stage" $LA --json "$O/l_$b.json" >"$O/l_$b.txt" 2>&1; done
stamp goldens
{
    for m in "$Q golden" "$Q/model-f16.gguf golden-f16" "$Q/model-q8_0.gguf golden-q8_0" \
        "$Q/model-q4_0.gguf golden-q4_0" "$Q golden-long" "$Q/model-q4_0.gguf golden-q4_0-long"; do
        set -- $m
        for L in --full "--layers 0:2" "--layers 2:4"; do
            echo "\$ --model $1 $L --wide --golden $2"; "$A" --model "$1" $L --wide --golden "$Q/$2.safetensors"; echo "(exit $?)"
        done
    done
    echo "== dn.chunk path (LFM2_DN_CHUNK_MIN=8)"
    LFM2_DN_CHUNK_MIN=8 "$A" --model "$Q" --full --wide --golden "$Q/golden-long.safetensors"; echo "(exit $?)"
    for gold in golden golden-long; do
        echo "\$ glm $gold --wide"; "$A" --model "$G" --full --wide --golden "$G/$gold.safetensors"; echo "(exit $?)"
    done
} >"$O/golden_qwen_glm_wide.txt" 2>&1
BIN=$A OUT=$O timeout 60 bash bench/h200.sh golden_wide >/dev/null 2>&1
# the new build with one prep a product again (LFM2_QKV_SPLIT): what the shared prep alone gives
stamp split
LFM2_QKV_SPLIT=1 "$A" $QA >"$O/q_split.txt" 2>&1
LFM2_QKV_SPLIT=1 "$A" $LA >"$O/l_split.txt" 2>&1
# gated attention at head dim 256: the tile the tool picks (16 on the H200) against 8
stamp "attn bq 8"
LFM2_ATTN_BQ=8 "$A" --model qwen3.5-2b --full --cols 512 --slots 1 --pos 0 --wide --logits --reps 3 2>&1 |
    grep -E "GPU busy|attn" >"$O/attn_bq8.txt"
stamp done
