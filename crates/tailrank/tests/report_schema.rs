//! The JSON schema of a prediction report is pinned: every key path of `report::prediction_json`
//! (arrays as `[]`) for a prediction that has every optional part (realized interval, budget,
//! drift, level-calibrated law, level-selected fit, fitted tails), in sorted order, and no `-0.0` anywhere. A
//! changed field name or a dropped field fails here before it reaches a user's parser.

use serde_json::Value;
use tailrank::predict::{predict, PredictOptions};
use tailrank::simulate::{simulate_summary, SimConfig};

/// Every key path of the report, sorted (`docs/reference/predict.md` documents the fields).
const PREDICTION_KEYS: &[&str] = &[
    "baselines.count_map_at_k",
    "baselines.evaluate_at_s_hit_at_1",
    "baselines.evaluate_at_s_map_at_k",
    "baselines.evaluate_at_s_recall_at_k",
    "baselines.level_calibrated.hit_at_1",
    "baselines.level_calibrated.map_at_k",
    "baselines.level_calibrated.recall_at_k",
    "baselines.level_points[].map_at_k",
    "baselines.level_points[].sample_size",
    "baselines.level_points[].subset",
    "baselines.level_selected.candidates[].fit_top",
    "baselines.level_selected.candidates[].in_sample_error",
    "baselines.level_selected.candidates[].quantile",
    "baselines.level_selected.chosen",
    "baselines.level_selected.hit_at_1",
    "baselines.level_selected.in_sample_std_error",
    "baselines.level_selected.map_at_k",
    "baselines.level_selected.recall_at_k",
    "baselines.log_linear_map_at_k",
    "baselines.power_law_map_at_k",
    "budget.first_sufficient_level",
    "budget.first_sufficient_size",
    "budget.steps[].abs_diff_map_at_k",
    "budget.steps[].agrees",
    "budget.steps[].from_level",
    "budget.steps[].map_at_k_std_error",
    "budget.steps[].to_level",
    "budget.sufficient",
    "drift.chi2",
    "drift.dof",
    "drift.flagged",
    "drift.max_abs_z",
    "drift.rule",
    "drift.shards[].diff_map_at_k",
    "drift.shards[].diff_std_error",
    "drift.shards[].map_at_k",
    "drift.shards[].sample_size",
    "drift.shards[].subset",
    "drift.shards[].z",
    "exact_scan",
    "excess_centre",
    "hit_at_1",
    "hit_calibration.immune_cases",
    "hit_calibration.immune_hits",
    "hit_calibration.scales.immune",
    "hit_calibration.scales.tail",
    "hit_calibration.tail_cases",
    "hit_calibration.tail_hits",
    "hit_calibration.uncalibrated_hit_at_1",
    "hit_scales.immune",
    "hit_scales.tail",
    "k",
    "levels[].evaluate_at_s_map_at_k",
    "levels[].fraction",
    "levels[].level",
    "levels[].map_at_k",
    "levels[].map_at_k_std_error",
    "levels[].sample_size",
    "levels[].subset",
    "map_at_k",
    "map_at_k_bca_interval[]",
    "map_at_k_crossed_interval[]",
    "map_at_k_interval_meanings.bca_interval",
    "map_at_k_interval_meanings.percentile_interval",
    "map_at_k_interval_meanings.realized_interval",
    "map_at_k_percentile_interval[]",
    "map_at_k_sample_noise_sd",
    "map_at_k_std_error",
    "map_at_k_total_interval[]",
    "model",
    "n_positives",
    "n_queries",
    "next_step.action",
    "next_step.commands[]",
    "next_step.fraction",
    "next_step.message",
    "next_step.projected_width",
    "options.bootstrap",
    "options.confidence",
    "options.estimator",
    "options.estimator_options.evt.c_min",
    "options.estimator_options.evt.quantile",
    "options.estimator_options.evt.top_m",
    "options.excess_centre",
    "options.fit",
    "options.map",
    "options.sample_noise",
    "options.seed",
    "pool_size",
    "queries[].ap_at_k",
    "queries[].ap_at_k_at_sample",
    "queries[].ap_at_k_count",
    "queries[].hit_at_1",
    "queries[].n_count",
    "queries[].n_immune",
    "queries[].n_positives",
    "queries[].n_tail",
    "queries[].query_id",
    "queries[].recall_at_k",
    "queries[].tail.log_likelihood",
    "queries[].tail.n_u",
    "queries[].tail.sigma",
    "queries[].tail.u",
    "queries[].tail.xi",
    "query_set",
    "realized.capped_at_evaluate_at_s",
    "realized.count_map_at_k",
    "realized.excess_mass_map_at_k",
    "realized.fit_choice_map_at_k",
    "realized.fit_choice_reach",
    "realized.level_calibrated_map_at_k",
    "realized.levels_high_map_at_k",
    "realized.map_at_k_realized_interval[]",
    "realized.other_map_map_at_k",
    "realized.pool_sd",
    "realized.pool_sd_replicates",
    "realized.pool_sd_shards",
    "realized.spacing_above_map_at_k",
    "realized.spacing_above_weight",
    "realized.trend_shift",
    "realized.width",
    "recall_at_k",
    "sample_size",
    "spacing_centre",
    "tail_report.by_count",
    "tail_report.by_tail",
    "tail_report.immune",
    "tail_report.positives",
    "tail_report.queries_with_tail",
    "tail_report.xi_max",
    "tail_report.xi_min",
    "tail_report.xi_quartiles[]",
    "tool_version",
    "trust.endpoint.decayed_rate",
    "trust.endpoint.excess_rate",
    "trust.endpoint.hazard_decay",
    "trust.endpoint.immune",
    "trust.endpoint.levels[]",
    "trust.endpoint.observed",
    "trust.endpoint.per_level[].excess_rate",
    "trust.endpoint.per_level[].immune",
    "trust.endpoint.per_level[].level",
    "trust.endpoint.per_level[].observed",
    "trust.endpoint.per_level[].predicted",
    "trust.endpoint.predicted",
    "trust.endpoint.shrink_weight",
    "trust.endpoint.shrunk_rate",
    "trust.endpoint.std_error",
    "trust.endpoint.z",
    "trust.endpoint_fired",
    "trust.falling_fired",
    "trust.fit_choice_fired",
    "trust.fit_choice_shift",
    "trust.in_sample[].error",
    "trust.in_sample[].level",
    "trust.in_sample[].predicted_map_at_k",
    "trust.in_sample[].projected_error",
    "trust.in_sample[].sample_size",
    "trust.in_sample[].std_error",
    "trust.in_sample_fired",
    "trust.in_sample_used_level",
    "trust.level_rises[]",
    "trust.reason",
    "trust.spacing.exceeding",
    "trust.spacing.exceeding_above",
    "trust.spacing.excess",
    "trust.spacing.tested",
    "trust.spacing.tested_above",
    "trust.spacing.z",
    "trust.spacing_fired",
    "trust.trend_fired",
    "trust.trend_per_doubling",
    "trust.trend_projected",
    "trust.trend_std_error",
    "trust.verdict",
    "warnings[]",
];

