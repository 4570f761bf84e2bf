"""Notes: docs/notes/2026-12-05-hit-at-1-parts.md, "Oracle check". For the queries whose best
positive is in the tail branch: mean predicted hit@1 e^{-(N-S)x_hat}, the same map at the true x
(truth.json), the truth, and quartiles of x_hat/x. Usage: simulate --out DIR; predict --summary
DIR/summary --json --hardness-out DIR/h.csv > DIR/p.json; python3 hit_at_1_oracle.py DIR"""
import csv, json, math, sys, collections
d=sys.argv[1]
t=json.load(open(d+'/truth.json')); N=t['pool_size']
tq={q['id']:{p['id']:p for p in q['positives']} for q in t['queries']}
rows=[r for r in csv.reader(l for l in open(d+'/h.csv') if not l.startswith('#'))]
hdr=rows[0]; rows=[dict(zip(hdr,r)) for r in rows[1:]]
byq=collections.defaultdict(list)
for r in rows: byq[r['query_id']].append(r)
g=collections.defaultdict(list)
for q,rs in byq.items():
    best=min(rs,key=lambda r:int(r['j']))
    br='immune' if any(r['branch']=='immune' for r in rs) else ('tail' if any(r['branch']=='tail' for r in rs) else 'count')
    if br!='tail': continue
    if best['branch']!='tail': continue
    tp=tq[q][best['positive_id']]
    S=int(best['sample_size']); M=N-S
    xh=float(best['x_hat']); x=tp['x']
    g['pred'].append(math.exp(-M*xh)); g['oracle'].append(math.exp(-M*x)); g['truth'].append(1.0 if tp['pool_above_n']==0 else 0.0)
    g['ratio'].append(xh/x if x>0 else float('nan'))
    g['xi'].append(float(best['tail_xi']))
n=len(g['pred']); print('tail-branch best positives:',n)
for k in ('pred','oracle','truth'): print(k, round(sum(g[k])/n,3))
r=sorted(v for v in g['ratio'] if v==v); print('x_hat/x quartiles', [round(r[int(len(r)*q)],2) for q in (0.1,0.25,0.5,0.75,0.9)])
