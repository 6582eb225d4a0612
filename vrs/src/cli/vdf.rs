//! `vrs vdf prove` and `vrs vdf verify`, in the RSA group and (`classgroup`) in class groups.

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use vrs_engine::backend::BackendKind;
use vrs_engine::group::Modulus;
use vrs_engine::vdf::{self, EvalOptions};
use vrs_engine::with_backend;
use vrs_protocol::proof_json::ProofDoc;
use vrs_verifier::progress;

mod classgroup;
pub use classgroup::ClassDoc;

#[derive(Debug, Subcommand)]
pub enum VdfCommand {
    /// Compute y = x^(2^T) and its Wesolowski proof. RSA group: x = hash_to_group(seed).
    /// Class group (--group classgroup-1024): chiavdf's construction, the discriminant
    /// create_discriminant(seed, bits) and x its generator, printed in chiavdf's encoding.
    Prove(ProveArgs),
    /// Check a proof document (as printed by `vrs vdf prove --json`; for a class group, also
    /// chiavdf's output in the same shape: group, discriminant, iterations, x, y, proof).
    /// Exit status: 0 valid, 1 invalid (the reason is printed), 2 unreadable input.
    Verify(VerifyArgs),
}

#[derive(Debug, Args)]
pub struct ProveArgs {
    /// The seed, hex. RSA group: 32 bytes (64 hex digits), x = hash_to_group(seed). Class
    /// group: the challenge the discriminant is created from (any length, as chiavdf takes it).
    #[arg(long)]
    seed: String,
    /// T: the number of sequential squarings (at least 1).
    #[arg(long, short = 't')]
    iterations: u64,
    /// The group: rsa2048 (default), test512 or test1024 (insecure, for tests), hex:<digits>,
    /// or classgroup-<bits> (a class group of a discriminant of 8 to 1024 bits, chiavdf's; 1024
    /// is the secure size).
    #[arg(long, visible_alias = "modulus", default_value = "rsa2048")]
    group: String,
    /// Squaring backend for the evaluation. RSA group: fast (the best kernel for this CPU),
    /// fast-mulx (x86-64: the mulx kernel even where AVX-512 IFMA exists), fast-portable,
    /// crypto-bigint, reference, gmp, gmp-mulmod (gmp ones need a build with --features gmp).
    /// Class group: fast or reference.
    #[arg(long, default_value = "fast")]
    backend: String,
    /// Also publish x^(2^(k·N)) for every multiple k·N below T, for segment replay.
    #[arg(long, value_name = "N")]
    replay_every: Option<u64>,
    /// Print one JSON document (the input of `vrs vdf verify`) instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Read the proof document from this file instead of stdin.
    #[arg(long)]
    file: Option<PathBuf>,
    /// Also re-run the squarings between the published replay checkpoints (x, the `replay`
    /// list, y), segments in parallel on all cores: a check that does not trust the proof.
    /// Costs T squarings of work.
    #[arg(long)]
    replay: bool,
    /// Print the verdict as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(cmd: VdfCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        VdfCommand::Prove(args) => prove(args),
        VdfCommand::Verify(args) => verify(args),
    }
}

