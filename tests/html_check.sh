#!/bin/sh
# html_check.sh BIN FIXTURES: --html (and --csv) of a width list with the head and the gap probe,
# and of a comparison, opened in headless Chromium: the page must render with no console message
# and show the kinds, the roofline (GB/s bars, and FLOP/s against intensity under the copy
# bandwidth's slope and the measured roof's line), the timeline, the gap probe, the crossover and
# the comparison; and the --stages page: the pipeline summary, the stages' step chart of both
# splits with the bottleneck marked, and the per-layer cost chart with the splits' boundaries.
# Exit 77 (ctest: skipped) when chromium is not installed.
bin=$1; fx=$2
if ! command -v chromium >/dev/null 2>&1; then
    echo "html_check: SKIPPED: chromium is not installed (apt-get install chromium; .ci/run installs it)"
    exit 77
fi
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
fail() { echo "html_check: $*"; exit 1; }

"$bin" --model "$fx/lfm2-tiny" --full --cols 1,8 --plans batch,auto --pos 3 --reps 2 --logits \
    --html "$d/list.html" --csv "$d/list.csv" > "$d/out" 2>&1 || { cat "$d/out"; fail "width list run failed"; }
"$bin" --model "$fx/lfm2-tiny" --full --cols 2 --pos 3 --reps 2 --json "$d/a.json" > "$d/out" 2>&1 ||
    { cat "$d/out"; fail "profile run failed"; }
"$bin" --compare "$d/a.json" --current "$d/a.json" --html "$d/cmp.html" --csv "$d/cmp.csv" > "$d/out" 2>&1 ||
    { cat "$d/out"; fail "compare run failed"; }
"$bin" --model "$fx/lfm2-tiny" --stages 0:2,2:6 --cols 2 --pos 3 --reps 2 --logits \
    --html "$d/stages.html" > "$d/out" 2>&1 || { cat "$d/out"; fail "--stages run failed"; }

# render: --dump-dom prints the DOM after layout; console messages go to stderr as CONSOLE lines
render() {
    timeout 120 chromium --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 \
        --dump-dom "file://$1" > "$1.dom" 2> "$1.log"
}
for page in list cmp stages; do
    render "$d/$page.html" || { cat "$d/$page.html.log"; fail "chromium failed on $page.html"; }
    if grep -E 'CONSOLE|Uncaught|ERR_FILE|net::ERR' "$d/$page.html.log"; then fail "$page.html: console or load errors"; fi
    grep -q '</svg>' "$d/$page.html.dom" || fail "$page.html: no chart in the rendered page"
done
for want in 'id="kinds"' 'matmul_swiglu.bf16' 'head.matmul.bf16' 'id="roofline"' 'copy ' 'id="timeline"' \
    'aria-label="FLOP/s roofline"' 'class="tensor-roof"' 'class="bw-roof"' 'roof ' 'GFLOP/s f32 FMA' 'FLOP per byte read' \
    'measured FMA roof (f32 FMA)' 'floor/roof' '(memory-bound)' \
    'id="gap-probe"' 'marginal pass' 'id="crossover"' 'auto -&gt; wide' 'same kernels as batch'; do
    grep -qF -- "$want" "$d/list.html.dom" || fail "list.html: rendered page lacks '$want'"
done
for want in 'id="compare"' 'matmul_swiglu.bf16' 'no regression'; do
    grep -qF -- "$want" "$d/cmp.html.dom" || fail "cmp.html: rendered page lacks '$want'"
done
for want in 'id="pipeline"' 'pipeline of 2 stages (given split 0:2,2:6), 2 cols' 'tok/s bound / ideal' 'bubble' \
    'hand-off a boundary' 'id="stages"' 'aria-label="stage step times"' 'given split, stage 0, layers 0:2' \
    'given split, stage 1, layers 2:6' 'bottleneck' 'class="predicted"' 'id="layers"' 'aria-label="per-layer costs"' \
    'layer 0:' 'layer 5:' 'given split: stage 1 starts at layer 2' 'balanced split: stage 1 starts at layer'; do
    grep -qF -- "$want" "$d/stages.html.dom" || fail "stages.html: rendered page lacks '$want'"
done
[ "$(grep -c 'class="layer"' "$d/stages.html.dom")" = 6 ] || fail "stages.html: not one bar per layer"
# nothing external: no script, no link, no URL to fetch
if grep -Ei '<script|<link|src=|https?://' "$d/list.html" "$d/cmp.html" "$d/stages.html"; then fail "the page refers to something outside it"; fi
# the CSV: one file, sections with their table name in the first column, a blank line between
grep -q '^crossover,8,auto -> wide,' "$d/list.csv" || fail "list.csv: no crossover row for 8 cols auto"
grep -q '^by_kind,1,batch,matmul_swiglu.bf16,' "$d/list.csv" || fail "list.csv: no by_kind row"
grep -q '^dispatch,8,wide,1,' "$d/list.csv" || fail "list.csv: no top dispatch of 8 cols"
grep -q '^compare,TOTAL (GPU busy),' "$d/cmp.csv" || fail "cmp.csv: no compare total"
[ "$(grep -c '^table,' "$d/list.csv")" = "$(($(grep -c '^$' "$d/list.csv") + 1))" ] || fail "list.csv: sections not separated by one blank line each"
echo "html_check: ok"
