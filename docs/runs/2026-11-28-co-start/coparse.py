# Prints each collective figure of jdet perf co-* output with its frames/op and acks/op: python3 coparse.py FILE...
import re,sys
# usage: coparse.py FILE... ; prints test size avg frames/op acks/op
for fn in sys.argv[1:]:
    cur=None
    print('==',fn)
    for line in open(fn):
        m=re.match(r'# (co-\w+), (\d+) ranks',line)
        if m: cur=m.group(1); continue
        m=re.match(r'^(\d+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s',line)
        if m and cur: print(f'{cur:13} {m.group(1):>7} avg {float(m.group(2)):8.2f}  frames/op {float(m.group(5)):6.2f}  acks/op {float(m.group(6)):5.2f}')
