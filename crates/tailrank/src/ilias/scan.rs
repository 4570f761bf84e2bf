//! The ILIAS scan: both query sets in one pass over the distractor shards (`scan_sets`),
//! resumable or not, after the id checks of the `ids` module.

use crate::error::{Error, Result};
use crate::formats::descriptors::DescriptorSource;
use crate::formats::gt::QuerySet;
use crate::formats::hdf5::Hdf5Descriptors;
use crate::scan::engine::{scan_sets, NoProgress, PoolScan, Progress, QuerySetInput, ScanConfig};
use crate::scan::resume::{scan_sets_resumable, ResumeOptions, ResumeReport};
use crate::selected::{SelectedIds, SubsetSource};
use crate::summary::{ground_truth_record, Summary, POOL_ROLE};
use std::path::Path;

use super::ids::{check_ids_exact, DistractorList};
use super::layout::{FeatureFiles, IliasDataset};

/// Scan the chosen query sets of an ILIAS dataset in one pass over the distractors (the sets
/// are query sets of one scan, [`scan_sets`]: the pool is read once for all of them). Checks
/// every feature file's ids first (see [`check_ids_exact`], [`DistractorList::check_features`]).
/// `cfg.pool_size` is set to N, the length of the distractor list. Returns one summary per set,
/// in the order of `sets`.
pub fn scan_ilias(
    ds: &IliasDataset,
    feats: &FeatureFiles,
    sets: &[&str],
    cfg: &ScanConfig,
    progress: &dyn Progress,
) -> Result<Vec<Summary>> {
    scan_ilias_with(ds, feats, sets, cfg, |q, core, pool, cfg| {
        scan_sets(q, core, pool, cfg, progress)
    })
}

/// [`scan_ilias`] chunk by chunk with a partial folder, as `tailrank scan` does
/// ([`scan_sets_resumable`]): an interrupted scan resumes from its finished chunks. Returns the
/// summaries (identical to [`scan_ilias`]'s) and what was reused; the caller removes the
/// partial folder ([`crate::scan::resume::remove_partial`]) once they are written.
pub fn scan_ilias_resumable(
    ds: &IliasDataset,
    feats: &FeatureFiles,
    sets: &[&str],
    cfg: &ScanConfig,
    opts: &ResumeOptions,
    progress: &dyn Progress,
) -> Result<(Vec<Summary>, ResumeReport)> {
    let mut report = ResumeReport::default();
    let summaries = scan_ilias_with(ds, feats, sets, cfg, |q, core, pool, cfg| {
        let (out, r) = scan_sets_resumable(q, core, pool, cfg, opts, progress)?;
        report = r;
        Ok(out)
    })?;
    Ok((summaries, report))
}

