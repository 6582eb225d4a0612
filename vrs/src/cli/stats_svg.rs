//! `vrs stats --svg DIR`: the report's plots as SVG files (plotters), for readers who would
//! rather look than read a table: per sample, the faces' and the totals' deviations from
//! expectation, and every bet's 99 % return interval around the rules' return.

use crate::stats::chi_square::ChiSquare;
use crate::stats::rtp::Rtp;
use anyhow::Context;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

const BAR: RGBColor = RGBColor(31, 119, 180);
const INTERVAL: RGBColor = RGBColor(44, 160, 44);
const GUIDE: RGBColor = RGBColor(160, 160, 160);
const BAND: RGBColor = RGBColor(214, 39, 40);
/// z of the two-sided 99 % interval.
const Z99: f64 = 2.575_829_303_548_901;

/// One sample's results, as `vrs stats` measured them.
pub struct SamplePlots<'a> {
    /// `dice` or `sicbo`.
    pub game: &'a str,
    pub rolls: u64,
    pub chi_square: Vec<&'a ChiSquare>,
    pub rtp: Vec<&'a Rtp>,
}

/// Writes DIR/STEM-faces.svg, DIR/STEM-totals.svg and DIR/STEM-rtp.svg; returns their paths.
pub fn write_sample(dir: &Path, stem: &str, sample: &SamplePlots) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut written = Vec::new();
    for (name, labels) in [("faces", face_labels()), ("totals", total_labels(sample))] {
        if let Some(c) = sample.chi_square.iter().find(|c| c.name == name) {
            let path = dir.join(format!("{stem}-{name}.svg"));
            deviations(&path, sample, c, &labels)?;
            written.push(path);
        }
    }
    let path = dir.join(format!("{stem}-rtp.svg"));
    intervals(&path, sample, &sample.rtp)?;
    written.push(path);
    Ok(written)
}

fn face_labels() -> Vec<String> {
    (1..=6).map(|f| f.to_string()).collect()
}

fn total_labels(sample: &SamplePlots) -> Vec<String> {
    let dice = if sample.game == "dice" { 2 } else { 3 };
    (dice..=6 * dice).map(|t| t.to_string()).collect()
}

type DrawResult<'a> = Result<(), Box<dyn std::error::Error + 'a>>;

/// Bars of (observed − expected) / √expected per cell, with the ±1.96 band a fair cell stays
/// inside 95 % of the time.
fn deviations(
    path: &Path,
    sample: &SamplePlots,
    c: &ChiSquare,
    labels: &[String],
) -> anyhow::Result<()> {
    let d: Vec<f64> = c
        .observed
        .iter()
        .zip(&c.expected)
        .map(|(&o, &e)| (o as f64 - e) / e.sqrt())
        .collect();
    let span = d.iter().fold(3.0f64, |m, v| m.max(v.abs() + 0.5)).ceil();
    let title = format!(
        "{} of {} {} rolls: (observed − expected) / √expected; χ² = {:.2}, {} df, p = {:.3}",
        c.name, sample.rolls, sample.game, c.statistic, c.df, c.p_value
    );
    let cells = d.len();
    let draw = || -> DrawResult<'_> {
        let root = SVGBackend::new(path, (900, 420)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&title, ("sans-serif", 16))
            .margin(14)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d(-0.5f64..cells as f64 - 0.5, -span..span)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(cells)
            .x_label_formatter(&|x| {
                let i = x.round();
                if (x - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < labels.len() {
                    labels[i as usize].clone()
                } else {
                    String::new()
                }
            })
            .x_desc(if c.name == "faces" { "face" } else { "total" })
            .y_desc("standardized deviation")
            .draw()?;
        for (y, color) in [(-1.96, BAND), (0.0, GUIDE), (1.96, BAND)] {
            chart.draw_series(LineSeries::new(
                [(-0.5, y), (cells as f64 - 0.5, y)],
                color.stroke_width(1),
            ))?;
        }
        chart.draw_series(d.iter().enumerate().map(|(i, &v)| {
            let x = i as f64;
            Rectangle::new([(x - 0.3, 0.0), (x + 0.3, v)], BAR.filled())
        }))?;
        root.present()?;
        Ok(())
    };
    draw().map_err(|e| anyhow::anyhow!("drawing {}: {e}", path.display()))
}

/// One row per bet: the 99 % interval of the measured return and the measured return, in
/// standard errors around the rules' return (the vertical line at 0).
fn intervals(path: &Path, sample: &SamplePlots, bets: &[&Rtp]) -> anyhow::Result<()> {
    // (label, low, measured, high) in standard errors.
    let rows: Vec<(String, f64, f64, f64)> = bets
        .iter()
        .map(|t| {
            let se = if t.z != 0.0 {
                (t.observed - t.expected) / t.z
            } else {
                (t.ci99[1] - t.ci99[0]) / (2.0 * Z99)
            };
            let at = |v: f64| if se > 0.0 { (v - t.expected) / se } else { 0.0 };
            (t.label(), at(t.ci99[0]), t.z, at(t.ci99[1]))
        })
        .collect();
    let span = rows
        .iter()
        .fold(5.0f64, |m, r| m.max(r.1.abs()).max(r.3.abs()))
        .ceil();
    let n = rows.len();
    let title = format!(
        "return to player of {} {} rolls: 99 % interval and measured return, in standard errors \
         from the rules' return",
        sample.rolls, sample.game
    );
    let height = 120 + 18 * n as u32;
    let draw = || -> DrawResult<'_> {
        let root = SVGBackend::new(path, (900, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&title, ("sans-serif", 15))
            .margin(14)
            .x_label_area_size(36)
            .y_label_area_size(90)
            .build_cartesian_2d(-span..span, -0.5f64..n as f64 - 0.5)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .y_label_formatter(&|y| {
                let i = y.round();
                if (y - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < n {
                    rows[n - 1 - i as usize].0.clone()
                } else {
                    String::new()
                }
            })
            .x_desc("standard errors from the rules' return")
            .draw()?;
        chart.draw_series(LineSeries::new(
            [(0.0, -0.5), (0.0, n as f64 - 0.5)],
            GUIDE.stroke_width(1),
        ))?;
        for (i, (_, lo, mid, hi)) in rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            chart.draw_series(LineSeries::new(
                [(*lo, y), (*hi, y)],
                INTERVAL.stroke_width(3),
            ))?;
            chart.draw_series(std::iter::once(Circle::new((*mid, y), 4, BLACK.filled())))?;
        }
        root.present()?;
        Ok(())
    };
    draw().map_err(|e| anyhow::anyhow!("drawing {}: {e}", path.display()))
}
