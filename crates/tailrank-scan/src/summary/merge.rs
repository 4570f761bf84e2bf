//! Exact merge of summaries of disjoint pool shards (see [`Summary::merge`]).
//!
//! For disjoint pools A and B scanned against the same queries and core,
//! `S_ℓ(A ∪ B) = S_ℓ(A) + S_ℓ(B)`, `K_{j,ℓ}(A ∪ B) = K_{j,ℓ}(A) + K_{j,ℓ}(B)` and
//! `top_M(A ∪ B) = top_M(top_M(A) ∪ top_M(B))`, so merging the summaries of the shards gives
//! exactly the summary of the union.

use super::{InputRecord, Subset, Summary};
use crate::error::{Error, Result};
use std::collections::HashMap;

/// Role of the pool inputs in [`InputRecord::role`].
pub const POOL_ROLE: &str = "pool";

fn mismatch(i: usize, what: &str, a: impl std::fmt::Debug, b: impl std::fmt::Debug) -> Error {
    Error::mismatch(format!(
        "cannot merge: part {} differs from part 1 in {what} (part 1: {a:?}, part {}: {b:?}); \
         merge only summaries of the same queries, core, model and sampling settings",
        i + 1,
        i + 1
    ))
}

/// Merge two descending lists and keep the `m` largest (descending, `f32::total_cmp` order).
pub(super) fn merge_top(a: &[f32], b: &[f32], m: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(m.min(a.len() + b.len()));
    let (mut i, mut j) = (0, 0);
    while out.len() < m && (i < a.len() || j < b.len()) {
        let take_a = j >= b.len() || (i < a.len() && a[i].total_cmp(&b[j]).is_ge());
        if take_a {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out
}

fn non_pool(inputs: &[InputRecord]) -> Vec<(&str, &str)> {
    let mut v: Vec<(&str, &str)> = inputs
        .iter()
        .filter(|r| r.role != POOL_ROLE)
        .map(|r| (r.role.as_str(), r.digest.as_str()))
        .collect();
    v.sort_unstable();
    v
}

/// Pool inputs of part `i`, for messages: `"a.npy, b.npy"`.
fn pool_paths(p: &Summary) -> String {
    let v: Vec<&str> = p
        .inputs
        .iter()
        .filter(|r| r.role == POOL_ROLE)
        .map(|r| r.path.as_str())
        .collect();
    if v.is_empty() {
        "no pool input recorded".into()
    } else {
        v.join(", ")
    }
}

/// k-way merge of ascending id-hash lists into their sorted union, in one pass with a heap of
/// one cursor per list: memory is the output plus O(k), whatever N. A value present twice
/// (in two lists, or twice in one) is an overlap, returned as `Err((value, list a, list b))`
/// with `a ≤ b` the lists holding it.
fn union_disjoint(lists: &[&[u64]]) -> std::result::Result<Vec<u64>, (u64, usize, usize)> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let total: usize = lists.iter().map(|l| l.len()).sum();
    let mut out: Vec<u64> = Vec::with_capacity(total);
    let mut last: Option<(u64, usize)> = None;
    let mut heap: BinaryHeap<Reverse<(u64, usize, usize)>> = lists
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
        .map(|(i, l)| Reverse((l[0], i, 0)))
        .collect();
    while let Some(Reverse((v, li, at))) = heap.pop() {
        if let Some((w, lj)) = last {
            if w == v {
                return Err((v, lj.min(li), lj.max(li)));
            }
        }
        out.push(v);
        last = Some((v, li));
        if let Some(&next) = lists[li].get(at + 1) {
            heap.push(Reverse((next, li, at + 1)));
        }
    }
    Ok(out)
}

/// The union of the parts' pool fingerprints, refusing any hash in two parts (see
/// [`Summary::pool_id_hashes`]); `None` (with a warning per part) when a part has none.
fn merge_fingerprints(parts: &[Summary], warnings: &mut Vec<String>) -> Result<Option<Vec<u64>>> {
    let missing: Vec<String> = parts
        .iter()
        .enumerate()
        .filter(|(_, p)| p.pool_id_hashes.is_none())
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    if !missing.is_empty() {
        warnings.push(format!(
            "part(s) {} record no pool fingerprint (pool_id_hashes: summary format 1 or not \
             made by a scan): overlapping pools can only be detected by identical file \
             digests, not by content; the merged summary has no fingerprint",
            missing.join(", ")
        ));
        return Ok(None);
    }
    let lists: Vec<&[u64]> = parts
        .iter()
        .map(|p| p.pool_id_hashes.as_deref().unwrap_or_default())
        .collect();
    let merged = union_disjoint(&lists).map_err(|(v, j, i)| {
        Error::mismatch(format!(
            "cannot merge: overlapping pools: part {} ({}) and part {} ({}) both scanned a \
             pool id with xxh3 hash {v:016x} (the same pool rows in two parts, e.g. a shard \
             merged twice or re-encoded under another name); each pool item must be merged \
             once",
            j + 1,
            pool_paths(&parts[j]),
            i + 1,
            pool_paths(&parts[i])
        ))
    })?;
    Ok(Some(merged))
}

pub(super) fn merge(parts: &[Summary]) -> Result<(Summary, Vec<String>)> {
    let mut warnings = Vec::new();
    let first = parts
        .first()
        .ok_or_else(|| Error::option("cannot merge: no summaries given"))?;
    for (i, p) in parts.iter().enumerate() {
        p.check().map_err(|m| {
            Error::input_msg(format!("cannot merge: part {} is inconsistent: {m}", i + 1))
        })?;
    }
    // Everything that must agree.
    for (i, p) in parts.iter().enumerate().skip(1) {
        check_agrees(first, i, p)?;
    }
    // Pool inputs must be disjoint.
    check_pools_disjoint(parts)?;

    let fingerprint = merge_fingerprints(parts, &mut warnings)?;

    let l = first.subsets.len();
    let overflow = || Error::mismatch("cannot merge: counts overflow u64");
    let mut subset_sizes = vec![0u64; l];
    for p in parts {
        for (acc, s) in subset_sizes.iter_mut().zip(&p.subset_sizes) {
            *acc = acc.checked_add(*s).ok_or_else(overflow)?;
        }
    }
    let mut out = first.clone();
    for p in &parts[1..] {
        for (qa, qb) in out.queries.iter_mut().zip(&p.queries) {
            for (pa, pb) in qa.positives.iter_mut().zip(&qb.positives) {
                for (ka, kb) in pa.pool_above.iter_mut().zip(&pb.pool_above) {
                    *ka = ka.checked_add(*kb).ok_or_else(overflow)?;
                }
                if !pb.pool_ties.is_empty() {
                    pa.pool_ties.resize(l, 0);
                    for (ta, tb) in pa.pool_ties.iter_mut().zip(&pb.pool_ties) {
                        *ta = ta.checked_add(*tb).ok_or_else(overflow)?;
                    }
                }
            }
            for ((ta, tb), sub) in qa
                .top_scores
                .iter_mut()
                .zip(&qb.top_scores)
                .zip(&first.subsets)
            {
                *ta = merge_top(ta, tb, sub.kept(first.top_m));
            }
        }
    }
    out.subset_sizes = subset_sizes;
    out.pool_id_hashes = fingerprint;
    // Parts read from older format versions hold the same content in memory; the merged
    // summary is of this version.
    out.format_version = crate::summary::SUMMARY_FORMAT_VERSION;
    // Ties are known only when every part counted them; otherwise they are dropped.
    out.ties_known = parts.iter().all(|p| p.ties_known);
    if !out.ties_known {
        let untied: Vec<String> = parts
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.ties_known)
            .map(|(i, p)| format!("{} (format version {})", i + 1, p.format_version))
            .collect();
        warnings.push(format!(
            "part(s) {} have no tie counts, so the merged summary has none either: ties \
             unknown (a non-relevant item scoring exactly a positive's score is treated as \
             ranked below it; only a rescan with this tailrank counts the ties)",
            untied.join(", ")
        ));
        for p in out.queries.iter_mut().flat_map(|q| q.positives.iter_mut()) {
            p.core_ties = 0;
            p.pool_ties.iter_mut().for_each(|t| *t = 0);
        }
    }
    out.tool_version = crate::TOOL_VERSION.to_string();
    out.inputs = first
        .inputs
        .iter()
        .filter(|r| r.role != POOL_ROLE)
        .chain(
            parts
                .iter()
                .flat_map(|p| p.inputs.iter().filter(|r| r.role == POOL_ROLE)),
        )
        .cloned()
        .collect();

    // Pool size N.
    out.pool_size = merged_pool_size(parts, out.subset_sizes[0])?;
    // The parts were checked and adding counts / merging top lists keeps every invariant
    // except possibly N ≥ S_0.
    if let Some(n) = out.pool_size {
        if n < out.subset_sizes[0] {
            return Err(Error::mismatch(format!(
                "cannot merge: pool size N = {n} is smaller than the {} pool items of the \
                 merged shards (S_0)",
                out.subset_sizes[0]
            )));
        }
    }
    Ok((out, warnings))
}

