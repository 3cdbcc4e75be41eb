#!/bin/bash
# run.sh N...: namecast then serf agents at each size, one after the other,
# checking with pgrep that every process is gone after each. Take the
# exclusive lock around it: flock -x /work/quiet.lock scripts/realcluster/run.sh 100 200
# Needs /tmp/namecast (go build -o /tmp/namecast ./cmd/namecast) and
# /tmp/serfbin/serf (GOBIN=/tmp/serfbin go install github.com/hashicorp/serf/cmd/serf@v0.11.0).
set -u
cd "$(dirname "$0")"
go build -o /tmp/realcluster-bin . || exit 1
for n in "$@"; do
  uptime
  /tmp/realcluster-bin -sys namecast -n "$n" -trials 10 -form-timeout 150s -port 30000
  echo "leftover namecast: $(pgrep -f /tmp/namecast | wc -l)"
  sleep 5
  uptime
  /tmp/realcluster-bin -sys serf -n "$n" -trials 10 -form-timeout 150s -port 30000
  echo "leftover serf: $(pgrep -f /tmp/serfbin/serf | wc -l)"
  sleep 5
done
uptime
