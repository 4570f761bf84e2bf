//! Resumable scans (`scan::resume`): chunked scans with a partial folder give exactly the
//! single-pass summary and results of `scan::engine::scan` (same arrays, same manifest fields),
//! whatever the chunk size, after losing or corrupting chunks, and refuse to resume a partial
//! folder made from other inputs or options.

use std::path::Path;
use tailrank::formats::descriptors::{DescriptorSource, InMemoryDescriptors, RowRange};
use tailrank::formats::gt::QuerySet;
use tailrank::scan::engine::{scan, NoProgress, ScanConfig, ScanInputs, ScanOutput};
use tailrank::scan::resume::{
    output_failed, partial_dir_for, plan_chunks, remove_partial, scan_resumable, ResumeOptions,
    PLAN,
};
use tailrank::summary::Summary;

/// splitmix64: deterministic test data without depending on a RNG crate's API.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unif(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.unif().max(1e-300), self.unif());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// A unit vector near `center` (mixing weight `w` on the noise), rounded through f16 so that
/// exact ties between pool items and positives occur.
fn vector(rng: &mut Rng, center: &[f32], w: f64) -> Vec<f32> {
    let mut v: Vec<f64> = center
        .iter()
        .map(|&c| c as f64 + w * rng.normal())
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v.iter().map(|&x| x as f32).collect()
}

struct Data {
    queries: InMemoryDescriptors,
    core: InMemoryDescriptors,
    pool: Vec<InMemoryDescriptors>,
    qs: QuerySet,
}

fn data(seed: u64, nq: usize, pool_sizes: &[usize], d: usize) -> Data {
    let mut rng = Rng(seed);
    let centers: Vec<Vec<f32>> = (0..nq)
        .map(|_| vector(&mut rng, &vec![0.0; d], 1.0))
        .collect();
    let mut qd = Vec::new();
    let mut cd = Vec::new();
    let (mut qids, mut cids, mut pos) = (Vec::new(), Vec::new(), Vec::new());
    for (q, c) in centers.iter().enumerate() {
        qids.push(format!("q{q}"));
        qd.extend(vector(&mut rng, c, 0.05));
        let mut p = Vec::new();
        for j in 0..3 + q % 3 {
            let id = format!("core/{q}/{j}");
            cd.extend(vector(&mut rng, c, 0.03 + 0.04 * j as f64));
            cids.push(id.clone());
            p.push(id);
        }
        pos.push(p);
    }
    for e in 0..20 {
        cids.push(format!("core/extra/{e}"));
        let c = &centers[e % nq];
        cd.extend(vector(&mut rng, c, 0.2));
    }
    let mut pool = Vec::new();
    let mut next = 0usize;
    for (si, &n) in pool_sizes.iter().enumerate() {
        let mut ids = Vec::new();
        let mut pd = Vec::new();
        for _ in 0..n {
            ids.push(format!("pool/{next:07}"));
            let r = rng.unif();
            if r < 0.02 {
                // An exact copy of a positive: a tie that must not outrank it.
                let row = (rng.next() as usize) % (cd.len() / d);
                pd.extend_from_slice(&cd[row * d..(row + 1) * d]);
            } else {
                let c = &centers[(rng.next() as usize) % nq];
                let w = 0.15 + 0.5 * rng.unif();
                pd.extend(vector(&mut rng, c, w));
            }
            next += 1;
        }
        pool.push(InMemoryDescriptors::new(format!("pool{si}.npy"), ids, d, pd).unwrap());
    }
    Data {
        queries: InMemoryDescriptors::new("queries.npy", qids.clone(), d, qd).unwrap(),
        core: InMemoryDescriptors::new("core.npy", cids, d, cd).unwrap(),
        pool,
        qs: QuerySet::new("gt.json", "queries", qids, pos).unwrap(),
    }
}

fn inputs(d: &Data) -> ScanInputs<'_> {
    ScanInputs {
        query_set: &d.qs,
        queries: &d.queries,
        core: &d.core,
        pool: d.pool.iter().map(|p| p as &dyn DescriptorSource).collect(),
    }
}

