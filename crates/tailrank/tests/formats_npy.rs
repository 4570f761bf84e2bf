//! `.npy` descriptors against numpy: numpy writes the files (f16 and f32, header v1/v2/v3) and the
//! reference values (as raw f32), tailrank must read every value bit for bit; numpy must read what
//! `write_npy` writes.

use tailrank_test_support::python as common;

use std::path::Path;
use tailrank::formats::descriptors::{DescriptorSource, Dtype};
use tailrank::formats::ids::write_ids;
use tailrank::formats::npy::{write_npy, NpyDescriptors};
use tailrank::formats::open_descriptors;

fn read_f32_raw(p: &Path) -> Vec<f32> {
    std::fs::read(p)
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn ids(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("yfcc{:03}/{:09}", i % 7, i))
        .collect()
}

/// For each group of 5 arguments (out, rows, dim, dtype, version) numpy writes `out.npy` and
/// `out.ref.f32` (the same values as f32).
const WRITE: &str = r#"
import sys, numpy as np
for j in range(1, len(sys.argv), 5):
  out, rows, dim, dtype, ver = sys.argv[j], int(sys.argv[j+1]), int(sys.argv[j+2]), sys.argv[j+3], sys.argv[j+4]
  rng = np.random.default_rng(rows * 1000 + dim)
  a = rng.standard_normal((rows, dim)).astype(np.float32)
  a.flat[:min(3, a.size)] = [np.inf, -0.0, 1e-7][:a.size]  # inf, signed zero, f16 subnormal
  a = a.astype(dtype)
  with open(out + ".npy", "wb") as f:
      np.lib.format.write_array(f, a, version=None if ver == "auto" else tuple(map(int, ver.split("."))))
  a.astype(np.float32).tofile(out + ".ref.f32")
"#;

#[test]
fn reads_every_value_like_numpy() {
    let d = tempfile::tempdir().unwrap();
    let cases = [
        ("float16", "auto", 1001, 37, Dtype::F16),
        ("float32", "auto", 513, 64, Dtype::F32),
        ("float16", "2.0", 300, 33, Dtype::F16),
        ("float32", "3.0", 17, 5, Dtype::F32),
        ("<f2", "1.0", 1, 1, Dtype::F16),
    ];
    let tag = |dtype: &str, ver: &str, rows: usize| {
        format!(
            "m_{}_{}_{rows}",
            dtype.replace('<', ""),
            ver.replace('.', "")
        )
    };
    let mut args = Vec::new();
    for (dtype, ver, rows, dim, _) in cases {
        let base = d.path().join(tag(dtype, ver, rows));
        args.extend([
            base.to_str().unwrap().to_string(),
            rows.to_string(),
            dim.to_string(),
            dtype.to_string(),
            ver.to_string(),
        ]);
    }
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    common::run_python(WRITE, &args);
    for (dtype, ver, rows, dim, want) in cases {
        let tag = tag(dtype, ver, rows);
        let base = d.path().join(&tag);
        let npy = base.with_extension("npy");
        write_ids(&d.path().join(format!("{tag}.ids.txt")), &ids(rows)).unwrap();
        let src = open_descriptors(&npy, None).unwrap();
        assert_eq!((src.rows(), src.dim(), src.dtype()), (rows, dim, want));
        assert_eq!(src.ids().to_vec().unwrap(), ids(rows));
        let reference = read_f32_raw(&base.with_extension("ref.f32"));
        // Blocks of an awkward size, so the last block is partial.
        let block = 7;
        let mut got = Vec::new();
        let mut start = 0;
        while start < rows {
            let n = block.min(rows - start);
            let mut buf = vec![f32::NAN; n * dim];
            src.read_rows(start, &mut buf).unwrap();
            got.extend_from_slice(&buf);
            start += n;
        }
        assert_eq!(got.len(), reference.len());
        for (i, (g, r)) in got.iter().zip(&reference).enumerate() {
            assert_eq!(g.to_bits(), r.to_bits(), "{dtype} value {i}: {g} vs {r}");
        }
        // Out-of-range request is an error, not a panic.
        let mut buf = vec![0.0; dim * 2];
        let e = src.read_rows(rows - 1, &mut buf).unwrap_err().to_string();
        assert!(e.contains("requested"), "{e}");
    }
}

