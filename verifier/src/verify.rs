//! `vrs verify <game_id>`: fetches a game's verification data from a vrs server and recomputes
//! every step locally with the engine, ignoring the server's own `verified` flag and checks.
//! One line per step; exit 0 when all pass, 1 when any fails, 2 on usage or network errors.

use anyhow::{bail, Context};
use clap::Args;
use serde::Serialize;
use serde_json::Value;
use std::process::ExitCode;
use std::time::Duration;
use vrs_engine::epoch::Timing;
use vrs_engine::group::Modulus;
use vrs_engine::merkle::{self, Hash};
use vrs_engine::vdf;
use vrs_protocol::commit::bet_leaf;
use vrs_protocol::epoch_group::{Group, SeedRule};
use vrs_protocol::outcome;
use vrs_protocol::record::NewGame;
use vrs_protocol::timing::{timing_step, Floor, PriorEpoch, TimingFacts};
use vrs_protocol::tlog::witnessed::WitnessFloor;

use crate::witnessed::WitnessArg;

mod acceptance;
pub(crate) mod anchor;
mod pool;

#[derive(Debug, Args)]
#[command(after_help = "\
Steps: first `group`, the group the proof names is the one --group expects (never one the \
server picked); then an epoch game is checked by bet_leaf, merkle_inclusion, epoch_chain, epoch_record (the \
proof's epoch is the one GET /api/v1/epochs/{e} publishes), epoch_input, \
vdf_proof, timing (the epoch's games were fixed before the previous epoch's output existed, within \
the bound of its declared security margin: docs/PROTOCOL.md §10), rng_value, dice and payout; a pool-served (instant) game by pool_batch_chain, \
pool_anchor, pool_batch_seed, pool_entry_input, vdf_proof, pool_inclusion, pool_committed, \
pool_game_id, pool_bet_inclusion (the bet is in the committed tree of the epoch open when it was \
served), rng_value, dice and payout (docs/PROTOCOL.md §13 and §14); then for every game \
acceptance (the operator's Ed25519 signature of the game's acceptance, by a key GET / publishes: \
§11). Once the game's epoch \
or pool batch is in an anchor batch, anchor_inclusion folds its anchor leaf up to the batch root \
(§16); with --rpc, anchor_onchain reads the anchor transaction back from that node.

A game whose anchor is not confirmed yet shows anchor_onchain as `pend`: the game's randomness \
is fully checked by the other steps, only its timestamp on chain is still to come, so this does \
not fail the verification (exit 0) unless --require-anchor is given (exit 1).")]
pub struct VerifyArgs {
    /// The game to verify: the game_id of a bet or of a raw RNG request (with --acceptance,
    /// taken from the saved response).
    #[arg(required_unless_present = "acceptance")]
    pub game_id: Option<String>,
    /// A saved acceptance: the JSON of the bet's 202 (or instant 200, or raw RNG 202) response,
    /// or its `acceptance` object alone. Checks the operator's signature, that the server still
    /// stores the game exactly as signed, and that the signed bet is in its epoch's committed
    /// tree (steps acceptance_signature, acceptance_stored, acceptance_in_tree), then verifies
    /// the game as usual. A failed step names what was dropped or altered: the player's
    /// evidence (docs/PROTOCOL.md §11, "Signed acceptance").
    #[arg(long, value_name = "FILE")]
    pub acceptance: Option<std::path::PathBuf>,
    /// Base URL of the vrs server whose data is checked (another machine is fine: only the
    /// public API is used).
    #[arg(long, env = "VRS_SERVER", default_value = "http://127.0.0.1:8080")]
    pub server: String,
    /// JSON-RPC URL of a node of the anchor chain, of your choosing (for Base, your own node or
    /// e.g. https://mainnet.base.org). Adds the anchor_onchain step: the node must report the
    /// proof's anchorChainId, and the anchor transaction must be mined there, sent from the
    /// operator's anchor account, with the batch's calldata ("vrs-anchor-v2:" ‖ batch ‖ log
    /// size ‖ log root ‖ root, or version 1 without the log). A pending anchor (not confirmed yet) is
    /// reported as pending and does not fail the game; see --require-anchor.
    #[arg(long, value_name = "URL")]
    pub rpc: Option<String>,
    /// With --rpc: fail (exit 1) unless the game's anchor is confirmed and checks out on chain,
    /// instead of reporting a not-yet-confirmed anchor as pending.
    #[arg(long, requires = "rpc")]
    pub require_anchor: bool,
    #[command(flatten)]
    pub group: GroupArg,
    #[command(flatten)]
    pub margin: MarginArg,
    #[command(flatten)]
    pub witness: WitnessArg,
    /// Print the checks as a JSON object instead of a checklist.
    #[arg(long)]
    pub json: bool,
}

/// `--min-margin` of `vrs verify` and `vrs audit`.
#[derive(Debug, Args)]
pub struct MarginArg {
    /// The least security margin an epoch may declare for its `timing` to pass (a number ≥ 1,
    /// two decimals at most): an epoch whose window was planned for a weaker adversary than
    /// this fails, whatever the server says, and so does a version-1 epoch, which declares
    /// none (docs/PROTOCOL.md §10, "Timing"), even with --allow-version-1.
    #[arg(long, value_name = "A", value_parser = vrs_protocol::schedule::parse_margin)]
    pub min_margin: Option<u32>,
    /// The least squaring rate R an epoch may declare, in squarings per second in the proof's
    /// group (`1000000` or `1e6`). The window is timed against the declared R, so an operator
    /// that understates its rate keeps epochs open longer than its real squarer needs: the
    /// margin then holds against a squarer A · R fast, not against faster hardware. Give the
    /// rate you compare against, such as your own in the same group (`vrs bench vdf`: R =
    /// 10^9 / ns per squaring of `fast`, for RSA-2048). Like --min-margin, it also fails
    /// version-1 epochs (docs/PROTOCOL.md §10, "Whose numbers").
    #[arg(long, value_name = "R", value_parser = vrs_protocol::schedule::parse_rate)]
    pub min_rate: Option<u64>,
    /// Let version-1 epochs pass `timing`, as version 1's rules allow. They make no timing
    /// commitment (an operator could have closed each once it had evaluated its candidates),
    /// so by default they fail (docs/PROTOCOL.md §10, "Version 1"). Only for records written
    /// before the timing rule; --min-margin and --min-rate still fail them.
    #[arg(long)]
    pub allow_version_1: bool,
}

impl MarginArg {
    /// What the flags ask of every epoch's `timing`.
    pub fn floor(&self) -> Floor {
        Floor {
            margin_centi: self.min_margin.unwrap_or(0),
            rate: self.min_rate.unwrap_or(0),
            allow_version_1: self.allow_version_1,
        }
    }
}

/// `--group` of `vrs verify` and `vrs audit`.
#[derive(Debug, Args)]
pub struct GroupArg {
    /// The group the proofs must have been computed in. A server names its group in every
    /// proof, but a proof only means something in a group whose order nobody knows: a server
    /// free to name a modulus of its choosing (one it can factor) could forge any proof. So the
    /// group is the verifier's choice, and a proof naming another fails the `group` check.
    /// rsa2048 (default), classgroup-1024 (a class-group server: the discriminant of each
    /// epoch is recomputed from its seed), or test512 / test1024 / hex:<digits> to check a
    /// test server.
    #[arg(
        long,
        visible_alias = "modulus",
        env = "VRS_GROUP",
        default_value = "rsa2048"
    )]
    pub group: String,
}

