//! Assembly of a [`Prediction`] from the level-0 hardness (docs/method.md §7–9), in stages
//! that each return one section of the report:
//!
//! 1. the tail model's own per-query AP@k at N and its mean (the unmoved estimate);
//! 2. baselines ([`Baselines`]): count, evaluate-at-S and, from a summary, the level fits;
//! 3. levels, budget, drift, the endpoint test and the trust verdict ([`LevelSection`]; from
//!    a hardness file only the move it carries and an unchecked verdict);
//! 4. the estimate ([`EstimateSection`]): the tail model's values, or their moves to the
//!    centre of the shrunk excess and to the centre of the rare items above the top positive
//!    (docs/method.md §9);
//! 5. intervals ([`IntervalSection`]): query bootstrap, sample noise and the realized
//!    interval around the reported estimate;
//! 6. the per-query rows and the tail report.

use super::{
    baselines, bootstrap, calibrated, count_hardness, diagnostics, endpoint_test, hit_calibration,
    mean, per_query_ap, reach, realized, sample_warnings, spacing_test, summary_warnings, trust,
    Baselines, Budget, Drift, FitChoice, Interval, LevelPrediction, NextStep, PredictOptions,
    Prediction, QueryPrediction, RealizedInterval, Trust, Verdict,
};
use crate::error::Result;
use crate::hardness::{self, Estimator, EvtOptions, HitScales, QueryHardness};
use crate::maps::{self, MapKind};
use crate::summary::Summary;
use rayon::prelude::*;

/// A summary with its level-selected fit and the other fit's estimate at N
/// ([`super::fit_choice::resolve`]).
pub(super) struct SummaryParts<'a> {
    pub(super) summary: &'a Summary,
    pub(super) choice: Option<FitChoice>,
    pub(super) other_fit: Option<f64>,
}

/// What a hardness file carries from the prediction it came from (a summary's are computed
/// from its levels): the moves to the centre of the excess and of the rare items above the
/// top positive, and the hit@1 scales.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Carried {
    pub(super) excess_move: Option<hardness::ExcessMove>,
    pub(super) spacing_move: Option<hardness::SpacingMove>,
    pub(super) hit_scales: Option<HitScales>,
}

/// What every stage reads: the level-0 hardness, the pool size N (also as `nf`), the level-0
/// sample size S, the options and the query bootstrap shared by every interval.
struct Stage<'a> {
    h0: &'a [QueryHardness],
    n: u64,
    nf: f64,
    sample: u64,
    opts: &'a PredictOptions,
    boot: &'a bootstrap::QueryBootstrap,
}

/// The baselines with the per-query values the query rows report beside the estimate.
struct BaselineSection {
    base: Baselines,
    /// Count-hardness AP@k at N.
    ap_count: Vec<f64>,
    /// Exact AP@k on the sample gallery.
    ap_at_s: Vec<f64>,
}

/// What the nested levels of a summary give beside the estimate.
struct LevelSection {
    levels: Vec<LevelPrediction>,
    budget: Option<Budget>,
    drift: Option<Drift>,
    /// Level-0 hardness with the endpoint test's excess rate `r > 0` added (the excess-mass
    /// opinion of the realized interval).
    excess_h: Option<Vec<QueryHardness>>,
    /// The move to the centre of the excess: the endpoint test's at its decayed rate, or the
    /// one a hardness file carries.
    centre: Option<hardness::ExcessMove>,
    /// The move to the centre of the rare items above the top positive: the top-spacing
    /// test's, or the one a hardness file carries.
    spacing_move: Option<hardness::SpacingMove>,
    /// `r_a` of the reading of rare items above the top positive that the realized interval
    /// reaches towards: the top-spacing test's `reach_z` past `reach::Z_WEIGHT_NONE` (None
    /// without it).
    rate_above: Option<f64>,
    /// hit@1 calibrated on the levels (None without levels).
    hit_calibration: Option<hit_calibration::HitCalibration>,
    /// The hit@1 scales applied: the calibration's, or the ones a hardness file carries.
    hit_scales: Option<HitScales>,
    trust: Trust,
}

