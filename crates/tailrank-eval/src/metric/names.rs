//! The metric vocabulary: one name per metric, `name@k` as in ranx and pytrec_eval, shared by
//! `eval`, `predict` and `ilias` (column titles, JSON keys, `--metric` values).
//!
//! | name            | meaning (docs/method.md §3)                                              |
//! |-----------------|--------------------------------------------------------------------------|
//! | `map@k`         | ILIAS AP@k averaged over queries (tie blocks, divisor `min(k, n_q)`)     |
//! | `ap`            | full, untruncated AP (divisor `n_q`)                                     |
//! | `recall@k`      | positives ranked `≤ k`, over `n_q`                                       |
//! | `hit@k`         | 1 when a positive is ranked `≤ k` (`hit@1`: the top item is relevant)   |
//! | `gldv2-map@k`   | the GLDv2 Kaggle AP@k (no tie grouping; official `k` = 100)             |
//!
//! A name without `@k` (`map`, `recall`) takes the command's `--k`; the canonical spelling
//! ([`MetricName`]'s `Display`) always carries its `k`. The older names `hit1` and
//! `gldv2-map100` are read as `hit@1` and `gldv2-map@100`.

use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// What a metric measures; its cut-off lives in [`MetricName::k`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MetricKind {
    /// ILIAS mAP@k.
    Map,
    /// Full AP (no cut-off).
    Ap,
    /// Recall@k.
    Recall,
    /// hit@k.
    Hit,
    /// GLDv2 official mAP@k.
    Gldv2Map,
}

impl MetricKind {
    /// All kinds, with their vocabulary stem, in table order.
    pub const ALL: [(MetricKind, &'static str); 5] = [
        (MetricKind::Map, "map"),
        (MetricKind::Gldv2Map, "gldv2-map"),
        (MetricKind::Ap, "ap"),
        (MetricKind::Recall, "recall"),
        (MetricKind::Hit, "hit"),
    ];

    /// The vocabulary stem (`map`, `recall`, …).
    pub fn stem(self) -> &'static str {
        MetricKind::ALL
            .iter()
            .find(|(k, _)| *k == self)
            .map(|(_, s)| *s)
            .unwrap_or("?")
    }
}

/// One metric of the vocabulary: a kind and its cut-off `k` (`None`: the command's `--k`, or no
/// cut-off for `ap`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MetricName {
    pub kind: MetricKind,
    pub k: Option<usize>,
}

impl MetricName {
    pub const fn new(kind: MetricKind, k: usize) -> Self {
        MetricName { kind, k: Some(k) }
    }

    /// `map@k`.
    pub const fn map(k: usize) -> Self {
        MetricName::new(MetricKind::Map, k)
    }

    /// `recall@k`.
    pub const fn recall(k: usize) -> Self {
        MetricName::new(MetricKind::Recall, k)
    }

    /// `hit@1`.
    pub const HIT_1: MetricName = MetricName::new(MetricKind::Hit, 1);

    /// `metrics` each at `default_k` ([`MetricName::at`]), the first of each name kept in
    /// order: `map@1,map@1` or `hit@1,HIT@1` is one column.
    pub fn distinct_at(metrics: &[MetricName], default_k: usize) -> Vec<MetricName> {
        let mut out: Vec<MetricName> = Vec::new();
        for m in metrics.iter().map(|m| m.at(default_k)) {
            if !out.contains(&m) {
                out.push(m);
            }
        }
        out
    }

    /// The name with a missing `k` filled by `default_k` (`ap` keeps none).
    pub fn at(self, default_k: usize) -> Self {
        match self.kind {
            MetricKind::Ap => MetricName {
                kind: MetricKind::Ap,
                k: None,
            },
            _ => MetricName {
                kind: self.kind,
                k: Some(self.k.unwrap_or(default_k)),
            },
        }
    }

    /// The cut-off (`usize::MAX` for `ap` and an unresolved name).
    pub fn cut(self) -> usize {
        match self.kind {
            MetricKind::Ap => usize::MAX,
            _ => self.k.unwrap_or(usize::MAX),
        }
    }

