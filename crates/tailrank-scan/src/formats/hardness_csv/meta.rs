//! The metadata lines of the hardness artifact (`# key: value`, `docs/reference/hardness.md`),
//! read into a [`HardnessMeta`]: the required keys, the format version, the numbers and the
//! excess move.

use super::{missing_names, Expected, HARDNESS_FORMAT_NAME, HARDNESS_FORMAT_VERSION};
use crate::error::{Error, Result};
use crate::hardness::{ExcessMove, HardnessMeta, HitScales, SpacingMove};
use std::path::Path;

/// The keys the metadata lines may set ([`hardness_meta`]); each at most once. Other
/// `# key: value` lines are comments.
const KEYS: [&str; 18] = [
    "format",
    "format_version",
    "model",
    "query_set",
    "pool_size",
    "sample_size",
    "fraction",
    "seed",
    "estimator",
    "tool_version",
    "excess_rate",
    "excess_weight",
    "excess_decay",
    "excess_pool_size",
    "hit_tail_scale",
    "hit_immune_scale",
    "spacing_rate",
    "spacing_weight",
];

/// The metadata of the file from its `# key: value` lines (`meta_kv`: key, value, line): the
/// required keys, the format version, the numbers (`fraction` in (0, 1]) and the moves. A key
/// of [`KEYS`] given twice is an error (which one counts would be a guess).
pub(super) fn hardness_meta(
    path: &Path,
    meta_kv: &[(String, String, usize)],
) -> Result<HardnessMeta> {
    for (i, (k, _, ln)) in meta_kv.iter().enumerate() {
        if let Some((_, _, first)) = meta_kv[..i].iter().find(|(key, _, _)| key == k) {
            if KEYS.contains(&k.as_str()) {
                return Err(Error::input(
                    path,
                    format!("line {ln}: metadata {k} given a second time (first on line {first})"),
                ));
            }
        }
    }
    let meta_get = |k: &str| meta_kv.iter().rev().find(|(key, _, _)| key == k);
    let required = [
        "model",
        "query_set",
        "sample_size",
        "fraction",
        "seed",
        "estimator",
        "tool_version",
    ];
    if let Some(missing) = missing_names(&required, |k| meta_get(k).is_some()) {
        return Err(Error::input(
            path,
            format!("metadata lacks the key(s) {missing} (lines '# key: value' before the header)"),
        ));
    }
    let meta_num = |k: &str| -> Result<String> {
        let (_, v, _) = meta_get(k).expect("checked");
        Ok(v.clone())
    };
    let parse_meta = |k: &str| -> Result<(String, usize)> {
        let (_, v, ln) = meta_get(k).expect("checked");
        Ok((v.clone(), *ln))
    };
    check_format_name(path, meta_get("format"))?;
    check_format_version(path, meta_get("format_version"))?;
    let bad = |k: &str, v: &str, ln: usize, what: &str| {
        Error::input(
            path,
            format!("line {ln}: metadata {k}: {v:?} is not {what}"),
        )
    };
    let (v, ln) = parse_meta("sample_size")?;
    let sample_size: u64 = v
        .parse()
        .map_err(|_| bad("sample_size", &v, ln, u64::WHAT))?;
    let (v, ln) = parse_meta("fraction")?;
    let fraction: f64 = v
        .parse()
        .ok()
        .filter(|f: &f64| *f > 0.0 && *f <= 1.0)
        .ok_or_else(|| bad("fraction", &v, ln, "a sampling fraction in (0, 1]"))?;
    let (v, ln) = parse_meta("seed")?;
    let seed: u64 = v.parse().map_err(|_| bad("seed", &v, ln, u64::WHAT))?;
    let pool_size = pool_size(path, meta_get("pool_size"), sample_size)?;
    let excess_move =
        match number_pair(
            path,
            meta_kv,
            [
                ("excess_rate", is_positive, "a positive number"),
                ("excess_weight", is_weight, "a number in (0, 1]"),
            ],
        )? {
            None => match meta_get("excess_decay").or(meta_get("excess_pool_size")) {
                None => None,
                Some((k, _, ln)) => {
                    return Err(Error::input(
                        path,
                        format!("line {ln}: metadata {k} without excess_rate and excess_weight"),
                    ))
                }
            },
            Some([rate, weight]) => {
                let decay = match meta_get("excess_decay") {
                    None => 0.0,
                    Some((_, d, ld)) => d
                        .parse()
                        .ok()
                        .filter(|x: &f64| x.is_finite() && *x >= 0.0)
                        .ok_or_else(|| bad("excess_decay", d, *ld, "a number ≥ 0"))?,
                };
                let pool_size =
                    match meta_get("excess_pool_size") {
                        None if decay > 0.0 => return Err(Error::input(
                            path,
                            "metadata excess_decay > 0 without excess_pool_size (the N its rate \
                         is for)",
                        )),
                        None => None,
                        Some((_, v, lv)) => {
                            Some(v.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
                                bad("excess_pool_size", v, *lv, "a positive integer")
                            })?)
                        }
                    };
                Some(ExcessMove {
                    rate,
                    weight,
                    decay,
                    pool_size,
                })
            }
        };
    let hit_scales = hit_scales(path, meta_kv)?;
    let spacing_move = spacing_move(path, meta_kv)?;
    Ok(HardnessMeta {
        excess_move,
        hit_scales,
        spacing_move,
        model: meta_num("model")?,
        query_set: meta_num("query_set")?,
        pool_size,
        sample_size,
        fraction,
        seed,
        estimator: estimator_label(path, parse_meta("estimator")?)?,
        tool_version: meta_num("tool_version")?,
    })
}

