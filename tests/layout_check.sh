#!/usr/bin/env bash
# layout_check.sh SRC_DIR [MAX_LINES] - the layout rules of docs/architecture.md:
#  1. a file includes only headers of its own stage or of stages earlier in STAGES;
#  2. no include cycle among the project's headers;
#  3. no source file longer than MAX_LINES (default 600).
# Prints every violation; exits 1 when there is one.
set -u
src=${1:?usage: layout_check.sh SRC_DIR [MAX_LINES]}
max=${2:-600}
STAGES="base load model vk kernels engine plan report profile app"
fail=0
rank_of() { local i=0 s; for s in $STAGES; do [ "$s" = "$1" ] && { echo $i; return; }; i=$((i + 1)); done; echo -1; }
declare -A hstage
for d in "$src"/*/; do
    st=$(basename "$d")
    [ "$(rank_of "$st")" -lt 0 ] && { echo "layout: src/$st is not a stage ($STAGES)"; fail=1; continue; }
    for h in "$d"*.h; do [ -e "$h" ] && hstage[$(basename "$h")]=$st; done
done
pairs=$(mktemp)
trap 'rm -f "$pairs"' EXIT
for f in "$src"/*/*.[ch]; do
    st=$(basename "$(dirname "$f")")
    r=$(rank_of "$st")
    n=$(wc -l <"$f")
    [ "$n" -gt "$max" ] && { echo "layout: ${f#"$src"/} has $n lines (at most $max)"; fail=1; }
    while read -r inc; do
        t=${hstage[$inc]:-}
        [ -z "$t" ] && continue
        if [ "$(rank_of "$t")" -gt "$r" ]; then
            echo "layout: ${f#"$src"/} includes $inc of stage $t, above its own stage $st"; fail=1
        fi
        case $f in *.h) echo "$(basename "$f") $inc" >>"$pairs" ;; esac
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done
if ! tsort "$pairs" >/dev/null 2>"$pairs.err"; then
    echo "layout: include cycle among headers:"; sed 's/^/  /' "$pairs.err"; fail=1
fi
rm -f "$pairs.err"
[ $fail = 0 ] && echo "layout: $(ls "$src"/*/*.[ch] | wc -l) files in $(ls -d "$src"/*/ | wc -l) stages: every include points down or sideways, no cycle, none over $max lines"
exit $fail
