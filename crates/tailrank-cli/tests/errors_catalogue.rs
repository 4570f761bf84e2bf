//! The bad-input catalogue (`docs/reference/errors.md`): every row of its table is a case here, run
//! through the real `tailrank` binary; the exit code, the error kind it stands for
//! (`tailrank::ErrorKind::exit_code`) and the error line (temporary folder shown
//! as `$DIR`, process ids in temporary names and of lock holders as `PID`) must equal the
//! table's. No case may
//! panic. The kinds table of the document must list every `ErrorKind` with its exit code. `TAILRANK_BLESS=1 cargo test --release --workspace --test errors_catalogue`
//! regenerates the table from the binary's actual messages (review the diff: the messages are
//! the product).

use tailrank_test_support::python as common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use tailrank::formats::descriptors::Dtype;
use tailrank::formats::ids::write_ids;
use tailrank::formats::npy::write_npy;

const DIM: usize = 8;

use tailrank_test_support::cli::bin;

fn doc_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/reference/errors.md")
}

/// Unit vector `e_i` rotated a little towards `e_{(i+1) % DIM}`.
fn vecs(n: usize, salt: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(n * DIM);
    for r in 0..n {
        let mut v = [0f32; DIM];
        let a = ((r * 7 + salt * 13) % 97) as f32 / 97.0;
        v[(r + salt) % DIM] = (1.0 - a * a).sqrt();
        v[(r + salt + 1) % DIM] = a;
        out.extend_from_slice(&v);
    }
    out
}

fn save_npy(dir: &Path, name: &str, ids: &[String], data: &[f32]) {
    write_npy(
        &dir.join(format!("{name}.npy")),
        ids.len(),
        DIM,
        data,
        Dtype::F32,
    )
    .unwrap();
    write_ids(&dir.join(format!("{name}.ids.txt")), ids).unwrap();
}

