# Independent reference for `tailrank ilias`: the official ILIAS evaluation logic (per-query AP
# with sklearn's average_precision_score on the top-k, scale/clutter groups with the other
# positives removed, per-instance then per-(sub)category means), replicated here from its
# definition, applied to full similarity lists computed with numpy from the HDF5 features.
#
# Ties: sklearn's average_precision_score puts one threshold per distinct score, so every item
# of a tie block gets the precision at the block's end. Where a tie block straddles the cut at
# k, the official `np.argsort(-scores)[:k]` keeps whichever tied items its (unstable) sort puts
# first; this reference fixes that order to "non-relevant items first, positives last" within
# a block of equal scores (the order tailrank's counts path defines, docs/reference/metrics.md). Scores
# are computed once per distinct vector, so bitwise-equal vectors get bitwise-equal scores.
#
# usage: ilias_reference.py DATASET_DIR FEATURE_DIR K FRACTION SEED [SELECTED]
#
# SELECTED: a distractor subset as the official knn_search `--selected` reads it
# (np.loadtxt of ids; a distractor is kept when `id.split("/")[1]` is in it, positives always
# kept), and, as tailrank also accepts, when the full id is in it. N is then the number of kept
# distractors, and the hash sample is drawn from them. The positives' features are read from
# features_positives.hdf5 or features_positive.hdf5 (the knn README's name), whichever exists.
#
# FRACTION = 1: the gallery is positives + every distractor ("official").
# FRACTION < 1: the gallery is positives + the hash sample of the distractors (xxh3_64 with
# SEED below t(f)): "official" is then evaluate-at-S, and "count" the count-hardness map
# r_j = j + C_j + N K_j / S at N = all distractors.
# Prints JSON {set: {"official": R, "count": R}} with R = {map, aps (per query), scale,
# clutter, categories, subcategories} in percent; per set "tied_pairs" (pairs of a positive and
# a non-relevant item of equal score, over the queries) and "straddles" (tie blocks holding a
# positive and a non-relevant item that cross the cut at k in a query's ranking); and
# "min_gap": the smallest |positive score - other score| over unequal scores.
import glob
import gzip
import json
import os
import sys
from collections import defaultdict

import h5py
import numpy as np
import xxhash
from sklearn.metrics import average_precision_score

ds_dir, feat_dir = sys.argv[1], sys.argv[2]
K, FRAC, SEED = int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
SELECTED = sys.argv[6] if len(sys.argv) > 6 else None
CLUTTER = [(0, 18), (18, 33), (33, 53), (53, float("inf"))]
SCALE = [(0, 0.06880213760855043), (0.06880213760855043, 0.13526567164179104),
         (0.13526567164179104, 0.2729876723163842), (0.2729876723163842, float("inf"))]


def load(name):
    with h5py.File(f"{feat_dir}/{name}", "r") as f:
        ids = [x.decode() if isinstance(x, bytes) else x for x in f["index"][:]]
        return ids, np.asarray(f["features"][:], dtype=np.float64)


info = {}
with open(f"{ds_dir}/image_ids/positive_ids.txt") as f:
    for line in f:
        i, s, c = line.strip().split(",")
        info[i] = (float(s), int(c))
tax = json.load(open(f"{ds_dir}/taxonomy.json"))
taxonomy = {q: f"{c}-{sc}" for c, d in tax.items() for sc, dd in d.items()
            for lst in dd.values() for q in lst}
gt = defaultdict(set)
for p in info:
    gt[p.split("/")[0]].add(p)

pos_name = [n for n in ["features_positives.hdf5", "features_positive.hdf5"]
            if os.path.exists(f"{feat_dir}/{n}")]
assert len(pos_name) == 1, pos_name
pos_ids, pos_v = load(pos_name[0])
d_ids, d_v = [], []
for shard in sorted(glob.glob(f"{feat_dir}/features_distractors_*.hdf5")):
    a, b = load(os.path.basename(shard))
    d_ids += a
    d_v.append(b)
d_v = np.concatenate(d_v)
if SELECTED is not None:
    selected = set(np.atleast_1d(np.loadtxt(SELECTED, dtype=str)).tolist())
    sel = np.array([(len(i.split("/")) > 1 and i.split("/")[1] in selected) or i in selected
                    for i in d_ids])
    d_ids, d_v = list(np.array(d_ids)[sel]), d_v[sel]
