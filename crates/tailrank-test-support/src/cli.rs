//! Running the `tailrank` binary from the CLI crate's integration tests. The binary is the one
//! Cargo builds for them, found next to the test executable (`target/<profile>/tailrank`,
//! the test itself being in `target/<profile>/deps/`), where `CARGO_BIN_EXE_tailrank` points.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The path of the `tailrank` binary of this build.
pub fn bin() -> PathBuf {
    let exe = std::env::current_exe().expect("path of the test executable");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("test executable in target/<profile>/deps");
    let bin = profile_dir.join(format!("tailrank{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} not found: run the tests of tailrank-cli through cargo, which builds it",
        bin.display()
    );
    bin
}

/// `tailrank ARGS` run to completion.
pub fn output<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>) -> Output {
    Command::new(bin())
        .args(args)
        .output()
        .expect("run tailrank")
}

/// `tailrank ARGS` run to completion in the working directory `dir`.
pub fn output_in<S: AsRef<OsStr>>(dir: &Path, args: impl IntoIterator<Item = S>) -> Output {
    Command::new(bin())
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run tailrank")
}

/// `tailrank ARGS`: `(succeeded, stdout, stderr)`.
pub fn tailrank(args: &[&str]) -> (bool, String, String) {
    let out = output(args);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `tailrank ARGS` run to completion, which must succeed (else the test fails showing its
/// stdout and stderr): its stdout.
pub fn stdout_ok<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>) -> String {
    let out = output(args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}