/// One recomputed step.
#[derive(Debug, Serialize)]
pub struct Step {
    pub name: &'static str,
    pub passed: bool,
    /// Neither passed nor failed: what the step checks does not exist yet (an anchor not yet
    /// confirmed on chain). A pending step does not fail the verification.
    pub pending: bool,
    pub detail: String,
}

/// What one step concluded.
#[derive(Debug)]
pub enum Verdict {
    Pass(String),
    Fail(String),
    Pending(String),
}

impl Step {
    pub fn new(name: &'static str, verdict: Verdict) -> Self {
        let (passed, pending, detail) = match verdict {
            Verdict::Pass(d) => (true, false, d),
            Verdict::Fail(d) => (false, false, d),
            Verdict::Pending(d) => (false, true, d),
        };
        Step {
            name,
            passed,
            pending,
            detail,
        }
    }

    fn failed(&self) -> bool {
        !self.passed && !self.pending
    }
}

#[derive(Debug, Serialize)]
struct Report<'a> {
    game_id: &'a str,
    server: &'a str,
    pool_served: bool,
    verified: bool,
    steps: &'a [Step],
    /// What the steps did not check and the verifier therefore trusts.
    notes: &'a [String],
}

pub fn run(args: VerifyArgs) -> anyhow::Result<ExitCode> {
    let server = args.server.trim_end_matches('/');
    let group = &args.group.group;
    Group::by_name(group).with_context(|| format!("--group {group}"))?;
    let saved = args
        .acceptance
        .as_deref()
        .map(acceptance::read_saved)
        .transpose()?;
    let game_id = match (&saved, &args.game_id) {
        (Some(s), Some(id)) if *id != s.game_id => {
            bail!("the saved acceptance is for game {}, not {id}", s.game_id)
        }
        (Some(s), _) => s.game_id.clone(),
        (None, Some(id)) => id.clone(),
        (None, None) => bail!("name a game id, or give --acceptance FILE"),
    };
    let http = Http::new()?;
    let witness = args.witness.floor(group)?;
    let options = Options {
        group,
        rpc: args.rpc.as_deref(),
        require_anchor: args.require_anchor,
        floor: args.margin.floor(),
        witness: witness.as_ref(),
    };
    let checked = match &saved {
        None => check(&http, server, &game_id, &options)?,
        Some(saved) => {
            let keys = acceptance::Keys::fetch(&http, server)?;
            let (mut steps, verification) =
                acceptance::evidence_steps(&http, server, saved, &keys, group)?;
            match verification {
                Some(_) => {
                    let rest = check(&http, server, &game_id, &options)?;
                    steps.extend(rest.steps);
                    Checked {
                        pool_served: rest.pool_served,
                        steps,
                        note: rest.note,
                        notes: rest.notes,
                    }
                }
                None => Checked {
                    pool_served: saved.doc.kind == "pool",
                    steps,
                    note: None,
                    notes: Vec::new(),
                },
            }
        }
    };
    let game_id = &game_id;
    let steps = &checked.steps;
    let verified = !steps.iter().any(Step::failed);
    if args.json {
        let report = Report {
            game_id,
            server,
            pool_served: checked.pool_served,
            verified,
            steps,
            notes: &checked.notes,
        };
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_checklist(game_id, server, steps);
        for n in &checked.notes {
            println!("note: {n}");
        }
        if args.rpc.is_none() {
            if let Some(note) = &checked.note {
                println!("{note}");
            }
        }
    }
    Ok(if verified {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// What `vrs verify` concluded about one game, before printing.
#[derive(Debug)]
pub struct Checked {
    pub pool_served: bool,
    pub steps: Vec<Step>,
    /// The line naming an anchor transaction that was not read back (printed without --rpc).
    pub note: Option<String>,
    /// What the steps did not check, and the verifier therefore trusts (no witness policy).
    pub notes: Vec<String>,
}

/// What `vrs verify` (and `vrs audit`, which has no `require_anchor`) is asked to require.
#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    /// The group the proofs must be in (`--group`).
    pub group: &'a str,
    /// A node of the anchor chain (`--rpc`).
    pub rpc: Option<&'a str>,
    pub require_anchor: bool,
    /// What `timing` requires beyond the protocol's least.
    pub floor: Floor,
    /// The verifier's witnesses, S and δ (`--witness-policy`); None: `witnessed` is not run.
    pub witness: Option<&'a WitnessFloor>,
}

/// Every step of `vrs verify` for `game_id` on `server`, with what `fetch` answers. `Err`:
/// the server or the node cannot be asked, or the answer is not a verification at all.
pub fn check(
    fetch: &dyn Fetch,
    server: &str,
    game_id: &str,
    options: &Options<'_>,
) -> anyhow::Result<Checked> {
    let Options {
        group,
        rpc,
        require_anchor,
        floor,
        witness,
    } = *options;
    let url = format!("{server}/api/v1/verify/{game_id}");
    let body = fetch.get(&url)?;
    let proof = proof_of(&body)?;
    let pool_served = proof.get("pool_served").and_then(Value::as_bool) == Some(true);
    // First: the group is the one the verifier expects. The other steps recompute in the group
    // the proof names, so with this step failed the game is not verified whatever they say.
    let mut steps = vec![group_step(&Fields(proof), group)];
    steps.extend(if pool_served {
        pool::steps(fetch, server, game_id, &body)?
    } else {
        let mut steps = recompute(&body, game_id)?;
        // The steps that need other epochs' public records: the chain link after the inclusion
        // steps, the timing after the proof.
        let (chain, record, timing) = chain_and_timing(fetch, server, &body, floor);
        let at = steps.len().min(2);
        steps.insert(at, chain);
        steps.insert(at + 1, record);
        let at = steps
            .iter()
            .position(|s| s.name == "vdf_proof")
            .map_or(steps.len(), |i| i + 1);
        steps.insert(at, timing);
        if let Some(floor) = witness {
            steps.insert(at + 1, witnessed_step(proof, floor));
            // Under a policy the moves must also be cosigned by its quorum.
            if let Ok(Some(m)) = crate::witnessed::moves_of(proof) {
                if let Some(s) = steps.iter_mut().find(|s| s.name == "moved") {
                    *s = moved_step(proof, &m, Some(&floor.policy));
                }
            }
        }
        steps
    });
    let notes = match (pool_served, witness) {
        (false, None) => vec![crate::witnessed::UNCHECKED_NOTE.to_owned()],
        (_, Some(floor)) => crate::witnessed::policy_notes(floor),
        (true, None) => Vec::new(),
    };
    // Version 2: the signed acceptance, and a pool-served bet's place in an epoch's tree.
    let keys = acceptance::Keys::fetch(fetch, server)?;
    if pool_served {
        let bound = acceptance::pool_bet_step(fetch, server, proof, &keys, group)?;
        let at = steps
            .iter()
            .position(|s| s.name == "pool_game_id")
            .map_or(steps.len(), |i| i + 1);
        steps.insert(at, bound);
    }
    steps.push(acceptance::acceptance_step(proof, &keys));
    let policy = witness.map(|w| &w.policy);
    steps.extend(anchor::inclusion_step(proof, pool_served, policy));
    if let Some(rpc_url) = rpc {
        let rpc = anchor::Rpc::new(fetch, rpc_url);
        let sender = anchor_sender(fetch, server, proof, witness);
        steps.push(anchor::onchain_step(
            &rpc,
            proof,
            require_anchor,
            &sender,
            policy,
        )?);
    }
    Ok(Checked {
        pool_served,
        steps,
        note: anchor::unchecked_note(proof),
        notes,
    })
}

/// The operator's anchor account: with a policy, from the log's operator declaration (the
/// proof's `log`, or for a pool-served game the `log` of its anchor batch's first epoch);
/// without, what the server names in its stats.
fn anchor_sender(
    fetch: &dyn Fetch,
    server: &str,
    proof: &Value,
    witness: Option<&WitnessFloor>,
) -> Result<anchor::Sender, String> {
    let Some(floor) = witness else {
        return anchor::sender_from_stats(fetch, server);
    };
    let evidence = match crate::witnessed::evidence_of(proof)? {
        Some(ev) => ev,
        None => {
            let n = proof
                .pointer("/anchor/epochs/first")
                .and_then(Value::as_u64)
                .ok_or("the proof carries no witnessed log, and its anchor names no epoch")?;
            let rec = fetch
                .get(&format!("{server}/api/v1/epochs/{n}"))
                .map_err(|e| format!("{e:#}"))?;
            crate::witnessed::evidence_of(&rec)?
                .ok_or_else(|| format!("epoch {n} carries no witnessed log"))?
        }
    };
    anchor::sender_from_log(&evidence, floor)
}

fn print_checklist(game_id: &str, server: &str, steps: &[Step]) {
    println!("game {game_id} on {server}");
    for s in steps {
        let mark = match (s.passed, s.pending) {
            (true, _) => "ok  ",
            (false, true) => "pend",
            (false, false) => "FAIL",
        };
        println!("{mark} {:<17} {}", s.name, s.detail);
    }
    let names = |f: fn(&Step) -> bool| {
        steps
            .iter()
            .filter(|s| f(s))
            .map(|s| s.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let failed = names(Step::failed);
    let pending = names(|s| s.pending);
    if !failed.is_empty() {
        println!("NOT verified: {failed} failed");
    } else if !pending.is_empty() {
        println!("verified: every step recomputed here passed; still pending: {pending}");
    } else {
        println!("verified: every step recomputed here");
    }
}

/// What the checking commands read: JSON from a vrs server's public API (GET) and JSON-RPC
/// answers from a node (POST). [`Http`] goes over the network; the fuzz harness
/// (`vrs_testkit::fuzz`, a dev-only crate) answers from canned bytes, so everything after the fetch is the same code.
pub trait Fetch: std::fmt::Debug {
    /// GETs `url` as JSON; `None` on a 404 (the server does not have it: for a record the
    /// server's own data names, a failed check rather than an error).
    fn get_opt(&self, url: &str) -> anyhow::Result<Option<Value>>;

    /// POSTs `body` as JSON to `url` (a JSON-RPC call) and reads the JSON answer.
    fn post(&self, url: &str, body: &Value) -> anyhow::Result<Value>;

    /// GETs `url` as bytes (a log checkpoint or tile); `None` on a 404.
    fn get_bytes_opt(&self, url: &str) -> anyhow::Result<Option<Vec<u8>>> {
        bail!("{url}: this client reads JSON answers only")
    }

    /// GETs `url` as JSON; a 404 says what was not found, anything else not 200 is an error.
    fn get(&self, url: &str) -> anyhow::Result<Value> {
        match self.get_opt(url)? {
            Some(v) => Ok(v),
            None => bail!("{url}: not found on this server (404; no such game or epoch)"),
        }
    }
}

/// A blocking JSON client over reqwest (HTTP and HTTPS), for the checking commands.
#[derive(Debug)]
pub struct Http {
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
}

impl Http {
    pub fn new() -> anyhow::Result<Self> {
        Ok(Self {
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("starting the HTTP client's runtime")?,
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .context("building the HTTP client")?,
        })
    }

    fn send(
        &self,
        url: &str,
        request: reqwest::RequestBuilder,
    ) -> anyhow::Result<(reqwest::StatusCode, String)> {
        let (status, bytes) = self.send_bytes(url, request)?;
        Ok((status, String::from_utf8_lossy(&bytes).into_owned()))
    }

    /// Sends `request`; while the server answers 503 (busy, or no leader yet) it waits as its
    /// Retry-After says (at most 10 s at a time, [`BUSY_WAIT`] in all) and asks again.
    fn send_bytes(
        &self,
        url: &str,
        request: reqwest::RequestBuilder,
    ) -> anyhow::Result<(reqwest::StatusCode, Vec<u8>)> {
        self.runtime.block_on(async {
            let mut request = request;
            let mut waited = Duration::ZERO;
            loop {
                let again = request.try_clone();
                let resp = request
                    .send()
                    .await
                    .with_context(|| format!("{url}: no answer"))?;
                let status = resp.status();
                if status == reqwest::StatusCode::SERVICE_UNAVAILABLE {
                    let pause = retry_after(&resp);
                    if let Some(next) = again.filter(|_| waited + pause <= BUSY_WAIT) {
                        tokio::time::sleep(pause).await;
                        waited += pause;
                        request = next;
                        continue;
                    }
                }
                let bytes = resp
                    .bytes()
                    .await
                    .with_context(|| format!("{url}: reading the answer"))?;
                return Ok((status, bytes.to_vec()));
            }
        })
    }
}

/// How long the checking commands wait in all for a server that answers 503.
const BUSY_WAIT: Duration = Duration::from_secs(60);

/// A 503's Retry-After in seconds (default 1), between 0.2 and 10 s.
fn retry_after(resp: &reqwest::Response) -> Duration {
    let secs = resp
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(1);
    Duration::from_secs(secs.min(10)).max(Duration::from_millis(200))
}

impl Fetch for Http {
    fn get_bytes_opt(&self, url: &str) -> anyhow::Result<Option<Vec<u8>>> {
        let (status, bytes) = self.send_bytes(url, self.client.get(url))?;
        if status == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            bail!("{url}: HTTP {status}: {}", String::from_utf8_lossy(&bytes));
        }
        Ok(Some(bytes))
    }

    fn get_opt(&self, url: &str) -> anyhow::Result<Option<Value>> {
        let (status, text) = self.send(url, self.client.get(url))?;
        if status == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            bail!("{url}: HTTP {status}: {text}");
        }
        serde_json::from_str(&text)
            .map(Some)
            .with_context(|| format!("{url}: the answer is not JSON"))
    }

    fn post(&self, url: &str, body: &Value) -> anyhow::Result<Value> {
        let (status, text) = self.send(url, self.client.post(url).json(body))?;
        if !status.is_success() {
            bail!("{url}: HTTP {status}: {text}");
        }
        serde_json::from_str(&text).with_context(|| format!("{url}: the answer is not JSON"))
    }
}

/// The proof object of a verification response; `Err` when the response is not a
/// verification at all (a pending game, or not a vrs server).
fn proof_of(body: &Value) -> anyhow::Result<&Value> {
    body.get("proof").filter(|p| p.is_object()).context(
        "the answer has no proof object: the game is not resolved yet, or this is not a vrs server",
    )
}

/// The steps recomputed from an epoch game's verification response (all but `epoch_chain`,
/// which needs another request). `Err` only when the response is not a verification at all
/// (a pending game, or the wrong shape): every wrong value is a failed step.
pub fn recompute(body: &Value, game_id: &str) -> anyhow::Result<Vec<Step>> {
    let proof = proof_of(body)?;
    let p = Fields(proof);
    let mut steps = Vec::new();

    let group = Group::by_name(&p.str("modulus")).map_err(|e| format!("{e:#}"));
    let game = new_game(proof.get("bet").unwrap_or(&Value::Null));
    let leaf = p.bytes("leaf");

    // 1. The leaf encodes the bet's fields, and the bet is the game asked about (a server
    //    answering with another, honest game's data must not pass).
    steps.push(step(
        "bet_leaf",
        match (&game, &leaf) {
            (Ok(g), _) if g.game_id != game_id => Err(format!(
                "the server answered with game {}, not {game_id}",
                g.game_id
            )),
            (Ok(g), Ok(l)) if bet_leaf(g) == *l => Ok("leaf bytes encode the bet's fields".into()),
            (Ok(_), Ok(_)) => Err("leaf bytes do not encode the bet's fields".into()),
            (Err(e), _) | (_, Err(e)) => Err(e.clone()),
        },
    ));

    // 2. The leaf is included under the bets root the epoch input committed (a moved game's:
    //    the one its first move repeats, its own epoch's).
    let bets_root = p.hash("bets_root");
    let moved = crate::witnessed::moves_of(proof);
    steps.push(step(
        "merkle_inclusion",
        (|| {
            let leaf = leaf.clone()?;
            let (root, size) = match &moved {
                Ok(None) => (bets_root.clone()?, p.u64("bet_count")?),
                Ok(Some(m)) => {
                    let first = vrs_protocol::tlog::moved::first_move(&m.moves)?;
                    (first.bets_root, first.bet_count)
                }
                Err(e) => return Err(e.clone()),
            };
            let index = p.u64("leaf_index")?;
            let path = p.hashes("audit_path")?;
            if merkle::verify_inclusion(&merkle::leaf_hash(&leaf), index, size, &path, &root) {
                Ok(format!(
                    "leaf {index} of {size} leads to bets root {}",
                    hex::encode(root)
                ))
            } else {
                Err(format!(
                    "leaf {index} of {size} and the audit path do not lead to bets root {}",
                    hex::encode(root)
                ))
            }
        })(),
    ));

    // 2a. A moved game: the moves lead from its epoch to the proof's, before its commitment
    //     (checked under a policy by `vrs verify`, which has one: [`moved_step`]).
    if let Ok(Some(m)) = &moved {
        steps.push(moved_step(proof, m, None));
    }

    // 3. The epoch input follows from the epoch, the previous output, the bets root and T.
    //    seed_e is recomputed here, never taken from the server; the VDF check uses it too
    //    (a class group's discriminant follows from it).
    let t = p.u64("iterations");
    let committed = committed_timing(proof);
    let seed = (|| {
        let g = group.as_ref().map_err(String::clone)?;
        let e = p.u64("vdfEpoch")?;
        let rule = match &committed {
            Ok(Some((timing, nonce))) => SeedRule::V2 { nonce, timing },
            Ok(None) => SeedRule::V1 {
                iterations: t.clone()?,
            },
            Err(err) => return Err(err.clone()),
        };
        let (seed, x) = g
            .input_for(e, &p.bytes("previous_output")?, &bets_root.clone()?, &rule)
            .map_err(|e| format!("{e:#}"))?;
        Ok::<_, String>((seed, x, e))
    })();
    let fields = match &committed {
        Ok(Some(_)) => "e ‖ p ‖ y_p ‖ bets_root ‖ nonce ‖ T ‖ opened ‖ closed ‖ margin ‖ rate",
        _ => "e ‖ y_prev ‖ bets_root ‖ T",
    };
    steps.push(step(
        "epoch_input",
        (|| {
            let g = group.as_ref().map_err(String::clone)?;
            let (seed, x, e) = seed.clone()?;
            if x != p.bytes("x")? {
                return Err(format!(
                    "x does not follow from the epoch's committed fields ({fields})"
                ));
            }
            match g.discriminant(&seed) {
                None => Ok(format!(
                    "x = hash_to_group(SHA-256(tag ‖ {fields})) for epoch {e}"
                )),
                Some(d) => {
                    let d = d.map_err(|e| format!("{e:#}"))?.to_hex();
                    // The server's D_e, where it shows one, must be the one the seed gives.
                    match p.0.get("discriminant").and_then(Value::as_str) {
                        Some(shown) if shown != d => Err(format!(
                            "the proof's discriminant is not D_e = create_discriminant(seed_e): \
                             {d}"
                        )),
                        _ => Ok(format!(
                            "x = the generator of D_e = create_discriminant(SHA-256(tag ‖ \
                             {fields})) = {d} for epoch {e}"
                        )),
                    }
                }
            }
        })(),
    ));

    // 4. The Wesolowski proof of y = x^(2^T).
    steps.push(step(
        "vdf_proof",
        (|| {
            let g = group.as_ref().map_err(String::clone)?;
            let (seed, _, _) = seed.clone()?;
            g.verify_proof(
                &seed,
                &p.bytes("x")?,
                &p.bytes("y")?,
                p.u64("iterations")?,
                &p.bytes("l")?,
                &p.bytes("pi")?,
            )
        })(),
    ));

    // 5. rngValue, the dice and the payout from y and the bet.
    steps.extend(outcome_steps(&p, body, &game));
    Ok(steps)
}

/// `vdf_proof`: the Wesolowski equation for the proof's x, y, T, ℓ and π, strictly decoded.
fn vdf_step(p: &Fields, modulus: &Result<Modulus, vrs_engine::error::Error>) -> Step {
    step(
        "vdf_proof",
        (|| {
            let m = modulus.as_ref().map_err(|e| e.to_string())?;
            let t = p.u64("iterations")?;
            vdf::verify_encoded(
                m,
                &p.bytes("x")?,
                &p.bytes("y")?,
                t,
                &p.bytes("l")?,
                &p.bytes("pi")?,
            )
            .map(|()| format!("π^ℓ · x^(2^T mod ℓ) = y for T = {t}"))
            .map_err(|e| format!("{e}"))
        })(),
    )
}

/// `rng_value`, `dice` and `payout`: the outcome recomputed from the proof's y and the
/// committed bet, against what the server claims (the proof's rngValue and its replay steps).
fn outcome_steps(p: &Fields, body: &Value, game: &Result<NewGame, String>) -> Vec<Step> {
    let mut steps = Vec::new();
    let derived = (|| {
        let g = game.clone()?;
        outcome::derive(&p.bytes("y")?, &g).map(|o| o.resolution(&g.game_id))
    })();
    let claims = Claims::of(body);
    steps.push(step(
        "rng_value",
        derived.as_ref().map_err(String::clone).and_then(|r| {
            let claimed = p.str("rngValue");
            if r.rng_value == claimed && claims.rng_value == claimed {
                Ok(format!("HMAC-SHA256(y, game_id ‖ player_seed) = {claimed}"))
            } else {
                Err(format!(
                    "recomputed {} but the server says {claimed} (proof) and {} (replay)",
                    r.rng_value, claims.rng_value
                ))
            }
        }),
    ));
    let is_rng = game.as_ref().is_ok_and(|g| g.game == "rng");
    if !is_rng {
        steps.push(step(
            "dice",
            derived.as_ref().map_err(String::clone).and_then(|r| {
                let claimed = &claims.dice;
                if r.dice == *claimed {
                    Ok(format!("dice {:?}", r.dice))
                } else {
                    Err(format!(
                        "recomputed {:?} but the server says {claimed:?}",
                        r.dice
                    ))
                }
            }),
        ));
        steps.push(step(
            "payout",
            derived.as_ref().map_err(String::clone).and_then(|r| {
                let (won, payout) = (claims.won, claims.payout.clone());
                if r.won == won && r.payout == payout {
                    let result = match r.won {
                        Some(true) => "won",
                        Some(false) => "lost",
                        None => "no bet",
                    };
                    Ok(format!(
                        "{result}, payout {}",
                        r.payout.clone().unwrap_or_default()
                    ))
                } else {
                    Err(format!(
                        "recomputed won {:?} payout {:?} but the server says {won:?} {payout:?}",
                        r.won, r.payout
                    ))
                }
            }),
        ));
    }
    steps
}

/// `group`: the proof names the group the verifier expects (`--group`), the same modulus
/// digits included: never a group the server picked.
fn group_step(p: &Fields, expected: &str) -> Step {
    step(
        "group",
        (|| {
            let named = p.str("modulus");
            let want =
                Group::by_name(expected).map_err(|e| format!("--group {expected}: {e:#}"))?;
            if !named.eq_ignore_ascii_case(&want.id()) {
                return Err(format!(
                    "the server computed in {named:?}, not in {expected} (--group): a group of \
                     the server's choosing proves nothing"
                ));
            }
            // Also the digits, where the server spells them out.
            if let Some(m) = want.modulus() {
                if p.0.get("modulus_n").is_some() && p.bytes("modulus_n")? != m.to_be_bytes() {
                    return Err(format!("modulus_n is not the modulus of {expected}"));
                }
            }
            Ok(format!("{expected}, the group this check expects"))
        })(),
    )
}

/// `epoch_chain`, `epoch_record` and `timing`, from the public records of the epochs they
/// involve: the input's previous output is y of p(e) as the server publishes it (or the genesis
/// output for p = 0), and the game's epoch is the one the server publishes as epoch e, so the
/// server cannot show one history to this game and another to everyone else; and the epoch's
/// committed timing keeps the rule against p(e)'s and e − 1's published times
/// (docs/PROTOCOL.md §10).
fn chain_and_timing(
    fetch: &dyn Fetch,
    server: &str,
    body: &Value,
    floor: Floor,
) -> (Step, Step, Step) {
    let p = Fields(&body["proof"]);
    let committed = committed_timing(&body["proof"]);
    let record = |n: u64| -> Result<Value, String> {
        fetch
            .get(&format!("{server}/api/v1/epochs/{n}"))
            .map_err(|err| format!("{err:#}"))
    };
    let previous = (|| {
        let e = p.u64("vdfEpoch")?;
        match committed.clone()? {
            Some((t, _)) => Ok((e, t.previous)),
            None => Ok((e, e.saturating_sub(1))),
        }
    })();
    let pred_record = previous.clone().and_then(|(_, prev)| match prev {
        0 => Ok(None),
        n => record(n).map(Some),
    });
    let chain = step(
        "epoch_chain",
        (|| {
            let (_, prev) = previous.clone()?;
            let g = Group::by_name(&p.str("modulus")).map_err(|e| format!("{e:#}"))?;
            let claimed = p.bytes("previous_output")?;
            let (source, y) = match pred_record.clone()? {
                None => ("the genesis output".to_owned(), g.genesis_output()),
                Some(rec) => (format!("y of epoch {prev}"), Fields(&rec).bytes("y")?),
            };
            if claimed == y {
                Ok(format!("previous output is {source}"))
            } else {
                Err(format!("previous output is not {source}"))
            }
        })(),
    );
    let own = step(
        "epoch_record",
        (|| {
            let (e, _) = previous.clone()?;
            same_epoch(&body["proof"], &record(e)?, e)
        })(),
    );
    let timing = step(
        "timing",
        (|| {
            let (e, prev) = previous.clone()?;
            let timing = committed.clone()?.map(|(t, _)| t);
            let predecessor = match (prev, pred_record.clone()?) {
                (0, _) | (_, None) => None,
                (_, Some(rec)) => Some(vrs_engine::timing::Predecessor {
                    closed_at_ms: rec["closed_at_ms"]
                        .as_u64()
                        .ok_or(format!("epoch {prev} (the predecessor) is not closed"))?,
                    iterations: rec["iterations"]
                        .as_u64()
                        .ok_or(format!("epoch {prev} (the predecessor) has no T"))?,
                }),
            };
            let prior = match e {
                0 | 1 => None,
                n => {
                    let rec = record(n - 1)?;
                    Some(PriorEpoch {
                        // A server from before the timing rule publishes no version: 1.
                        version: rec["version"].as_u64().map_or(1, |v| v.min(255) as u8),
                        closed_at_ms: rec["closed_at_ms"].as_i64(),
                        resolved_at_ms: rec["resolved_at_ms"].as_i64(),
                    })
                }
            };
            timing_step(&TimingFacts {
                epoch: e,
                timing,
                ran_iterations: p.u64("iterations").ok(),
                predecessor,
                prior,
                floor,
            })
        })(),
    );
    (chain, own, timing)
}

/// Pairs of (the proof's member, the epoch record's member) that must be equal: everything
/// the epoch input, the VDF proof and the timing rule read (docs/PROTOCOL.md §13).
const EPOCH_RECORD_PAIRS: &[(&str, &str)] = &[
    ("/modulus", "/modulus"),
    ("/iterations", "/iterations"),
    ("/previous_output", "/previous_output"),
    ("/bets_root", "/bets_root"),
    ("/bet_count", "/bet_count"),
    ("/x", "/x"),
    ("/y", "/y"),
    ("/pi", "/pi"),
    ("/l", "/l"),
    ("/timing/version", "/version"),
    ("/timing/previous_epoch", "/previous_epoch"),
    ("/timing/nonce", "/nonce"),
    ("/timing/opened_at_ms", "/opened_at_ms"),
    ("/timing/closed_at_ms", "/closed_at_ms"),
    ("/timing/security_margin", "/security_margin"),
    ("/timing/squarings_per_second", "/squarings_per_second"),
    ("/timing/deadline_ms", "/deadline_ms"),
];

/// `epoch_record`: the proof's epoch is epoch e as the server publishes it to everyone
/// (`GET /api/v1/epochs/{e}`), resolved, member for member. Without it an operator could
/// evaluate epoch e several times (other nonces) and hand each game the run it prefers, each
/// proof valid on its own.
fn same_epoch(proof: &Value, record: &Value, e: u64) -> Result<String, String> {
    if record["status"] != "resolved" {
        return Err(format!(
            "epoch {e} is published as {}, not resolved",
            record["status"]
        ));
    }
    // A version-1 epoch has no timing object: its commitment is T alone.
    let version_1 = proof.get("timing").is_none_or(Value::is_null);
    let differ: Vec<String> = EPOCH_RECORD_PAIRS
        .iter()
        .filter(|(mine, _)| !(version_1 && mine.starts_with("/timing/")))
        .filter(|(mine, theirs)| {
            proof.pointer(mine).unwrap_or(&Value::Null)
                != record.pointer(theirs).unwrap_or(&Value::Null)
        })
        .map(|(mine, _)| mine.trim_start_matches('/').replace('/', "."))
        .collect();
    if differ.is_empty() {
        Ok(format!(
            "the proof's epoch is epoch {e} as published: x, y, π, ℓ, T, bets root and timing"
        ))
    } else {
        Err(format!(
            "the proof's epoch differs from the published epoch {e} in {}",
            differ.join(", ")
        ))
    }
}

/// `witnessed` of an epoch game: the proof's epoch record is the one its `log` proves,
/// cosigned in time by the verifier's quorum.
fn witnessed_step(proof: &Value, floor: &WitnessFloor) -> Step {
    let p = Fields(proof);
    step(
        "witnessed",
        (|| {
            let e = p.u64("vdfEpoch")?;
            let evidence = crate::witnessed::evidence_of(proof)?;
            let shown = (|| {
                crate::witnessed::shown(
                    e,
                    committed_timing(proof)?,
                    p.hash("bets_root")?,
                    p.u64("bet_count")?,
                    proof["timing"]["deadline_ms"].as_u64(),
                    &p.bytes("previous_output")?,
                )
            })();
            crate::witnessed::step(floor, e, evidence.as_ref(), shown)
        })(),
    )
}

/// `moved` (docs/PROTOCOL.md §21, "Moved games"): the moves chain from the game's epoch
/// (`moved_from`) to the proof's (`vdfEpoch`), the last before its commitment; under `policy`
/// each in checkpoints its quorum cosigned.
fn moved_step(
    proof: &Value,
    m: &crate::witnessed::Moved,
    policy: Option<&vrs_protocol::tlog::policy::Policy>,
) -> Step {
    let p = Fields(proof);
    step(
        "moved",
        (|| {
            let from = m
                .from
                .ok_or("the proof shows moves but names no epoch they move from (moved_from)")?;
            let to = p.u64("vdfEpoch")?;
            vrs_protocol::tlog::moved::check(&m.moves, from, to, &m.commitment, policy)
                .map(|c| c.detail)
        })(),
    )
}

/// A version-2 epoch's committed timing and nonce from the proof's `timing` object (its T is
/// the proof's `iterations`); `None` for version 1.
fn committed_timing(proof: &Value) -> Result<Option<(Timing, [u8; 32])>, String> {
    let t = Fields(&proof["timing"]);
    match proof["timing"]["version"].as_u64() {
        Some(1) => return Ok(None),
        Some(2) => {}
        Some(v) => return Err(format!("timing.version {v} is not a protocol version")),
        None => return Err("timing is missing from the proof".into()),
    }
    let nonce: [u8; 32] = t
        .bytes("nonce")?
        .try_into()
        .map_err(|_| "timing.nonce is not 32 bytes".to_owned())?;
    let margin = proof["timing"]["security_margin"]
        .as_f64()
        .ok_or("timing.security_margin is missing or not a number")?;
    Ok(Some((
        Timing {
            previous: t.u64("previous_epoch")?,
            iterations: Fields(proof).u64("iterations")?,
            opened_at_ms: t.u64("opened_at_ms")?,
            closed_at_ms: t.u64("closed_at_ms")?,
            margin_centi: (margin * 100.0).round() as u32,
            squarings_per_second: t.u64("squarings_per_second")?,
        },
        nonce,
    )))
}

fn step(name: &'static str, r: Result<String, String>) -> Step {
    Step::new(
        name,
        match r {
            Ok(d) => Verdict::Pass(d),
            Err(d) => Verdict::Fail(d),
        },
    )
}

/// What the server claims the game's outcome was: the replay steps of its answer.
struct Claims {
    rng_value: String,
    dice: Vec<u8>,
    won: Option<bool>,
    payout: Option<String>,
}

impl Claims {
    fn of(body: &Value) -> Self {
        let steps = body["replay_steps"].as_array().cloned().unwrap_or_default();
        let step = |action: &str| {
            steps
                .iter()
                .find(|s| s["action"] == action)
                .cloned()
                .unwrap_or(Value::Null)
        };
        let evaluated = step("bet_evaluated");
        let die = |v: &Value| v.as_u64().and_then(|d| u8::try_from(d).ok());
        Self {
            rng_value: step("randomness_derived")["rngValue"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            dice: step("dice_rolled")["dice"]
                .as_array()
                .map(|d| d.iter().map(|v| die(v).unwrap_or(u8::MAX)).collect())
                .unwrap_or_default(),
            won: evaluated["won"].as_bool(),
            payout: evaluated["payout"].as_str().map(str::to_owned),
        }
    }
}

/// Typed reads of the proof members, each failing with the member's name.
struct Fields<'a>(&'a Value);

impl Fields<'_> {
    fn str(&self, key: &str) -> String {
        self.0
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    }

    fn u64(&self, key: &str) -> Result<u64, String> {
        self.0
            .get(key)
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("{key} is missing or not a number"))
    }

    fn bytes(&self, key: &str) -> Result<Vec<u8>, String> {
        let s = self
            .0
            .get(key)
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{key} is missing"))?;
        hex::decode(s).map_err(|e| format!("{key} is not hex: {e}"))
    }

    fn hash(&self, key: &str) -> Result<Hash, String> {
        let b = self.bytes(key)?;
        b.try_into().map_err(|_| format!("{key} is not 32 bytes"))
    }

    fn hashes(&self, key: &str) -> Result<Vec<Hash>, String> {
        let items = self
            .0
            .get(key)
            .and_then(Value::as_array)
            .ok_or_else(|| format!("{key} is missing"))?;
        items
            .iter()
            .map(|v| {
                let b = hex::decode(v.as_str().unwrap_or_default())
                    .map_err(|e| format!("{key}: {e}"))?;
                b.try_into()
                    .map_err(|_| format!("{key}: an entry is not 32 bytes"))
            })
            .collect()
    }
}