N = len(d_ids)
t = int(FRAC * 2.0**64) if FRAC < 1 else 2**64
keep = np.array([xxhash.xxh3_64_intdigest(i.encode(), seed=SEED) < t for i in d_ids])
d_ids = np.array(d_ids)[keep]
d_v = d_v[keep]
S = len(d_ids)
db_ids = np.array(pos_ids + list(d_ids))
db_v = np.concatenate([pos_v, d_v])
uniq_v, uniq_inv = np.unique(db_v, axis=0, return_inverse=True)
uniq_inv = np.asarray(uniq_inv).reshape(-1)


def similarities(v):
    """Scores of every db item; one dot product per distinct vector (exact ties stay exact)."""
    return (uniq_v @ v)[uniq_inv]


def ap_official(ins, scores, k, excluded=frozenset()):
    sel = np.array([i not in excluded for i in db_ids])
    ids, s = db_ids[sel], scores[sel]
    g = gt[ins] - set(excluded)
    rel = np.isin(ids, list(g))
    # Descending score; within a block of equal scores non-relevant first (see the header).
    order = np.lexsort((rel, -s))
    top, ys = ids[order][:k], s[order][:k]
    y = rel[order][:k]
    if not y.any():
        return 0.0
    return average_precision_score(y, ys) * y.sum() / min(k, len(g))


def ap_count(ins, scores, k, excluded=frozenset()):
    g = sorted((scores[i] for i, x in enumerate(db_ids[: len(pos_ids)])
                if x in gt[ins] and x not in excluded), reverse=True)
    core_other = np.array([scores[i] for i, x in enumerate(pos_ids) if x not in gt[ins]])
    pool = scores[len(pos_ids):]
    total = 0.0
    for j, s in enumerate(g, start=1):
        # Ties count as above (positives at the end of their tie block).
        r = j + np.sum(core_other >= s) + N * np.sum(pool >= s) / S
        if r <= k:
            total += j / r
    return total / min(k, len(g))


def report(queries, qv, fn):
    aps, scale, clutter = [], defaultdict(list), defaultdict(list)
    per_query = {}
    cats, subs = defaultdict(lambda: defaultdict(list)), defaultdict(lambda: defaultdict(list))
    for q, v in zip(queries, qv):
        ins = q.split("/")[0]
        scores = similarities(v)
        ap = fn(ins, scores, K)
        aps.append(ap * 100)
        per_query[q] = ap * 100
        cats[taxonomy[ins].split("-")[0]][ins].append(ap * 100)
        subs[taxonomy[ins]][ins].append(ap * 100)
        for groups, col, out in [(SCALE, 0, scale), (CLUTTER, 1, clutter)]:
            for t1, t2 in groups:
                exc = {i for i in gt[ins] if info[i][col] < t1 or info[i][col] >= t2}
                if gt[ins] - exc:
                    out[f"{t1}-{t2}"].append(fn(ins, scores, K, exc) * 100)
    return {
        "map": float(np.mean(aps)),
        "aps": per_query,
        "scale": {k: float(np.mean(v)) for k, v in scale.items()},
        "clutter": {k: float(np.mean(v)) for k, v in clutter.items()},
        "categories": {k: float(np.mean([np.mean(i) for i in v.values()])) for k, v in cats.items()},
        "subcategories": {k: float(np.mean([np.mean(i) for i in v.values()])) for k, v in subs.items()},
    }


out = {}
min_gap = np.inf
for name, fname in [("image", "features_image_queries.hdf5"), ("text", "features_text_queries.hdf5")]:
    q_ids, q_v = load(fname)
    tied, straddles = 0, 0
    for q, v in zip(q_ids, q_v):
        s = similarities(v)
        rel = np.isin(db_ids, list(gt[q.split("/")[0]]))
        ps = s[rel]
        min_gap = min(min_gap, float(np.min(np.abs(ps[:, None] - s[None, :]) + (ps[:, None] == s[None, :]))))
        tied += int(sum(np.sum(s[~rel] == x) for x in ps))
        order = np.lexsort((rel, -s))
        ss, rr = s[order], rel[order]
        for x in np.unique(ps):
            idx = np.nonzero(ss == x)[0]
            if rr[idx].all():
                continue
            if idx[0] < K <= idx[-1]:
                straddles += 1
    out[name] = {"official": report(q_ids, q_v, ap_official), "tied_pairs": tied,
                 "straddles": straddles}
    if FRAC < 1:
        out[name]["count"] = report(q_ids, q_v, ap_count)
out["min_gap"] = min_gap
out["N"] = N
out["S"] = S
print(json.dumps(out))
