//! Growing a sample summary by a scan of its increment ([`Summary::grow`],
//! docs/reference/summary-format.md "Growing a sample").
//!
//! The base covers the hash range `B = [0, t(f_b))`, the part (a scan with `after = f_b`) the
//! increment `P = [t(f_b), t(f))`. A subset `G` of the grown summary (the subsets of a direct
//! scan at f) is the disjoint union of `G ∩ B` and `G ∩ P`; when each of the two is an exact
//! union of subsets of its summary (a tiling), counts and sizes add and the top-`M_G` list is
//! the `M_G` largest of the pieces' lists (each keeping at least `M_G`, or all its items):
//! every grown subset then holds what a direct scan gives over its hash range. The subsets are
//! a direct scan's at f, with the boundaries below `t(f_b)` that the base lacks moved onto the
//! base's ([`grown_subsets`]; none moves when `f = 2^k f_b`, and the summary is the direct
//! scan's). When a subset has no such tiling, growing refuses.

use super::merge::{merge, merge_top};
use super::Summary;
use crate::error::{Error, Result};
use crate::sample::HashRange;
use crate::scan::config::subsets;
use crate::summary::{Subset, SubsetKind, SUMMARY_FORMAT_VERSION};
use std::collections::{HashMap, VecDeque};
use std::path::Path;

/// The fewest subsets of `s` (among those `usable`) whose ranges tile `[lo, end)` end to end,
/// in order; breadth-first over the range boundaries (levels nest and shards slice level 0, so
/// subsets overlap).
fn tiling(
    s: &Summary,
    (lo, end): (u128, u128),
    usable: impl Fn(usize) -> bool,
) -> Option<Vec<usize>> {
    let bounds: Vec<(u128, u128)> = s.subsets.iter().map(|x| x.range.bounds()).collect();
    let mut reached_by: HashMap<u128, usize> = HashMap::new();
    let mut queue = VecDeque::from([lo]);
    while let Some(at) = queue.pop_front() {
        if at == end {
            let mut chain = Vec::new();
            let mut b = end;
            while b != lo {
                let i = reached_by[&b];
                chain.push(i);
                b = bounds[i].0;
            }
            chain.reverse();
            return Some(chain);
        }
        for (i, &(a, b)) in bounds.iter().enumerate() {
            if a == at && b <= end && !reached_by.contains_key(&b) && usable(i) {
                reached_by.insert(b, i);
                queue.push_back(b);
            }
        }
    }
    None
}

/// `s` expressed on the subsets `targets`: target `G` holds the items of `s` in `G ∩ R`, `R`
/// being the range of `s`'s level 0 (sizes, counts and ties summed over a tiling of `G ∩ R`,
/// top lists merged). `role` names `s` in errors.
fn restrict(s: &Summary, targets: &[Subset], role: &str, cuts_one_off: bool) -> Result<Summary> {
    let cover = s.subsets[0].range;
    let mut chains: Vec<Vec<usize>> = Vec::with_capacity(targets.len());
    for (gi, g) in targets.iter().enumerate() {
        let Some(piece) = g.range.intersect(&cover) else {
            chains.push(Vec::new());
            continue;
        };
        let m = g.kept(s.top_m);
        let usable = |i: usize| {
            s.subsets[i].kept(s.top_m) >= m
                || s.queries
                    .iter()
                    .all(|q| q.top_scores[i].len() as u64 == s.subset_sizes[i])
        };
        // Growing by a power of 2 to the whole pool, whose range ends at 2^64 − 1 (inclusive),
        // keeps shard cuts one hash below the base's: no increment scan can fix that.
        let fix = if cuts_one_off && g.kind == SubsetKind::Shard {
            "growing to f = 1 with drift shards cannot be exact (the whole pool's shard cuts \
             lie one hash below the base's): scan the base and the increment with \
             --drift-shards 0, or scan the whole pool directly"
        } else {
            "scan the increment with the base's --drift-shards and --top-m and the default \
             --min-fraction, from a base with levels down to f/2^(L-1) (L its number of \
             levels), or scan the larger sample directly"
        };
        let chain = tiling(s, piece.bounds(), usable).ok_or_else(|| {
            Error::mismatch(format!(
                "cannot grow: subset {gi} of the grown summary ({} at fraction {}, hash range \
                 [{}, {})) needs the items of {role} in hash range [{}, {}), which is not a \
                 union of {role}'s subsets (keeping at least {m} top scores): {fix}",
                match g.kind {
                    SubsetKind::Level => "level",
                    SubsetKind::Shard => "drift shard",
                },
                g.fraction,
                g.range.lo,
                g.range.hi,
                piece.lo,
                piece.hi
            ))
        })?;
        chains.push(chain);
    }
    let sum = |v: &[u64]| -> Vec<u64> {
        chains
            .iter()
            .map(|c| c.iter().map(|&i| v[i]).sum())
            .collect()
    };
    let mut out = s.clone();
    out.subsets = targets.to_vec();
    out.subset_sizes = sum(&s.subset_sizes);
    for (q, src) in out.queries.iter_mut().zip(&s.queries) {
        q.top_scores = targets
            .iter()
            .zip(&chains)
            .map(|(g, chain)| {
                chain.iter().fold(Vec::new(), |acc, &i| {
                    merge_top(&acc, &src.top_scores[i], g.kept(s.top_m))
                })
            })
            .collect();
        for p in &mut q.positives {
            p.pool_above = sum(&p.pool_above);
            if !p.pool_ties.is_empty() {
                p.pool_ties = sum(&p.pool_ties);
            }
        }
    }
    out.format_version = SUMMARY_FORMAT_VERSION;
    Ok(out)
}

