//! Id lists against Python: files written by Python (plain, CRLF, gzip, multi-member gzip,
//! non-ASCII) are read identically, and Python reads back what `write_ids` writes.

use tailrank_test_support::python as common;

use std::path::Path;
use tailrank::formats::ids::{check_unique, read_ids, write_ids};

fn ids() -> Vec<String> {
    let mut v: Vec<String> = (0..2500)
        .map(|i| format!("yfcc{:03}/{:09}", i % 13, i * 7919))
        .collect();
    v.push("instance_12/image é ü 東京.jpg".into());
    v.push("  leading and trailing spaces  ".into());
    v
}

#[test]
fn reads_what_python_writes() {
    let d = tempfile::tempdir().unwrap();
    let want = ids();
    let src = d.path().join("src.txt");
    std::fs::write(&src, want.join("\n")).unwrap();
    common::run_python(
        r#"
import sys, os, gzip
d = sys.argv[1]
ids = open(os.path.join(d, "src.txt"), encoding="utf-8").read().split("\n")
body = "".join(i + "\n" for i in ids)
open(os.path.join(d, "plain.txt"), "w", encoding="utf-8", newline="").write(body)
open(os.path.join(d, "crlf.txt"), "w", encoding="utf-8", newline="").write(body.replace("\n", "\r\n") + "\r\n\n")
open(os.path.join(d, "noeol.txt"), "w", encoding="utf-8", newline="").write(body.rstrip("\n"))
with gzip.open(os.path.join(d, "ids.txt.gz"), "wt", encoding="utf-8", newline="") as f:
    f.write(body)
# two gzip members concatenated (what `cat a.gz b.gz` gives)
half = len(ids) // 2
a = gzip.compress("".join(i + "\n" for i in ids[:half]).encode())
b = gzip.compress("".join(i + "\n" for i in ids[half:]).encode())
open(os.path.join(d, "multi.txt.gz"), "wb").write(a + b)
"#,
        &[d.path().to_str().unwrap()],
    );
    for name in [
        "plain.txt",
        "crlf.txt",
        "noeol.txt",
        "ids.txt.gz",
        "multi.txt.gz",
    ] {
        let got = read_ids(&d.path().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got, want, "{name}");
        check_unique(Path::new(name), &got).unwrap();
    }
}

#[test]
fn python_reads_what_write_ids_writes() {
    let d = tempfile::tempdir().unwrap();
    let want = ids();
    for name in ["out.txt", "out.txt.gz"] {
        let p = d.path().join(name);
        write_ids(&p, &want).unwrap();
        let out = common::run_python(
            r#"
import sys, gzip, hashlib
p = sys.argv[1]
raw = gzip.open(p, "rb").read() if p.endswith(".gz") else open(p, "rb").read()
ids = raw.decode("utf-8").split("\n")
assert ids[-1] == "", "file ends with a newline"
ids = ids[:-1]
print(len(ids), hashlib.sha256("\n".join(ids).encode()).hexdigest())
"#,
            &[p.to_str().unwrap()],
        );
        let joined = want.join("\n");
        let expect = common::run_python(
            "import sys, hashlib; print(hashlib.sha256(sys.argv[1].encode()).hexdigest())",
            &[&joined],
        );
        assert_eq!(
            out.trim(),
            format!("{} {}", want.len(), expect.trim()),
            "{name}"
        );
        assert_eq!(read_ids(&p).unwrap(), want);
    }
}

#[test]
fn bad_id_files() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("gap.txt");
    std::fs::write(&p, "a\nb\n\nc\n").unwrap();
    let e = read_ids(&p).unwrap_err().to_string();
    assert!(e.contains("gap.txt") && e.contains("line 3"), "{e}");

    let p = d.path().join("bin.txt");
    std::fs::write(&p, b"ok\n\xff\xfe\n").unwrap();
    let e = read_ids(&p).unwrap_err().to_string();
    assert!(
        e.contains("bin.txt") && e.contains("line 2") && e.contains("UTF-8"),
        "{e}"
    );

    // Not gzip despite the name; a truncated gzip stream.
    let p = d.path().join("fake.txt.gz");
    std::fs::write(&p, "plain text\n").unwrap();
    assert!(read_ids(&p)
        .unwrap_err()
        .to_string()
        .contains("fake.txt.gz"));
    let good = d.path().join("good.txt.gz");
    write_ids(&good, &ids()).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    let p = d.path().join("cut.txt.gz");
    std::fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
    assert!(read_ids(&p).unwrap_err().to_string().contains("cut.txt.gz"));

    let e = read_ids(&d.path().join("missing.txt"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing.txt"), "{e}");

    // Ids that cannot round-trip are refused and nothing is written.
    let p = d.path().join("w.txt");
    assert!(write_ids(&p, &["a".into(), "b\nc".into()]).is_err());
    assert!(write_ids(&p, &["a".into(), String::new()]).is_err());
    assert!(!p.exists());
}
