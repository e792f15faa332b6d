import re,sys
def parse(fn):
    r={};cur=None
    for line in open(fn):
        m=re.match(r'# (co-\w+), (\d+) ranks',line)
        if m: cur=m.group(1); continue
        m=re.match(r'^(\d+)\s+([\d.]+)\s',line)
        if m and cur: r[(cur,int(m.group(1)))]=float(m.group(2))
    return r
d=sys.argv[1]
for n in (2,4):
    o=parse(f'{d}/ompi{n}.txt'); j=parse(f'{d}/jdet{n}.txt'); met=0; tot=0
    print(f'== {n} ranks: test size jdet ompi ratio')
    for k in sorted(o):
        if k in j:
            tot+=1; r=j[k]/o[k]; met+= r<=1.0
            print(f'{k[0]:13} {k[1]:>8} {j[k]:9.1f} {o[k]:9.1f} {r:5.2f}')
    print(f'   at or below Open MPI: {met} of {tot}')
