//! How the per-query pool score laws are drawn ([`TailModel`]): the presets' GPD-like families
//! and the validation corpus's families that no GPD fits (docs/reference/validation.md, "The validation
//! corpus").

use super::law::{Component, Family, ScoreLaw};
use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

/// How the per-query pool score laws are drawn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "kebab-case")]
pub enum TailModel {
    /// One family per query, chosen with the given weights (GPD tail over an exponential body,
    /// power-function, Kumaraswamy), GPD-like shape `ξ` uniform on `xi_range`, Kumaraswamy
    /// body exponent `a` uniform on `kumaraswamy_a`, upper endpoint uniform on `endpoint`.
    Families {
        weights: [f64; 3],
        xi_range: [f64; 2],
        kumaraswamy_a: [f64; 2],
        endpoint: [f64; 2],
    },
    /// A two-component tail: a main family (as in `Families` with equal GPD / power-function
    /// weights) plus a rare component of weight `ε` (log-uniform on `weight_range`) whose
    /// power-function tail (`β` uniform on `beta_range`) ends `gap` (uniform on `gap_range`)
    /// above the main endpoint. A single GPD fitted at the sample's threshold sees the main
    /// component and calls positives beyond its endpoint immune although they are not.
    MixtureTail {
        xi_range: [f64; 2],
        endpoint: [f64; 2],
        weight_range: [f64; 2],
        gap_range: [f64; 2],
        beta_range: [f64; 2],
    },
    /// Beta mixtures: a main Beta(a, b) (`a`, `b` uniform on `a`, `b`) on `[lo, e]`, `e`
    /// uniform on `endpoint`, plus 1..=`extra` rare Beta components (weight log-uniform on
    /// `weight_range`, endpoint `e + gap`, `gap` uniform on `gap_range`, width uniform on
    /// [0.2, 0.5], shape `a` as the main one, `b` uniform on [1.5, 6]). Beta with `a ≠ 1` is not
    /// GPD above any threshold, and the rare parts change the shape inside the fitted tail.
    BetaMixture {
        a: [f64; 2],
        b: [f64; 2],
        endpoint: [f64; 2],
        extra: usize,
        weight_range: [f64; 2],
        gap_range: [f64; 2],
    },
    /// Truncated-normal mixtures: a main Normal(μ, sd) (uniform on `mu`, `sd`) and a second one
    /// of weight log-uniform on `weight_range`, centred `shift·sd` above (`shift` uniform on
    /// `shift`) with spread `ratio·sd` (`ratio` uniform on `sd_ratio`); each truncated to
    /// `[μ_c − 10 sd_c, μ_c + 8.5 sd_c]`. Gaussian tails: no GPD above any threshold.
    TruncNormalMixture {
        mu: [f64; 2],
        sd: [f64; 2],
        weight_range: [f64; 2],
        shift: [f64; 2],
        sd_ratio: [f64; 2],
    },
    /// Kumaraswamy(a, b) only, `a` uniform on `a` (well above 1: far from GPD at finite
    /// thresholds), `b` uniform on `b`, on `[lo, e]`, `lo` uniform on [−0.2, 0], `e` uniform on
    /// `endpoint`.
    Kumaraswamy {
        a: [f64; 2],
        b: [f64; 2],
        endpoint: [f64; 2],
    },
    /// Per-query heterogeneity of shape: each query draws one of `models` (with the given
    /// weights), then that model's parameters.
    Heterogeneous { models: Vec<WeightedModel> },
}

/// One entry of [`TailModel::Heterogeneous`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WeightedModel {
    pub weight: f64,
    pub model: TailModel,
}

pub(super) fn uniform<R: Rng + ?Sized>(rng: &mut R, [a, b]: [f64; 2]) -> f64 {
    a + (b - a) * rng.random::<f64>()
}

fn draw_main_family<R: Rng + ?Sized>(
    rng: &mut R,
    which: usize,
    xi: f64,
    e: f64,
    ka: [f64; 2],
) -> Family {
    match which {
        0 => {
            let u0 = uniform(rng, [0.15, 0.3]);
            Family::GpdTail {
                u0,
                p_u: 0.01,
                sigma: -xi * (e - u0),
                xi,
                sigma_body: uniform(rng, [0.03, 0.06]),
            }
        }
        1 => {
            let lower = uniform(rng, [-0.15, 0.05]);
            Family::PowerFunction {
                endpoint: e,
                width: e - lower,
                beta: -1.0 / xi,
            }
        }
        _ => {
            let lo = uniform(rng, [-0.2, 0.0]);
            Family::Kumaraswamy {
                lo,
                width: e - lo,
                a: uniform(rng, ka),
                b: -1.0 / xi,
            }
        }
    }
}

