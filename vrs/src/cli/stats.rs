//! `vrs stats FILE.csv`: the chi-square tests and the return to player of a sample of dice or
//! Sic Bo games (`vrs sample dice|sicbo`, or any CSV whose header names die1, die2 and, for
//! Sic Bo, die3), with one pass/fail threshold for the whole run: every check fails only below
//! p = alpha / (number of checks), so the probability that fair dice fail any of them is at most
//! alpha (Bonferroni). Exit 0 when every check passes, 1 when one fails, 2 on a usage error.

use super::stats_svg::{write_sample, SamplePlots};
use crate::stats::chi_square::{
    faces, faces_power, goodness_of_fit, tests_for, ChiSquare, FacesPower,
};
use crate::stats::rtp::{measure_all, Rtp, STAKE_CENTS};
use crate::stats::tally::Tally;
use anyhow::{bail, ensure, Context};
use clap::Args;
use serde::Serialize;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// The samples: CSV with a header naming die1, die2 (and die3 for Sic Bo); one game a line.
    /// With several, a faces test over every die of them all is added.
    #[arg(required = true, value_name = "FILE.csv")]
    files: Vec<PathBuf>,
    /// The probability that fair dice fail any check of the run (family-wise false alarm).
    #[arg(long, default_value_t = 1e-6)]
    alpha: f64,
    /// The loaded die the report states the faces tests' power against: one face this much
    /// more often than 1/6 (relative: 0.01 is 1 %), the others equally less often.
    #[arg(long, default_value_t = 0.01)]
    excess: f64,
    /// Print the report as JSON.
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// Print the report as Markdown tables with text plots (docs/STATISTICS.md is made of it).
    #[arg(long)]
    markdown: bool,
    /// Also draw the plots as SVG files in DIR: GAME-faces.svg and GAME-totals.svg (each
    /// cell's standardized deviation from expectation) and GAME-rtp.svg (every bet's 99 %
    /// interval), per sample.
    #[arg(long, value_name = "DIR")]
    svg: Option<PathBuf>,
}

/// The report of a run.
#[derive(Debug, Serialize)]
pub struct Report {
    pub alpha: f64,
    /// How many checks share alpha.
    pub checks: usize,
    /// The p-value below which one check fails: alpha / checks.
    pub threshold: f64,
    pub samples: Vec<Sample>,
    /// The faces of every die of every sample, when there are several.
    pub all_faces: Option<Checked<ChiSquare>>,
    /// The power of the faces test over the most dice (all of them with several samples)
    /// against the loaded die of --excess.
    pub power: FacesPower,
    pub passed: bool,
}

/// One sample's checks.
#[derive(Debug, Serialize)]
pub struct Sample {
    pub file: String,
    pub game: &'static str,
    pub rolls: u64,
    pub chi_square: Vec<Checked<ChiSquare>>,
    /// Measured at a stake of this many cents.
    pub stake_cents: u64,
    pub rtp: Vec<Checked<Rtp>>,
}

#[derive(Debug, Serialize)]
pub struct Checked<T> {
    #[serde(flatten)]
    pub result: T,
    pub passed: bool,
}

