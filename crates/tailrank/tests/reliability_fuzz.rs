//! Property-based fuzzing of every reader that takes user files: arbitrary bytes and mutations
//! of valid files (byte flips, truncations, insertions, checksum-consistent array edits,
//! manifest field edits) must give `Ok` or an `Error`, never a panic, a hang or an absurd
//! allocation. Readers: the `.npy` header parser and `.npy` open, the HDF5 open/read path, the
//! results JSON reader, the JSON ground truth, id lists, the summary folder reader, and the
//! hardness CSV reader; and the output-path rule (staging and lock names of any legal output
//! name, and atomic writes under such names).
//!
//! The case count comes from `PROPTEST_CASES` (default 256 here: the suite stays fast);
//! `scripts/fuzz.sh` runs the same properties with a large count for a bounded time. Inputs
//! that once failed are kept as explicit regression tests at the end of this file.

use tailrank_test_support::python as common;

use proptest::prelude::*;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use tailrank::formats::descriptors::{DescriptorSource, Dtype};
use tailrank::formats::gt::parse_json_gt;
use tailrank::formats::hdf5::Hdf5Descriptors;
use tailrank::formats::ids::parse_ids;
use tailrank::formats::npy::{npy_header_bytes, parse_header, NpyDescriptors};
use tailrank::formats::results::parse_results;
use tailrank::sample::HashRange;
use tailrank::summary::{PositiveSummary, QuerySummary, Subset, SubsetKind, Summary};

/// A byte edit applied to a valid file.
#[derive(Debug, Clone)]
enum Edit {
    /// Overwrite the byte at (position mod len).
    Set(usize, u8),
    /// XOR one bit.
    Flip(usize, u8),
    /// Cut the file at (position mod (len + 1)).
    Truncate(usize),
    /// Insert bytes at (position mod (len + 1)).
    Insert(usize, Vec<u8>),
    /// Remove up to n bytes at (position mod len).
    Remove(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Edit::Set(p, b)),
        4 => (any::<usize>(), 0u8..8).prop_map(|(p, b)| Edit::Flip(p, b)),
        1 => any::<usize>().prop_map(Edit::Truncate),
        1 => (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(p, v)| Edit::Insert(p, v)),
        1 => (any::<usize>(), 1usize..16).prop_map(|(p, n)| Edit::Remove(p, n)),
    ]
}

fn apply(bytes: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    for e in edits {
        match e {
            Edit::Set(p, v) if !b.is_empty() => {
                let i = p % b.len();
                b[i] = *v;
            }
            Edit::Flip(p, bit) if !b.is_empty() => {
                let i = p % b.len();
                b[i] ^= 1 << bit;
            }
            Edit::Truncate(p) => b.truncate(p % (b.len() + 1)),
            Edit::Insert(p, v) => {
                let i = p % (b.len() + 1);
                b.splice(i..i, v.iter().copied());
            }
            Edit::Remove(p, n) if !b.is_empty() => {
                let i = p % b.len();
                let j = (i + n).min(b.len());
                b.drain(i..j);
            }
            _ => {}
        }
    }
    b
}

/// Mutations of `valid`: 1–4 edits, or arbitrary bytes.
fn mutated(valid: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => prop::collection::vec(edit(), 1..5).prop_map(move |e| apply(&valid, &e)),
        1 => prop::collection::vec(any::<u8>(), 0..256),
    ]
}

fn scratch() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap()).path()
}

/// A unique file path in the scratch folder (proptest cases may run in any order).
fn unique(name: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    scratch().join(format!("{n}-{name}"))
}

// ---------------------------------------------------------------- .npy

fn valid_npy() -> Vec<u8> {
    let mut b = npy_header_bytes(3, 4, Dtype::F16);
    for i in 0..12u16 {
        b.extend_from_slice(&half::f16::from_f32(i as f32 / 12.0).to_le_bytes());
    }
    b
}

