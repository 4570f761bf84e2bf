//! One file per subcommand.

pub mod compare;
pub mod curve;
pub mod demo;
pub mod eval;
pub mod ilias;
pub mod merge;
pub mod predict;
pub mod sample;
pub mod scan;
pub mod simulate;
pub mod validate;

/// Read a summary folder, printing the reader's warnings (e.g. a format-1 folder whose
/// manifest is not checksummed) on stderr.
pub fn read_summary(path: &std::path::Path) -> tailrank::Result<tailrank::summary::Summary> {
    let (s, warnings) = tailrank::summary::Summary::read_with_warnings(path)?;
    for w in warnings {
        eprintln!("tailrank: warning: {w}");
    }

    Ok(s)
}

/// [`read_summary`], also warning when the summary's tie counts are unknown (a format-1
/// folder): for commands whose numbers then resolve ties in the positive's favour.
pub fn read_summary_for_metrics(
    path: &std::path::Path,
) -> tailrank::Result<tailrank::summary::Summary> {
    let s = read_summary(path)?;
    if let Some(w) = s.ties_unknown_warning() {
        eprintln!("tailrank: warning: {}: {w}", path.display());
    }
    Ok(s)
}
