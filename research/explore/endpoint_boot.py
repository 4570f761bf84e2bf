"""Exploration (docs/notes/2026-12-estimator-log.md, "The endpoint test and the immune positives"): the endpoint's
sampling law by parametric bootstrap, the Python prototype of `evt::endpoint_law`. For each xi
on a grid, draw N normalised GPD excesses (endpoint 1), refit (ML with xi in [-1, 0]) and keep the
refitted endpoint, shape and scale. Usage: python endpoint_boot.py N B  ->  boot_N.npz in the
current folder (the other endpoint_*.py scripts read boot_{20,40,50,80,100,200,400,800}.npz)."""
import numpy as np, sys
from scipy.stats import genpareto
from scipy.optimize import minimize_scalar
def fit(y):
    # MLE with xi in [-1,0]; profile over xi in a grid then refine; sigma closed-form-ish by 1D search
    best=(-np.inf,None)
    m=y.max()
    def nll(xi):
        # for fixed xi<0, maximize over sigma > -xi*m
        lo=-xi*m*(1+1e-9)
        def f(ls):
            s=lo+np.exp(ls)
            t=1+xi*y/s
            if np.any(t<=0): return 1e300
            return len(y)*np.log(s)+(1+1/xi)*np.log(t).sum()
        r=minimize_scalar(f,bounds=(np.log(m*1e-6),np.log(m*100)),method='bounded',options={'xatol':1e-6})
        return r.fun, lo+np.exp(r.x)
    # candidates: exponential edge, uniform edge, interior grid
    cands=[]
    cands.append((len(y)*np.log(y.mean())+len(y), y.mean(), 0.0))
    cands.append((len(y)*np.log(m), m, -1.0))
    xs=np.linspace(-0.99,-0.01,50)
    vals=[(nll(x),x) for x in xs]
    i=int(np.argmin([v[0][0] for v in vals]))
    # refine
    a=xs[max(i-1,0)]; b=xs[min(i+1,len(xs)-1)]
    r=minimize_scalar(lambda x: nll(x)[0], bounds=(a,b), method='bounded', options={'xatol':1e-4})
    f,s=nll(r.x); cands.append((f,s,r.x))
    f,s,xi=min(cands,key=lambda c:c[0])
    return s,xi
if __name__=='__main__':
    n=int(sys.argv[1]); B=int(sys.argv[2])
    XI=np.linspace(-0.95,-0.05,19)
    rng=np.random.default_rng(0)
    E=np.zeros((len(XI),B)); XS=np.zeros((len(XI),B)); SG=np.zeros((len(XI),B))
    for a,xi in enumerate(XI):
        beta=-1/xi
        for b in range(B):
            w=1-rng.random(n)**(1/beta)   # survival (1-w)^beta, endpoint 1
            s,x=fit(w)
            E[a,b]= (-s/x) if x<0 else np.inf
            XS[a,b]=x; SG[a,b]=s
        print(xi, np.median(E[a]), np.mean(E[a]<1), np.median(XS[a]),flush=True)
    np.savez(f"boot_{n}.npz",XI=XI,E=E,XS=XS,SG=SG)
