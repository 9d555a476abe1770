#!/usr/bin/env bash
# bench/serving_precision_h100.sh [BIN] - bench/41's GPU half, for a lent H100/H200 with build/
# carried: (1) the serving kernels on tensor cores against their rounding reference
# (test_kernels gemm --precision serving, and with k splits); (2) every fixture's golden error in
# both precisions through the cooperative-matrix gemm (bench/serving_precision.sh); (3) LFM2-1.2B
# F16 and Q4_0, prefill of 512 tokens (one logit) and a decode step of 256 columns, wide plan, exact
# then serving in one process order, gap-probe walls and the gemm kinds' medians. ~4 minutes.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/lfm2-profile-stage}
tk=$(dirname "$bin")/test_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
echo "== 1. serving gemm on this device vs its rounding reference"
"$tk" "$root/tests/fixtures" gemm --precision serving 2>&1 | tail -3
"$tk" "$root/tests/fixtures" gemm --precision serving --tune gemm_splitk=3 2>&1 | tail -2
echo "== 2. golden error, exact vs serving, every fixture"
bash "$root/bench/serving_precision.sh" "$bin" "$root/tests/fixtures"
echo "== 3. LFM2-1.2B, wide plan: exact vs serving"
for dt in f16 q4_0; do
    for shape in "--cols 512 --slots 1 --pos 0" "--cols 256 --pos 64"; do
        for p in exact serving; do
            echo "-- $dt $shape --precision $p"
            "$bin" --model lfm2-1.2b --dtype "$dt" --full $shape --logits --wide --gap-probe --reps 20 --units ms \
                --precision "$p" 2>/dev/null |
                grep -E '^plan|^GPU busy|wall 1× \+head|^  (head\.)?gemm[a-z_]*\.(f16|q4_0) |^  gemm_xprep|^  gemm_wdeq'
        done
    done
done
