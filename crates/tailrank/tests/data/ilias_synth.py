# Synthetic ILIAS-shaped folder for the `tailrank ilias` tests.
#
# usage: ilias_synth.py DATASET_DIR FEATURE_DIR [VARIANT]
#
# Writes DATASET_DIR/image_ids/{image_query_ids.txt, text_query_ids.txt, positive_ids.txt,
# distractor_ids.txt.gz}, DATASET_DIR/taxonomy.json and the HDF5 feature files the ILIAS
# extractor writes (ascii vlen `index` first, f16 `features` with gzip level 0, auto chunks).
# VARIANT breaks one thing for the error tests: dup_positive, unknown_query, missing_positive,
# unknown_distractor, dup_distractor, missing_distractor. VARIANT "ties" makes exact score ties
# (bitwise-equal f16 vectors): 1,500 distractors, of which many are copies of positives (blocks
# of 1 to 40 copies), some positives copied over positives of other instances and of their own
# instance, so that tie blocks holding positives and non-relevant items straddle k = 10, 100
# and 1000.
import gzip
import json
import os
import sys

import h5py
import numpy as np

ds_dir, feat_dir = sys.argv[1], sys.argv[2]
variant = sys.argv[3] if len(sys.argv) > 3 else "ok"
rng = np.random.default_rng(20260)
D = 32
n_inst = 14
n_distr = 1500 if variant == "ties" else 700

inst = [f"inst_{i:02d}" for i in range(n_inst)]
centers = rng.standard_normal((n_inst, D))


def unit(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


img_q, img_qv, txt_q, txt_qv = [], [], [], []
pos, pos_v, pos_info = [], [], []
for i, name in enumerate(inst):
    for j in range(1 + i % 3):
        img_q.append(f"{name}/query_{j}.jpg")
        img_qv.append(unit(centers[i] + 0.6 * rng.standard_normal(D)))
    txt_q.append(f"{name}/text")
    txt_qv.append(unit(centers[i] + 1.0 * rng.standard_normal(D)))
    for j in range(2 + (i * 7) % 6):
        pos.append(f"{name}/pos_{j}.jpg")
        pos_v.append(unit(centers[i] + rng.uniform(0.8, 2.2) * rng.standard_normal(D)))
        pos_info.append((float(rng.uniform(0.01, 0.6)), int(rng.integers(0, 80))))
distr = [f"yfcc{k // 100:03d}/{k:09d}" for k in range(n_distr)]
# Distractors: some near random instance centres (hard), most plain noise.
mix = rng.integers(0, n_inst, n_distr)
near = rng.random(n_distr) < 0.3
distr_v = unit(np.where(near[:, None], centers[mix] + 1.5 * rng.standard_normal((n_distr, D)),
                        rng.standard_normal((n_distr, D))))

if variant == "ties":
    # Exact ties: the f16 vectors are copied, so every score of a copy equals the original's
    # bitwise (in f32 and in f64). Own-instance and other-instance positive copies first.
    pos_v = [np.asarray(v, dtype=np.float16).astype(np.float64) for v in pos_v]
    n_pos = len(pos)
    for a_, b_ in [(0, 1), (5, 6), (3, 20), (11, 40), (30, 2), (45, 9)]:
        pos_v[b_ % n_pos] = pos_v[a_ % n_pos].copy()
    distr_v = np.asarray(distr_v, dtype=np.float16).astype(np.float64)
    at = 0
    tie_rng = np.random.default_rng(3)
    for p_i in tie_rng.permutation(n_pos)[: n_pos // 2]:
        n_copies = int(tie_rng.integers(1, 41))
        for _ in range(n_copies):
            if at >= n_distr:
                break
            distr_v[at] = pos_v[p_i]
            at += 1
    # Shuffle the copies among the other distractors (rows, not ids).
    distr_v = distr_v[tie_rng.permutation(n_distr)]

os.makedirs(os.path.join(ds_dir, "image_ids"), exist_ok=True)
os.makedirs(feat_dir, exist_ok=True)
with open(os.path.join(ds_dir, "image_ids", "image_query_ids.txt"), "w") as f:
    # Extra column, as in the official file (the id comes first).
    for q in img_q:
        f.write(f"{q},{q.split('/')[0]}\n")
with open(os.path.join(ds_dir, "image_ids", "text_query_ids.txt"), "w") as f:
    f.write("\n".join(txt_q) + "\n")
with open(os.path.join(ds_dir, "image_ids", "positive_ids.txt"), "w") as f:
    for p, (s, c) in zip(pos, pos_info):
        f.write(f"{p},{s!r},{c}\n")
with gzip.open(os.path.join(ds_dir, "image_ids", "distractor_ids.txt.gz"), "wt") as f:
    f.write("\n".join(distr) + "\n")
taxonomy = {}
for i, name in enumerate(inst):
    cat = ["product", "landmark", "toy"][i % 3]
    sub = ["food", "other"][(i // 3) % 2]
    taxonomy.setdefault(cat, {}).setdefault(sub, {}).setdefault("other", []).append(name)
with open(os.path.join(ds_dir, "taxonomy.json"), "w") as f:
    json.dump(taxonomy, f)


def store(name, ids, vecs):
    a = np.asarray(vecs, dtype=np.float16)
    with h5py.File(os.path.join(feat_dir, name), "w") as f:
        f.create_dataset("index", data=list(ids), dtype=h5py.string_dtype(encoding="ascii"))
        f.create_dataset("features", data=a, dtype=a.dtype, compression="gzip", compression_opts=0)


if variant == "dup_positive":
    pos = pos[:-1] + [pos[0]]
if variant == "missing_positive":
    pos, pos_v = pos[:-1], pos_v[:-1]
if variant == "unknown_query":
    img_q = img_q[:-1] + ["inst_99/query_0.jpg"]
store("features_image_queries.hdf5", img_q, img_qv)
store("features_text_queries.hdf5", txt_q, txt_qv)
store("features_positives.hdf5", pos, pos_v)
d_ids, d_v = list(distr), distr_v
if variant == "unknown_distractor":
    d_ids[5] = "yfcc999/unknown"
if variant == "dup_distractor":
    d_ids[400] = d_ids[10]
if variant == "missing_distractor":
    d_ids, d_v = d_ids[:-1], d_v[:-1]
half = len(d_ids) // 2
store("features_distractors_000.hdf5", d_ids[:half], d_v[:half])
store("features_distractors_001.hdf5", d_ids[half:], d_v[half:])