fn prove(args: ProveArgs) -> anyhow::Result<ExitCode> {
    if let Some(bits) = classgroup::group_bits(&args.group) {
        if args.replay_every.is_some() {
            bail!("--replay-every is for the RSA group only");
        }
        return classgroup::prove(
            &args.group,
            bits?,
            &args.seed,
            args.iterations,
            &args.backend,
            args.json,
        );
    }
    let seed = vrs_protocol::proof_json::parse_seed(&args.seed)?;
    if args.iterations == 0 {
        bail!("--iterations must be at least 1");
    }
    let modulus = Modulus::by_name(&args.group)?;
    let kind = BackendKind::parse(&args.backend)?;
    let x = modulus.hash_to_group(&seed);
    let opts = EvalOptions {
        replay_every: args.replay_every,
        ..EvalOptions::default()
    };
    let bar = progress::bar(args.iterations, "squaring");
    let t0 = Instant::now();
    let trace = with_backend!(kind, &modulus, |b| vdf::evaluate(
        &b,
        &modulus,
        &x,
        args.iterations,
        &opts,
        &mut |done| bar.set_position(done)
    ))??;
    bar.finish_and_clear();
    let eval = t0.elapsed();
    let t1 = Instant::now();
    let out = trace.prove();
    let proof = t1.elapsed();
    let t2 = Instant::now();
    vdf::verify(&modulus, &out.x, &out.y, out.t, &out.proof).context("self-check of the proof")?;
    let verify = t2.elapsed();

    let doc = ProofDoc::new(&modulus, Some(&seed), &out);
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let ns_per_square = eval.as_nanos() as f64 / args.iterations as f64;
    if args.json {
        let mut value = serde_json::to_value(&doc)?;
        value["backend"] = kind.name().into();
        value["timings"] = serde_json::json!({
            "eval_ms": ms(eval),
            "proof_ms": ms(proof),
            "verify_ms": ms(verify),
            "ns_per_square": ns_per_square,
            "proof_overhead": proof.as_secs_f64() / eval.as_secs_f64(),
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        let p = trace.params();
        println!("modulus     {} ({} bits)", modulus.id(), modulus.bits());
        println!("iterations  {}", args.iterations);
        println!("x           {}", doc.x);
        println!("y           {}", doc.y);
        println!("l           {}", doc.l);
        println!("pi          {}", doc.pi);
        println!("backend     {}", kind);
        println!(
            "evaluation  {:.1} ms ({ns_per_square:.1} ns/squaring)",
            ms(eval)
        );
        println!(
            "proof       {:.1} ms ({:.1}% of evaluation; k = {}, gamma = {})",
            ms(proof),
            100.0 * proof.as_secs_f64() / eval.as_secs_f64(),
            p.k,
            p.gamma
        );
        println!("verify      {:.3} ms", ms(verify));
    }
    Ok(ExitCode::SUCCESS)
}

fn verify(args: VerifyArgs) -> anyhow::Result<ExitCode> {
    let text = match &args.file {
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?,
        None => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .context("cannot read stdin")?;
            s
        }
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).context("input is not a proof document (not JSON)")?;
    if value.get("discriminant").is_some() {
        let doc: ClassDoc =
            serde_json::from_value(value).context("input is not a class-group proof document")?;
        if args.replay {
            bail!("--replay is for RSA-group documents only");
        }
        let verdict = classgroup::check(&doc);
        let valid = format!(
            "y = x^(2^{}) in the class group of discriminant {}",
            doc.iterations, doc.discriminant
        );
        return Ok(print_verdict(&verdict, &valid, args.json));
    }
    let doc: ProofDoc = serde_json::from_value(value).context("input is not a proof document")?;
    let verdict = vrs_protocol::proof_json::check(&doc, args.replay);
    let mut valid = format!("y = x^(2^{}) mod {}", doc.iterations, doc.modulus);
    if args.replay {
        valid.push_str(&format!(
            "\nreplay: {} segments recomputed",
            doc.replay.len() + 1
        ));
    }
    Ok(print_verdict(&verdict, &valid, args.json))
}

/// Prints `valid: <what>` or `invalid: <reason>` (or the JSON verdict); the exit status.
fn print_verdict(verdict: &Result<(), String>, what: &str, json: bool) -> ExitCode {
    if json {
        let v = match verdict {
            Ok(()) => serde_json::json!({"valid": true}),
            Err(reason) => serde_json::json!({"valid": false, "reason": reason}),
        };
        println!("{v}");
    } else {
        match verdict {
            Ok(()) => println!("valid: {what}"),
            Err(reason) => println!("invalid: {reason}"),
        }
    }
    if verdict.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
