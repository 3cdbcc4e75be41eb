#!/usr/bin/env bash
# Regenerates the web UI screenshots in docs/ui/ (README "Web UI") from a
# real three-agent cluster, photographed in headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/../test/browser"
go run ./cmd/screenshots -out ../../docs/ui "$@"