/// Whether two hash boundaries are the same up to the rounding of `t(f) = ⌊f·2^64⌋` and of
/// the shard split (relative 10^-9): such a boundary of a direct scan is the base's. For
/// `f = 2^k f_b` it is kept (equal to the base's, or one off below `f_b = 2^-11`, which is
/// refused); for other factors it takes the base's value (for `f = 3 f_b` the shard cut at
/// `f/4` and the base's at `3 f_b/4` differ by the rounding).
fn near(a: u64, b: u64) -> bool {
    (a as f64 - b as f64).abs() <= 1e-9 * a.max(b) as f64
}

/// The grown summary's subsets: those of a direct scan at f with the base's L, H and M
/// (levels `[0, t(f/2^ℓ))`, H equal shards of `[0, t(f))`), except that below `t(f_b)` a
/// boundary the base does not hold is moved onto one it holds (docs/reference/summary-format.md,
/// "Which factors"): level ℓ becomes the base level nearest `f/2^ℓ` by ratio (below grown
/// level ℓ − 1; the smaller on a tie), a shard cut the nearest base shard boundary, the base's
/// end `t(f_b)` included (the lower on a tie).
/// Boundaries at or above `t(f_b)` are the part's and stay. For `f = 2^k f_b` nothing
/// moves: the subsets are the direct scan's.
fn grown_subsets(base: &Summary, f: f64) -> Result<Vec<Subset>> {
    let levels = base.level_indices();
    let shards = base.shard_indices();
    let min_fraction = f / (1u64 << (levels.len() - 1)) as f64;
    let direct = subsets(f, min_fraction, shards.len(), base.top_m)?;
    let end_b = base.subsets[0].range.hi;
    let doublings = (f / base.fraction).log2();
    let snap = (doublings - doublings.round()).abs() > 1e-9;
    let base_levels: Vec<&Subset> = levels.iter().map(|&i| &base.subsets[i]).collect();
    let mut out: Vec<Subset> = Vec::with_capacity(direct.len());
    for s in direct.iter().filter(|s| s.kind == SubsetKind::Level) {
        let x = s.range.hi;
        let below = out.last().map_or(u64::MAX, |p: &Subset| p.range.hi);
        let same = base_levels.iter().find(|b| near(b.range.hi, x));
        let moved = match same {
            _ if x >= end_b => None,
            Some(b) => Some(b).filter(|b| snap && b.range != s.range),
            None => {
                let off = |b: &&&Subset| (b.range.hi as f64 / x as f64).ln().abs();
                base_levels
                    .iter()
                    .filter(|b| b.range.hi < below)
                    .min_by(|a, b| off(a).total_cmp(&off(b)).then(a.range.hi.cmp(&b.range.hi)))
            }
        };
        out.push(moved.map_or_else(|| s.clone(), |b| (*b).clone()));
    }
    let direct_shards: Vec<&Subset> = direct
        .iter()
        .filter(|s| s.kind == SubsetKind::Shard)
        .collect();
    let mut base_cuts: Vec<u64> = shards.iter().map(|&i| base.subsets[i].range.hi).collect();
    base_cuts.sort_unstable();
    let mut cuts: Vec<u64> = direct_shards.iter().map(|s| s.range.lo).collect();
    for i in 1..cuts.len() {
        let c = cuts[i];
        if c >= end_b {
            continue;
        }
        if let Some(b) = base_cuts.iter().copied().find(|&b| near(b, c)) {
            if snap {
                cuts[i] = b;
            }
            continue;
        }
        let nearest = base_cuts
            .iter()
            .copied()
            .filter(|&b| b > cuts[i - 1])
            .min_by_key(|&b| (b.abs_diff(c), b));
        if let Some(b) = nearest.filter(|&b| b <= end_b) {
            cuts[i] = b;
        }
    }
    for (i, s) in direct_shards.iter().enumerate() {
        let range = HashRange {
            lo: cuts[i],
            hi: cuts.get(i + 1).copied().unwrap_or(s.range.hi),
        };
        out.push(if range == s.range {
            (*s).clone()
        } else {
            Subset {
                fraction: range.width_fraction(),
                range,
                ..(*s).clone()
            }
        });
    }
    Ok(out)
}

