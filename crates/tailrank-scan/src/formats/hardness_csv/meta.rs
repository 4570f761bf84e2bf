//! The metadata lines of the hardness artifact (`# key: value`, `docs/reference/hardness.md`),
//! read into a [`HardnessMeta`]: the required keys, the format version, the numbers and the
//! excess move.

use super::{missing_names, Expected, HARDNESS_FORMAT_VERSION};
use crate::error::{Error, Result};
use crate::hardness::{ExcessMove, HardnessMeta, HitScales, SpacingMove};
use std::path::Path;

/// The metadata of the file from its `# key: value` lines (`meta_kv`: key, value, line; the
/// last of a repeated key counts): the required keys, the format version, the numbers and
/// the excess move.
pub(super) fn hardness_meta(
    path: &Path,
    meta_kv: &[(String, String, usize)],
) -> Result<HardnessMeta> {
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
    if let Some((_, v, ln)) = meta_get("format_version") {
        let ver: u32 = v.parse().map_err(|_| {
            Error::input(
                path,
                format!("line {ln}: format_version {v:?} is not a number"),
            )
        })?;
        if ver > HARDNESS_FORMAT_VERSION {
            return Err(Error::unsupported(
                path,
                format!(
                    "line {ln}: format_version {ver} is newer than this tool reads \
                     ({HARDNESS_FORMAT_VERSION})"
                ),
            ));
        }
    }
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
    let fraction: f64 = v.parse().map_err(|_| bad("fraction", &v, ln, f64::WHAT))?;
    let (v, ln) = parse_meta("seed")?;
    let seed: u64 = v.parse().map_err(|_| bad("seed", &v, ln, u64::WHAT))?;
    let pool_size = match meta_get("pool_size") {
        None => None,
        Some((_, v, _)) if v.is_empty() || v == "unknown" => None,
        Some((_, v, ln)) => Some(
            v.parse::<u64>()
                .map_err(|_| bad("pool_size", v, *ln, u64::WHAT))?,
        ),
    };
    let excess_move =
        match (meta_get("excess_rate"), meta_get("excess_weight")) {
            (None, None) => match meta_get("excess_decay").or(meta_get("excess_pool_size")) {
                None => None,
                Some((k, _, ln)) => {
                    return Err(Error::input(
                        path,
                        format!("line {ln}: metadata {k} without excess_rate and excess_weight"),
                    ))
                }
            },
            (Some((_, r, ln)), Some((_, w, lw))) => {
                let rate: f64 = r
                    .parse()
                    .ok()
                    .filter(|x: &f64| x.is_finite() && *x > 0.0)
                    .ok_or_else(|| bad("excess_rate", r, *ln, "a positive number"))?;
                let weight: f64 = w
                    .parse()
                    .ok()
                    .filter(|x: &f64| *x > 0.0 && *x <= 1.0)
                    .ok_or_else(|| bad("excess_weight", w, *lw, "a number in (0, 1]"))?;
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
            (Some((k, _, ln)), None) | (None, Some((k, _, ln))) => {
                return Err(Error::input(
                    path,
                    format!(
                        "line {ln}: metadata {k} without its pair (excess_rate and excess_weight \
                     come together)"
                    ),
                ))
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
        estimator: meta_num("estimator")?,
        tool_version: meta_num("tool_version")?,
    })
}

/// The values of the metadata pair `a`, `b` with their line numbers: None when both are
/// absent, an error naming the file when one comes without the other.
fn meta_pair<'m>(
    path: &Path,
    meta_kv: &'m [(String, String, usize)],
    a: &str,
    b: &str,
) -> Result<Option<[(&'m str, usize); 2]>> {
    let get = |k: &str| meta_kv.iter().rev().find(|(key, _, _)| key == k);
    match (get(a), get(b)) {
        (None, None) => Ok(None),
        (Some((_, va, la)), Some((_, vb, lb))) => Ok(Some([(va, *la), (vb, *lb)])),
        (Some((k, _, ln)), None) | (None, Some((k, _, ln))) => Err(Error::input(
            path,
            format!("line {ln}: metadata {k} without its pair ({a} and {b} come together)"),
        )),
    }
}

/// Metadata value `v` of key `k` (line `ln`) as a number that `valid` accepts, or an error
/// saying it is not `what`.
fn meta_number(
    path: &Path,
    (k, (v, ln)): (&str, (&str, usize)),
    valid: impl Fn(f64) -> bool,
    what: &str,
) -> Result<f64> {
    v.parse().ok().filter(|x: &f64| valid(*x)).ok_or_else(|| {
        Error::input(
            path,
            format!("line {ln}: metadata {k}: {v:?} is not {what}"),
        )
    })
}

/// The `hit_tail_scale` and `hit_immune_scale` pair ([`HitScales`]), None when both are absent.
fn hit_scales(path: &Path, meta_kv: &[(String, String, usize)]) -> Result<Option<HitScales>> {
    let Some([t, i]) = meta_pair(path, meta_kv, "hit_tail_scale", "hit_immune_scale")? else {
        return Ok(None);
    };
    Ok(Some(HitScales {
        tail: meta_number(
            path,
            ("hit_tail_scale", t),
            |x| x.is_finite() && x > 0.0,
            "a positive number",
        )?,
        immune: meta_number(
            path,
            ("hit_immune_scale", i),
            |x| (0.0..=1.0).contains(&x),
            "a number in [0, 1]",
        )?,
    }))
}

/// The `spacing_rate` and `spacing_weight` pair ([`SpacingMove`]), None when both are absent.
fn spacing_move(path: &Path, meta_kv: &[(String, String, usize)]) -> Result<Option<SpacingMove>> {
    let Some([r, w]) = meta_pair(path, meta_kv, "spacing_rate", "spacing_weight")? else {
        return Ok(None);
    };
    Ok(Some(SpacingMove {
        rate: meta_number(
            path,
            ("spacing_rate", r),
            |x| x.is_finite() && x > 0.0,
            "a positive number",
        )?,
        weight: meta_number(
            path,
            ("spacing_weight", w),
            |x| x > 0.0 && x <= 1.0,
            "a number in (0, 1]",
        )?,
    }))
}
