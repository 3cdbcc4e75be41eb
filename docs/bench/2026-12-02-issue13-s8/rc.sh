#!/bin/bash
# rc.sh SYS N BIN TAG: one realcluster run with the P6 simulation stopped (SIGSTOP) around it.
sys=$1 n=$2 bin=$3 tag=$4
p6=$(pgrep -f "nb -scenarios p6" | paste -sd' ')
[ -n "$p6" ] && kill -STOP $p6
trap '[ -n "$p6" ] && kill -CONT $p6' EXIT
sleep 5
echo "start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
/tmp/realcluster-s8 -sys $sys -n $n -bin $bin -trials 5 -form-timeout 150s -hold 20s -port 21000 -dir /tmp/s8/rc-$tag 2>&1
echo "leftover: $(pgrep -fc 'nc-nocomp agent|nc-comp agent|serf agent')"
echo "end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