pub fn run(args: StatsArgs) -> anyhow::Result<ExitCode> {
    ensure!(
        args.alpha > 0.0 && args.alpha < 1.0,
        "--alpha must be between 0 and 1"
    );
    ensure!(
        args.excess > 0.0 && args.excess < 5.0,
        "--excess must be a relative excess above 0 (0.01 is 1 %)"
    );
    let mut tallies = Vec::new();
    for file in &args.files {
        let tally = read_tally(file)?;
        ensure!(tally.rolls() > 0, "{} holds no games", file.display());
        tallies.push((file.display().to_string(), tally));
    }
    let report = analyse(&tallies, args.alpha, args.excess);
    if let Some(dir) = &args.svg {
        for (i, sample) in report.samples.iter().enumerate() {
            // A second sample of the same game gets its position as a suffix.
            let twin = report.samples[..i].iter().any(|s| s.game == sample.game);
            let stem = if twin {
                format!("{}-{}", sample.game, i + 1)
            } else {
                sample.game.to_string()
            };
            let plots = SamplePlots {
                game: sample.game,
                rolls: sample.rolls,
                chi_square: sample.chi_square.iter().map(|c| &c.result).collect(),
                rtp: sample.rtp.iter().map(|r| &r.result).collect(),
            };
            for path in write_sample(dir, &stem, &plots)? {
                eprintln!("wrote {}", path.display());
            }
        }
    }
    let mut out = std::io::stdout().lock();
    let printed = if args.json {
        serde_json::to_writer_pretty(&mut out, &report)
            .map_err(std::io::Error::from)
            .and_then(|()| writeln!(out))
    } else if args.markdown {
        print_markdown(&mut out, &report)
    } else {
        print_report(&mut out, &report)
    };
    // A reader that stops early (`| head`) is not an error of the run.
    match printed {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e.into()),
        _ => {}
    }
    Ok(if report.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Every check of the samples at family-wise false-alarm probability `alpha`.
pub fn analyse(tallies: &[(String, Tally)], alpha: f64, excess: f64) -> Report {
    let results: Vec<_> = tallies
        .iter()
        .map(|(file, t)| (file, t, tests_for(t), measure_all(t)))
        .collect();
    let all_faces = (tallies.len() > 1).then(|| {
        let mut observed = [0u64; 6];
        for (_, t) in tallies {
            for (face, n) in observed.iter_mut().zip(faces(t).observed) {
                *face += n;
            }
        }
        goodness_of_fit("faces, every die", &observed, &[1.0 / 6.0; 6])
    });
    let checks = results
        .iter()
        .map(|(_, _, c, r)| c.len() + r.len())
        .sum::<usize>()
        + usize::from(all_faces.is_some());
    let threshold = alpha / checks as f64;
    let check = |p: f64| p >= threshold;
    let samples: Vec<Sample> = results
        .into_iter()
        .map(|(file, t, chi, rtp)| Sample {
            file: file.clone(),
            game: if t.dice == 2 { "dice" } else { "sicbo" },
            rolls: t.rolls(),
            chi_square: chi
                .into_iter()
                .map(|c| Checked {
                    passed: check(c.p_value),
                    result: c,
                })
                .collect(),
            stake_cents: STAKE_CENTS,
            rtp: rtp
                .into_iter()
                .map(|r| Checked {
                    passed: check(r.p_value),
                    result: r,
                })
                .collect(),
        })
        .collect();
    let all_faces = all_faces.map(|c| Checked {
        passed: check(c.p_value),
        result: c,
    });
    // The faces test over the most dice: all of them pooled, or the one sample's.
    let dice: u64 = tallies.iter().map(|(_, t)| t.rolls() * t.dice as u64).sum();
    let passed = samples
        .iter()
        .all(|s| s.chi_square.iter().all(|c| c.passed) && s.rtp.iter().all(|r| r.passed))
        && all_faces.as_ref().is_none_or(|c| c.passed);
    Report {
        alpha,
        checks,
        threshold,
        samples,
        all_faces,
        power: faces_power(dice, excess, threshold),
        passed,
    }
}

/// The tally of a CSV sample: its die columns, found by name in the header.
pub fn read_tally(path: &PathBuf) -> anyhow::Result<Tally> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut lines = BufReader::with_capacity(1 << 20, file).lines();
    let header = lines
        .next()
        .with_context(|| format!("{} is empty", path.display()))??;
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    let column = |name: &str| names.iter().position(|n| *n == name);
    let mut dice: Vec<usize> = Vec::new();
    for name in ["die1", "die2", "die3"] {
        if let Some(i) = column(name) {
            dice.push(i);
        }
    }
    if dice.len() < 2 || column("die1").is_none() || column("die2").is_none() {
        bail!(
            "{}: the header must name die1 and die2 (and die3 for Sic Bo), not {header:?}",
            path.display()
        );
    }
    let mut tally = Tally::new(dice.len());
    let mut roll = vec![0u8; dice.len()];
    for (n, line) in lines.enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').collect();
        for (slot, &i) in roll.iter_mut().zip(&dice) {
            *slot = fields
                .get(i)
                .and_then(|f| f.trim().parse().ok())
                .with_context(|| {
                    format!(
                        "{} line {}: no die in column {}",
                        path.display(),
                        n + 2,
                        i + 1
                    )
                })?;
        }
        tally
            .add(&roll)
            .map_err(|e| anyhow::anyhow!("{} line {}: {e}", path.display(), n + 2))?;
    }
    Ok(tally)
}

