"""Shared helpers of the endpoint_*.py explorations (docs/notes/2026-12-estimator-log.md, "The endpoint test and the
immune positives"): load a `tailrank simulate` folder with its per-level evt fits (`levels.csv`,
written by `cargo run --release --example hardness_levels -- DIR/summary > DIR/levels.csv`), the
bootstrap tables of endpoint_boot.py, and expected AP@k terms under Poisson counts."""
import json, numpy as np
from scipy.stats import poisson
k = 1000
def load(d, levels=True):
    """The run in folder d; levels=False skips levels.csv (the per-level fits)."""
    s=d+'/summary'; m=json.load(open(s+'/manifest.json')); t=json.load(open(d+'/truth.json'))
    off=np.load(s+'/query_offsets.npy').astype(np.int64)
    K=(np.load(s+'/pos_pool_above.npy')+np.load(s+'/pos_pool_ties.npy')).astype(np.int64)
    C=(np.load(s+'/pos_core_above.npy')+np.load(s+'/pos_core_ties.npy')).astype(np.int64)
    sc=np.load(s+'/pos_scores.npy').astype(float)
    KN=np.array([p['pool_above_n'] for q in t['queries'] for p in q['positives']])
    nq=len(off)-1; qid=np.repeat(np.arange(nq),np.diff(off)); P=len(qid)
    j=np.concatenate([np.arange(1,n+1) for n in np.diff(off)])
    run=dict(K=K,C=C,sc=sc,KN=KN,N=float(m['pool_size']),nq=nq,qid=qid,j=j,truth=t['map_at_k'])
    if not levels: return run
    lv=np.genfromtxt(d+'/levels.csv',delimiter=',',names=True); nl=int(lv['level'].max())+1
    R=lambda c: lv[c].reshape(nl,P)
    return dict(run,S=np.array(m['subset_sizes'],float)[:nl],
        xh=R('x_hat'),br=R('branch').astype(int),u=R('u'),sg=R('sigma'),xi=R('xi'),nl=nl)
TABLES={}
def table(n):
    ns=[20,40,50,80,100,200,400,800]
    n=min(ns,key=lambda a:abs(np.log(a/max(n,1))))
    if n not in TABLES: TABLES[n]=np.load(f'boot_{n}.npz')
    return n,TABLES[n]
D=np.arange(k+1)
def ef_single(j,base,lam):
    """E f(base + D), D~Poisson(lam), vectorized over positives."""
    out=np.zeros(len(j))
    for a in range(0,len(j),400):
        sl=slice(a,a+400)
        b=base[sl][:,None]+D[None,:]
        pm=poisson.pmf(D[None,:],lam[sl][:,None])
        out[sl]=(pm*np.where(b<=k, j[sl][:,None]/np.maximum(b,1),0)).sum(1)
    return out
def ef_mix(j,base,L):
    """L: (n, B) rates, equal weights: the mean over replicates of E f."""
    n,B=L.shape
    live=base<=k
    out=np.zeros(n)
    if not live.any(): return out
    jj=np.repeat(j[live],B); bb=np.repeat(base[live],B); ll=L[live].ravel()
    v=np.zeros(len(ll)); z=ll==0
    v[z]=jj[z]/bb[z]
    nz=~z
    if nz.any(): v[nz]=ef_single(jj[nz],bb[nz],ll[nz])
    out[live]=v.reshape(-1,B).mean(1)
    return out
def immune_rates(sc,u,sg,xi,nu):
    """(n, B) level-S rates S*x for immune positives from the endpoint's bootstrap law."""
    R=[]
    for i in range(len(sc)):
        n,t=table(nu[i]); XI=t['XI']; a=int(np.argmin(abs(XI-xi[i]))); beta=-1/XI[a]
        eh=u[i]-sg[i]/xi[i]; z=(sc[i]-eh)/(eh-u[i]); eb=t['E'][a]
        w=np.where(np.isfinite(eb), eb*(1+z), np.inf)
        R.append(nu[i]*np.clip(1-w,0,None)**beta)
    B=min(len(r) for r in R) if R else 1
    return np.array([r[:B] for r in R]) if R else np.zeros((0,1))