/// The committed game from the proof's `bet` object.
fn new_game(bet: &Value) -> Result<NewGame, String> {
    let f = Fields(bet);
    let opt = |key: &str| bet.get(key).and_then(Value::as_str).map(str::to_owned);
    let game_id = opt("game_id").ok_or("bet.game_id is missing")?;
    let combo = match bet.get("combo") {
        Some(Value::Array(c)) if c.len() == 2 => {
            let d = |i: usize| c[i].as_u64().and_then(|v| u8::try_from(v).ok());
            Some([
                d(0).ok_or("bet.combo is not two dice")?,
                d(1).ok_or("bet.combo is not two dice")?,
            ])
        }
        Some(Value::Null) | None => None,
        Some(_) => return Err("bet.combo is not two dice".into()),
    };
    Ok(NewGame {
        game_id,
        request_id: String::new(),
        game: f.str("game"),
        bet_type: opt("bet_type"),
        target: bet
            .get("target")
            .and_then(Value::as_u64)
            .and_then(|t| u8::try_from(t).ok()),
        combo,
        amount: opt("amount"),
        player_id: f.str("player_id"),
        player_seed: opt("player_seed"),
        operator_key: f.str("operator_key"),
        created_at_ms: 0,
        leaf: Vec::new(),
        acceptance: None,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A server that answers `answers` in turn, one connection each, then stops.
    fn serve(answers: Vec<&'static str>) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for answer in answers {
                let (mut s, _) = listener.accept().unwrap();
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf);
                s.write_all(answer.as_bytes()).unwrap();
            }
        });
        url
    }

    #[test]
    fn a_busy_server_is_asked_again_as_its_retry_after_says() {
        let busy = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 0\r\nConnection: close\r\n\
                    Content-Length: 2\r\n\r\n{}";
        let ok = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\
                  Content-Length: 8\r\n\r\n{\"a\":1}\n";
        let url = serve(vec![busy, busy, ok]);
        let v = Http::new().unwrap().get(&format!("{url}/x")).unwrap();
        assert_eq!(v["a"], 1);
    }
}
