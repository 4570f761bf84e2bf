"""Exploration for issue #15 (docs/notes/2026-12-estimator-log.md, "Towards a count-law estimator"): for K_S = 0
the prior of lambda is learned on the nested levels (level L -> 0), binned by the positive's
normalised gap above the query's top sample scores; K_S >= 1 uses the pooled NPMLE prior.
Usage: python gap.py SIMDIR...  (env LEVEL, MSP, NB: level, spacing rank, number of bins).
"""
import sys, os, json, numpy as np
sys.path.insert(0, os.path.dirname(__file__))
from load import load
from scipy.stats import poisson
k=1000; L=int(os.environ.get('LEVEL','4')); M_SP=int(os.environ.get('MSP','20'))
NB=int(os.environ.get('NB','8'))
grid=np.concatenate([[0.0],np.logspace(-4,3,120)])
def npmle(counts, exposure=1.0, iters=400):
    # counts ~ Poisson(lam*exposure); returns weights on grid
    P=poisson.pmf(counts[:,None],grid[None,:]*exposure)
    w=np.ones(len(grid))/len(grid)
    for _ in range(iters):
        m=P@w+1e-300; w=(P*w/m[:,None]).mean(0)
    return w
for d in sys.argv[1:]:
    z=load(d); K=z['K']; S=z['S']; N=z['N']; j=z['j']; C=z['C']; qid=z['qid']; nq=z['nq']; sc=z['sc']
    flat=np.load(f'{d}/summary/top_scores.npy', mmap_mode='r'); tl=np.load(f'{d}/summary/top_len.npy')
    # Summary format 3: the lists end to end; pad them back to (Q, L, max len) here.
    st=np.concatenate([[0],np.cumsum(tl,dtype=np.int64)])[:-1].reshape(tl.shape)
    top=np.full(tl.shape+(int(tl.max()),),-np.inf,np.float32)
    for q_ in range(tl.shape[0]):
        for l_ in range(tl.shape[1]): top[q_,l_,:tl[q_,l_]]=flat[st[q_,l_]:st[q_,l_]+tl[q_,l_]]
    nposq=np.bincount(qid,minlength=nq)
    def ap_of(v): return np.mean(np.bincount(qid,weights=v,minlength=nq)/np.minimum(k,nposq))
    f=lambda jj,r: np.where(r<=k, jj/r, 0.0)
    truth=ap_of(f(j,j+C+z['KN']))
    def gap(level):
        t1=top[qid,level,0]; tm=top[qid,level,M_SP-1]
        return (sc-t1)/np.maximum(t1-tm,1e-9)
    gL=gap(L); g0=gap(0)
    # calibration set: positives with K_L == 0; target K_0 - K_L = K_0 ~ Poisson(lam*(r-1)), lam in level-L units
    r=S[0]/S[L]; R=N/S[0]
    cal=K[:,L]==0
    edges=np.quantile(gL[cal], np.linspace(0,1,NB+1)); edges[0]=-np.inf; edges[-1]=np.inf
    priors=[]
    for b in range(NB):
        m=cal&(gL>=edges[b])&(gL<edges[b+1])
        priors.append(npmle(K[m,0], exposure=(r-1)))
    wpool=npmle(K[K[:,0]<200,0])
    Ds=np.arange(6000)
    DOUBLE=os.environ.get('DOUBLE','0')=='1'
    def pmf_of(post):
        mu=grid*(R-1); sel=post>1e-12
        return (poisson.pmf(Ds[:,None], mu[None,sel])*post[None,sel]).sum(1)
    bucket_pmf=[]
    for b in range(NB):
        post=priors[b].copy()
        if DOUBLE: post=post*poisson.pmf(0,grid)
        bucket_pmf.append(pmf_of(post/post.sum()))
    count_pmf={}
    v=f(j,j+C+K[:,0]*R).astype(float)
    for i in np.where(K[:,0]<60)[0]:
        c=K[i,0]
        if c==0:
            b=min(max(np.searchsorted(edges,g0[i],side='right')-1,0),NB-1)
            pmfD=bucket_pmf[b]
        else:
            if c not in count_pmf:
                post=wpool*poisson.pmf(c,grid); count_pmf[c]=pmf_of(post/post.sum())
            pmfD=count_pmf[c]
        rr=j[i]+C[i]+c+Ds
        v[i]=(pmfD*np.where(rr<=k, j[i]/rr,0)).sum()
    print(d,'truth %.4f gap-EB %.4f err %+.2f'%(truth, ap_of(v), 100*(ap_of(v)-truth)))
