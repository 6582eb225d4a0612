//! `vrs bench vdf` (ns per squaring per backend, against GMP in the same run),
//! `vrs bench proof` (an epoch-sized evaluation, its proof and verification) and
//! `vrs bench pool`; `vrs bench batch` and `vrs bench verify` live in bench_batch.rs.

use anyhow::bail;
use clap::{Args, Subcommand};
use serde::Serialize;
use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use vrs_engine::backend::fast::Fast;
use vrs_engine::backend::{Backend, BackendKind};
use vrs_engine::batch::{self, BatchBackend, BatchKind};
use vrs_engine::group::Modulus;
use vrs_engine::vdf::{self, EvalOptions};
use vrs_engine::{calibrate, with_backend};
use vrs_verifier::progress;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Time one modular squaring on every backend, interleaved round by round so that all
    /// rows see the same machine, with the ratio to GMP's faster path (gmp rows need a build
    /// with --features gmp).
    Vdf(VdfBenchArgs),
    /// Evaluate an epoch-sized VDF, then time the proof and the verification.
    Proof(ProofBenchArgs),
    /// Pool generation: complete entries (T_pool squarings, proof, leaf) per second on each
    /// backend, on one thread and on all, against `fast` on one thread in the same run.
    Pool(PoolBenchArgs),
    /// Batch backends (cpu, simd, gpu): squarings per second against batch size, many
    /// independent values at once, with a table, --json and an SVG chart (--plot).
    Batch(super::bench_batch::BatchBenchArgs),
    /// Batch verification of Wesolowski proofs on each batch backend: proofs per second
    /// against batch size, with a table, --json and an SVG chart (--plot).
    Verify(super::bench_batch::VerifyBenchArgs),
}

#[derive(Debug, Args)]
pub struct PoolBenchArgs {
    /// Group.
    #[arg(long, default_value = "rsa2048")]
    modulus: String,
    /// Squarings per entry (the service's --pool-iterations).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    iterations: u64,
    /// Threads for the parallel rows (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// Seconds per row.
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
    /// Comma-separated backends (default: all in this build).
    #[arg(long, value_delimiter = ',')]
    backends: Vec<String>,
    /// Comma-separated batch backends (cpu, simd, gpu) for rows that compute whole batches of
    /// entries side by side on every thread, as the service's pool generator does (rows
    /// batch:<name>; with cpu among them, each other batch row's ratio to it is printed too).
    #[arg(long = "batch", value_delimiter = ',', value_parser = parse_batch_kind)]
    batch: Vec<BatchKind>,
    /// Entries per batch in the batch rows (the service's --pool-batch).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=8192))]
    batch_size: u64,
    /// Print a JSON array of {backend, threads, entries_per_s, us_per_entry, ratio}.
    #[arg(long)]
    json: bool,
}

fn parse_batch_kind(s: &str) -> Result<BatchKind, String> {
    BatchKind::parse(s).map_err(|e| e.to_string())
}

#[derive(Debug, Args)]
pub struct VdfBenchArgs {
    /// Group to square in.
    #[arg(long, default_value = "rsa2048")]
    modulus: String,
    /// Seconds of squaring per backend (split into --rounds rounds).
    #[arg(long, default_value_t = 1.0)]
    seconds: f64,
    /// Rounds; each backend's figure is its fastest round.
    #[arg(long, default_value_t = 10)]
    rounds: u32,
    /// Comma-separated backends (default: all in this build).
    #[arg(long, value_delimiter = ',')]
    backends: Vec<String>,
    /// Print a JSON array of {backend, ns_per_square, squarings_per_s, ratio_to_gmp}.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct ProofBenchArgs {
    /// Target evaluation time in seconds (T is calibrated for it), unless --iterations.
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// T, overriding the calibration.
    #[arg(long, short = 't')]
    iterations: Option<u64>,
    /// Group.
    #[arg(long, default_value = "rsa2048")]
    modulus: String,
    /// Verifications to average.
    #[arg(long, default_value_t = 200)]
    verifications: u32,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(cmd: BenchCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        BenchCommand::Vdf(args) => bench_vdf(args),
        BenchCommand::Proof(args) => bench_proof(args),
        BenchCommand::Pool(args) => bench_pool(args),
        BenchCommand::Batch(args) => super::bench_batch::bench_batch(args),
        BenchCommand::Verify(args) => super::bench_batch::bench_verify(args),
    }
}