#[test]
fn numpy_reads_what_write_npy_writes() {
    let d = tempfile::tempdir().unwrap();
    let (rows, dim) = (211, 19);
    let mut x: u64 = 0x9E3779B97F4A7C15;
    let data: Vec<f32> = (0..rows * dim)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 11) as f64 / (1u64 << 53) as f64 * 8.0 - 4.0) as f32
        })
        .collect();
    let raw = d.path().join("in.f32");
    std::fs::write(
        &raw,
        data.iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    for dtype in [Dtype::F16, Dtype::F32] {
        let p = d.path().join(format!("w_{dtype:?}.npy"));
        write_npy(&p, rows, dim, &data, dtype).unwrap();
        // numpy: load, check dtype/shape/C order, and compare with its own f32 → dtype rounding.
        let out = common::run_python(
            r#"
import sys, numpy as np
a = np.load(sys.argv[1], mmap_mode="r")
src = np.fromfile(sys.argv[2], dtype="<f4").reshape(int(sys.argv[3]), int(sys.argv[4]))
want = src.astype(a.dtype)
assert a.flags.c_contiguous and a.shape == src.shape, (a.shape, a.flags)
print(a.dtype.str, int((a.view(np.uint8) != want.view(np.uint8)).sum()))
"#,
            &[
                p.to_str().unwrap(),
                raw.to_str().unwrap(),
                &rows.to_string(),
                &dim.to_string(),
            ],
        );
        let want = if dtype == Dtype::F16 {
            "<f2 0"
        } else {
            "<f4 0"
        };
        assert_eq!(out.trim(), want);
        // And tailrank reads it back (f32 exactly; f16 equals half's rounding).
        let idp = d.path().join(format!("w_{dtype:?}_ids.txt"));
        write_ids(&idp, &ids(rows)).unwrap();
        let src = NpyDescriptors::open(&p, None).unwrap();
        let mut all = vec![0.0; rows * dim];
        src.read_rows(0, &mut all).unwrap();
        for (a, b) in all.iter().zip(&data) {
            let b = if dtype == Dtype::F16 {
                half::f16::from_f32(*b).to_f32()
            } else {
                *b
            };
            assert_eq!(a.to_bits(), b.to_bits());
        }
    }
    // Shape mismatch is refused.
    assert!(write_npy(&d.path().join("bad.npy"), 3, 3, &[0.0; 8], Dtype::F32).is_err());
}

/// numpy writes every broken file in one run; each case is (name, python code using `p`, id count,
/// words the error must contain).
const BAD: &[(&str, &str, usize, &[&str])] = &[
    (
        "trunc",
        "np.save(p, np.ones((10, 4), np.float32)); b = open(p,'rb').read(); open(p,'wb').write(b[:-6])",
        10,
        &["truncated", "rows 9.."],
    ),
    ("rank3", "np.save(p, np.ones((2, 3, 4), np.float32))", 2, &["3 dimensions"]),
    ("rank1", "np.save(p, np.ones(5, np.float32))", 5, &["1 dimensions"]),
    (
        "fortran",
        "np.save(p, np.asfortranarray(np.ones((4, 3), np.float32)))",
        4,
        &["Fortran"],
    ),
    ("f8", "np.save(p, np.ones((4, 3), np.float64))", 4, &["'<f8'"]),
    ("bigend", "np.save(p, np.ones((4, 3), '>f4'))", 4, &["'>f4'"]),
    ("int8", "np.save(p, np.ones((4, 3), np.int8))", 4, &["'|i1'"]),
    (
        "struct",
        "np.save(p, np.zeros(4, dtype=[('a', '<f4'), ('b', '<f4')]))",
        4,
        &["unsupported dtype"],
    ),
    ("empty", "open(p, 'wb').close()", 0, &["empty file"]),
    ("text", "open(p, 'wb').write(b'hello world, not numpy')", 0, &["not an .npy"]),
    (
        "count",
        "np.save(p, np.ones((4, 3), np.float16))",
        5,
        &["ids.txt", "5 ids", "4 rows"],
    ),
    (
        "longer",
        "np.save(p, np.ones((4, 3), np.float16)); b = open(p,'rb').read(); open(p,'wb').write(b + b'xx')",
        4,
        &["longer"],
    ),
    (
        "hdrcut",
        "np.save(p, np.ones((4, 3), np.float16)); b = open(p,'rb').read(); open(p,'wb').write(b[:40])",
        4,
        &["truncated .npy header"],
    ),
];