/// The range of `s`'s level 0, for messages: `[lo, hi)`.
fn level0(s: &Summary) -> String {
    let r = s.subsets[0].range;
    format!("[{}, {})", r.lo, r.hi)
}

/// How far the base's share of the grown sample may lie from its share of the hash range
/// before [`check_same_density`] refuses: the larger of `DENSITY_SDS` binomial sds and
/// `DENSITY_ITEMS` items.
const DENSITY_SDS: f64 = 5.0;
const DENSITY_ITEMS: f64 = 5.0;

/// The base and the increment must be samples of one pool: given their `T = S_b + S_p` items,
/// a uniform hash puts `S_b ~ Bin(T, q)` in the base, `q = w_b/(w_b + w_p)` its share of the
/// two level-0 hash widths. A base scanned over part of the pool (one shard) and an increment
/// over all of it (or the reverse) fail this by many sds and would grow into a summary whose
/// exact metrics are wrong.
fn check_same_density(base: &Summary, part: &Summary) -> Result<()> {
    let width = |s: &Summary| {
        let r = s.subsets[0].range;
        (r.hi - r.lo) as f64
    };
    let (sb, sp) = (base.subset_sizes[0] as f64, part.subset_sizes[0] as f64);
    let t = sb + sp;
    let q = width(base) / (width(base) + width(part));
    let off = sb - t * q;
    let sd = (t * q * (1.0 - q)).sqrt();
    if off.abs() > (DENSITY_SDS * sd).max(DENSITY_ITEMS) {
        return Err(Error::mismatch(format!(
            "cannot grow: the base holds {} sampled items and the increment {}, where samples of \
             one pool would split them about {:.0} to {:.0} (by their hash widths; {:.1} sds \
             apart): both must be scanned over the same pool rows (a base from one shard and an \
             increment from the whole pool grow into wrong metrics)",
            base.subset_sizes[0],
            part.subset_sizes[0],
            t * q,
            t * (1.0 - q),
            off.abs() / sd.max(f64::MIN_POSITIVE)
        )));
    }
    Ok(())
}

pub(super) fn grow(base: &Summary, part: &Summary) -> Result<(Summary, Vec<String>)> {
    for (s, role) in [(base, "the base"), (part, "the increment")] {
        s.check()
            .map_err(|m| Error::input_msg(format!("cannot grow: {role} is inconsistent: {m}")))?;
    }
    let (b0, p0) = (base.subsets[0].range, part.subsets[0].range);
    if b0.lo != 0 && p0.lo == 0 {
        return Err(Error::mismatch(format!(
            "cannot grow: the two summaries are given in the wrong order (the first is an \
             increment, hash range {}; the second a whole sample at fraction {}): tailrank grow \
             BASE PART",
            level0(base),
            part.fraction
        )));
    }
    if b0.lo != 0 {
        return Err(Error::mismatch(format!(
            "cannot grow: the base is itself an increment (its level 0 is hash range {}): grow \
             its own base with it first",
            level0(base)
        )));
    }
    if p0.lo == 0 {
        return Err(Error::mismatch(format!(
            "cannot grow: the second summary is not an increment (its level 0 starts at hash 0, \
             fraction {}): scan the increment with --fraction F --after {} (summaries of \
             disjoint pool shards are combined with merge)",
            part.fraction, base.fraction
        )));
    }
    if part.top_m != base.top_m {
        return Err(Error::mismatch(format!(
            "cannot grow: the base keeps M = {} top scores per query and subset and the \
             increment M = {}: scan the increment with the base's --top-m",
            base.top_m, part.top_m
        )));
    }
    if part.seed != base.seed {
        return Err(Error::mismatch(format!(
            "cannot grow: the base has seed {} and the increment seed {}: both must be scanned \
             with the same --seed",
            base.seed, part.seed
        )));
    }
    if b0.hi == u64::MAX {
        return Err(Error::mismatch(
            "cannot grow: the base was scanned at fraction 1 (every pool row it read), which no \
             increment can grow: its metrics are exact (`tailrank eval --summary`), or, for one \
             shard of the pool, once the other shards are merged (`tailrank merge`)",
        ));
    }
    if p0.lo != b0.hi {
        return Err(Error::mismatch(format!(
            "cannot grow: the increment covers hash range {} (after ≈ {}), but the base's \
             sample at fraction {} ends at hash {}: scan the increment with --after {}",
            level0(part),
            p0.lo as f64 / 18_446_744_073_709_551_616.0,
            base.fraction,
            b0.hi,
            base.fraction
        )));
    }
    check_same_density(base, part)?;
    let f = part.fraction;
    let grown = grown_subsets(base, f)?;
    // f = 2^k f_b up to f = 1 keeps the direct scan's shard cuts, one below the base's.
    let doublings = (f / base.fraction).log2();
    let cuts_one_off = f >= 1.0 && (doublings - doublings.round()).abs() < 1e-9;
    let mut b = restrict(base, &grown, "the base", cuts_one_off)?;
    let mut p = restrict(part, &grown, "the increment", cuts_one_off)?;
    b.fraction = f;
    p.fraction = f;
    let (mut out, warnings) = merge(&[b, p]).map_err(|e| {
        Error::mismatch(format!(
            "cannot grow: the base (part 1) and the increment (part 2) do not fit together: {e}"
        ))
    })?;
    if crate::sample::is_exact_fraction(f) && out.pool_size.is_none() {
        // The grown sample is the whole pool, as a direct exact scan records it.
        out.pool_size = Some(out.subset_sizes[0]);
    }
    Ok((out, warnings))
}

