#!/usr/bin/env bash
# The project's one test command (README, .ci/run): vet, race-enabled tests
# of the main module, then the interop modules and the web UI's browser
# tests (each its own go.mod, so the real rocketmq-client-go, go-zookeeper
# and chromedp stay out of the agent's dependencies).
set -euo pipefail
cd "$(dirname "$0")"
go vet ./...
go test -race -count=1 -timeout 20m ./...
(cd examples/rocketmq && go vet ./... && go test -race -count=1 -timeout 10m ./...)
(cd test/zookeeper && go vet ./... && go test -race -count=1 -timeout 10m ./...)
(cd test/browser && go vet ./... && go test -race -count=1 -timeout 10m ./...)
(cd examples/dubbo-go && go vet ./... && go test -race -count=1 -timeout 10m ./...)
