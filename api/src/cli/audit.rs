//! `vrs audit --server URL --from E1 --to E2`: checks a range of epochs from a server's public
//! API without trusting it: the chain (each input's previous output is the previous epoch's
//! y), each input x from its formula, each bets root from the published leaf hashes, and every
//! Wesolowski proof, in one batch on the fastest batch backend (all cores, or a GPU).

use super::progress;
use super::verify::Http;
use anyhow::{bail, Context};
use clap::Args;
use num_bigint::BigUint;
use serde::Serialize;
use serde_json::Value;
use std::process::ExitCode;
use vrs_engine::batch::{self, VerifyItem};
use vrs_engine::epoch::{epoch_seed, genesis_output};
use vrs_engine::group::Modulus;
use vrs_engine::merkle::{self, Hash};
use vrs_engine::vdf::Proof;

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Base URL of the vrs server whose epochs are checked.
    #[arg(long, env = "VRS_SERVER", default_value = "http://127.0.0.1:8080")]
    pub server: String,
    /// First epoch of the range.
    #[arg(long, default_value_t = 1)]
    pub from: u64,
    /// Last epoch of the range (inclusive).
    #[arg(long)]
    pub to: u64,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// A failed check of one epoch.
#[derive(Debug, Serialize)]
struct Failure {
    epoch: u64,
    check: &'static str,
    detail: String,
}

#[derive(Debug, Serialize)]
struct Summary {
    server: String,
    from: u64,
    to: u64,
    epochs: u64,
    bets: u64,
    backend: String,
    verified: bool,
    failures: Vec<Failure>,
}

/// What one epoch published, decoded enough to check.
struct Epoch {
    number: u64,
    modulus: String,
    iterations: u64,
    previous_output: Vec<u8>,
    bets_root: Hash,
    bet_count: u64,
    leaf_hashes: Vec<Hash>,
    x: Vec<u8>,
    y: Vec<u8>,
    pi: Vec<u8>,
    l: Vec<u8>,
}