fn npy_text_header() -> impl Strategy<Value = Vec<u8>> {
    // Structured headers: plausible dict text with fuzzed values.
    let descr = prop_oneof![
        Just("<f2".to_string()),
        Just("<f4".to_string()),
        Just(">f4".to_string()),
        Just("|u1".to_string()),
        "[<>|=]?[a-zA-Z][0-9]{0,3}",
    ];
    let shape = prop::collection::vec(
        prop_oneof![
            any::<u64>().prop_map(|x| x.to_string()),
            Just("18446744073709551615".into()),
            Just("-1".into()),
            "[0-9L ]{0,6}"
        ],
        0..4,
    );
    (descr, any::<bool>(), shape, 1u8..4).prop_map(|(d, f, s, v)| {
        let dict = format!(
            "{{'descr': '{d}', 'fortran_order': {}, 'shape': ({}), }}",
            if f { "True" } else { "False" },
            s.join(", ")
        );
        let mut out = b"\x93NUMPY".to_vec();
        out.push(v);
        out.push(0);
        if v == 1 {
            out.extend_from_slice(&(dict.len() as u16 + 1).to_le_bytes());
        } else {
            out.extend_from_slice(&(dict.len() as u32 + 1).to_le_bytes());
        }
        out.extend_from_slice(dict.as_bytes());
        out.push(b'\n');
        out.extend_from_slice(&[0u8; 24]);
        out
    })
}

fn check_npy(bytes: &[u8]) {
    let p = Path::new("fuzz.npy");
    let _ = parse_header(p, bytes);
    // The open path too (length checks, ids, digest), with 3 ids.
    let path = unique("x.npy");
    std::fs::write(&path, bytes).unwrap();
    let ids: Vec<String> = (0..3).map(|i| format!("id{i}")).collect();
    if let Ok(src) = NpyDescriptors::open_with_ids(&path, path.with_extension("ids"), ids) {
        let mut row = vec![0f32; src.dim()];
        for r in 0..src.rows() {
            src.read_rows(r, &mut row).unwrap();
        }
    }
    let _ = std::fs::remove_file(&path);
}

// ---------------------------------------------------------------- HDF5

/// A small valid ILIAS-layout HDF5 file (chunked, deflate), written by h5py once.
fn valid_h5() -> &'static [u8] {
    static B: OnceLock<Vec<u8>> = OnceLock::new();
    B.get_or_init(|| {
        let p = scratch().join("valid.h5");
        common::run_python(
            r#"
import sys, numpy as np, h5py
x = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float16)
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("features", data=x, chunks=(2, 4), compression="gzip")
    f.create_dataset("index", data=[f"img/{i}".encode() for i in range(6)],
                     dtype=h5py.string_dtype("ascii"))
"#,
            &[p.to_str().unwrap()],
        );
        std::fs::read(&p).unwrap()
    })
}

fn check_h5(bytes: &[u8]) {
    let path = unique("x.h5");
    std::fs::write(&path, bytes).unwrap();
    if let Ok(src) = Hdf5Descriptors::open(&path) {
        // At most 64 rows (a corrupt shape may claim far more than the file holds).
        let mut rows = vec![0f32; src.dim() * src.rows().min(64)];
        let _ = src.read_rows(0, &mut rows);
        if src.rows() > 64 {
            let _ = src.read_rows(src.rows() - 64, &mut rows);
        }
        let _ = src.digest();
    }
    let _ = std::fs::remove_file(&path);
}

// ---------------------------------------------------------------- JSON, ids

const VALID_RESULTS: &str =
    r#"{"q1": {"a": 0.9, "b": 0.5, "c": -1e-3}, "q2": {}, "q3": {"x\"y": 1}}"#;
const VALID_GT: &str = r#"{"q1": ["a", "b"], "q2": ["c"], "q\u00e9": ["d"]}"#;
const VALID_IDS: &str = "yfcc/0001\nyfcc/0002\nyfcc/0003\r\n";
const VALID_ILIAS_POSITIVES: &str =
    "inst_00/pos_0.jpg,0.1,3\ninst_00/pos_1.jpg,NA,NA\r\ninst_01/p.jpg,0.2,5\n";