/// One row of `vrs bench pool --json`.
#[derive(Debug, Serialize)]
struct PoolRow {
    /// A single-chain backend, or batch:<name> for a batch backend.
    backend: String,
    threads: usize,
    entries_per_s: f64,
    us_per_entry: f64,
    /// entries_per_s / (fast on one thread, same run).
    ratio: f64,
}

/// Complete pool entries per second on `backend` with `threads` threads for `seconds`.
fn pool_rate<B: Backend + Sync>(
    backend: &B,
    modulus: &Modulus,
    t: u64,
    threads: usize,
    seconds: f64,
) -> anyhow::Result<f64> {
    let workers = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    let seed = [0x5a; 32];
    let start = Instant::now();
    let mut done = 0u64;
    while start.elapsed().as_secs_f64() < seconds {
        let chunk = (threads as u64) * 4;
        workers.install(|| {
            use rayon::prelude::*;
            (done..done + chunk).into_par_iter().try_for_each(|i| {
                let e =
                    vrs_engine::pool::compute_entry(backend, modulus, &seed, i + 1, [7; 32], t)?;
                black_box(vrs_engine::pool::entry_leaf(&e));
                Ok::<_, vrs_engine::Error>(())
            })
        })?;
        done += chunk;
    }
    Ok(done as f64 / start.elapsed().as_secs_f64())
}

/// Complete pool entries per second computed `size` at a time on a batch backend (every
/// thread), for `seconds`: the service's pool generator's path (`pool::compute_entries`).
fn pool_batch_rate(
    backend: &dyn BatchBackend,
    modulus: &Modulus,
    t: u64,
    size: u64,
    seconds: f64,
) -> anyhow::Result<f64> {
    let seed = [0x5a; 32];
    let secrets: Vec<[u8; 32]> = (0..size)
        .map(|i| {
            let mut s = [7u8; 32];
            s[..8].copy_from_slice(&i.to_le_bytes());
            s
        })
        .collect();
    let start = Instant::now();
    let mut done = 0u64;
    while done == 0 || start.elapsed().as_secs_f64() < seconds {
        let entries =
            vrs_engine::pool::compute_entries(backend, modulus, &seed, done + 1, &secrets, t)?;
        black_box(vrs_engine::pool::batch_root(&entries));
        done += size;
    }
    Ok(done as f64 / start.elapsed().as_secs_f64())
}