pub fn run(args: AuditArgs) -> anyhow::Result<ExitCode> {
    if args.from == 0 || args.to < args.from {
        bail!("--from must be at least 1 and --to at least --from");
    }
    let server = args.server.trim_end_matches('/').to_owned();
    let count = args.to - args.from + 1;
    let http = Http::new()?;
    let bar = progress::bar(count, "fetching epochs");
    let mut epochs = Vec::new();
    // The epoch before the range, for the first chain link (none before epoch 1).
    let before = match args.from {
        1 => None,
        n => Some(decode(
            &http.get(&format!("{server}/api/v1/epochs/{}", n - 1))?,
        )?),
    };
    for n in args.from..=args.to {
        let body = http.get(&format!("{server}/api/v1/epochs/{n}"))?;
        epochs.push(decode(&body).with_context(|| format!("epoch {n}"))?);
        bar.inc(1);
    }
    bar.finish_and_clear();

    let modulus_id = epochs[0].modulus.clone();
    let modulus = Modulus::by_name(&modulus_id)
        .with_context(|| format!("epoch {} names modulus {modulus_id}", epochs[0].number))?;
    let mut failures = Vec::new();
    let mut fail = |epoch: u64, check: &'static str, detail: String| {
        failures.push(Failure {
            epoch,
            check,
            detail,
        })
    };
    let mut items = Vec::new();
    let mut item_epochs = Vec::new();
    let mut prev_y: Option<Vec<u8>> = before.map(|e| e.y);
    for e in &epochs {
        if e.modulus != modulus_id {
            fail(
                e.number,
                "modulus",
                format!("{} instead of {modulus_id}", e.modulus),
            );
            continue;
        }
        let expected_prev = match e.number {
            1 => Some(modulus.encode(&genesis_output(&modulus))),
            _ => prev_y.clone(),
        };
        if expected_prev.as_deref() != Some(e.previous_output.as_slice()) {
            fail(
                e.number,
                "epoch_chain",
                format!("previous output is not y of epoch {}", e.number - 1),
            );
        }
        prev_y = Some(e.y.clone());
        if merkle::root(&e.leaf_hashes) != e.bets_root || e.leaf_hashes.len() as u64 != e.bet_count
        {
            fail(
                e.number,
                "bets_root",
                format!(
                    "{} leaf hashes do not give bets root {} of {} bets",
                    e.leaf_hashes.len(),
                    hex::encode(e.bets_root),
                    e.bet_count
                ),
            );
        }
        match modulus.decode("previous output", &e.previous_output) {
            Ok(prev) => {
                let seed = epoch_seed(&modulus, e.number, &prev, &e.bets_root, e.iterations);
                if modulus.encode(&modulus.hash_to_group(&seed)) != e.x {
                    fail(
                        e.number,
                        "epoch_input",
                        "x does not follow from the epoch, previous output, bets root and T".into(),
                    );
                }
            }
            Err(err) => fail(e.number, "epoch_input", format!("previous output: {err}")),
        }
        match proof_item(&modulus, e) {
            Ok(item) => {
                items.push(item);
                item_epochs.push(e.number);
            }
            Err(err) => fail(e.number, "vdf_proof", err),
        }
    }

    let (backend, notes) = batch::fastest(&modulus, 0);
    for n in notes {
        eprintln!("{n}");
    }
    let bar = progress::bar(items.len() as u64, "verifying proofs");
    let mut answers = Vec::with_capacity(items.len());
    for chunk in items.chunks(256) {
        answers.extend(batch::verify_many(backend.as_ref(), &modulus, chunk)?);
        bar.inc(chunk.len() as u64);
    }
    bar.finish_and_clear();
    for (epoch, answer) in item_epochs.iter().zip(answers) {
        if let Err(err) = answer {
            fail(*epoch, "vdf_proof", err.to_string());
        }
    }

    failures.sort_by_key(|f| f.epoch);
    let summary = Summary {
        server,
        from: args.from,
        to: args.to,
        epochs: count,
        bets: epochs.iter().map(|e| e.bet_count).sum(),
        backend: backend.describe(),
        verified: failures.is_empty(),
        failures,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        println!(
            "epochs {}..={} on {}: {} epochs, {} bets, proofs verified on {} ({})",
            summary.from,
            summary.to,
            summary.server,
            summary.epochs,
            summary.bets,
            backend.name(),
            summary.backend
        );
        for f in &summary.failures {
            println!("FAIL epoch {} {}: {}", f.epoch, f.check, f.detail);
        }
        if summary.verified {
            println!("verified: chain, inputs, bets roots and proofs of every epoch");
        } else {
            println!("NOT verified: {} failed checks", summary.failures.len());
        }
    }
    Ok(if summary.verified {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn proof_item(m: &Modulus, e: &Epoch) -> Result<VerifyItem, String> {
    if e.l.len() != 32 {
        return Err(format!("l is {} bytes, not 32", e.l.len()));
    }
    Ok(VerifyItem {
        x: m.decode_input(&e.x).map_err(|err| err.to_string())?,
        y: m.decode("y", &e.y).map_err(|err| err.to_string())?,
        t: e.iterations,
        proof: Proof {
            l: BigUint::from_bytes_be(&e.l),
            pi: m.decode("pi", &e.pi).map_err(|err| err.to_string())?,
        },
    })
}

/// An epoch record as `GET /api/v1/epochs/{n}` gives it; unresolved epochs are an error (the
/// range must end at a resolved epoch).
fn decode(body: &Value) -> anyhow::Result<Epoch> {
    let number = body["epoch"].as_u64().context("no epoch number")?;
    let hex_of = |key: &str| -> anyhow::Result<Vec<u8>> {
        let s = body[key]
            .as_str()
            .with_context(|| format!("epoch {number} has no {key} (not resolved yet?)"))?;
        hex::decode(s).with_context(|| format!("epoch {number}: {key} is not hex"))
    };
    let hash = |v: Vec<u8>, key: &str| -> anyhow::Result<Hash> {
        v.try_into()
            .map_err(|_| anyhow::anyhow!("epoch {number}: {key} is not 32 bytes"))
    };
    let leaf_hashes = body["leaf_hashes"]
        .as_array()
        .context("no leaf_hashes")?
        .iter()
        .map(|h| hash(hex::decode(h.as_str().unwrap_or_default())?, "a leaf hash"))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Epoch {
        number,
        modulus: body["modulus"].as_str().unwrap_or_default().to_owned(),
        iterations: body["iterations"].as_u64().context("no iterations")?,
        previous_output: hex_of("previous_output")?,
        bets_root: hash(hex_of("bets_root")?, "bets_root")?,
        bet_count: body["bet_count"].as_u64().context("no bet_count")?,
        leaf_hashes,
        x: hex_of("x")?,
        y: hex_of("y")?,
        pi: hex_of("pi")?,
        l: hex_of("l")?,
    })
}
