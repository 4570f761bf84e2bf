//! The inline SVG charts of the HTML report ([`super::html`]): hand-written SVG (no fonts or
//! scripts to load), every value read from the prediction's JSON document.
//!
//! * [`curve_svg`]: mAP@k against pool size (log axis): the evaluate-at-S readings of the
//!   nested levels at `S_ℓ`, and the estimate at N with the interval band.
//! * [`levels_svg`]: each level's own prediction at N (± one standard error) against its
//!   sample size `S_ℓ`, over the band of the interval at N.
//! * [`histogram_svg`]: the per-query predicted AP@k at N in ten bins of width 0.1.

use std::fmt::Write;

const WIDTH: f64 = 560.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 44.0;

/// One point of a chart: x (a pool or sample size, or a bin), y (a fraction of mAP).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

/// The interval at N drawn as a band: `[lo, hi]` and the estimate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    pub estimate: f64,
    pub lo: f64,
    pub hi: f64,
}

/// The data box of a chart: x in `log10` of a size, y in percent.
struct Frame {
    x: (f64, f64),
    y: (f64, f64),
}

impl Frame {
    /// A frame that holds `xs` (sizes > 0, log axis) and `ys` (fractions), padded.
    fn around(xs: &[f64], ys: &[f64]) -> Frame {
        let lx: Vec<f64> = xs.iter().filter(|x| **x > 0.0).map(|x| x.log10()).collect();
        let (x0, x1) = span(&lx, 0.5);
        let py: Vec<f64> = ys.iter().map(|y| 100.0 * y).collect();
        let (y0, y1) = span(&py, 2.0);
        let pad = 0.08 * (y1 - y0);
        Frame {
            x: (x0 - 0.15, x1 + 0.15),
            y: ((y0 - pad).max(0.0), (y1 + pad).min(100.0).max(y0 + 1.0)),
        }
    }

    fn px(&self, size: f64) -> f64 {
        LEFT + (size.log10() - self.x.0) / (self.x.1 - self.x.0) * (WIDTH - LEFT - RIGHT)
    }

    fn py(&self, fraction: f64) -> f64 {
        let p = 100.0 * fraction;
        HEIGHT - BOTTOM - (p - self.y.0) / (self.y.1 - self.y.0) * (HEIGHT - TOP - BOTTOM)
    }
}

/// `(min, max)` of the finite values, at least `min_width` apart (`(0, 1)` when none).
fn span(v: &[f64], min_width: f64) -> (f64, f64) {
    let finite = v.iter().copied().filter(|x| x.is_finite());
    let lo = finite.clone().fold(f64::INFINITY, f64::min);
    let hi = finite.fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let mid = 0.5 * (lo + hi);
    if hi - lo < min_width {
        (mid - 0.5 * min_width, mid + 0.5 * min_width)
    } else {
        (lo, hi)
    }
}

fn open(out: &mut String, id: &str, title: &str) {
    let _ = write!(
        out,
        r#"<svg id="{id}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{title}">"#
    );
}

/// Axes, grid and tick labels: x at the powers of ten in the frame, y at round percents.
fn axes(out: &mut String, f: &Frame, x_label: &str) {
    let (bx, by) = (HEIGHT - BOTTOM, LEFT);
    let _ = write!(
        out,
        r##"<line x1="{by}" y1="{bx}" x2="{}" y2="{bx}" stroke="#444"/><line x1="{by}" y1="{TOP}" x2="{by}" y2="{bx}" stroke="#444"/>"##,
        WIDTH - RIGHT
    );
    for e in (f.x.0.ceil() as i32)..=(f.x.1.floor() as i32) {
        let x = f.px(10f64.powi(e));
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{bx}" stroke="#ddd"/><text x="{x:.1}" y="{}" text-anchor="middle">10<tspan dy="-6" font-size="9">{e}</tspan></text>"##,
            bx + 16.0
        );
    }
    let step = nice_step(f.y.1 - f.y.0);
    let mut t = (f.y.0 / step).ceil() * step;
    while t <= f.y.1 + 1e-9 {
        let y = f.py(t / 100.0);
        let _ = write!(
            out,
            r##"<line x1="{by}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#eee"/><text x="{}" y="{:.1}" text-anchor="end">{t:.0}%</text>"##,
            WIDTH - RIGHT,
            by - 6.0,
            y + 4.0
        );
        t += step;
    }
    let _ = write!(
        out,
        r#"<text x="{:.1}" y="{}" text-anchor="middle">{x_label}</text>"#,
        0.5 * (LEFT + WIDTH - RIGHT),
        HEIGHT - 6.0
    );
}