    /// Column title of the human tables: `mAP@1000`, `R@1000`, `hit@1`, `mAP(full)`,
    /// `GLDv2 mAP@100`.
    pub fn title(self) -> String {
        let k = self.k.map_or(String::from("k"), |k| k.to_string());
        match self.kind {
            MetricKind::Map => format!("mAP@{k}"),
            MetricKind::Ap => "mAP(full)".to_string(),
            MetricKind::Recall => format!("R@{k}"),
            MetricKind::Hit => format!("hit@{k}"),
            MetricKind::Gldv2Map => format!("GLDv2 mAP@{k}"),
        }
    }
}

impl fmt::Display for MetricName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.kind, self.k) {
            (MetricKind::Ap, _) | (_, None) => f.write_str(self.kind.stem()),
            (kind, Some(k)) => write!(f, "{}@{k}", kind.stem()),
        }
    }
}

impl FromStr for MetricName {
    type Err = Error;

    /// `map@100`, `recall@1000`, `hit@1`, `ap`, `gldv2-map@100`, or a stem without `@k`
    /// (`map`, `recall`); also the older `hit1` and `gldv2-map100`. Case-insensitive.
    fn from_str(s: &str) -> Result<Self> {
        let lower = s.trim().to_ascii_lowercase();
        let known = || {
            let stems: Vec<&str> = MetricKind::ALL.iter().map(|(_, s)| *s).collect();
            format!(
                "known: {} (with @k, e.g. map@1000, recall@100, hit@1; ap has no cut-off)",
                stems.join(", ")
            )
        };
        let legacy = match lower.as_str() {
            "hit1" => Some(MetricName::HIT_1),
            "gldv2-map100" => Some(MetricName::new(MetricKind::Gldv2Map, 100)),
            _ => None,
        };
        if let Some(m) = legacy {
            return Ok(m);
        }
        let (stem, k) = match lower.split_once('@') {
            None => (lower.as_str(), None),
            Some((stem, k)) => {
                let k: usize = k.parse().map_err(|_| {
                    Error::option(format!(
                        "metric {s:?}: the cut-off after '@' must be a positive integer"
                    ))
                })?;
                if k == 0 {
                    return Err(Error::option(format!(
                        "metric {s:?}: the cut-off must be at least 1"
                    )));
                }
                (stem, Some(k))
            }
        };
        let Some(&(kind, _)) = MetricKind::ALL.iter().find(|(_, name)| *name == stem) else {
            return Err(Error::option(format!("unknown metric {s:?} ({})", known())));
        };
        if kind == MetricKind::Ap && k.is_some() {
            return Err(Error::option(format!(
                "metric {s:?}: ap is the full, untruncated AP (for a cut-off use map@k)"
            )));
        }
        Ok(MetricName { kind, k })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for s in [
            "map@1000",
            "map@100",
            "recall@1000",
            "hit@1",
            "hit@10",
            "ap",
            "gldv2-map@100",
        ] {
            let m: MetricName = s.parse().unwrap();
            assert_eq!(m.to_string(), s);
        }
        let m: MetricName = "map".parse().unwrap();
        assert_eq!(m.k, None);
        assert_eq!(m.at(1000), MetricName::map(1000));
        assert_eq!("MAP@5".parse::<MetricName>().unwrap(), MetricName::map(5));
        assert_eq!("hit1".parse::<MetricName>().unwrap(), MetricName::HIT_1);
        assert_eq!(
            "gldv2-map100".parse::<MetricName>().unwrap().to_string(),
            "gldv2-map@100"
        );
        assert_eq!("ap".parse::<MetricName>().unwrap().at(10).cut(), usize::MAX);
    }

    #[test]
    fn bad_names_say_what_is_known() {
        for (s, want) in [
            ("mrr", "unknown metric"),
            ("map@0", "at least 1"),
            ("map@x", "positive integer"),
            ("ap@10", "untruncated"),
        ] {
            let e = s.parse::<MetricName>().unwrap_err().to_string();
            assert!(e.contains(want), "{s}: {e}");
        }
        let e = "mrr".parse::<MetricName>().unwrap_err().to_string();
        assert!(e.contains("recall") && e.contains("map@1000"), "{e}");
    }

    #[test]
    fn titles() {
        assert_eq!(MetricName::map(1000).title(), "mAP@1000");
        assert_eq!(MetricName::recall(100).title(), "R@100");
        assert_eq!(MetricName::HIT_1.title(), "hit@1");
    }
}