fn cfg(f: f64, results: Option<usize>) -> ScanConfig {
    let mut c = ScanConfig::new(f, 11);
    c.top_m = 37;
    c.results_k = results;
    c.model = "test-model".into();
    c.pool_size = Some(1_000_000);
    c.threads = Some(2);
    c
}

/// Bitwise equality of two outputs (summaries compared through their manifests and arrays on
/// disk as well as in memory).
fn assert_same(a: &ScanOutput, b: &ScanOutput, dir: &Path) {
    let mut sa = a.summary.clone();
    let mut sb = b.summary.clone();
    sa.tool_version.clear();
    sb.tool_version.clear();
    assert_eq!(sa, sb, "summaries differ");
    for (qa, qb) in sa.queries.iter().zip(&sb.queries) {
        for (pa, pb) in qa.positives.iter().zip(&qb.positives) {
            assert_eq!(pa.score.to_bits(), pb.score.to_bits());
        }
        for (ta, tb) in qa.top_scores.iter().zip(&qb.top_scores) {
            let ba: Vec<u32> = ta.iter().map(|x| x.to_bits()).collect();
            let bb: Vec<u32> = tb.iter().map(|x| x.to_bits()).collect();
            assert_eq!(ba, bb);
        }
    }
    let (da, db) = (dir.join("a"), dir.join("b"));
    a.summary.write(&da).unwrap();
    b.summary.write(&db).unwrap();
    for e in std::fs::read_dir(&da).unwrap() {
        let name = e.unwrap().file_name();
        assert_eq!(
            std::fs::read(da.join(&name)).unwrap(),
            std::fs::read(db.join(&name)).unwrap(),
            "file {name:?} differs"
        );
    }
    assert_eq!(a.results, b.results, "results differ");
    assert_eq!(a.renormalized_rows, b.renormalized_rows);
}

fn opts(dir: &Path, chunk_rows: usize, resume: bool) -> ResumeOptions {
    ResumeOptions {
        partial_dir: partial_dir_for(&dir.join("out")),
        chunk_rows,
        resume,
        store_last_chunk: true,
    }
}

#[test]
fn chunked_scan_equals_single_pass() {
    let d = data(1, 6, &[700, 0, 333, 470], 24);
    let t = tempfile::tempdir().unwrap();
    for (f, results) in [(1.0, Some(25)), (0.3, None), (0.3, Some(7))] {
        let c = cfg(f, results);
        let single = scan(&inputs(&d), &c, &NoProgress).unwrap();
        for chunk_rows in [97usize, 333, 10_000] {
            let o = opts(t.path(), chunk_rows, false);
            let (out, rep) = scan_resumable(&inputs(&d), &c, &o, &NoProgress).unwrap();
            assert_eq!(rep.reused, 0);
            assert_same(&single, &out, t.path());
            remove_partial(&o.partial_dir).unwrap();
        }
    }
}

#[test]
fn the_last_chunk_unsaved_gives_the_same_scan_and_resumes() {
    // What `ScanFiles::run` does: the last chunk goes straight to the output, so the partial
    // folder holds every chunk but the last; a resume from it scans only the last again.
    let d = data(7, 5, &[260, 140], 20);
    let c = cfg(0.5, Some(9));
    let t = tempfile::tempdir().unwrap();
    let single = scan(&inputs(&d), &c, &NoProgress).unwrap();
    let mut o = opts(t.path(), 100, false);
    o.store_last_chunk = false;
    let (out, rep) = scan_resumable(&inputs(&d), &c, &o, &NoProgress).unwrap();
    assert_eq!((rep.reused, rep.scanned), (0, 4));
    assert_same(&single, &out, t.path());
    let p = &o.partial_dir;
    assert!(p.join("chunk-000002").is_dir());
    assert!(!p.join("chunk-000003").exists(), "the last chunk was saved");
    o.resume = true;
    let (again, rep) = scan_resumable(&inputs(&d), &c, &o, &NoProgress).unwrap();
    assert_eq!((rep.reused, rep.scanned), (3, 1));
    assert_same(&single, &again, t.path());
    // An output that cannot be written keeps a folder with chunks for the resume.
    let e = output_failed(
        p,
        tailrank::Error::new(tailrank::ErrorKind::Io, "disk full"),
    );
    assert!(e.to_string().contains("disk full") && p.join("chunk-000000").is_dir());
    remove_partial(p).unwrap();

    // One chunk: nothing but the plan is written to the partial folder.
    let mut o = opts(t.path(), 10_000, false);
    o.store_last_chunk = false;
    let (out, rep) = scan_resumable(&inputs(&d), &c, &o, &NoProgress).unwrap();
    assert_eq!((rep.reused, rep.scanned), (0, 1));
    assert_same(&single, &out, t.path());
    assert!(!o.partial_dir.join("chunk-000000").exists());
    // ... and removes one with nothing to reuse, so that a plain rerun is not refused.
    output_failed(
        &o.partial_dir,
        tailrank::Error::new(tailrank::ErrorKind::Io, "disk full"),
    );
    assert!(!o.partial_dir.exists());
    let (_, rep) = scan_resumable(&inputs(&d), &c, &o, &NoProgress).unwrap();
    assert_eq!((rep.reused, rep.scanned), (0, 1));
}

