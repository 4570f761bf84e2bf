"""Exploration (docs/notes/2026-12-estimator-log.md, "The endpoint test and the immune positives"): the level-selected
fit (12 candidates, argmin |e_1|) with the count law, and (IMM=1, the default) the endpoint law
for the immune positives, in both the selection and the prediction at N. Needs lv_{m}_{q}.csv
beside each SIMDIR's summary (`hardness_levels DIR/summary m q 2`) and the boot_*.npz tables.
Usage: IMM=1 python endpoint_selection.py SIMDIR..."""
import sys, os, json, numpy as np
from endpoint_common import load, ef_single, ef_mix, immune_rates
k=1000
IMM=int(os.environ.get('IMM','1'))
def predict(lv, level, K, C, j, sc, S_from, S_to, n_to_minus):
    """Per-positive expected contribution at pool size S_to from the fit at `level` (sample S_from)."""
    xh=lv['x_hat'][level]; br=lv['branch'][level].astype(int)
    Kl=K[:,level]; base=j+C+Kl; e=(S_to-S_from)
    lam=np.where(br==0, Kl/S_from, xh)*e
    out=ef_single(j,base,lam)
    imm=np.where((br==2)&(lv['xi'][level]<0))[0]
    if IMM and len(imm):
        L=immune_rates(sc[imm],lv['u'][level][imm],lv['sigma'][level][imm],lv['xi'][level][imm],lv['n_u'][level][imm])*e/S_from
        out[imm]=ef_mix(j[imm],base[imm],L)
    return out
def run(d):
    z=load(d)
    K,C,sc,KN,qid,j,nq,S,N=(z[x] for x in ('K','C','sc','KN','qid','j','nq','S','N'))
    P=len(qid)
    npq=np.bincount(qid,minlength=nq)
    ap=lambda v: 100*np.mean(np.bincount(qid,weights=v,minlength=nq)/np.minimum(k,npq))
    f=lambda jj,r: np.where(r<=k, jj/np.maximum(r,1),0.0)
    T=ap(f(j,j+C+KN)); E0=ap(f(j,j+C+K[:,0]))
    res=[]
    for mm in [1000,2000,4000]:
        for q in [0.8,0.9,0.95,0.98]:
            raw=np.genfromtxt(f'{d}/lv_{mm}_{q}.csv',delimiter=',',names=True)
            lv={c: raw[c].reshape(2,P) for c in raw.dtype.names}
            e1=ap(predict(lv,1,K,C,j,sc,S[1],S[0],None))-E0
            pN=ap(predict(lv,0,K,C,j,sc,S[0],N,None))-T
            res.append((mm,q,e1,pN))
    best=min(res,key=lambda r:abs(r[2]))
    dflt=[r for r in res if r[0]==4000 and r[1]==0.95][0]
    return T,dflt,best,res
if __name__=='__main__':
    for d in sys.argv[1:]:
        T,dflt,best,res=run(d)
        print('%-26s IMM=%d default err %+5.2f (e1 %+5.2f) | selected %d/%.2f err %+5.2f (e1 %+5.2f) | all: %s'%(d.split('/')[-1],IMM,dflt[3],dflt[2],best[0],best[1],best[3],best[2],
              ' '.join('%+.1f'%r[3] for r in res)),flush=True)
