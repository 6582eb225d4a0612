//! `vrs sp800-22 FILE`: NIST SP 800-22 Rev. 1a over a raw stream (`vrs sample raw`, or any
//! binary file): the 15 tests on each of --streams consecutive sequences of --bits bits, then
//! the SP's second-level analysis (the proportion of sequences passing each test and the
//! uniformity of its P-values) and one verdict for the battery. Exit 0 when the battery passes,
//! 1 when it fails, 2 on a usage error.

use crate::stats::sp800_22::report::{analyse, Report, BATTERY_ALPHA, UNIFORMITY_ALPHA};
use crate::stats::sp800_22::{run_all, unpack, Classes, PValue, Params, MIN_BITS};
use anyhow::{ensure, Context};
use clap::Args;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use vrs_verifier::progress;

#[derive(Debug, Args)]
pub struct Sp80022Args {
    /// The stream: a binary file, its bits read most significant first in each byte (as NIST's
    /// suite reads one), from its start.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The length n of each sequence, in bits (a multiple of 8, at least 10^6).
    #[arg(long, default_value_t = 1_000_000)]
    bits: usize,
    /// How many consecutive sequences to test (the SP's §4 analysis wants about 1/α of them).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    streams: u64,
    /// The significance level of each test on one sequence.
    #[arg(long, default_value_t = 0.01)]
    alpha: f64,
    /// Bin the longest run, overlapping template and linear complexity statistics with the
    /// class probabilities NIST's sts 2.1.2 uses instead of the exact ones, to compare P-values
    /// with sts's output (the SP's Appendix B is sts's output).
    #[arg(long)]
    sts_classes: bool,
    /// Print the report as JSON (every test, variant and histogram).
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// Print a Markdown summary, a row per test (docs/STATISTICS.md).
    #[arg(long)]
    markdown: bool,
}