#[test]
fn normalize_counts_query_and_core_rows_once() {
    let mut d = data(2, 4, &[300, 200], 16);
    // Scale some rows of every input off the unit sphere.
    for v in d.queries.data.iter_mut().take(16) {
        *v *= 2.0;
    }
    for v in d.core.data.iter_mut().take(32) {
        *v *= 0.5;
    }
    for v in d.pool[1].data.iter_mut().skip(16 * 10).take(16 * 3) {
        *v *= 3.0;
    }
    let mut c = cfg(1.0, Some(10));
    c.normalize = true;
    let single = scan(&inputs(&d), &c, &NoProgress).unwrap();
    assert_eq!(single.renormalized_rows, 1 + 2 + 3);
    let t = tempfile::tempdir().unwrap();
    let o = opts(t.path(), 90, false);
    let (out, _) = scan_resumable(&inputs(&d), &c, &o, &NoProgress).unwrap();
    assert_same(&single, &out, t.path());
}

#[test]
fn resume_reuses_chunks_rescans_lost_or_corrupted_ones() {
    let d = data(3, 5, &[500, 260], 20);
    let c = cfg(0.5, Some(12));
    let t = tempfile::tempdir().unwrap();
    let single = scan(&inputs(&d), &c, &NoProgress).unwrap();
    let o = opts(t.path(), 100, false);
    let (first, rep) = scan_resumable(&inputs(&d), &c, &o, &NoProgress).unwrap();
    assert_eq!((rep.reused, rep.scanned), (0, 8));
    assert_same(&single, &first, t.path());

    // Without --resume the existing folder is an error that says what to do.
    let e = scan_resumable(&inputs(&d), &c, &o, &NoProgress)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("rerun with `--resume`") && e.contains("delete"),
        "{e}"
    );

    // Simulate a kill: lose two chunks, leave a half-written temp folder and corrupt a third
    // chunk's array (its checksum no longer matches).
    let p = &o.partial_dir;
    std::fs::remove_dir_all(p.join("chunk-000002")).unwrap();
    std::fs::remove_dir_all(p.join("chunk-000007")).unwrap();
    std::fs::create_dir_all(p.join("chunk-000002.tmp-99999/summary")).unwrap();
    let arr = p.join("chunk-000004/summary/pos_pool_above.npy");
    let mut bytes = std::fs::read(&arr).unwrap();
    let n = bytes.len();
    bytes[n - 3] ^= 0x40;
    std::fs::write(&arr, bytes).unwrap();

    let o = opts(t.path(), 100, true);
    let (resumed, rep) = scan_resumable(&inputs(&d), &c, &o, &NoProgress).unwrap();
    assert_eq!((rep.reused, rep.scanned), (5, 3), "{rep:?}");
    assert_eq!(rep.discarded.len(), 2, "{rep:?}");
    assert!(
        rep.discarded.iter().any(|x| x.contains("checksum")),
        "{rep:?}"
    );
    assert_same(&single, &resumed, t.path());

    // Resuming a complete partial folder reuses everything.
    let (again, rep) = scan_resumable(&inputs(&d), &c, &o, &NoProgress).unwrap();
    assert_eq!((rep.reused, rep.scanned), (8, 0));
    assert_same(&single, &again, t.path());
}

