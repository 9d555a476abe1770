#!/usr/bin/env bash
# bench/report_run.sh - issue 37 on an H100/H200 (device tool, `build/` carried): does plan auto
# pick the faster plan at each width, the HTML/CSV/text reports of one real run for docs/, and the
# measured arithmetic roof with a compute-bound step.
#   run command: bash bench/report_run.sh [crossover] [report] [roof]   (default: all three;
#                outputs under $OUT, or bench/out when unset)
# crossover: LFM2-1.2B with the head, BF16 and Q4_0, widths 1..64, plans batch, wide and auto; auto
#   should match the faster of batch and wide at each width (same kernels as one of them).
# report: the default (auto) plan at 16 columns, text, HTML and CSV, for docs/.
# roof: LFM2-1.2B's 512-token prefill (--cols 512 --slots 1 --pos 0, as bench/h200.sh) through the wide
#   plan, text, JSON and HTML. What to expect on an H100 (bench/06 measured 499 TFLOP/s with
#   coopmat_roof.comp; docs/performance.md: ~1.2 TFLOP, 12.2 ms): the header's
#   "roof: tensor roof ~499 TFLOP/s (NV coopmat f16)"; "(FLOPs: ~1.2 TFLOP useful; ~2.4 TFLOP
#   executed ...)" (BF16 weights: f16 high and low activations, two products each); the summary's
#   "bound: ~5 × the tensor roof (kernel time, head included: ~2.4 ms = ~1.2 TFLOP ÷ ~499 TFLOP/s)"
#   and "why compute-bound: ~512 FLOP per weight byte, above the device's balance of ~160 FLOP/byte";
#   in the HTML roofline the gemm kinds right of the balance, under the roof line. The same step on
#   the FMA twin (LFM2_TEST_NO_COOPMAT=1, a test hook) names "FMA roof ... (f32 FMA: no cooperative
#   matrices)" instead, for comparison.
set -u
B=${BIN:-build/lfm2-profile-stage}
O=${OUT:-bench/out}
mkdir -p "$O"
sections=${*:-crossover report roof}
for s in $sections; do
    case $s in
    crossover)
        for dt in bf16 q4_0; do
            "$B" --model lfm2-1.2b --full --logits --dtype $dt --cols 1,4,5,6,8,16,64 --plans batch,wide,auto --reps 20 \
                --csv "$O/37_crossover_$dt.csv" --html "$O/37_crossover_$dt.html" > "$O/37_crossover_$dt.txt" 2>&1
            echo "crossover $dt: exit $?"
        done
        ;;
    report)
        "$B" --model lfm2-1.2b --full --logits --cols 16 --gap-probe --reps 20 --json "$O/37_report.json" \
            --csv "$O/37_report.csv" --html "$O/37_report.html" > "$O/37_report.txt" 2>&1
        echo "report: exit $?"
        ;;
    roof)
        "$B" --model lfm2-1.2b --full --wide --cols 512 --slots 1 --pos 0 --logits --reps 10 --json "$O/37_roof_prefill.json" \
            --html "$O/37_roof_prefill.html" > "$O/37_roof_prefill.txt" 2>&1
        echo "roof prefill: exit $?"
        LFM2_TEST_NO_COOPMAT=1 "$B" --model lfm2-1.2b --full --wide --cols 512 --slots 1 --pos 0 --logits --reps 3 \
            > "$O/37_roof_prefill_fma.txt" 2>&1
        echo "roof prefill, FMA twin: exit $?"
        grep -h -E '^roof:|  bound:|  why |\(FLOPs:' "$O/37_roof_prefill.txt" "$O/37_roof_prefill_fma.txt"
        ;;
    *)
        echo "report_run.sh: unknown section '$s' (expected crossover, report or roof)" >&2
        exit 2
        ;;
    esac
done