fn key_paths(v: &Value, prefix: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                key_paths(x, &p, out);
            }
        }
        Value::Array(items) if items.is_empty() => out.push(format!("{prefix}[]")),
        Value::Array(items) => {
            for x in items {
                key_paths(x, &format!("{prefix}[]"), out);
            }
        }
        _ => out.push(prefix.to_string()),
    }
}

#[test]
fn prediction_json_keys_are_pinned() {
    let cfg = SimConfig::preset("ilias-like", 3).unwrap().with_queries(80);
    let sim = simulate_summary(&cfg).unwrap();
    let opts = PredictOptions {
        bootstrap: 60,
        sample_noise: 20,
        ..PredictOptions::default()
    };
    let mut p = predict(&sim.summary, &opts).unwrap();
    let json = tailrank::report::prediction_json(&p);
    let mut paths = Vec::new();
    key_paths(&json, "", &mut paths);
    paths.sort();
    paths.dedup();
    assert_eq!(paths, PREDICTION_KEYS);
    // The key paths of `p`'s report under `prefix`.
    let keys_under = |p: &tailrank::predict::Prediction, prefix: &str| {
        let mut all = Vec::new();
        key_paths(&tailrank::report::prediction_json(p), "", &mut all);
        all.retain(|k| k.starts_with(prefix));
        all
    };
    // A moved estimate (a positive shrink weight) reports its move under `excess_centre`.
    p.excess_centre = Some(tailrank::predict::endpoint_test::ExcessCentre {
        excess_rate: 1e-8,
        weight: 0.9,
        hazard_decay: 0.5,
        unmoved_map_at_k: 0.4,
        shift: -0.02,
    });
    assert_eq!(
        keys_under(&p, "excess_centre"),
        [
            "excess_centre.excess_rate",
            "excess_centre.hazard_decay",
            "excess_centre.shift",
            "excess_centre.unmoved_map_at_k",
            "excess_centre.weight"
        ]
    );
    // A move to the centre of the rare items above the top positive reports it under
    // `spacing_centre`.
    p.spacing_centre = Some(tailrank::predict::spacing_test::SpacingCentre {
        rate_above: 1e-8,
        z_above: Some(4.0),
        weight: 0.5,
        unmoved_map_at_k: 0.4,
        shift: -0.01,
    });
    assert_eq!(
        keys_under(&p, "spacing_centre"),
        [
            "spacing_centre.rate_above",
            "spacing_centre.shift",
            "spacing_centre.unmoved_map_at_k",
            "spacing_centre.weight",
            "spacing_centre.z_above"
        ]
    );
    let text = serde_json::to_string_pretty(&json).unwrap();
    assert!(!text.contains("-0.0,") && !text.contains("-0.0\n"));
    // The keys print in sorted order at every level (what readers of earlier reports saw).
    let top: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut sorted = top.clone();
    sorted.sort();
    assert_eq!(top, sorted);
}