#[test]
fn resume_refuses_other_inputs_or_options() {
    let d = data(4, 4, &[400], 16);
    let c = cfg(0.5, None);
    let t = tempfile::tempdir().unwrap();
    let o = opts(t.path(), 150, false);
    scan_resumable(&inputs(&d), &c, &o, &NoProgress).unwrap();
    let o = opts(t.path(), 150, true);
    let refuse = |c: &ScanConfig, d: &Data, o: &ResumeOptions, what: &str| {
        let e = scan_resumable(&inputs(d), c, o, &NoProgress)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("different {what}")) && e.contains(PLAN),
            "{what}: {e}"
        );
    };
    let mut c2 = c.clone();
    c2.seed = 12;
    refuse(&c2, &d, &o, "seed");
    let mut c2 = c.clone();
    c2.fraction = 0.25;
    c2.min_fraction = 0.25 / 16.0;
    refuse(&c2, &d, &o, "fraction");
    let mut c2 = c.clone();
    c2.top_m = 38;
    refuse(&c2, &d, &o, "top_m");
    let mut c2 = c.clone();
    c2.model = "other".into();
    refuse(&c2, &d, &o, "model");
    refuse(&c, &d, &opts(t.path(), 149, true), "chunk_rows");
    let mut d2 = data(4, 4, &[400], 16);
    d2.pool[0].data[5] = -d2.pool[0].data[5];
    refuse(&c, &d2, &o, "pool");
    let mut d2 = data(4, 4, &[400], 16);
    d2.qs.positives[0].pop();
    refuse(&c, &d2, &o, "ground_truth");
    let mut d2 = data(4, 4, &[400], 16);
    d2.queries.data.swap(0, 1);
    refuse(&c, &d2, &o, "queries");
    // The pool size N is applied after the merge: it may change on resume.
    let mut c2 = c.clone();
    c2.pool_size = Some(123_456);
    let (out, rep) = scan_resumable(&inputs(&d), &c2, &o, &NoProgress).unwrap();
    assert_eq!(rep.reused, 3);
    assert_eq!(out.summary.pool_size, Some(123_456));
}

/// Scan `d` in one go and in chunks of 100 rows (one thread, partial folder under `dir`): both
/// must fail with the same error, naming `row`. Returns the chunked run's options.
fn chunked_error_matches_single(d: &Data, row: usize, dir: &Path) -> ResumeOptions {
    let mut c = cfg(1.0, None);
    c.threads = Some(1);
    let single = scan(&inputs(d), &c, &NoProgress).unwrap_err().to_string();
    let o = opts(dir, 100, false);
    let chunked = scan_resumable(&inputs(d), &c, &o, &NoProgress)
        .unwrap_err()
        .to_string();
    assert!(single.contains(&format!("row {row} ")), "{single}");
    assert_eq!(single, chunked);
    o
}

#[test]
fn bad_row_error_names_the_file_row() {
    let mut d = data(5, 3, &[300], 8);
    let row = 257;
    d.pool[0].data[row * 8 + 3] = f32::NAN;
    let t = tempfile::tempdir().unwrap();
    let o = chunked_error_matches_single(&d, row, t.path());
    // Two chunks were finished: the partial folder stays for --resume.
    assert!(o.partial_dir.join("chunk-000001").is_dir());
    // A failure in the first chunk leaves no partial folder behind.
    let mut d = data(5, 3, &[300], 8);
    d.pool[0].data[5 * 8] = f32::INFINITY;
    let mut c = cfg(1.0, None);
    c.threads = Some(1);
    let t = tempfile::tempdir().unwrap();
    let o = opts(t.path(), 100, false);
    let e = scan_resumable(&inputs(&d), &c, &o, &NoProgress)
        .unwrap_err()
        .to_string();
    assert!(e.contains("row 5 ") && e.contains("non-finite"), "{e}");
    assert!(!o.partial_dir.exists());
}

