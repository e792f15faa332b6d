# Summarises run.sh output: python3 cmp.py DIR JAR1 JAR2 (each cell: the figures of every round, ratio of medians)
import re,sys,glob,statistics,collections
d=sys.argv[1]; jars=sys.argv[2:]
def parse(fn):
    r={};cur=None
    for line in open(fn):
        m=re.match(r'# (co-\w+), (\d+) ranks',line)
        if m: cur=m.group(1); continue
        m=re.match(r'^(\d+)\s+([\d.]+)\s',line)
        if m and cur: r[(cur,int(m.group(1)))]=float(m.group(2))
    return r
for n in (2,4):
  for drv in ('tpm','one'):
    vals=collections.defaultdict(lambda: collections.defaultdict(list))
    for j in jars:
        for fn in sorted(glob.glob(f'{d}/{j}-{n}-{drv}-*.txt')):
            for k,v in parse(fn).items(): vals[k][j].append(v)
    print(f'== {n} ranks, {drv}')
    for k in sorted(vals):
        row=' | '.join(f"{j} "+', '.join(f'{x:.1f}' for x in vals[k][j]) for j in jars)
        meds=[statistics.median(vals[k][j]) for j in jars if vals[k][j]]
        ratio = meds[1]/meds[0] if len(meds)>1 else 0
        print(f'{k[0]:13} {k[1]:6}  {row}   med ratio {ratio:.2f}')
