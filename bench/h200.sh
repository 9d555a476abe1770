#!/usr/bin/env bash
# bench/h200.sh WHAT... - the runs kept in bench/ notes, on the lent H200 (device tool):
#   run command: for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; bash bench/h200.sh all
# with carry [".gl", "build"]. Fixtures are read from tests/fixtures (tracked, so they travel).
# Outputs go to $OUT (or bench/out when OUT is unset), one file per section. Sections by issue:
# wide plan (8): gemm golden_wide wide_goldens wide wide_kinds targets narrow34; Qwen3.5 (9): qwen
# qwen_wide; spec (10): spec qwen_spec; numbers (13): numbers; GLM-OCR (12): glm; tensor cores at the
# Vulkan roof (38): cm2 and cm2_speed (bench/39; need build/ configured with -DLFM2_BENCH=ON), cm2_test
# (test_gemm_cm2 alone), drift (bench/38: one-layer
# shards), khr (bench/42: the gemm on
# VK_KHR_cooperative_matrix against NV v1), cm2_goldens (every golden with --tune gemm_path=cm2, both
# precisions; LFM2-1.2B's prefill nv/cm2 in serving, then exact precision). The sections that measured
# switches since deleted (chain, batch_floor, batch_final, qmv; notes 12, 16, 26, 28-29) are in
# `git show 873fff1:bench/h200.sh`.
set -u
B=${BIN:-build/lfm2-profile-stage}
O=${OUT:-bench/out}
mkdir -p "$O"
F=tests/fixtures/lfm2-tiny
Q=tests/fixtures/qwen35-tiny
run() { echo "\$ lfm2-profile-stage $*"; "$B" "$@"; echo "(exit $?)"; echo; }
devices() { run --list-devices; }
golden() {
    for m in "$F golden" "$F/model-f16.gguf golden-f16" "$F/model-q8_0.gguf golden-q8_0" "$F/model-q4_0.gguf golden-q4_0"; do
        set -- $m
        for L in --full "--layers 0:3" "--layers 3:6"; do run --model "$1" $L --golden "$F/$2.safetensors"; done
    done
}
load() {
    for m in lfm2-350m lfm2-700m lfm2-1.2b lfm2.5-1.2b lfm2-2.6b qwen3.5-0.8b qwen3.5-2b qwen3.5-4b qwen3.5-9b glm-ocr; do
        run --model $m --full --load-only
    done
    run --model lfm2-1.2b --full --dtype q4_0 --load-only
}
profile() {
    run --model lfm2-1.2b --layers 0:16 --cols 16 --pos 64 --logits --gap-probe --json "$O/p16.json"
    run --model lfm2-1.2b --layers 0:16 --cols 16 --pos 64 --logits --gap-probe --slots 1 --json "$O/p16s1.json"
    run --model lfm2-1.2b --layers 0:8 --cols 16 --pos 64 --logits --gap-probe --json "$O/p0_8.json"
    run --model lfm2-1.2b --layers 8:16 --cols 16 --pos 64 --logits --gap-probe --json "$O/p8_16.json"
    run --model lfm2-1.2b --layers 0:16 --cols 1 --pos 64 --logits --gap-probe
}
quick() {
    run --model lfm2-1.2b --layers 0:16 --cols 16 --pos 64 --logits --gap-probe
    run --model lfm2-1.2b --layers 0:16 --cols 1 --pos 64 --logits --gap-probe
}
dtypes() { # the other weight types at 16 columns
    for dt in f16 q8_0 q4_0; do
        echo "== cols=16 dtype=$dt"
        "$B" --model lfm2-1.2b --layers 0:16 --cols 16 --pos 64 --logits --reps 5 --dtype $dt | grep -E "GPU busy|matmul"
    done
}
spec() { # issue 10: what the spec plan's snapshots cost, against the batch plan's prefill shape at
    # the same columns (4 slots x 4 tokens; --spec adds shortconv.snap in place of shortconv and a
    # logit for every column, which --logits gives the batch run too); then the golden spec checks
    run --model lfm2-1.2b --full --cols 16 --slots 4 --logits --gap-probe --json "$O/batch16s4.json"
    run --model lfm2-1.2b --full --spec --cols 16 --slots 4 --logits --gap-probe --json "$O/spec16s4.json"
    run --model lfm2-1.2b --full --spec --cols 16 --logits --gap-probe
    run --model lfm2-1.2b --full --spec --cols 64 --slots 8 --logits --gap-probe
    run --model lfm2-1.2b --full --cols 64 --slots 8 --logits --gap-probe
    for m in "$F golden" "$F/model-q4_0.gguf golden-q4_0"; do
        set -- $m
        for L in --full "--layers 0:3" "--layers 3:6"; do run --model "$1" $L --spec --golden "$F/$2.safetensors"; done
    done
    run --model $F --full --spec --golden "$F/golden-long.safetensors"
}
trace() {
    run --model lfm2-1.2b --layers 0:16 --cols 16 --pos 64 --logits --reps 3 --trace "$O/p16.trace.json" --markdown
}
numbers() { # issue 13: instrumentation cost, sampled vs full timestamps, attribution closure (note 07)
    M="--model ${MODEL:-lfm2-1.2b} --full --pos 64 --logits --reps ${REPS:-20}"
    for c in 1 16 64; do
        echo "== cols=$c: no timestamps (the uninstrumented reference: gap probe only)"
        run $M --cols $c --timing none --gap-probe --json "$O/n${c}_none.json"
        echo "== cols=$c: full timestamps (default mode)"
        run $M --cols $c --gap-probe --json "$O/n${c}_full.json"
        echo "== cols=$c: sampled timestamps, stride 8 and 4"
        run $M --cols $c --gap-probe --timing sampled --json "$O/n${c}_s8.json"
        run $M --cols $c --gap-probe --timing sampled --sample-stride 4 --json "$O/n${c}_s4.json"
        echo "== cols=$c: attribution by kind (no timestamps in the measured steps)"
        run $M --cols $c --attribution --json "$O/n${c}_attr.json"
        echo "== cols=$c: sampled vs full, per kind (informational: exit 3 means sampled reads higher)"
        run --compare "$O/n${c}_full.json" --current "$O/n${c}_s8.json" --threshold 3
        echo "== cols=$c: full vs full again (must be exit 0: the noise-aware compare)"
        run $M --cols $c --gap-probe --json "$O/n${c}_full2.json"
        run --compare "$O/n${c}_full.json" --current "$O/n${c}_full2.json"
    done
    echo "== attribution per kind and op at 16 columns"
    run $M --cols 16 --attribution-ops
    echo "== plan crossover (batch; wide once it is merged)"
    run --model ${MODEL:-lfm2-1.2b} --full --pos 64 --logits --reps 10 --cols 1,16,64,256 --plans batch,wide
}
gemm() { # the wide plan's matrix products alone (bench/06): LFM2-1.2B's 16 layers at 512 columns
    G=${GEMM_BENCH:-$(dirname "$B")/gemm_bench}
    for dt in bf16 f16 q8_0 q4_0; do echo "\$ gemm_bench $dt 512 20"; "$G" $dt 512 20; done
    echo "\$ LFM2_GEMM_ROOF=1 gemm_bench f16 512 20"; LFM2_GEMM_ROOF=1 "$G" f16 512 20
    echo "\$ LFM2_TEST_NO_COOPMAT=1 gemm_bench bf16 512 5"; LFM2_TEST_NO_COOPMAT=1 "$G" bf16 512 5
    for c in 32 64 128 256 1024; do echo "\$ gemm_bench bf16 $c 10"; "$G" bf16 $c 10; done
}

