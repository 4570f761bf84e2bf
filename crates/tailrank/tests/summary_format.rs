//! The summary folder: write/read round trips, the numpy loader of `docs/reference/summary-format.md`
//! (run verbatim), folders re-written by numpy, and every refusal of the reader.

use tailrank_test_support::python as common;
use tailrank_test_support::summary_util;

use std::fs;
use std::path::Path;
use summary_util::{build, Settings, World};
use tailrank::summary::Summary;

fn sampled() -> Summary {
    let w = World::random(11, 9, 30, 2500);
    let st = Settings {
        fraction: 0.5,
        min_fraction: 0.1,
        shards: 3,
        seed: 7,
        top_m: 400,
        pool_size: Some(100_000),
    };
    let all: Vec<usize> = (0..w.pool_ids.len()).collect();
    build(&w, &[("pool0.npy", all)], &st)
}

fn exact() -> Summary {
    let w = World::random(12, 5, 20, 700);
    let st = Settings {
        fraction: 1.0,
        min_fraction: 0.2,
        shards: 2,
        seed: 3,
        top_m: 200,
        pool_size: Some(700),
    };
    let all: Vec<usize> = (0..w.pool_ids.len()).collect();
    build(
        &w,
        &[
            ("a.npy", all[..300].to_vec()),
            ("b.npy", all[300..].to_vec()),
        ],
        &st,
    )
}

/// The first ```python block of the format documentation.
fn doc_loader() -> String {
    let doc = include_str!("../../../docs/reference/summary-format.md");
    let start = doc.find("```python\n").expect("python block") + "```python\n".len();
    let len = doc[start..].find("```").expect("end of block");
    doc[start..start + len].to_string()
}

#[test]
fn round_trip_is_exact() {
    let d = tempfile::tempdir().unwrap();
    for (i, s) in [sampled(), exact()].into_iter().enumerate() {
        let p = d.path().join(format!("s{i}"));
        s.write(&p).unwrap();
        let r = Summary::read(&p).unwrap();
        assert_eq!(r, s);
        // Some top lists are shorter than M (padding exercised), some are full.
        assert!(s.queries[0].top_scores.iter().any(|t| t.len() < s.top_m));
        assert!(s.queries[0].top_scores.iter().any(|t| t.len() == s.top_m));
        // Overwriting an existing summary replaces it.
        s.write(&p).unwrap();
        assert_eq!(Summary::read(&p).unwrap(), s);
    }
}

