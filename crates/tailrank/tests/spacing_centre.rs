//! The move of the estimate to the centre of the rare items above the top positive
//! (docs/method.md §9, `predict::spacing_test::SpacingCentre`), on a simulated benchmark whose
//! rare component the top-spacing test sees clearly (mixture-tail: pooled z 14.5, the count
//! above the top positive 6 of 65, z_a 4.0).

use tailrank::formats::hardness_csv::{read_hardness_csv, write_hardness_csv};
use tailrank::predict::spacing_test::move_weight;
use tailrank::predict::{hardness_meta, predict, predict_from_hardness, PredictOptions};
use tailrank::simulate::corpus::summary_config;
use tailrank::simulate::simulate_summary;

#[test]
fn the_estimate_moves_half_way_to_the_reading_and_travels_with_the_file() {
    let cfg = summary_config("mixture-tail", 6).unwrap().with_queries(300);
    let sim = simulate_summary(&cfg).unwrap();
    let s = &sim.summary;
    let opts = PredictOptions {
        k: cfg.k,
        bootstrap: 100,
        sample_noise: 0,
        pool_size: Some(sim.truth.pool_size),
        ..PredictOptions::default()
    };
    let p = predict(s, &opts).unwrap();
    let sp = p.trust.spacing.expect("a summary is tested");
    let z = sp.z_above();
    assert!(z > 3.5, "the test sees this rare component clearly: {sp:?}");
    let c = p.spacing_centre.expect("the estimate moves");
    assert_eq!(c.z_above, Some(z));
    assert_eq!(c.weight, move_weight(z));
    assert!(c.weight > 0.2);
    // The move is half the weighted way from the tail model's value to the reading the
    // realized interval reaches towards, and the interval spans both ends.
    let r = p.realized.expect("a summary has a realized interval");
    let above = r.spacing_above.expect("the reading is in the interval");
    assert_eq!(above.tail, c.unmoved_map_at_k);
    assert!(above.estimate < above.tail, "{above:?}");
    let want = 0.5 * c.weight * (above.estimate - above.tail);
    assert!((c.shift - want).abs() < 1e-12, "{} vs {want}", c.shift);
    let excess = p.excess_centre.map_or(0.0, |e| e.shift);
    assert!((p.estimate - (c.unmoved_map_at_k + excess + c.shift)).abs() < 1e-12);
    assert_eq!(p.model_estimate(), c.unmoved_map_at_k);
    for v in [p.estimate, c.unmoved_map_at_k, above.estimate] {
        assert!(r.interval.lo <= v && v <= r.interval.hi, "{v} {r:?}");
    }
    // Recall@k and hit@1 are not moved by it.
    let plain = predict(
        s,
        &PredictOptions {
            excess_centre: false,
            ..opts
        },
    )
    .unwrap();
    assert!(plain.spacing_centre.is_none() && plain.excess_centre.is_none());
    assert_eq!(plain.estimate, c.unmoved_map_at_k);
    if p.excess_centre.is_none() {
        assert_eq!(plain.hit_at_1, p.hit_at_1);
        assert_eq!(plain.recall_at_k, p.recall_at_k);
    }

    // A hardness file carries the move; a prediction and a curve from it give the estimate.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.csv");
    write_hardness_csv(&path, &hardness_meta(s, &p), &p.hardness).unwrap();
    let (meta, qs) = read_hardness_csv(&path).unwrap();
    let m = meta.spacing_move.expect("the file carries the move");
    assert_eq!((m.rate, m.weight), (c.rate_above, c.weight));
    let q = predict_from_hardness(&meta, &qs, &opts).unwrap();
    assert!((q.estimate - p.estimate).abs() < 1e-12);
    let cq = q.spacing_centre.expect("re-applied from the file");
    assert_eq!((cq.rate_above, cq.weight), (c.rate_above, c.weight));
    assert!((cq.shift - c.shift).abs() < 1e-12);
    assert_eq!(cq.z_above, None);
    let n = p.pool_size as f64;
    let cv = tailrank::predict::curve(s, &opts, n, n, 1).unwrap();
    assert!((cv.points[0].estimate - p.estimate).abs() < 1e-9);
    assert_eq!(cv.spacing_centre, Some(m));
    let fh = tailrank::predict::curve_from_hardness(&meta, &qs, &opts, n, n, 1).unwrap();
    assert!((fh.points[0].estimate - p.estimate).abs() < 1e-9);
}
