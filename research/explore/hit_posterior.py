"""hit@1 as a posterior predictive over the GPD of each query's fit (docs/notes/2026-12-estimator-log.md, "hit@1 from a
posterior over the tail"). Each DIR is a `tailrank simulate` folder holding DIR/h.csv from
`tailrank predict --summary DIR/summary --bootstrap 0 --sample-noise 0 --hardness-out DIR/h.csv`.
Truth (DIR/truth.json) is used only for scoring. Usage: hit_posterior.py DIR...

The second line per DIR (thirteenth session) profiles σ out instead of integrating it (no prior on
σ, so no pull toward ξ = 0 from the support constraint's prior volume): the posterior mean of
hit under a flat and an empirical-Bayes prior on ξ, and the plug-in at the EB posterior's mode
and mean of ξ (shrinkage of each query's ξ toward the law across queries)."""
import numpy as np, json, csv, sys
def load(d):
    m=json.load(open(f'{d}/summary/manifest.json'))
    S=m['subset_sizes'][0]; N=m['pool_size']
    tl=np.load(f'{d}/summary/top_len.npy').astype(np.int64)
    ts=np.load(f'{d}/summary/top_scores.npy').astype(np.float64)
    starts=np.concatenate([[0],np.cumsum(tl.ravel())])[:-1].reshape(tl.shape)
    rows={}
    for r in csv.DictReader((l for l in open(f'{d}/h.csv') if not l.startswith('#'))):
        if r['j']=='1': rows[r['query_id']]=r
    t=json.load(open(f'{d}/truth.json'))
    out=[]
    for qi,q in enumerate(t['queries']):
        r=rows[q['id']]; p=q['positives'][0]
        truth = 1.0 if (p['core_above']==0 and p['pool_above_n']==0) else 0.0
        st=starts[qi,0]; top=ts[st:st+tl[qi,0]]
        out.append(dict(truth=truth,K=int(r['pool_above']),C=int(r['core_above']),s=float(r['score']),
            u=float(r['tail_u']) if r['tail_u'] else np.nan,sig=float(r['tail_sigma']) if r['tail_sigma'] else np.nan,
            xi=float(r['tail_xi']) if r['tail_xi'] else np.nan,nu=int(r['tail_n_u']) if r['tail_n_u'] else 0,
            xhat=float(r['x_hat']),top=top,x=p['x']))
    return out,S,N
XI=np.linspace(-1.0,0.0,41)
T=np.linspace(-3,3,61)
def gpd_ll(y,sig,xi):
    # y (n,), sig (...,), xi scalar -> sum log density
    if abs(xi)<1e-9:
        return -len(y)*np.log(sig)-y.sum()/sig
    z=1+xi*y[None,:]/sig[:,None]
    ok=(z>0).all(axis=1)
    zz=np.where(z>0,z,1.0)
    ll=-len(y)*np.log(sig)+(-1/xi-1)*np.log(zz).sum(axis=1)
    return np.where(ok,ll,-np.inf)
def surv(y,sig,xi):
    if abs(xi)<1e-9: return np.exp(-y/sig)
    z=1+xi*y/sig
    return np.where(z>0,np.maximum(z,0)**(-1/xi),0.0)
def per_query(q,S,N):
    """marginal log-lik per xi (sigma integrated, prior dsigma/sigma) and E[hit|xi]."""
    y=q['top'][:q['nu']]-q['u']; y=y[y>=0]
    n=len(y); ymax=y.max()
    ml=np.full(len(XI),-np.inf); eh=np.zeros(len(XI))
    dist=q['s']-q['u']
    for i,xi in enumerate(XI):
        base=max(q['sig'],1e-12)
        lo=abs(xi)*ymax*(1+1e-9)
        sig=np.maximum(base*np.exp(T),lo) if xi<0 else base*np.exp(T)
        sig=np.unique(sig)
        ll=gpd_ll(y,sig,xi)
        # integrate over log sigma (trapezoid on the grid; prior flat in log sigma)
        ls=np.log(sig)
        if len(sig)<2: continue
        w=np.exp(ll-ll.max()) if np.isfinite(ll.max()) else None
        if w is None: continue
        dl=np.gradient(ls)
        ww=w*dl
        ml[i]=ll.max()+np.log(ww.sum())
        x=(n/S)*surv(dist,sig,xi)
        h=np.exp(-(N-S)*x)
        eh[i]=(ww*h).sum()/ww.sum()
    return ml,eh