#[test]
fn documented_numpy_loader_reads_the_same_values() {
    let d = tempfile::tempdir().unwrap();
    let s = sampled();
    let p = d.path().join("summary");
    s.write(&p).unwrap();
    let code = format!(
        "{}\n{}",
        doc_loader(),
        r#"
import sys, json
import xxhash  # installed in the test venv: the loader verifies the checksums
man, queries = load_summary(sys.argv[1])
out = {"N": man["pool_size"], "f": man["fraction"], "sizes": man["subset_sizes"],
       "M": man["top_m"], "queries": []}
for q in queries:
    out["queries"].append({
        "id": q["id"], "pos": q["positive_ids"],
        "scores": [float(x) for x in q["scores"]],
        "core": [int(x) for x in q["core_above"]],
        "pool": [[int(x) for x in row] for row in q["pool_above"]],
        "top": [[float(x) for x in t] for t in q["top"]],
        "dtypes": [str(q["scores"].dtype), str(q["pool_above"].dtype), str(q["top"][0].dtype)],
    })
print(json.dumps(out))
"#
    );
    let out = common::run_python(&code, &[p.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["N"], 100_000);
    assert_eq!(v["f"], 0.5);
    assert_eq!(v["M"], s.top_m);
    assert_eq!(v["sizes"], serde_json::json!(s.subset_sizes));
    let qs = v["queries"].as_array().unwrap();
    assert_eq!(qs.len(), s.queries.len());
    for (q, pq) in s.queries.iter().zip(qs) {
        assert_eq!(pq["id"], q.id.as_str());
        assert_eq!(
            pq["dtypes"],
            serde_json::json!(["float32", "uint64", "float32"])
        );
        let ids: Vec<&str> = q.positives.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(pq["pos"], serde_json::json!(ids));
        for (j, p) in q.positives.iter().enumerate() {
            assert_eq!(pq["scores"][j].as_f64().unwrap() as f32, p.score);
            assert_eq!(pq["core"][j], p.core_above);
            assert_eq!(pq["pool"][j], serde_json::json!(p.pool_above));
        }
        for (l, t) in q.top_scores.iter().enumerate() {
            let py: Vec<f32> = pq["top"][l]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect();
            assert_eq!(&py, t, "query {} subset {l}", q.id);
        }
    }
}

#[test]
fn folder_rewritten_by_numpy_is_read_back() {
    // Another tool writing the format: numpy's own np.save headers, json.dump manifest.
    let d = tempfile::tempdir().unwrap();
    let s = exact();
    let p = d.path().join("summary");
    s.write(&p).unwrap();
    common::run_python(
        r#"
import sys, json, os
import numpy as np, xxhash
d = sys.argv[1]
man = json.load(open(os.path.join(d, "manifest.json")))
for name in man["arrays"]:
    f = os.path.join(d, name)
    a = np.load(f)
    os.remove(f)
    np.save(f, np.ascontiguousarray(a))
    man["arrays"][name]["xxh3"] = "xxh3:" + xxhash.xxh3_64_hexdigest(open(f, "rb").read())
json.dump(man, open(os.path.join(d, "manifest.json"), "w"))
"#,
        &[p.to_str().unwrap()],
    );
    reseal(&p);
    assert_eq!(Summary::read(&p).unwrap(), s);
}

fn expect_err(dir: &Path, needles: &[&str]) {
    let e = Summary::read(dir)
        .expect_err("read must refuse")
        .to_string();
    for n in needles {
        assert!(e.contains(n), "error {e:?} should mention {n:?}");
    }
}

/// Edit `manifest.json` without updating `manifest.xxh3` (what a careless hand edit does).
fn edit_manifest_unsealed(dir: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let path = dir.join("manifest.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    f(&mut v);
    fs::write(&path, serde_json::to_string(&v).unwrap()).unwrap();
}

/// Record the manifest's current checksum in `manifest.xxh3` (as another tool writing the
/// format would), so that the checks behind the checksum are reached.
fn reseal(dir: &Path) {
    let bytes = fs::read(dir.join("manifest.json")).unwrap();
    let h = format!("xxh3:{:016x}\n", xxhash_rust::xxh3::xxh3_64(&bytes));
    fs::write(dir.join("manifest.xxh3"), h).unwrap();
}

/// Edit `manifest.json` and reseal it.
fn edit_manifest(dir: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    edit_manifest_unsealed(dir, f);
    reseal(dir);
}

#[test]
fn reader_refuses_bad_folders() {
    let d = tempfile::tempdir().unwrap();
    let s = exact();
    let fresh = |name: &str| {
        let p = d.path().join(name);
        s.write(&p).unwrap();
        p
    };

    expect_err(&d.path().join("nope"), &["nope", "does not exist"]);

    let p = fresh("no-manifest");
    fs::remove_file(p.join("manifest.json")).unwrap();
    expect_err(&p, &["manifest.json", "missing"]);

    let p = fresh("format");
    edit_manifest(&p, |v| v["format"] = "something-else".into());
    expect_err(&p, &["manifest.json", "unknown format", "something-else"]);

    let p = fresh("version");
    let newer = tailrank::summary::SUMMARY_FORMAT_VERSION + 1;
    edit_manifest(&p, |v| v["format_version"] = newer.into());
    expect_err(
        &p,
        &["manifest.json", &format!("format_version {newer}"), "newer"],
    );

    // A shard's own top_m: only from version 3 on, at most M, never on a level.
    let p = fresh("subset-top-m-v2");
    to_version_2(&p, &s, s.top_m);
    edit_manifest(&p, |v| {
        let last = v["subsets"].as_array().unwrap().len() - 1;
        v["subsets"][last]["top_m"] = 1.into();
    });
    expect_err(&p, &["subset-top-m-v2", "own top_m", "format_version 2"]);
    let p = fresh("subset-top-m-above-m");
    edit_manifest(&p, |v| {
        let m = v["top_m"].as_u64().unwrap();
        let last = v["subsets"].as_array().unwrap().len() - 1;
        v["subsets"][last]["top_m"] = (m + 1).into();
    });
    expect_err(&p, &["subset-top-m-above-m", "outside 1..=M"]);
    let p = fresh("level-top-m");
    edit_manifest(&p, |v| v["subsets"][0]["top_m"] = 1.into());
    expect_err(&p, &["level-top-m", "subset 0 is a level"]);

    let p = fresh("corrupt");
    let f = p.join("top_scores.npy");
    let mut bytes = fs::read(&f).unwrap();
    let n = bytes.len();
    bytes[n - 5] ^= 0x40;
    fs::write(&f, bytes).unwrap();
    expect_err(&p, &["top_scores.npy", "checksum mismatch"]);

    let p = fresh("missing-array");
    fs::remove_file(p.join("pos_scores.npy")).unwrap();
    expect_err(&p, &["pos_scores.npy", "missing"]);

    let p = fresh("missing-record");
    edit_manifest(&p, |v| {
        v["arrays"].as_object_mut().unwrap().remove("top_len.npy");
    });
    expect_err(&p, &["manifest.json", "top_len.npy"]);

    // A consistent checksum but the wrong shape (one subset too many in top_len.npy).
    let p = fresh("shape");
    common::run_python(
        r#"
import sys, json, os
import numpy as np, xxhash
d = sys.argv[1]
f = os.path.join(d, "top_len.npy")
a = np.load(f)
np.save(f, np.concatenate([a, a[:, :1]], axis=1))
man = json.load(open(os.path.join(d, "manifest.json")))
man["arrays"]["top_len.npy"]["xxh3"] = "xxh3:" + xxhash.xxh3_64_hexdigest(open(f, "rb").read())
json.dump(man, open(os.path.join(d, "manifest.json"), "w"))
"#,
        &[p.to_str().unwrap()],
    );
    reseal(&p);
    expect_err(&p, &["top_len.npy", "shape"]);

    // Truncated data whose checksum was updated: still refused.
    let p = fresh("truncated");
    let f = p.join("pos_pool_above.npy");
    let mut bytes = fs::read(&f).unwrap();
    bytes.truncate(bytes.len() - 8);
    let h = format!("xxh3:{:016x}", xxhash_rust::xxh3::xxh3_64(&bytes));
    fs::write(&f, bytes).unwrap();
    edit_manifest(&p, |v| v["arrays"]["pos_pool_above.npy"]["xxh3"] = h.into());
    expect_err(&p, &["pos_pool_above.npy", "truncated"]);

    // Manifest inconsistent with the arrays (one query id too few).
    let p = fresh("ids");
    edit_manifest(&p, |v| {
        v["query_ids"].as_array_mut().unwrap().pop();
        v["num_queries"] = (s.queries.len() - 1).into();
    });
    expect_err(&p, &["query_offsets.npy", "shape"]);

    // Broken invariant behind valid checksums: N smaller than the pool seen.
    let p = fresh("n");
    edit_manifest(&p, |v| v["pool_size"] = 10.into());
    expect_err(&p, &["pool size N = 10"]);
}

#[test]
fn subset_fractions_must_match_their_hash_ranges() {
    // Every subset's fraction is the share of the hashes its range holds (docs/method.md §4):
    // an edit of either behind a valid checksum is refused, naming the manifest, the subset
    // and both values. Genuine ranges (shards split with a remainder: H = 3) read.
    let d = tempfile::tempdir().unwrap();
    for (name, s) in [("exact", exact()), ("sampled", sampled())] {
        let p = d.path().join(name);
        s.write(&p).unwrap();
        assert_eq!(Summary::read(&p).unwrap(), s, "{name}");
        for sub in &s.subsets {
            assert!(sub.fraction_matches_range(), "{name}: {sub:?}");
        }
    }
    let s = exact();
    assert_eq!(s.subsets[1].fraction, 0.5);
    let fresh = |name: &str| {
        let p = d.path().join(name);
        s.write(&p).unwrap();
        p
    };
    let p = fresh("level-fraction");
    edit_manifest(&p, |v| v["subsets"][1]["fraction"] = 0.3.into());
    expect_err(
        &p,
        &[
            "manifest.json",
            "subset 1 (a level)",
            "fraction 0.3",
            "which holds a fraction 0.5",
        ],
    );
    // One part in 10^9 is caught too.
    let p = fresh("level-fraction-close");
    edit_manifest(&p, |v| v["subsets"][1]["fraction"] = 0.5000000005.into());
    expect_err(&p, &["subset 1 (a level)", "fraction 0.5000000005"]);
    let last = s.subsets.len() - 1;
    let p = fresh("shard-range");
    edit_manifest(&p, |v| v["subsets"][last]["range"]["lo"] = 0.into());
    expect_err(
        &p,
        &[
            "manifest.json",
            &format!("subset {last} (a drift shard)"),
            "fraction 0.5",
            "which holds a fraction 1",
        ],
    );
    // The range moved with its fraction: a level not starting at hash 0.
    let p = fresh("level-range");
    edit_manifest(&p, |v| {
        v["subsets"][2]["range"]["lo"] = (1u64 << 62).into();
        v["subsets"][2]["range"]["hi"] = (1u64 << 63).into();
    });
    expect_err(&p, &["subset 2 (a level)", "not where a level lies"]);
    // Level 0 is the whole sample: its fraction is the summary's.
    let p = fresh("summary-fraction");
    edit_manifest(&p, |v| v["fraction"] = 0.9.into());
    expect_err(
        &p,
        &[
            "subset 0 (a level)",
            "fraction 1",
            "is not the summary's fraction 0.9",
        ],
    );
}

#[test]
fn writer_refuses_invalid_summaries_and_leaves_nothing() {
    let d = tempfile::tempdir().unwrap();
    let mut s = exact();
    s.queries[1].top_scores[0].swap(0, 3);
    let p = d.path().join("bad");
    let e = s.write(&p).unwrap_err().to_string();
    assert!(e.contains("descending"), "{e}");
    assert!(!p.exists());
    assert_eq!(fs::read_dir(d.path()).unwrap().count(), 0);

    let mut s = exact();
    s.queries[0].positives[0].pool_above.pop();
    assert!(s.write(&p).unwrap_err().to_string().contains("pool counts"));
    assert!(!p.exists());
}

#[test]
fn edited_manifest_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let s = exact();
    let fresh = |name: &str| {
        let p = d.path().join(name);
        s.write(&p).unwrap();
        p
    };
    // Edits that leave a valid summary behind: only the checksum can tell.
    let p = fresh("subset-sizes");
    edit_manifest_unsealed(&p, |v| v["subset_sizes"][1] = 650.into());
    expect_err(&p, &["manifest.json", "checksum mismatch", "manifest.xxh3"]);
    let p = fresh("pool-size");
    edit_manifest_unsealed(&p, |v| v["pool_size"] = 100_000_000.into());
    expect_err(&p, &["manifest.json", "checksum mismatch", "edited"]);

    // Duplicate keys: serde_json alone would keep the last value.
    let p = fresh("dup-key");
    let path = p.join("manifest.json");
    let text = fs::read_to_string(&path).unwrap();
    let text = text.replacen("\"pool_size\":", "\"pool_size\": 5, \"pool_size\":", 1);
    fs::write(&path, text).unwrap();
    reseal(&p);
    expect_err(&p, &["manifest.json", "duplicate key \"pool_size\""]);
    // ... at any depth.
    let p = fresh("dup-key-deep");
    let text = fs::read_to_string(p.join("manifest.json")).unwrap();
    let text = text.replacen("\"kind\":", "\"kind\": \"shard\", \"kind\":", 1);
    fs::write(p.join("manifest.json"), text).unwrap();
    reseal(&p);
    expect_err(&p, &["manifest.json", "duplicate key \"kind\""]);

    let p = fresh("no-checksum");
    fs::remove_file(p.join("manifest.xxh3")).unwrap();
    expect_err(&p, &["manifest.xxh3", "missing"]);

    // The fingerprint is checksummed like the other arrays and must have S_0 entries.
    let p = fresh("fingerprint");
    let f = p.join("pool_id_hashes.npy");
    let mut bytes = fs::read(&f).unwrap();
    let n = bytes.len();
    bytes[n - 1] ^= 1;
    fs::write(&f, bytes).unwrap();
    expect_err(&p, &["pool_id_hashes.npy", "checksum mismatch"]);
}

/// Rewrite the version-3 folder `dir` (summary `s`) as version 2 wrote it: `top_scores.npy` of
/// shape (Q, L, W), each list padded with `-inf` to W = `width`, no subset `top_m`.
fn to_version_2(dir: &Path, s: &Summary, width: usize) {
    let (q, l) = (s.queries.len(), s.subsets.len());
    let dict =
        format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({q}, {l}, {width}), }}");
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    let pad = (64 - (10 + dict.len() + 1) % 64) % 64;
    let header = format!("{dict}{}\n", " ".repeat(pad));
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    for t in s.queries.iter().flat_map(|q| &q.top_scores) {
        for i in 0..width {
            bytes.extend(t.get(i).copied().unwrap_or(f32::NEG_INFINITY).to_le_bytes());
        }
    }
    fs::write(dir.join("top_scores.npy"), &bytes).unwrap();
    let sum = format!("xxh3:{:016x}", xxhash_rust::xxh3::xxh3_64(&bytes));
    edit_manifest(dir, |m| {
        m["format_version"] = 2.into();
        strip_subset_top_m(m);
        m["arrays"]["top_scores.npy"] = serde_json::json!({
            "dtype": "<f4", "shape": [q, l, width], "xxh3": sum,
        });
    });
}

