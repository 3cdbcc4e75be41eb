#!/bin/bash
# idlecpu.sh SYS BIN TAG PORT: 10 agents, formed, then CPU per agent over 60 s of idle (ms/s), from /proc.
sys=$1 bin=$2 tag=$3 port=$4
out=/tmp/s8/idle-$tag.txt
/tmp/realcluster-s8 -sys $sys -n 10 -bin $bin -trials 3 -form-timeout 60s -hold 110s -port $port -dir /tmp/s8/d-$tag > $out 2>&1 &
rc=$!
until grep -q holding $out; do sleep 1; if ! kill -0 $rc 2>/dev/null; then echo "realcluster ended early"; exit 1; fi; done
sleep 20
pat=$([ $sys = serf ] && echo "$(readlink -f /tmp/serfbin/serf) agent" || echo "$bin agent")
/usr/bin/python3 - "$pat" <<'PY'
import os,sys,time
pat=sys.argv[1]
def procs():
    r={}
    for p in os.listdir('/proc'):
        if not p.isdigit(): continue
        try:
            cmd=open(f'/proc/{p}/cmdline','rb').read().replace(b'\0',b' ').decode()
            if cmd.startswith(pat):
                f=open(f'/proc/{p}/stat').read().rsplit(')',1)[1].split()
                r[p]=int(f[11])+int(f[12])
        except Exception: pass
    return r
a=procs(); t0=time.time(); time.sleep(60); b=procs(); dt=time.time()-t0
hz=os.sysconf('SC_CLK_TCK')
per=sorted((b[p]-a[p])/hz/dt*1000 for p in a if p in b)
print(f"agents {len(per)}: idle CPU ms/s per agent p50 {per[len(per)//2]:.2f} min {per[0]:.2f} max {per[-1]:.2f} mean {sum(per)/len(per):.2f}")
PY
wait $rc
