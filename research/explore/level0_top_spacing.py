"""Notes: docs/notes/2026-12-05-level0-excess-signal.md, section 3. Per query: the p-value of the
top spacing R = (x1-x2)/(x2-x50) of the level-0 top-50 under a GPD with the query's own fitted xi
(tailrank's fit, from h.csv; the null law by Monte Carlo on a xi grid); the pooled count of
p < 0.01 and p < 0.001 against the 1% and 0.1% a GPD tail gives. Needs numpy. Run as
level0_allowance.py: python3 level0_top_spacing.py FAMILY..."""
import csv, sys, numpy as np, collections
rng=np.random.default_rng(0)
grid=np.round(np.arange(-0.8,0.81,0.05),2); B=20000
null={}
for xi in grid:
    u=np.sort(rng.random((B,50)),axis=1)[:,::-1]  # descending uniforms -> descending exceedances
    y=((1-u)**(-xi)-1)/xi if abs(xi)>1e-9 else -np.log(1-u)
    y=np.sort(y,axis=1)[:,::-1]
    null[xi]=np.sort((y[:,0]-y[:,1])/(y[:,1]-y[:,49]))
def pval(r,xi):
    g=grid[np.argmin(np.abs(grid-np.clip(xi,-0.8,0.8)))]
    a=null[g]; return 1-np.searchsorted(a,r)/len(a)
print(f"{'family':22s} {'Q':>5s} {'p<0.01':>7s} {'excess':>7s} {'p<0.001':>7s}")
for fam in sys.argv[1:]:
    xi_of={}
    for r in csv.DictReader(l for l in open(f'{fam}/h.csv') if not l.startswith('#')):
        if r['tail_xi']: xi_of[r['query_id']]=float(r['tail_xi'])
    d=f'{fam}/summary'
    import json
    man=json.load(open(f'{d}/manifest.json'))
    ids=man['query_ids']
    tl=np.load(f'{d}/top_len.npy').astype(np.int64); ts=np.load(f'{d}/top_scores.npy')
    Q,L=tl.shape; starts=np.concatenate([[0],np.cumsum(tl.ravel())])[:-1].reshape(Q,L)
    ps=[]
    for q in range(Q):
        x=ts[starts[q,0]:starts[q,0]+50].astype(np.float64)
        r=(x[0]-x[1])/max(x[1]-x[49],1e-12)
        xi=xi_of.get(ids[q]) if ids else None
        if xi is None: continue
        ps.append(pval(r,xi))
    ps=np.array(ps); n=len(ps)
    print(f"{fam:22s} {n:5d} {np.sum(ps<0.01):7d} {np.sum(ps<0.01)-0.01*n:7.1f} {np.sum(ps<0.001):7d}",flush=True)
