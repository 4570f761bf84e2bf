use super::header::{parse_dict, Value};
use super::*;

#[test]
fn header_roundtrip() {
    for dtype in [Dtype::F16, Dtype::F32] {
        let b = npy_header_bytes(12345, 768, dtype);
        assert_eq!(b.len() % 64, 0);
        let h = parse_header(Path::new("x.npy"), &b).unwrap();
        assert_eq!(
            (h.rows, h.dim, h.dtype, h.data_offset),
            (12345, 768, dtype, b.len())
        );
    }
}

#[test]
fn dict_variants() {
    let d = parse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 4L), }  ").unwrap();
    assert_eq!(d[2].1, Value::Tuple(vec![3, 4]));
    let d = parse_dict("{\"shape\": (7,), \"descr\": [('a', '<f4')]}").unwrap();
    assert_eq!(d[0].1, Value::Tuple(vec![7]));
    assert!(matches!(d[1].1, Value::Other(_)));
}

/// A v1/v2 `.npy` header with the dict `dict` (no data).
fn header_with(dict: &str) -> Vec<u8> {
    let mut b = b"\x93NUMPY\x02\x00".to_vec();
    b.extend_from_slice(&(dict.len() as u32 + 1).to_le_bytes());
    b.extend_from_slice(dict.as_bytes());
    b.push(b'\n');
    b
}

#[test]
fn structured_dtype_is_named_as_text() {
    // Regression: the message printed the parser's debug form `Other("[('a', '<f4')…")`.
    let b = header_with(
        "{'descr': [('a', '<f4'), ('b', '<f4')], 'fortran_order': False, 'shape': (3,), }",
    );
    let e = parse_header(Path::new("s.npy"), &b)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "s.npy: unsupported dtype \"[('a', '<f4'), ('b', '<f4')]\" (a structured \
         dtype): only plain '<f2' (little-endian float16) and '<f4' (little-endian float32) \
         arrays are accepted"
    );
    assert!(!e.contains("Other"), "{e}");
    let b = header_with("{'descr': 7, 'fortran_order': False, 'shape': (3, 2), }");
    let e = parse_header(Path::new("s.npy"), &b)
        .unwrap_err()
        .to_string();
    assert!(e.contains("dtype \"7\" (not a dtype string)"), "{e}");
}

#[test]
fn long_headers_are_not_echoed_whole() {
    // Regression: a 120 KB malformed header came back whole in the error line.
    let deep = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), 'x': {}",
        "[".repeat(120_000)
    );
    let e = parse_header(Path::new("d.npy"), &header_with(&deep))
        .unwrap_err()
        .to_string();
    assert!(e.len() < 400, "{} bytes: {}", e.len(), &e[..300]);
    assert!(e.contains(&format!("…({} bytes)", deep.len())), "{e}");
    // A structured dtype nested 100,000 levels deep: parsed without recursion, echo capped.
    let nested = format!(
        "{{'descr': {}'<f4'{}, 'fortran_order': False, 'shape': (2, 2), }}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let e = parse_header(Path::new("d.npy"), &header_with(&nested))
        .unwrap_err()
        .to_string();
    assert!(e.len() < 400 && e.contains("…(200005 bytes)"), "{e}");
    // 40,000 dimensions.
    let dims = vec!["1"; 40_000].join(", ");
    let many = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({dims}), }}");
    let e = parse_header(Path::new("d.npy"), &header_with(&many))
        .unwrap_err()
        .to_string();
    assert!(e.len() < 400 && e.contains("…(40000 dimensions)"), "{e}");
}

/// A stem that is not UTF-8 keeps its bytes in the sibling id file's name (they were replaced
/// by U+FFFD, so `p\xff.ids.txt` next to `p\xff.npy` was never found).
#[cfg(unix)]
#[test]
fn sibling_id_files_keep_a_non_utf8_stem() {
    use std::os::unix::ffi::OsStrExt;
    let p = Path::new(std::ffi::OsStr::from_bytes(b"/d/p\xff.npy"));
    let c = sibling_id_candidates(p);
    assert_eq!(c[0].as_os_str().as_bytes(), b"/d/p\xff.ids.txt");
    assert_eq!(c[3].as_os_str().as_bytes(), b"/d/p\xff_ids.txt.gz");
}
