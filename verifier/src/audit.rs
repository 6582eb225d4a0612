//! `vrs audit --server URL --from E1 --to E2`: checks a range of epochs from a server's public
//! API without trusting it: the chain (each input's previous output is y of its predecessor),
//! each input x from its formula, each bets root from the published leaf hashes, each epoch's
//! timing (docs/PROTOCOL.md §10: fixed before y of e − 1 existed, within its bound), and every
//! Wesolowski proof, in one batch on the fastest batch backend (all cores, or a GPU); then the
//! anchors: each epoch's kind-1 anchor leaf recomputed from its published fields and folded up
//! to its anchor batch's root, and with `--rpc` each batch's transaction read back from a node
//! of the auditor's choosing, once per batch.

use crate::epoch_record::{decode, Epoch};
use crate::progress;
use crate::verify::anchor::Rpc;
use crate::verify::anchor::{check_inclusion, check_transaction, epoch_leaf, Claim};
use crate::verify::anchor::{sender_from_log, sender_from_stats, Sender};
use crate::verify::{Fetch, Http, Options, Verdict};
use anyhow::{bail, Context};
use clap::Args;
use num_bigint::BigUint;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;
use vrs_engine::batch::{self, BatchBackend, VerifyItem};
use vrs_engine::group::Modulus;
use vrs_engine::merkle;
use vrs_engine::timing::{check_anchor_time, Predecessor};
use vrs_engine::vdf::Proof;
use vrs_protocol::epoch_group::{Group, SeedRule};
use vrs_protocol::timing::{timing_step, PriorEpoch, TimingFacts};
use vrs_protocol::tlog::policy::Policy;
use vrs_protocol::tlog::witnessed::{LoggedEntry, WitnessFloor};

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
    /// JSON-RPC URL of a node of the anchor chain, of your choosing: each anchor batch covering
    /// the range has its transaction read back once (mined, on the epochs' anchor chain id,
    /// from the operator's anchor account, the batch's calldata). Epochs not yet in a confirmed batch are
    /// counted as pending, not failed.
    #[arg(long, value_name = "URL")]
    pub rpc: Option<String>,
    #[command(flatten)]
    pub group: super::verify::GroupArg,
    #[command(flatten)]
    pub margin: super::verify::MarginArg,
    #[command(flatten)]
    pub witness: crate::witnessed::WitnessArg,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// A failed check of one epoch.
#[derive(Debug, Serialize)]
pub struct Failure {
    epoch: u64,
    check: &'static str,
    detail: String,
}

#[derive(Debug, Serialize)]
pub struct Summary {
    server: String,
    from: u64,
    to: u64,
    epochs: u64,
    bets: u64,
    backend: String,
    anchors: AnchorSummary,
    /// The whole witnessed log, replayed (with a witness policy only).
    #[serde(skip_serializing_if = "Option::is_none")]
    log: Option<LogSummary>,
    verified: bool,
    failures: Vec<Failure>,
    /// What the checks did not cover, and the auditor therefore trusts.
    notes: Vec<String>,
}

impl Summary {
    /// Each failed check as `epoch N check: detail`.
    pub fn failure_lines(&self) -> Vec<String> {
        self.failures
            .iter()
            .map(|f| format!("epoch {} {}: {}", f.epoch, f.check, f.detail))
            .collect()
    }
}

/// The witnessed log as `vrs audit` replayed it (docs/PROTOCOL.md §21, "Reading the whole
/// log").
#[derive(Debug, Default, Serialize)]
pub struct LogSummary {
    /// Entries replayed: the size of the latest checkpoint the quorum cosigned; 0 when the log
    /// could not be read (a failed `log_history`).
    size: u64,
    /// The policy names of the witnesses that cosigned it.
    cosigned_by: Vec<String>,
    /// Whether they satisfy the policy's quorum.
    quorum: bool,
    /// Epochs of the range that a void entry names. A void decides nothing: an epoch whose
    /// commitment the quorum cosigned in time stays witnessed (a witness that was down catches
    /// up that way).
    voided: Vec<u64>,
}

/// The anchors of the range.
#[derive(Debug, Default, Serialize)]
pub struct AnchorSummary {
    /// Anchor batches holding epochs of the range.
    batches: u64,
    /// Epochs in a confirmed anchor batch (one with a transaction) whose leaf folds up to the
    /// batch root.
    anchored: u64,
    /// Of those, epochs whose batch transaction was read back from `--rpc` and carries the root.
    checked_on_chain: u64,
    /// Epochs in no anchor batch yet, or in a batch with no confirmed transaction yet.
    pending: u64,
    /// Whether the transactions were checked (`--rpc` given).
    rpc: bool,
}