pub(super) fn draw_law<R: Rng + ?Sized>(rng: &mut R, model: &TailModel) -> ScoreLaw {
    match model {
        TailModel::Families {
            weights,
            xi_range,
            kumaraswamy_a,
            endpoint,
        } => {
            let (weights, xi_range, kumaraswamy_a, endpoint) =
                (*weights, *xi_range, *kumaraswamy_a, *endpoint);
            let total: f64 = weights.iter().sum();
            let mut u = rng.random::<f64>() * total;
            let mut which = 2;
            for (i, w) in weights.iter().enumerate() {
                if u < *w {
                    which = i;
                    break;
                }
                u -= w;
            }
            let xi = uniform(rng, xi_range);
            let e = uniform(rng, endpoint);
            ScoreLaw::single(draw_main_family(rng, which, xi, e, kumaraswamy_a))
        }
        TailModel::MixtureTail {
            xi_range,
            endpoint,
            weight_range,
            gap_range,
            beta_range,
        } => {
            let (xi_range, endpoint, weight_range, gap_range, beta_range) =
                (*xi_range, *endpoint, *weight_range, *gap_range, *beta_range);
            let which = usize::from(rng.random::<f64>() < 0.5);
            let xi = uniform(rng, xi_range);
            let e = uniform(rng, endpoint);
            let main = draw_main_family(rng, which, xi, e, [1.0, 1.0]);
            let eps = log_uniform(rng, weight_range);
            let gap = uniform(rng, gap_range);
            let e2 = main.endpoint() + gap;
            let rare = Family::PowerFunction {
                endpoint: e2,
                width: 0.3 + gap,
                beta: uniform(rng, beta_range),
            };
            ScoreLaw {
                components: vec![
                    Component {
                        weight: 1.0 - eps,
                        family: main,
                    },
                    Component {
                        weight: eps,
                        family: rare,
                    },
                ],
            }
        }
        TailModel::BetaMixture {
            a,
            b,
            endpoint,
            extra,
            weight_range,
            gap_range,
        } => {
            let e = uniform(rng, *endpoint);
            let lo = uniform(rng, [-0.2, 0.0]);
            let main = Family::Beta {
                lo,
                width: e - lo,
                a: uniform(rng, *a),
                b: uniform(rng, *b),
            };
            let ranges = [*weight_range, *gap_range];
            ScoreLaw {
                components: with_upper_betas(rng, main, e, *a, *extra, ranges),
            }
        }
        TailModel::TruncNormalMixture {
            mu,
            sd,
            weight_range,
            shift,
            sd_ratio,
        } => {
            let (m1, s1) = (uniform(rng, *mu), uniform(rng, *sd));
            let eps = log_uniform(rng, *weight_range);
            let m2 = m1 + s1 * uniform(rng, *shift);
            let s2 = s1 * uniform(rng, *sd_ratio);
            let tn = |mu: f64, sd: f64| Family::TruncNormal {
                mu,
                sd,
                lo: mu - 10.0 * sd,
                hi: mu + 8.5 * sd,
            };
            ScoreLaw {
                components: vec![
                    Component {
                        weight: 1.0 - eps,
                        family: tn(m1, s1),
                    },
                    Component {
                        weight: eps,
                        family: tn(m2, s2),
                    },
                ],
            }
        }
        TailModel::Kumaraswamy { a, b, endpoint } => {
            let e = uniform(rng, *endpoint);
            let lo = uniform(rng, [-0.2, 0.0]);
            ScoreLaw::single(Family::Kumaraswamy {
                lo,
                width: e - lo,
                a: uniform(rng, *a),
                b: uniform(rng, *b),
            })
        }
        TailModel::Heterogeneous { models } => {
            let total: f64 = models.iter().map(|m| m.weight).sum();
            let mut u = rng.random::<f64>() * total;
            let mut pick = models.len() - 1;
            for (i, m) in models.iter().enumerate() {
                if u < m.weight {
                    pick = i;
                    break;
                }
                u -= m.weight;
            }
            draw_law(rng, &models[pick].model)
        }
    }
}

/// The components of a [`TailModel::BetaMixture`] law: `main` (ending at `e`) first, of the
/// weight the others leave, then up to `extra` narrow Betas above `e`, each of weight
/// log-uniform on `weight_range` and gap above `e` uniform on `gap_range`.
fn with_upper_betas<R: Rng + ?Sized>(
    rng: &mut R,
    main: Family,
    e: f64,
    a: [f64; 2],
    extra: usize,
    [weight_range, gap_range]: [[f64; 2]; 2],
) -> Vec<Component> {
    let parts = if extra == 0 {
        0
    } else {
        rng.random_range(1..=extra)
    };
    let mut comps = Vec::with_capacity(parts + 1);
    let mut rest = 1.0;
    for _ in 0..parts {
        let w = log_uniform(rng, weight_range);
        let ec = e + uniform(rng, gap_range);
        let width = uniform(rng, [0.2, 0.5]);
        rest -= w;
        comps.push(Component {
            weight: w,
            family: Family::Beta {
                lo: ec - width,
                width,
                a: uniform(rng, a),
                b: uniform(rng, [1.5, 6.0]),
            },
        });
    }
    comps.insert(
        0,
        Component {
            weight: rest,
            family: main,
        },
    );
    comps
}

/// `10^U(log10 lo, log10 hi)`.
pub(super) fn log_uniform<R: Rng + ?Sized>(rng: &mut R, [a, b]: [f64; 2]) -> f64 {
    10f64.powf(uniform(rng, [a.log10(), b.log10()]))
}
