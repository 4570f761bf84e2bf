use super::*;

#[test]
fn failed_write_leaves_target_untouched() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("out.txt");
    write_bytes(&p, b"first").unwrap();
    let r = write_file(&p, |w| {
        w.write_all(b"partial").unwrap();
        Err(Error::internal("boom"))
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
    assert!(write_dir(&p, |_| Err(Error::internal("boom"))).is_err());
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
    // Killed while writing its journal (regression: the sweep refused such a folder as a
    // user's, and a killed scan could not be rerun).
    fs::write(d.path().join("out.txt.tmp/.pending.json.part"), b"{\"form").unwrap();
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

/// In `dir`, `r.json` and the folder `s` ("old"), replaced by "new" in one commit that is cut
/// after `k` steps of its roll-forward (its journals written, as the commit writes them), the
/// process gone: its locks released, nothing cleaned. Returns the two outputs.
fn cut_commit(dir: &Path, k: usize) -> (PathBuf, PathBuf) {
    let (r, s) = (dir.join("r.json"), dir.join("s"));
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
    let steps = tx.steps();
    let j = Journal {
        format: JOURNAL_FORMAT.into(),
        pid: 1,
        steps: steps.clone(),
    };
    for st in &steps {
        let jp = staging_dir(&st.target).unwrap().join(JOURNAL);
        fs::write(jp, serde_json::to_string(&j).unwrap()).unwrap();
    }
    cut_roll_forward(&steps, k);
    tx.journaled = true;
    drop(tx);
    (r, s)
}

#[test]
fn a_commit_cut_at_any_step_is_refused_by_readers_then_completed() {
    for k in 0..4 {
        let d = tempfile::tempdir().unwrap();
        let (r, s) = cut_commit(d.path(), k);
        let rv = fs::read(&r).unwrap();
        let sv = fs::read(s.join("chunk.json")).ok();
        if (rv.as_slice(), sv.as_deref()) != (b"old", Some(&b"old"[..])) {
            for p in [&r, &s] {
                let e = check_settled(p).unwrap_err().to_string();
                assert!(e.contains("interrupted"), "step {k}: {e}");
                // The readers of inputs that a command writes together (a ground truth file
                // or folder, a descriptor file) refuse them too, before reading.
                let e = crate::formats::gt::load_ground_truth(p)
                    .unwrap_err()
                    .to_string();
                assert!(e.contains("interrupted"), "step {k}: {e}");
            }
            let e = crate::formats::open::open_descriptors(&r, None)
                .err()
                .unwrap()
                .to_string();
            assert!(e.contains("interrupted"), "step {k}: {e}");
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

/// Names in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[cfg(unix)]
#[test]
fn a_link_to_a_file_is_written_through_and_stays_a_link() {
    let d = tempfile::tempdir().unwrap();
    let real = d.path().join("real.txt");
    let link = d.path().join("link.txt");
    fs::write(&real, b"old").unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    for round in 0..2 {
        // Alone, then together with a companion next to the link (a journaled commit).
        let mut tx = Transaction::default();
        let i = tx.add_file(&link).unwrap();
        let j = tx
            .add_file(&d.path().join("link.txt.manifest.json"))
            .unwrap();
        tx.write(i, |p| fs::write(p, format!("new{round}")).at(p))
            .unwrap();
        tx.write(j, |p| fs::write(p, b"m").at(p)).unwrap();
        tx.commit().unwrap();
        assert_eq!(fs::read(&real).unwrap(), format!("new{round}").as_bytes());
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            names_in(d.path()),
            ["link.txt", "link.txt.manifest.json", "real.txt"]
        );
    }
    write_bytes(&link, b"again").unwrap();
    assert_eq!(fs::read(&real).unwrap(), b"again");
    // A link that leads nowhere is refused; nothing is created.
    let dangling = d.path().join("dangling.txt");
    std::os::unix::fs::symlink(d.path().join("nothere/x"), &dangling).unwrap();
    let e = write_bytes(&dangling, b"x").unwrap_err().to_string();
    assert!(
        e.contains("symbolic link") && e.contains("does not exist"),
        "{e}"
    );
    assert!(!d.path().join("nothere").exists());
    assert_eq!(names_in(d.path()).len(), 4);
}

#[cfg(unix)]
#[test]
fn special_files_are_streamed_alone_and_refused_in_pairs_never_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let null = Path::new("/dev/null");
    write_bytes(null, b"discarded").unwrap();
    assert!(fs::metadata(null).unwrap().file_type().is_char_device());
    for leftover in ["/dev/null.tmp", "/dev/null.lock", "/dev/null.manifest.json"] {
        assert!(!Path::new(leftover).exists(), "{leftover}");
    }
    // A FIFO, directly and through a link: the bytes reach the reader.
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("pipe");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo on a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let link = d.path().join("to_pipe.json");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    for target in [&fifo, &link] {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read(&fifo).unwrap())
        };
        write_file(target, |w| w.write_all(b"streamed").at(target)).unwrap();
        assert_eq!(reader.join().unwrap(), b"streamed");
        assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
    }
    // Paired with another output, either way round: refused, naming the special file.
    let other = d.path().join("other.json");
    let mut tx = Transaction::default();
    tx.add_file(null).unwrap();
    let e = tx.add_file(&other).unwrap_err().to_string();
    assert!(e.starts_with("/dev/null: is a character device"), "{e}");
    assert!(e.contains("together with"), "{e}");
    drop(tx);
    let mut tx = Transaction::default();
    tx.add_file(&other).unwrap();
    let e = tx.add_file(&fifo).unwrap_err().to_string();
    assert!(e.contains("is a FIFO") && e.contains("other.json"), "{e}");
    drop(tx);
    assert_eq!(names_in(d.path()), ["pipe", "to_pipe.json"]);
    // A folder output over a device is refused like any non-folder.
    let e = write_dir(null, |_| Ok(())).unwrap_err().to_string();
    assert!(e.contains("not a folder"), "{e}");
}

#[test]
fn longest_legal_names_get_short_staging_and_lock_names() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("f".repeat(NAME_MAX));
    let g = d.path().join("g".repeat(NAME_MAX));
    write_bytes(&f, b"one").unwrap();
    write_bytes(&f, b"two").unwrap();
    assert_eq!(fs::read(&f).unwrap(), b"two");
    // Two outputs replaced together: the journal lives in the hashed staging folders.
    write_dir(&g, |t| write_bytes(&t.join("chunk.json"), b"1")).unwrap();
    let mut tx = Transaction::default();
    let i = tx.add_file(&f).unwrap();
    let j = tx.add_dir(&g).unwrap();
    let staging = staging_dir(&resolve_output(&f)).unwrap();
    let staging_name = staging.file_name().unwrap().to_string_lossy().into_owned();
    assert!(staging_name.starts_with(".tailrank-") && staging_name.len() < 40);
    tx.write(i, |p| fs::write(p, b"three").at(p)).unwrap();
    tx.write(j, |p| {
        fs::create_dir(p).at(p)?;
        fs::write(p.join("chunk.json"), b"2").at(p)
    })
    .unwrap();
    tx.commit().unwrap();
    assert_eq!(fs::read(&f).unwrap(), b"three");
    assert_eq!(fs::read(g.join("chunk.json")).unwrap(), b"2");
    assert_eq!(names_in(d.path()).len(), 2, "{:?}", names_in(d.path()));
}