// ---------------------------------------------------------------- summary

fn valid_summary() -> Summary {
    let subsets = vec![
        Subset {
            kind: SubsetKind::Level,
            fraction: 0.5,
            range: HashRange::fraction(0.5).unwrap(),
            top_m: None,
        },
        Subset {
            kind: SubsetKind::Level,
            fraction: 0.25,
            range: HashRange::fraction(0.25).unwrap(),
            top_m: None,
        },
        Subset {
            kind: SubsetKind::Shard,
            fraction: 0.5,
            range: HashRange::fraction(0.5).unwrap(),
            top_m: None,
        },
    ];
    let q = |id: &str, scores: &[f32]| QuerySummary {
        id: id.into(),
        positives: scores
            .iter()
            .enumerate()
            .map(|(j, &s)| PositiveSummary {
                core_ties: 0,
                pool_ties: Vec::new(),
                id: format!("{id}/p{j}"),
                score: s,
                core_above: j as u64,
                pool_above: vec![2 * j as u64, j as u64, 2 * j as u64],
            })
            .collect(),
        top_scores: vec![vec![0.9, 0.5, 0.1], vec![0.5, 0.1], vec![0.9, 0.5, 0.1]],
    };
    Summary {
        format_version: 2,
        tool_version: "0.1.0".into(),
        model: "m".into(),
        query_set: "image".into(),
        pool_size: Some(1000),
        fraction: 0.5,
        seed: 3,
        top_m: 4,
        core_size: 10,
        subsets,
        subset_sizes: vec![20, 10, 20],
        queries: vec![q("a", &[0.8, 0.4]), q("b", &[0.7, 0.6, 0.2])],
        inputs: vec![],
        pool_id_hashes: Some(
            (0..20u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect(),
        ),
        ties_known: true,
    }
}

/// The files of a valid summary folder, by name.
fn valid_summary_files() -> &'static Vec<(String, Vec<u8>)> {
    static F: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    F.get_or_init(|| {
        let d = scratch().join("valid-summary");
        valid_summary().write(&d).unwrap();
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    })
}

