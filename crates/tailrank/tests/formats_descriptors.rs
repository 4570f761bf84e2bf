//! `open_descriptors` dispatch and the in-memory helpers: the same matrix stored as `.npy` (f32),
//! HDF5 (f32, written by h5py) and in memory reads back identically.

use tailrank_test_support::python as common;

use tailrank::formats::descriptors::{
    blocks, read_all, DescriptorSource, Dtype, InMemoryDescriptors,
};
use tailrank::formats::ids::write_ids;
use tailrank::formats::npy::write_npy;
use tailrank::formats::open_descriptors;

#[test]
fn same_matrix_through_every_format() {
    let d = tempfile::tempdir().unwrap();
    let (rows, dim) = (300, 12);
    let data: Vec<f32> = (0..rows * dim).map(|i| (i as f32 * 0.37).sin()).collect();
    let ids: Vec<String> = (0..rows).map(|i| format!("img/{i:05}")).collect();
    let npy = d.path().join("m.npy");
    write_npy(&npy, rows, dim, &data, Dtype::F32).unwrap();
    let idf = d.path().join("list.txt");
    write_ids(&idf, &ids).unwrap();
    let h5 = d.path().join("m.h5");
    common::run_python(
        r#"
import sys, numpy as np, h5py
a = np.load(sys.argv[1])
ids = open(sys.argv[2]).read().split()
with h5py.File(sys.argv[3], "w") as f:
    f.create_dataset("features", data=a, chunks=(64, a.shape[1]), compression="gzip")
    f.create_dataset("index", data=ids, dtype=h5py.string_dtype())
"#,
        &[
            npy.to_str().unwrap(),
            idf.to_str().unwrap(),
            h5.to_str().unwrap(),
        ],
    );
    let mem = InMemoryDescriptors::new("mem", ids.clone(), dim, data.clone()).unwrap();
    let sources: Vec<Box<dyn DescriptorSource>> = vec![
        open_descriptors(&npy, Some(&idf)).unwrap(),
        open_descriptors(&h5, None).unwrap(),
        open_descriptors(&h5, Some(&idf)).unwrap(),
        Box::new(mem),
    ];
    for s in &sources {
        assert_eq!((s.rows(), s.dim()), (rows, dim));
        assert_eq!(s.ids().to_vec().unwrap(), ids);
        assert_eq!(
            read_all(s.as_ref()).unwrap(),
            data,
            "{}",
            s.path().display()
        );
        let copy = InMemoryDescriptors::from_source(s.as_ref()).unwrap();
        assert_eq!(copy.data, data);
    }
    // Explicit id file of the wrong length for an HDF5 file: error naming the id file.
    let short = d.path().join("short.txt");
    write_ids(&short, &ids[..10]).unwrap();
    let e = open_descriptors(&h5, Some(&short))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("short.txt") && e.contains("10 ids"), "{e}");
    // Unknown extension.
    let e = open_descriptors(&d.path().join("m.csv"), None)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("m.csv") && e.contains("unknown descriptor format"),
        "{e}"
    );
}

#[test]
fn in_memory_checks_and_blocks() {
    assert!(InMemoryDescriptors::new("x", vec!["a".into()], 3, vec![0.0; 2]).is_err());
    let e = InMemoryDescriptors::new("x", vec!["a".into(), "a".into()], 1, vec![0.0; 2])
        .unwrap_err()
        .to_string();
    assert!(e.contains("duplicate id \"a\""), "{e}");
    let b: Vec<_> = blocks(10, 4).collect();
    assert_eq!(b, vec![(0, 4), (4, 4), (8, 2)]);
    assert_eq!(blocks(0, 4).count(), 0);
    assert_eq!(blocks(3, 0).count(), 3);
}
