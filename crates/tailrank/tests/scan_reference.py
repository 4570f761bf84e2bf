# Brute-force reference for the scan engine tests (numpy + xxhash, independent of the Rust code).
#
# Generates an instance-retrieval data set (queries, core with positives and non-relevant items,
# pool of distractors with hard items and exact duplicates of positives), writes it as raw
# little-endian f32 files plus id lists and a ground truth JSON, and writes the reference
# summary computed from full sorted score lists in float64.
#
# Modes: "grid" rounds every coordinate to a multiple of 2^-11, which makes every inner product
# exact in f32 whatever the summation order (products are multiples of 2^-22, partial sums
# < 4), so the reference must match bitwise, ties included. "f16" rounds through float16 only;
# then the reference gives lower/upper count bounds for scores within `eps` of a positive.
import json
import sys

import numpy as np
import xxhash

(out, seed, nq, ncore_extra, npool, d, mode, frac, hseed, nlev, nshard, M, K) = sys.argv[1:]
seed, nq, ncore_extra, npool, d = int(seed), int(nq), int(ncore_extra), int(npool), int(d)
frac, hseed, nlev, nshard, M, K = float(frac), int(hseed), int(nlev), int(nshard), int(M), int(K)
eps = 0.0 if mode == "grid" else 2e-6

rng = np.random.default_rng(seed)


