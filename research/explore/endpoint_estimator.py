"""Exploration (docs/notes/2026-12-estimator-log.md, "The endpoint test and the immune positives"): level 0's
prediction under the count law (K_N = K_S + Poisson((N - S) x_hat)) with every fitted-tail
positive given the parametric-bootstrap law of its rate (immune: relative excess past the fitted
endpoint; tail branch: the fitted survival p_hat as the pivot), and the parts of the error that
the tail and the immune positives add. Points of mAP@1000 against the realized truth.
Usage: python endpoint_estimator.py SIMDIR...  (boot_200.npz in the current folder)."""
import sys, numpy as np
from scipy.stats import poisson
from endpoint_common import load
k=1000
bt=np.load('boot_200.npz'); XI=bt['XI']; EB=bt['E']; XS=bt['XS']; SG=bt['SG']
def contrib_mix(j,C,K0,lam):
    base=j+C+K0
    if base>k: return 0.0
    d=np.arange(k-base+1)
    pm=poisson.pmf(d[:,None],lam[None,:]).mean(1)
    return (pm*j/(base+d)).sum()
def lam_law(xi, nu, p_hat=None, zrel=None):
    a=int(np.argmin(abs(XI-xi))); beta=-1/XI[a]
    xs=XS[a]; sg=SG[a]; eb=EB[a]
    if zrel is not None:
        w=np.where(np.isfinite(eb), eb*(1+zrel), np.inf)
    else:
        with np.errstate(all='ignore'):
            w=np.where(xs<0, sg*(p_hat**(-xs)-1)/np.where(xs<0,xs,-1), -sg*np.log(p_hat))
    return nu*np.clip(1-w,0,None)**beta
def run(d, lev=0, tail_law=True):
    z=load(d); S=z['S'][lev]; N=z['N']; K=z['K'][:,lev]; C=z['C']; j=z['j']; qid=z['qid']; nq=z['nq']
    xh=z['xh'][lev]; br=z['br'][lev]; u=z['u'][lev]; sg=z['sg'][lev]; xi=z['xi'][lev]; sc=z['sc']
    npq=np.bincount(qid,minlength=nq)
    ap=lambda v: 100*np.mean(np.bincount(qid,weights=v,minlength=nq)/np.minimum(k,npq))
    f=lambda jj,r: np.where(r<=k, jj/np.maximum(r,1),0.0)
    truth_c=f(j,j+C+z['KN']); T=ap(truth_c)
    er=f(j, j+C+N*np.where(br==0,K/S,xh))
    cl=np.zeros(len(j)); bl=np.zeros(len(j))
    for i in range(len(j)):
        lam=np.array([(N-S)*(K[i]/S if br[i]==0 else xh[i])])
        cl[i]=contrib_mix(j[i],C[i],K[i],lam)
        if br[i]==0 or xi[i]>=0 or (br[i]==1 and not tail_law):
            bl[i]=cl[i]; continue
        eh=u[i]-sg[i]/xi[i]
        if br[i]==2:
            L=lam_law(xi[i],200,zrel=(sc[i]-eh)/(eh-u[i]))
        else:
            ph=xh[i]*S/200.0
            L=lam_law(xi[i],200,p_hat=ph)
        bl[i]=contrib_mix(j[i],C[i],K[i],L*(N-S)/S)
    parts={}
    for name,b in [('tail',1),('imm',2)]:
        m=br==b
        parts[name]=(ap(np.where(m,cl,truth_c))-T, ap(np.where(m,bl,truth_c))-T)
    return T, ap(er)-T, ap(cl)-T, ap(bl)-T, parts
if __name__=='__main__':
    for d in sys.argv[1:]:
        T,e,c,b,p=run(d)
        print('%-28s T=%.2f evt %+5.2f countlaw %+5.2f bootlaw %+5.2f | tail part cl %+5.2f boot %+5.2f | immune cl %+5.2f boot %+5.2f'%(
            d.split('/')[-1],T,e,c,b,*p['tail'],*p['imm']),flush=True)