#[test]
fn row_range_digest_covers_the_range() {
    let d = data(6, 2, &[50], 8);
    let src: &dyn DescriptorSource = &d.pool[0];
    let digest = src.digest();
    let a = RowRange::new(src, &digest, 0, 25).unwrap();
    let b = RowRange::new(src, &digest, 25, 50).unwrap();
    let a2 = RowRange::new(src, &digest, 0, 25).unwrap();
    assert_ne!(a.digest(), b.digest());
    assert_eq!(a.digest(), a2.digest());
    assert_eq!(b.ids().to_vec().unwrap(), src.ids().to_vec().unwrap()[25..]);
    let mut row = vec![0f32; 8];
    b.read_rows(3, &mut row).unwrap();
    assert_eq!(row, d.pool[0].data[28 * 8..29 * 8]);
    assert!(b.read_rows(25, &mut row).is_err());
    assert!(RowRange::new(src, &digest, 10, 51).is_err());
    // Chunks of two different ranges of one file never collide in merge's overlap check.
    let chunks = plan_chunks(&[src], &[digest], 7).unwrap();
    let mut digests: Vec<&str> = chunks
        .iter()
        .flat_map(|c| c.parts.iter().map(|p| p.digest.as_str()))
        .collect();
    digests.sort_unstable();
    digests.dedup();
    assert_eq!(digests.len(), chunks.len());
    assert_eq!(chunks.len(), 8);
    assert_eq!(chunks.last().unwrap().parts.last().unwrap().end, 50);
    // And merging the same chunk twice is refused as overlapping.
    let qs = &d.qs;
    let view = RowRange::new(src, &src.digest(), 0, 25).unwrap();
    let one = scan(
        &ScanInputs {
            query_set: qs,
            queries: &d.queries,
            core: &d.core,
            pool: vec![&view],
        },
        &cfg(1.0, None),
        &NoProgress,
    )
    .unwrap();
    let mut s = one.summary.clone();
    s.pool_size = None;
    let e = Summary::merge(&[s.clone(), s]).unwrap_err().to_string();
    assert!(e.contains("overlapping shards"), "{e}");
}

#[test]
fn small_files_share_a_chunk_and_errors_keep_file_rows() {
    let d = data(3, 2, &[10, 3, 0, 20], 8);
    let srcs: Vec<&dyn DescriptorSource> = d.pool.iter().map(|p| p as _).collect();
    let digests: Vec<String> = srcs.iter().map(|s| s.digest()).collect();
    let chunks = plan_chunks(&srcs, &digests, 16).unwrap();
    let layout: Vec<Vec<(usize, usize, usize)>> = chunks
        .iter()
        .map(|c| {
            c.parts
                .iter()
                .map(|p| (p.pool_index, p.start, p.end))
                .collect()
        })
        .collect();
    assert_eq!(
        layout,
        vec![
            vec![(0, 0, 10), (1, 0, 3), (2, 0, 0), (3, 0, 3)],
            vec![(3, 3, 19)],
            vec![(3, 19, 20)],
        ]
    );
    assert_eq!(chunks.iter().map(|c| c.rows()).sum::<usize>(), 33);

    // A bad row in the second file of a shared chunk is reported with its row in that file.
    let mut d = data(5, 3, &[50, 300], 8);
    let row = 157;
    d.pool[1].data[row * 8 + 2] = f32::NAN;
    let t = tempfile::tempdir().unwrap();
    chunked_error_matches_single(&d, row, t.path());
}

#[test]
fn pool_shards_must_be_disjoint() {
    // Issue #17: the same file twice, or an id in two shards, doubled N and changed mAP.
    let d = data(7, 3, &[120, 80], 8);
    let c = cfg(1.0, None);
    let twice = ScanInputs {
        pool: vec![&d.pool[0], &d.pool[1], &d.pool[0]],
        ..inputs(&d)
    };
    let e = scan(&twice, &c, &NoProgress).unwrap_err().to_string();
    assert!(
        e.contains("pool0.npy") && e.contains("given twice") && e.contains("inputs 1 and 3"),
        "{e}"
    );
    let t = tempfile::tempdir().unwrap();
    let e = scan_resumable(&twice, &c, &opts(t.path(), 50, false), &NoProgress)
        .unwrap_err()
        .to_string();
    assert!(e.contains("given twice"), "{e}");

    // One id in two shards (the rows differ): named with both files and rows.
    let mut ids = d.pool[1].ids.clone();
    ids[17] = d.pool[0].ids[42].clone();
    let clash = InMemoryDescriptors::new("pool1b.npy", ids, 8, d.pool[1].data.clone()).unwrap();
    let bad = ScanInputs {
        pool: vec![&d.pool[0], &clash],
        ..inputs(&d)
    };
    let e = scan(&bad, &c, &NoProgress).unwrap_err().to_string();
    assert!(
        e.starts_with("pool1b.npy: row 17 has id \"pool/0000042\"")
            && e.contains("row 42 of pool file pool0.npy"),
        "{e}"
    );
    // In a chunked scan the two rows fall in different chunks: still refused, before any
    // chunk is scanned.
    let t = tempfile::tempdir().unwrap();
    let o = opts(t.path(), 50, false);
    let e2 = scan_resumable(&bad, &c, &o, &NoProgress)
        .unwrap_err()
        .to_string();
    assert_eq!(e, e2);
    assert!(!o.partial_dir.exists());
    // A sampled scan refuses it too, whether or not the rows are sampled.
    let e3 = scan(&bad, &cfg(0.01, None), &NoProgress)
        .unwrap_err()
        .to_string();
    assert_eq!(e, e3);
}