golden_wide() { # the same goldens through the wide plan, and the long ones (288-column prefill steps)
    for m in "$F golden" "$F/model-f16.gguf golden-f16" "$F/model-q8_0.gguf golden-q8_0" "$F/model-q4_0.gguf golden-q4_0"; do
        set -- $m
        for L in --full "--layers 0:3" "--layers 3:6"; do run --model "$1" $L --wide --golden "$F/$2.safetensors"; done
    done
    for L in --full "--layers 0:3" "--layers 3:6"; do run --model "$F" $L --wide --golden "$F/golden-long.safetensors"; done
    run --model "$F/model-q4_0.gguf" --full --wide --golden "$F/golden-q4_0-long.safetensors"
}

wide_goldens() { # every family's tiny goldens through the wide plan (bench/35): LFM2 (golden_wide), then
    # Qwen3.5 (four formats, whole and split at layer 2 of 4, the long ones) and GLM-OCR (short and
    # long, whole and split at layers 1 and 3). One "passed" line a run: count them.
    golden_wide
    local m L G=${GLM_FX:-tests/fixtures/glm-ocr-tiny}
    for m in "$Q golden" "$Q/model-f16.gguf golden-f16" "$Q/model-q8_0.gguf golden-q8_0" \
        "$Q/model-q4_0.gguf golden-q4_0" "$Q golden-long" "$Q/model-q4_0.gguf golden-q4_0-long"; do
        set -- $m
        for L in --full "--layers 0:2" "--layers 2:4"; do run --model "$1" $L --wide --golden "$Q/$2.safetensors"; done
    done
    for m in golden golden-long; do
        for L in --full "--layers 0:1" "--layers 1:3"; do run --model "$G" $L --wide --golden "$G/$m.safetensors"; done
    done
}

# json_num FILE OBJECT KEY: the number KEY of the first OBJECT in a --json file (cJSON prints one
# key a line); OBJECT "" takes the first KEY anywhere.
json_num() { awk -v o="\"$2\":" -v k="\"$3\":" -F'[:,]' 'o == "\"\":" || index($0, o) { f = 1 } f && index($0, k) { gsub(/[ \t]/, "", $2); print $2; exit }' "$1"; }

wide() { # issue 8 targets: LFM2-1.2B full with the head, step time = gap-probe wall 1x WITH the head,
    # no timestamps (min of 10); floor = stored weight bytes / this run's copy bandwidth; TFLOP/s =
    # 2 x weight elements x columns / wall (matrix products only)
    local J="$O/wide.json" el=0
    printf '%-5s %-6s %-12s %9s %9s %8s %9s %8s\n' dtype plan step "wall µs" "floor µs" "x floor" "tok/s" "TFLOP/s"
    for dt in bf16 q4_0; do
        local mb
        mb=$("$B" --model lfm2-1.2b --full --dtype $dt --load-only | sed -n 's/.*, \([0-9.]*\) MB as stored.*/\1/p')
        [ $dt = bf16 ] && el=$(awk -v m="$mb" 'BEGIN { print m * 1e6 / 2 }')
        for plan in batch wide; do
            for step in "decode 1" "decode 16" "decode 64" "decode 256" "prefill 512"; do
                set -- $step
                local args="--cols $2 --pos 64"
                [ $1 = prefill ] && args="--cols $2 --slots 1 --pos 0"
                [ $plan = wide ] && args="$args --wide"
                if ! "$B" --model lfm2-1.2b --full --dtype $dt $args --logits --gap-probe --reps 3 --json "$J" \
                    >"$O/wide_run.log" 2>&1; then
                    echo "$dt $plan $step: failed"; tail -n 3 "$O/wide_run.log"; continue
                fi
                local wall gbps
                wall=$(json_num "$J" lm_head wall1_us)
                gbps=$(json_num "$J" "" copy_gbps)
                awk -v dt=$dt -v pl=$plan -v st="$1 $2" -v w="$wall" -v mb="$mb" -v g="$gbps" -v c=$2 -v el="$el" \
                    'BEGIN { f = mb * 1e3 / g; printf "%-5s %-6s %-12s %9.0f %9.0f %8.2f %9.0f %8.1f\n",
                             dt, pl, st, w, f, w / f, c * 1e6 / w, 2 * el * c / w / 1e6 }'
            done
        done
    done
}