/// Write a summary folder with `files`, optionally re-stamping the array checksums in the
/// manifest so that the reader gets past them to the content checks.
fn read_summary_files(files: &[(String, Vec<u8>)], fix_checksums: bool) {
    let d = unique("summary");
    std::fs::create_dir_all(&d).unwrap();
    let mut files = files.to_vec();
    if fix_checksums {
        let sums: Vec<(String, String)> = files
            .iter()
            .filter(|(n, _)| n.ends_with(".npy"))
            .map(|(n, b)| {
                (
                    n.clone(),
                    format!("xxh3:{:016x}", xxhash_rust::xxh3::xxh3_64(b)),
                )
            })
            .collect();
        if let Some((_, m)) = files.iter_mut().find(|(n, _)| n == "manifest.json") {
            if let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(m) {
                for (n, s) in sums {
                    if let Some(r) = v.pointer_mut(&format!("/arrays/{n}/xxh3")) {
                        *r = s.into();
                    }
                }
                *m = serde_json::to_vec(&v).unwrap();
            }
        }
        // And the manifest's own checksum (format 2), so that the content checks are reached.
        let sum = files
            .iter()
            .find(|(n, _)| n == "manifest.json")
            .map(|(_, m)| format!("xxh3:{:016x}\n", xxhash_rust::xxh3::xxh3_64(m)));
        if let (Some(sum), Some((_, c))) =
            (sum, files.iter_mut().find(|(n, _)| n == "manifest.xxh3"))
        {
            *c = sum.into_bytes();
        }
    }
    for (n, b) in &files {
        std::fs::write(d.join(n), b).unwrap();
    }
    if let Ok(s) = Summary::read(&d) {
        s.validate().unwrap();
        let _ = tailrank::metric::evaluate_summary(&s, 100);
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Replace the numeric leaf number `which` (in document order) of `v` by `x`.
fn set_nth_number(v: &mut serde_json::Value, which: &mut usize, x: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Number(_) => {
            if *which == 0 {
                *v = x.clone();
                return true;
            }
            *which -= 1;
            false
        }
        serde_json::Value::Array(a) => a.iter_mut().any(|e| set_nth_number(e, which, x)),
        serde_json::Value::Object(o) => o.values_mut().any(|e| set_nth_number(e, which, x)),
        _ => false,
    }
}

fn json_number() -> impl Strategy<Value = serde_json::Value> {
    prop_oneof![
        any::<u64>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        (0u64..64).prop_map(serde_json::Value::from),
        any::<f64>().prop_map(serde_json::Value::from),
        Just(serde_json::Value::from(u64::MAX)),
        Just(serde_json::Value::Null),
    ]
}

// ---------------------------------------------------------------- hardness CSV

const VALID_HARDNESS: &str = "# format: tailrank-hardness
# format_version: 1
# model: m
# query_set: image
# pool_size: 1000000
# sample_size: 50000
# fraction: 0.05
# seed: 1
# estimator: evt(top_m=4000,quantile=0.95,c_min=5)
# tool_version: 0.1.0
query_id,positive_id,j,score,core_above,pool_above,sample_size,x_hat,branch,tail_u,tail_sigma,tail_xi,tail_n_u,tail_log_likelihood
q1,a,1,0.73,0,0,50000,0,immune,0.41,0.02,-0.31,200,647.2
q1,\"b,c\",2,0.52,1,2,50000,1.2e-9,tail,0.41,0.02,-0.31,200,647.2
q2,d,1,0.38,0,12,50000,0.00024,count,,,,,
# checksum: none
";

fn check_hardness(bytes: &[u8]) {
    let path = unique("h.csv");
    std::fs::write(&path, bytes).unwrap();
    let _ = tailrank::formats::hardness_csv::read_hardness_csv(&path);
    let _ = std::fs::remove_file(&path);
}

proptest! {
    #![proptest_config(ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn npy_mutations_never_panic(b in mutated(valid_npy())) {
        check_npy(&b);
    }

    #[test]
    fn npy_structured_headers_never_panic(b in npy_text_header()) {
        check_npy(&b);
    }

    #[test]
    fn hdf5_mutations_never_panic(b in mutated(valid_h5().to_vec())) {
        check_h5(&b);
    }

    #[test]
    fn results_json_never_panics(b in mutated(VALID_RESULTS.as_bytes().to_vec())) {
        if let Ok(r) = parse_results(Path::new("r.json"), &b) {
            for q in &r.queries {
                prop_assert!(q.items.iter().all(|(_, s)| s.is_finite()));
            }
        }
    }

    #[test]
    fn ground_truth_json_never_panics(b in mutated(VALID_GT.as_bytes().to_vec())) {
        if let Ok(qs) = parse_json_gt(Path::new("gt.json"), &b) {
            prop_assert_eq!(qs.query_ids.len(), qs.positives.len());
            prop_assert!(qs.positives.iter().all(|p| !p.is_empty()));
        }
    }

    #[test]
    fn id_lists_never_panic(b in mutated(VALID_IDS.as_bytes().to_vec())) {
        // The line rule (docs/reference/formats.md): an accepted list has one id per `\n` line, none
        // empty and none holding a line break, so it reads the same in Python (`newline="\n"`).
        if let Ok(ids) = parse_ids(Path::new("ids.txt"), Cursor::new(b.clone())) {
            prop_assert!(ids.iter().all(|i| !i.is_empty() && !i.contains(['\r', '\n'])));
            let text = String::from_utf8(b).unwrap();
            let py: Vec<&str> = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
            let n = py.iter().rposition(|l| !l.is_empty()).map_or(0, |i| i + 1);
            prop_assert_eq!(&ids[..], &py[..n]);
        }
    }

    #[test]
    fn ilias_id_csvs_never_panic(b in mutated(VALID_ILIAS_POSITIVES.as_bytes().to_vec())) {
        // A data line is never dropped: with no column-name header every non-blank line is a row.
        let p = unique("positive_ids.txt");
        std::fs::write(&p, &b).unwrap();
        if let Ok(t) = tailrank::formats::gt::IdTable::read(&p) {
            let text = String::from_utf8(b).unwrap();
            let lines = text.split('\n').filter(|l| !l.trim().is_empty()).count();
            prop_assert_eq!(t.rows.len() + usize::from(t.header.is_some()), lines);
        }
        let _ = tailrank::ilias::read_positive_info(&p);
    }

    #[test]
    fn summary_byte_mutations_never_panic(
        which in 0usize..9,
        b in prop::collection::vec(edit(), 1..4),
        fix in any::<bool>(),
    ) {
        let mut files = valid_summary_files().clone();
        let i = which % files.len();
        files[i].1 = apply(&files[i].1, &b);
        read_summary_files(&files, fix);
    }

    #[test]
    fn summary_manifest_numbers_never_panic(which in 0usize..200, x in json_number()) {
        let mut files = valid_summary_files().clone();
        let m = files.iter_mut().find(|(n, _)| n == "manifest.json").unwrap();
        let mut v: serde_json::Value = serde_json::from_slice(&m.1).unwrap();
        let mut w = which;
        set_nth_number(&mut v, &mut w, &x);
        m.1 = serde_json::to_vec(&v).unwrap();
        read_summary_files(&files, true);
    }

    #[test]
    fn hardness_csv_never_panics(b in mutated(VALID_HARDNESS.as_bytes().to_vec())) {
        check_hardness(&b);
    }

    /// The output-path rule (`tailrank::atomic::names`): the entry names next to any legal
    /// output name fit in a file name, are a function of the name alone, keep `NAME + suffix`
    /// whenever it fits, and never equal the output name.
    #[test]
    fn output_entry_names_fit_and_are_stable(name in file_name(), suffix in prop_oneof![
        Just(".tmp"), Just(".lock"), Just(".partial"), Just(".partial.lock")
    ]) {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        use tailrank::atomic::names::{entry_name, NAME_MAX};
        let n = OsStr::from_bytes(&name);
        let e = entry_name(n, suffix);
        let eb = e.as_bytes();
        prop_assert!(eb.len() <= NAME_MAX && !eb.contains(&b'/') && !eb.contains(&0));
        prop_assert_ne!(eb, &name[..]);
        prop_assert_eq!(&e, &entry_name(n, suffix));
        if name.len() + suffix.len() <= NAME_MAX {
            let plain = [&name[..], suffix.as_bytes()].concat();
            prop_assert_eq!(eb, plain.as_slice());
        }
    }

    /// Any legal output name is written atomically and leaves nothing else behind, alone
    /// or replaced together with a companion (a journaled commit).
    #[test]
    fn any_legal_output_name_is_written_without_leftovers(name in file_name(), paired in any::<bool>()) {
        use std::os::unix::ffi::OsStrExt;
        let dir = unique("names");
        std::fs::create_dir(&dir).unwrap();
        let out = dir.join(std::ffi::OsStr::from_bytes(&name));
        for round in 0..2u8 {
            let mut tx = tailrank::atomic::Transaction::default();
            let i = tx.add_file(&out).unwrap();
            if paired && std::str::from_utf8(&name).is_err() {
                // A journaled commit lists its outputs in JSON: refused before any work.
                let e = tx.add_dir(&dir.join("companion")).unwrap_err().to_string();
                prop_assert!(e.contains("is not valid UTF-8"), "{}", e);
                drop(tx);
                prop_assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
                break;
            }
            let j = paired.then(|| tx.add_dir(&dir.join("companion")).unwrap());
            tx.write(i, |p| tailrank::atomic::write_bytes(p, &[round])).unwrap();
            if let Some(j) = j {
                tx.write(j, |p| std::fs::create_dir(p).map_err(|e| tailrank::Error::io(p, e)))
                    .unwrap();
            }
            tx.commit().unwrap();
            prop_assert_eq!(std::fs::read(&out).unwrap(), vec![round]);
            let left = std::fs::read_dir(&dir).unwrap().count();
            prop_assert_eq!(left, 1 + usize::from(paired));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// A legal file name: 1 to 255 bytes, no `/` and no NUL, not `.` or `..`.
fn file_name() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(1u8..=255, 1..=255),
        (230usize..=255).prop_map(|n| vec![b'a'; n]),
    ]
    .prop_map(|v| {
        v.into_iter()
            .map(|b| if b == b'/' { b'_' } else { b })
            .collect::<Vec<u8>>()
    })
    .prop_filter("not . or ..", |v| v != b"." && v != b"..")
}

// ---------------------------------------------------------------- regressions

#[test]
fn valid_inputs_read() {
    let p = Path::new("x");
    parse_header(p, &valid_npy()).unwrap();
    parse_results(p, VALID_RESULTS.as_bytes()).unwrap();
    parse_json_gt(p, VALID_GT.as_bytes()).unwrap();
    assert_eq!(parse_ids(p, Cursor::new(VALID_IDS)).unwrap().len(), 3);
    read_summary_files(valid_summary_files(), false);
    let h = unique("valid.h5");
    std::fs::write(&h, valid_h5()).unwrap();
    assert_eq!(Hdf5Descriptors::open(&h).unwrap().rows(), 6);
    let c = unique("valid.csv");
    std::fs::write(&c, VALID_HARDNESS).unwrap();
    tailrank::formats::hardness_csv::read_hardness_csv(&c).unwrap();
}

/// Found by `hdf5_mutations_never_panic`: a mutated dataspace made `features` claim 2^42
/// columns and the digest tried to allocate 17 TB (an abort, not a panic). Patch the dims of
/// `features` (6 × 4, stored as two little-endian u64) and expect a clear error.
#[test]
fn regression_hdf5_absurd_shape_is_refused_before_allocating() {
    let valid = valid_h5();
    let mut pat = 6u64.to_le_bytes().to_vec();
    pat.extend_from_slice(&4u64.to_le_bytes());
    let at: Vec<usize> = valid
        .windows(16)
        .enumerate()
        .filter(|(_, w)| *w == pat.as_slice())
        .map(|(i, _)| i)
        .collect();
    assert!(!at.is_empty(), "dataspace of 'features' not found");
    for (dim, rows) in [(1u64 << 42, 6u64), (4, 1 << 50)] {
        let mut b = valid.to_vec();
        for &i in &at {
            b[i..i + 8].copy_from_slice(&rows.to_le_bytes());
            b[i + 8..i + 16].copy_from_slice(&dim.to_le_bytes());
        }
        let path = unique("absurd.h5");
        std::fs::write(&path, &b).unwrap();
        let e = match Hdf5Descriptors::open(&path) {
            Ok(_) => panic!("absurd shape accepted ({rows} x {dim})"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("implausible"), "{e}");
    }
}

/// Found by `results_json_never_panics`: a value starting with `N` or `I` that is not `NaN` /
/// `Infinity` sent the JSON reader into endless recursion (stack overflow, an abort).
#[test]
fn regression_json_bare_n_or_i_is_an_error() {
    for text in [
        r#"{"q0": {"a": N}}"#,
        r#"{"q0": {"a": Inf}}"#,
        r#"{"q0": {"a": [N]}}"#,
        r#"{"q0": Nope}"#,
        r#"{"q0": {"a": {"x": I}}}"#,
    ] {
        let e = parse_results(Path::new("r.json"), text.as_bytes());
        assert!(e.is_err(), "{text}");
        let g = parse_json_gt(Path::new("gt.json"), text.as_bytes());
        assert!(g.is_err(), "{text}");
    }
    // NaN / Infinity are still recognised (and refused as scores with a clear message).
    let e = parse_results(Path::new("r.json"), br#"{"q0": {"a": Infinity}}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not finite"), "{e}");
}