#[test]
fn bad_files_give_clear_errors() {
    let d = tempfile::tempdir().unwrap();
    let mut code = String::from("import sys, os, numpy as np\nd = sys.argv[1]\n");
    for (name, setup, _, _) in BAD {
        code += &format!("p = os.path.join(d, '{name}.npy')\n{setup}\n");
    }
    common::run_python(&code, &[d.path().to_str().unwrap()]);
    for (name, _, n_ids, words) in BAD {
        let p = d.path().join(format!("{name}.npy"));
        let idp = d.path().join(format!("{name}.ids.txt"));
        write_ids(&idp, &ids(*n_ids)).unwrap();
        let e = NpyDescriptors::open(&p, Some(&idp))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("{name}.")),
            "{name}: error names no file: {e}"
        );
        for w in *words {
            assert!(e.contains(w), "{name}: {e:?} lacks {w:?}");
        }
    }
}

#[test]
fn file_truncated_after_open_is_an_error_not_a_fault() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("shrinks.npy");
    let (rows, dim) = (5000, 64);
    write_npy(&p, rows, dim, &vec![0.125; rows * dim], Dtype::F16).unwrap();
    write_ids(&d.path().join("shrinks.ids.txt"), &ids(rows)).unwrap();
    let src = NpyDescriptors::open(&p, None).unwrap();
    let mut out = vec![0f32; 10 * dim];
    src.read_rows(4990, &mut out).unwrap();
    // Another process cuts the file to its first 1000 rows (a whole page count beyond them
    // is gone, so reading the mapping there would fault).
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.set_len((128 + 1000 * dim * 2) as u64).unwrap();
    drop(f);
    let e = src.read_rows(4990, &mut out).unwrap_err().to_string();
    assert!(
        e.contains("shrinks.npy") && e.contains("truncated") && e.contains("rows 4990..5000"),
        "{e}"
    );
}

#[test]
fn duplicate_ids_and_missing_id_file() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("dup.npy");
    write_npy(&p, 4, 2, &[0.5; 8], Dtype::F16).unwrap();
    let idp = d.path().join("dup_ids.txt");
    std::fs::write(&idp, "a\nb\nc\nb\n").unwrap();
    let e = NpyDescriptors::open(&p, None).unwrap_err().to_string();
    assert!(
        e.contains("dup_ids.txt") && e.contains("\"b\"") && e.contains("lines 2 and 4"),
        "{e}"
    );
    std::fs::remove_file(&idp).unwrap();
    let e = NpyDescriptors::open(&p, None).unwrap_err().to_string();
    assert!(e.contains("no id file") && e.contains("dup.ids.txt"), "{e}");
    // gzip sibling is accepted
    write_ids(&d.path().join("dup.ids.txt.gz"), &ids(4)).unwrap();
    assert_eq!(
        NpyDescriptors::open(&p, None)
            .unwrap()
            .ids()
            .to_vec()
            .unwrap(),
        ids(4)
    );
}

