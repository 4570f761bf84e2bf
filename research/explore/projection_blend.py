#!/usr/bin/env python3
"""Projection rules of the realized width at 2f (issue #45), fixed before their runs were read
(docs/notes/2026-12-07-projection-blend.md), scored on the CSV of the `projection_levels`
example: runs within +-30% of the width measured at 2f (w0), all and held out.

  projection_blend.py FILE.csv...

B  the built-in part-wise projection (`proj`);
R1 W_f * exp(-slope), slope of ln W over the cuts f, f/2, f/4, f/8, clamped to [0.5, 1.2];
R2 sqrt(B * R1);
R3 sqrt(B * 0.9 W_f), 0.9 the pooled median of W_2f/W_f on seeds 24-29 and 36-41.
A CSV of `next_step_validation` (no deeper cuts) is scored on B and R3 only.
"""
import csv, math, sys
def F(r,k): return float(r[k])
def fin(x): return x==x and x>0
def R1(r):
    pts=[(l,math.log(F(r,f'w{l}'))) for l in range(1,5) if fin(F(r,f'w{l}'))]
    if len(pts)<3: return F(r,'w1')
    mx=sum(l for l,_ in pts)/len(pts); my=sum(y for _,y in pts)/len(pts)
    sl=sum((l-mx)*(y-my) for l,y in pts)/sum((l-mx)**2 for l,_ in pts)
    return F(r,'w1')*min(max(math.exp(-sl),0.5),1.2)
rules={'B':lambda r:F(r,'proj'),'R1':R1,'R2':lambda r:math.sqrt(F(r,'proj')*R1(r)),'R3':lambda r:math.sqrt(F(r,'proj')*0.9*F(r,'w1'))}
for f in sys.argv[1:]:
    rows=list(csv.DictReader(open(f)))
    names=list(rules)
    if 'measured_2f' in rows[0]:
        for r in rows:
            r.update(w0=r['measured_2f'], w1=r['w_f'], proj=r['projected_2f'])
        names=['B','R3']
    out=[]
    for k in names:
        fn=rules[k]
        ok=[abs(fn(r)/F(r,'w0')-1)<=0.3 for r in rows]
        ho=[o for o,r in zip(ok,rows) if r['held_out']=='true']
        out.append(f"{k} {sum(ok)}/{len(ok)} (held {sum(ho)}/{len(ho)})")
    print(f, '  '.join(out))