pub fn run(args: AuditArgs) -> anyhow::Result<ExitCode> {
    let server = args.server.trim_end_matches('/').to_owned();
    let http = Http::new()?;
    let fastest = |m: &Modulus| -> anyhow::Result<Box<dyn BatchBackend>> {
        let (backend, notes) = batch::fastest(m, 0);
        for n in notes {
            eprintln!("{n}");
        }
        Ok(backend)
    };
    let witness = args.witness.floor(&args.group.group)?;
    let (summary, backend) = audit(
        &http,
        &server,
        (args.from, args.to),
        &Options {
            group: &args.group.group,
            rpc: args.rpc.as_deref(),
            require_anchor: false,
            floor: args.margin.floor(),
            witness: witness.as_ref(),
        },
        &fastest,
    )?;
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
            backend,
            summary.backend
        );
        println!("{}", anchors_line(&summary.anchors));
        if let Some(log) = &summary.log {
            println!("{}", log_line(log));
        }
        for f in &summary.failures {
            println!("FAIL epoch {} {}: {}", f.epoch, f.check, f.detail);
        }
        for n in &summary.notes {
            println!("note: {n}");
        }
        if summary.verified {
            println!(
                "verified: chain, inputs, bets roots, timing, proofs and anchors of every epoch"
            );
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

/// Fetches epoch `n` and decodes it; the server answering with another epoch is an error.
fn fetch_epoch(fetch: &dyn Fetch, server: &str, n: u64) -> anyhow::Result<Epoch> {
    let e = decode(&fetch.get(&format!("{server}/api/v1/epochs/{n}"))?)
        .with_context(|| format!("epoch {n}"))?;
    if e.number != n {
        bail!(
            "asked for epoch {n}, the server answered with epoch {}",
            e.number
        );
    }
    Ok(e)
}

/// Every check of `vrs audit` over epochs `from..=to` with what `fetch` answers, the proofs on
/// the batch backend `open` gives for the range's modulus. Returns the summary and that
/// backend's name. `Err`: a usage error, or the server, the node or the backend failing.
pub fn audit(
    fetch: &dyn Fetch,
    server: &str,
    (from, to): (u64, u64),
    options: &Options<'_>,
    open: &dyn Fn(&Modulus) -> anyhow::Result<Box<dyn BatchBackend>>,
) -> anyhow::Result<(Summary, &'static str)> {
    let Options {
        group,
        rpc,
        floor,
        witness,
        ..
    } = *options;
    if from == 0 || to < from {
        bail!("--from must be at least 1 and --to at least --from");
    }
    let count = to - from + 1;
    let bar = progress::bar(count, "fetching epochs");
    let mut epochs = Vec::new();
    for n in from..=to {
        epochs.push(fetch_epoch(fetch, server, n)?);
        bar.inc(1);
    }
    bar.finish_and_clear();
    // Epochs before the range that the range's chain links and timing read (p(e), e − 1).
    let mut known: BTreeMap<u64, Epoch> = epochs.iter().map(|e| (e.number, e.clone())).collect();
    for e in &epochs {
        for n in [e.previous_epoch, e.number - 1] {
            if n >= 1 && !known.contains_key(&n) {
                known.insert(n, fetch_epoch(fetch, server, n)?);
            }
        }
    }

    // The group is the auditor's choice, never the server's: a modulus the server picked (one
    // it can factor) would let it forge every proof. Epochs naming another group fail.
    let group = Group::by_name(group).with_context(|| format!("--group {group}"))?;
    let group_id = group.id();
    let mut failures = Vec::new();
    let mut fail = |epoch: u64, check: &'static str, detail: String| {
        failures.push(Failure {
            epoch,
            check,
            detail,
        })
    };
    let mut items = Vec::new();
    // Epochs whose `witnessed` step passed (log_history compares them with the moves).
    let mut witnessed_ok = BTreeSet::new();
    let mut item_epochs = Vec::new();
    // Class-group epochs: (epoch, seed_e) to verify one by one on rayon.
    let mut class_items = Vec::new();
    for e in &epochs {
        if !e.modulus.eq_ignore_ascii_case(&group_id) {
            fail(
                e.number,
                "group",
                format!(
                    "computed in {:?}, not in {group_id} (--group): a group of the server's \
                     choosing proves nothing",
                    e.modulus
                ),
            );
            continue;
        }
        let p = e.previous_epoch;
        let expected_prev = match p {
            0 => Some(group.genesis_output()),
            p => known.get(&p).map(|r| r.y.clone()),
        };
        if p >= e.number || expected_prev.as_deref() != Some(e.previous_output.as_slice()) {
            fail(
                e.number,
                "epoch_chain",
                format!("previous output is not y of epoch {p}"),
            );
        }
        let facts = TimingFacts {
            epoch: e.number,
            timing: e.committed.map(|(t, _)| t),
            ran_iterations: Some(e.iterations),
            predecessor: known.get(&p).filter(|_| p >= 1).and_then(|r| {
                Some(Predecessor {
                    closed_at_ms: r.closed_at_ms?,
                    iterations: r.iterations,
                })
            }),
            prior: known.get(&(e.number - 1)).map(|r| PriorEpoch {
                version: if r.committed.is_some() { 2 } else { 1 },
                closed_at_ms: r.closed_at_ms.and_then(|c| i64::try_from(c).ok()),
                resolved_at_ms: r.resolved_at_ms,
            }),
            floor,
        };
        if let Err(detail) = timing_step(&facts) {
            fail(e.number, "timing", detail);
        }
        if let Some(floor) = witness {
            let shown = crate::witnessed::shown(
                e.number,
                e.committed,
                e.bets_root,
                e.bet_count,
                e.deadline_ms,
                &e.previous_output,
            );
            let moves = match &e.log {
                Ok(Some(log)) => log.moves.clone(),
                _ => Vec::new(),
            };
            let own = e
                .log
                .clone()
                .and_then(|log| crate::witnessed::step(floor, e.number, log.as_ref(), shown));
            let result = match (&own, moves.is_empty()) {
                (_, true) => own,
                // Witnessed in time keeps its outcome: a move of its games is a second draw.
                (Ok(_), false) => Err(format!(
                    "epoch {} is witnessed in time and its record also shows a move of its \
                     games: two outcomes for its games",
                    e.number
                )),
                // Void, its games moved: judged by its moves and their destination.
                (Err(_), false) => moved_epoch(fetch, server, floor, e, &moves),
            };
            match result {
                // A moved epoch is void: its games keep no outcome of its own.
                Ok(_) if moves.is_empty() => {
                    witnessed_ok.insert(e.number);
                }
                Ok(_) => {}
                Err(detail) => fail(e.number, "witnessed", detail),
            }
        }
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
        let rule = match &e.committed {
            Some((timing, nonce)) => SeedRule::V2 { nonce, timing },
            None => SeedRule::V1 {
                iterations: e.iterations,
            },
        };
        let seed = match group.input_for(e.number, &e.previous_output, &e.bets_root, &rule) {
            Ok((seed, x)) => {
                if x != e.x {
                    fail(
                        e.number,
                        "epoch_input",
                        "x does not follow from the epoch's committed fields".into(),
                    );
                }
                seed
            }
            Err(err) => {
                fail(e.number, "epoch_input", format!("{err:#}"));
                continue;
            }
        };
        match &group {
            Group::Rsa(m) => match proof_item(m, e) {
                Ok(item) => {
                    items.push(item);
                    item_epochs.push(e.number);
                }
                Err(err) => fail(e.number, "vdf_proof", err),
            },
            Group::Class { .. } => class_items.push((e, seed)),
        }
    }

    let bar = progress::bar((items.len() + class_items.len()) as u64, "verifying proofs");
    let (backend_describe, backend_name) = match &group {
        Group::Rsa(modulus) => {
            let backend = open(modulus)?;
            let mut answers = Vec::with_capacity(items.len());
            for chunk in items.chunks(256) {
                answers.extend(batch::verify_many(backend.as_ref(), modulus, chunk)?);
                bar.inc(chunk.len() as u64);
            }
            for (epoch, answer) in item_epochs.iter().zip(answers) {
                if let Err(err) = answer {
                    fail(*epoch, "vdf_proof", err.to_string());
                }
            }
            (backend.describe(), backend.name())
        }
        // No batch backend squares in class groups (each epoch has its own discriminant):
        // the proofs are checked independently, one per core.
        Group::Class { .. } => {
            let answers: Vec<(u64, Result<String, String>)> = class_items
                .par_iter()
                .map(|(e, seed)| {
                    let r = group.verify_proof(seed, &e.x, &e.y, e.iterations, &e.l, &e.pi);
                    bar.inc(1);
                    (e.number, r)
                })
                .collect();
            for (epoch, answer) in answers {
                if let Err(err) = answer {
                    fail(epoch, "vdf_proof", err);
                }
            }
            (
                format!(
                    "classgroup: chiavdf-compatible Wesolowski verification, one epoch per core \
                     ({} threads)",
                    rayon::current_num_threads()
                ),
                "classgroup",
            )
        }
    };
    bar.finish_and_clear();

    let rpc = rpc.map(|url| Rpc::new(fetch, url));
    // Whom every anchor transaction must come from: the log's declaration with a policy, the
    // server's stats without (docs/PROTOCOL.md §16, "The sender").
    let sender = rpc.as_ref().map(|_| match witness {
        None => sender_from_stats(fetch, server),
        Some(floor) => epochs
            .iter()
            .find_map(|e| e.log.clone().ok().flatten())
            .ok_or_else(|| "no epoch of the range carries a witnessed log".to_owned())
            .and_then(|ev| sender_from_log(&ev, floor)),
    });
    let anchors = check_anchors(
        &epochs,
        rpc.as_ref().zip(sender.as_ref()),
        witness.map(|w| &w.policy),
        &mut fail,
    )?;

    let log = witness.map(|floor| {
        let range = (epochs.as_slice(), &witnessed_ok);
        check_history(fetch, server, &floor.policy, range, &mut fail)
    });

    let notes = match witness {
        None => vec![crate::witnessed::UNCHECKED_NOTE.to_owned()],
        Some(floor) => {
            let mut notes = crate::witnessed::policy_notes(floor);
            if let Some(l) = log.as_ref().filter(|l| l.size > 0 && !l.quorum) {
                notes.push(format!(
                    "log_history: the log's latest checkpoint (size {}) is cosigned by [{}], \
                     short of the quorum: the entries beyond the range's own cosigned \
                     checkpoints were replayed under the log's signature alone (run the \
                     audit again later)",
                    l.size,
                    l.cosigned_by.join(", ")
                ));
            }
            notes
        }
    };
    failures.sort_by_key(|f| f.epoch);
    let summary = Summary {
        server: server.to_owned(),
        from,
        to,
        epochs: count,
        // Saturating: the counts are the server's and may be anything.
        bets: epochs
            .iter()
            .fold(0u64, |n, e| n.saturating_add(e.bet_count)),
        backend: backend_describe,
        anchors,
        log,
        verified: failures.is_empty(),
        failures,
        notes,
    };
    Ok((summary, backend_name))
}