/// The first subset in which part `i` (`p`) differs from the first part, in words.
fn subsets_mismatch(first: &Summary, i: usize, p: &Summary) -> Error {
    let describe = |s: &Subset| {
        format!(
            "{:?} at fraction {} over hash [{}, {}), M {:?}",
            s.kind, s.fraction, s.range.lo, s.range.hi, s.top_m
        )
    };
    let (lo_1, lo_p) = (first.subsets[0].range.lo, p.subsets[0].range.lo);
    let what = if lo_1 != lo_p {
        // Level 0 starts elsewhere: increments of other `--after`, or an increment and a
        // whole sample.
        let after = |lo: u64| lo as f64 / 2f64.powi(64);
        format!(
            "part 1 is the increment above fraction {} and part {} the one above {} (scanned \
             with other --after: increments merge only with increments of the same range)",
            after(lo_1),
            i + 1,
            after(lo_p)
        )
    } else if p.subsets.len() != first.subsets.len() {
        format!(
            "part 1 has {} subsets and part {} has {} (other --min-fraction or \
             --drift-shards?)",
            first.subsets.len(),
            i + 1,
            p.subsets.len()
        )
    } else {
        let (j, (a, b)) = first
            .subsets
            .iter()
            .zip(&p.subsets)
            .enumerate()
            .find(|(_, (a, b))| a != b)
            .expect("the subsets differ");
        format!(
            "subset {j} is {} in part 1 and {} in part {}",
            describe(a),
            describe(b),
            i + 1
        )
    };
    Error::mismatch(format!(
        "cannot merge: {what}; merge only summaries scanned with the same sampling settings"
    ))
}

