#!/usr/bin/env bash
# fixtures_check.sh DIR: every file of the fixtures folder DIR (but its README.md) is listed in
# DIR/README.md's checksum block with the right sha256, and every listed file exists.
set -u
dir=$1
cd "$dir" || { echo "fixtures_check: no folder $dir"; exit 1; }
list=$(sed -n '/^## Checksums/,$p' README.md | grep -E '^[0-9a-f]{64}  ')
[ -n "$list" ] || { echo "fixtures_check: $dir/README.md has no checksum list"; exit 1; }
printf '%s\n' "$list" | sha256sum --quiet -c - || { echo "fixtures_check: checksums differ (above)"; exit 1; }
have=$(find . -type f ! -name README.md | sort)
listed=$(printf '%s\n' "$list" | sed 's/^[0-9a-f]*  //' | sort)
[ "$have" = "$listed" ] || { echo "fixtures_check: files and list differ:"; diff <(echo "$have") <(echo "$listed"); exit 1; }
echo "fixtures_check: $(printf '%s\n' "$list" | wc -l) files match their checksums"