/// Rewrite rows `rows` of the f32 `.npy` at `path` with the values of row `from` (unit norm).
fn rewrite_rows(path: &Path, dim: usize, total: usize, rows: &[usize], from: usize) {
    let mut b = std::fs::read(path).unwrap();
    let start = b.len() - total * dim * 4;
    let src = b[start + from * dim * 4..start + (from + 1) * dim * 4].to_vec();
    for &r in rows {
        b[start + r * dim * 4..start + (r + 1) * dim * 4].copy_from_slice(&src);
    }
    std::fs::write(path, b).unwrap();
}

#[test]
fn resume_rescans_chunks_whose_middle_rows_changed() {
    // Issue #17: the file digest reads only the first and last MiB, so a rewrite of middle
    // rows kept the digest and the stale chunks were reused. The pool file here is 3.2 MB.
    use tailrank::formats::descriptors::Dtype;
    use tailrank::formats::open_descriptors;
    let (dim, n) = (8usize, 100_000usize);
    let d = data(8, 4, &[n], dim);
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("pool.npy");
    tailrank::formats::npy::write_npy(&path, n, dim, &d.pool[0].data, Dtype::F32).unwrap();
    tailrank::formats::ids::write_ids(&t.path().join("pool.ids.txt"), &d.pool[0].ids).unwrap();
    let c = cfg(1.0, Some(9));
    let run = |resume: bool| {
        let src = open_descriptors(&path, None).unwrap();
        let inp = ScanInputs {
            pool: vec![src.as_ref()],
            ..inputs(&d)
        };
        let o = opts(t.path(), 25_000, resume);
        let r = scan_resumable(&inp, &c, &o, &NoProgress).unwrap();
        let digest = src.digest();
        (r, digest)
    };
    // The "killed" run: every chunk finished, then the last one lost.
    let ((_, rep), digest_before) = run(false);
    assert_eq!(rep.scanned, 4);
    let p = partial_dir_for(&t.path().join("out"));
    std::fs::remove_dir_all(p.join("chunk-000003")).unwrap();
    // Rows in the middle of chunk 1 (beyond the first MiB of data) rewritten with a copy of a
    // row that outranks a lot.
    let best = (0..n)
        .max_by(|&a, &b| {
            let dot = |r: usize| -> f32 {
                (0..dim)
                    .map(|k| d.pool[0].data[r * dim + k] * d.queries.data[k])
                    .sum()
            };
            dot(a).total_cmp(&dot(b))
        })
        .unwrap();
    rewrite_rows(&path, dim, n, &[40_000, 40_001, 47_777], best);
    let ((resumed, rep), digest_after) = run(true);
    assert_eq!(
        digest_before, digest_after,
        "the file digest does not see the rewrite"
    );
    assert_eq!((rep.reused, rep.scanned), (2, 2), "{rep:?}");
    assert!(
        rep.discarded
            .iter()
            .any(|x| x.starts_with("chunk-000001") && x.contains("rows 25000..50000 changed")),
        "{rep:?}"
    );
    // Identical to a fresh single pass over the rewritten file.
    let src = open_descriptors(&path, None).unwrap();
    let fresh = scan(
        &ScanInputs {
            pool: vec![src.as_ref()],
            ..inputs(&d)
        },
        &c,
        &NoProgress,
    )
    .unwrap();
    let u = tempfile::tempdir().unwrap();
    assert_same(&fresh, &resumed, u.path());
}