wide_kinds() { # the wide plan's own kernels at a 512-token prefill, then the batch plan's
    echo "== prefill 512 bf16 wide"
    "$B" --model lfm2-1.2b --full --cols 512 --slots 1 --pos 0 --logits --reps 3 --wide |
        grep -E "GPU busy|attn|shortconv|matmul|gemm"
    echo "== prefill 512 bf16 batch"
    "$B" --model lfm2-1.2b --full --cols 512 --slots 1 --pos 0 --logits --reps 3 | grep -E "GPU busy|attn|shortconv"
}

targets() { # issue 8's target rows: LFM2-1.2B full with the head, gap-probe wall 1x without timestamps
    # (min of 3); batch plan at 1 and 16 columns, wide at 16, 64, 128, 256 and a 512-token prefill of one slot.
    # floor = stored weight bytes / 3.93 TB/s (the H200's copy bandwidth measured in bench/01, the
    # issue's floor); x copy = the wall over weight bytes / this run's own copy bandwidth (the
    # profile's copy kernel on this card: the ratio that holds on other cards too); for the
    # prefill also the coopmat roof: 2 x weight elements x 512 / the rate coopmat_roof.comp measures
    # (gemm_bench prints it; ROOF=TFLOP/s skips that run)
    local G=${GEMM_BENCH:-$(dirname "$B")/gemm_bench} J="$O/targets.json" roof=${ROOF:-} el=0
    [ -z "$roof" ] && roof=$("$G" f16 32 1 1 | sed -n 's/^coopmat roof.*: \([0-9.]*\) TFLOP.*/\1/p')
    [ -z "$roof" ] && roof=503
    echo "coopmat roof ${roof} TFLOP/s"
    # a warm-up step first: the first run of a call read up to 30 % high (bench/21: 1.345 against
    # 1.03 ms in the same call's gap probe)
    "$B" --model lfm2-1.2b --full --cols 1 --pos 64 --logits --gap-probe --reps 3 --json "$J" >/dev/null 2>&1
    echo "device: $(sed -n 's/^[[:space:]]*"name":[[:space:]]*"\(.*\)",*$/\1/p' "$J" | head -1)"
    printf '%-5s %-6s %-12s %9s %9s %9s %8s %8s %9s %8s %9s\n' dtype plan step "target ms" "wall ms" "floor ms" "x floor" \
        "x copy" "roof ms" "x roof" "tok/s"
    for dt in bf16 q4_0; do
        local mb
        mb=$("$B" --model lfm2-1.2b --full --dtype $dt --load-only | sed -n 's/.*, \([0-9.]*\) MB as stored.*/\1/p')
        [ $dt = bf16 ] && el=$(awk -v m="$mb" 'BEGIN { print m * 1e6 / 2 }')
        for row in "batch decode 1" "batch decode 16" "wide decode 16" "wide decode 64" "wide decode 128" "wide decode 256" \
            "wide prefill 512"; do
            set -- $row
            local plan=$1 step=$2 c=$3 args="--cols $3 --pos 64" tgt=-
            [ $step = prefill ] && args="--cols $c --slots 1 --pos 0"
            [ $plan = wide ] && args="$args --wide"
            case "$dt $c" in "bf16 1") tgt=0.69 ;; "bf16 16") tgt=0.75 ;; "bf16 64") tgt=1.0 ;; "bf16 256") tgt=2.0 ;;
                "bf16 512") tgt=3 ;; "q4_0 1") tgt=0.30 ;; "q4_0 16") tgt=0.45 ;; "q4_0 512") tgt=4 ;; esac
            if ! "$B" --model lfm2-1.2b --full --dtype $dt $args --logits --gap-probe --reps 3 --json "$J" \
                >"$O/targets_run.log" 2>&1; then
                echo "$dt $plan $step $c: failed"; tail -n 3 "$O/targets_run.log"; continue
            fi
            local wall gbps
            wall=$(json_num "$J" lm_head wall1_us)
            gbps=$(json_num "$J" "" copy_gbps)
            awk -v dt=$dt -v pl=$plan -v st="$step $c" -v t=$tgt -v w="$wall" -v mb="$mb" -v c=$c -v el="$el" \
                -v r="$roof" -v g="$gbps" -v pf=$([ $step = prefill ] && echo 1 || echo 0) \
                'BEGIN { f = mb * 1e3 / 3.93e6; fc = g > 0 ? mb / g : 0; rf = 2 * el * c / (r * 1e12) * 1e3
                         printf "%-5s %-6s %-12s %9s %9.3f %9.3f %8.1f %8s %9s %8s %9.0f\n", dt, pl, st, t, w / 1e3, f,
                                w / 1e3 / f, (fc > 0 ? sprintf("%.1f", w / 1e3 / fc) : "-"),
                                pf ? sprintf("%.3f", rf) : "-", pf ? sprintf("%.1f", w / 1e3 / rf) : "-", c * 1e6 / w }'
        done
    done
}

