//! ILIAS-style HDF5 feature files written by h5py (the extractor's writer), read by tailrank's
//! pure-Rust reader: every value must equal what numpy reads through h5py (f16 → f32 exactly),
//! ids must match, and broken files must give errors naming the file.

use tailrank_test_support::python as common;

use std::path::Path;
use tailrank::formats::descriptors::{DescriptorSource, Dtype};
use tailrank::formats::hdf5::Hdf5Descriptors;
use tailrank::formats::open_descriptors;

/// Writes every test file in one interpreter run (h5py's import is the slow part). For each case
/// `NAME.h5` holds the data and `NAME.ref.f32` the values as numpy reads them, converted to f32.
const MAKE: &str = r#"
import sys, os, numpy as np, h5py
d = sys.argv[1]
def ids(n, tag):
    return [f"{tag}{i % 5:03d}/{i:08d}" for i in range(n)]
def case(name, rows, dim, dtype, index="vlen", libver=None, maxshape=False, ext=".h5", **kw):
    rng = np.random.default_rng(rows * 7 + dim)
    a = rng.standard_normal((rows, dim)).astype(np.float32)
    a = (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(dtype)
    if a.size >= 3:
        a.flat[:3] = [np.inf, -0.0, 1e-7]
    p = os.path.join(d, name + ext)
    with h5py.File(p, "w", **({"libver": libver} if libver else {})) as f:
        names = ids(rows, name[:4])
        if index == "ascii":  # what the ILIAS extractor's store_features writes, index first
            f.create_dataset("index", data=names, dtype=h5py.string_dtype(encoding="ascii"))
            f.create_dataset("features", data=a, dtype=a.dtype, **kw)
        elif maxshape:  # an incremental writer: resizable dataset, appended in blocks
            ds = f.create_dataset("features", shape=(0, dim), maxshape=(None, dim), dtype=dtype, **kw)
            for s in range(0, rows, 333):
                e = min(rows, s + 333)
                ds.resize((e, dim)); ds[s:e] = a[s:e]
        else:
            f.create_dataset("features", data=a, **kw)
        if index == "vlen":
            f.create_dataset("index", data=names, dtype=h5py.string_dtype())
        elif index == "fixed":
            f.create_dataset("index", data=np.array([n.encode() for n in names], dtype="S40"))
    with h5py.File(p, "r") as f:
        np.asarray(f["features"][:], dtype=np.float32).tofile(os.path.join(d, name + ".ref.f32"))
        got = [x.decode() if isinstance(x, bytes) else x for x in f["index"][:]]
        assert got == names
    with open(os.path.join(d, name + ".ids"), "w") as g:
        g.write("\n".join(names) + "\n")

case("f16_gzip0", 1000, 48, np.float16, chunks=(100, 48), compression="gzip", compression_opts=0)
case("f32_gzip4", 777, 40, np.float32, index="fixed", chunks=(37, 40), compression="gzip", compression_opts=4)
case("contig", 250, 33, np.float32)
case("f16_colchunks", 301, 48, np.float16, chunks=(64, 16), compression="gzip", shuffle=True)
case("resizable", 1000, 24, np.float16, maxshape=True, chunks=(128, 24), compression="gzip", compression_opts=1)
case("latest", 999, 24, np.float16, libver="latest", maxshape=True, chunks=(50, 24), compression="gzip")
case("latest_fixed", 500, 16, np.float32, libver="latest", chunks=(50, 16), compression="gzip")
# Exactly the extractor's store_features: ascii vlen index written first, then features with
# gzip level 0 and h5py's automatic chunk shape, in a `.hdf5` file.
case("ilias_store", 3000, 64, np.float16, index="ascii", ext=".hdf5", compression="gzip", compression_opts=0)
case("one_row", 1, 8, np.float16, chunks=(4, 8), compression="gzip", maxshape=True)
case("big_f2", 90, 8, ">f2", chunks=(16, 8), compression="gzip")
case("big_f4", 90, 8, ">f4")
"#;

fn read_f32_raw(p: &Path) -> Vec<f32> {
    std::fs::read(p)
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[test]
fn reads_h5py_files_like_numpy() {
    let d = tempfile::tempdir().unwrap();
    common::run_python(MAKE, &[d.path().to_str().unwrap()]);
    for (name, rows, dim, dtype) in [
        ("f16_gzip0", 1000, 48, Dtype::F16),
        ("f32_gzip4", 777, 40, Dtype::F32),
        ("contig", 250, 33, Dtype::F32),
        ("f16_colchunks", 301, 48, Dtype::F16),
        ("resizable", 1000, 24, Dtype::F16),
        ("latest", 999, 24, Dtype::F16),
        ("latest_fixed", 500, 16, Dtype::F32),
        ("ilias_store", 3000, 64, Dtype::F16),
        ("one_row", 1, 8, Dtype::F16),
        ("big_f2", 90, 8, Dtype::F16),
        ("big_f4", 90, 8, Dtype::F32),
    ] {
        let mut p = d.path().join(format!("{name}.h5"));
        if !p.exists() {
            p = d.path().join(format!("{name}.hdf5"));
        }
        let src = open_descriptors(&p, None).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            (src.rows(), src.dim(), src.dtype()),
            (rows, dim, dtype),
            "{name}"
        );
        let want_ids: Vec<String> = std::fs::read_to_string(d.path().join(format!("{name}.ids")))
            .unwrap()
            .lines()
            .map(String::from)
            .collect();
        assert_eq!(src.ids().to_vec().unwrap(), want_ids, "{name} ids");
        let reference = read_f32_raw(&d.path().join(format!("{name}.ref.f32")));
        // Block sizes that straddle chunk boundaries (29 vs chunks of 37/50/64/100/128 rows).
        for block in [29usize, rows] {
            let mut got = Vec::with_capacity(rows * dim);
            let mut start = 0;
            while start < rows {
                let n = block.min(rows - start);
                let mut buf = vec![f32::NAN; n * dim];
                src.read_rows(start, &mut buf)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                got.extend_from_slice(&buf);
                start += n;
            }
            assert_eq!(got.len(), reference.len(), "{name}");
            for (i, (g, r)) in got.iter().zip(&reference).enumerate() {
                assert_eq!(
                    g.to_bits(),
                    r.to_bits(),
                    "{name} block {block} value {i}: {g} vs {r}"
                );
            }
        }
        // Out of range: an error, not a panic.
        let mut buf = vec![0.0; 2 * dim];
        assert!(src.read_rows(rows - 1, &mut buf).is_err());
        assert!(src.digest().starts_with("xxh3:"));
    }
}

#[test]
fn reads_only_the_chunks_it_needs() {
    let d = tempfile::tempdir().unwrap();
    common::run_python(
        r#"
import sys, numpy as np, h5py
with h5py.File(sys.argv[1], "w") as f:
    a = np.arange(20000 * 64, dtype=np.float32).reshape(20000, 64)
    f.create_dataset("features", data=a, chunks=(100, 64), compression="gzip", compression_opts=1)
    f.create_dataset("index", data=[f"id{i}" for i in range(20000)], dtype=h5py.string_dtype())
"#,
        &[d.path().join("big.h5").to_str().unwrap()],
    );
    let src = Hdf5Descriptors::open(&d.path().join("big.h5")).unwrap();
    assert_eq!(src.chunk_rows(), Some(100));
    let (_, m0) = src.chunk_cache_counts();
    // Rows 10050..10150 straddle chunks 100 and 101 (rows 10000..10200), far from the first and
    // last MiB that the digest read at open.
    let mut buf = vec![0.0f32; 100 * 64];
    src.read_rows(10_050, &mut buf).unwrap();
    assert_eq!(buf[0], (10_050 * 64) as f32);
    assert_eq!(*buf.last().unwrap(), (10_150 * 64 - 1) as f32);
    let (_, m1) = src.chunk_cache_counts();
    assert_eq!(m1 - m0, 2, "exactly the two covering chunks are decoded");
    // The next block starts in a cached chunk: one new chunk only.
    src.read_rows(10_150, &mut buf).unwrap();
    let (_, m2) = src.chunk_cache_counts();
    assert_eq!(m2 - m1, 1);
    assert_eq!(buf[0], (10_150 * 64) as f32);
}

/// The error of opening `p` (and reading every row, for errors found lazily); it must name the
/// file.
fn open_err(p: &Path) -> String {
    let e = match Hdf5Descriptors::open(p) {
        Err(e) => e.to_string(),
        Ok(src) => {
            let mut buf = vec![0.0; src.rows() * src.dim()];
            src.read_rows(0, &mut buf)
                .expect_err("broken file read without error")
                .to_string()
        }
    };
    let file = p.file_name().unwrap().to_str().unwrap();
    eprintln!("{e}");
    assert!(e.contains(file), "error does not name the file: {e}");
    e
}

const IDS10: &str =
    "f.create_dataset('index', data=[f'i{k}' for k in range(10)], dtype=h5py.string_dtype())";

/// Broken files: (name, h5py code run with `f` open for writing, words the error must contain).
const BROKEN: &[(&str, &str, &[&str])] = &[
    (
        "nofeat",
        "f.create_dataset('feats', data=np.ones((10, 4), np.float32)); IDS10",
        &["no dataset 'features'", "feats"],
    ),
    (
        "noindex",
        "f.create_dataset('features', data=np.ones((10, 4), np.float32))",
        &["no dataset 'index'"],
    ),
    (
        "rank3",
        "f.create_dataset('features', data=np.ones((10, 2, 2), np.float32)); IDS10",
        &["rank 3"],
    ),
    (
        "f64",
        "f.create_dataset('features', data=np.ones((10, 4), np.float64)); IDS10",
        &["float64"],
    ),
    (
        "int8",
        "f.create_dataset('features', data=np.ones((10, 4), np.int8)); IDS10",
        &["int8"],
    ),
    (
        "count",
        "f.create_dataset('features', data=np.ones((11, 4), np.float16)); IDS10",
        &["10 ids", "11 rows"],
    ),
    (
        "dup",
        "f.create_dataset('features', data=np.ones((3, 4), np.float16)); f.create_dataset('index', data=np.array([b'a', b'b', b'a']))",
        &["\"a\"", "rows 0 and 2"],
    ),
    (
        "numidx",
        "f.create_dataset('features', data=np.ones((3, 4), np.float16)); f.create_dataset('index', data=np.arange(3))",
        &["'index'", "int64"],
    ),
    (
        "idx2d",
        "f.create_dataset('features', data=np.ones((4, 4), np.float16)); f.create_dataset('index', data=np.array([[b'a', b'b'], [b'c', b'd']]))",
        &["'index' has rank 2"],
    ),
    // An id that is no UTF-8 text: named as such, not as a corrupt file.
    (
        "badutf8",
        "f.create_dataset('features', data=np.ones((2, 4), np.float16)); f.create_dataset('index', data=np.array([b'a', b'd\\xff'], dtype='S2'))",
        &["not valid UTF-8"],
    ),
    // A 2-byte float that is not IEEE half (bfloat16 layout), via h5py's low-level API.
    (
        "bf16",
        "t = h5py.h5t.IEEE_F16LE.copy(); t.set_fields(15, 7, 8, 0, 7); t.set_ebias(127); h5py.h5d.create(f.id, b'features', t, h5py.h5s.create_simple((3, 4))); f.create_dataset('index', data=[b'a', b'b', b'c'])",
        &["not IEEE", "bias 127"],
    ),
];

#[test]
fn broken_files_give_clear_errors() {
    let d = tempfile::tempdir().unwrap();
    let mut code = String::from("import sys, os, numpy as np, h5py\nd = sys.argv[1]\n");
    for (name, setup, _) in BROKEN {
        code += &format!(
            "with h5py.File(os.path.join(d, '{name}.h5'), 'w') as f:\n    {}\n",
            setup.replace("IDS10", IDS10)
        );
    }
    common::run_python(&code, &[d.path().to_str().unwrap()]);
    for (name, _, words) in BROKEN {
        let e = open_err(&d.path().join(format!("{name}.h5")));
        for w in *words {
            assert!(e.contains(w), "{name}: {e:?} lacks {w:?}");
        }
    }
    // Not HDF5 at all, and empty.
    let p = d.path().join("text.h5");
    std::fs::write(&p, "just some text, no superblock here").unwrap();
    assert!(open_err(&p).contains("not a valid HDF5 file"));
    let p = d.path().join("empty.h5");
    std::fs::write(&p, "").unwrap();
    assert!(open_err(&p).contains("empty"));
}

#[test]
fn truncated_copies_give_errors() {
    let d = tempfile::tempdir().unwrap();
    let full = d.path().join("full.h5");
    common::run_python(
        r#"
import sys, numpy as np, h5py
with h5py.File(sys.argv[1], "w") as f:
    rng = np.random.default_rng(3)
    f.create_dataset("features", data=rng.standard_normal((2000, 32)).astype(np.float16),
                     chunks=(100, 32), compression="gzip", compression_opts=0)
    f.create_dataset("index", data=[f"id{i}" for i in range(2000)], dtype=h5py.string_dtype())
"#,
        &[full.to_str().unwrap()],
    );
    let bytes = std::fs::read(&full).unwrap();
    for cut in [
        bytes.len() - 1,
        bytes.len() * 3 / 4,
        bytes.len() / 2,
        4000,
        100,
    ] {
        let p = d.path().join(format!("cut{cut}.h5"));
        std::fs::write(&p, &bytes[..cut]).unwrap();
        let e = open_err(&p);
        assert!(!e.is_empty());
    }
    // A corrupted chunk (bytes flipped inside the data region) is caught when read, or the
    // values differ; it must never panic.
    let mut bad = bytes.clone();
    let mid = bad.len() / 2;
    bad[mid..mid + 64].iter_mut().for_each(|b| *b = !*b);
    let p = d.path().join("flipped.h5");
    std::fs::write(&p, &bad).unwrap();
    if let Ok(src) = Hdf5Descriptors::open(&p) {
        let mut buf = vec![0.0; src.rows() * src.dim()];
        let _ = src.read_rows(0, &mut buf);
    }
}

#[test]
fn throughput_sanity() {
    // Not a benchmark (no timing assertion): prints the decode rate of an f16, gzip level 0 file
    // with h5py's automatic chunk shape (the ILIAS extractor's setting) read in 1024-row blocks.
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.h5");
    let chunks = common::run_python(
        r#"
import sys, numpy as np, h5py
with h5py.File(sys.argv[1], "w") as f:
    a = np.random.default_rng(1).standard_normal((20000, 768)).astype(np.float16)
    f.create_dataset("index", data=[f"id{i}" for i in range(20000)], dtype=h5py.string_dtype(encoding="ascii"))
    ds = f.create_dataset("features", data=a, compression="gzip", compression_opts=0)
    print(*ds.chunks)
"#,
        &[p.to_str().unwrap()],
    );
    let src = Hdf5Descriptors::open(&p).unwrap();
    let mut buf = vec![0.0f32; 1024 * 768];
    let t = std::time::Instant::now();
    let mut start = 0;
    while start < src.rows() {
        let n = 1024.min(src.rows() - start);
        src.read_rows(start, &mut buf[..n * 768]).unwrap();
        start += n;
    }
    let s = t.elapsed().as_secs_f64();
    eprintln!(
        "hdf5 f16 gzip-0 read (chunks {}): 20000 rows × 768 in {s:.3} s ({:.0} MB/s of f16)",
        chunks.trim(),
        20000.0 * 768.0 * 2.0 / s / 1e6
    );
}

#[test]
fn corrupted_bytes_never_panic() {
    // Flip single bytes all over a small file (metadata included): opening and reading must end
    // in Ok or Err, never a panic.
    let d = tempfile::tempdir().unwrap();
    let full = d.path().join("small.h5");
    common::run_python(
        r#"
import sys, numpy as np, h5py
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("index", data=[f"id{i}" for i in range(64)], dtype=h5py.string_dtype(encoding="ascii"))
    f.create_dataset("features", data=np.ones((64, 8), np.float16), chunks=(16, 8), compression="gzip")
"#,
        &[full.to_str().unwrap()],
    );
    let bytes = std::fs::read(&full).unwrap();
    let p = d.path().join("mutant.h5");
    let mut x: u64 = 0x2545F4914F6CDD1D;
    let (mut ok, mut err) = (0, 0);
    for pos in (0..bytes.len()).step_by(bytes.len() / 300 + 1) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut m = bytes.clone();
        m[pos] ^= (x as u8) | 1;
        std::fs::write(&p, &m).unwrap();
        let r = std::panic::catch_unwind(|| match Hdf5Descriptors::open(&p) {
            Ok(src) => {
                let mut buf = vec![0.0; src.rows() * src.dim()];
                src.read_rows(0, &mut buf).map(|_| ())
            }
            Err(e) => Err(e),
        });
        match r {
            Ok(Ok(())) => ok += 1,
            Ok(Err(_)) => err += 1,
            Err(_) => panic!("panic on a byte flipped at offset {pos}"),
        }
    }
    eprintln!("corrupted copies: {ok} read, {err} refused");
}