/// [`merge`]: part `i` (`p`) agrees with the first part in everything but its pool: model,
/// query set, sampling settings, M, subsets, core, non-pool inputs, and per query its
/// positives with their scores, core ties and `C_j`.
fn check_agrees(first: &Summary, i: usize, p: &Summary) -> Result<()> {
    let increment = |s: &Summary| s.increment_range().is_some();
    if increment(p) != increment(first) {
        let which = if increment(p) { i + 1 } else { 1 };
        return Err(Error::mismatch(format!(
            "cannot merge: part {which} is a sample increment (scan --after) and the other a \
             whole sample: grow the base with the increment (`tailrank grow`) instead"
        )));
    }
    if p.model != first.model {
        return Err(mismatch(i, "model", &first.model, &p.model));
    }
    if p.query_set != first.query_set {
        return Err(mismatch(i, "query set", &first.query_set, &p.query_set));
    }
    if p.fraction.to_bits() != first.fraction.to_bits() {
        return Err(mismatch(
            i,
            "sampling fraction f",
            first.fraction,
            p.fraction,
        ));
    }
    if p.seed != first.seed {
        return Err(mismatch(i, "seed", first.seed, p.seed));
    }
    if p.top_m != first.top_m {
        return Err(mismatch(i, "M (top-M size)", first.top_m, p.top_m));
    }
    if p.subsets != first.subsets {
        return Err(subsets_mismatch(first, i, p));
    }
    if p.core_size != first.core_size {
        return Err(mismatch(i, "core size", first.core_size, p.core_size));
    }
    let (a, b) = (non_pool(&first.inputs), non_pool(&p.inputs));
    if a != b {
        // The first input that differs, by role: the same role with another digest, or a
        // role only one part has.
        let (ra, rb) = (
            a.iter().find(|x| !b.contains(x)),
            b.iter().find(|x| !a.contains(x)),
        );
        let (role, da, db) = match (ra, rb) {
            (Some(x), Some(y)) if x.0 == y.0 => (x.0, x.1, y.1),
            (Some(x), _) => (x.0, x.1, "none"),
            (None, Some(y)) => (y.0, "none", y.1),
            (None, None) => ("inputs", "", ""),
        };
        return Err(Error::mismatch(format!(
            "cannot merge: part {} was scanned from another {} than part 1 (digest {da} \
             against {db}); merge only summaries of the same queries, core and ground truth",
            i + 1,
            role.replace('_', " ")
        )));
    }
    if p.queries.len() != first.queries.len() {
        return Err(mismatch(
            i,
            "number of queries",
            first.queries.len(),
            p.queries.len(),
        ));
    }
    for (qa, qb) in first.queries.iter().zip(&p.queries) {
        if qa.id != qb.id {
            return Err(mismatch(i, "query ids", &qa.id, &qb.id));
        }
        if qa.positives.len() != qb.positives.len() {
            return Err(mismatch(
                i,
                &format!("number of positives of query {:?}", qa.id),
                qa.positives.len(),
                qb.positives.len(),
            ));
        }
        for (pa, pb) in qa.positives.iter().zip(&qb.positives) {
            if pa.id != pb.id {
                return Err(mismatch(
                    i,
                    &format!("positives of query {:?}", qa.id),
                    &pa.id,
                    &pb.id,
                ));
            }
            if pa.score.to_bits() != pb.score.to_bits() {
                return Err(mismatch(
                    i,
                    &format!("score of positive {:?} of query {:?}", pa.id, qa.id),
                    pa.score,
                    pb.score,
                ));
            }
            if pa.core_ties != pb.core_ties && first.ties_known && p.ties_known {
                return Err(mismatch(
                    i,
                    &format!("core ties of positive {:?} of query {:?}", pa.id, qa.id),
                    pa.core_ties,
                    pb.core_ties,
                ));
            }
            if pa.core_above != pb.core_above {
                return Err(mismatch(
                    i,
                    &format!("C_j of positive {:?} of query {:?}", pa.id, qa.id),
                    pa.core_above,
                    pb.core_above,
                ));
            }
        }
    }
    Ok(())
}