/// A round tick step (1, 2, 5, 10, 20 … percent) giving about five ticks over `range`.
fn nice_step(range: f64) -> f64 {
    [1.0, 2.0, 5.0, 10.0, 20.0, 25.0]
        .into_iter()
        .find(|s| range / s <= 6.0)
        .unwrap_or(25.0)
}

/// The band `[lo, hi]` over x in `[x0, x1]` (pixels) with the estimate as a dashed line.
fn band(out: &mut String, f: &Frame, b: &Band, x0: f64, x1: f64) {
    if b.lo.is_finite() && b.hi.is_finite() {
        let (top, bot) = (f.py(b.hi), f.py(b.lo));
        let _ = write!(
            out,
            r##"<rect class="band" x="{x0:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="#d62728" fill-opacity="0.15" stroke="#d62728" stroke-opacity="0.4"/>"##,
            x1 - x0,
            (bot - top).max(1.0)
        );
    }
    if b.estimate.is_finite() {
        let y = f.py(b.estimate);
        let _ = write!(
            out,
            r##"<line x1="{x0:.1}" y1="{y:.1}" x2="{x1:.1}" y2="{y:.1}" stroke="#d62728" stroke-dasharray="5 3"/>"##
        );
    }
}

fn dot(out: &mut String, x: f64, y: f64, fill: &str, class: &str) {
    let _ = write!(
        out,
        r#"<circle class="{class}" cx="{x:.1}" cy="{y:.1}" r="4" fill="{fill}" stroke="{fill}"/>"#
    );
}

/// mAP@k against pool size: the readings at the level sizes joined by a line, a dotted line
/// from the level-0 reading to the estimate at N, and the interval at N as a band.
pub fn curve_svg(readings: &[Point], pool_size: f64, b: &Band) -> String {
    let mut xs: Vec<f64> = readings.iter().map(|p| p.x).collect();
    xs.push(pool_size);
    let mut ys: Vec<f64> = readings.iter().map(|p| p.y).collect();
    ys.extend([b.estimate, b.lo, b.hi]);
    let f = Frame::around(&xs, &ys);
    let mut out = String::new();
    open(&mut out, "curve", "mAP@k against pool size");
    axes(&mut out, &f, "pool size (log scale)");
    let xn = f.px(pool_size);
    band(&mut out, &f, b, xn - 10.0, xn + 10.0);
    let mut line: Vec<(f64, f64)> = readings.iter().map(|p| (f.px(p.x), f.py(p.y))).collect();
    line.sort_by(|a, b| a.0.total_cmp(&b.0));
    let pts: Vec<String> = line.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
    let _ = write!(
        out,
        r##"<polyline points="{}" fill="none" stroke="#1f77b4" stroke-width="2"/>"##,
        pts.join(" ")
    );
    if let (Some(last), true) = (line.last(), b.estimate.is_finite()) {
        let _ = write!(
            out,
            r##"<line x1="{:.1}" y1="{:.1}" x2="{xn:.1}" y2="{:.1}" stroke="#d62728" stroke-dasharray="2 3"/>"##,
            last.0,
            last.1,
            f.py(b.estimate)
        );
    }
    for (x, y) in &line {
        dot(&mut out, *x, *y, "#1f77b4", "reading");
    }
    if b.estimate.is_finite() {
        dot(&mut out, xn, f.py(b.estimate), "#d62728", "estimate");
    }
    let _ = write!(
        out,
        r##"<text x="{:.1}" y="{}" text-anchor="end" fill="#d62728">N</text></svg>"##,
        xn - 12.0,
        TOP + 12.0
    );
    out
}

