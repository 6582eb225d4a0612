//! Benchmark charts: log-log line charts as SVG (plotters), one labelled line per series.

use anyhow::Context;
use plotters::prelude::*;
use std::path::Path;

/// One line of a chart.
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];

/// The smallest power of ten at or below `v`, and the largest at or above `w`.
fn decades(v: f64, w: f64) -> (f64, f64) {
    let lo = 10f64.powf(v.max(f64::MIN_POSITIVE).log10().floor());
    let hi = 10f64.powf(w.max(f64::MIN_POSITIVE).log10().ceil());
    (lo, if hi > lo { hi } else { lo * 10.0 })
}

/// Draws `series` on log-scale axes into the SVG file `path`.
pub fn log_log(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> anyhow::Result<()> {
    let points = series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in points {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    anyhow::ensure!(x0 <= x1, "nothing to plot");
    let (x0, x1) = decades(x0, x1);
    let (y0, y1) = decades(y0, y1);
    let draw = || -> Result<(), Box<dyn std::error::Error + '_>> {
        let root = SVGBackend::new(path, (900, 600)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(80)
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 16))
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| format!("{v:.0e}"))
            .draw()?;
        for (i, s) in series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            chart
                .draw_series(LineSeries::new(
                    s.points.iter().copied(),
                    color.stroke_width(2),
                ))?
                .label(s.label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font(("sans-serif", 16))
            .border_style(BLACK)
            .background_style(WHITE.mix(0.9))
            .draw()?;
        root.present()?;
        Ok(())
    };
    draw()
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("drawing the chart {}", path.display()))
}
