"""Damping of the next step's projection by the last doubling's ratio (#45), whole width
and spread part, per seed set. Usage: projection_damping.py FILE.csv [...]
(docs/notes/2026-12-06-projection-damping.md)."""
import csv,math,sys
sys.path.insert(0, __import__('os').path.dirname(__file__))
from projection_reach import proj,num
for path in sys.argv[1:]:
    rows=list(csv.DictReader(open(path)))
    def score(fn, rr):
        return sum(abs(fn(r)/num(r,'measured_2f')-1)<=0.3 for r in rr)
    print(path, len(rows))
    sets=[("6-11",range(6,12)),("12-17",range(12,18)),("18-23",range(18,24)),("24-29",range(24,30))]
    for b in [0,-0.2,-0.3]:
        def d1(r): return proj(r,beta=b)
        def d2(r):
            p=proj(r); s=num(r,'spread'); sh=num(r,'s_h')
            if s>0 and sh>0: p += s*((s/sh)**b-1)
            return max(p,0)
        out=[]
        for name,fn in [("W",d1),("s",d2)]:
            cells=[]
            for sn,sr in sets:
                rr=[r for r in rows if int(r['seed']) in sr]
                if rr:
                    t=[r for r in rr if r['held_out']=='false']; h=[r for r in rr if r['held_out']=='true']
                    cells.append(f"{sn}: {score(fn,t)}/{len(t)},{score(fn,h)}/{len(h)}")
            out.append(f"{name}: "+"  ".join(cells)+f"  all {score(fn,rows)}/{len(rows)}")
        print(b, " | ".join(out))
