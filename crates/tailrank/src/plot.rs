//! Metric-vs-N curves as SVG/PNG with a bundled font (DejaVu Sans, `assets/`, Bitstream Vera
//! license in `assets/DejaVuSans-LICENSE.txt`), registered from bytes so that PNGs render on a
//! machine without system fonts.
//!
//! The plot: x = pool size N (log axis), y = mAP@k in percent. Predicted curve with its
//! query-bootstrap band, the count baseline (dashed), the power-law and log-linear fits (when
//! levels exist), the evaluate-at-S points at the nested sample sizes, and a vertical marker at
//! the pool's N when known. Written atomically; the format follows the extension (`.svg` or
//! `.png`).

use crate::atomic;
use crate::error::{Error, Result};
use crate::predict::{Curve, CurvePoint};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// The bundled font (DejaVu Sans).
pub static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

const FAMILY: &str = "sans-serif";

fn register_font() -> Result<()> {
    static ONCE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *ONCE
        .get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    if ok {
        Ok(())
    } else {
        Err(Error::internal("the bundled font could not be loaded"))
    }
}

/// Image format of a plot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlotFormat {
    Svg,
    Png,
}

impl PlotFormat {
    /// From the file extension (`svg` or `png`, any case).
    pub fn from_path(path: &Path) -> Result<Self> {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase())
            .as_deref()
        {
            Some("svg") => Ok(PlotFormat::Svg),
            Some("png") => Ok(PlotFormat::Png),
            _ => Err(Error::output(
                path,
                "unknown plot format: the output name must end in .svg or .png",
            )),
        }
    }
}

/// Plot size in pixels.
pub const SIZE: (u32, u32) = (960, 600);

fn pct(x: f64) -> f64 {
    100.0 * x
}

/// Top of the y axis in percent: 10% above the largest value drawn, within [1, 100].
fn y_max(c: &Curve) -> f64 {
    let mut ymax: f64 = 0.0;
    for p in &c.points {
        for v in [
            p.estimate,
            p.hi,
            p.count,
            p.power_law.unwrap_or(0.0),
            p.log_linear.unwrap_or(0.0),
        ] {
            if v.is_finite() {
                ymax = ymax.max(pct(v));
            }
        }
    }
    for l in &c.level_points {
        ymax = ymax.max(pct(l.map_at_k));
    }
    (ymax * 1.1).clamp(1.0, 100.0)
}

