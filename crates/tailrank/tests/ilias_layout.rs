//! ILIAS layout pieces: the official group keys, `positive_ids.txt` attributes, `taxonomy.json`
//! (the official three-level file and a two-level one), the distractor id checks in exact and
//! sample mode (hash membership computed by Python's xxhash), and the feature-folder discovery.

use tailrank_test_support::python as common;

use std::path::Path;
use tailrank::formats::descriptors::InMemoryDescriptors;
use tailrank::ilias::{
    find_features, group_key, read_positive_info, read_taxonomy, DistractorList, CLUTTER_GROUPS,
    SCALE_GROUPS,
};

#[test]
fn group_keys_are_the_official_report_keys() {
    // Python: f"{t1}-{t2}" over the official threshold lists.
    let scale: Vec<String> = SCALE_GROUPS.iter().map(|&(a, b)| group_key(a, b)).collect();
    assert_eq!(
        scale,
        [
            "0-0.06880213760855043",
            "0.06880213760855043-0.13526567164179104",
            "0.13526567164179104-0.2729876723163842",
            "0.2729876723163842-inf"
        ]
    );
    let clutter: Vec<String> = CLUTTER_GROUPS
        .iter()
        .map(|&(a, b)| group_key(a, b))
        .collect();
    assert_eq!(clutter, ["0-18", "18-33", "33-53", "53-inf"]);
}

#[test]
fn positive_info_and_taxonomy() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("positive_ids.txt");
    std::fs::write(&p, "id,scale,clutter\na/1.jpg,0.05,3\nb/2.jpg,0.3,60\n").unwrap();
    let (ids, info) = read_positive_info(&p).unwrap();
    assert_eq!(ids, ["a/1.jpg", "b/2.jpg"]);
    let info = info.unwrap();
    assert_eq!(info["b/2.jpg"].scale, 0.3);
    assert_eq!(info["b/2.jpg"].clutter, 60.0);
    std::fs::write(&p, "a/1.jpg\nb/2.jpg\n").unwrap();
    assert!(read_positive_info(&p).unwrap().1.is_none());
    std::fs::write(&p, "a/1.jpg,0.05,3\nb/2.jpg,x,60\n").unwrap();
    let e = read_positive_info(&p).unwrap_err().to_string();
    assert!(
        e.contains("positive_ids.txt") && e.contains("line 2"),
        "{e}"
    );

    let t = d.path().join("taxonomy.json");
    std::fs::write(
        &t,
        r#"{"product": {"food": {"cake": ["a", "b"], "other": ["c"]}}, "toy": {"other": {"other": ["d"]}}}"#,
    )
    .unwrap();
    let tax = read_taxonomy(&t).unwrap();
    assert_eq!(tax.instance["c"], ("product".into(), "food".into()));
    assert_eq!(tax.instance["d"], ("toy".into(), "other".into()));
    std::fs::write(&t, r#"{"x": {"y": ["a", "b"]}, "z": {"w": ["a"]}}"#).unwrap();
    let e = read_taxonomy(&t).unwrap_err().to_string();
    assert!(e.contains("taxonomy.json") && e.contains("twice"), "{e}");
}

fn shard(label: &str, ids: &[String]) -> InMemoryDescriptors {
    let data = ids.iter().flat_map(|_| [1.0f32, 0.0]).collect();
    InMemoryDescriptors::new(label, ids.to_vec(), 2, data).unwrap()
}

