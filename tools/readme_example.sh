#!/usr/bin/env bash
# readme_example.sh BIN [--check] - the README's example report, made by the current binary.
#
#   tools/readme_example.sh build/lfm2-profile-stage           rewrite the block between the
#                                                              README's example markers
#   tools/readme_example.sh build/lfm2-profile-stage --check   run the block's command again and
#                                                              fail (exit 1) when the report's format
#                                                              no longer matches the README's (ctest
#                                                              readme_example)
#
# The block's first line is the command ("$ lfm2-profile-stage ARGS"); the rest is its stdout. The
# figures change from run to run, the format must not, so --check compares line skeletons: a line's
# text up to its first digit, spaces squeezed. Headings (lines that do not start with a space) must
# be the same lines in the same order; every other skeleton of the README must still be printed,
# and every one printed must be in the README, except lines that appear only when a figure falls
# inside or outside the noise (they differ between runs by design).
set -euo pipefail
bin=${1:?usage: readme_example.sh BIN [--check]}
check=0
[ "${2:-}" = --check ] && check=1
root=$(cd "$(dirname "$0")/.." && pwd)
readme=$root/README.md
begin='<!-- example:begin -->' end='<!-- example:end -->'
block=$(awk -v b="$begin" -v e="$end" 'index($0, e) {f = 0} f; index($0, b) {f = 1}' "$readme" | sed '/^```/d')
[ -n "$block" ] || { echo "readme_example: README.md has no block between '$begin' and '$end'" >&2; exit 1; }
cmd=$(printf '%s\n' "$block" | head -n 1)
case $cmd in '$ lfm2-profile-stage '*) ;; *) echo "readme_example: the block's first line is not '\$ lfm2-profile-stage ...': $cmd" >&2; exit 1 ;; esac
read -r -a args <<<"${cmd#'$ lfm2-profile-stage '}"
errlog=$(mktemp)
trap 'rm -f "$errlog"' EXIT
report() { # the block's command, run now; its stderr shown when it fails
    (cd "$root" && "$bin" "${args[@]}" 2>"$errlog") ||
        { echo "readme_example: the example's command failed ($cmd):" >&2; tail -n 5 "$errlog" >&2; exit 1; }
}
out=$(report)

if [ $check = 0 ]; then
    tmp=$(mktemp "$readme.XXXXXX")
    awk -v b="$begin" -v e="$end" -v cmd="$cmd" -v out="$out" '
        index($0, b) {print; print "```"; print cmd; print out; print "```"; skip = 1; next}
        index($0, e) {skip = 0}
        !skip' "$readme" >"$tmp"
    mv "$tmp" "$readme"
    echo "readme_example: README.md's example rewritten from: $cmd"
    exit 0
fi

skeleton() { sed -E 's/[-+]?[0-9].*$//; s/[[:space:]]+/ /g; s/ $//'; }
noisy='noise|inconclusive|VERDICT|WARNING|action|ts>diff|disagree|↳|\(LM head: its|p10'
want=$(printf '%s\n' "$block" | tail -n +2 | skeleton)
compare() { # fail=1 and the differences printed when $out's format is not the README's
have=$(printf '%s\n' "$out" | skeleton)
fail=0
if [ "$(printf '%s\n' "$want" | grep -v '^ ')" != "$(printf '%s\n' "$have" | grep -v '^ ')" ]; then
    echo "readme_example: the report's headings changed:"; diff <(printf '%s\n' "$want" | grep -v '^ ') <(printf '%s\n' "$have" | grep -v '^ ') || true
    fail=1
fi
missing=$(comm -23 <(printf '%s\n' "$want" | grep '^ ' | grep -Ev "$noisy" | sort -u) <(printf '%s\n' "$have" | sort -u))
extra=$(comm -13 <(printf '%s\n' "$want" | sort -u) <(printf '%s\n' "$have" | grep '^ ' | grep -Ev "$noisy" | sort -u))
[ -n "$missing" ] && { echo "readme_example: the README shows lines the report no longer prints:"; printf '  %s\n' "$missing"; fail=1; }
[ -n "$extra" ] && { echo "readme_example: the report prints lines the README does not show:"; printf '  %s\n' "$extra"; fail=1; }
return 0
}
compare
if [ $fail = 1 ]; then # a line that comes and goes with the noise shows in one run, not in two
    echo "readme_example: running the example again to tell a format change from a noisy line"
    out=$(report)
    compare
fi
if [ $fail = 1 ]; then
    echo "readme_example: README.md's example is stale: tools/readme_example.sh $bin" >&2
    exit 1
fi
echo "readme_example: README.md's example matches the report's format ($(printf '%s\n' "$want" | wc -l) lines)"
