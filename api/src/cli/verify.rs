//! `vrs verify <game_id>`: fetches a game's verification data from a vrs server and recomputes
//! every step locally with the engine, ignoring the server's own `verified` flag and checks.
//! One line per step; exit 0 when all pass, 1 when any fails, 2 on usage or network errors.

use crate::commit::bet_leaf;
use crate::outcome;
use crate::store::NewGame;
use anyhow::{bail, Context};
use clap::Args;
use serde::Serialize;
use serde_json::Value;
use std::process::ExitCode;
use std::time::Duration;
use vrs_engine::epoch::{epoch_seed, genesis_output};
use vrs_engine::group::Modulus;
use vrs_engine::merkle::{self, Hash};
use vrs_engine::vdf;

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The game to verify: the game_id of a bet or of a raw RNG request.
    pub game_id: String,
    /// Base URL of the vrs server whose data is checked (another machine is fine: only the
    /// public API is used).
    #[arg(long, env = "VRS_SERVER", default_value = "http://127.0.0.1:8080")]
    pub server: String,
    /// Print the checks as a JSON object instead of a checklist.
    #[arg(long)]
    pub json: bool,
}

/// One recomputed step.
#[derive(Debug, Serialize)]
pub struct Step {
    pub name: &'static str,
    pub passed: bool,
    pub detail: String,
}

#[derive(Debug, Serialize)]
struct Report<'a> {
    game_id: &'a str,
    server: &'a str,
    verified: bool,
    steps: &'a [Step],
}

