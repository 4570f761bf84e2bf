"""Notes: docs/notes/2026-12-05-level0-excess-signal.md, section 1. Run from a folder holding
`tailrank simulate --preset F --seed 0 --out F` and `F/h.csv` (`predict --hardness-out`), `F/p.json`
(`predict --json`) per family: python3 level0_allowance.py FAMILY..."""
import csv, json, math, sys, collections
def load(fam):
    rows=[r for r in csv.DictReader(l for l in open(f'{fam}/h.csv') if not l.startswith('#'))]
    q=collections.defaultdict(list)
    for r in rows: q[r['query_id']].append(r)
    return q
print(f"{'family':22s} {'Q':>5s} {'hits1-4':>7s} {'sumh(<5)':>8s} {'sumE':>8s} {'D':>7s} {'z':>6s} {'top imm':>7s} {'err':>6s}")
for fam in sys.argv[1:]:
    q=load(fam)
    p=json.load(open(f'{fam}/p.json')); t=json.load(open(f'{fam}/truth.json'))
    H=E=0; hits=0; imm=0
    for qid,ps in q.items():
        top=min(ps,key=lambda r:int(r['j']))
        h=int(top['pool_above']); S=int(top['sample_size'])
        if top['branch']=='immune': imm+=1
        if h>=5: continue  # count branch: x_hat = K/S, no excess by construction
        e=S*float(top['x_hat'])
        H+=h; E+=e; hits+= (1<=h<=4)
    D=H-E; z=D/math.sqrt(max(E,1.0))
    print(f"{fam:22s} {len(q):5d} {hits:7d} {H:8d} {E:8.1f} {D:7.1f} {z:6.1f} {imm:7d} {100*(p['map_at_k']-t['map_at_k']):6.2f}")