fn chi_header(out: &mut impl Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{:<26} {:>12} {:>6} {:>5} {:>12} {:>11}  verdict",
        "chi-square test", "observations", "cells", "df", "statistic", "p-value"
    )
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "pass"
    } else {
        "FAIL"
    }
}

fn chi_row(out: &mut impl Write, c: &Checked<ChiSquare>) -> std::io::Result<()> {
    let t = &c.result;
    writeln!(
        out,
        "{:<26} {:>12} {:>6} {:>5} {:>12.3} {:>11.3e}  {}",
        t.name,
        t.observations,
        t.cells,
        t.df,
        t.statistic,
        t.p_value,
        verdict(c.passed)
    )
}

fn rtp_row(out: &mut impl Write, c: &Checked<Rtp>) -> std::io::Result<()> {
    let t = &c.result;
    writeln!(
        out,
        "{:<14} {:>9.4}% {:>10.6} {:>10.6} [{:>9.6}, {:>9.6}] {:>8.3} {:>11.3e}  {}",
        t.label(),
        t.house_edge * 100.0,
        t.expected,
        t.observed,
        t.ci99[0],
        t.ci99[1],
        t.z,
        t.p_value,
        verdict(c.passed)
    )
}

fn print_report(out: &mut impl Write, r: &Report) -> std::io::Result<()> {
    writeln!(
        out,
        "{} checks share a false-alarm probability of {:e}: each fails below p = {:.3e}",
        r.checks, r.alpha, r.threshold
    )?;
    for s in &r.samples {
        writeln!(out, "\n{}: {} rolls of {}\n", s.file, s.rolls, s.game)?;
        chi_header(out)?;
        for c in &s.chi_square {
            chi_row(out, c)?;
        }
        writeln!(
            out,
            "\nreturn to player at a stake of {}.{:02} (99 % confidence interval of the measured return):",
            s.stake_cents / 100,
            s.stake_cents % 100
        )?;
        writeln!(
            out,
            "{:<14} {:>10} {:>10} {:>10} {:>23} {:>8} {:>11}  verdict",
            "bet", "edge", "expected", "measured", "99 % interval", "z", "p-value"
        )?;
        for c in &s.rtp {
            rtp_row(out, c)?;
        }
    }
    if let Some(c) = &r.all_faces {
        writeln!(out)?;
        chi_header(out)?;
        chi_row(out, c)?;
    }
    writeln!(
        out,
        "\nfaces test power: a die showing one face {:.1} % more often is caught with probability {:.4} ({} dice, λ = {:.1}, threshold χ² = {:.2})",
        r.power.excess * 100.0,
        r.power.power,
        r.power.dice,
        r.power.lambda,
        r.power.threshold
    )?;
    writeln!(
        out,
        "{}",
        if r.passed {
            "all checks passed"
        } else {
            "a check FAILED"
        }
    )
}

/// A track of `width` cells for values from −`span` to +`span`: `mark` from the centre to `v`.
fn bar(v: f64, span: f64, width: usize) -> String {
    let half = width / 2;
    let cells = ((v.abs() / span) * half as f64).round().min(half as f64) as usize;
    let mut track: Vec<char> = vec!['·'; width + 1];
    track[half] = '|';
    for i in 1..=cells {
        let at = if v < 0.0 { half - i } else { half + i };
        track[at] = '█';
    }
    track.into_iter().collect()
}