narrow34() { # bench/34: the 33-64 column rule for single products (128x64 2x2 tiles, 8 splits) against
    # the rule before it, forced by the tile hooks (unsplit weights: 128x64x32 4x1; Q types: 64x64x64
    # 2x2; both with the general split rule), gemm_bench's layer products with their per-op lines;
    # then the sweep bench/34 run 9 could not run (Q4_0 tiles and splits at 16 and 32 columns).
    local G=${GEMM_BENCH:-$(dirname "$B")/gemm_bench} c t k
    for c in 48 64; do
        echo "== bf16 $c: the rule / the old one"; "$G" bf16 $c 10; "$G" bf16 $c 10 --tune gemm_tile=128x64x32:4x1
        for t in q4_0 q8_0; do echo "== $t $c: the rule / the old one"; "$G" $t $c 10; "$G" $t $c 10 --tune gemm_tile=64x64x64:2x2; done
    done
    for c in 16 32; do
        echo "== q4_0 $c default"; "$G" q4_0 $c 10 | grep -E "^  (gemm|sum)"
        for t in 64x16x32:4x1 128x16x64:4x1 32x16x64:2x1 128x32x32:4x1 64x32x64:2x2; do for k in 0 8 16; do
            echo "== q4_0 $c TILE $t SPLITK $k"; "$G" q4_0 $c 10 --tune gemm_tile=$t$([ $k = 0 ] || echo ,gemm_splitk=$k) | grep -E "^  (gemm|sum)"
        done; done
    done
}


goldens_of() { # DIR SPLIT N: the four formats, whole and split at layer SPLIT of N
    local d=$1 k=$2 n=$3 m
    for m in "$d golden" "$d/model-f16.gguf golden-f16" "$d/model-q8_0.gguf golden-q8_0" "$d/model-q4_0.gguf golden-q4_0"; do
        set -- $m
        for L in --full "--layers 0:$k" "--layers $k:$n"; do run --model "$1" $L --golden "$d/$2.safetensors"; done
    done
}

# Qwen3.5 (issue 9): the tiny goldens (short and 144-token), then Qwen3.5-2B BF16 at 1, 16 and 64
# decode columns and a 512-token prefill of one slot, each with the head and the gap probe.
qwen() {
    goldens_of "$Q" 2 4
    run --model "$Q" --full --golden "$Q/golden-long.safetensors"
    run --model "$Q/model-q4_0.gguf" --full --golden "$Q/golden-q4_0-long.safetensors"
    for c in 1 16 64; do
        run --model qwen3.5-2b --full --cols $c --pos 64 --logits --gap-probe --json "$O/qwen2b_c$c.json"
    done
    run --model qwen3.5-2b --full --cols 512 --slots 1 --pos 64 --logits --gap-probe --json "$O/qwen2b_p512.json"
}

# Qwen3.5 under --spec (issue 10, bench/14): the qwen35-tiny spec goldens (four formats, whole and
# split 2 of 4, the long golden, and the broken snapshot: must exit 4); then Qwen3.5-2B BF16 with
# the head: the spec plan against the batch plan's prefill shape at the same columns (4 slots x
# drafts of 4 = 16 columns, issue 10's pair), drafts of 1, 2, 8 and 16 at 4 slots (the per-column
# cost of dn.recurrent(.snap): slope and fixed part, for the chunked-form argument), and 16
# columns as 8 x 2, 2 x 8 and 1 x 16.
qwen_spec() {
    local m L g
    for m in "$Q golden" "$Q/model-f16.gguf golden-f16" "$Q/model-q8_0.gguf golden-q8_0" "$Q/model-q4_0.gguf golden-q4_0"; do
        set -- $m
        for L in --full "--layers 0:2" "--layers 2:4"; do run --model "$1" $L --spec --golden "$Q/$2.safetensors"; done
    done
    run --model "$Q" --full --spec --golden "$Q/golden-long.safetensors"
    echo "== broken snapshot (LFM2_TEST_SKIP_SNAPSHOT=1): exit 4 expected"
    LFM2_TEST_SKIP_SNAPSHOT=1 run --model "$Q" --full --spec --golden "$Q/golden.safetensors"
    for g in 4 1 2 8 16; do
        local c=$((4 * g))
        echo "== 4 slots x $g tokens ($c columns): batch prefill shape, then spec"
        run --model qwen3.5-2b --full --cols $c --slots 4 --logits --gap-probe --json "$O/qs_batch_s4_d$g.json"
        run --model qwen3.5-2b --full --spec --cols $c --slots 4 --logits --gap-probe --json "$O/qs_spec_s4_d$g.json"
    done
    for g in 2 8 16; do
        local s=$((16 / g))
        echo "== 16 columns as $s slots x $g tokens: batch prefill shape, then spec"
        run --model qwen3.5-2b --full --cols 16 --slots $s --logits --gap-probe --json "$O/qs_batch_c16_d$g.json"
        run --model qwen3.5-2b --full --spec --cols 16 --slots $s --logits --gap-probe --json "$O/qs_spec_c16_d$g.json"
    done
    qwen_spec_table >"$O/qwen_spec.table.txt"
}