fn bench_pool(args: PoolBenchArgs) -> anyhow::Result<ExitCode> {
    if args.seconds.is_nan() || args.seconds <= 0.0 {
        bail!("--seconds must be positive");
    }
    let modulus = Modulus::by_name(&args.modulus)?;
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = args.threads.unwrap_or(all).max(1);
    let mut kinds = backend_kinds(&args.backends)?;
    // The yardstick first: fast on one thread.
    kinds.retain(|k| *k != BackendKind::Fast);
    kinds.insert(0, BackendKind::Fast);
    let mut plan: Vec<(BackendKind, usize)> = Vec::new();
    for k in &kinds {
        plan.push((*k, 1));
        if threads > 1 {
            plan.push((*k, threads));
        }
    }
    let bar = progress::bar(
        (plan.len() + args.batch.len()) as u64,
        "generating pool entries",
    );
    let mut rows = Vec::new();
    let mut yardstick = None;
    for (kind, n) in plan {
        let rate = with_backend!(kind, &modulus, |b| pool_rate(
            &b,
            &modulus,
            args.iterations,
            n,
            args.seconds
        ))??;
        let base = *yardstick.get_or_insert(rate);
        rows.push(PoolRow {
            backend: kind.name().to_owned(),
            threads: n,
            entries_per_s: rate,
            us_per_entry: 1e6 / rate,
            ratio: rate / base,
        });
        bar.inc(1);
    }
    for &kind in &args.batch {
        let label = format!("batch:{}", kind.name());
        let backend = match batch::open_with(kind, threads) {
            Ok(b) => b,
            Err(e) => {
                bar.suspend(|| eprintln!("{label}: skipped: {e}"));
                continue;
            }
        };
        bar.suspend(|| eprintln!("{label}: {}", backend.describe()));
        // One untimed batch: what a backend does once (a GPU's pipelines) is not timed.
        pool_batch_rate(backend.as_ref(), &modulus, args.iterations, 1, 1e-9)?;
        let rate = pool_batch_rate(
            backend.as_ref(),
            &modulus,
            args.iterations,
            args.batch_size,
            args.seconds,
        )?;
        rows.push(PoolRow {
            backend: label,
            threads,
            entries_per_s: rate,
            us_per_entry: 1e6 / rate,
            ratio: rate / yardstick.unwrap_or(rate),
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "pool entries, {} with T_pool = {} (squarings, proof, leaf); ratio to fast on 1 thread",
        modulus.id(),
        args.iterations
    );
    println!(
        "{:<14} {:>7} {:>12} {:>12} {:>7}",
        "backend", "threads", "entries/s", "µs/entry", "ratio"
    );
    for r in &rows {
        println!(
            "{:<14} {:>7} {:>12.0} {:>12.1} {:>7.2}",
            r.backend, r.threads, r.entries_per_s, r.us_per_entry, r.ratio
        );
    }
    if let Some(cpu) = rows.iter().find(|r| r.backend == "batch:cpu") {
        for r in rows
            .iter()
            .filter(|r| r.backend.starts_with("batch:") && r.backend != cpu.backend)
        {
            println!(
                "{} / batch:cpu: {:.2} (batches of {})",
                r.backend,
                r.entries_per_s / cpu.entries_per_s,
                args.batch_size
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One row of `vrs bench vdf --json`.
#[derive(Debug, Serialize)]
struct Row {
    backend: &'static str,
    ns_per_square: f64,
    squarings_per_s: f64,
    /// ns_per_square / GMP's faster path (gmp or gmp-mulmod); null without GMP.
    ratio_to_gmp: Option<f64>,
}

type Runner = Box<dyn FnMut(u64)>;

/// A closure that squares its own residue n times on backend `kind`.
fn runner(kind: BackendKind, modulus: &Modulus) -> anyhow::Result<Runner> {
    let x = modulus.hash_to_group(&[0xbe; 32]);
    let r = with_backend!(kind, modulus, |b| {
        let mut e = b.load(x.value());
        Box::new(move |n: u64| {
            b.square_n(&mut e, n);
            black_box(&e);
        }) as Runner
    })?;
    Ok(r)
}

/// The backends named by `--backends`, or every one in this build.
fn backend_kinds(names: &[String]) -> anyhow::Result<Vec<BackendKind>> {
    if names.is_empty() {
        return Ok(BackendKind::all());
    }
    Ok(names
        .iter()
        .map(|n| BackendKind::parse(n))
        .collect::<Result<_, _>>()?)
}

fn bench_vdf(args: VdfBenchArgs) -> anyhow::Result<ExitCode> {
    if args.seconds.is_nan() || args.seconds <= 0.0 || args.rounds == 0 {
        bail!("--seconds must be positive and --rounds at least 1");
    }
    let modulus = Modulus::by_name(&args.modulus)?;
    let kinds = backend_kinds(&args.backends)?;
    let mut runners = kinds
        .iter()
        .map(|&k| runner(k, &modulus))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // Size each backend's batch so that one round takes seconds / rounds.
    let round = Duration::from_secs_f64(args.seconds / f64::from(args.rounds));
    let batches: Vec<u64> = runners
        .iter_mut()
        .map(|r| {
            r(200); // warm-up
            let t0 = Instant::now();
            r(200);
            let per = t0.elapsed().as_secs_f64() / 200.0;
            ((round.as_secs_f64() / per) as u64).max(1)
        })
        .collect();
    let bar = progress::bar(u64::from(args.rounds) * kinds.len() as u64, "benchmarking");
    let mut best = vec![f64::INFINITY; kinds.len()];
    for _ in 0..args.rounds {
        for (i, r) in runners.iter_mut().enumerate() {
            let t0 = Instant::now();
            r(batches[i]);
            best[i] = best[i].min(t0.elapsed().as_nanos() as f64 / batches[i] as f64);
            bar.inc(1);
        }
    }
    bar.finish_and_clear();

    let gmp = kinds
        .iter()
        .zip(&best)
        .filter(|(k, _)| k.is_gmp())
        .map(|(_, ns)| *ns)
        .reduce(f64::min);
    let rows: Vec<Row> = kinds
        .iter()
        .zip(&best)
        .map(|(k, &ns)| Row {
            backend: k.name(),
            ns_per_square: ns,
            squarings_per_s: 1e9 / ns,
            ratio_to_gmp: gmp.map(|g| ns / g),
        })
        .collect();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    let kernel = Fast::prepare(&modulus)?.kernel().name();
    println!(
        "{} ({} bits), {} rounds of {:.2} s per backend, best round",
        modulus.id(),
        modulus.bits(),
        args.rounds,
        round.as_secs_f64()
    );
    println!(
        "{:<20} {:>12} {:>14} {:>8}",
        "backend", "ns/squaring", "squarings/s", "vs GMP"
    );
    for row in &rows {
        let ratio = row
            .ratio_to_gmp
            .map_or("-".to_owned(), |r| format!("{r:.2}x"));
        let name = if row.backend == "fast" {
            format!("fast ({kernel})")
        } else {
            row.backend.to_owned()
        };
        println!(
            "{name:<20} {:>12.1} {:>14.0} {ratio:>8}",
            row.ns_per_square, row.squarings_per_s
        );
    }
    match gmp {
        Some(g) => println!("GMP yardstick: {g:.1} ns (faster of mpz_powm and mpz_mul+mpz_mod)"),
        None => println!("no GMP row: build with --features gmp for the yardstick"),
    }
    Ok(ExitCode::SUCCESS)
}

fn bench_proof(args: ProofBenchArgs) -> anyhow::Result<ExitCode> {
    let modulus = Modulus::by_name(&args.modulus)?;
    let t = match args.iterations {
        Some(0) => bail!("--iterations must be at least 1"),
        Some(t) => t,
        None => calibrate::calibrate_for(&modulus, Duration::from_secs_f64(args.seconds))?,
    };
    let fast = Fast::prepare(&modulus)?;
    let x = modulus.hash_to_group(&[0x42; 32]);
    let bar = progress::bar(t, "squaring");
    let t0 = Instant::now();
    let trace = vdf::evaluate(&fast, &modulus, &x, t, &EvalOptions::default(), &mut |d| {
        bar.set_position(d)
    })?;
    let eval = t0.elapsed();
    bar.finish_and_clear();
    let t1 = Instant::now();
    let out = trace.prove();
    let proof = t1.elapsed();
    let n = args.verifications.max(1);
    let t2 = Instant::now();
    for _ in 0..n {
        vdf::verify(&modulus, &out.x, &out.y, out.t, &out.proof)?;
    }
    let verify = t2.elapsed() / n;
    let p = trace.params();
    let ns_per_square = eval.as_nanos() as f64 / t as f64;
    let report = serde_json::json!({
        "modulus": modulus.id(),
        "iterations": t,
        "threads": rayon::current_num_threads(),
        "k": p.k,
        "gamma": p.gamma,
        "eval_s": eval.as_secs_f64(),
        "ns_per_square": ns_per_square,
        "proof_ms": proof.as_secs_f64() * 1e3,
        "proof_overhead": proof.as_secs_f64() / eval.as_secs_f64(),
        "verify_ms": verify.as_secs_f64() * 1e3,
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "modulus        {} ({} bits), fast kernel {}",
            modulus.id(),
            modulus.bits(),
            fast.kernel().name()
        );
        println!(
            "T              {t} (k = {}, gamma = {}, {} threads)",
            p.k,
            p.gamma,
            rayon::current_num_threads()
        );
        println!(
            "evaluation     {:.3} s ({:.1} ns/squaring)",
            eval.as_secs_f64(),
            ns_per_square
        );
        println!(
            "proof          {:.1} ms = {:.2}% of evaluation",
            proof.as_secs_f64() * 1e3,
            100.0 * proof.as_secs_f64() / eval.as_secs_f64()
        );
        println!(
            "verification   {:.3} ms (mean of {n})",
            verify.as_secs_f64() * 1e3
        );
    }
    Ok(ExitCode::SUCCESS)
}
