#!/usr/bin/env bash
# bench/37_share_sums.sh - issue 37 item 3 on an H100/H200 (device tool, `build/` carried): why the
# by-kind shares summed to 102-112 %. Before this branch a layer kind's share was its median ÷ GPU
# busy's median (a median of per-rep sums); now it is of the layer kinds' summed medians. Prints,
# per timing mode and width, Σ(kind medians) ÷ busy median: the old shares' sum (1.00 = no gap).
#   run command: bash bench/37_share_sums.sh   (outputs under $OUT, or bench/out when unset)
set -u
B=${BIN:-build/lfm2-profile-stage}
O=${OUT:-bench/out}
mkdir -p "$O"
for timing in full sampled; do
    for cols in 1 16 64; do
        j="$O/37_shares_${timing}_$cols.json"
        "$B" --model lfm2-1.2b --full --logits --cols $cols --reps 20 --timing $timing --json "$j" \
            > "$O/37_shares_${timing}_$cols.txt" 2>&1 || { echo "$timing $cols: exit $?"; continue; }
        python3 - "$j" "$timing" "$cols" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
layer = [k for k in p["by_kind"] if not k["kind"].startswith("head.")]
s = sum(k["us"]["median"] for k in layer)
print(f"{sys.argv[2]:8s} cols {sys.argv[3]:>3s}: sum of layer-kind medians {s:9.1f} us, busy median "
      f"{p['busy_us']['median']:9.1f} us, old shares' sum {100 * s / p['busy_us']['median']:6.1f} %, "
      f"new {100 * sum(k['share'] for k in layer):6.1f} %")
PY
    done
done
