#!/usr/bin/env bash
# The project's one test command (README, .ci/run): go vet and race-enabled
# tests of every Go module in the repository that has tests: the main module,
# then the interop modules and the web UI's browser tests (each its own
# go.mod, so the real rocketmq-client-go, go-zookeeper, dubbo-go and chromedp
# stay out of the agent's dependencies). Modules are found by their go.mod, so
# one added later runs too; a module without any _test.go file (a tool under
# scripts/) is skipped.
#
# Every module runs even when an earlier one fails: one flaky test must not
# hide whether the others pass. Each is reported with its result and wall
# time; the command fails at the end if any failed.
set -uo pipefail
cd "$(dirname "$0")"

# The main module first, then the others in path order.
modules=(.)
while IFS= read -r mod; do
	dir=${mod%/go.mod}
	dir=${dir#./}
	[ "$dir" = . ] && continue
	if [ -z "$(find "$dir" -name '*_test.go' -print -quit)" ]; then
		echo "test.sh: skipping $dir (no tests)"
		continue
	fi
	modules+=("$dir")
done < <(find . -name go.mod -not -path '*/.*/*' -not -path '*/testdata/*' | sort)

# tsan_crash_only says whether a failed run's log shows only crashes of
# the race runtime: a ThreadSanitizer CHECK failure, and no failed test,
# data race, panic or build error.
tsan_crash_only() {
	grep -q 'ThreadSanitizer: CHECK failed' "$1" &&
		! grep -qE -- '^--- FAIL|WARNING: DATA RACE|^panic:|\[build failed\]|\[setup failed\]|^# ' "$1"
}

results=()
failed=0
for dir in "${modules[@]}"; do
	timeout=10m
	[ "$dir" = . ] && timeout=20m
	echo "=== $dir: go vet && go test -race -count=1 -timeout $timeout ./..."
	start=$SECONDS
	log=$(mktemp)
	if (cd "$dir" && go vet ./... && go test -race -count=1 -timeout "$timeout" ./...) 2>&1 | tee "$log"; then
		result=ok
	elif tsan_crash_only "$log" && grep -qE '^FAIL\s+\S+/' "$log"; then
		# The race runtime itself crashed (no test failed, no race found):
		# golang/go#78156, a ThreadSanitizer CHECK failure under
		# testing/synctest. Those packages run once more, and only they.
		pkgs=$(awk '$1 == "FAIL" && $2 ~ /\// {print $2}' "$log" | tr '\n' ' ')
		echo "test.sh: the race runtime crashed in $pkgs (golang/go#78156); running them once more"
		if (cd "$dir" && go test -race -count=1 -timeout "$timeout" $pkgs); then
			result=ok
		else
			result=FAIL
			failed=1
		fi
	else
		result=FAIL
		failed=1
	fi
	rm -f "$log"
	took=$((SECONDS - start))
	results+=("$(printf '%-4s  %-20s  %dm%02ds' "$result" "$dir" $((took / 60)) $((took % 60)))")
	echo "=== $dir: $result in ${took}s"
done

echo
echo "test.sh: every module:"
printf '  %s\n' "${results[@]}"
if [ "$failed" -ne 0 ]; then
	echo "test.sh: FAIL"
	exit 1
fi
echo "test.sh: ok"