/// The `format_version` metadata, when given: a version from 1 to [`HARDNESS_FORMAT_VERSION`].
fn check_format_version(path: &Path, version: Option<&(String, String, usize)>) -> Result<()> {
    let Some((_, v, ln)) = version else {
        return Ok(());
    };
    let ver: u32 = v.parse().map_err(|_| {
        Error::input(
            path,
            format!("line {ln}: format_version {v:?} is not a number"),
        )
    })?;
    if ver == 0 {
        return Err(Error::input(
            path,
            format!("line {ln}: format_version 0 does not exist (versions start at 1)"),
        ));
    }
    if ver > HARDNESS_FORMAT_VERSION {
        return Err(Error::unsupported(
            path,
            format!(
                "line {ln}: format_version {ver} is newer than this tool reads \
                 ({HARDNESS_FORMAT_VERSION})"
            ),
        ));
    }
    Ok(())
}

/// The `pool_size` metadata: None when absent, empty or `unknown`, else an integer N not below
/// the file's `sample_size` (the sample is drawn from the pool).
fn pool_size(
    path: &Path,
    entry: Option<&(String, String, usize)>,
    sample_size: u64,
) -> Result<Option<u64>> {
    let Some((_, v, ln)) = entry.filter(|(_, v, _)| !v.is_empty() && v != "unknown") else {
        return Ok(None);
    };
    let n = v.parse::<u64>().map_err(|_| {
        Error::input(
            path,
            format!("line {ln}: metadata pool_size: {v:?} is not {}", u64::WHAT),
        )
    })?;
    if n < sample_size {
        return Err(Error::input(
            path,
            format!(
                "line {ln}: metadata pool_size: N = {n} is smaller than the sample_size \
                 {sample_size} (the sample is drawn from the pool)"
            ),
        ));
    }
    Ok(Some(n))
}

/// Refuse a `format` metadata `(key, value, line)` other than [`HARDNESS_FORMAT_NAME`].
fn check_format_name(path: &Path, format: Option<&(String, String, usize)>) -> Result<()> {
    match format {
        Some((_, v, ln)) if v != HARDNESS_FORMAT_NAME => Err(Error::input(
            path,
            format!("line {ln}: format {v:?} is not {HARDNESS_FORMAT_NAME:?}: not a hardness file"),
        )),
        _ => Ok(()),
    }
}