#[test]
fn digest_is_content_sensitive() {
    let d = tempfile::tempdir().unwrap();
    let (rows, dim) = (9000, 64); // > 2 MiB of f32 data: first/last MiB path
    let data: Vec<f32> = (0..rows * dim)
        .map(|i| (i % 1000) as f32 / 1000.0)
        .collect();
    let idp = d.path().join("ids.txt");
    write_ids(&idp, &ids(rows)).unwrap();
    let p = d.path().join("a.npy");
    let digest = |data: &[f32], ids_file: &Path| {
        write_npy(&p, rows, dim, data, Dtype::F32).unwrap();
        NpyDescriptors::open(&p, Some(ids_file)).unwrap().digest()
    };
    let d0 = digest(&data, &idp);
    assert!(d0.starts_with("xxh3:") && d0.len() == 21, "{d0}");
    assert_eq!(d0, digest(&data, &idp), "deterministic");
    let mut last = data.clone();
    *last.last_mut().unwrap() += 1.0;
    assert_ne!(d0, digest(&last, &idp), "last value changes digest");
    let mut first = data.clone();
    first[0] = 7.0;
    assert_ne!(d0, digest(&first, &idp), "first value changes digest");
    let mut other_ids = ids(rows);
    other_ids.swap(0, 1);
    let idp2 = d.path().join("ids2.txt");
    write_ids(&idp2, &other_ids).unwrap();
    assert_ne!(d0, digest(&data, &idp2), "id order changes digest");
}

#[test]
fn throughput_sanity() {
    // Not a benchmark (no timing assertion): reads a 20k × 768 f16 file in 1024-row blocks and
    // prints the rate, so a gross regression (e.g. per-element slow path) is visible in the log.
    let d = tempfile::tempdir().unwrap();
    let (rows, dim) = (20_000, 768);
    let data: Vec<f32> = (0..rows * dim)
        .map(|i| ((i * 31) % 997) as f32 / 997.0)
        .collect();
    let p = d.path().join("t.npy");
    write_npy(&p, rows, dim, &data, Dtype::F16).unwrap();
    write_ids(&d.path().join("t.ids.txt"), &ids(rows)).unwrap();
    let src = NpyDescriptors::open(&p, None).unwrap();
    let mut buf = vec![0.0f32; 1024 * dim];
    // Timed pass: block reads only.
    let t = std::time::Instant::now();
    let mut start = 0;
    while start < rows {
        let n = 1024.min(rows - start);
        src.read_rows(start, &mut buf[..n * dim]).unwrap();
        start += n;
    }
    let s = t.elapsed().as_secs_f64();
    // Check pass: every value equals half's rounding of the input.
    let mut start = 0;
    while start < rows {
        let n = 1024.min(rows - start);
        src.read_rows(start, &mut buf[..n * dim]).unwrap();
        for (g, w) in buf[..n * dim].iter().zip(&data[start * dim..]) {
            assert_eq!(*g, half::f16::from_f32(*w).to_f32());
        }
        start += n;
    }
    eprintln!(
        "npy f16 read: {rows} rows × {dim} in {s:.3} s ({:.0} MB/s of f16)",
        (rows * dim * 2) as f64 / s / 1e6
    );
}

#[test]
fn zero_rows_and_numpy_reads_empty() {
    // An empty shard is legal: 0 rows, an empty id file.
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("empty_shard.npy");
    write_npy(&p, 0, 16, &[], Dtype::F16).unwrap();
    write_ids(&d.path().join("empty_shard.ids.txt"), &[]).unwrap();
    let src = NpyDescriptors::open(&p, None).unwrap();
    assert_eq!((src.rows(), src.dim()), (0, 16));
    src.read_rows(0, &mut []).unwrap();
    let out = common::run_python(
        "import sys, numpy as np; a = np.load(sys.argv[1]); print(a.shape, a.dtype)",
        &[p.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "(0, 16) float16");
    // Dimension 0 is refused on both sides.
    assert!(write_npy(&p, 0, 0, &[], Dtype::F32).is_err());
}
