#!/usr/bin/env bash
# Builds a release: static namecast binaries for linux/amd64 and
# linux/arm64 (CGO off), stamped with the VERSION file's version
# and the git revision (`namecast version` prints both), and SHA256SUMS
# beside them, in dist/. The Containerfile copies its architecture's binary
# from there.
#
#   scripts/release.sh                  # dist/namecast-VERSION-linux-{amd64,arm64}, dist/SHA256SUMS
#   ARCHES=amd64 scripts/release.sh     # one architecture
#   DIST=/tmp/out scripts/release.sh    # another output directory
#
# Check a download with: sha256sum -c SHA256SUMS --ignore-missing
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(tr -d ' \t\n' < VERSION)
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
if [ "$revision" != unknown ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	revision=$revision-modified
fi
dist=${DIST:-dist}
arches=${ARCHES:-amd64 arm64}
pkg=github.com/namecast/namecast/internal/buildinfo
rm -rf "$dist"
mkdir -p "$dist"
for arch in $arches; do
	out=$dist/namecast-$version-linux-$arch
	echo "release.sh: $out (revision $revision)"
	CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -buildvcs=false \
		-ldflags "-s -w -X $pkg.version=$version -X $pkg.revision=$revision" -o "$out" ./cmd/namecast
done
(cd "$dist" && sha256sum namecast-* > SHA256SUMS)
echo "release.sh: $dist/SHA256SUMS"