fn ids(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

/// Replace row `row` of a valid f32 `.npy` (written by `save_npy`) by `v`.
fn npy_with_row(dir: &Path, from: &str, to: &str, row: usize, v: [f32; DIM]) {
    let mut b = std::fs::read(dir.join(format!("{from}.npy"))).unwrap();
    let start = b.len() - 200 * DIM * 4 + row * DIM * 4;
    for (i, x) in v.iter().enumerate() {
        b[start + 4 * i..start + 4 * i + 4].copy_from_slice(&x.to_le_bytes());
    }
    std::fs::write(dir.join(format!("{to}.npy")), b).unwrap();
    std::fs::copy(
        dir.join(format!("{from}.ids.txt")),
        dir.join(format!("{to}.ids.txt")),
    )
    .unwrap();
}

/// An `.npy` with a hand-written header (and `rows × DIM` f32 zeros of data).
fn npy_with_header(dir: &Path, name: &str, dict: &str, data_bytes: usize, nids: usize) {
    let mut h = dict.to_string();
    let unpadded = 10 + h.len() + 1;
    h.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    h.push('\n');
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend_from_slice(&(h.len() as u16).to_le_bytes());
    b.extend_from_slice(h.as_bytes());
    b.extend(std::iter::repeat_n(0u8, data_bytes));
    std::fs::write(dir.join(format!("{name}.npy")), b).unwrap();
    write_ids(&dir.join(format!("{name}.ids.txt")), &ids("p", nids)).unwrap();
}

/// All fixtures of the catalogue in `dir`.
fn fixtures(dir: &Path) {
    // Valid inputs: 3 queries with 2 positives each, 4 other core items, a pool of 200.
    let qids = ids("q", 3);
    save_npy(dir, "queries", &qids, &vecs(3, 0));
    let cids: Vec<String> = (0..3)
        .flat_map(|q| (0..2).map(move |j| format!("c{q}_{j}")))
        .chain(ids("other", 4))
        .collect();
    save_npy(dir, "core", &cids, &vecs(10, 1));
    save_npy(dir, "pool", &ids("p", 200), &vecs(200, 2));
    let gt = r#"{"q0": ["c0_0", "c0_1"], "q1": ["c1_0", "c1_1"], "q2": ["c2_0", "c2_1"]}"#;
    std::fs::write(dir.join("gt.json"), gt).unwrap();

    // .npy variants.
    let pool = std::fs::read(dir.join("pool.npy")).unwrap();
    let copy_ids = |name: &str| {
        std::fs::copy(
            dir.join("pool.ids.txt"),
            dir.join(format!("{name}.ids.txt")),
        )
        .unwrap();
    };
    std::fs::write(dir.join("truncated.npy"), &pool[..pool.len() - 100]).unwrap();
    copy_ids("truncated");
    std::fs::write(dir.join("trailing.npy"), [&pool[..], &[0u8; 32]].concat()).unwrap();
    copy_ids("trailing");
    std::fs::write(dir.join("header_cut.npy"), &pool[..40]).unwrap();
    copy_ids("header_cut");
    std::fs::write(dir.join("empty.npy"), b"").unwrap();
    copy_ids("empty");
    std::fs::write(dir.join("text.npy"), b"id,x,y\n1,2,3\n").unwrap();
    copy_ids("text");
    npy_with_header(
        dir,
        "float64",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (200, 8), }",
        200 * DIM * 8,
        200,
    );
    npy_with_header(
        dir,
        "int32",
        "{'descr': '<i4', 'fortran_order': False, 'shape': (200, 8), }",
        200 * DIM * 4,
        200,
    );
    npy_with_header(
        dir,
        "bigendian",
        "{'descr': '>f4', 'fortran_order': False, 'shape': (200, 8), }",
        200 * DIM * 4,
        200,
    );
    npy_with_header(
        dir,
        "fortran",
        "{'descr': '<f4', 'fortran_order': True, 'shape': (200, 8), }",
        200 * DIM * 4,
        200,
    );
    npy_with_header(
        dir,
        "onedim",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1600,), }",
        200 * DIM * 4,
        200,
    );
    npy_with_header(
        dir,
        "threedim",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (200, 4, 2), }",
        200 * DIM * 4,
        200,
    );
    npy_with_header(
        dir,
        "zerodim",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (200, 0), }",
        0,
        200,
    );
    npy_with_header(
        dir,
        "badheader",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (200, 8) ",
        200 * DIM * 4,
        200,
    );
    write_npy(
        &dir.join("dim4.npy"),
        200,
        4,
        &vec![0.5f32; 800],
        Dtype::F32,
    )
    .unwrap();
    copy_ids("dim4");
    let nan = [f32::NAN, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0];
    npy_with_row(dir, "pool", "nan", 17, nan);
    npy_with_row(
        dir,
        "pool",
        "inf",
        18,
        [f32::INFINITY, 0., 0., 0., 0., 0., 0., 0.],
    );
    npy_with_row(dir, "pool", "zero", 19, [0.0; DIM]);
    let tiny = [3e-30, 1e-30, 0., 0., 0., 0., 0., 0.];
    npy_with_row(dir, "pool", "subnormal", 21, tiny);
    npy_with_header(
        dir,
        "structured",
        "{'descr': [('x', '<f4'), ('y', '<f4')], 'fortran_order': False, 'shape': (200,), }",
        200 * 8,
        200,
    );
    // A version 2.0 header of 120 KB that never closes its dict.
    let dict = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': (200, 8), 'x': {}",
        "[".repeat(120_000)
    );
    let mut b = b"\x93NUMPY\x02\x00".to_vec();
    b.extend_from_slice(&(dict.len() as u32 + 1).to_le_bytes());
    b.extend_from_slice(dict.as_bytes());
    b.push(b'\n');
    std::fs::write(dir.join("longheader.npy"), b).unwrap();
    copy_ids("longheader");
    npy_with_row(dir, "pool", "norm2", 20, [2.0, 0., 0., 0., 0., 0., 0., 0.]);
    // Id files.
    let mut short = ids("p", 199);
    write_ids(&dir.join("short_ids.txt"), &short).unwrap();
    short.push("p3".into());
    write_ids(&dir.join("dup_ids.txt"), &short).unwrap();
    let mut clash = ids("p", 200);
    clash[42] = "c1_0".into();
    write_ids(&dir.join("clash_ids.txt"), &clash).unwrap();
    clash[42] = "q1".into();
    std::fs::create_dir(dir.join("user_folder")).unwrap();
    std::fs::write(dir.join("user_folder/truth.json"), "{\"mine\": 1}").unwrap();
    write_ids(&dir.join("query_clash_ids.txt"), &clash).unwrap();
    std::fs::write(dir.join("noids.npy"), &pool).unwrap();
    let text = std::fs::read_to_string(dir.join("pool.ids.txt")).unwrap();
    std::fs::write(dir.join("bom_ids.txt"), format!("\u{feff}{text}")).unwrap();

    // Ground truths.
    std::fs::write(
        dir.join("gt_malformed.json"),
        r#"{"q0": ["c0_0", "c0_1"], "q1": "#,
    )
    .unwrap();
    std::fs::write(dir.join("gt_empty.json"), "{}").unwrap();
    std::fs::write(dir.join("gt_nopos.json"), r#"{"q0": ["c0_0"], "q1": []}"#).unwrap();
    std::fs::write(
        dir.join("gt_dupq.json"),
        r#"{"q0": ["c0_0"], "q1": ["c1_0"], "q0": ["c0_1"]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("gt_unknown_pos.json"),
        r#"{"q0": ["c0_0", "ghost"]}"#,
    )
    .unwrap();
    std::fs::write(dir.join("gt_unknown_q.json"), r#"{"q9": ["c0_0"]}"#).unwrap();
    std::fs::write(dir.join("gt_notobject.json"), r#"[["q0", "c0_0"]]"#).unwrap();
    let ilias = dir.join("ilias_nopos");
    std::fs::create_dir_all(&ilias).unwrap();
    std::fs::write(ilias.join("image_query_ids.txt"), "inst0/q.jpg\n").unwrap();

    // Results JSON.
    let r = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    r(
        "res_ok.json",
        r#"{"q0": {"c0_0": 0.9, "p1": 0.5}, "q1": {"c1_1": 0.8}, "q2": {"c2_0": 0.7}}"#,
    );
    r(
        "res_malformed.json",
        r#"{"q0": {"c0_0": 0.9, "p1": 0.5}, "q1": {"c1_1" 0.8}}"#,
    );
    r(
        "res_nan.json",
        r#"{"q0": {"c0_0": NaN}, "q1": {}, "q2": {}}"#,
    );
    r(
        "res_dup.json",
        r#"{"q0": {"c0_0": 0.9, "c0_0": 0.8}, "q1": {}, "q2": {}}"#,
    );
    r(
        "res_missing.json",
        r#"{"q0": {"c0_0": 0.9}, "q1": {"c1_0": 0.9}}"#,
    );
    r("res_empty.json", "{}");
    let depth = 50_000;
    r(
        "res_deep.json",
        &format!(
            r#"{{"q0": {{"c0_0": {}0.9{}}}, "q1": {{}}, "q2": {{}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        ),
    );
    // What pickle.dump(results, f, protocol=4) starts with.
    std::fs::write(
        dir.join("res.pkl"),
        b"\x80\x04\x95\x19\x00\x00\x00\x00\x00\x00\x00}\x94",
    )
    .unwrap();
    r(
        "res_string_score.json",
        r#"{"q0": {"c0_0": "0.9"}, "q1": {}, "q2": {}}"#,
    );

    // Id lists for `sample`.
    let many: String = (0..2000).map(|i| format!("yfcc/{i:06}\n")).collect();
    r("pool_ids.txt", &many);
    r("dup_pool_ids.txt", "a\nb\na\n");
    r("side.txt.lock", "12345\n");
    r("fake.txt.gz", "this is not gzip\n");
    common::run_python(
        r#"
import sys, gzip, os, numpy as np, h5py
d = sys.argv[1]
data = "".join(f"yfcc/{i:06}\n" for i in range(2000)).encode()
gz = gzip.compress(data)
open(os.path.join(d, "cut.txt.gz"), "wb").write(gz[: len(gz) // 2])
x = np.zeros((20, 8), dtype=np.float16); x[:, 0] = 1
idx = [f"img/{i}".encode() for i in range(20)]
def h5(name, **kw):
    with h5py.File(os.path.join(d, name), "w") as f:
        for k, v in kw.items():
            if k == "index":
                f.create_dataset(k, data=v, dtype=h5py.string_dtype("ascii"))
            else:
                f.create_dataset(k, data=v, chunks=(5, 8), compression="gzip")
h5("ok.h5", features=x, index=idx)
h5("noindex.h5", features=x)
h5("int.h5", features=x.astype(np.int32), index=idx)
b = open(os.path.join(d, "ok.h5"), "rb").read()
open(os.path.join(d, "cut.h5"), "wb").write(b[: len(b) // 2])
open(os.path.join(d, "garbage.h5"), "wb").write(b"\x89HDF\r\n\x1a\n" + bytes(range(256)) * 4)
"#,
        &[dir.to_str().unwrap()],
    );

    // A small ILIAS folder (`tests/data/ilias_synth.py`) and bad `--selected-ids` files.
    let synth = dir.join("ilias_synth.py");
    std::fs::write(
        &synth,
        include_str!("../../tailrank/tests/data/ilias_synth.py"),
    )
    .unwrap();
    common::run_python(
        "import sys; src = open(sys.argv[1]).read(); sys.argv = sys.argv[1:]; \
         exec(compile(src, 'ilias_synth.py', 'exec'), {'__name__': '__main__'})",
        &[
            synth.to_str().unwrap(),
            dir.join("ilias_ds").to_str().unwrap(),
            dir.join("ilias_feat").to_str().unwrap(),
        ],
    );
    r(
        "sel_unknown.txt",
        "000000001\nyfcc000/000000002\nnot-a-distractor\n",
    );
    r("sel_dup.txt", "000000001\n000000002\n000000001\n");
    r("sel_empty.txt", "\n\n");
    r("smp.txt", "a\n");
    r(
        "smp.txt.manifest.json",
        "{\"digest_algorithm\": \"xxh3_64\"}\n",
    );
    // Issue 44: an ILIAS positive whose scale and clutter are `NA` (a data line, not a header),
    // and an id list with a bare carriage return inside an id (refused whatever the fraction).
    let na = dir.join("ilias_na/image_ids");
    std::fs::create_dir_all(&na).unwrap();
    for f in [
        "image_query_ids.txt",
        "text_query_ids.txt",
        "distractor_ids.txt.gz",
    ] {
        std::fs::copy(dir.join("ilias_ds/image_ids").join(f), na.join(f)).unwrap();
    }
    let pos = std::fs::read_to_string(dir.join("ilias_ds/image_ids/positive_ids.txt")).unwrap();
    let (first, rest) = pos.split_once('\n').unwrap();
    let id = first.split(',').next().unwrap();
    std::fs::write(na.join("positive_ids.txt"), format!("{id},NA,NA\n{rest}")).unwrap();
    r("ids_cr.txt", "yfcc000/1\nyfcc000/2\ryfcc000/3\nyfcc000/4\n");
    r("ids_no_break.txt", &"0".repeat((1 << 20) + 1));
    r("revisited_empty.json", "{}");
    std::fs::create_dir(dir.join("folder.npy")).unwrap();
    // An input at the staging name of the output (`OUT.tmp`): refused, never deleted.
    r("sampled.txt.tmp", "yfcc000/1\nyfcc000/2\n");

    // Summaries: two shards of the pool scanned separately (valid), then broken copies.
    let base_scan = |out: &str, pool: &str, extra: &[&str]| {
        let o = Command::new(bin())
            .arg("scan")
            .args(scan_base(dir))
            .arg("--pool")
            .arg(dir.join(pool))
            .args(["--top-m", "20", "-o"])
            .arg(dir.join(out))
            .args(if extra.contains(&"--model") {
                &[][..]
            } else {
                &["--model", "m1"][..]
            })
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    save_npy(dir, "shard_a", &ids("sa", 100), &vecs(100, 3));
    save_npy(dir, "shard_b", &ids("sb", 100), &vecs(100, 4));
    base_scan("sum_a", "shard_a.npy", &[]);
    base_scan("sum_b", "shard_b.npy", &[]);
    base_scan("sum_b_model2", "shard_b.npy", &["--model", "m2"]);
    base_scan("sum_b_seed", "shard_b.npy", &["--seed", "5"]);
    base_scan("sum_b_f", "shard_b.npy", &["--fraction", "0.5"]);
    base_scan("sum_empty", "shard_b.npy", &["--fraction", "0.0001"]);
    // Increments of shard b (`scan --after`): its rows hashing into [t(a), t(1)] at seed 0.
    for (name, after) in [("shard_inc50", 0.5), ("shard_inc30", 0.3)] {
        let all = ids("sb", 100);
        let data = vecs(100, 4);
        let keep: Vec<usize> = (0..100)
            .filter(|&i| !tailrank::sample::in_sample(&all[i], after, 0).unwrap())
            .collect();
        let kept_ids: Vec<String> = keep.iter().map(|&i| all[i].clone()).collect();
        let kept: Vec<f32> = keep
            .iter()
            .flat_map(|&i| data[i * DIM..(i + 1) * DIM].to_vec())
            .collect();
        save_npy(dir, name, &kept_ids, &kept);
    }
    base_scan(
        "sum_part50",
        "shard_inc50.npy",
        &["--fraction", "1", "--after", "0.5"],
    );
    base_scan(
        "sum_part30",
        "shard_inc30.npy",
        &["--fraction", "1", "--after", "0.3"],
    );
    base_scan(
        "sum_part30_h3",
        "shard_inc30.npy",
        &["--fraction", "1", "--after", "0.3", "--drift-shards", "3"],
    );
    base_scan("sum_b_f3", "shard_b.npy", &["--fraction", "0.3"]);
    let m = std::fs::read_to_string(dir.join("sum_empty/manifest.json")).unwrap();
    assert!(
        m.contains("\"subset_sizes\": [\n    0,"),
        "the sample must be empty: {m}"
    );
    let sub = |name: &str| dir.join(name);
    copy_dir(&sub("sum_a"), &sub("sum_corrupt"));
    let arr = sub("sum_corrupt/pos_pool_above.npy");
    let mut b = std::fs::read(&arr).unwrap();
    let n = b.len();
    b[n - 1] ^= 1;
    std::fs::write(&arr, b).unwrap();
    copy_dir(&sub("sum_a"), &sub("sum_nomanifest"));
    std::fs::remove_file(sub("sum_nomanifest/manifest.json")).unwrap();
    copy_dir(&sub("sum_a"), &sub("sum_future"));
    let m = sub("sum_future/manifest.json");
    let t = std::fs::read_to_string(&m).unwrap().replace(
        &format!(
            "\"format_version\": {}",
            tailrank::summary::SUMMARY_FORMAT_VERSION
        ),
        "\"format_version\": 99",
    );
    std::fs::write(&m, t).unwrap();
    // A manifest listing the core tie array without the pool one.
    copy_dir(&sub("sum_a"), &sub("sum_half_ties"));
    let m = sub("sum_half_ties/manifest.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
    v["arrays"]
        .as_object_mut()
        .unwrap()
        .remove("pos_pool_ties.npy")
        .expect("the scan writes the tie arrays");
    // Checksum recomputed: the row reaches the tie arrays' rule, not the checksum's.
    let t = serde_json::to_string_pretty(&v).unwrap();
    std::fs::write(&m, &t).unwrap();
    std::fs::write(
        sub("sum_half_ties/manifest.xxh3"),
        format!("xxh3:{:016x}\n", xxhash_rust::xxh3::xxh3_64(t.as_bytes())),
    )
    .unwrap();
    copy_dir(&sub("sum_a"), &sub("sum_badjson"));
    std::fs::write(
        sub("sum_badjson/manifest.json"),
        "{\"format\": \"tailrank-summary\",",
    )
    .unwrap();
    // Issue #17: shard_a re-encoded as f16 (another digest, the same ids), a manifest edited
    // by hand, and a manifest with a duplicate key (its checksum updated).
    write_npy(
        &dir.join("shard_a16.npy"),
        100,
        DIM,
        &vecs(100, 3),
        Dtype::F16,
    )
    .unwrap();
    write_ids(&dir.join("shard_a16.ids.txt"), &ids("sa", 100)).unwrap();
    base_scan("sum_a16", "shard_a16.npy", &[]);
    copy_dir(&sub("sum_a"), &sub("sum_edited"));
    let m = sub("sum_edited/manifest.json");
    let t = std::fs::read_to_string(&m).unwrap();
    let t = t.replacen(
        "\"subset_sizes\": [\n    100,",
        "\"subset_sizes\": [\n    90,",
        1,
    );
    assert!(t.contains("\"subset_sizes\": [\n    90,"), "fixture: {t}");
    std::fs::write(&m, t).unwrap();
    copy_dir(&sub("sum_a"), &sub("sum_dupkey"));
    let m = sub("sum_dupkey/manifest.json");
    let t = std::fs::read_to_string(&m).unwrap().replacen(
        "\"pool_size\":",
        "\"pool_size\": 1000000,\n  \"pool_size\":",
        1,
    );
    std::fs::write(&m, &t).unwrap();
    std::fs::write(
        sub("sum_dupkey/manifest.xxh3"),
        format!("xxh3:{:016x}\n", xxhash_rust::xxh3::xxh3_64(t.as_bytes())),
    )
    .unwrap();
    // A shard sharing one id with shard_a.
    let mut c_ids = ids("sc", 100);
    c_ids[5] = "sa7".into();
    save_npy(dir, "shard_c", &c_ids, &vecs(100, 5));
    copy_dir(&sub("sum_a"), &sub("sum_missing_array"));
    std::fs::remove_file(sub("sum_missing_array/top_len.npy")).unwrap();
    copy_dir(&sub("sum_a"), &sub("sum_folder_array"));
    std::fs::remove_file(sub("sum_folder_array/top_len.npy")).unwrap();
    std::fs::create_dir(sub("sum_folder_array/top_len.npy")).unwrap();
    // Level 1's fraction edited (0.5 → 0.3, its range kept) and the checksum recomputed.
    copy_dir(&sub("sum_a"), &sub("sum_fraction"));
    let m = sub("sum_fraction/manifest.json");
    let t = std::fs::read_to_string(&m).unwrap();
    assert!(t.contains("\"fraction\": 0.5,"), "fixture: {t}");
    let t = t.replacen("\"fraction\": 0.5,", "\"fraction\": 0.3,", 1);
    std::fs::write(&m, &t).unwrap();
    std::fs::write(
        sub("sum_fraction/manifest.xxh3"),
        format!("xxh3:{:016x}\n", xxhash_rust::xxh3::xxh3_64(t.as_bytes())),
    )
    .unwrap();
    // Other queries: a ground truth with one query less.
    std::fs::write(
        dir.join("gt_two.json"),
        r#"{"q0": ["c0_0", "c0_1"], "q1": ["c1_0", "c1_1"]}"#,
    )
    .unwrap();
    let o = Command::new(bin())
        .arg("scan")
        .args(["--queries", dir.join("queries.npy").to_str().unwrap()])
        .args(["--core", dir.join("core.npy").to_str().unwrap()])
        .args(["--gt", dir.join("gt_two.json").to_str().unwrap()])
        .args(["--pool", dir.join("shard_b.npy").to_str().unwrap()])
        .args(["--top-m", "20", "--model", "m1", "-o"])
        .arg(dir.join("sum_b_queries"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // Hardness CSV: a valid one from predict, then broken copies.
    let o = Command::new(bin())
        .args(["predict", "--summary"])
        .arg(dir.join("sum_b_f"))
        .args([
            "--pool-size",
            "1000",
            "--bootstrap",
            "20",
            "--sample-noise",
            "0",
        ])
        .arg("--hardness-out")
        .arg(dir.join("h.csv"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let written = std::fs::read_to_string(dir.join("h.csv")).unwrap();
    assert!(written.contains("\n# seed: 0\n"));
    std::fs::write(
        dir.join("h_edited.csv"),
        written.replacen("\n# seed: 0\n", "\n# seed: 1\n", 1),
    )
    .unwrap();
    // Structural damage, shown on files without the checksum line (as other tools write them).
    let h: String = written
        .lines()
        .filter(|l| !l.starts_with("# checksum:"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join("h_nocol.csv"), h.replace("x_hat,", "xhat,")).unwrap();
    let lines: Vec<&str> = h.lines().collect();
    let hdr = lines
        .iter()
        .position(|l| l.starts_with("query_id"))
        .unwrap();
    let mut bad = lines.clone();
    let broken = bad[hdr + 1].replacen(",1,", ",one,", 1);
    bad[hdr + 1] = &broken;
    std::fs::write(dir.join("h_badnum.csv"), bad.join("\n") + "\n").unwrap();
    let negative = lines[hdr + 1].replacen(",1,", ",-1,", 1);
    bad[hdr + 1] = &negative;
    std::fs::write(dir.join("h_negative.csv"), bad.join("\n") + "\n").unwrap();
    // Values no sample holds, in a file read unchecked: a count above S, a key given twice.
    let mut f: Vec<String> = lines[hdr + 1].split(',').map(String::from).collect();
    f[5] = (f[6].parse::<u64>().unwrap() + 1).to_string();
    let over = f.join(",");
    let mut overcount = lines.clone();
    overcount[hdr + 1] = &over;
    std::fs::write(
        dir.join("h_overcount.csv"),
        overcount.join("\n") + "\n# checksum: none\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("h_repeated.csv"),
        h.replacen("\n# seed: 0\n", "\n# seed: 0\n# seed: 1\n", 1) + "# checksum: none\n",
    )
    .unwrap();
    let junk_estimator: String = h
        .lines()
        .map(|l| match l.starts_with("# estimator:") {
            true => "# estimator: garbage\n".to_string(),
            false => format!("{l}\n"),
        })
        .collect();
    std::fs::write(
        dir.join("h_estimator.csv"),
        junk_estimator.clone() + "# checksum: none\n",
    )
    .unwrap();
    // The centre of the excess needs its rate and its weight together.
    let unpaired = h.replacen(
        "\n# tool_version:",
        "\n# excess_rate: 1e-9\n# tool_version:",
        1,
    );
    std::fs::write(dir.join("h_unpaired.csv"), unpaired).unwrap();
    std::fs::write(dir.join("h_cut.csv"), &h[..h.len() * 2 / 3]).unwrap();
    // Cut at a line boundary: the last row and the checksum line lost, every line well-formed.
    let wl: Vec<&str> = written.lines().collect();
    let cut: String = wl[..wl.len() - 2]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join("h_cutline.csv"), cut).unwrap();
    // A query declared without positives (its `j = 0` row): read, but nothing to predict.
    let mut empty: Vec<String> = vec![String::new(); f.len()];
    (empty[0], empty[2], empty[6]) = ("qempty".into(), "0".into(), f[6].clone());
    std::fs::write(
        dir.join("h_nopos.csv"),
        format!("{h}{}\n# checksum: none\n", empty.join(",")),
    )
    .unwrap();
    let range_estimator = junk_estimator.replace("garbage", "evt(top_m=1)");
    std::fs::write(
        dir.join("h_estimator_range.csv"),
        range_estimator + "# checksum: none\n",
    )
    .unwrap();
    // The header and metadata only (no checksum line): no query row.
    std::fs::write(
        dir.join("h_norows.csv"),
        lines[..=hdr].join("\n") + "\n# checksum: none\n",
    )
    .unwrap();
    // A column named twice (x_hat appended, 0 on every row), and N below S.
    let twice: Vec<String> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| match i {
            i if i == hdr => format!("{l},x_hat"),
            i if i > hdr && !l.starts_with('#') => format!("{l},0"),
            _ => l.to_string(),
        })
        .collect();
    std::fs::write(
        dir.join("h_column_twice.csv"),
        twice.join("\n") + "\n# checksum: none\n",
    )
    .unwrap();
    let small_pool: String = h
        .lines()
        .map(|l| match l.starts_with("# pool_size:") {
            true => "# pool_size: 10\n".to_string(),
            false => format!("{l}\n"),
        })
        .collect();
    std::fs::write(
        dir.join("h_pool_below_sample.csv"),
        small_pool + "# checksum: none\n",
    )
    .unwrap();
}

fn copy_dir(a: &Path, b: &Path) {
    std::fs::create_dir_all(b).unwrap();
    for e in std::fs::read_dir(a).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), b.join(e.file_name())).unwrap();
    }
}

fn scan_base(dir: &Path) -> Vec<String> {
    vec![
        "--queries".into(),
        dir.join("queries.npy").display().to_string(),
        "--core".into(),
        dir.join("core.npy").display().to_string(),
        "--gt".into(),
        dir.join("gt.json").display().to_string(),
    ]
}

/// One catalogue row: an id, what is wrong, and the command (`$DIR` = fixture folder).
struct Case {
    id: &'static str,
    input: &'static str,
    args: Vec<String>,
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

fn cases() -> Vec<Case> {
    let scan = |extra: &str| {
        words(&format!(
            "scan --queries $DIR/queries.npy --core $DIR/core.npy --gt $DIR/gt.json {extra}"
        ))
    };
    let scan_pool = |pool: &str| scan(&format!("--pool $DIR/{pool} -o $DIR/out"));
    let c = |id, input, args| Case { id, input, args };
    vec![
        // ---- .npy descriptors
        c("npy-truncated", "`.npy` whose data is cut short (100 bytes missing)", scan_pool("truncated.npy")),
        c("npy-folder", "a folder named `.npy` given as a pool shard", scan_pool("folder.npy")),
        c("npy-trailing", "`.npy` with 32 bytes after the data", scan_pool("trailing.npy")),
        c("npy-header-cut", "`.npy` cut inside its header", scan_pool("header_cut.npy")),
        c("npy-empty", "empty (0-byte) `.npy`", scan_pool("empty.npy")),
        c("npy-not-npy", "a text file named `.npy`", scan_pool("text.npy")),
        c("npy-malformed-header", "`.npy` header dict not closed", scan_pool("badheader.npy")),
        c("npy-long-header", "`.npy` (v2.0) whose 120 KB header dict never closes", scan_pool("longheader.npy")),
        c("npy-float64", "`.npy` of float64", scan_pool("float64.npy")),
        c("npy-structured", "`.npy` of a structured dtype (two float32 fields)", scan_pool("structured.npy")),
        c("npy-int32", "`.npy` of int32", scan_pool("int32.npy")),
        c("npy-bigendian", "`.npy` of big-endian float32", scan_pool("bigendian.npy")),
        c("npy-fortran", "Fortran-ordered `.npy`", scan_pool("fortran.npy")),
        c("npy-1d", "1-D `.npy`", scan_pool("onedim.npy")),
        c("npy-3d", "3-D `.npy`", scan_pool("threedim.npy")),
        c("npy-dim0", "`.npy` of shape (200, 0)", scan_pool("zerodim.npy")),
        c("npy-dim-mismatch", "pool of dimension 4, queries of dimension 8", scan_pool("dim4.npy")),
        c("npy-no-ids", "`.npy` without an id file", scan_pool("noids.npy")),
        c("ids-count", "id file with one id less than the rows", scan("--pool $DIR/pool.npy --pool-ids $DIR/short_ids.txt -o $DIR/out")),
        c("ids-duplicate", "duplicate id in a pool id file", scan("--pool $DIR/pool.npy --pool-ids $DIR/dup_ids.txt -o $DIR/out")),
        c("ids-no-line-break", "an id list with no line break in its first MiB (`/dev/zero`, a binary file)", words("sample --ids $DIR/ids_no_break.txt --fraction 0.5 -o $DIR/s.txt")),
        c("ids-pool-in-core", "a pool id that is also a core id", scan("--pool $DIR/pool.npy --pool-ids $DIR/clash_ids.txt -o $DIR/out")),
        c("ids-pool-has-query", "a pool id that is also a query id (the query file given as a pool shard)", scan("--pool $DIR/pool.npy --pool-ids $DIR/query_clash_ids.txt -o $DIR/out")),
        c("ids-bom", "pool id file starting with a UTF-8 byte order mark", scan("--pool $DIR/pool.npy --pool-ids $DIR/bom_ids.txt -o $DIR/out")),
        c("pool-twice", "the same pool file given twice", scan("--pool $DIR/pool.npy $DIR/pool.npy -o $DIR/out")),
        c("pool-shared-id", "an id in two pool shards", scan("--pool $DIR/shard_a.npy $DIR/shard_c.npy -o $DIR/out")),
        c("ids-count-args", "two --pool-ids for one --pool", scan("--pool $DIR/pool.npy --pool-ids $DIR/short_ids.txt $DIR/dup_ids.txt -o $DIR/out")),
        c("desc-unknown-ext", "descriptor file with an unknown extension", scan_pool("gt.json")),
        c("desc-missing", "pool file that does not exist", scan_pool("nothere.npy")),
        c("row-nan", "NaN in a pool row", scan_pool("nan.npy")),
        c("row-inf", "+inf in a pool row", scan_pool("inf.npy")),
        c("row-zero", "all-zero pool row", scan_pool("zero.npy")),
        c("row-tiny", "pool row of values 1e-30 (squares underflow f32)", scan_pool("subnormal.npy")),
        c("row-norm", "pool row of norm 2 (not L2-normalised)", scan_pool("norm2.npy")),
        // ---- HDF5
        c("h5-truncated", "HDF5 file cut in half", scan_pool("cut.h5")),
        c("h5-garbage", "HDF5 signature followed by garbage", scan_pool("garbage.h5")),
        c("h5-no-index", "HDF5 file without the `index` dataset", scan_pool("noindex.h5")),
        c("h5-int", "HDF5 `features` of int32", scan_pool("int.h5")),
        // ---- ground truth
        c("gt-malformed", "ground-truth JSON cut short", words("scan --queries $DIR/queries.npy --core $DIR/core.npy --gt $DIR/gt_malformed.json --pool $DIR/pool.npy -o $DIR/out")),
        c("gt-empty", "ground truth `{}`", words("scan --queries $DIR/queries.npy --core $DIR/core.npy --gt $DIR/gt_empty.json --pool $DIR/pool.npy -o $DIR/out")),
        c("gt-not-object", "ground-truth JSON that is a list", words("scan --queries $DIR/queries.npy --core $DIR/core.npy --gt $DIR/gt_notobject.json --pool $DIR/pool.npy -o $DIR/out")),
        c("gt-no-positives", "a query with an empty positive list", words("scan --queries $DIR/queries.npy --core $DIR/core.npy --gt $DIR/gt_nopos.json --pool $DIR/pool.npy -o $DIR/out")),
        c("gt-duplicate-query", "a query id twice in the ground truth", words("scan --queries $DIR/queries.npy --core $DIR/core.npy --gt $DIR/gt_dupq.json --pool $DIR/pool.npy -o $DIR/out")),
        c("gt-unknown-positive", "a positive id absent from the core", words("scan --queries $DIR/queries.npy --core $DIR/core.npy --gt $DIR/gt_unknown_pos.json --pool $DIR/pool.npy -o $DIR/out")),
        c("gt-unknown-query", "a query id absent from the query descriptors", words("scan --queries $DIR/queries.npy --core $DIR/core.npy --gt $DIR/gt_unknown_q.json --pool $DIR/pool.npy -o $DIR/out")),
        c("gt-ilias-no-positives-file", "ILIAS folder without `positive_ids.txt`", words("eval --results $DIR/res_ok.json --gt $DIR/ilias_nopos")),
        c("ilias-features-missing", "`--features` folder that does not exist", words("ilias --dataset-dir $DIR/ilias_ds --features $DIR/no_such_feat")),
        c("ilias-selected-unknown", "`--selected-ids` entry matching no distractor", words("ilias --dataset-dir $DIR/ilias_ds --features $DIR/ilias_feat --selected-ids $DIR/sel_unknown.txt")),
        c("ilias-selected-duplicate", "`--selected-ids` entry listed twice", words("ilias --dataset-dir $DIR/ilias_ds --features $DIR/ilias_feat --selected-ids $DIR/sel_dup.txt")),
        c("ilias-bad-prediction-option", "`ilias --fraction` with a bad prediction option: refused before the scan", words("ilias --dataset-dir $DIR/ilias_ds --features $DIR/ilias_feat --fraction 0.5 --bootstrap 5 --summary-out $DIR/ilias_so")),
        c("ilias-selected-empty", "`--selected-ids` file without ids", words("ilias --dataset-dir $DIR/ilias_ds --features $DIR/ilias_feat --selected-ids $DIR/sel_empty.txt")),
        c("ilias-positive-scale-na", "ILIAS positive whose scale is `NA` on line 1 (data, not a header)", words("ilias --dataset-dir $DIR/ilias_na --features $DIR/ilias_feat")),
        c("ids-cr-inside", "id list with a bare carriage return inside an id, sampled at f = 0.5", words("sample --ids $DIR/ids_cr.txt --fraction 0.5 -o $DIR/s_cr.txt")),
        c("gt-missing", "ground truth path that does not exist", words("eval --results $DIR/res_ok.json --gt $DIR/nothere.json")),
        // ---- results JSON
        c("results-folder", "a folder given as the results JSON", words("eval --results $DIR/ilias_ds --gt $DIR/gt.json")),
        c("results-malformed", "results JSON with a missing colon", words("eval --results $DIR/res_malformed.json --gt $DIR/gt.json")),
        c("results-nan", "results JSON with a NaN score", words("eval --results $DIR/res_nan.json --gt $DIR/gt.json")),
        c("results-pickle", "results saved as a Python pickle (the official search.py output)", words("eval --results $DIR/res.pkl --gt $DIR/gt.json")),
        c("results-deep", "a score nested in 50,000 levels of arrays", words("eval --results $DIR/res_deep.json --gt $DIR/gt.json")),
        c("results-duplicate-db", "a db id twice for one query", words("eval --results $DIR/res_dup.json --gt $DIR/gt.json")),
        c("results-string-score", "a score given as a string", words("eval --results $DIR/res_string_score.json --gt $DIR/gt.json")),
        c("results-missing-query", "a query of the ground truth with no results", words("eval --results $DIR/res_missing.json --gt $DIR/gt.json")),
        // ---- id lists, gz
        c("gz-truncated", "`.gz` id list cut in half", words("sample --ids $DIR/cut.txt.gz --fraction 0.5 -o $DIR/s.txt")),
        c("gz-not-gzip", "a `.gz` id list that is plain text", words("sample --ids $DIR/fake.txt.gz --fraction 0.5 -o $DIR/s.txt")),
        c("ids-duplicate-sample", "duplicate id in the pool id list", words("sample --ids $DIR/dup_pool_ids.txt --fraction 0.5 -o $DIR/s.txt")),
        c("results-empty", "results JSON `{}`", words("eval --results $DIR/res_empty.json --gt $DIR/gt.json")),
        // ---- options
        c("fraction-zero", "sampling fraction 0", words("sample --ids $DIR/pool_ids.txt --fraction 0 -o $DIR/s.txt")),
        c("fraction-above-one", "sampling fraction 1.5", words("sample --ids $DIR/pool_ids.txt --fraction 1.5 -o $DIR/s.txt")),
        c("fraction-nan", "sampling fraction NaN", words("sample --ids $DIR/pool_ids.txt --fraction NaN -o $DIR/s.txt")),
        c("fraction-negative-scan", "scan with fraction -0.1", scan("--pool $DIR/pool.npy --fraction=-0.1 -o $DIR/out")),
        c("fraction-negative-sample", "sampling fraction -0.1, written with a space", words("sample --ids $DIR/pool_ids.txt --fraction -0.1 -o $DIR/s.txt")),
        c("fractions-negative-validate", "validate --fractions with a negative value, after a space", words("validate --fractions -0.1,0.05 -o $DIR/v.md")),
        c("target-width-negative", "predict --target-width -3", words("predict --summary $DIR/sum_b_f --pool-size 1000 --target-width -3 --bootstrap 10 --sample-noise 0")),
        c("min-fraction", "--min-fraction above --fraction", scan("--pool $DIR/pool.npy --fraction 0.1 --min-fraction 0.2 -o $DIR/out")),
        c("top-m-zero", "--top-m 0", scan("--pool $DIR/pool.npy --top-m 0 -o $DIR/out")),
        c("top-m-absurd", "--top-m beyond what a summary can store", scan("--pool $DIR/pool.npy --top-m 99999999999 -o $DIR/out")),
        c("k-zero-scan", "--k 0 with --results-out", scan("--pool $DIR/pool.npy --results-out $DIR/r.json --k 0 -o $DIR/out")),
        c("k-zero-eval", "eval --k 0", words("eval --results $DIR/res_ok.json --gt $DIR/gt.json --k 0")),
        c("k-zero-predict", "predict --k 0", words("predict --summary $DIR/sum_b_f --pool-size 1000 --k 0 --bootstrap 10 --sample-noise 0")),
        c("pool-size-small", "--pool-size below the pool rows (exact mode)", scan("--pool $DIR/pool.npy --pool-size 10 -o $DIR/out")),
        c("pool-size-small-sample", "--pool-size below the pool rows (a sample: refused before the scan)", scan("--pool $DIR/pool.npy --fraction 0.5 --pool-size 10 -o $DIR/out")),
        c("threads-absurd", "--threads far above any machine's cores", scan("--pool $DIR/pool.npy --threads 100000 -o $DIR/out")),
        c("curve-too-many-points", "curve --per-decade too large to allocate", words("curve --summary $DIR/sum_b_f --pool-size 1000 --bootstrap 0 --per-decade 100000000 -o $DIR/c.svg")),
        c("pool-size-missing", "predict from a sample summary without N", words("predict --summary $DIR/sum_b_f --bootstrap 20 --sample-noise 0")),
        c("predict-empty-sample", "predict from a summary whose sample is empty (S = 0)", words("predict --summary $DIR/sum_empty --pool-size 1000000")),
        c("bootstrap-too-few", "predict --bootstrap 2", words("predict --summary $DIR/sum_b_f --pool-size 1000 --bootstrap 2 --sample-noise 0")),
        c("sample-noise-too-few", "predict --sample-noise 5", words("predict --summary $DIR/sum_b_f --pool-size 1000 --bootstrap 20 --sample-noise 5")),
        c("bootstrap-too-many", "predict --bootstrap 2⁶⁴ − 1, more replicates than a prediction draws", words("predict --summary $DIR/sum_b_f --pool-size 1000 --bootstrap 18446744073709551615 --sample-noise 0")),
        c("demo-sample-noise-too-many", "demo --sample-noise 10¹²: refused before anything is simulated or written", words("demo -o $DIR/demo_many --sample-noise 1000000000000")),
        c("predict-fit-top-above-summary", "predict --fit-top above the M the summary stores", words("predict --summary $DIR/sum_b_f --pool-size 1000 --fit-top 50 --bootstrap 20 --sample-noise 0")),
        c("chunk-rows-zero", "--chunk-rows 0", scan("--pool $DIR/pool.npy --chunk-rows 0 -o $DIR/out")),
        c("query-set-unknown", "--query-set that the ground truth lacks", scan("--pool $DIR/pool.npy --query-set text -o $DIR/out")),
        c("k-not-number", "--k abc", words("eval --results $DIR/res_ok.json --gt $DIR/gt.json --k abc")),
        // ---- outputs
        c("out-under-file", "output path inside a regular file", words("scan --queries $DIR/queries.npy --core $DIR/core.npy --gt $DIR/gt.json --pool $DIR/pool.npy -o $DIR/gt.json/sub")),
        c("out-trailing-slash", "a file output given as a folder path (`-o DIR/`)", words("sample --ids $DIR/pool_ids.txt --fraction 0.5 -o $DIR/newdir/")),
        c("out-missing-parent", "output folder whose parent does not exist", words("sample --ids $DIR/pool_ids.txt --fraction 0.5 -o $DIR/no/such/dir/s.txt")),
        c("out-disk-full", "output on a full disk (16 KiB tmpfs)", words("sample --ids $DIR/pool_ids.txt --fraction 1 -o $DIR/full/s.txt")),
        c("out-is-input", "`--results-out` equal to the ground truth", scan("--pool $DIR/pool.npy --results-out $DIR/gt.json -o $DIR/out")),
        c("out-is-input-o", "`-o` equal to the pool id list of `sample`", words("sample --ids $DIR/pool_ids.txt --fraction 0.5 -o $DIR/pool_ids.txt")),
        c("out-input-is-lock", "`sample --ids` reading the lock file of its own `-o`", words("sample --ids $DIR/side.txt.lock --fraction 1 -o $DIR/side.txt")),
        c("out-in-input-folder", "`--hardness-out` equal to the input summary's `manifest.json`", words("predict --summary $DIR/sum_b_f --pool-size 1000 --bootstrap 10 --sample-noise 0 --hardness-out $DIR/sum_b_f/manifest.json")),
        c("out-html-is-input", "`predict --html` naming the input summary's `manifest.json`", words("predict --summary $DIR/sum_b_f --pool-size 1000 --bootstrap 10 --sample-noise 0 --html $DIR/sum_b_f/manifest.json")),
        c("out-html-compare-is-input", "`compare --html` naming summary A's `manifest.json`", words("compare $DIR/sum_b_f $DIR/sum_b_f --pool-size 1000 --bootstrap 10 --html $DIR/sum_b_f/manifest.json")),
        c("out-html-demo-in-folder", "`demo --html` inside the demo's own output folder", words("demo --queries 4 -o $DIR/demo_h --html $DIR/demo_h/report.html")),
        c("ilias-html-exact", "`ilias --html` without `--fraction` below 1 (no prediction)", words("ilias --dataset-dir $DIR/ilias_ds --features $DIR/ilias_feat --html $DIR/ilias.html")),
        c("out-over-file", "`-o` of a scan naming an existing file", scan("--pool $DIR/pool.npy -o $DIR/res_ok.json")),
        c("out-over-folder", "`-o` naming a folder tailrank did not write", words("merge $DIR/sum_a $DIR/sum_b -o $DIR/ilias_nopos")),
        c("out-inside-input-summary", "`-o` naming a new folder inside an input summary", words("merge $DIR/sum_a $DIR/sum_b -o $DIR/sum_a/merged")),
        c("out-holds-input", "`-o` naming the folder that holds the inputs", words("merge $DIR/sum_a $DIR/sum_b -o $DIR")),
        c("out-twice", "`--results-out` and `-o` the same path", scan("--pool $DIR/pool.npy --results-out $DIR/o2 -o $DIR/o2")),
        c("out-staging-taken", "an input named like the output's staging folder (`OUT.tmp`)", words("sample --ids $DIR/sampled.txt.tmp --fraction 0.5 -o $DIR/sampled.txt")),
        c("out-locked", "another process writing the same output", scan("--pool $DIR/pool.npy -o $DIR/busy")),
        c("out-device-paired", "`sample -o /dev/null` (the id list and its manifest are written together)", words("sample --ids $DIR/pool_ids.txt --fraction 0.5 -o /dev/null")),
        c("out-dangling-link", "`-o` naming a symbolic link to a missing path", words("sample --ids $DIR/pool_ids.txt --fraction 0.5 -o $DIR/dangling.txt")),
        c("out-companion-too-long", "`sample -o` with a 250-byte name (its `.manifest.json` would not fit)", words(&format!("sample --ids $DIR/pool_ids.txt --fraction 0.5 -o $DIR/{}", "n".repeat(250)))),
        c("out-summary-user-file", "`-o` naming a summary folder that also holds a user's `notes.txt`", words("merge $DIR/sum_a $DIR/sum_b -o $DIR/sum_notes")),
        c("commit-interrupted-summary", "summary of a scan killed between its two renames (results renamed, summary not)", words("eval --summary $DIR/half")),
        c("commit-interrupted-results", "results JSON of that scan", words("eval --results $DIR/half.json --gt $DIR/gt.json")),
        // ---- summaries
        c("summary-corrupted", "summary array with one flipped bit", words("merge $DIR/sum_corrupt $DIR/sum_b -o $DIR/m")),
        c("summary-no-manifest", "summary folder without `manifest.json`", words("merge $DIR/sum_nomanifest $DIR/sum_b -o $DIR/m")),
        c("summary-future", "summary of a newer format version", words("merge $DIR/sum_future $DIR/sum_b -o $DIR/m")),
        c("summary-half-ties", "summary manifest listing `pos_core_ties.npy` without `pos_pool_ties.npy` (checksum recomputed)", words("merge $DIR/sum_half_ties $DIR/sum_b -o $DIR/m")),
        c("summary-bad-json", "summary manifest cut short", words("merge $DIR/sum_badjson $DIR/sum_b -o $DIR/m")),
        c("summary-missing-array", "summary folder lacking `top_len.npy`", words("merge $DIR/sum_missing_array $DIR/sum_b -o $DIR/m")),
        c("summary-array-folder", "a folder where `top_len.npy` should be", words("predict --summary $DIR/sum_folder_array")),
        c("summary-not-folder", "a file given as a summary", words("merge $DIR/gt.json $DIR/sum_b -o $DIR/m")),
        c("merge-models", "merge of summaries of different models", words("merge $DIR/sum_a $DIR/sum_b_model2 -o $DIR/m")),
        c("merge-seeds", "merge of summaries with different seeds", words("merge $DIR/sum_a $DIR/sum_b_seed -o $DIR/m")),
        c("merge-fractions", "merge of summaries with different fractions", words("merge $DIR/sum_a $DIR/sum_b_f -o $DIR/m")),
        c("merge-queries", "merge of summaries of different query sets", words("merge $DIR/sum_a $DIR/sum_b_queries -o $DIR/m")),
        c("merge-overlap", "merge of the same shard twice", words("merge $DIR/sum_a $DIR/sum_b $DIR/sum_a -o $DIR/m")),
        c("merge-overlap-content", "merge of a shard and the same rows re-encoded as f16 (another file digest)", words("merge $DIR/sum_a $DIR/sum_b $DIR/sum_a16 -o $DIR/m")),
        c("summary-manifest-edited", "summary whose `manifest.json` was edited (`subset_sizes`)", words("merge $DIR/sum_edited $DIR/sum_b -o $DIR/m")),
        c("summary-manifest-dupkey", "summary manifest with a duplicate key (checksum updated)", words("eval --summary $DIR/sum_dupkey")),
        c("predict-corrupted", "predict from a corrupted summary", words("predict --summary $DIR/sum_corrupt --bootstrap 10")),
        c("eval-summary-other-set", "eval --summary with a --set the summary is not for", words("eval --summary $DIR/sum_a --set text")),
        c("eval-protocol-k", "eval --protocol with --k (the revisited mAP ranks the whole list)", words("eval --results $DIR/res_ok.json --gt $DIR/gt.json --protocol easy --k 5")),
        c("eval-corrupted", "eval of a corrupted summary", words("eval --summary $DIR/sum_corrupt")),
        // ---- hardness CSV
        c("hardness-checksum", "hardness CSV edited after writing (`# seed: 0` → `1`)", words("predict --hardness $DIR/h_edited.csv --pool-size 1000 --bootstrap 10")),
        c("hardness-missing-column", "hardness CSV lacking `x_hat`", words("predict --hardness $DIR/h_nocol.csv --pool-size 1000 --bootstrap 10")),
        c("hardness-bad-number", "hardness CSV with `one` as a number", words("predict --hardness $DIR/h_badnum.csv --pool-size 1000 --bootstrap 10")),
        c("hardness-negative-count", "hardness CSV with `-1` as a count", words("predict --hardness $DIR/h_negative.csv --pool-size 1000 --bootstrap 20")),
        c("hardness-estimator-label", "hardness CSV (`# checksum: none`) whose `estimator` is no label", words("predict --hardness $DIR/h_estimator.csv --pool-size 1000 --bootstrap 10")),
        c("eval-revisited-empty", "eval --protocol with a revisited ground truth `{}`", words("eval --results $DIR/res_ok.json --gt $DIR/revisited_empty.json --protocol easy")),
        c("hardness-count-above-sample", "hardness CSV (`# checksum: none`) with a `pool_above` above its `sample_size`", words("predict --hardness $DIR/h_overcount.csv --pool-size 1000 --bootstrap 10")),
        c("hardness-repeated-key", "hardness CSV (`# checksum: none`) giving `# seed` twice", words("predict --hardness $DIR/h_repeated.csv --pool-size 1000 --bootstrap 10")),
        c("hardness-excess-unpaired", "hardness CSV with `excess_rate` but no `excess_weight`", words("predict --hardness $DIR/h_unpaired.csv --pool-size 1000 --bootstrap 10")),
        c("hardness-truncated", "hardness CSV cut in the middle of a row", words("predict --hardness $DIR/h_cut.csv --pool-size 1000 --bootstrap 10")),
        c("hardness-estimator-range", "hardness CSV (`# checksum: none`) whose `estimator` fits the tail on 1 score", words("predict --hardness $DIR/h_estimator_range.csv --pool-size 1000 --bootstrap 10")),
        c("hardness-query-without-positives", "hardness CSV (`# checksum: none`) with a query's `j = 0` row", words("predict --hardness $DIR/h_nopos.csv --pool-size 1000 --bootstrap 10")),
        c("hardness-no-rows", "hardness CSV with its header and no row", words("predict --hardness $DIR/h_norows.csv --pool-size 1000 --bootstrap 10")),
        c("hardness-column-twice", "hardness CSV (`# checksum: none`) whose header names `x_hat` twice", words("predict --hardness $DIR/h_column_twice.csv --pool-size 1000 --bootstrap 10")),
        c("hardness-pool-below-sample", "hardness CSV (`# checksum: none`) whose `pool_size` is below its `sample_size`", words("predict --hardness $DIR/h_pool_below_sample.csv --bootstrap 10")),
        c("hardness-cut-at-line", "hardness CSV cut at a line boundary (last row and checksum line lost)", words("predict --hardness $DIR/h_cutline.csv --pool-size 1000 --bootstrap 10")),
        // ---- simulations
        c("simulate-no-queries", "a simulated benchmark scaled down to 0 queries", words("simulate --preset ilias-like --queries 0 -o $DIR/sim0")),
        c("simulate-validate-preset", "`--validate` with a `--preset` (the vector validation needs `--vectors`)", words("simulate --preset ilias-like --validate -o $DIR/simv")),
        c("simulate-keep-summaries-files", "`--keep-summaries` for a vector family of descriptor files (it keeps web families' summaries)", words("simulate --vectors --validate --keep-summaries --family vectors-clustered --out $DIR/simk")),
        c("simulate-vector-option-preset", "a vectors-only option (`--dim`) with a `--preset`", words("simulate --preset ilias-like --queries 5 --dim 8 -o $DIR/simd")),
        c("simulate-web-pool-zero", "a web family at `--pool-size 0`", words("simulate --vectors --validate --family web-burst-1e8 --pool-size 0 -o $DIR/simw")),
        c("simulate-web-pool-huge", "a web family above 2³² − 1 pool rows", words("simulate --vectors --validate --family web-hubs-1e8 --pool-size 5000000000 -o $DIR/simw")),
        c("demo-no-queries", "the demo scaled down to 0 queries", words("demo --queries 0 -o $DIR/demo0")),
        c("validate-no-queries", "a validation study scaled down to 0 queries", words("validate --presets ilias-like --queries 0 -q -o $DIR/v0.md")),
        c("validate-exam-not-vector-runs", "validate --exam --vector-runs with a file that is not a vector-run list", words("validate --exam --vector-runs $DIR/gt.json -q -o $DIR/exam.md")),
        // ---- resumable scans
        c("resume-partial-exists", "a partial folder left by a killed scan, no --resume", scan("--pool $DIR/pool.npy -o $DIR/killed")),
        c("resume-changed", "--resume with another seed than the killed scan", scan("--pool $DIR/pool.npy -o $DIR/killed --fraction 0.9 --chunk-rows 50 --resume --seed 9")),
        // ---- issue 44: edited subsets, simulations too large for memory
        c("summary-fraction-edited", "summary whose level fraction was edited to disagree with its hash range (checksum recomputed)", words("predict --summary $DIR/sum_fraction --bootstrap 0")),
        c("simulate-pool-above-2-53", "a simulated pool above 2^53 items (the simulator's f64 counts)", words("simulate --preset ilias-like --queries 5 --pool-size 18446744073709551615 -o $DIR/simhuge")),
        c("simulate-too-large", "a simulation too large for the memory (10^8 queries)", words("simulate --preset ilias-like --queries 100000000 -o $DIR/simbig")),
        // ---- increments and grow
        c("sample-after-not-below", "sample --after not below --fraction", words("sample --ids $DIR/pool_ids.txt --fraction 0.1 --after 0.2 -o $DIR/s.txt")),
        c("scan-after-outside", "scan --after of a pool with rows outside the increment", scan("--pool $DIR/shard_b.npy --fraction 1 --after 0.5 -o $DIR/out")),
        c("validate-output-is-vector-runs", "validate --exam writing its report over a --vector-runs input", words("validate --exam --vector-runs $DIR/gt.json --seeds 1 -o $DIR/gt.json")),
        c("scan-results-inside-output", "scan --results-out inside the summary folder it replaces", scan("--pool $DIR/shard_b.npy --k 10 -o $DIR/out_r --results-out $DIR/out_r/r.json")),
        c("ilias-html-inside-summary-out", "ilias --html inside its own --summary-out folder", words("ilias --dataset-dir $DIR/ilias_ds --features $DIR/ilias_feat --fraction 0.5 --bootstrap 20 --sample-noise 0 --summary-out $DIR/ilias_so2 --html $DIR/ilias_so2/r.html")),
        c("scan-after-no-fraction", "scan --after without --fraction", scan("--pool $DIR/shard_inc50.npy --after 0.5 -o $DIR/out")),
        c("sample-after-zero", "sample --after 0", words("sample --ids $DIR/pool_ids.txt --fraction 0.2 --after 0 -o $DIR/s.txt")),
        c("sample-over-a-manifest", "sample -o naming another sample's manifest (`smp.txt.manifest.json` beside `smp.txt`)", words("sample --ids $DIR/pool_ids.txt --fraction 0.5 -o $DIR/smp.txt.manifest.json")),
        c("sample-ids-empty", "an id list without ids", words("sample --ids $DIR/sel_empty.txt --fraction 0.2 -o $DIR/s.txt")),
        c("validate-preset-twice", "`validate --presets` naming a family twice (its runs would count as more seeds)", words("validate --presets ilias-like,ilias-like --queries 5 -o $DIR/vr.md")),
        c("simulate-seeds-past-max", "`--seed` near 2^64 with `--seeds 2` (the seeds would wrap)", words("simulate --vectors --validate --seed 18446744073709551615 --seeds 2 -o $DIR/vv")),
        c("simulate-foreign-truth", "simulate into a folder holding the user's own `truth.json`", words("simulate --preset ilias-like --queries 5 -o $DIR/user_folder")),
        c("simulate-into-summary", "simulate into a scan summary folder", words("simulate --preset ilias-like --queries 5 -o $DIR/sum_a")),
        c("simulate-inside-summary", "simulate into a folder inside a scan summary folder", words("simulate --preset ilias-like --queries 5 -o $DIR/sum_a/inner")),
        c("simulate-runs-inside-out", "`simulate --vectors --validate --json` on a benchmark file of its own `--out`", words("simulate --vectors --validate --family vectors-clustered --pool-size 20000 -o $DIR/vv2 --json $DIR/vv2/gt.json")),
        c("validate-fraction-twice", "`validate --fractions` naming a fraction twice (its runs would count as more seeds)", words("validate --presets ilias-like --queries 5 --fractions 0.01,0.01 -q -o $DIR/vr.md")),
        c("validate-vector-runs-folder", "validate --exam --vector-runs of a folder", words("validate --exam --vector-runs $DIR/sum_a -q -o $DIR/exam.md")),
        c("simulate-vectors-too-large", "`simulate --vectors` with a dimension no memory holds", words("simulate --vectors --dim 4294967296 -o $DIR/svbig")),
        c("simulate-vectors-rows", "`simulate --vectors` above 2³² − 1 pool rows", words("simulate --vectors --pool-size 5000000000 -o $DIR/svbig")),
        c("simulate-vectors-foreign", "simulate --vectors into a folder holding the user's own descriptor files", words("simulate --vectors -o $DIR")),
        c("eval-summary-increment", "eval --summary of an increment", words("eval --summary $DIR/sum_part50")),
        c("out-summary-file", "an output that is a file of another summary (`--html S/manifest.json`)", words("predict --summary $DIR/sum_b_f --pool-size 1000 --bootstrap 10 --sample-noise 0 --html $DIR/sum_a/manifest.json")),
        c("curve-pool-size-small", "curve --pool-size below the sample size", words("curve --summary $DIR/sum_b_f --pool-size 10 --bootstrap 0 -o $DIR/c.svg")),
        c("hardness-folder", "predict --hardness of a folder", words("predict --hardness $DIR/sum_a --pool-size 1000 --bootstrap 10")),
        c("grow-base-exact", "grow a summary scanned at fraction 1", words("grow $DIR/sum_b $DIR/sum_part50 -o $DIR/g")),
        c("grow-not-increment", "grow by a summary that is not an increment", words("grow $DIR/sum_b_f $DIR/sum_b -o $DIR/g")),
        c("grow-base-increment", "grow of an increment", words("grow $DIR/sum_part50 $DIR/sum_part50 -o $DIR/g")),
        c("grow-wrong-after", "grow by an increment that starts elsewhere than the base's sample ends", words("grow $DIR/sum_b_f3 $DIR/sum_part50 -o $DIR/g")),
        c("grow-not-exact", "grow from 0.3 to 1 by an increment scanned with 3 drift shards (the base has 4)", words("grow $DIR/sum_b_f3 $DIR/sum_part30_h3 -o $DIR/g")),
        c("predict-part", "predict from an increment", words("predict --summary $DIR/sum_part50 --pool-size 1000 --bootstrap 20 --sample-noise 0")),
        // ---- issue 45: the next step
        c("predict-target-width", "predict --target-width not a positive number of points", words("predict --summary $DIR/sum_b_f --target-width 0 --bootstrap 0")),
        // ---- issue 46: one name per meaning
        c("ilias-fit-top-above-top-m", "`ilias --fit-top` above the scan's `--top-m`", words("ilias --dataset-dir $DIR/ilias_ds --features $DIR/ilias_feat --top-m 30 --fit-top 40")),
    ]
}

/// Prepare state that cases need beyond files: a partial folder for the resume rows and a
/// 16 KiB tmpfs for the disk-full row (root only: without it that row is reported as skipped).
fn prepare_state(dir: &Path) -> bool {
    // A partial folder: a scan killed after its second chunk was saved (test hook).
    let o = Command::new(bin())
        .arg("scan")
        .args(scan_base(dir))
        .args(["--pool", dir.join("pool.npy").to_str().unwrap()])
        .args(["--fraction", "0.9", "--chunk-rows", "50", "-o"])
        .arg(dir.join("killed"))
        .env("TAILRANK_FAILPOINT", "chunk:1")
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        None,
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(dir.join("killed.partial/plan.json").is_file());
    assert!(dir.join("killed.partial/chunk-000001").is_dir());
    // A scan killed in its commit: the results JSON renamed, the summary not yet (failpoint 1:
    // after the journals and the first rename; see `tailrank::atomic`).
    let o = Command::new(bin())
        .arg("scan")
        .args(scan_base(dir))
        .args(["--pool", dir.join("pool.npy").to_str().unwrap()])
        .args([
            "--results-out",
            dir.join("half.json").to_str().unwrap(),
            "-o",
        ])
        .arg(dir.join("half"))
        .env("TAILRANK_FAILPOINT", "commit:1")
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        None,
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(dir.join("half.json").is_file() && !dir.join("half").exists());
    let full = dir.join("full");
    std::fs::create_dir_all(&full).unwrap();
    Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=16k", "tmpfs"])
        .arg(&full)
        .status()
        .is_ok_and(|s| s.success())
}

/// Output paths of issue #44: a dangling link, a summary folder holding a user's file.
fn output_path_fixtures(dir: &Path) {
    #[cfg(unix)]
    std::os::unix::fs::symlink(dir.join("nothere/x.txt"), dir.join("dangling.txt")).unwrap();
    copy_dir(&dir.join("sum_a"), &dir.join("sum_notes"));
    std::fs::write(dir.join("sum_notes/notes.txt"), "mine").unwrap();
}

struct Unmount(PathBuf, bool);

impl Drop for Unmount {
    fn drop(&mut self) {
        if self.1 {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
}

fn normalise(text: &str, dir: &Path) -> String {
    let line = text
        .lines()
        .rev()
        .find(|l| l.starts_with("tailrank: error:"))
        .or_else(|| text.lines().find(|l| l.starts_with("error:")))
        .unwrap_or("")
        .replace(dir.to_str().unwrap(), "$DIR");
    // Process ids in temporary file names.
    let mut out = String::new();
    let mut rest = line.as_str();
    while let Some(i) = rest.find(".tmp-") {
        out.push_str(&rest[..i + 5]);
        rest = &rest[i + 5..];
        let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 {
            out.push_str("PID");
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    // Process ids of lock holders.
    let mut line = String::new();
    let mut rest = out.as_str();
    while let Some(i) = rest.find("(pid ") {
        line.push_str(&rest[..i + 5]);
        rest = &rest[i + 5..];
        let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 {
            line.push_str("PID");
        }
        rest = &rest[digits..];
    }
    line.push_str(rest);
    line
}

const START: &str = "<!-- catalogue:start -->";
const END: &str = "<!-- catalogue:end -->";

fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The kind name of an exit code (`-` for none: a signal or success).
fn kind_of_exit(code: &str) -> &'static str {
    tailrank::ErrorKind::ALL
        .into_iter()
        .find(|k| k.exit_code().to_string() == code)
        .map_or("-", tailrank::ErrorKind::name)
}

/// Rows of the doc's table: id → (exit code, kind, message).
fn doc_rows() -> BTreeMap<String, (String, String, String)> {
    let doc = std::fs::read_to_string(doc_path()).unwrap_or_default();
    let mut rows = BTreeMap::new();
    let (Some(a), Some(b)) = (doc.find(START), doc.find(END)) else {
        return rows;
    };
    for line in doc[a..b].lines().filter(|l| l.starts_with("| `")) {
        // | `id` | input | `command` | exit | kind | `message` |
        let cells: Vec<String> = split_row(line);
        if cells.len() == 6 {
            let id = cells[0].trim_matches('`').to_string();
            let msg = cells[5]
                .strip_prefix("``` ")
                .and_then(|m| m.strip_suffix(" ```"))
                .unwrap_or(&cells[5])
                .to_string();
            let kind = cells[4].trim_matches('`').to_string();
            rows.insert(id, (cells[3].clone(), kind, msg));
        }
    }
    rows
}

/// Split a Markdown table row on unescaped `|`, unescaping `\|`.
fn split_row(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    let mut cells = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cells.last_mut().unwrap().push('|');
                chars.next();
            }
            '|' => cells.push(String::new()),
            _ => cells.last_mut().unwrap().push(c),
        }
    }
    cells.iter().map(|c| c.trim().to_string()).collect()
}

#[test]
fn every_catalogue_row() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    fixtures(dir);
    output_path_fixtures(dir);
    let mounted = prepare_state(dir);
    let _guard = Unmount(dir.join("full"), mounted);
    // Another writer of `$DIR/busy` for the whole test (its pid is shown as `PID`).
    let _busy = tailrank::atomic::Lock::acquire(&dir.join("busy")).unwrap();
    let doc = doc_rows();
    let bless = std::env::var_os("TAILRANK_BLESS").is_some();
    let mut table = Vec::new();
    let mut failures = Vec::new();
    let mut ids = std::collections::HashSet::new();
    for case in cases() {
        assert!(ids.insert(case.id), "duplicate case id {}", case.id);
        if case.id == "out-disk-full" && !mounted {
            eprintln!("out-disk-full: skipped (cannot mount a tmpfs: not root)");
            if let Some((code, kind, msg)) = doc.get(case.id) {
                assert_eq!(
                    kind,
                    kind_of_exit(code),
                    "{}: exit and kind differ",
                    case.id
                );
                table.push((
                    case.id,
                    case.input,
                    case.args.join(" "),
                    code.clone(),
                    msg.clone(),
                ));
            }
            continue;
        }
        let args: Vec<String> = case
            .args
            .iter()
            .map(|a| a.replace("$DIR", dir.to_str().unwrap()))
            .collect();
        let o = Command::new(bin()).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            !stderr.contains("panicked"),
            "{}: the binary panicked:\n{stderr}",
            case.id
        );
        let code = o
            .status
            .code()
            .map_or("signal".to_string(), |c| c.to_string());
        let msg = normalise(&stderr, dir);
        if !bless {
            assert!(!msg.is_empty(), "{}: no error line in:\n{stderr}", case.id);
            assert_ne!(code, "0", "{}: succeeded:\n{stderr}", case.id);
        }
        let kind = kind_of_exit(&code);
        match doc.get(case.id) {
            Some((c, k, m)) if *c == code && k == kind && *m == msg => {}
            other => failures.push(format!(
                "{}: got exit {code} ({kind}), message\n    {msg}\n  docs/reference/errors.md has {other:?}",
                case.id
            )),
        }
        table.push((case.id, case.input, case.args.join(" "), code, msg));
    }
    if bless {
        let mut text = format!(
            "{START}\n| id | bad input | command (`$DIR` = fixture folder) | exit | kind | message |\n\
             |---|---|---|---|---|---|\n"
        );
        for (id, input, cmd, code, msg) in &table {
            text.push_str(&format!(
                "| `{id}` | {} | `tailrank {}` | {code} | `{}` | ``` {} ``` |\n",
                escape(input),
                escape(cmd),
                kind_of_exit(code),
                escape(msg)
            ));
        }
        text.push_str(END);
        let doc = std::fs::read_to_string(doc_path()).unwrap_or_default();
        let new = match (doc.find(START), doc.find(END)) {
            (Some(a), Some(b)) => format!("{}{text}{}", &doc[..a], &doc[b + END.len()..]),
            _ => format!("{doc}\n{text}\n"),
        };
        std::fs::write(doc_path(), new).unwrap();
        return;
    }
    let extra: Vec<&String> = doc.keys().filter(|k| !ids.contains(k.as_str())).collect();
    assert!(
        extra.is_empty(),
        "docs/reference/errors.md rows without a case: {extra:?}"
    );
    assert!(
        failures.is_empty(),
        "{} catalogue row(s) differ (rerun with TAILRANK_BLESS=1 after checking the \
         messages):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The kinds table of `docs/reference/errors.md` (`| `kind` | exit | `Python class` | meaning |` between
/// the kinds markers) lists every `ErrorKind` once, with its exit code; every kind a user can
/// meet (all but `internal`) has at least one catalogue row.
#[test]
fn every_kind_documented() {
    let doc = std::fs::read_to_string(doc_path()).unwrap();
    let (a, b) = (
        doc.find("<!-- kinds:start -->")
            .expect("kinds:start marker"),
        doc.find("<!-- kinds:end -->").expect("kinds:end marker"),
    );
    let mut documented = BTreeMap::new();
    for line in doc[a..b].lines().filter(|l| l.starts_with("| `")) {
        let cells = split_row(line);
        let name = cells[0].trim_matches('`').to_string();
        assert!(
            documented.insert(name.clone(), cells[1].clone()).is_none(),
            "kind {name} documented twice"
        );
    }
    for kind in tailrank::ErrorKind::ALL {
        assert_eq!(
            documented.remove(kind.name()),
            Some(kind.exit_code().to_string()),
            "docs/reference/errors.md: kind {kind} and its exit code"
        );
        assert_eq!(tailrank::ErrorKind::from_name(kind.name()), Some(kind));
    }
    assert!(
        documented.is_empty(),
        "unknown kinds documented: {documented:?}"
    );
    let rows = doc_rows();
    for kind in tailrank::ErrorKind::ALL {
        let n = rows.values().filter(|(_, k, _)| k == kind.name()).count();
        assert!(
            n > 0 || kind == tailrank::ErrorKind::Internal,
            "no catalogue row of kind {kind}"
        );
    }
}