#[test]
fn writes_inside_a_staging_folder_take_no_lock_or_staging_of_their_own() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("s");
    write_dir(&out, |tmp| {
        write_bytes(&tmp.join("a.json"), b"a")?;
        write_dir(&tmp.join("sub"), |t| write_bytes(&t.join("b"), b"b"))?;
        // Nothing but the content itself appears in the staged folder.
        assert_eq!(names_in(tmp), ["a.json", "sub"]);
        assert_eq!(names_in(&tmp.join("sub")), ["b"]);
        Ok(())
    })
    .unwrap();
    assert_eq!(fs::read(out.join("sub/b")).unwrap(), b"b");
    assert_eq!(names_in(d.path()), ["s"]);
    // Once committed, the same paths are ordinary outputs again (locked and staged).
    assert!(!inside_staging(&out.join("a.json")));
}

/// Only what tailrank stages is swept: a `NAME.tmp` or `NAME.lock` that holds anything else
/// (a user's file or folder, possibly an input of the same command) is refused, kept intact.
#[test]
fn a_users_tmp_or_lock_next_to_an_output_is_refused_not_deleted() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("ids.txt");
    let tmp = d.path().join("ids.txt.tmp");
    let lock = d.path().join("ids.txt.lock");
    // A file, a folder with other entries, and a link at the staging name.
    fs::write(&tmp, b"my input").unwrap();
    let e = write_bytes(&p, b"new").unwrap_err().to_string();
    assert!(
        e.contains("ids.txt.tmp") && e.contains("not a staging folder"),
        "{e}"
    );
    assert_eq!(fs::read(&tmp).unwrap(), b"my input");
    fs::remove_file(&tmp).unwrap();
    fs::create_dir(&tmp).unwrap();
    fs::write(tmp.join("notes.txt"), b"mine").unwrap();
    assert!(write_bytes(&p, b"new").is_err());
    assert_eq!(fs::read(tmp.join("notes.txt")).unwrap(), b"mine");
    fs::remove_dir_all(&tmp).unwrap();
    // A user's file at the lock name (taking the lock would truncate it), and a link there.
    fs::write(&lock, b"precious notes\n").unwrap();
    let e = write_bytes(&p, b"new").unwrap_err().to_string();
    assert!(
        e.contains("ids.txt.lock") && e.contains("not a lock tailrank left"),
        "{e}"
    );
    assert_eq!(fs::read(&lock).unwrap(), b"precious notes\n");
    fs::remove_file(&lock).unwrap();
    let precious = d.path().join("precious.txt");
    fs::write(&precious, b"keep").unwrap();
    std::os::unix::fs::symlink(&precious, &lock).unwrap();
    assert!(write_bytes(&p, b"new").is_err());
    assert_eq!(fs::read(&precious).unwrap(), b"keep");
    fs::remove_file(&lock).unwrap();
    assert!(!p.exists());
    // What a killed run leaves (a lock holding a pid, a staging folder holding NAME) is
    // swept, and the write goes through.
    fs::write(&lock, b"12345\n").unwrap();
    fs::create_dir(&tmp).unwrap();
    fs::write(tmp.join("ids.txt"), b"half").unwrap();
    write_bytes(&p, b"new").unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"new");
    assert!(!tmp.exists() && !lock.exists());
}