impl Summary {
    /// The hash range of a part (a scan of a sample increment, `scan --after`): its level 0
    /// `[t(after), t(f))`; `None` for a summary of a whole sample (level 0 from hash 0).
    pub fn increment_range(&self) -> Option<HashRange> {
        self.subsets.first().map(|s| s.range).filter(|r| r.lo > 0)
    }

    /// Grow the summary `base` of the sample at `f_b` by `part`, the summary of the increment
    /// `[t(f_b), t(f))` (`scan --fraction f --after f_b`), into the summary of the sample at f:
    /// the subsets of a direct scan at f with the base's numbers of levels and drift shards and
    /// its M (levels f, f/2, …; the shards re-sliced over `[0, t(f))`), except that a level
    /// or shard boundary below `t(f_b)` that the base does not hold is moved onto the base's
    /// (the base level nearest by ratio, the nearest base shard boundary to a cut). Each
    /// grown subset's items in the base and in the increment must be a union of subsets of
    /// that summary (true when the increment was scanned with the base's shards and M and the
    /// base has the levels); then sizes, counts and ties add and top lists merge: every
    /// subset holds exactly what a direct scan gives over its hash range. When `f = 2^k · f_b`
    /// nothing moves and the result equals a direct scan at f except for the input records
    /// (the base's and the increment's pool files).
    /// The base and the increment must agree as merge parts do ([`Summary::merge`]), their
    /// fingerprints must be disjoint; N is the base's and the increment's (when both give one,
    /// the same), or S_0 when f = 1 and neither gives one.
    pub fn grow(base: &Summary, part: &Summary) -> Result<Summary> {
        grow(base, part).map(|(s, _)| s)
    }

    /// [`Summary::grow`], also returning the merge's warnings (a side without a pool
    /// fingerprint or tie counts).
    pub fn grow_with_warnings(base: &Summary, part: &Summary) -> Result<(Summary, Vec<String>)> {
        grow(base, part)
    }

    /// Read the summary folders `base` and `part` and grow the first by the second
    /// ([`Summary::grow_with_warnings`]), as `tailrank grow` does: warnings go to `warn`; an
    /// error names the folders.
    pub fn grow_folders(base: &Path, part: &Path, mut warn: impl FnMut(String)) -> Result<Summary> {
        let mut read = |dir: &Path| {
            let (s, warnings) = Summary::read_with_warnings(dir).map_err(|e| {
                Error::new(e.kind(), format!("reading summary {}: {e}", dir.display()))
            })?;
            warnings.into_iter().for_each(&mut warn);
            Ok::<_, Error>(s)
        };
        let (b, p) = (read(base)?, read(part)?);
        let (grown, warnings) = grow(&b, &p).map_err(|e| {
            Error::new(
                e.kind(),
                format!("growing {} by {}: {e}", base.display(), part.display()),
            )
        })?;
        warnings.into_iter().for_each(warn);
        Ok(grown)
    }
}
