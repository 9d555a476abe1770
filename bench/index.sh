#!/usr/bin/env sh
# bench/index.sh - prints bench/README.md, the index of the lab notebook, from the notes' titles
# (the first line of each bench/NN_*.md, "# NN — title"). Update: sh bench/index.sh >bench/README.md;
# the unit test bench_index fails when the README is not what this prints.
set -eu
export LC_ALL=C
cd "$(dirname "$0")"
cat <<'HEAD'
# bench/

The project's lab notebook: measured findings, one note each (`NN_what_it_shows.md`), with the date,
device and driver, the exact command, the figures, the reading, and what it changes. `h200.sh` runs
the sections the notes name on a lent GPU, `gemm_bench.c` (built with `-DLFM2_BENCH=ON`) times the
wide plan's matrix products and the tensor-core roof, `per_op.py` sums a `--json` run per op. Raw
outputs, patches and one-off run scripts are in git history (each note says where).
This file is generated: `sh bench/index.sh >bench/README.md`.

| note | title |
|---|---|
HEAD
for f in [0-9][0-9]_*.md; do
    title=$(head -n 1 "$f" | sed 's/^# *[0-9]* *— *//')
    printf '| [`%s`](%s) | %s |\n' "${f%.md}" "$f" "$title"
done
cat <<'TAIL'

Ratios use the floor (weight bytes ÷ 3.93 TB/s); the tool's own copy kernel measured
4.27–4.29 TB/s on the same H200.
TAIL