/// A reader that meets a live writer's commit waits for it (a few renames) instead of failing
/// at once, and gives up with "is replacing it" only when the commit outlasts the wait.
#[test]
fn a_reader_waits_for_a_live_commit_to_finish() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path().join("r.json");
    let s = d.path().join("s");
    write_bytes(&r, b"old").unwrap();
    write_dir(&s, |t| write_bytes(&t.join("chunk.json"), b"old")).unwrap();
    let start_commit = |cut: usize| {
        let mut tx = Transaction::default();
        let ir = tx.add_file(&r).unwrap();
        let is = tx.add_dir(&s).unwrap();
        tx.write(ir, |p| fs::write(p, b"new").at(p)).unwrap();
        tx.write(is, |p| {
            fs::create_dir_all(p).unwrap();
            fs::write(p.join("chunk.json"), b"new").at(p)
        })
        .unwrap();
        let steps = tx.steps();
        let j = Journal {
            format: JOURNAL_FORMAT.into(),
            pid: std::process::id(),
            steps: steps.clone(),
        };
        for st in &steps {
            let jp = staging_dir(&st.target).unwrap().join(JOURNAL);
            fs::write(jp, serde_json::to_string(&j).unwrap()).unwrap();
        }
        cut_roll_forward(&steps, cut);
        (tx, steps)
    };
    // The writer holds its locks, halfway through its renames, and never finishes.
    let (tx, steps) = start_commit(1);
    let t0 = std::time::Instant::now();
    let e = super::settle::settled_within(&r, std::time::Duration::from_millis(200))
        .unwrap_err()
        .to_string();
    assert!(e.contains("is replacing it"), "{e}");
    assert!(t0.elapsed() >= std::time::Duration::from_millis(200));
    // It finishes 300 ms later: the reader, waiting, reads the new content.
    let finish = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        roll_forward(&steps, &mut None, false).unwrap();
        let mut tx = tx;
        tx.journaled = true;
        drop(tx);
    });
    check_settled(&r).unwrap();
    check_settled(&s).unwrap();
    finish.join().unwrap();
    assert_eq!(fs::read(&r).unwrap(), b"new");
    assert_eq!(fs::read(s.join("chunk.json")).unwrap(), b"new");
}