#[test]
fn version_2_folder_with_padded_top_scores_reads() {
    // Version 2: top lists padded with -inf to W, no subset top_m; read as version 3, each
    // shard keeps its first ⌈M/H⌉ scores (all of them here: the lists were cut from a
    // version-3 summary; tests/fixtures of tailrank-cli hold shards of M scores written by
    // version 2 itself).
    let d = tempfile::tempdir().unwrap();
    let s = exact();
    // Here M = 200 ≤ every S_ℓ, so W = M; a width that is neither M nor min(M, max S_ℓ)
    // does not match the manifest's counts and is refused.
    for width in [s.top_m, 150] {
        let p = d.path().join(format!("v2-{width}"));
        s.write(&p).unwrap();
        to_version_2(&p, &s, width);
        if width != s.top_m {
            expect_err(&p, &["top_scores.npy", "inconsistent"]);
            continue;
        }
        let mut got = Summary::read(&p).unwrap();
        assert_eq!(got.format_version, 2);
        got.format_version = s.format_version;
        assert_eq!(got, s, "width {width}");
    }
}

/// Drop the subsets' own `top_m` (version 3) from a manifest being turned into an older one.
fn strip_subset_top_m(m: &mut serde_json::Value) {
    for sub in m["subsets"].as_array_mut().unwrap() {
        sub.as_object_mut().unwrap().remove("top_m");
    }
}

