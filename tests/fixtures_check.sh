#!/usr/bin/env bash
# fixtures_check.sh DIR [SHARED]: every file of the fixtures folder DIR (but its README.md) is
# listed in DIR/README.md's checksum block with the right sha256, and every listed file exists.
# With SHARED (../shared/fixtures beside the checkout, when there is one), each file must also be
# byte-identical to its twin there and every file there must have been copied in.
set -u
dir=$1; shared=${2:-}
cd "$dir" || { echo "fixtures_check: no folder $dir"; exit 1; }
list=$(sed -n '/^## Checksums/,$p' README.md | grep -E '^[0-9a-f]{64}  ')
[ -n "$list" ] || { echo "fixtures_check: $dir/README.md has no checksum list"; exit 1; }
printf '%s\n' "$list" | sha256sum --quiet -c - || { echo "fixtures_check: checksums differ (above)"; exit 1; }
have=$(find . -type f ! -name README.md | sort)
listed=$(printf '%s\n' "$list" | sed 's/^[0-9a-f]*  //' | sort)
[ "$have" = "$listed" ] || { echo "fixtures_check: files and list differ:"; diff <(echo "$have") <(echo "$listed"); exit 1; }
if [ -n "$shared" ] && [ -d "$shared" ]; then
    for f in $(cd "$shared" && find . -type f ! -name README.md | sort); do
        cmp -s "$shared/$f" "$f" || { echo "fixtures_check: $f differs from (or is missing beside) $shared/$f: copy it in"; exit 1; }
    done
fi
echo "fixtures_check: $(printf '%s\n' "$list" | wc -l) files match their checksums"
