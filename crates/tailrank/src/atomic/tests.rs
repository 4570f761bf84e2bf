use super::*;

#[test]
fn failed_write_leaves_target_untouched() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("out.txt");
    write_bytes(&p, b"first").unwrap();
    let r = write_file(&p, |w| {
        w.write_all(b"partial").unwrap();
        Err(Error::invalid("boom"))
    });
    assert!(r.is_err());
    assert_eq!(fs::read(&p).unwrap(), b"first");
    assert_eq!(
        fs::read_dir(d.path()).unwrap().count(),
        1,
        "temp file and lock cleaned up"
    );
}

#[test]
fn dir_replaced_only_when_complete() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("summary");
    write_dir(&p, |t| write_bytes(&t.join("chunk.json"), b"1")).unwrap();
    assert!(write_dir(&p, |_| Err(Error::invalid("boom"))).is_err());
    assert_eq!(fs::read(p.join("chunk.json")).unwrap(), b"1");
    write_dir(&p, |t| write_bytes(&t.join("b"), b"2")).unwrap();
    assert!(!p.join("chunk.json").exists() && p.join("b").exists());
    assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
}

#[test]
fn fixed_temp_names_stale_leftovers_are_cleaned() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("out.txt");
    // A dead run's staging folder, a lock file it left, and an old-style temporary of a
    // process that no longer exists (pid 0 never names a user process in /proc).
    fs::create_dir_all(d.path().join("out.txt.tmp")).unwrap();
    fs::write(d.path().join("out.txt.tmp/out.txt"), b"half").unwrap();
    fs::write(d.path().join("out.txt.lock"), b"999999\n").unwrap();
    fs::write(d.path().join("out.txt.tmp-0"), b"half").unwrap();
    write_bytes(&p, b"new").unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"new");
    let left: Vec<String> = fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec!["out.txt".to_string()], "{left:?}");
}

#[test]
fn a_held_lock_refuses_a_second_writer_naming_the_pid() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("out.txt");
    let lock = Lock::acquire(&p).unwrap();
    let e = write_bytes(&p, b"x").unwrap_err().to_string();
    let pid = std::process::id();
    assert!(
        e.contains(&format!(
            "another tailrank process (pid {pid}) is writing it"
        )),
        "{e}"
    );
    assert!(!p.exists());
    drop(lock);
    write_bytes(&p, b"x").unwrap();
    assert!(!d.path().join("out.txt.lock").exists());
}

#[test]
fn refuses_to_put_a_file_over_a_folder_or_a_folder_over_a_file() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("f");
    fs::write(&f, b"precious").unwrap();
    let e = write_dir(&f, |_| Ok(())).unwrap_err().to_string();
    assert!(e.contains("not a folder"), "{e}");
    assert_eq!(fs::read(&f).unwrap(), b"precious");
    let g = d.path().join("g");
    fs::create_dir(&g).unwrap();
    fs::write(g.join("x"), b"precious").unwrap();
    let e = write_bytes(&g, b"y").unwrap_err().to_string();
    assert!(e.contains("is a folder"), "{e}");
    let e = write_dir(&g, |_| Ok(())).unwrap_err().to_string();
    assert!(e.contains("not a folder tailrank wrote"), "{e}");
    assert_eq!(fs::read(g.join("x")).unwrap(), b"precious");
}

/// Simulate a commit cut after `k` steps by replaying the roll-forward with a budget.
fn cut_roll_forward(steps: &[Step], k: usize) {
    // Steps of `roll_forward`, performed one by one up to `k`.
    let mut done = 0usize;
    let mut step = |f: &mut dyn FnMut()| {
        if done < k {
            f();
        }
        done += 1;
    };
    for s in steps {
        let new = s.new_content().unwrap();
        if s.dir && exists(&s.target) {
            let old = s.old().unwrap();
            step(&mut || fs::rename(&s.target, &old).unwrap());
        }
        step(&mut || fs::rename(&new, &s.target).unwrap());
    }
}

#[test]
fn a_commit_cut_at_any_step_is_refused_by_readers_then_completed() {
    for k in 0..4 {
        let d = tempfile::tempdir().unwrap();
        let r = d.path().join("r.json");
        let s = d.path().join("s");
        write_bytes(&r, b"old").unwrap();
        write_dir(&s, |t| write_bytes(&t.join("chunk.json"), b"old")).unwrap();
        let mut tx = Transaction::default();
        let ir = tx.add_file(&r).unwrap();
        let is = tx.add_dir(&s).unwrap();
        tx.write(ir, |p| fs::write(p, b"new").at(p)).unwrap();
        tx.write(is, |p| {
            fs::create_dir(p).unwrap();
            fs::write(p.join("chunk.json"), b"new").at(p)
        })
        .unwrap();
        // Write the journals as the commit does, then cut the renames after k steps.
        let steps = tx.steps();
        let j = Journal {
            format: JOURNAL_FORMAT.into(),
            pid: 1,
            steps: steps.clone(),
        };
        for st in &steps {
            fs::write(
                staging_dir(&st.target).unwrap().join(JOURNAL),
                serde_json::to_string(&j).unwrap(),
            )
            .unwrap();
        }
        cut_roll_forward(&steps, k);
        // The crash: locks go, nothing is cleaned.
        tx.journaled = true;
        drop(tx);
        let rv = fs::read(&r).unwrap();
        let sv = fs::read(s.join("chunk.json")).ok();
        if (rv.as_slice(), sv.as_deref()) != (b"old", Some(&b"old"[..])) {
            for p in [&r, &s] {
                let e = check_settled(p).unwrap_err().to_string();
                assert!(e.contains("interrupted"), "step {k}: {e}");
            }
        }
        // The next writer of either output completes the commit first.
        let mut tx = Transaction::default();
        tx.add_file(&r).unwrap();
        drop(tx);
        check_settled(&r).unwrap();
        check_settled(&s).unwrap();
        assert_eq!(fs::read(&r).unwrap(), b"new", "step {k}");
        assert_eq!(fs::read(s.join("chunk.json")).unwrap(), b"new", "step {k}");
        let left = fs::read_dir(d.path()).unwrap().count();
        assert_eq!(left, 2, "step {k}: staging folders and locks removed");
    }
}
