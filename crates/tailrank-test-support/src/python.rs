//! The Python interpreter holding the independent
//! references (numpy, scipy, scikit-learn, h5py), set up by `scripts/test.sh`.

use std::path::PathBuf;
use std::process::Command;

/// The interpreter from `TAILRANK_PYTHON` (set by `scripts/test.sh`), else `target/pyenv`, else
/// `python3`.
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("TAILRANK_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/pyenv/bin/python");
    if venv.exists() {
        return venv;
    }
    PathBuf::from("python3")
}

/// Run a Python snippet with `args` (available as `sys.argv[1:]`) and return its stdout.
/// Panics with the interpreter's stderr and a hint when it fails (e.g. a missing module): the
/// references are required, never silently skipped.
pub fn run_python(code: &str, args: &[&str]) -> String {
    let out = Command::new(python())
        .arg("-c")
        .arg(code)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot start {}: {e}; run scripts/test.sh",
                python().display()
            )
        });
    if !out.status.success() {
        panic!(
            "python reference failed (run the suite through scripts/test.sh, which installs \
             scripts/requirements-test.txt):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8(out.stdout).expect("python printed utf-8")
}