/// An input stored at an output's lock file or inside its staging folder is refused before
/// anything is written (the writer would truncate the lock and sweep the staging folder).
#[test]
fn an_input_at_an_outputs_side_entry_is_refused_untouched() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("s.txt");
    let lock_input = d.path().join("s.txt.lock");
    fs::write(&lock_input, b"12345\n").unwrap();
    let staged_input = d.path().join("s.txt.tmp/s.txt");
    fs::create_dir(d.path().join("s.txt.tmp")).unwrap();
    fs::write(&staged_input, b"a\nb\n").unwrap();
    for (input, what) in [
        (&lock_input, "lock file"),
        (&staged_input, "staging folder"),
    ] {
        let mut t = Transaction::new(&[input.as_path()]);
        let e = t.add_file(&out).unwrap_err().to_string();
        assert!(e.contains(&format!("is this output's {what}")), "{e}");
    }
    assert_eq!(fs::read(&lock_input).unwrap(), b"12345\n");
    assert_eq!(fs::read(&staged_input).unwrap(), b"a\nb\n");
    assert!(!out.exists());
}

/// A folder moved (or copied) while a commit in it was unfinished: its journals name the
/// outputs at the old paths, so readers and writers there refuse it (a writer finished the
/// commit at the old paths, in a tree it was never told to write), and the other copy is left
/// as it was.
#[test]
fn a_journal_of_a_moved_folder_is_refused_and_the_old_place_untouched() {
    let d = tempfile::tempdir().unwrap();
    let (old_root, new_root) = (d.path().join("proj"), d.path().join("proj2"));
    fs::create_dir(&old_root).unwrap();
    let (r, s) = cut_commit(&old_root, 1);
    // A copy of the half-replaced tree, then the original moved away and back as a copy.
    let copy = |from: &Path, to: &Path| {
        let ok = std::process::Command::new("cp")
            .arg("-a")
            .arg(from)
            .arg(to)
            .status();
        assert!(ok.unwrap().success());
    };
    copy(&old_root, &new_root);
    let before = names_in(&old_root);
    let (r2, s2) = (new_root.join("r.json"), new_root.join("s"));
    for p in [&r2, &s2] {
        let e = check_settled(p).unwrap_err().to_string();
        assert!(e.contains("moved or copied"), "{e}");
    }
    let mut tx = Transaction::default();
    let e = tx.add_file(&r2).unwrap_err().to_string();
    assert!(e.contains("moved or copied"), "{e}");
    drop(tx);
    assert_eq!(names_in(&old_root), before, "the old place was touched");
    // At its own place the commit is completed as before.
    let mut tx = Transaction::default();
    tx.add_file(&r).unwrap();
    drop(tx);
    assert_eq!(fs::read(&r).unwrap(), b"new");
    assert_eq!(fs::read(s.join("chunk.json")).unwrap(), b"new");
}
