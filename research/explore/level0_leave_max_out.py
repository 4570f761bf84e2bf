"""Notes: docs/notes/2026-12-05-level0-excess-signal.md, section 2 (leave-max-out GPD endpoint at
level 0; needs numpy and scipy). Run as level0_allowance.py: python3 level0_leave_max_out.py FAMILY..."""
import json, sys, numpy as np, warnings
from scipy.stats import genpareto
warnings.filterwarnings("ignore")
def run(fam, nq=400):
    d=f'{fam}/summary'
    man=json.load(open(f'{d}/manifest.json'))
    tl=np.load(f"{d}/top_len.npy").astype(np.int64); ts=np.load(f'{d}/top_scores.npy')
    off=np.load(f'{d}/query_offsets.npy'); ps=np.load(f'{d}/pos_scores.npy'); K=np.load(f'{d}/pos_pool_above.npy')
    Q,L=tl.shape; starts=np.concatenate([[0],np.cumsum(tl.ravel())])[:-1].reshape(Q,L)
    past=outl=0; hasrare=0
    for q in range(min(Q,nq)):
        top=ts[starts[q,0]:starts[q,0]+tl[q,0]][:1000].astype(np.float64)
        ex=top[:50]; u=top[50]
        y=ex[1:]-u
        c,loc,sc=genpareto.fit(y,floc=0)
        m=ex[0]-u
        ep = -sc/c if c<0 else np.inf
        if m>=ep: past+=1
        p = genpareto.sf(m,c,loc=0,scale=sc)*49
        if p<0.01: outl+=1
        # does the max lie above the top positive (a candidate rare item)?
        if K[off[q],0]>=1 and ex[0]>ps[off[q]]: hasrare+=1
    return min(Q,nq),past,outl,hasrare
for fam in sys.argv[1:]:
    n,past,outl,hr=run(fam)
    print(f"{fam:22s} n={n} max_past_endpoint={past} max_p<0.01={outl} max_above_top_pos={hr}",flush=True)