def npmle(L,steps):
    """Weights on the ξ grid maximising the mixture likelihood of the rows of L (EM)."""
    w=np.full(L.shape[1],1/L.shape[1])
    for _ in range(steps):
        r=L*w[None,:]; r/=r.sum(axis=1,keepdims=True); w=r.mean(axis=0)
    return w
def run(d):
    qs,S,N=load(d)
    plug=[];truth=[];ML=[];EH=[];idx=[]
    for i,q in enumerate(qs):
        truth.append(q['truth'])
        if q['C']>0 or q['K']>0:
            plug.append(0.0); continue
        if q['K']==0 and q['nu']>0 and np.isfinite(q['u']):
            plug.append(np.exp(-(N-S)*q['xhat']))
            ml,eh=per_query(q,S,N); ML.append(ml); EH.append(eh); idx.append(i)
        else:
            plug.append(np.exp(-(N-S)*q['xhat']))
    plug=np.array(plug); truth=np.array(truth)
    ML=np.array(ML); EH=np.array(EH)
    # flat prior on xi
    def post(logprior):
        lp=ML+logprior[None,:]; lp-=lp.max(axis=1,keepdims=True); w=np.exp(lp); w/=w.sum(axis=1,keepdims=True)
        return (w*EH).sum(axis=1)
    flat=plug.copy(); flat[idx]=post(np.zeros(len(XI)))
    # EB: NPMLE over xi grid
    wq=npmle(np.exp(ML-ML.max(axis=1,keepdims=True)),500)
    eb=plug.copy(); eb[idx]=post(np.log(wq+1e-300))
    # MAP-xi plug in under EB prior? also profile argmax check
    print(f"{d:26s} truth {truth.mean():.4f} plug {plug.mean()-truth.mean():+.4f} flat {flat.mean()-truth.mean():+.4f} eb {eb.mean()-truth.mean():+.4f}  n_tailq {len(idx)}  EBxi-mean {np.dot(wq,XI):+.3f}")
    return wq
XI_P=np.linspace(-1.0,0.0,81)
T_P=np.linspace(-4,4,401)
def profile(q,S,N):
    """Profile log-likelihood over σ per ξ of XI_P, and hit(ξ, σ̂(ξ))."""
    y=q['top'][:q['nu']]-q['u']; y=y[y>=0]; n=len(y); ymax=y.max()
    dist=q['s']-q['u']
    pl=np.full(len(XI_P),-np.inf); h=np.zeros(len(XI_P))
    base=max(q['sig'],1e-12)
    for i,xi in enumerate(XI_P):
        sig=base*np.exp(T_P)
        if xi<0: sig=np.maximum(sig,abs(xi)*ymax*(1+1e-9))
        ll=gpd_ll(y,sig,xi); j=np.argmax(ll)
        pl[i]=ll[j]; h[i]=np.exp(-(N-S)*(n/S)*surv(dist,sig[j],xi))
    return pl,h
def run_profile(d):
    qs,S,N=load(d)
    plug=[];truth=[];PL=[];H=[];idx=[]
    for i,q in enumerate(qs):
        truth.append(q['truth'])
        if q['C']>0 or q['K']>0: plug.append(0.0); continue
        plug.append(np.exp(-(N-S)*q['xhat']))
        if q['nu']>0 and np.isfinite(q['u']):
            pl,h=profile(q,S,N); PL.append(pl); H.append(h); idx.append(i)
    plug=np.array(plug); truth=np.array(truth); PL=np.array(PL); H=np.array(H)
    L=np.exp(PL-PL.max(axis=1,keepdims=True)); rows=np.arange(len(idx))
    def post(w0):
        w=L*w0[None,:]; return w/w.sum(axis=1,keepdims=True)
    wq=npmle(L,1000)
    flat,eb=post(np.ones(len(XI_P))),post(wq)
    def with_(v): a=plug.copy(); a[idx]=v; return a
    pm=(eb*XI_P[None,:]).sum(1)
    j=np.clip(np.round((pm+1)/(XI_P[1]-XI_P[0])).astype(int),0,len(XI_P)-1)
    res={'flat mean':with_((flat*H).sum(1)),'EB mean':with_((eb*H).sum(1)),
         'EB mode plug-in':with_(H[rows,np.argmax(eb,axis=1)]),'EB mean-xi plug-in':with_(H[rows,j])}
    t=truth.mean()
    print(f"{d:26s} profiled sigma: plug {(plug.mean()-t)*100:+.1f} "+" ".join(f"{k} {(v.mean()-t)*100:+.1f}" for k,v in res.items())+" (points)")
for d in sys.argv[1:]: run(d); run_profile(d)
