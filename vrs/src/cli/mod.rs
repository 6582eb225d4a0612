//! Command-line interface: `vrs serve`, `vrs verify`, `vrs audit`, `vrs vdf …`, `vrs bench …`,
//! `vrs keys …`, `vrs sample …`, `vrs stats` and `vrs witness`.

mod acceptance_key;
mod bench;
mod bench_batch;
mod keys;
mod plot;
mod sample;
mod serve;
mod sp800_22;
mod stats;
mod stats_svg;
pub(crate) mod vdf;
mod witness;

use clap::{Parser, Subcommand};
use std::process::ExitCode;
use vrs_verifier::{audit, verify};

/// vrs: verifiable randomness from a verifiable delay function (RSA-2048, Wesolowski proofs).
#[derive(Debug, Parser)]
#[command(name = "vrs", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the randomness service (HTTP API, epochs, games, pool, anchoring).
    Serve(Box<crate::config::ServeConfig>),
    /// Evaluate, prove and verify the VDF directly (for auditors and engineers).
    #[command(subcommand)]
    Vdf(vdf::VdfCommand),
    /// Measure the squaring backends and the prover on this machine.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Manage the notary's API keys (create, list, revoke) in the service's store.
    Keys(keys::KeysArgs),
    /// Verify a game without trusting the server: fetch its data and recompute every step
    /// (bet leaf, Merkle inclusion, epoch input, VDF proof, rngValue, dice, payout; the pool
    /// chain of an instant game; the operator's signed acceptance; its anchor, and with --rpc
    /// the anchor transaction on chain) here; with --acceptance FILE, a saved acceptance
    /// against what the server stores. Exit 0 when all pass, 1 when any fails, 2 on usage or
    /// network errors.
    Verify(verify::VerifyArgs),
    /// Audit a range of epochs without trusting the server: the chain of outputs, every input,
    /// every bets root, every Wesolowski proof (batch-verified on all cores or a GPU) and every
    /// anchor (with --rpc, each anchor transaction on chain).
    Audit(audit::AuditArgs),
    /// Collect randomness for RNG certification through the production derivation: the raw
    /// rngValue stream (binary) or scaled dice and Sic Bo outcomes (CSV), from a local epoch
    /// chain (--seed) or a running service's epochs (--server); docs/STATISTICS.md.
    #[command(subcommand)]
    Sample(sample::SampleCommand),
    /// Chi-square tests and the return to player of every bet over a dice or Sic Bo sample
    /// (CSV), with one false-alarm probability for the whole run; exit 1 when a check fails.
    Stats(stats::StatsArgs),
    /// NIST SP 800-22 Rev. 1a over a raw stream (vrs sample raw): the 15 tests on each of many
    /// 10^6-bit sequences and the SP's second-level analysis; exit 1 when the battery fails.
    #[command(name = "sp800-22")]
    Sp80022(sp800_22::Sp80022Args),
    /// Witness an operator's log: cosign its checkpoints (C2SP tlog-witness) only while every
    /// epoch is committed once, after its plan, within δ of this machine's clock.
    Witness(witness::WitnessArgs),
}

/// Runs a parsed command; `Err` is a usage or I/O error (exit 2).
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve(config) => serve::run(*config),
        Command::Vdf(cmd) => vdf::run(cmd),
        Command::Bench(cmd) => bench::run(cmd),
        Command::Keys(args) => keys::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Audit(args) => audit::run(args),
        Command::Sample(cmd) => sample::run(cmd),
        Command::Stats(args) => stats::run(args),
        Command::Sp80022(args) => sp800_22::run(args),
        Command::Witness(args) => witness::run(args),
    }
}
