#!/usr/bin/env python3
"""bench/per_op.py DIR TAG... - per-op sums over a step's dispatches (timestamped medians, us, and
GB/s from the weight bytes) from the --json files DIR/bf_<tag>.json that h200.sh bf_step writes,
one block per dtype and column count, one column per tag prefix (bench/12 and bench/16 tables).
q/k/v as three dispatches are summed as attn.qkv_proj."""
import json
import os
import re
import sys

OPS = ["conv.in_proj", "conv.out_proj", "ffn_gate_up", "ffn_down", "attn.qkv_proj", "attn.out_proj", "lm_head"]


def per_op(path):
    d = json.load(open(path))
    s = {}
    for x in d["dispatches"]:
        op = x["op"]
        if op in ("attn.q_proj", "attn.k_proj", "attn.v_proj"):
            op = "attn.qkv_proj"
        us, b = s.get(op, (0.0, 0))
        s[op] = (us + x["us"]["median"], b + x["bytes"])
    return s


def main():
    d = sys.argv[1]
    runs = {}
    for f in sorted(os.listdir(d)):
        m = re.match(r"bf_(.+)_(bf16|q4_0|q8_0)_(\d+)\.json$", f)
        if m:
            runs.setdefault((m.group(2), int(m.group(3))), {})[m.group(1)] = per_op(os.path.join(d, f))
    print("# per-op sums over the step (us, timestamped medians; GB/s of the weight bytes)")
    for (dt, c) in sorted(runs):
        tags = runs[(dt, c)]
        order = [t for t in ("old", "new") if t in tags] + sorted(t for t in tags if t not in ("old", "new"))
        print(f"\n{dt}, {c} column(s): us (GB/s)")
        for op in OPS + ["total"]:
            cells = []
            for t in order:
                s = tags[t]
                if op == "total":
                    us = sum(v[0] for k, v in s.items() if k in OPS)
                    b = sum(v[1] for k, v in s.items() if k in OPS)
                elif op in s:
                    us, b = s[op]
                else:
                    continue
                cells.append(f"{t}={us:8.1f} ({b / us / 1e3 if us else 0:5.0f})")
            print(f"  {op:15s} " + " ".join(cells))


main()