/// In-memory descriptors whose digest ignores the data (as a file digest that reads only the
/// ends of a large file): what a resume must not rely on.
struct BlindDigest(InMemoryDescriptors);

impl DescriptorSource for BlindDigest {
    fn info(&self) -> &tailrank::formats::SourceInfo {
        self.0.info()
    }
    fn read_rows(&self, start: usize, out: &mut [f32]) -> tailrank::Result<()> {
        self.0.read_rows(start, out)
    }
    fn digest(&self) -> String {
        "xxh3:0123456789abcdef".into()
    }
}

mod changed_inputs_props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]

        /// Rows rewritten between a killed run and its resume (and a chunk lost): the resume
        /// rescans exactly the chunks it cannot trust and equals a fresh single pass.
        #[test]
        fn resume_after_rewrites_equals_a_fresh_scan(
            seed in 0u64..500,
            rewrites in prop::collection::vec((0usize..260, 0usize..260), 0..4),
            lost in prop::option::of(0usize..4),
        ) {
            let d = data(seed, 3, &[160, 100], 8);
            let c = cfg(1.0, Some(6));
            let t = tempfile::tempdir().unwrap();
            let blind = |pool: &[InMemoryDescriptors]| -> Vec<BlindDigest> {
                pool.iter().map(|p| BlindDigest(p.clone())).collect()
            };
            let before = blind(&d.pool);
            fn inp<'a>(d: &'a Data, b: &'a [BlindDigest]) -> ScanInputs<'a> {
                ScanInputs {
                    pool: b.iter().map(|p| p as &dyn DescriptorSource).collect(),
                    ..inputs(d)
                }
            }
            let o = opts(t.path(), 70, false);
            let (_, rep) = scan_resumable(&inp(&d, &before), &c, &o, &NoProgress).unwrap();
            prop_assert_eq!(rep.scanned, 4);
            if let Some(l) = lost {
                std::fs::remove_dir_all(o.partial_dir.join(format!("chunk-{l:06}"))).unwrap();
            }
            // Copy row `from` over row `to` (global rows over both files).
            let mut pool = d.pool.clone();
            let mut touched = std::collections::BTreeSet::new();
            for &(to, from) in &rewrites {
                let at = |r: usize| if r < 160 { (0, r) } else { (1, r - 160) };
                let ((fs, fr), (ts, tr)) = (at(from), at(to));
                let v = pool[fs].data[fr * 8..(fr + 1) * 8].to_vec();
                if pool[ts].data[tr * 8..(tr + 1) * 8] != v[..] {
                    pool[ts].data[tr * 8..(tr + 1) * 8].copy_from_slice(&v);
                    touched.insert(to / 70);
                }
            }
            let after = blind(&pool);
            let o = opts(t.path(), 70, true);
            let (resumed, rep) = scan_resumable(&inp(&d, &after), &c, &o, &NoProgress).unwrap();
            let mut rescanned = touched.clone();
            rescanned.extend(lost);
            prop_assert_eq!(rep.scanned, rescanned.len(), "{:?}", rep);
            prop_assert_eq!(rep.reused, 4 - rescanned.len());
            let fresh = scan(&inp(&d, &after), &c, &NoProgress).unwrap();
            let u = tempfile::tempdir().unwrap();
            assert_same(&fresh, &resumed, u.path());
        }

        /// The pool given as shards with repeats (a shard twice, an id copied into another
        /// shard): the scan is refused iff some id is in two places, else it equals the scan
        /// of the shards in one file.
        #[test]
        fn scan_refuses_repeated_pool_ids(
            seed in 0u64..500,
            cuts in prop::collection::vec(0usize..200, 0..3),
            repeat in prop::option::of(0usize..4),
            copy in prop::option::of((0usize..200, 0usize..200)),
        ) {
            let d = data(seed, 3, &[200], 8);
            let whole = &d.pool[0];
            let mut cuts = cuts.clone();
            cuts.push(0);
            cuts.push(200);
            cuts.sort_unstable();
            cuts.dedup();
            let mut shards: Vec<InMemoryDescriptors> = cuts
                .windows(2)
                .enumerate()
                .map(|(i, w)| {
                    InMemoryDescriptors::new(
                        format!("shard{i}.npy"),
                        whole.ids[w[0]..w[1]].to_vec(),
                        8,
                        whole.data[w[0] * 8..w[1] * 8].to_vec(),
                    )
                    .unwrap()
                })
                .collect();
            let mut dup = false;
            if let Some((to, from)) = copy {
                let shard_of = |r: usize| cuts.windows(2).position(|w| r >= w[0] && r < w[1]).unwrap();
                let (st, sf) = (shard_of(to), shard_of(from));
                if st != sf {
                    let r = to - cuts[st];
                    let mut ids = shards[st].ids.clone();
                    ids[r] = whole.ids[from].clone();
                    shards[st] = InMemoryDescriptors::new(
                        format!("shard{st}.npy"), ids, 8, shards[st].data.clone()).unwrap();
                    dup = true;
                }
            }
            let mut pool: Vec<&dyn DescriptorSource> =
                shards.iter().map(|s| s as &dyn DescriptorSource).collect();
            if let Some(k) = repeat {
                let k = k % shards.len();
                if shards[k].rows() > 0 {
                    pool.push(&shards[k]);
                    dup = true;
                }
            }
            let c = cfg(1.0, None);
            let got = scan(&ScanInputs { pool, ..inputs(&d) }, &c, &NoProgress);
            match got {
                Ok(out) => {
                    prop_assert!(!dup);
                    let one = scan(&inputs(&d), &c, &NoProgress).unwrap();
                    prop_assert_eq!(&out.summary.queries, &one.summary.queries);
                    prop_assert_eq!(&out.summary.subset_sizes, &one.summary.subset_sizes);
                    prop_assert_eq!(&out.summary.pool_id_hashes, &one.summary.pool_id_hashes);
                }
                Err(e) => {
                    let e = e.to_string();
                    prop_assert!(dup, "{}", e);
                    prop_assert!(e.contains("given twice") || e.contains("must be disjoint"), "{}", e);
                }
            }
        }
    }
}