pub fn run(args: Sp80022Args) -> anyhow::Result<ExitCode> {
    ensure!(
        args.alpha > 0.0 && args.alpha < 1.0,
        "--alpha must be between 0 and 1"
    );
    ensure!(
        args.bits >= MIN_BITS && args.bits.is_multiple_of(8),
        "--bits {}: need a multiple of 8 of at least {MIN_BITS} (the SP's tests need 10^6 bits)",
        args.bits
    );
    let bytes_per = args.bits / 8;
    let streams = usize::try_from(args.streams).context("--streams")?;
    let want = bytes_per
        .checked_mul(streams)
        .context("--streams × --bits is too large")?;
    if streams > 1000 {
        eprintln!(
            "note: beyond about 1000 sequences the SP's own miscalibrations (its DFT test fails \
             a random stream more often than alpha) become detectable, and the battery can fail \
             a perfect generator: docs/STATISTICS.md section 3"
        );
    }
    let mut file =
        File::open(&args.file).with_context(|| format!("cannot open {}", args.file.display()))?;
    let fit = |have: u64| {
        format!(
            "{} holds {have} bytes: {} sequences of {} bits fit, {streams} asked for; lower \
             --streams or write a larger sample (vrs sample raw --count {want})",
            args.file.display(),
            have / bytes_per as u64,
            args.bits
        )
    };
    // A regular file's size is checked first; a pipe (/dev/stdin) is read until it ends.
    let meta = file.metadata()?;
    if meta.is_file() {
        ensure!(meta.len() >= want as u64, "{}", fit(meta.len()));
    }
    let params = Params {
        classes: if args.sts_classes {
            Classes::Sts
        } else {
            Classes::Exact
        },
        ..Params::default()
    };
    let bar = progress::bar(args.streams, "sequences");
    // A batch of sequences at a time, so that memory stays small whatever --streams is (each
    // sequence in flight takes about 25 bytes per bit: its bits and the FFT's buffer).
    let batch = (rayon::current_num_threads() * 4).min(streams);
    let mut data = vec![0u8; bytes_per * batch];
    let mut results: Vec<Vec<PValue>> = Vec::with_capacity(streams);
    while results.len() < streams {
        let take = batch.min(streams - results.len());
        let chunk = &mut data[..bytes_per * take];
        if let Err(e) = file.read_exact(chunk) {
            bar.finish_and_clear();
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                anyhow::bail!(
                    "{} ended within the sequences {}..{}: lower --streams",
                    args.file.display(),
                    results.len() + 1,
                    results.len() + take
                );
            }
            return Err(anyhow::Error::new(e).context(format!("reading {}", args.file.display())));
        }
        results.par_extend(chunk.par_chunks(bytes_per).map(|sequence| {
            let r = run_all(&unpack(sequence), &params);
            bar.inc(1);
            r
        }));
    }
    bar.finish_and_clear();
    let report = analyse(&results, args.alpha);
    let mut out = std::io::stdout().lock();
    let source = format!(
        "{}: {streams} sequences of {} bits (its first {want} bytes)",
        args.file.display(),
        args.bits
    );
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else if args.markdown {
        write_markdown(&mut out, &report, &source)?;
    } else {
        write_text(&mut out, &report, &source)?;
    }
    Ok(if report.pass {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn verdict(report: &Report) -> String {
    let extreme = if report.extreme == 0 {
        String::new()
    } else {
        format!(
            "; {} with a check beyond P = {:.1e}",
            report.extreme, report.extreme_below
        )
    };
    format!(
        "{} of {} tests flagged (a random stream flags {:.2} on average, and more than {} with \
         probability under {}){extreme}: {}",
        report.flagged,
        report.tests.len(),
        report.expected_flags,
        report.allowed_flags,
        BATTERY_ALPHA / 2.0,
        if report.pass { "PASS" } else { "FAIL" }
    )
}

/// NIST's finalAnalysisReport layout: the ten-bin histogram, the uniformity P-value, the
/// passing proportion and the test, with `*` after a failed check.
fn write_text(out: &mut impl Write, report: &Report, source: &str) -> anyhow::Result<()> {
    writeln!(
        out,
        "NIST SP 800-22 Rev. 1a over {source}; α = {}",
        report.alpha
    )?;
    for i in 1..=10 {
        write!(out, "{:>4} ", format!("C{i}"))?;
    }
    writeln!(out, "P-VALUE   PROPORTION  TEST")?;
    for t in &report.tests {
        for c in t.histogram {
            write!(out, "{c:>4} ")?;
        }
        let uniformity = match t.uniformity_p {
            Some(p) => format!("{p:.6}{}", if t.uniformity_ok { " " } else { "*" }),
            None => "   —    ".into(),
        };
        writeln!(
            out,
            "{uniformity} {:>5}/{:<5}{} {} {}{}",
            t.passed,
            t.sequences,
            if t.proportion_ok { " " } else { "*" },
            t.test,
            t.variant,
            if t.extreme { " !" } else { "" }
        )?;
    }
    // One range per number of sequences (the random excursions tests count fewer).
    let sizes: BTreeMap<u64, (f64, f64)> = report
        .tests
        .iter()
        .map(|t| (t.sequences, (t.proportion_min, t.proportion_max)))
        .collect();
    for (m, (lo, hi)) in sizes.into_iter().rev() {
        writeln!(
            out,
            "passing proportion for {m} sequences: {lo:.6} to {hi:.6} (* outside)"
        )?;
    }
    writeln!(
        out,
        "uniformity: P-value of the histogram ≥ {UNIFORMITY_ALPHA} (* below); ! a check beyond \
         P = {:.1e}, which fails the battery alone",
        report.extreme_below
    )?;
    writeln!(out, "{}", verdict(report))?;
    Ok(())
}

/// A row per test (the 148 templates, 8 and 18 excursion states summed up), then the flags.
fn write_markdown(out: &mut impl Write, report: &Report, source: &str) -> anyhow::Result<()> {
    writeln!(
        out,
        "NIST SP 800-22 Rev. 1a over {source}; α = {}.\n",
        report.alpha
    )?;
    writeln!(
        out,
        "| test | P-values | sequences | lowest passing proportion | lowest uniformity P | flagged |"
    )?;
    writeln!(out, "|---|---:|---:|---:|---:|---:|")?;
    let mut names: Vec<&str> = report.tests.iter().map(|t| t.test).collect();
    names.dedup();
    for name in names {
        let rows: Vec<_> = report.tests.iter().filter(|t| t.test == name).collect();
        let lowest = rows
            .iter()
            .map(|t| t.passed as f64 / t.sequences as f64)
            .fold(f64::INFINITY, f64::min);
        let uniformity = rows
            .iter()
            .filter_map(|t| t.uniformity_p)
            .fold(f64::INFINITY, f64::min);
        let sequences: Vec<u64> = rows.iter().map(|t| t.sequences).collect();
        let (lo, hi) = (
            sequences.iter().min().copied().unwrap_or(0),
            sequences.iter().max().copied().unwrap_or(0),
        );
        writeln!(
            out,
            "| {name} | {} | {} | {lowest:.4} | {} | {} |",
            rows.len(),
            if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}–{hi}")
            },
            if uniformity.is_finite() {
                format!("{uniformity:.6}")
            } else {
                "—".into()
            },
            rows.iter().filter(|t| t.flagged).count()
        )?;
    }
    writeln!(out)?;
    for t in report.tests.iter().filter(|t| t.flagged) {
        writeln!(
            out,
            "- flagged: {} {} — {}/{} passed (range {:.4}–{:.4}, P = {:.2e}), uniformity P {}{}",
            t.test,
            t.variant,
            t.passed,
            t.sequences,
            t.proportion_min,
            t.proportion_max,
            t.proportion_p,
            t.uniformity_p
                .map_or("—".to_string(), |p| format!("{p:.6}")),
            if t.extreme { " (extreme)" } else { "" }
        )?;
    }
    writeln!(out, "\n{}", verdict(report))?;
    Ok(())
}