def unit(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def noise(n, scale):
    return rng.standard_normal((n, d)) / np.sqrt(d) * np.asarray(scale).reshape(-1, 1)


def quant(x):
    x = unit(x)
    if mode == "grid":
        x = np.round(x * 2048.0) / 2048.0
    else:
        x = x.astype(np.float16).astype(np.float64)
    assert np.all(np.abs(np.linalg.norm(x, axis=1) - 1) < 1e-3)
    return x


ninst = max(1, nq // 2)
cent = unit(rng.standard_normal((ninst, d)))
qv = quant(cent[np.arange(nq) % ninst] + noise(nq, 0.5))
q_ids = [f"q/{i:04d}" for i in range(nq)]

# Positives: 1..6 per instance, spread of difficulty.
pos_vecs, pos_ids, inst_pos = [], [], []
for i in range(ninst):
    n = int(rng.integers(1, 7))
    tau = rng.uniform(0.3, 3.0, size=n)
    pos_vecs.append(cent[i] + noise(n, tau))
    ids = [f"inst{i:03d}/pos{k}" for k in range(n)]
    pos_ids += ids
    inst_pos.append(ids)
pos_vecs = quant(np.concatenate(pos_vecs))
extra = quant(rng.standard_normal((ncore_extra, d)))
core_vecs = np.concatenate([pos_vecs, extra])
core_ids = pos_ids + [f"core/x{k:05d}" for k in range(ncore_extra)]
perm = rng.permutation(len(core_ids))
core_vecs = core_vecs[perm]
core_ids = [core_ids[p] for p in perm]

# Pool: random, 5% hard (near an instance), exact copies of some positives and of pool rows.
nhard = npool // 20
pool = rng.standard_normal((npool, d))
hard_inst = rng.integers(0, ninst, size=nhard)
pool[:nhard] = cent[hard_inst] * 2 + rng.standard_normal((nhard, d)) * 1.2
pool = quant(pool)
ncopy = min(len(pos_vecs), 12)
pool = np.concatenate([pool, pos_vecs[:ncopy], pool[:5]])
pool_ids = [f"pool/{k:06d}" for k in range(len(pool))]
pperm = rng.permutation(len(pool_ids))
pool = pool[pperm]
pool_ids = [pool_ids[p] for p in pperm]

for name, arr in [("queries", qv), ("core", core_vecs), ("pool", pool)]:
    arr.astype("<f4").tofile(f"{out}/{name}.f32")
for name, ids in [("queries", q_ids), ("core", core_ids), ("pool", pool_ids)]:
    with open(f"{out}/{name}.ids", "w") as fh:
        fh.write("\n".join(ids) + "\n")
gt = {q_ids[q]: inst_pos[q % ninst] for q in range(nq)}
with open(f"{out}/gt.json", "w") as fh:
    json.dump(gt, fh)

# ---- Reference.
f32 = lambda a: a.astype(np.float32)
q32, c32, p32 = (f32(a).astype(np.float64) for a in (qv, core_vecs, pool))
Sc = q32 @ c32.T  # exact for grid data
Sp = q32 @ p32.T
core_index = {c: i for i, c in enumerate(core_ids)}

h = np.array([xxhash.xxh3_64_intdigest(i.encode(), seed=hseed) for i in pool_ids], dtype=object)


def t(f):
    return int(f * 2**64)


masks = []
for level in range(nlev):
    masks.append(np.array([x < t(frac / 2**level) for x in h]))
W = 2**64 - 1 if frac >= 1 else t(frac)
for s in range(nshard):
    lo, hi = W * s // nshard, W * (s + 1) // nshard
    last = frac >= 1 and s == nshard - 1
    masks.append(np.array([lo <= x and (x < hi or last) for x in h]))

res = {"S": [int(m.sum()) for m in masks], "queries": []}
aps = []
for q in range(nq):
    pids = gt[q_ids[q]]
    rows = [core_index[p] for p in pids]
    s = Sc[q, rows]
    order = sorted(range(len(pids)), key=lambda i: (-s[i], pids[i]))
    pids = [pids[i] for i in order]
    rows = [rows[i] for i in order]
    s = s[order]
    nonrel = np.ones(len(core_ids), bool)
    nonrel[rows] = False
    C = [int((Sc[q, nonrel] > x).sum()) for x in s]
    Klo = [[int((Sp[q, m] > x + eps).sum()) for x in s] for m in masks]
    Khi = [[int((Sp[q, m] > x - eps).sum()) for x in s] for m in masks]
    # Levels keep the top M scores, drift shards the top ceil(M / H).
    kept = [M] * nlev + [-(-M // max(nshard, 1))] * nshard
    top = [np.sort(f32(Sp[q, m]))[::-1][:c].tolist() for m, c in zip(masks, kept)]
    # Exact AP@1000 from the sorted gallery core ∪ level-0 sample (positives first among
    # bitwise-equal scores: equal scores do not outrank).
    g_scores = np.concatenate([Sc[q], Sp[q, masks[0]]])
    g_rel = np.zeros(len(g_scores), bool)
    g_rel[rows] = True
    g_key = np.concatenate([np.arange(len(core_ids)), np.nonzero(masks[0])[0] + len(core_ids)])
    o = np.lexsort((~g_rel, -g_scores))
    rel_sorted = g_rel[o]
    hits = np.cumsum(rel_sorted)
    ranks = np.arange(1, len(o) + 1)
    k = 1000
    sel = rel_sorted & (ranks <= k)
    aps.append(float((hits[sel] / ranks[sel]).sum() / min(k, len(pids))))
    # Top-K results: score descending, then the query's positives after the non-relevant items
    # (the order the counts rank in), then key (core rows, then pool rows) ascending.
    o2 = np.lexsort((g_key, g_rel, -g_scores))[:K]
    all_ids = core_ids + pool_ids
    res["queries"].append(
        {
            "id": q_ids[q],
            "pos_ids": pids,
            "pos_scores": [float(np.float32(x)) for x in s],
            "C": C,
            "K_lo": Klo,
            "K_hi": Khi,
            "top": top,
            "res_ids": [all_ids[g_key[i]] for i in o2],
            "res_scores": [float(np.float32(g_scores[i])) for i in o2],
        }
    )
res["map1k"] = float(np.mean(aps))
with open(f"{out}/reference.json", "w") as fh:
    json.dump(res, fh)
print("ok")