/// A chunk size below `MIN_CHUNK_ROWS` is raised to it (fewer, larger chunks; the same scan),
/// and the report says so.
#[test]
fn tiny_chunks_are_raised_to_the_minimum() {
    let d = data(3, 4, &[150, 60], 16);
    let c = cfg(1.0, Some(5));
    let t = tempfile::tempdir().unwrap();
    let single = scan(&inputs(&d), &c, &NoProgress).unwrap();
    let o = opts(t.path(), 1, false);
    let (out, rep) = scan_resumable(&inputs(&d), &c, &o, &NoProgress).unwrap();
    assert_eq!(
        rep.scanned,
        210usize.div_ceil(tailrank::scan::resume::MIN_CHUNK_ROWS)
    );
    assert_eq!(rep.chunk_rows_raised_from, Some(1));
    assert_same(&single, &out, t.path());
    remove_partial(&o.partial_dir).unwrap();
    let o = opts(t.path(), 100, false);
    let (_, rep) = scan_resumable(&inputs(&d), &c, &o, &NoProgress).unwrap();
    assert_eq!((rep.scanned, rep.chunk_rows_raised_from), (3, None));
}

/// A folder at the partial path that no scan left (no plan, a user's file) is refused, with or
/// without `--resume`, and what it holds is kept: a resume would have deleted it as leftovers.
#[test]
fn a_foreign_partial_folder_is_refused_not_emptied() {
    let d = data(4, 4, &[400], 16);
    let c = cfg(0.5, None);
    let t = tempfile::tempdir().unwrap();
    for resume in [false, true] {
        let o = opts(t.path(), 150, resume);
        std::fs::create_dir_all(&o.partial_dir).unwrap();
        std::fs::write(o.partial_dir.join("notes.txt"), b"mine").unwrap();
        let e = scan_resumable(&inputs(&d), &c, &o, &NoProgress)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("not the partial folder of an interrupted scan"),
            "{e}"
        );
        assert_eq!(
            std::fs::read(o.partial_dir.join("notes.txt")).unwrap(),
            b"mine"
        );
    }
}