/// The reported per-query values at N.
struct EstimateSection {
    ap: Vec<f64>,
    recall: Vec<f64>,
    hit: Vec<f64>,
    /// The move, when the estimate was moved to the centre of the excess.
    excess_centre: Option<endpoint_test::ExcessCentre>,
    /// The move, when the estimate was moved to the centre of the rare items above.
    spacing_centre: Option<spacing_test::SpacingCentre>,
    /// `m_above = m_tail + mean_q d_q`, the reading of rare items above the top positive
    /// (`spacing_test::rate_above_effect`) at `LevelSection::rate_above`.
    spacing_reading: Option<f64>,
    /// `m_tail`, the tail model's own mAP@k.
    model_estimate: f64,
    /// `mean_q Bin(h0)_q`, when a move or the reading needed it (the binomial map's value,
    /// which the interval reads as the other map's by default).
    binomial: Option<f64>,
    /// Per-query move of AP@k `δ_q` (empty: no move), carried by every sample-noise replicate.
    moves: Vec<f64>,
}

/// The estimate `mean_q AP@k(q; N)` and its intervals.
struct IntervalSection {
    estimate: f64,
    qb: bootstrap::QuerySummaryStats,
    sample_noise_sd: Option<f64>,
    crossed: Option<Interval>,
    total: Option<Interval>,
    realized: Option<RealizedInterval>,
}