/// The outline of the query-bootstrap band: the upper ends left to right, then the lower ends
/// back (the points with an interval).
fn band(pts: &[CurvePoint]) -> Vec<(f64, f64)> {
    pts.iter()
        .filter(|p| p.lo.is_finite())
        .map(|p| (p.pool_size, pct(p.hi)))
        .chain(
            pts.iter()
                .rev()
                .filter(|p| p.lo.is_finite())
                .map(|p| (p.pool_size, pct(p.lo))),
        )
        .collect()
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    c: &Curve,
) -> std::result::Result<(), String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let pts = &c.points;
    // One point (`--from` = `--to`) is drawn as a marker amid a decade on either side.
    let single = pts.len() == 1;
    let lo = pts.first().map_or(1.0, |p| p.pool_size);
    let hi = pts.last().map_or(10.0, |p| p.pool_size).max(lo * 1.0001);
    let (lo, hi) = if single {
        (lo / 10.0, lo * 10.0)
    } else {
        (lo, hi)
    };
    let ymax = y_max(c);
    let title = format!(
        "{} ({}): predicted mAP@{} vs pool size, from S = {}",
        c.model,
        c.query_set,
        c.k,
        crate::report::thousands(c.sample_size)
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FAMILY, 20))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(60)
        .build_cartesian_2d((lo..hi).log_scale(), 0f64..ymax)
        .map_err(|x| e(&x))?;
    chart
        .configure_mesh()
        .x_desc("pool size N (log scale)")
        .y_desc(format!("mAP@{} (%)", c.k))
        .x_label_formatter(&|x| format!("{x:.0e}"))
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 16))
        .light_line_style(BLACK.mix(0.04))
        .draw()
        .map_err(|x| e(&x))?;

    let band = band(pts);
    let blue = RGBColor(31, 119, 180);
    let orange = RGBColor(255, 127, 14);
    let green = RGBColor(44, 160, 44);
    let purple = RGBColor(148, 103, 189);
    let red = RGBColor(214, 39, 40);
    if band.len() >= 3 {
        chart
            .draw_series(std::iter::once(Polygon::new(band, blue.mix(0.2).filled())))
            .map_err(|x| e(&x))?
            .label(format!(
                "{} query-bootstrap band",
                crate::report::confidence_label(c.confidence)
            ))
            .legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 20, y + 5)], blue.mix(0.2).filled())
            });
    }
    chart
        .draw_series(
            LineSeries::new(
                pts.iter().map(|p| (p.pool_size, pct(p.estimate))),
                blue.stroke_width(3),
            )
            .point_size(if single { 5 } else { 0 }),
        )
        .map_err(|x| e(&x))?
        .label("predicted (tail-aware hardness)")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], blue.stroke_width(3)));
    chart
        .draw_series(DashedLineSeries::new(
            pts.iter().map(|p| (p.pool_size, pct(p.count))),
            8,
            5,
            orange.stroke_width(2),
        ))
        .map_err(|x| e(&x))?
        .label("count baseline (K/S)")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], orange.stroke_width(2)));
    let fits = [
        (
            "power-law fit",
            green,
            pts.iter().map(|p| p.power_law).collect::<Vec<_>>(),
        ),
        (
            "log-linear fit",
            purple,
            pts.iter().map(|p| p.log_linear).collect::<Vec<_>>(),
        ),
    ];
    for (name, col, vals) in fits {
        if vals.iter().all(|v| v.is_some()) && !vals.is_empty() {
            chart
                .draw_series(DashedLineSeries::new(
                    pts.iter()
                        .zip(&vals)
                        .map(|(p, v)| (p.pool_size, pct(v.unwrap_or(f64::NAN)))),
                    3,
                    4,
                    col.stroke_width(2),
                ))
                .map_err(|x| e(&x))?
                .label(name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], col.stroke_width(2))
                });
        }
    }
    let lp: Vec<(f64, f64)> = c
        .level_points
        .iter()
        .filter(|l| (l.sample_size as f64) >= lo && (l.sample_size as f64) <= hi)
        .map(|l| (l.sample_size as f64, pct(l.map_at_k)))
        .collect();
    if !lp.is_empty() {
        chart
            .draw_series(lp.iter().map(|&p| Circle::new(p, 5, red.filled())))
            .map_err(|x| e(&x))?
            .label("evaluate-at-S (nested levels)")
            .legend(move |(x, y)| Circle::new((x + 10, y), 5, red.filled()));
    }
    if let Some(n) = c.pool_size {
        let n = n as f64;
        if n >= lo && n <= hi {
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(n, 0.0), (n, ymax)],
                    4,
                    4,
                    BLACK.mix(0.6).stroke_width(1),
                ))
                .map_err(|x| e(&x))?
                .label(format!("pool N = {}", crate::report::thousands(n as u64)))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.6)));
        }
    }
    chart
        .configure_series_labels()
        .label_font((FAMILY, 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

/// Render `c` as SVG text.
pub fn curve_svg(c: &Curve) -> Result<String> {
    register_font()?;
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, SIZE).into_drawing_area();
        draw(root, c).map_err(|m| Error::internal(format!("plot: {m}")))?;
    }
    Ok(s)
}

/// Render `c` as PNG bytes (RGB, 8 bit).
pub fn curve_png(c: &Curve) -> Result<Vec<u8>> {
    register_font()?;
    let (w, h) = SIZE;
    let mut buf = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, SIZE).into_drawing_area();
        draw(root, c).map_err(|m| Error::internal(format!("plot: {m}")))?;
    }
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut wr = enc
            .write_header()
            .map_err(|x| Error::internal(format!("png: {x}")))?;
        wr.write_image_data(&buf)
            .map_err(|x| Error::internal(format!("png: {x}")))?;
    }
    Ok(out)
}

/// Write the curve plot to `path` (`.svg` or `.png`), atomically.
pub fn write_curve(c: &Curve, path: &Path) -> Result<()> {
    let bytes = match PlotFormat::from_path(path)? {
        PlotFormat::Svg => curve_svg(c)?.into_bytes(),
        PlotFormat::Png => curve_png(c)?,
    };
    atomic::write_bytes(path, &bytes)
}
