"""Load a `tailrank simulate` folder (summary arrays and truth.json) for the exploration scripts."""
import numpy as np, json
def load(d):
    s=f'{d}/summary'
    m=json.load(open(s+'/manifest.json'))
    t=json.load(open(d+'/truth.json'))
    off=np.load(s+'/query_offsets.npy').astype(np.int64)
    K=np.load(s+'/pos_pool_above.npy').astype(np.int64)
    C=np.load(s+'/pos_core_above.npy').astype(np.int64)
    sc=np.load(s+'/pos_scores.npy')
    KN=[];X=[]
    for q in t['queries']:
        for p in q['positives']:
            KN.append(p['pool_above_n']); X.append(p['x'])
    KN=np.array(KN); X=np.array(X)
    S=np.array(m['subset_sizes'],dtype=float); N=m['pool_size']
    qid=np.repeat(np.arange(len(off)-1), np.diff(off))
    j=np.concatenate([np.arange(1,n+1) for n in np.diff(off)])
    return dict(off=off,K=K,C=C,sc=sc,KN=KN,X=X,S=S,N=N,qid=qid,j=j,truth=t['map_at_k'],nq=len(off)-1)
def ap_from_rank_expect(D, j, qid, nq, npos, k=1000):
    # D: per positive contribution E[1[r<=k] j/r]
    s=np.bincount(qid, weights=D, minlength=nq)
    return np.mean(s/np.minimum(k,npos))