/// The ILIAS scan around `run`, which scans the query sets over the distractors.
fn scan_ilias_with(
    ds: &IliasDataset,
    feats: &FeatureFiles,
    sets: &[&str],
    cfg: &ScanConfig,
    run: impl FnOnce(
        &[QuerySetInput],
        &dyn DescriptorSource,
        &[&dyn DescriptorSource],
        &ScanConfig,
    ) -> Result<PoolScan>,
) -> Result<Vec<Summary>> {
    if sets.is_empty() {
        return Err(Error::option("no query set chosen"));
    }
    // Positives: the core.
    let core = Hdf5Descriptors::open(&feats.positives)?;
    check_ids_exact(
        &feats.positives,
        &core.ids().to_vec()?,
        &ds.positives_file,
        &ds.positive_ids,
    )?;

    // Queries of every chosen set, each from its own file.
    let mut chosen: Vec<&QuerySet> = Vec::with_capacity(sets.len());
    let mut query_files: Vec<Hdf5Descriptors> = Vec::with_capacity(sets.len());
    for &name in sets {
        let set = ds.set(name).ok_or_else(|| {
            Error::input(
                &ds.dir,
                format!("query set {name:?} not found ({name}_query_ids.txt missing)"),
            )
        })?;
        let file = match name {
            "image" => feats.image_queries.as_ref(),
            "text" => feats.text_queries.as_ref(),
            _ => None,
        }
        .ok_or_else(|| {
            Error::input(
                feats.positives.parent().unwrap_or(Path::new(".")),
                format!("no features_{name}_queries.hdf5 in the feature folder"),
            )
        })?;
        let src = Hdf5Descriptors::open(file)?;
        check_ids_exact(
            file,
            &src.ids().to_vec()?,
            &ds.list_file(name),
            &set.query_ids,
        )?;
        if let Some(first) = query_files.first() {
            if src.dim() != first.dim() {
                return Err(Error::mismatch_at(
                    file,
                    format!(
                        "dimension {} differs from the other query file's {}",
                        src.dim(),
                        first.dim()
                    ),
                ));
            }
        }
        chosen.push(set);
        query_files.push(src);
    }
    let query_sets: Vec<QuerySetInput> = chosen
        .iter()
        .zip(&query_files)
        .map(|(set, src)| QuerySetInput {
            set,
            queries: src as &dyn DescriptorSource,
        })
        .collect();

    // Distractors: check the ids against the list, then scan.
    let sample =
        (!crate::sample::is_exact_fraction(cfg.fraction)).then_some((cfg.fraction, cfg.seed));
    let mut list = DistractorList::read(&ds.distractors_file, sample)?;
    if let Some(sel) = &ds.selected_ids {
        list.select(&mut SelectedIds::read(sel)?)?;
    }
    let shards: Vec<Hdf5Descriptors> = feats
        .distractors
        .iter()
        .map(|p| Hdf5Descriptors::open(p))
        .collect::<Result<_>>()?;
    let all_refs: Vec<&dyn DescriptorSource> =
        shards.iter().map(|s| s as &dyn DescriptorSource).collect();
    // With --selected-ids the pool is the selected rows of each shard (N = their number).
    let subsets: Vec<SubsetSource> = match list.check_features(&all_refs)? {
        Some(rows) => all_refs
            .iter()
            .zip(rows)
            .filter(|(_, r)| !r.is_empty())
            .map(|(s, r)| SubsetSource::new(*s, r))
            .collect::<Result<_>>()?,
        None => Vec::new(),
    };
    let shard_refs: Vec<&dyn DescriptorSource> = if ds.selected_ids.is_some() {
        subsets.iter().map(|s| s as &dyn DescriptorSource).collect()
    } else {
        all_refs
    };

    let mut cfg = cfg.clone();
    cfg.pool_size = Some(list.len);
    let out = run(&query_sets, &core, &shard_refs, &cfg)?;
    let mut result = Vec::with_capacity(sets.len());
    for ((&name, set), one) in sets.iter().zip(&chosen).zip(out.sets) {
        let mut s = one.summary;
        if crate::sample::is_exact_fraction(cfg.fraction) && s.subset_sizes[0] != list.len {
            return Err(Error::mismatch_at(
                &list.path,
                format!(
                    "exact scan saw {} distractors but the list holds N = {}",
                    s.subset_sizes[0], list.len
                ),
            ));
        }
        // Inputs: the set's queries, the core, the set's ground truth, the pool shards.
        let at = s
            .inputs
            .iter()
            .position(|r| r.role == POOL_ROLE)
            .unwrap_or(s.inputs.len());
        s.inputs
            .insert(at, ground_truth_record(ds.dir.display().to_string(), set));
        s.query_set = name.to_string();
        s.validate()?;
        result.push(s);
    }
    Ok(result)
}

/// [`scan_ilias`] without progress reporting.
pub fn scan_ilias_quiet(
    ds: &IliasDataset,
    feats: &FeatureFiles,
    sets: &[&str],
    cfg: &ScanConfig,
) -> Result<Vec<Summary>> {
    scan_ilias(ds, feats, sets, cfg, &NoProgress)
}