/// The prediction from the level-0 hardness `h0`; `input` is the summary's parts (None from a
/// hardness file) and the query bootstrap of every interval; `carried` is what a hardness file
/// records (a summary's is computed from its levels): the centre of the excess, applied only
/// under `opts.excess_centre`, and the hit@1 scales.
#[allow(clippy::too_many_arguments)]
pub(super) fn assemble(
    model: &str,
    query_set: &str,
    n: u64,
    sample: u64,
    h0: Vec<QueryHardness>,
    input: (Option<SummaryParts<'_>>, bootstrap::QueryBootstrap),
    opts: &PredictOptions,
    carried: Carried,
) -> Result<Prediction> {
    let (summary, boot) = input;
    let (s, choice, other_fit) = match summary {
        Some(p) => (Some(p.summary), p.choice, p.other_fit),
        None => (None, None, None),
    };
    let st = Stage {
        h0: &h0,
        n,
        nf: n as f64,
        sample,
        opts,
        boot: &boot,
    };
    // The tail model's own values; moved to the centre of the excess below when the endpoint
    // test fires.
    let ap_model = per_query_ap(&h0, st.nf, opts.k, opts.map);
    let model_estimate = mean(&ap_model);
    let aps = match s {
        Some(s) => Some(trust::level_aps(s, &ap_model, st.nf, opts)?),
        None => None,
    };
    let levels = s.zip(aps.as_deref());
    let bs = st.baselines(levels, choice)?;
    let mut warnings = sample_warnings(sample, n, opts.k, &opts.estimator);
    if let Some(s) = s {
        warnings.extend(summary_warnings(s, n, &opts.estimator));
    }
    let ls = match levels {
        Some((s, aps)) => {
            let shift = other_fit.map(|o| o - model_estimate);
            st.levels(s, aps, shift, &warnings)?
        }
        None => LevelSection::without_levels(carried, &warnings),
    };
    // After the verdict, which it leaves as it is (`sample_size_warnings`), and first: a
    // sample of another N or seed makes the other warnings' numbers beside the point.
    if let Some(s) = s {
        warnings.splice(0..0, super::sample_size_warnings(s, n));
    }
    let es = st.estimate(&ls, ap_model, model_estimate);
    let is = st.intervals(s, &es, &bs.base, &ls, other_fit);
    let queries = st.queries(&es, &bs);
    let tail = diagnostics::tail_report(&h0);
    // After the verdict too: the evt estimate fell back to the counts everywhere.
    warnings.extend(no_tail_warning(&opts.estimator, &tail, s));

    Ok(Prediction {
        model: model.to_string(),
        query_set: query_set.to_string(),
        pool_size: n,
        sample_size: sample,
        k: opts.k,
        n_queries: h0.len(),
        n_positives: h0.iter().map(|q| q.positives.len()).sum(),
        estimate: is.estimate,
        std_error: is.qb.std_error,
        percentile: is.qb.percentile,
        bca: is.qb.bca,
        sample_noise_sd: is.sample_noise_sd,
        crossed: is.crossed,
        total: is.total,
        realized: is.realized,
        excess_centre: es.excess_centre,
        spacing_centre: es.spacing_centre,
        baselines: bs.base,
        recall_at_k: mean(&es.recall),
        hit_at_1: mean(&es.hit),
        hit_calibration: ls.hit_calibration,
        hit_scales: ls.hit_scales,
        levels: ls.levels,
        budget: ls.budget,
        drift: ls.drift,
        tail,
        trust: ls.trust,
        next_step: NextStep::default(),
        warnings,
        queries,
        options: *opts,
        hardness: h0,
    })
}

/// Per-query Recall@k and hit@1 at N of hardness `h`, hit@1 under the calibrated readings
/// when `scales` are given ([`hit_calibration::hit_at_1`]).
fn recall_hit(
    h: &[QueryHardness],
    nf: f64,
    k: usize,
    scales: Option<&HitScales>,
) -> (Vec<f64>, Vec<f64>) {
    h.par_iter()
        .map(|q| {
            (
                maps::recall_at_k(q, nf, k),
                hit_calibration::hit_at_1(q, nf, scales),
            )
        })
        .unzip()
}

impl LevelSection {
    /// From a hardness file: no levels, the move and hit@1 scales the file carries, and no
    /// paired tests (the verdict is unchecked, or doubtful on the input warnings).
    fn without_levels(carried: Carried, warnings: &[String]) -> Self {
        LevelSection {
            levels: Vec::new(),
            budget: None,
            drift: None,
            excess_h: None,
            centre: carried.excess_move,
            spacing_move: carried.spacing_move,
            rate_above: None,
            hit_calibration: None,
            hit_scales: carried.hit_scales,
            trust: trust::with_problems(
                Trust::without_tests(
                    Verdict::Unchecked,
                    "no nested levels (a hardness file): the paired tests need a summary".into(),
                ),
                warnings,
            ),
        }
    }
}

impl Stage<'_> {
    /// The baselines: count and evaluate-at-S from the level-0 hardness; from a summary's
    /// levels (`levels`: the summary and its per-level AP vectors) also the power-law and
    /// log-linear fits over the level points and the level-calibrated law.
    fn baselines(
        &self,
        levels: Option<(&Summary, &[trust::LevelAps])>,
        choice: Option<FitChoice>,
    ) -> Result<BaselineSection> {
        let (h0, nf, k) = (self.h0, self.nf, self.opts.k);
        let count_h = count_hardness(h0);
        let ap_count = per_query_ap(&count_h, nf, k, self.opts.map);
        let at_s = baselines::reports_at_sample(h0, k);
        let ap_at_s: Vec<f64> = at_s.iter().map(|r| r.ap_at_k).collect();
        let mut base = Baselines {
            evaluate_at_s: mean(&ap_at_s),
            evaluate_at_s_recall_at_k: mean(
                &at_s.iter().map(|r| r.recall_at_k).collect::<Vec<_>>(),
            ),
            evaluate_at_s_hit_at_1: mean(&at_s.iter().map(|r| r.hit_at_1).collect::<Vec<_>>()),
            count: mean(&ap_count),
            power_law: None,
            log_linear: None,
            level_points: Vec::new(),
            level_calibrated: None,
            level_selected: choice,
        };
        if let Some((s, aps)) = levels {
            let pts = baselines::level_points(s, k);
            base.power_law = baselines::power_law(&pts, nf);
            base.log_linear = baselines::log_linear(&pts, nf);
            base.level_points = pts;
            // With the evt estimator, the level hardness is the evt hardness the law needs.
            let (evt, fitted) = match self.opts.estimator {
                Estimator::Evt(o) => {
                    let mut fitted = vec![(0, h0)];
                    fitted.extend(aps.iter().skip(1).map(|a| (a.subset, &a.hardness[..])));
                    (o, fitted)
                }
                Estimator::Count => (EvtOptions::DEFAULT, Vec::new()),
            };
            base.level_calibrated = calibrated::predict_calibrated(s, &evt, &fitted, nf, k)?;
        }
        Ok(BaselineSection {
            base,
            ap_count,
            ap_at_s,
        })
    }

    /// The level predictions, budget and drift of summary `s`, the endpoint test over its
    /// levels `aps`, and the trust verdict; `fit_choice_shift` is `δ_fit`, `warnings` the
    /// input problems already known (a flagged drift is added to them).
    fn levels(
        &self,
        s: &Summary,
        aps: &[trust::LevelAps],
        fit_choice_shift: Option<f64>,
        warnings: &[String],
    ) -> Result<LevelSection> {
        let (h0, n, nf, boot) = (self.h0, self.n, self.nf, self.boot);
        let levels = diagnostics::level_predictions_from(s, aps, boot, self.opts.k);
        let budget = diagnostics::budget(&levels);
        let drift = diagnostics::drift(s, boot, nf, self.opts)?;
        let mut problems = warnings.to_vec();
        if let Some(d) = drift.as_ref().filter(|d| d.flagged) {
            problems.push(format!(
                "drift flagged (max |z| = {:.1} over the hash shards): the sample may not be \
                 uniform",
                d.max_abs_z
            ));
        }
        let level_hardness = trust::level_hardness(aps);
        // The test, and the move it gates, need the levels the verdict's paired tests need.
        let endpoint = (aps.len() >= trust::MIN_LEVELS)
            .then(|| endpoint_test::endpoint_test(h0, self.sample, nf, &level_hardness))
            .flatten();
        let hit_calibration = hit_calibration::calibrate(h0, self.sample, nf, &level_hardness);
        let excess_h = endpoint
            .as_ref()
            .filter(|e| e.excess_rate > 0.0)
            .map(|e| endpoint_test::with_excess_rate(h0, e.excess_rate, nf));
        let centre =
            endpoint
                .as_ref()
                .filter(|e| e.decayed_rate > 0.0)
                .map(|e| hardness::ExcessMove {
                    rate: e.decayed_rate,
                    weight: e.shrink_weight,
                    decay: e.hazard_decay,
                    pool_size: Some(n),
                });
        let spacing = spacing_test::spacing_test(s);
        let sample = self.sample as f64;
        let others = trust::OtherTests {
            fit_choice_shift,
            endpoint,
            spacing: Some(spacing),
        };
        let trust = trust::trust(s, aps, boot, nf, self.opts.k, others, &problems);
        Ok(LevelSection {
            levels,
            budget,
            drift,
            excess_h,
            centre,
            spacing_move: spacing_test::spacing_move(&spacing, sample),
            rate_above: Some(spacing.rate_above(sample))
                .filter(|r| spacing.reach_z() > reach::Z_WEIGHT_NONE && *r > 0.0),
            hit_scales: hit_calibration.map(|c| c.scales),
            hit_calibration,
            trust,
        })
    }

    /// The reported values: the tail model's own (`ap_model`, mean `model_estimate`; hit@1
    /// under the level section's hit@1 scales when given, docs/method.md §7), or, under
    /// `opts.excess_centre`, moved to the centre of the shrunk excess at its move's rate and
    /// then AP@k to the centre of the rare items above the top positive (docs/method.md §9;
    /// no move when its weight is 0); with the reading `m_above` of those rare items.
    fn estimate(
        &self,
        ls: &LevelSection,
        ap_model: Vec<f64>,
        model_estimate: f64,
    ) -> EstimateSection {
        let (h0, nf, k) = (self.h0, self.nf, self.opts.k);
        let hit_scales = ls.hit_scales.as_ref();
        let (recall_model, hit_model) = recall_hit(h0, nf, k, hit_scales);
        let moving = self.opts.excess_centre;
        let spacing_move = ls.spacing_move.filter(|_| moving);
        // Bin(h0), per query: one end of both moves and of the reading.
        let centre = ls.centre.filter(|_| moving);
        let needs_zero = ls.rate_above.is_some() || spacing_move.is_some() || centre.is_some();
        let at_zero = needs_zero.then(|| per_query_ap(h0, nf, k, MapKind::Binomial));
        let unmoved = ap_model.clone();
        let mut es = EstimateSection {
            ap: ap_model,
            recall: recall_model,
            hit: hit_model,
            excess_centre: None,
            spacing_centre: None,
            spacing_reading: None,
            model_estimate,
            binomial: at_zero.as_deref().map(mean),
            moves: Vec::new(),
        };
        if let (Some(m), Some(at_zero)) = (centre, &at_zero) {
            let rate = m.rate_at(nf, self.sample as f64);
            let h = endpoint_test::with_excess_rate(h0, rate, nf);
            let ap_x = per_query_ap(&h, nf, k, MapKind::Binomial);
            es.ap = endpoint_test::centre_of_excess(&es.ap, at_zero, &ap_x);
            let (recall_x, hit_x) = recall_hit(&h, nf, k, hit_scales);
            es.recall = endpoint_test::centre_of_excess(&es.recall, &es.recall, &recall_x);
            es.hit = endpoint_test::centre_of_excess(&es.hit, &es.hit, &hit_x);
            es.excess_centre = Some(endpoint_test::ExcessCentre {
                excess_rate: rate,
                weight: m.weight,
                hazard_decay: m.decay,
                unmoved_map_at_k: model_estimate,
                shift: mean(&es.ap) - model_estimate,
            });
        }
        // d_q at r_a: the reading's and the move's rate are the same one (the test's), or the
        // move's alone (a hardness file has no reading).
        let rate = ls.rate_above.or(spacing_move.map(|m| m.rate));
        let effect = rate.map(|r| {
            spacing_test::rate_above_effect(h0, r, nf, k, at_zero.as_deref().unwrap_or(&[]))
        });
        if let (Some(_), Some(d)) = (ls.rate_above, &effect) {
            es.spacing_reading = Some(model_estimate + mean(d));
        }
        if let (Some(m), Some(d)) = (spacing_move, &effect) {
            let before = mean(&es.ap);
            es.ap = spacing_test::centre_of_spacing(&es.ap, d, m.weight);
            es.spacing_centre = Some(spacing_test::SpacingCentre {
                rate_above: m.rate,
                z_above: ls.trust.spacing.map(|sp| sp.z_above()),
                weight: m.weight,
                unmoved_map_at_k: model_estimate,
                shift: mean(&es.ap) - before,
            });
        }
        if es.excess_centre.is_some() || es.spacing_centre.is_some() {
            es.moves = es.ap.iter().zip(&unmoved).map(|(a, m)| a - m).collect();
        }
        es
    }

    /// The estimate's intervals: the query bootstrap's, the sample noise's (a summary's, when
    /// asked for) with the total interval `est ∓ √((est − end)² + (z·sd)²)`, and the realized
    /// interval spanning the other opinions (`other_fit`: the other evt fit's estimate at N).
    fn intervals(
        &self,
        s: Option<&Summary>,
        es: &EstimateSection,
        base: &Baselines,
        ls: &LevelSection,
        other_fit: Option<f64>,
    ) -> IntervalSection {
        let (opts, nf) = (self.opts, self.nf);
        let estimate = mean(&es.ap);
        let qb = self.boot.summarize(&es.ap, estimate, opts.confidence);
        // Pool-sample noise of the reported estimate: each replicate carries the fixed move.
        let noise = s
            .filter(|_| opts.sample_noise > 0)
            .map(|s| bootstrap::sample_noise(s, self.boot, nf, opts, &es.moves));
        let other_map = match opts.map {
            MapKind::ExpectedRank => MapKind::Binomial,
            MapKind::Binomial => MapKind::ExpectedRank,
        };
        let other_map_value = match (other_map, es.binomial) {
            (MapKind::Binomial, Some(v)) => v,
            _ => mean(&per_query_ap(self.h0, nf, opts.k, other_map)),
        };
        let opinions = realized::Opinions {
            other_map: other_map_value,
            other_fit,
            other_fit_reach: ls.trust.used().and_then(|u| {
                realized::fit_choice_reach(u, nf, self.sample as f64, opts.confidence)
            }),
            calibrated: base.level_calibrated.map(|c| c.map_at_k),
            excess_mass: ls
                .excess_h
                .as_ref()
                .map(|h| mean(&per_query_ap(h, nf, opts.k, MapKind::Binomial))),
            count: ls
                .budget
                .as_ref()
                .filter(|b| b.unsettled())
                .map(|_| base.count),
            spacing_above: es.spacing_reading,
            levels_high: realized::levels_high(&ls.levels, &ls.trust),
            unmoved: (es.excess_centre.is_some() || es.spacing_centre.is_some())
                .then_some(es.model_estimate),
        };
        let realized = realized::realized_interval(
            estimate,
            opinions,
            base.evaluate_at_s,
            &ls.drift
                .as_ref()
                .map(|d| d.shards.iter().map(|h| h.estimate).collect::<Vec<_>>())
                .unwrap_or_default(),
            noise.as_ref().map(|nr| nr.sd),
            &ls.trust,
            opts.confidence,
        );
        let z = crate::numerics::norm_ppf(0.5 + opts.confidence / 2.0);
        let (sample_noise_sd, crossed, total) = match noise {
            Some(nr) => {
                let widen = |end: f64| ((estimate - end).powi(2) + (z * nr.sd).powi(2)).sqrt();
                let total = Interval {
                    lo: estimate - widen(qb.percentile.lo),
                    hi: estimate + widen(qb.percentile.hi),
                };
                (Some(nr.sd), Some(nr.crossed), Some(total))
            }
            None => (None, None, None),
        };
        IntervalSection {
            estimate,
            qb,
            sample_noise_sd,
            crossed,
            total,
            realized,
        }
    }

    /// The per-query rows: the reported values, the baselines and how each positive was
    /// resolved (count, tail, immune).
    fn queries(&self, es: &EstimateSection, bs: &BaselineSection) -> Vec<QueryPrediction> {
        self.h0
            .iter()
            .enumerate()
            .map(|(i, q)| {
                let (mut c, mut t, mut im) = (0, 0, 0);
                for p in &q.positives {
                    match p.branch {
                        hardness::Branch::Count => c += 1,
                        hardness::Branch::Tail => t += 1,
                        hardness::Branch::Immune => im += 1,
                    }
                }
                QueryPrediction {
                    query_id: q.query_id.clone(),
                    n_positives: q.positives.len(),
                    ap_at_k: es.ap[i],
                    recall_at_k: es.recall[i],
                    hit_at_1: es.hit[i],
                    ap_at_k_count: bs.ap_count[i],
                    ap_at_k_at_sample: bs.ap_at_s[i],
                    tail: q.tail,
                    n_count: c,
                    n_tail: t,
                    n_immune: im,
                }
            })
            .collect()
    }
}

/// The warning for an evt prediction in which no query has a fitted tail although the summary
/// keeps enough top scores (M ≥ 2; below, `summary_warnings` says so): the fit (`--fit-top`,
/// `--quantile`, or the one the level-selected choice took on a small sample) leaves fewer than
/// [`MIN_TAIL_EXCESSES`](crate::hardness::MIN_TAIL_EXCESSES) scores above every query's
/// threshold, and the estimate is the count estimate.
fn no_tail_warning(
    est: &Estimator,
    tail: &diagnostics::TailReport,
    s: Option<&Summary>,
) -> Option<String> {
    let Estimator::Evt(e) = est else { return None };
    let enough_top = s.is_none_or(|s| s.top_m >= 2);
    (tail.queries_with_tail == 0 && tail.positives > 0 && enough_top).then(|| {
        format!(
            "no query's tail could be fitted (fit-top {}, quantile {}: fewer than {} of the top \
             scores lie above any query's threshold): the evt estimate is the count estimate",
            e.top_m,
            e.quantile,
            crate::hardness::MIN_TAIL_EXCESSES
        )
    })
}