/// [`merge`]: no pool input (by digest) appears in two parts.
fn check_pools_disjoint(parts: &[Summary]) -> Result<()> {
    let mut seen: HashMap<&str, (usize, &str)> = HashMap::new();
    for (i, p) in parts.iter().enumerate() {
        for r in p.inputs.iter().filter(|r| r.role == POOL_ROLE) {
            if let Some((j, path)) = seen.insert(r.digest.as_str(), (i, r.path.as_str())) {
                return Err(Error::mismatch(format!(
                    "cannot merge: overlapping shards: pool input {} (part {}) and {path} \
                     (part {}) have the same digest {}; each pool shard must be merged once",
                    r.path,
                    i + 1,
                    j + 1,
                    r.digest
                )));
            }
        }
    }
    Ok(())
}

/// [`merge`]: N of the merged summary (`s0`: its S_0). Shards of an exact scan (f = 1, each
/// with N = S_0 or none) give `s0` when any recorded N; otherwise every N recorded must agree.
fn merged_pool_size(parts: &[Summary], s0: u64) -> Result<Option<u64>> {
    let shard_exact = parts.iter().all(|p| {
        crate::sample::is_exact_fraction(p.fraction)
            && p.pool_size.is_none_or(|n| n == p.subset_sizes[0])
    });
    let known: Vec<(usize, u64)> = parts
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.pool_size.map(|n| (i, n)))
        .collect();
    Ok(if parts.len() > 1 && shard_exact {
        (!known.is_empty()).then_some(s0)
    } else {
        if let Some(&(i, n)) = known.iter().find(|(_, n)| *n != known[0].1) {
            return Err(Error::mismatch(format!(
                "cannot merge: part {} and part {} give different pool sizes N ({} vs {n}); \
                 scan every shard with the same pool size N (the size of the whole pool)",
                known[0].0 + 1,
                i + 1,
                known[0].1
            )));
        }
        known.first().map(|&(_, n)| n)
    })
}

#[cfg(test)]
mod tests {
    use super::{merge_top, union_disjoint};

    #[test]
    fn union_of_disjoint_sorted_lists() {
        assert_eq!(
            union_disjoint(&[&[1, 4, 9], &[2, 3, 10]]),
            Ok(vec![1, 2, 3, 4, 9, 10])
        );
        assert_eq!(union_disjoint(&[&[], &[5]]), Ok(vec![5]));
        assert_eq!(union_disjoint(&[&[1, 5, 7], &[2, 7]]), Err((7, 0, 1)));
        // Three lists against their sorted concatenation; an overlap of lists 0 and 2.
        let (a, b, c): (Vec<u64>, Vec<u64>, Vec<u64>) = (
            (0..300).map(|i| 3 * i).collect(),
            (0..300).map(|i| 3 * i + 1).collect(),
            (0..300).map(|i| 3 * i + 2).collect(),
        );
        let mut all = [a.clone(), b.clone(), c.clone()].concat();
        all.sort_unstable();
        assert_eq!(union_disjoint(&[&a, &b, &c]), Ok(all));
        let c2: Vec<u64> = c.iter().map(|&x| if x == 602 { 600 } else { x }).collect();
        assert_eq!(union_disjoint(&[&a, &b, &c2]), Err((600, 0, 2)));
        assert_eq!(union_disjoint(&[&[4, 4]]), Err((4, 0, 0)));
    }

    #[test]
    fn merge_top_keeps_m_largest() {
        assert_eq!(
            merge_top(&[5.0, 3.0, 1.0], &[4.0, 3.0, 2.0], 4),
            vec![5.0, 4.0, 3.0, 3.0]
        );
        assert_eq!(merge_top(&[1.0], &[], 4), vec![1.0]);
        assert_eq!(merge_top(&[], &[2.0, 1.0], 1), vec![2.0]);
    }
}
