//! `vrs bench batch` (squarings per second of each batch backend against batch size) and
//! `vrs bench verify` (Wesolowski proofs verified per second against batch size), each with a
//! table, `--json` and an SVG chart (`--plot`).

use super::plot::{self, Series};
use anyhow::{bail, Context};
use clap::Args;
use num_bigint::BigUint;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use vrs_engine::batch::simd::{Kernel, Simd};
use vrs_engine::batch::{self, BatchBackend, BatchKind, VerifyItem};
use vrs_engine::group::{Element, Modulus};
use vrs_engine::vdf::Proof;
use vrs_verifier::progress;

/// What both batch benchmarks take: the backends and the group.
#[derive(Debug, Args)]
struct Common {
    /// Comma-separated batch backends: cpu, simd, gpu (one unavailable here is reported and
    /// skipped).
    #[arg(
        long = "backend",
        value_delimiter = ',',
        default_value = "cpu,simd,gpu",
        value_parser = parse_kind
    )]
    backends: Vec<BatchKind>,
    /// Comma-separated kernels of the simd backend, one row each, labelled simd:<kernel>:
    /// avx512ifma (16 values in zmm registers), avx512ifma-256 (8 values in ymm registers),
    /// avx2, portable. Default: one simd row with the kernel this CPU runs by default (the
    /// first of those it has). A kernel this CPU lacks is reported and skipped.
    #[arg(long = "simd-kernel", value_delimiter = ',', value_parser = parse_kernel)]
    simd_kernels: Vec<Kernel>,
    /// Group.
    #[arg(long, default_value = "rsa2048")]
    modulus: String,
}