fn print_markdown(out: &mut impl Write, r: &Report) -> std::io::Result<()> {
    let p = |v: f64| format!("{v:.3e}");
    writeln!(
        out,
        "{} checks share a false-alarm probability of {:e}: each fails below p = {:.3e}.\n",
        r.checks, r.alpha, r.threshold
    )?;
    for s in &r.samples {
        writeln!(out, "#### {} rolls of {} (`{}`)\n", s.rolls, s.game, s.file)?;
        writeln!(
            out,
            "| chi-square test | observations | cells | df | statistic | p-value | verdict |"
        )?;
        writeln!(out, "|---|---:|---:|---:|---:|---:|---|")?;
        for c in &s.chi_square {
            let t = &c.result;
            writeln!(
                out,
                "| {} | {} | {} | {} | {:.3} | {} | {} |",
                t.name,
                t.observations,
                t.cells,
                t.df,
                t.statistic,
                p(t.p_value),
                verdict(c.passed)
            )?;
        }
        for c in s
            .chi_square
            .iter()
            .filter(|c| c.result.name == "faces" || c.result.name == "totals")
        {
            let t = &c.result;
            // Cell i is face i + 1, or total i + the lowest total.
            let first = match (t.name.as_str(), s.game) {
                ("faces", _) => 1,
                (_, "dice") => 2,
                _ => 3,
            };
            writeln!(
                out,
                "\n{} against expectation, (observed − expected) / √expected, from −4 to +4:\n",
                t.name
            )?;
            writeln!(out, "```")?;
            for (i, (o, e)) in t.observed.iter().zip(&t.expected).enumerate() {
                let z = (*o as f64 - e) / e.sqrt();
                writeln!(
                    out,
                    "{:>3} {:>10} {:>13.1} {:>+6.2} {}",
                    first + i,
                    o,
                    e,
                    z,
                    bar(z, 4.0, 32)
                )?;
            }
            writeln!(out, "```")?;
        }
        writeln!(
            out,
            "\nReturn to player at a stake of {}.{:02}; the plot shows the 99 % interval (`─`) and the measured return (`●`) around the rules' return (`|`), in standard errors from −5 to +5:\n",
            s.stake_cents / 100,
            s.stake_cents % 100
        )?;
        writeln!(out, "| bet | house edge | rules' return | measured | 99 % interval | z | p-value | verdict |")?;
        writeln!(out, "|---|---:|---:|---:|---|---:|---:|---|")?;
        for c in &s.rtp {
            let t = &c.result;
            writeln!(
                out,
                "| {} | {:.4} % | {:.6} | {:.6} | [{:.6}, {:.6}] | {:+.3} | {} | {} |",
                t.label(),
                t.house_edge * 100.0,
                t.expected,
                t.observed,
                t.ci99[0],
                t.ci99[1],
                t.z,
                p(t.p_value),
                verdict(c.passed)
            )?;
        }
        let inside = s
            .rtp
            .iter()
            .filter(|c| {
                c.result.ci99[0] <= c.result.expected && c.result.expected <= c.result.ci99[1]
            })
            .count();
        writeln!(
            out,
            "\nThe rules' return lies inside the measured 99 % interval for {inside} of {} bets (with fair dice each interval misses it with probability about 1 %, so a miss or two among many bets is expected; the verdict is the z-test at the run's threshold).",
            s.rtp.len()
        )?;
        writeln!(out, "\n```")?;
        for c in &s.rtp {
            let t = &c.result;
            writeln!(out, "{:<10} {}", t.label(), interval(t))?;
        }
        writeln!(out, "```\n")?;
    }
    if let Some(c) = &r.all_faces {
        let t = &c.result;
        writeln!(
            out,
            "Faces of every die of the run: {} dice, χ² = {:.3} with {} df, p = {}: {}.\n",
            t.observations,
            t.statistic,
            t.df,
            p(t.p_value),
            verdict(c.passed)
        )?;
    }
    writeln!(
        out,
        "Power: a die showing one face {:.1} % more often (relative) fails the faces test over {} dice with probability {:.4} (noncentrality λ = {:.1}, threshold χ² = {:.2}).\n",
        r.power.excess * 100.0, r.power.dice, r.power.power, r.power.lambda, r.power.threshold
    )?;
    writeln!(
        out,
        "Verdict: {}.",
        if r.passed {
            "every check passed"
        } else {
            "a check FAILED"
        }
    )
}

/// The 99 % interval and the measured return, in standard errors around the rules' return.
fn interval(t: &Rtp) -> String {
    const WIDTH: usize = 41;
    const SPAN: f64 = 5.0;
    let se = if t.z != 0.0 {
        (t.observed - t.expected) / t.z
    } else {
        0.0
    };
    let pos = |v: f64| {
        let z = if se > 0.0 { (v - t.expected) / se } else { 0.0 };
        (((z / SPAN).clamp(-1.0, 1.0) + 1.0) / 2.0 * (WIDTH - 1) as f64).round() as usize
    };
    let mut track: Vec<char> = vec!['·'; WIDTH];
    for c in track
        .iter_mut()
        .take(pos(t.ci99[1]) + 1)
        .skip(pos(t.ci99[0]))
    {
        *c = '─';
    }
    track[WIDTH / 2] = '|';
    track[pos(t.observed)] = '●';
    track.into_iter().collect()
}
