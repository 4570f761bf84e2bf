"""Exploration for issue #15 (docs/notes/2026-12-estimator-log.md, "Towards a count-law estimator"): a count-only
empirical-Bayes predictor. The prior g of lambda = S*x is the NPMLE (EM on a log grid) of the
level-0 counts of all positives, K_S ~ Poisson(lambda); each positive's full-pool count is
K_S + D with D ~ the posterior mixture of Poisson(lambda*(N/S - 1)), and the expected AP@k is
taken over that law. Usage: python npmle.py SIMDIR... (folders of `tailrank simulate`;
CMAX=c routes counts below c through the posterior, the rest through the count plug-in).
"""
import sys, numpy as np
sys.path.insert(0, __import__('os').path.dirname(__file__))
from load import load
from scipy.stats import poisson
k=1000
import os; CMAX=int(os.environ.get("CMAX","5"))
for d in sys.argv[1:]:
    z=load(d); K=z['K']; S=z['S']; N=z['N']; j=z['j']; C=z['C']; qid=z['qid']; nq=z['nq']
    nposq=np.bincount(qid,minlength=nq)
    def ap_of(v): return np.mean(np.bincount(qid,weights=v,minlength=nq)/np.minimum(k,nposq))
    f=lambda r: np.where(r<=k, j/r, 0.0)
    truth=ap_of(f(j+C+z['KN']))
    R=N/S[0]
    c0=K[:,0]
    grid=np.concatenate([[0.0],np.logspace(-4,3,120)])
    use=c0<200
    cs=c0[use]
    P=poisson.pmf(cs[:,None],grid[None,:])  # n x G
    w=np.ones(len(grid))/len(grid)
    for it in range(500):
        m=P@w; post=P*w/m[:,None]; w=post.mean(0)
    # predicted contributions
    v=f(j+C+c0*R).astype(float)  # count plug-in for large counts
    Dmax=4000
    Ds=np.arange(Dmax)
    for c in range(0,CMAX):
        idx=np.where(c0==c)[0]
        if len(idx)==0: continue
        post=poisson.pmf(c,grid)*w; post/=post.sum()
        # pmf of D: mixture of Poisson(lam*(R-1))
        pmfD=(poisson.pmf(Ds[:,None], grid[None,:]*(R-1))*post[None,:]).sum(1)
        for i in idx:
            r=j[i]+C[i]+c+Ds
            v[i]=(pmfD*np.where(r<=k, j[i]/r,0)).sum()
    # also the binomial-ish map for count plug-in for c>=5: E over Poisson(c*(R-1))? keep plug-in
    print(d,'truth %.4f npmle-EB %.4f'%(truth, ap_of(v)))