/// Each level's prediction at N (± one standard error) at its sample size, over the band of
/// the interval at N.
pub fn levels_svg(predictions: &[(Point, f64)], b: &Band) -> String {
    let xs: Vec<f64> = predictions.iter().map(|(p, _)| p.x).collect();
    let mut ys: Vec<f64> = predictions
        .iter()
        .flat_map(|(p, se)| [p.y - se, p.y + se])
        .collect();
    ys.extend([b.estimate, b.lo, b.hi]);
    let f = Frame::around(&xs, &ys);
    let mut out = String::new();
    open(&mut out, "levels-chart", "each level's prediction at N");
    axes(&mut out, &f, "sample size S of the level (log scale)");
    band(&mut out, &f, b, LEFT, WIDTH - RIGHT);
    for (p, se) in predictions {
        let x = f.px(p.x);
        if se.is_finite() {
            let _ = write!(
                out,
                r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#555"/>"##,
                f.py(p.y - se),
                f.py(p.y + se)
            );
        }
        dot(&mut out, x, f.py(p.y), "#2ca02c", "level-prediction");
    }
    out.push_str("</svg>");
    out
}

/// Bar chart of `counts` (ten bins of the per-query AP@k at N, `[0, 0.1)`, …, `[0.9, 1]`).
pub fn histogram_svg(counts: &[usize; 10]) -> String {
    let max = counts.iter().copied().max().unwrap_or(0).max(1) as f64;
    let mut out = String::new();
    open(&mut out, "histogram", "per-query AP@k at N");
    let (x0, x1, y0) = (LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM);
    let w = (x1 - x0) / 10.0;
    let _ = write!(
        out,
        r##"<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="#444"/>"##
    );
    for (i, &c) in counts.iter().enumerate() {
        let h = c as f64 / max * (HEIGHT - TOP - BOTTOM - 14.0);
        let x = x0 + i as f64 * w;
        let _ = write!(
            out,
            r##"<rect class="bin" data-count="{c}" x="{:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="#9467bd"/><text x="{:.1}" y="{:.1}" text-anchor="middle">{c}</text><text x="{x:.1}" y="{}" text-anchor="middle">{:.1}</text>"##,
            x + 2.0,
            y0 - h,
            w - 4.0,
            x + 0.5 * w,
            y0 - h - 4.0,
            y0 + 16.0,
            i as f64 / 10.0
        );
    }
    let _ = write!(
        out,
        r#"<text x="{x1}" y="{}" text-anchor="end">1.0</text><text x="{:.1}" y="{}" text-anchor="middle">predicted AP@k at N (queries per bin)</text></svg>"#,
        y0 + 16.0,
        0.5 * (x0 + x1),
        HEIGHT - 6.0
    );
    out
}

/// Queries per bin of width 0.1 of the AP@k values (NaN skipped; 1.0 in the last bin).
pub fn bin_counts(aps: &[f64]) -> [usize; 10] {
    let mut c = [0usize; 10];
    for a in aps.iter().filter(|a| a.is_finite()) {
        c[((a * 10.0).floor().max(0.0) as usize).min(9)] += 1;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_hold_every_finite_value_once() {
        let c = bin_counts(&[0.0, 0.05, 0.1, 0.95, 1.0, f64::NAN, 0.55]);
        assert_eq!(c, [2, 1, 0, 0, 0, 1, 0, 0, 0, 2]);
    }

    #[test]
    fn frame_maps_the_data_inside_the_plot() {
        let f = Frame::around(&[1e4, 1e6], &[0.3, 0.5]);
        for (x, y) in [(1e4, 0.3), (1e6, 0.5)] {
            assert!((LEFT..=WIDTH - RIGHT).contains(&f.px(x)));
            assert!((TOP..=HEIGHT - BOTTOM).contains(&f.py(y)));
        }
        assert!(f.py(0.5) < f.py(0.3), "higher mAP is drawn higher");
    }
}