/// `log_history`: the whole log replayed under the witnesses' rules, and every epoch's
/// evidence in that one history.
fn check_history(
    fetch: &dyn Fetch,
    server: &str,
    policy: &Policy,
    (epochs, witnessed): (&[Epoch], &BTreeSet<u64>),
    fail: &mut impl FnMut(u64, &'static str, String),
) -> LogSummary {
    let first = epochs.first().map_or(0, |e| e.number);
    let read = match crate::log_history::read(fetch, server, policy) {
        Ok(r) => r,
        Err(f) => {
            let epoch = f
                .epoch
                .filter(|n| epochs.iter().any(|e| e.number == *n))
                .unwrap_or(first);
            fail(epoch, "log_history", f.detail);
            return LogSummary::default();
        }
    };
    let mut voided = Vec::new();
    for e in epochs {
        if read.history.voids.contains_key(&e.number) {
            voided.push(e.number);
        }
        // Rule 9's in-time clause, which a replay cannot apply: an epoch this auditor found
        // witnessed in time keeps its outcome, so a move of its games is a second draw.
        if let Some((index, to)) = read.history.moves.get(&e.number) {
            if witnessed.contains(&e.number) {
                fail(
                    e.number,
                    "log_history",
                    format!(
                        "epoch {} is witnessed in time and the log also moves its games to \
                         epoch {to} (entry {index}): two outcomes for its games",
                        e.number
                    ),
                );
            }
        }
        if let Ok(Some(ev)) = &e.log {
            if let Err(detail) = crate::log_history::evidence_in(&read.history, ev) {
                fail(e.number, "log_history", detail);
            }
        }
        // The anchor batch it shows: the log size and root its calldata carries.
        if let Ok(Some(Claim {
            batch,
            log: Some(log),
            ..
        })) = Claim::parse(&e.anchor)
        {
            if let Err(detail) = crate::log_history::anchor_log_in(&read.history, &log) {
                fail(
                    e.number,
                    "log_history",
                    format!("anchor batch {batch}: {detail}"),
                );
            }
        }
    }
    LogSummary {
        size: read.history.tree.size(),
        cosigned_by: read.cosigned_by,
        quorum: read.quorum,
        voided,
    }
}

/// `witnessed` of a void epoch whose games were moved (docs/PROTOCOL.md §21, "Moved games"):
/// its moves cosigned by the quorum, repeating its bets, the last before the destination's
/// commitment, and the destination witnessed.
fn moved_epoch(
    fetch: &dyn Fetch,
    server: &str,
    floor: &WitnessFloor,
    e: &Epoch,
    moves: &[Vec<LoggedEntry>],
) -> Result<String, String> {
    let last = moves
        .last()
        .map(std::slice::from_ref)
        .ok_or("no move")?
        .to_vec();
    let d = vrs_protocol::tlog::moved::first_move(&last)?.to;
    let dest = fetch_epoch(fetch, server, d).map_err(|err| format!("{err:#}"))?;
    let dlog = dest
        .log
        .clone()?
        .ok_or_else(|| format!("epoch {d}, where its games moved, has no witnessed log"))?;
    let chain = vrs_protocol::tlog::moved::check(
        moves,
        e.number,
        d,
        &dlog.commitment,
        Some(&floor.policy),
    )?;
    if (chain.first.bets_root, chain.first.bet_count) != (e.bets_root, e.bet_count) {
        return Err(format!(
            "the move of epoch {} names other bets than the epoch's record",
            e.number
        ));
    }
    let shown = crate::witnessed::shown(
        d,
        dest.committed,
        dest.bets_root,
        dest.bet_count,
        dest.deadline_ms,
        &dest.previous_output,
    );
    let w = crate::witnessed::step(floor, d, Some(&dlog), shown)
        .map_err(|err| format!("{}; but epoch {d}: {err}", chain.detail))?;
    Ok(format!("{}; epoch {d}: {w}", chain.detail))
}

fn log_line(log: &LogSummary) -> String {
    let voids = if log.voided.is_empty() {
        String::new()
    } else {
        format!("; void entries name epochs {:?} of the range", log.voided)
    };
    format!(
        "log: {} entries replayed under the witnesses' rules, to a checkpoint cosigned by [{}]{voids}",
        log.size,
        log.cosigned_by.join(", ")
    )
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

/// One anchor batch as the range's epochs show it.
struct SeenBatch {
    claim: Claim,
    /// The first epoch of the range in it (failures of the batch are reported there).
    first_seen: u64,
    /// Epochs of the range in it whose leaf folds up to its root.
    anchored: u64,
    /// (epoch, closed_at_ms, resolved_at_ms) of the range's epochs in it.
    times: Vec<(u64, i64, i64)>,
}

/// Checks every epoch's anchor leaf against its batch root, that all epochs of one batch show
/// the same batch, each batch's binding in the operator's log once (under `policy`, cosigned
/// by its quorum), and with `rpc` each confirmed batch's transaction once.
fn check_anchors(
    epochs: &[Epoch],
    rpc: Option<(&Rpc, &Result<Sender, String>)>,
    policy: Option<&Policy>,
    fail: &mut impl FnMut(u64, &'static str, String),
) -> anyhow::Result<AnchorSummary> {
    let mut summary = AnchorSummary {
        rpc: rpc.is_some(),
        ..AnchorSummary::default()
    };
    let (rpc, sender) = match rpc {
        Some((r, s)) => (Some(r), Some(s)),
        None => (None, None),
    };
    let mut batches: BTreeMap<u64, SeenBatch> = BTreeMap::new();
    for e in epochs {
        let claim = match Claim::parse(&e.anchor) {
            Ok(Some(c)) => c,
            Ok(None) => {
                summary.pending += 1;
                continue;
            }
            Err(err) => {
                fail(e.number, "anchor_inclusion", err);
                continue;
            }
        };
        let leaf = epoch_leaf(&vrs_engine::anchor::EpochRecord {
            epoch: e.number,
            iterations: e.iterations,
            bets_root: &e.bets_root,
            prev_y: &e.previous_output,
            x: &e.x,
            y: &e.y,
            l: &e.l,
            pi: &e.pi,
        });
        let included = check_inclusion(&claim, &leaf);
        if let Err(err) = &included {
            fail(e.number, "anchor_inclusion", err.clone());
        }
        let seen = batches.entry(claim.batch).or_insert_with(|| SeenBatch {
            claim: claim.clone(),
            first_seen: e.number,
            anchored: 0,
            times: Vec::new(),
        });
        if let (Some(closed), Some(resolved)) = (e.closed_at_ms, e.resolved_at_ms) {
            seen.times.push((e.number, closed as i64, resolved));
        }
        if !same_batch(&seen.claim, &claim) {
            fail(
                e.number,
                "anchor_batch",
                format!(
                    "epoch {} shows anchor batch {} with another root, ranges or transaction                      than epoch {} does",
                    e.number, claim.batch, seen.first_seen
                ),
            );
        }
        if included.is_ok() {
            seen.anchored += 1;
        }
    }
    summary.batches = batches.len() as u64;
    let chain_id = match rpc {
        Some(rpc) => Some(rpc.chain_id()?),
        None => None,
    };
    for seen in batches.values() {
        let c = &seen.claim;
        let expected = match c.expected_calldata(policy) {
            Ok((calldata, _)) => calldata,
            Err(d) => {
                fail(
                    seen.first_seen,
                    "anchor_inclusion",
                    format!("anchor batch {}: {d}", c.batch),
                );
                continue;
            }
        };
        let Some(tx) = &c.tx else {
            summary.pending += seen.anchored;
            continue;
        };
        summary.anchored += seen.anchored;
        let (Some(rpc), Some(node_chain), Some(sender)) = (rpc, chain_id, sender) else {
            continue;
        };
        let verdict = if c.chain_id != Some(node_chain) {
            Verdict::Fail(format!(
                "the node at {} is on chain {node_chain}, anchor batch {} names chain {:?}",
                rpc.url, c.batch, c.chain_id
            ))
        } else {
            match sender {
                Ok(sender) => check_transaction(rpc, tx, &expected, sender)?,
                Err(e) => Verdict::Fail(format!("the anchor's sender: {e}")),
            }
        };
        if matches!(verdict, Verdict::Pass(_)) {
            // The chain's clock bounds the operator's (docs/PROTOCOL.md §10, "Timing").
            if let Some(block_ms) = rpc.mined_at_ms(tx)? {
                for &(epoch, closed, resolved) in &seen.times {
                    let last = epoch == c.last_epoch;
                    if let Err(d) = check_anchor_time(closed, resolved, block_ms, last) {
                        fail(epoch, "timing", format!("anchor batch {}: {d}", c.batch));
                    }
                }
            }
        }
        match verdict {
            Verdict::Pass(_) => summary.checked_on_chain += seen.anchored,
            Verdict::Fail(d) | Verdict::Pending(d) => fail(
                seen.first_seen,
                "anchor_onchain",
                format!("anchor batch {}: {d}", c.batch),
            ),
        }
    }
    Ok(summary)
}

/// Two epochs' views of one batch agree on everything but their own leaf and path.
fn same_batch(a: &Claim, b: &Claim) -> bool {
    (
        a.root,
        a.first_epoch,
        a.last_epoch,
        a.pool,
        a.notary,
        a.tree_size,
        &a.tx,
        a.chain_id,
        &a.calldata,
    ) == (
        b.root,
        b.first_epoch,
        b.last_epoch,
        b.pool,
        b.notary,
        b.tree_size,
        &b.tx,
        b.chain_id,
        &b.calldata,
    )
}

/// The summary's anchors line, e.g. "anchors: 3 batches, 12 epochs anchored and checked on
/// chain, 2 pending".
fn anchors_line(a: &AnchorSummary) -> String {
    if a.batches == 0 {
        return format!(
            "anchors: no epoch of the range is in an anchor batch yet ({} pending)",
            a.pending
        );
    }
    let checked = if a.rpc {
        format!(
            "{} epochs anchored and checked on chain",
            a.checked_on_chain
        )
    } else {
        format!(
            "{} epochs anchored (roots not checked on chain: give --rpc URL)",
            a.anchored
        )
    };
    format!(
        "anchors: {} batches, {checked}, {} pending",
        a.batches, a.pending
    )
}
