#!/usr/bin/env bash
# One trial: 5 agent processes on loopback (lan profile), a URL registered on
# agent 4, then agent 4 is stopped with $1 (STOP or KILL); prints seconds
# until every other agent's view has lost the URL. Bounded: 60 s.
set -u
sig=$1; bin=${2:-/tmp/nc26}; dir=/tmp/sig26/run-$sig; rm -rf $dir; mkdir -p $dir
pids=()
for i in 0 1 2 3 4; do
  join=""; [ $i -gt 0 ] && join="--join 127.0.0.1:38100"
  $bin agent --node a$i --bind 127.0.0.1:3810$i --http 127.0.0.1:3820$i --rocketmq off --zookeeper off --cluster sig26 --profile lan $join >$dir/a$i.log 2>&1 &
  pids+=($!)
  sleep 0.3
done
cleanup() { for p in "${pids[@]}"; do kill -CONT $p 2>/dev/null; kill -9 $p 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT
for t in $(seq 100); do
  n=$(curl -s 127.0.0.1:38200/v1/members | grep -o '"status":"alive"' | wc -l); [ "$n" -ge 5 ] && break; sleep 0.1
done
curl -s -X PUT -H 'Content-Type: application/json' -d '{"url":"dubbo://10.0.0.9:20880/org.Sig"}' 127.0.0.1:38204/v1/urls >/dev/null
for t in $(seq 100); do
  c=0; for i in 0 1 2 3; do curl -s 127.0.0.1:3820$i/v1/services/org.Sig | grep -q 10.0.0.9 && c=$((c+1)); done
  [ $c -eq 4 ] && break; sleep 0.1
done
[ $c -eq 4 ] || { echo "not registered everywhere"; exit 1; }
start=$(date +%s.%N)
kill -$sig ${pids[4]}
while :; do
  c=0; for i in 0 1 2 3; do curl -s 127.0.0.1:3820$i/v1/services/org.Sig | grep -q 10.0.0.9 && c=$((c+1)); done
  now=$(date +%s.%N)
  [ $c -eq 0 ] && { echo "$sig gone everywhere after $(echo "$now - $start" | bc) s"; break; }
  (( $(echo "$now - $start > 60" | bc) )) && { echo "$sig still held after 60 s"; break; }
  sleep 0.05
done