/// The `estimator` metadata `(value, line)`, checked to be a label
/// [`Estimator::parse_label`](crate::hardness::Estimator::parse_label) reads.
fn estimator_label(path: &Path, (v, ln): (String, usize)) -> Result<String> {
    let why = match crate::hardness::Estimator::parse_label_unchecked(&v) {
        None => Some("it is neither `count` nor `evt(top_m=…,quantile=…,c_min=…)`".to_string()),
        Some(crate::hardness::Estimator::Evt(o)) => o.range_error(),
        Some(_) => None,
    };
    if let Some(why) = why {
        return Err(Error::input(
            path,
            format!("line {ln}: estimator {v:?}: {why}"),
        ));
    }
    Ok(v)
}

/// A finite number above 0.
fn is_positive(x: f64) -> bool {
    x.is_finite() && x > 0.0
}

/// A number in [0, 1].
fn is_unit(x: f64) -> bool {
    (0.0..=1.0).contains(&x)
}

/// A number in (0, 1].
fn is_weight(x: f64) -> bool {
    x > 0.0 && x <= 1.0
}

/// One metadata number: its key, which values are valid, and what a valid one is (for the
/// error).
type NumberKey<'k> = (&'k str, fn(f64) -> bool, &'k str);

/// The two numbers of a metadata pair, each `(key, valid, what)`: None when both keys are
/// absent; an error naming the file when one comes without the other, or when a value is not
/// a number that `valid` accepts (it is not `what`).
fn number_pair(
    path: &Path,
    meta_kv: &[(String, String, usize)],
    keys: [NumberKey<'_>; 2],
) -> Result<Option<[f64; 2]>> {
    let get = |k: &str| meta_kv.iter().rev().find(|(key, _, _)| key == k);
    let [(a, _, _), (b, _, _)] = keys;
    let found = match (get(a), get(b)) {
        (None, None) => return Ok(None),
        (Some(x), Some(y)) => [x, y],
        (Some((k, _, ln)), None) | (None, Some((k, _, ln))) => {
            return Err(Error::input(
                path,
                format!("line {ln}: metadata {k} without its pair ({a} and {b} come together)"),
            ))
        }
    };
    let mut out = [0.0; 2];
    for (o, ((k, valid, what), (_, v, ln))) in out.iter_mut().zip(keys.into_iter().zip(found)) {
        *o = v.parse().ok().filter(|x: &f64| valid(*x)).ok_or_else(|| {
            Error::input(
                path,
                format!("line {ln}: metadata {k}: {v:?} is not {what}"),
            )
        })?;
    }
    Ok(Some(out))
}

/// The `hit_tail_scale` and `hit_immune_scale` pair ([`HitScales`]), None when both are absent.
fn hit_scales(path: &Path, meta_kv: &[(String, String, usize)]) -> Result<Option<HitScales>> {
    let keys: [NumberKey; 2] = [
        ("hit_tail_scale", is_positive, "a positive number"),
        ("hit_immune_scale", is_unit, "a number in [0, 1]"),
    ];
    Ok(number_pair(path, meta_kv, keys)?.map(|[tail, immune]| HitScales { tail, immune }))
}

/// The `spacing_rate` and `spacing_weight` pair ([`SpacingMove`]), None when both are absent.
fn spacing_move(path: &Path, meta_kv: &[(String, String, usize)]) -> Result<Option<SpacingMove>> {
    let keys: [NumberKey; 2] = [
        ("spacing_rate", is_positive, "a positive number"),
        ("spacing_weight", is_weight, "a number in (0, 1]"),
    ];
    Ok(number_pair(path, meta_kv, keys)?.map(|[rate, weight]| SpacingMove { rate, weight }))
}