#[derive(Debug, Args)]
pub struct BatchBenchArgs {
    #[command(flatten)]
    common: Common,
    /// Comma-separated batch sizes (independent values squared together).
    #[arg(long, value_delimiter = ',', default_value = "1,16,256,4096,65536")]
    sizes: Vec<usize>,
    /// Seconds each measurement aims at (the squarings per value are sized for it).
    #[arg(long, default_value_t = 1.0)]
    seconds: f64,
    /// Print a JSON array of {backend, batch, squarings_per_s, ns_per_square}.
    #[arg(long)]
    json: bool,
    /// Draw squarings per second against batch size (log-log), one line per backend, as SVG.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct VerifyBenchArgs {
    #[command(flatten)]
    common: Common,
    /// Comma-separated batch sizes (proofs verified together).
    #[arg(long, value_delimiter = ',', default_value = "1,16,256,4096")]
    sizes: Vec<usize>,
    /// T of the proofs (pool-entry sized by default).
    #[arg(long, short = 't', default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    iterations: u64,
    /// Seconds each measurement aims at (a batch is verified as often as fits).
    #[arg(long, default_value_t = 1.0)]
    seconds: f64,
    /// Print a JSON array of {backend, batch, proofs_per_s, us_per_proof}.
    #[arg(long)]
    json: bool,
    /// Draw proofs verified per second against batch size (log-log), one line per backend.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

/// One row of `vrs bench batch --json`.
#[derive(Debug, Serialize)]
struct SquareRow {
    backend: String,
    batch: usize,
    squarings_per_s: f64,
    ns_per_square: f64,
}

/// One row of `vrs bench verify --json`.
#[derive(Debug, Serialize)]
struct VerifyRow {
    backend: String,
    batch: usize,
    proofs_per_s: f64,
    us_per_proof: f64,
}

fn parse_kind(s: &str) -> Result<BatchKind, String> {
    BatchKind::parse(s).map_err(|e| e.to_string())
}

fn parse_kernel(s: &str) -> Result<Kernel, String> {
    Kernel::parse(s).map_err(|e| e.to_string())
}

/// A backend and its label in the rows: its name, or simd:<kernel> where kernels were asked.
type Labelled = (String, Box<dyn BatchBackend>);

/// The backends asked for that open here; the others are named on stderr.
fn open_backends(common: &Common) -> anyhow::Result<Vec<Labelled>> {
    let mut open: Vec<Labelled> = Vec::new();
    for &kind in &common.backends {
        if kind == BatchKind::Simd && !common.simd_kernels.is_empty() {
            for &k in &common.simd_kernels {
                let label = format!("simd:{}", k.name());
                match Simd::with_kernel(k) {
                    Ok(b) => {
                        eprintln!("{label}: {}", b.describe());
                        open.push((label, Box::new(b)));
                    }
                    Err(e) => eprintln!("{label}: skipped: {e}"),
                }
            }
            continue;
        }
        match batch::open(kind) {
            Ok(b) => {
                eprintln!("{}: {}", kind.name(), b.describe());
                open.push((kind.name().to_owned(), b));
            }
            Err(e) => eprintln!("{}: skipped: {e}", kind.name()),
        }
    }
    if open.is_empty() {
        bail!("none of the backends asked for can run here");
    }
    Ok(open)
}

fn check_common(sizes: &[usize], seconds: f64) -> anyhow::Result<()> {
    if sizes.is_empty() || sizes.contains(&0) {
        bail!("--sizes must be positive batch sizes, e.g. 1,16,256");
    }
    if seconds.is_nan() || seconds <= 0.0 {
        bail!("--seconds must be positive");
    }
    Ok(())
}

/// Distinct residues below N, the same for every backend.
fn inputs(modulus: &Modulus, n: usize) -> Vec<Element> {
    (0..n as u64)
        .map(|i| {
            let mut seed = [0u8; 32];
            seed[..8].copy_from_slice(&i.to_le_bytes());
            modulus.hash_to_group(&seed)
        })
        .collect()
}

/// One untimed call of each kernel, so that what a backend does once per modulus (the gpu
/// compiles its pipelines for the modulus' size: seconds on lavapipe) stays out of the rates.
fn warm_up(backend: &dyn BatchBackend, modulus: &Modulus, value: &BigUint) -> anyhow::Result<()> {
    let mut xs = vec![value.clone()];
    backend
        .square_many(modulus, &mut xs, 1)
        .and_then(|_| backend.pow_many(modulus, &xs, &[BigUint::from(3u8)]))
        .with_context(|| format!("{}: warm-up", backend.name()))?;
    Ok(())
}

/// Squarings per second of `backend` on `n` values, over about `seconds`: k is sized from a
/// short probe so that one call takes about that long.
fn square_rate(
    backend: &dyn BatchBackend,
    modulus: &Modulus,
    values: &[Element],
    seconds: f64,
) -> anyhow::Result<f64> {
    let fresh = || values.iter().map(|v| v.value().clone()).collect::<Vec<_>>();
    let mut k = 4u64;
    loop {
        let mut xs = fresh();
        let start = Instant::now();
        backend.square_many(modulus, &mut xs, k)?;
        let took = start.elapsed().as_secs_f64();
        if took >= seconds * 0.8 || k >= 1 << 40 {
            return Ok((values.len() as f64 * k as f64) / took);
        }
        // Aim straight for the target once the probe is long enough to trust.
        k = if took > 0.02 {
            ((k as f64) * seconds / took).ceil() as u64
        } else {
            k * 8
        };
    }
}

pub fn bench_batch(args: BatchBenchArgs) -> anyhow::Result<ExitCode> {
    check_common(&args.sizes, args.seconds)?;
    let modulus = Modulus::by_name(&args.common.modulus)?;
    let backends = open_backends(&args.common)?;
    let largest = args.sizes.iter().copied().max().unwrap_or(1);
    let values = inputs(&modulus, largest);
    let bar = progress::bar(
        (backends.len() * args.sizes.len()) as u64,
        "squaring batches",
    );
    let mut rows = Vec::new();
    for (label, b) in &backends {
        warm_up(b.as_ref(), &modulus, values[0].value())?;
        for &n in &args.sizes {
            let rate = square_rate(b.as_ref(), &modulus, &values[..n], args.seconds)
                .with_context(|| format!("{label} at batch {n}"))?;
            rows.push(SquareRow {
                backend: label.clone(),
                batch: n,
                squarings_per_s: rate,
                ns_per_square: 1e9 / rate,
            });
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    if let Some(path) = &args.plot {
        let series = series(&backends, |name| {
            rows.iter()
                .filter(|r| r.backend == name)
                .map(|r| (r.batch as f64, r.squarings_per_s))
                .collect()
        });
        plot::log_log(
            path,
            &format!("Batch squaring, {} (independent values)", modulus.id()),
            "batch size (values)",
            "squarings per second",
            &series,
        )?;
        eprintln!("chart written to {}", path.display());
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "batch squaring, {}; ratio to cpu at the same batch size",
        modulus.id()
    );
    println!(
        "{:<20} {:>8} {:>16} {:>12} {:>8}",
        "backend", "batch", "squarings/s", "ns/square", "ratio"
    );
    for r in &rows {
        let base = rows
            .iter()
            .find(|c| c.backend == "cpu" && c.batch == r.batch)
            .map(|c| r.squarings_per_s / c.squarings_per_s);
        println!(
            "{:<20} {:>8} {:>16.0} {:>12.1} {:>8}",
            r.backend,
            r.batch,
            r.squarings_per_s,
            r.ns_per_square,
            base.map_or_else(|| "-".to_owned(), |x| format!("{x:.2}"))
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn series(backends: &[Labelled], points: impl Fn(&str) -> Vec<(f64, f64)>) -> Vec<Series> {
    backends
        .iter()
        .map(|(label, _)| Series {
            label: label.clone(),
            points: points(label),
        })
        .collect()
}

/// `n` valid proofs of T squarings, made once (on the cpu backend) for every measurement.
fn proofs(modulus: &Modulus, n: usize, t: u64) -> anyhow::Result<Vec<VerifyItem>> {
    let secrets: Vec<[u8; 32]> = (0..n as u64)
        .map(|i| {
            let mut s = [0u8; 32];
            s[..8].copy_from_slice(&i.to_le_bytes());
            s
        })
        .collect();
    let entries = vrs_engine::pool::compute_entries(
        &batch::cpu::Cpu::new(),
        modulus,
        &[0x42; 32],
        1,
        &secrets,
        t,
    )?;
    entries
        .iter()
        .map(|e| {
            Ok(VerifyItem {
                x: modulus.decode_input(&e.x)?,
                y: modulus.decode("y", &e.y)?,
                t,
                proof: Proof {
                    l: BigUint::from_bytes_be(&e.l),
                    pi: modulus.decode("pi", &e.pi)?,
                },
            })
        })
        .collect()
}

pub fn bench_verify(args: VerifyBenchArgs) -> anyhow::Result<ExitCode> {
    check_common(&args.sizes, args.seconds)?;
    let modulus = Modulus::by_name(&args.common.modulus)?;
    let backends = open_backends(&args.common)?;
    let largest = args.sizes.iter().copied().max().unwrap_or(1);
    eprintln!("making {largest} proofs of T = {}…", args.iterations);
    let items = proofs(&modulus, largest, args.iterations)?;
    let bar = progress::bar(
        (backends.len() * args.sizes.len()) as u64,
        "verifying batches",
    );
    let mut rows = Vec::new();
    for (label, b) in &backends {
        warm_up(b.as_ref(), &modulus, items[0].x.value())?;
        for &n in &args.sizes {
            let start = Instant::now();
            let mut done = 0usize;
            while done == 0 || start.elapsed().as_secs_f64() < args.seconds {
                let answers = batch::verify_many(b.as_ref(), &modulus, &items[..n])
                    .with_context(|| format!("{label} at batch {n}"))?;
                if let Some((i, e)) = answers
                    .iter()
                    .enumerate()
                    .find_map(|(i, a)| a.as_ref().err().map(|e| (i, e)))
                {
                    bail!("{label} rejected valid proof {i}: {e}");
                }
                done += n;
            }
            let rate = done as f64 / start.elapsed().as_secs_f64();
            rows.push(VerifyRow {
                backend: label.clone(),
                batch: n,
                proofs_per_s: rate,
                us_per_proof: 1e6 / rate,
            });
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    if let Some(path) = &args.plot {
        let series = series(&backends, |name| {
            rows.iter()
                .filter(|r| r.backend == name)
                .map(|r| (r.batch as f64, r.proofs_per_s))
                .collect()
        });
        plot::log_log(
            path,
            &format!(
                "Batch verification, {} (Wesolowski, T = {})",
                modulus.id(),
                args.iterations
            ),
            "batch size (proofs)",
            "proofs verified per second",
            &series,
        )?;
        eprintln!("chart written to {}", path.display());
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "batch verification, {}, T = {}; ratio to cpu at the same batch size",
        modulus.id(),
        args.iterations
    );
    println!(
        "{:<20} {:>8} {:>14} {:>12} {:>8}",
        "backend", "batch", "proofs/s", "µs/proof", "ratio"
    );
    for r in &rows {
        let base = rows
            .iter()
            .find(|c| c.backend == "cpu" && c.batch == r.batch)
            .map(|c| r.proofs_per_s / c.proofs_per_s);
        println!(
            "{:<20} {:>8} {:>14.0} {:>12.1} {:>8}",
            r.backend,
            r.batch,
            r.proofs_per_s,
            r.us_per_proof,
            base.map_or_else(|| "-".to_owned(), |x| format!("{x:.2}"))
        );
    }
    Ok(ExitCode::SUCCESS)
}
