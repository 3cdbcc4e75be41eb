#!/usr/bin/env bash
# Runs every fuzz target in the repository for a bounded time each.
#   FUZZTIME   how long each target fuzzes (default 10s; any `go test
#              -fuzztime` value, such as 30s or 5000x)
#   FUZZ_MATCH only targets whose "dir:Name" matches this regexp (default all)
# New failing inputs are written to the package's testdata/fuzz/<Target>/,
# where they become seeds every `go test` run replays: commit them with the
# fix. Exits non-zero if any target failed, after running them all.
set -uo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-10s}"
match="${FUZZ_MATCH:-.}"

# "dir:FuzzName" for every fuzz target, found from the test sources.
targets=$(grep -rEo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . |
	sed -E 's#^\./(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*).*#\1:\2#' | sort -u | grep -E "$match")
if [ -z "$targets" ]; then
	echo "fuzz.sh: no fuzz targets match $match" >&2
	exit 1
fi

failed=()
for t in $targets; do
	dir=${t%%:*} name=${t##*:}
	echo "=== $name in ./$dir for $fuzztime"
	if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "./$dir"; then
		failed+=("$t")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz.sh: FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "fuzz.sh: $(echo "$targets" | wc -l) targets passed, $fuzztime each"
