"""Exploration for issue #15 (docs/notes/2026-12-estimator-log.md, "Towards a count-law estimator"): the
conditional mean E[K_0 | K_L = c] between the deepest nested level and level 0, transferred
to level 0 -> N by scale ("self-calibration"), plugged into the expected-rank map.
Usage: python eb.py SIMDIR... (folders of `tailrank simulate`).
"""
import sys, numpy as np
sys.path.insert(0, __import__('os').path.dirname(__file__))
from load import load
from scipy.stats import poisson
k=1000
for d in sys.argv[1:]:
    z=load(d); K=z['K']; S=z['S']; N=z['N']; j=z['j']; C=z['C']; qid=z['qid']; nq=z['nq']
    npos=np.bincount(qid,minlength=nq)[qid]
    def mapk(ranks): return ap_from(ranks)
    def ap_from(ranks):
        v=np.where(ranks<=k, j/ranks, 0.0)
        return np.mean(np.bincount(qid,weights=v,minlength=nq)/np.minimum(k,np.bincount(qid,minlength=nq)))
    truth=ap_from(j+C+z['KN'])
    # count plug-in expected rank
    cnt=ap_from(j+C+K[:,0]*N/S[0])
    # EB: learn E[K0 | KL=c] at level L (ratio r=S0/SL), apply to get E[KN | K0=c] assuming same scaled relation
    L=4; r=S[0]/S[L]; R=N/S[0]
    # empirical conditional mean of K0 given KL=c, for c<cmax
    out={}
    for c in range(0,10):
        m=K[:,L]==c
        if m.sum()>0: out[c]=(K[m,0].mean(), m.sum())
    # predicted KN for positives with K0=c: c + (R-1)*lam, lam estimated as E[K0-KL | KL=c]/(r-1) ... scale-free assumption
    est=K[:,0]*N/S[0]
    for c in range(0,5):
        m=K[:,0]==c
        if c in out:
            gain=(out[c][0]-c)/(r-1)   # per unit of extra sample ratio
            est[m]=c+(R-1)*gain
    eb=ap_from(j+C+est)
    # truth conditional for reference
    tc={c: z['KN'][K[:,0]==c].mean() for c in range(5)}
    print(d, 'truth %.4f count %.4f eb %.4f'%(truth,cnt,eb))
    print('  E[K0|KL=c]',{c:round(v[0],2) for c,v in out.items()}, ' true E[KN|K0=c]',{c:round(v,2) for c,v in tc.items()}, ' eb pred',{c:round(c+(R-1)*(out[c][0]-c)/(r-1),2) for c in range(5)})
