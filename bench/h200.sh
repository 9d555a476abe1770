#!/usr/bin/env bash
# bench/h200.sh WHAT... - the runs kept in bench/ notes, on the lent H200 (device tool):
#   run command: for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; bash bench/h200.sh all
# with carry [".gl", "build", ".fx"] (.fx: a copy of ../shared/fixtures/lfm2-tiny; section gemm runs
# build/gemm_bench). Outputs go to $OUT (or bench/out when OUT is unset), one file per section.
set -u
B=${BIN:-build/lfm2-profile-stage}
O=${OUT:-bench/out}
mkdir -p "$O"
F=.fx/lfm2-tiny
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
tune() { # matmul geometry: by-kernel lines of the 16-column step under each forced setting
    for cols in 16 1; do for ksl in auto 8 16 32 64 128; do
        echo "== cols=$cols KSL=$ksl"
        if [ $ksl = auto ]; then unset LFM2_MATMUL_KSL; else export LFM2_MATMUL_KSL=$ksl; fi
        "$B" --model lfm2-1.2b --layers 0:16 --cols $cols --pos 64 --logits --reps 5 | grep -E "GPU busy|matmul|attn"
    done; done
    unset LFM2_MATMUL_KSL
    for dt in f16 q8_0 q4_0; do
        echo "== cols=16 dtype=$dt"
        "$B" --model lfm2-1.2b --layers 0:16 --cols 16 --pos 64 --logits --reps 5 --dtype $dt | grep -E "GPU busy|matmul"
    done
}
passes() { # columns a matmul pass serves at 16 columns (registers vs weights read again)
    for pc in 16 8 4; do
        echo "== cols=16 pass=$pc"
        LFM2_MATMUL_PASS_COLS=$pc "$B" --model lfm2-1.2b --layers 0:16 --cols 16 --pos 64 --logits --reps 5 | grep -E "GPU busy|matmul"
    done
}
dtypes() { # the other weight types at 16 columns
    for dt in f16 q8_0 q4_0; do
        echo "== cols=16 dtype=$dt"
        "$B" --model lfm2-1.2b --layers 0:16 --cols 16 --pos 64 --logits --reps 5 --dtype $dt | grep -E "GPU busy|matmul"
    done
}
gemm() { # the wide plan's matrix products alone (bench/06): LFM2-1.2B's 16 layers at 512 columns
    G=${GEMM_BENCH:-$(dirname "$B")/gemm_bench}
    for dt in bf16 f16 q8_0 q4_0; do echo "\$ gemm_bench $dt 512 20"; "$G" $dt 512 20; done
    echo "\$ LFM2_GEMM_ROOF=1 gemm_bench f16 512 20"; LFM2_GEMM_ROOF=1 "$G" f16 512 20
    echo "\$ LFM2_TEST_NO_COOPMAT=1 gemm_bench bf16 512 5"; LFM2_TEST_NO_COOPMAT=1 "$G" bf16 512 5
    for c in 32 64 128 256 1024; do echo "\$ gemm_bench bf16 $c 10"; "$G" bf16 $c 10; done
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