# kind_us FILE KIND: the median µs a step of KIND in a --json file's by_kind list.
kind_us() { awk -v k="\"$2\"" -F'[:,]' 'index($0, "\"by_kind\"") { f = 1 } f && index($0, k) { g = 1 }
    g && index($0, "\"median\"") { gsub(/[ \t]/, "", $2); print $2; exit }' "$1"; }

qwen_spec_table() { # the bench/14 table from qwen_spec's JSON files (busy: kernel sum without the head)
    local f b s
    printf '%-16s %-6s %10s %12s %10s\n' shape plan "busy µs" "dn.recur µs" "dn.conv µs"
    for f in s4_d1 s4_d2 s4_d4 s4_d8 s4_d16 c16_d2 c16_d8 c16_d16; do
        for b in batch spec; do
            local J="$O/qs_${b}_$f.json" x=""
            [ -f "$J" ] || { echo "$f $b: no JSON"; continue; }
            [ $b = spec ] && x=.snap
            printf '%-16s %-6s %10.0f %12.1f %10.1f\n' "$f" $b "$(json_num "$J" busy_us median)" \
                "$(kind_us "$J" dn.recurrent$x)" "$(kind_us "$J" dn.conv$x)"
        done
    done
}

# Qwen3.5 through the wide plan (issue 9, bench/13): dn.chunk (the chunked DeltaNet prefill), the
# tiled gated attention, the gemm head. The tiny goldens through --wide (short and 144-token, whole
# and split) and the long ones split through the batch plan; then Qwen3.5-2B BF16 --full: wide at 64
# decode columns, a 512-token prefill of one slot through both plans, and the prefill's DeltaNet
# kernel alone at other settings (tiles of 32 and 8 state columns; dn.recurrent in the wide plan).
qwen_wide() {
    local m L
    for m in "$Q golden" "$Q/model-f16.gguf golden-f16" "$Q/model-q8_0.gguf golden-q8_0" \
        "$Q/model-q4_0.gguf golden-q4_0" "$Q golden-long" "$Q/model-q4_0.gguf golden-q4_0-long"; do
        set -- $m
        for L in --full "--layers 0:2" "--layers 2:4"; do run --model "$1" $L --wide --golden "$Q/$2.safetensors"; done
    done
    for m in "$Q golden-long" "$Q/model-q4_0.gguf golden-q4_0-long"; do
        set -- $m
        for L in "--layers 0:2" "--layers 2:4"; do run --model "$1" $L --golden "$Q/$2.safetensors"; done
    done
    run --model qwen3.5-2b --full --wide --cols 64 --pos 64 --logits --gap-probe --json "$O/qwen2b_w64.json"
    run --model qwen3.5-2b --full --wide --cols 512 --slots 1 --pos 64 --logits --gap-probe --json "$O/qwen2b_wp512.json"
    run --model qwen3.5-2b --full --cols 512 --slots 1 --pos 64 --logits --gap-probe --reps 3 --json "$O/qwen2b_bp512.json"
}

glm() { # issue 12: GLM-OCR text decoder goldens (tests/fixtures, tracked), then the built-in
    # glm-ocr profiled at 1, 16, 64 columns with the head, and at 16 columns in q4_0. The bench
    # note's floor, bf16: layers 16 × 61.3 MB = 981 MB (0.250 ms at 3.93 TB/s), head 182 MB
    # (0.046 ms); q4_0: 276 MB (0.070 ms) and 51 MB (0.013 ms)
    local G=${GLM_FX:-tests/fixtures/glm-ocr-tiny}
    for gold in golden golden-long; do
        for L in --full "--layers 0:1" "--layers 1:3"; do run --model "$G" $L --golden "$G/$gold.safetensors"; done
    done
    run --model glm-ocr --full --load-only
    for c in 1 16 64; do
        run --model glm-ocr --full --cols $c --pos 64 --logits --gap-probe --json "$O/glm_c$c.json"
    done
    run --model glm-ocr --full --cols 16 --pos 64 --logits --gap-probe --dtype q4_0 --json "$O/glm_c16_q4_0.json"
}
# Issue 8 item 3 (bench/12): the batch plan at 1..16 columns, LFM2-1.2B full with the head. One
# line a run: tag, step wall = gap-probe wall 1x with the head (no timestamps, min of 10), layer
# busy and head busy (timestamp sums, medians). Env knobs (tuning.h) give the before/after pairs.
cm2() { # bench/39: the VK_NV_cooperative_matrix2 gemm. Its test runs without the validation layer
    # (Debian 12's predates the extension, so under it the device is opened without coopmat2); the
    # v1 gemm's kernel tests again with coopmat2 enabled beside VK_NV_cooperative_matrix; the bench.
    run --list-devices
    local d=${BIN_DIR:-build}
    echo "\$ test_gemm_cm2"; "$d/test_gemm_cm2"; echo "(exit $?)"; echo
    echo "\$ LFM2_VALIDATION=1 test_gemm_cm2 (the layer's gate)"; LFM2_VALIDATION=1 "$d/test_gemm_cm2"; echo "(exit $?)"; echo
    echo "\$ test_kernels tests/fixtures gemm"; "$d/test_kernels" tests/fixtures gemm >"$O/cm2_test_kernels.txt" 2>&1
    echo "(exit $?)"; tail -n 3 "$O/cm2_test_kernels.txt"; echo
    echo "\$ gemm_cm2_bench 512 20"; "$d/gemm_cm2_bench" 512 20; echo "(exit $?)"
}
cm2_speed() { # bench/39, third run: why the cm2 gemm is ~2.7x slower a product than v1. One
    # hypothesis a bench variant (shaders/variants.txt's benchpre lines, gemm_cm2.comp's CM2_
    # switches) x 4 tiles on LFM2-1.2B's four F16 product shapes at 512 columns, beside the v1 gemm;
    # a line a pipeline with its creation time (NVIDIA compiles cm2 pipelines slowly), stdout
    # line-buffered so a cut run still tells; then the cm2 kernel's own test, a line a case.
    # Needs build/ configured with -DLFM2_BENCH=ON. ~6 min at most (the two timeouts).
    local d=${BIN_DIR:-build}
    run --list-devices | grep -iE "^\\$|^device|driver|coop|matrix|^\(exit"
    echo "\$ gemm_cm2_bench hyp 5 (timeout 240 s)"
    timeout 240 "$d/gemm_cm2_bench" hyp 5; echo "(exit $?)"; echo
    echo "\$ test_gemm_cm2 (timeout 150 s)"
    timeout 150 "$d/test_gemm_cm2"; echo "(exit $?)"
}
cm2_test() { # the cm2 kernel's own test alone (test_gemm_cm2: every variant, mode and type on edge
    # shapes, a line a case): cm2_speed's 150 s cut it short on the H200 (NVIDIA compiles each cm2
    # pipeline in 0.1-22 s), and the aligned, unrolled variants compile no faster. One command.
    local d=${BIN_DIR:-build}
    echo "\$ test_gemm_cm2 (timeout 540 s)"
    timeout 540 "$d/test_gemm_cm2"; echo "(exit $?)"
}
khr() { # bench/42: the wide plan's gemm on VK_KHR_cooperative_matrix (gemm_khr, prebuilt from
    # glslang 15) against the NV v1 kernel (gemm, Debian 12's glslc), one source. No validation layer
    # here: Debian 12's (1.3.239) predates KHR cooperative matrices, so under it the KHR path is off.
    # 1. which path each device takes; 2. the kernel tests on both paths (test_kernels runs the gemm
    # on each cooperative path the device has, a SKIP line where KHR is missing), then each path
    # alone with split-k sums; 3. the goldens through the wide plan on each path (the header line says
    # "gemm path khr|nv"); 4. timing: LFM2-1.2B full with the head, a 512-token prefill and wide
    # decode at 64 and 256 columns, nv and khr alternated (nv, khr, nv, khr), then --compare of the
    # second pair (khr against nv; it warns that the tunes and the gemm paths differ).
    local d=${BIN_DIR:-build} p m L t
    run --list-devices
    echo "\$ test_kernels tests/fixtures gemm"
    "$d/test_kernels" tests/fixtures gemm >"$O/khr_test_kernels.txt" 2>&1
    echo "(exit $?)"; grep -E "^SKIP|^\+ gemm|^device|passed|FAIL" "$O/khr_test_kernels.txt" | tail -n 12; echo
    for p in khr nv; do
        for t in "" ",gemm_splitk=3" ",gemm_nbuf=2"; do
            echo "\$ test_kernels tests/fixtures gemm --tune gemm_path=$p$t"
            "$d/test_kernels" tests/fixtures gemm --tune "gemm_path=$p$t" >"$O/khr_test_kernels_$p$t.txt" 2>&1
            echo "(exit $?)"; grep -E "^\+ gemm on|passed|FAIL" "$O/khr_test_kernels_$p$t.txt" | tail -n 4; echo
        done
    done
    for p in khr nv; do
        for m in "$F golden" "$F/model-f16.gguf golden-f16" "$F/model-q8_0.gguf golden-q8_0" \
            "$F/model-q4_0.gguf golden-q4_0" "$F golden-long" "$F/model-q4_0.gguf golden-q4_0-long" \
            "$Q golden" "$Q/model-q4_0.gguf golden-q4_0" "$Q golden-long"; do
            set -- $m
            local dir=$F split="--layers 0:3"
            case $1 in "$Q"*) dir=$Q split="--layers 0:2" ;; esac
            for L in --full "$split"; do
                run --model "$1" $L --wide --golden "$dir/$2.safetensors" --tune gemm_path=$p
            done
        done
    done
    for t in "--cols 512 --slots 1 --pos 0" "--cols 256 --pos 64" "--cols 64 --pos 64"; do
        local c
        c=$(echo "$t" | awk '{ print $2 }')
        for i in 1 2; do
            for p in nv khr; do
                run --model lfm2-1.2b --full $t --wide --logits --gap-probe --tune gemm_path=$p \
                    --json "$O/khr_${c}_${p}_$i.json" | grep -E '^\$|^\(exit|^gemm path|GPU busy|wall 1×|^ *[a-z_.]*gemm' | head -n 14
            done
        done
        run --compare "$O/khr_${c}_nv_2.json" --current "$O/khr_${c}_khr_2.json" | head -n 30
    done
    for dt in q4_0 f16; do
        for p in nv khr; do
            run --model lfm2-1.2b --full --dtype $dt --cols 512 --slots 1 --pos 0 --wide --logits --gap-probe \
                --tune gemm_path=$p | grep -E '^\$|^\(exit|^gemm path|GPU busy|wall 1×'
        done
    done
}
cm2_goldens() { # issue 38 item 2 (bench/39): the wide plan on gemm_cm2 (VK_NV_cooperative_matrix2),
    # which --tune gemm_path=auto takes in serving precision (aligned, on gemm_xprep_f16's f16 x) and
    # --tune gemm_path=cm2 forces (exact: the PREP mode; select_path.c). 1. the device's paths;
    # 2. every family's tiny goldens through the wide plan with cm2 forced, exact (bar 1e-3) then
    # serving (bar 4e-3), the whole model each (CM2_SPLITS=1 adds the pipeline splits, ~3x the runs);
    # the header says "gemm path cm2"; products gemm_cm2 cannot serve (F32 weights, exact Q8_0 SwiGLU
    # pairs, serving k not a multiple of 8) run NV v1 (a gemm.* / gemm_swiglu.* kind); 3. test_kernels'
    # gemm cases on cm2 in both precisions; 4. LFM2-1.2B's 512-token prefill per precision (serving
    # first: the automatic choice to confirm), nv and cm2 alternated (nv, cm2, nv, cm2; the report
    # header names the fallback kinds), then --compare of the second pair. Each command under `timeout`.
    # GEMM_PATH=khr (or nv) runs 2. and 3. on that path instead (issue 38: every golden through KHR
    # forced) and skips 4.
    local gp=${GEMM_PATH:-cm2} d=${BIN_DIR:-build} pr m L G=${GLM_FX:-tests/fixtures/glm-ocr-tiny} p i rc ok=0 all=0
    local splits=("--full")
    echo "\$ lfm2-profile-stage --list-devices | grep coopmat2|gemm path"
    timeout 60 "$B" --list-devices | grep -E "coopmat2|gemm path"; echo
    for pr in exact serving; do
        for m in "$F $F golden" "$F/model-f16.gguf $F golden-f16" "$F/model-q8_0.gguf $F golden-q8_0" \
            "$F/model-q4_0.gguf $F golden-q4_0" "$F $F golden-long" "$F/model-q4_0.gguf $F golden-q4_0-long" \
            "$Q $Q golden" "$Q/model-f16.gguf $Q golden-f16" "$Q/model-q8_0.gguf $Q golden-q8_0" \
            "$Q/model-q4_0.gguf $Q golden-q4_0" "$Q $Q golden-long" "$Q/model-q4_0.gguf $Q golden-q4_0-long" \
            "$G $G golden" "$G $G golden-long"; do
            set -- $m
            splits=("--full")
            [ "${CM2_SPLITS:-0}" = 1 ] && case $2 in
                "$F") splits=("--full" "--layers 0:3" "--layers 3:6") ;;
                "$Q") splits=("--full" "--layers 0:2" "--layers 2:4") ;;
                *) splits=("--full" "--layers 0:1" "--layers 1:3") ;;
                esac
            for L in "${splits[@]}"; do
                echo "\$ lfm2-profile-stage --model $1 $L --wide --precision $pr --tune gemm_path=$gp --golden $2/$3.safetensors"
                timeout 60 "$B" --model "$1" $L --wide --precision $pr --tune gemm_path=$gp --golden "$2/$3.safetensors"
                rc=$?; echo "(exit $rc)"; echo
                all=$((all + 1)); [ $rc = 0 ] && ok=$((ok + 1))
            done
        done
    done
    for pr in exact serving; do
        echo "\$ test_kernels tests/fixtures gemm --precision $pr --tune gemm_path=$gp"
        timeout 120 "$d/test_kernels" tests/fixtures gemm --precision $pr --tune gemm_path=$gp >"$O/${gp}_test_kernels_$pr.txt" 2>&1
        echo "(exit $?)"; grep -E "^\+ gemm on|passed|FAIL" "$O/${gp}_test_kernels_$pr.txt" | tail -n 12; echo
    done
    echo "== $gp goldens: $ok of $all runs passed (exit 0)"
    [ "$gp" = cm2 ] || return 0
    for pr in serving exact; do
        for i in 1 2; do
            for p in nv cm2; do
                echo "\$ lfm2-profile-stage --model lfm2-1.2b --full --wide --cols 512 --slots 1 --pos 0 --logits --gap-probe --reps 5 --precision $pr --tune gemm_path=$p"
                timeout 90 "$B" --model lfm2-1.2b --full --wide --cols 512 --slots 1 --pos 0 --logits --gap-probe --reps 5 \
                    --precision $pr --tune gemm_path=$p --json "$O/cm2_prefill_${pr}_${p}_$i.json" |
                    grep -E '^gemm path|^plan wide|GPU busy|wall 1×|^ *[a-z_.]*gemm'
                echo "(exit ${PIPESTATUS[0]})"; echo
            done
        done
        run --compare "$O/cm2_prefill_${pr}_nv_2.json" --current "$O/cm2_prefill_${pr}_cm2_2.json" | head -n 30
    done
}
cm2_split() { # bench/45: gemm_cm2's split k. LFM2-1.2B F16 serving, auto (cm2) then nv, at a 512-token
    # prefill and decode 256 / 64 / 16 (pos 64), `wall 1x +head`; gemm_cm2_bench split (each single
    # product's rate by tile and splits, the default rule starred); then test_gemm_cm2 (its split
    # cases first). BIN_DIR: the folder of gemm_cm2_bench and test_gemm_cm2.
    local d=${BIN_DIR:-build} c gp a
    for c in 512 256 64 16; do
        a="--cols $c --pos 64"
        [ "$c" = 512 ] && a="--cols 512 --slots 1 --pos 0"
        for gp in auto nv; do
            echo "\$ lfm2-profile-stage --model lfm2-1.2b --dtype f16 --full $a --logits --gap-probe --reps 5 --precision serving --tune gemm_path=$gp"
            timeout 60 "$B" --model lfm2-1.2b --dtype f16 --full $a --logits --gap-probe --reps 5 --precision serving \
                --tune gemm_path=$gp --json "$O/split_${c}_$gp.json" | grep -E '^gemm path|wall 1× \+head|^ *gemm_cm2'
            echo "(exit ${PIPESTATUS[0]})"; echo
        done
    done
    echo "\$ gemm_cm2_bench split 5"; timeout 120 "$d/gemm_cm2_bench" split 5; echo "(exit $?)"; echo
    echo "\$ test_gemm_cm2"; timeout 300 "$d/test_gemm_cm2" | grep -E "^case|FAIL|passed"; echo "(exit ${PIPESTATUS[0]})"
}
drift() { # bench/38: the one-layer shards' growth with the layer index. The same one-layer shard of
    # LFM2-2.6B in fresh processes (early and late layer) and inside one --stages run after others:
    # a fresh late layer as fast as an early one puts the growth in the process, not the layer.
    for L in 5:6 25:26 5:6; do
        run --model lfm2-2.6b --layers $L --cols 16 --pos 64 --gap-probe --reps 10 | grep -E '^\$|GPU busy|marginal pass'
    done
    run --model lfm2-2.6b --stages 0:5,5:6,6:25,25:26,26:30 --cols 16 --pos 64 --reps 10 --timing none | sed -n '/^== pipeline/,$p'
}
targets38() { # issue 38's targets table: LFM2-1.2B full with the head, the best plan (auto), gap-probe
    # wall 1x +head (median of 5, no timestamps), F16 exact / F16 serving / Q4_0 at decode 1, 16, 64,
    # 256 (pos 64) and a 512-token prefill (one slot); Qwen3.5-2B's F16 prefill 512. Bounds beside
    # each row: x floor (weight bytes / this run's copy bandwidth), x roof (useful FLOPs / the
    # measured tensor roof, the report's bound line), and the chain: the step's dependent dispatches
    # x the link latency of this card, measured on the tiny fixture (a 1-column step of hidden 128,
    # all latency: its marginal pass / its dispatches).
    local J="$O/t38.json" link
    "$B" --model $F --full --cols 1 --pos 8 --logits --gap-probe --reps 5 --json "$J" >/dev/null 2>&1
    link=$(awk -v m="$(json_num "$J" gap_probe marginal_us)" -v d="$(json_num "$J" gap_probe dispatches)" 'BEGIN { printf "%.2f", m / d }')
    echo "link latency: ${link} us a dependent dispatch (lfm2-tiny, 1 column: marginal pass / dispatches)"
    printf '%-28s %7s %9s %9s %8s %8s %6s %9s\n' row target "wall ms" "floor ms" "x floor" "x roof" disp "chain ms"
    local row
    for row in "lfm2-1.2b f16 exact 1" "lfm2-1.2b f16 exact 16" "lfm2-1.2b f16 exact 64" "lfm2-1.2b f16 exact 256" \
        "lfm2-1.2b f16 exact 512" "lfm2-1.2b f16 serving 256" "lfm2-1.2b f16 serving 512" \
        "lfm2-1.2b q4_0 exact 1" "lfm2-1.2b q4_0 exact 16" "lfm2-1.2b q4_0 exact 64" "lfm2-1.2b q4_0 exact 256" \
        "lfm2-1.2b q4_0 exact 512" "lfm2-1.2b q4_0 serving 512" "qwen3.5-2b f16 exact 512" "qwen3.5-2b f16 serving 512"; do
        set -- $row
        local m=$1 dt=$2 pr=$3 c=$4 args="--cols $4 --pos 64" tgt=-
        [ "$c" = 512 ] && args="--cols 512 --slots 1 --pos 0"
        case "$m $dt $pr $c" in "lfm2-1.2b f16 exact 1") tgt=0.95 ;; "lfm2-1.2b f16 exact 16") tgt=1.3 ;;
            "lfm2-1.2b f16 exact 64") tgt=1.6 ;; "lfm2-1.2b f16 exact 256") tgt=4.0 ;; "lfm2-1.2b f16 exact 512") tgt=6.0 ;;
            "lfm2-1.2b f16 serving 256") tgt=3.5 ;; "lfm2-1.2b f16 serving 512") tgt=4.0 ;; "lfm2-1.2b q4_0 exact 1") tgt=0.45 ;;
            "lfm2-1.2b q4_0 exact 16") tgt=1.3 ;; "lfm2-1.2b q4_0 exact 64") tgt=2.0 ;; "lfm2-1.2b q4_0 exact 256") tgt=4.5 ;;
            "lfm2-1.2b q4_0 "*" 512") tgt=5.0 ;; "qwen3.5-2b f16 "*" 512") tgt=10 ;; esac
        if ! timeout 60 "$B" --model $m --full --dtype $dt --precision $pr $args --logits --gap-probe --reps 5 --json "$J" \
            >"$O/t38_run.txt" 2>&1; then
            echo "$row: failed"; tail -n 3 "$O/t38_run.txt"; continue
        fi
        local wall floor roofx disp
        wall=$(json_num "$J" lm_head wall1_us)
        disp=$(json_num "$J" gap_probe dispatches)
        floor=$(sed -n 's/.*(floor: .* = \([0-9.]*\) \(ms\|µs\|us\)).*/\1 \2/p' "$O/t38_run.txt" | head -1)
        roofx=$(sed -n 's/^  bound: \([0-9.]*\) × the .*roof.*/\1/p' "$O/t38_run.txt" | head -1)
        awk -v r="$m $dt $pr $c" -v t=$tgt -v w="$wall" -v f="$floor" -v rx="${roofx:--}" -v d="$disp" -v l="$link" \
            'BEGIN { split(f, a, " "); fm = (a[2] == "ms") ? a[1] : a[1] / 1e3
                     xf = (fm > 0) ? w / 1e3 / fm : 0
                     printf "%-28s %7s %9.3f %9.3f %8.2f %8s %6d %9.3f\n", r, t, w / 1e3, fm, xf, rx, d, d * l / 1e3 }'
        grep -E "^  (bound|top kinds):" "$O/t38_run.txt" | sed 's/^/      /'
    done
}
[ $# -eq 0 ] && set -- all
for what in "$@"; do
    case $what in
    all) devices >"$O/devices.txt" 2>&1; golden >"$O/golden.txt" 2>&1; load >"$O/load.txt" 2>&1; profile >"$O/profile.txt" 2>&1; spec >"$O/spec.txt" 2>&1 ;;
    numbers) numbers >"$O/numbers.txt" 2>&1
        grep -E "^== |GPU busy|marginal pass  |kernel-time sum|inter-dispatch|timestamps add|closure:|VERDICT|REGRESSION|no regression|^\(exit" \
            "$O/numbers.txt" >"$O/numbers.summary.txt" ;;
    *) $what >"$O/$what.txt" 2>&1 ;;
    esac
done
tail -n 5 "$O"/*.txt