#[test]
fn format_1_folder_reads_with_a_warning() {
    // A folder as version 1 wrote it: no manifest.xxh3, no pool_id_hashes.npy.
    let d = tempfile::tempdir().unwrap();
    let s = exact();
    let p = d.path().join("v1");
    s.write(&p).unwrap();
    to_version_2(&p, &s, s.top_m);
    fs::remove_file(p.join("manifest.xxh3")).unwrap();
    fs::remove_file(p.join("pool_id_hashes.npy")).unwrap();
    edit_manifest_unsealed(&p, |v| {
        v["format_version"] = 1.into();
        strip_subset_top_m(v);
        v["arrays"]
            .as_object_mut()
            .unwrap()
            .remove("pool_id_hashes.npy");
    });
    fs::remove_file(p.join("manifest.xxh3")).ok();
    let (got, warnings) = Summary::read_with_warnings(&p).unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("format_version 1") && warnings[0].contains("not checksummed"),
        "{warnings:?}"
    );
    assert_eq!(got.pool_id_hashes, None);
    assert_eq!(got.format_version, 1);
    let mut want = s.clone();
    want.pool_id_hashes = None;
    want.format_version = 1;
    assert_eq!(got, want);
    // A current folder reads without warnings and keeps its fingerprint.
    let q = d.path().join("v2");
    s.write(&q).unwrap();
    let (got, warnings) = Summary::read_with_warnings(&q).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(got, s);
    assert!(got.pool_id_hashes.as_ref().is_some_and(|h| h.len() == 700));
}

