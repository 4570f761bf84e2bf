"""Exploration (docs/notes/2026-12-estimator-log.md, "The endpoint test and the immune positives"): per level, the
positives the level's evt fit calls immune that level 0 outranks (level 0: the full pool, from
truth.json, for scoring only), against the number the endpoint law expects. The prototype of
`predict::endpoint_test`. Usage: python endpoint_counts.py SIMDIR...  (folders of `tailrank
simulate` with levels.csv; boot_200.npz in the current folder)."""
import sys, numpy as np
from endpoint_common import load, immune_rates
for d in sys.argv[1:]:
    z=load(d); S=z['S']; K=z['K']; rows=[]
    for l in range(z['nl']):
        imm=np.where((z['br'][l]==2)&(z['xi'][l]<0))[0]
        if l==0: Y=z['KN'][imm]-K[imm,0]; e=(z['N']-S[0])/S[0]
        else: Y=K[imm,0]-K[imm,l]; e=(S[0]-S[l])/S[l]
        L=immune_rates(z['sc'][imm],z['u'][l][imm],z['sg'][l][imm],z['xi'][l][imm],np.full(len(imm),200))*e
        rows.append(((Y>0).sum(), (1-np.exp(-L)).mean(1).sum()))
    o13=sum(r[0] for r in rows[1:4]); p13=sum(r[1] for r in rows[1:4])
    o14=sum(r[0] for r in rows[1:5]); p14=sum(r[1] for r in rows[1:5])
    print('%-28s l0 obs/pred %3d/%5.1f (x%.1f) | levels1-3 %3d/%5.1f ratio %.2f | levels1-4 %3d/%5.1f ratio %.2f'%(d.split('/')[-1],rows[0][0],rows[0][1],rows[0][0]/max(rows[0][1],.1),o13,p13,o13/p13,o14,p14,o14/p14),flush=True)
