import json,glob,collections,statistics,sys
rows=collections.OrderedDict(); loads={}
for f in sorted(glob.glob('p3-*.json')):
    r=f[3:-5]; d=json.load(open(f)); loads[r]=d['load']['P3']
    for fg in d['figures']:
        if fg['metric']=='req/s per second':
            rows.setdefault(fg['case'],{})[r]=fg['namecast']['p50']
b=sorted(r for r in loads if r.startswith('dd53')); a=sorted(r for r in loads if r.startswith('s7'))
print('| case | before (dd53d) p50 req/s, each run | after (main) each run | median after / median before |')
print('|---|---|---|---:|')
for c,v in rows.items():
    mb=statistics.median(v[r] for r in b); ma=statistics.median(v[r] for r in a)
    print(f"| {c} | {', '.join(str(v[r]) for r in b)} | {', '.join(str(v[r]) for r in a)} | {ma/mb:.2f} |")
print('loads', loads)