#[test]
fn version_1_folder_reads_with_ties_unknown() {
    // A version-1 folder (no tie arrays) still reads: tie counts 0, `ties_known` false, and
    // exact evaluation warns "ties unknown"; a manifest listing one tie array alone is refused.
    let d = tempfile::tempdir().unwrap();
    let s = exact();
    assert!(s.ties_known);
    let p = d.path().join("v1");
    s.write(&p).unwrap();
    to_version_2(&p, &s, s.top_m);
    for f in ["pos_core_ties.npy", "pos_pool_ties.npy"] {
        assert!(p.join(f).is_file(), "{f} written");
    }
    edit_manifest(&p, |m| {
        m["format_version"] = 1.into();
        strip_subset_top_m(m);
        let arrays = m["arrays"].as_object_mut().unwrap();
        arrays.remove("pos_core_ties.npy");
        arrays.remove("pos_pool_ties.npy");
    });
    fs::remove_file(p.join("pos_core_ties.npy")).unwrap();
    fs::remove_file(p.join("pos_pool_ties.npy")).unwrap();
    let old = Summary::read(&p).unwrap();
    assert!(!old.ties_known);
    assert_eq!(old.format_version, 1);
    assert_eq!(old.tied_pairs(0), 0);
    for (a, b) in old.queries.iter().zip(&s.queries) {
        for (pa, pb) in a.positives.iter().zip(&b.positives) {
            assert_eq!(
                (pa.core_above, &pa.pool_above),
                (pb.core_above, &pb.pool_above)
            );
            assert_eq!(pa.core_ties, 0);
            assert!(pa.pool_ties.iter().all(|&t| t == 0));
        }
    }
    let r = tailrank::metric::evaluate_summary(&old, 100).unwrap();
    assert!(
        r.warnings.iter().any(|w| w.contains("ties unknown")),
        "{:?}",
        r.warnings
    );
    assert_eq!(r.sets[0].tied_pairs, None);
    // Re-written (e.g. by a merge), it stays without tie arrays.
    let q = d.path().join("again");
    old.write(&q).unwrap();
    assert!(!q.join("pos_core_ties.npy").exists());
    assert!(!Summary::read(&q).unwrap().ties_known);

    // One tie array without the other.
    let p2 = d.path().join("half");
    s.write(&p2).unwrap();
    edit_manifest(&p2, |m| {
        m["arrays"]
            .as_object_mut()
            .unwrap()
            .remove("pos_pool_ties.npy");
    });
    expect_err(
        &p2,
        &["manifest.json", "pos_core_ties.npy", "pos_pool_ties.npy"],
    );
}