pub fn run(args: VerifyArgs) -> anyhow::Result<ExitCode> {
    let server = args.server.trim_end_matches('/');
    let url = format!("{server}/api/v1/verify/{}", args.game_id);
    let http = Http::new()?;
    let body = http.get(&url)?;
    let mut steps = recompute(&body)?;
    // After the inclusion steps: the chain link, which needs the previous epoch from the server.
    let at = steps.len().min(2);
    steps.insert(at, epoch_chain(&http, server, &body));
    let verified = steps.iter().all(|s| s.passed);
    if args.json {
        let report = Report {
            game_id: &args.game_id,
            server,
            verified,
            steps: &steps,
        };
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("game {} on {server}", args.game_id);
        for s in &steps {
            println!(
                "{} {:<17} {}",
                if s.passed { "ok  " } else { "FAIL" },
                s.name,
                s.detail
            );
        }
        match steps.iter().find(|s| !s.passed) {
            None => println!("verified: every step recomputed here"),
            Some(s) => println!("NOT verified: {} failed", s.name),
        }
    }
    Ok(if verified {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// A blocking JSON client over reqwest (HTTP and HTTPS), for the checking commands.
pub(super) struct Http {
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

    /// GETs `url` as JSON; a 404 says what was not found, anything else not 200 is an error.
    pub fn get(&self, url: &str) -> anyhow::Result<Value> {
        self.runtime.block_on(async {
            let resp = self
                .client
                .get(url)
                .send()
                .await
                .with_context(|| format!("{url}: no answer"))?;
            let status = resp.status();
            let text = resp
                .text()
                .await
                .with_context(|| format!("{url}: reading the answer"))?;
            if status == reqwest::StatusCode::NOT_FOUND {
                bail!("{url}: not found on this server (404; no such game or epoch): {text}");
            }
            if !status.is_success() {
                bail!("{url}: HTTP {status}: {text}");
            }
            serde_json::from_str(&text).with_context(|| format!("{url}: the answer is not JSON"))
        })
    }
}

/// The steps recomputed from a verification response. `Err` only when the response is not a
/// verification at all (a pending game, or the wrong shape): every wrong value is a failed step.
pub fn recompute(body: &Value) -> anyhow::Result<Vec<Step>> {
    let proof = body.get("proof").filter(|p| p.is_object()).context(
        "the answer has no proof object: the game is not resolved yet, or this is not a vrs server",
    )?;
    if proof.get("pool_served").and_then(Value::as_bool) == Some(true) {
        bail!("pool-served (instant) games are not checked by this version of vrs verify yet; use the server's /api/v1/verify and docs/PROTOCOL.md §14");
    }
    let p = Fields(proof);
    let mut steps = Vec::new();

    let modulus = Modulus::by_name(&p.str("modulus"));
    let game = new_game(proof.get("bet").unwrap_or(&Value::Null));
    let leaf = p.bytes("leaf");

    // 1. The leaf encodes the bet's fields.
    steps.push(step(
        "bet_leaf",
        match (&game, &leaf) {
            (Ok(g), Ok(l)) if bet_leaf(g) == *l => Ok("leaf bytes encode the bet's fields".into()),
            (Ok(_), Ok(_)) => Err("leaf bytes do not encode the bet's fields".into()),
            (Err(e), _) | (_, Err(e)) => Err(e.clone()),
        },
    ));

    // 2. The leaf is included under the bets root the epoch input committed.
    let bets_root = p.hash("bets_root");
    steps.push(step(
        "merkle_inclusion",
        (|| {
            let leaf = leaf.clone()?;
            let root = bets_root.clone()?;
            let index = p.u64("leaf_index")?;
            let size = p.u64("bet_count")?;
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

    // 3. The epoch input follows from the epoch, the previous output, the bets root and T.
    let t = p.u64("iterations");
    steps.push(step(
        "epoch_input",
        (|| {
            let m = modulus.as_ref().map_err(|e| e.to_string())?;
            let e = p.u64("vdfEpoch")?;
            let t = t.clone()?;
            let prev = m
                .decode("previous output", &p.bytes("previous_output")?)
                .map_err(|e| e.to_string())?;
            let seed = epoch_seed(m, e, &prev, &bets_root.clone()?, t);
            if m.encode(&m.hash_to_group(&seed)) == p.bytes("x")? {
                Ok(format!(
                    "x = hash_to_group(SHA-256(tag ‖ {e} ‖ y_prev ‖ bets_root ‖ {t}))"
                ))
            } else {
                Err("x does not follow from the epoch, previous output, bets root and T".into())
            }
        })(),
    ));

    // 4. The Wesolowski proof of y = x^(2^T).
    steps.push(step(
        "vdf_proof",
        (|| {
            let m = modulus.as_ref().map_err(|e| e.to_string())?;
            let t = t.clone()?;
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
    ));

    // 5. rngValue, the dice and the payout from y and the bet.
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
                    Ok(format!(
                        "won {:?}, payout {}",
                        r.won,
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
    Ok(steps)
}

/// The input's previous output is y of the previous epoch as the server publishes it (or the
/// genesis output for epoch 1): the server cannot show one history to this game and another
/// to the previous epoch's.
fn epoch_chain(http: &Http, server: &str, body: &Value) -> Step {
    let p = Fields(&body["proof"]);
    step(
        "epoch_chain",
        (|| {
            let e = p.u64("vdfEpoch")?;
            let m = Modulus::by_name(&p.str("modulus")).map_err(|e| e.to_string())?;
            let claimed = p.bytes("previous_output")?;
            let (source, prev) = if e <= 1 {
                (
                    "the genesis output".to_owned(),
                    m.encode(&genesis_output(&m)),
                )
            } else {
                let url = format!("{server}/api/v1/epochs/{}", e - 1);
                let epoch = http.get(&url).map_err(|err| format!("{err:#}"))?;
                (format!("y of epoch {}", e - 1), Fields(&epoch).bytes("y")?)
            };
            if claimed == prev {
                Ok(format!("previous output is {source}"))
            } else {
                Err(format!("previous output is not {source}"))
            }
        })(),
    )
}

fn step(name: &'static str, r: Result<String, String>) -> Step {
    let (passed, detail) = match r {
        Ok(d) => (true, d),
        Err(d) => (false, d),
    };
    Step {
        name,
        passed,
        detail,
    }
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
    })
}