#[test]
fn distractor_checks_exact_and_sampled() {
    let d = tempfile::tempdir().unwrap();
    let list = d.path().join("distractor_ids.txt.gz");
    let ids: Vec<String> = (0..500).map(|i| format!("yfcc/{i:06}")).collect();
    tailrank::formats::ids::write_ids(&list, &ids).unwrap();
    // The hash sample at f = 0.2, seed 9, drawn by Python's xxhash (docs/method.md §4).
    let code = r#"
import sys, xxhash
t = int(0.2 * 2.0**64)
print("\n".join(i for i in (f"yfcc/{k:06}" for k in range(500))
                if xxhash.xxh3_64_intdigest(i.encode(), seed=9) < t))
"#;
    let sample: Vec<String> = common::run_python(code, &[])
        .lines()
        .map(str::to_string)
        .collect();
    assert!(sample.len() > 50 && sample.len() < 150);

    let exact = DistractorList::read(&list, None).unwrap();
    assert_eq!((exact.len, exact.required), (500, 500));
    let a = shard("s0.hdf5", &ids[..250]);
    let b = shard("s1.hdf5", &ids[250..]);
    exact.check_features(&[&a, &b]).unwrap();
    let e = exact.check_features(&[&a]).unwrap_err().to_string();
    assert!(
        e.contains("distractor_ids.txt.gz") && e.contains("250") && e.contains("missing"),
        "{e}"
    );
    let mut bad = ids[250..].to_vec();
    bad[3] = ids[7].clone();
    let e = exact
        .check_features(&[&a, &shard("s1.hdf5", &bad)])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("s1.hdf5") && e.contains("row 3") && e.contains("duplicate"),
        "{e}"
    );
    bad[3] = "yfcc/x".into();
    let e = exact
        .check_features(&[&a, &shard("s1.hdf5", &bad)])
        .unwrap_err()
        .to_string();
    assert!(e.contains("s1.hdf5") && e.contains("unknown"), "{e}");

    // Sample mode: the sampled ids alone suffice; all of them are needed.
    let sampled = DistractorList::read(&list, Some((0.2, 9))).unwrap();
    assert_eq!(sampled.required as usize, sample.len());
    sampled
        .check_features(&[&shard("s.hdf5", &sample)])
        .unwrap();
    sampled.check_features(&[&a, &b]).unwrap();
    let e = sampled
        .check_features(&[&shard("s.hdf5", &sample[1..])])
        .unwrap_err()
        .to_string();
    assert!(e.contains(&format!("{:?}", sample[0])), "{e}");

    // A duplicate in the list itself names both lines.
    let mut dup = ids.clone();
    dup[20] = ids[4].clone();
    tailrank::formats::ids::write_ids(&list, &dup).unwrap();
    let e = DistractorList::read(&list, None).unwrap_err().to_string();
    assert!(e.contains("lines 5 and 21"), "{e}");
}

#[test]
fn feature_folder_discovery() {
    let d = tempfile::tempdir().unwrap();
    for n in [
        "features_positives.hdf5",
        "features_image_queries.hdf5",
        "features_distractors_001.hdf5",
        "features_distractors_000.h5",
        "notes.txt",
    ] {
        std::fs::write(d.path().join(n), b"").unwrap();
    }
    let f = find_features(d.path()).unwrap();
    assert!(f.text_queries.is_none());
    assert!(f.image_queries.is_some());
    let names: Vec<&str> = f
        .distractors
        .iter()
        .map(|p| p.file_name().unwrap().to_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "features_distractors_000.h5",
            "features_distractors_001.hdf5"
        ]
    );
    std::fs::remove_file(d.path().join("features_positives.hdf5")).unwrap();
    let e = find_features(d.path()).unwrap_err().to_string();
    assert!(
        e.contains("features_positives.hdf5") && e.contains("features_positive.hdf5"),
        "{e}"
    );
    // The singular spelling is accepted; both at once are ambiguous.
    std::fs::write(d.path().join("features_positive.hdf5"), b"").unwrap();
    let f = find_features(d.path()).unwrap();
    assert_eq!(
        f.positives.file_name().unwrap().to_str().unwrap(),
        "features_positive.hdf5"
    );
    std::fs::write(d.path().join("features_positives.h5"), b"").unwrap();
    let e = find_features(d.path()).unwrap_err().to_string();
    assert!(
        e.contains("several positives feature files") && e.contains("features_positives.h5"),
        "{e}"
    );
    let _ = Path::new("");
}

/// A feature file's name on a folder or a dangling link is an error naming it (a shard was
/// skipped, and with `--selected-ids` not needing its ids the run went on); `--features`
/// given a file says so.
#[test]
fn broken_feature_entries_are_refused() {
    let d = tempfile::tempdir().unwrap();
    for n in ["features_positives.hdf5", "features_distractors_000.hdf5"] {
        std::fs::write(d.path().join(n), b"").unwrap();
    }
    assert!(find_features(d.path()).is_ok());
    let shard = d.path().join("features_distractors_001.hdf5");
    std::fs::create_dir(&shard).unwrap();
    let e = find_features(d.path()).unwrap_err();
    assert!(
        e.to_string()
            .contains("features_distractors_001.hdf5: is not a file"),
        "{e}"
    );
    std::fs::remove_dir(&shard).unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(d.path().join("gone"), &shard).unwrap();
        let e = find_features(d.path()).unwrap_err();
        assert_eq!(e.kind(), tailrank::ErrorKind::Io, "{e}");
        assert!(e.to_string().contains("link to nothing"), "{e}");
    }
    let e = find_features(&d.path().join("features_positives.hdf5")).unwrap_err();
    assert!(e.to_string().contains("is a file, not a folder"), "{e}");
}
