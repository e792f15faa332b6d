import re,collections,statistics,sys
cur=None; data=collections.defaultdict(list)
for line in open(sys.argv[1]):
    m=re.match(r'== (\w+) round (\d+) ranks (\d+)',line)
    if m: jar,rnd,ranks=m.group(1),m.group(2),m.group(3); continue
    m=re.match(r'# (co-\w+)',line)
    if m: test=m.group(1); continue
    m=re.match(r'(\d+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)',line)
    if m:
        data[(ranks,test,m.group(1),jar)].append((float(m.group(2)),float(m.group(5)),float(m.group(6)),m.group(7)))
keys=sorted({k[:3] for k in data}, key=lambda k:(int(k[0]),k[1],int(k[2])))
print(f"{'ranks':5} {'test':13} {'size':8} {'base us (med)':>14} {'early us':>10} {'ratio':>6} {'frames b/e':>12} {'acks b/e':>11} alg")
for k in keys:
    b=data[k+('base',)]; e=data[k+('early',)]
    if not b or not e: continue
    mb=statistics.median(x[0] for x in b); me=statistics.median(x[0] for x in e)
    print(f"{k[0]:5} {k[1]:13} {k[2]:8} {mb:14.1f} {me:10.1f} {me/mb:6.2f} {statistics.median(x[1] for x in b):5.2f}/{statistics.median(x[1] for x in e):5.2f} {statistics.median(x[2] for x in b):5.2f}/{statistics.median(x[2] for x in e):5.2f} {b[0][3]}")
