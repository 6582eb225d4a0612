//! The protocol-version-2 steps of `vrs verify` (docs/PROTOCOL.md §11 and §14): `acceptance`
//! and `pool_bet_inclusion` for every game, and with `--acceptance FILE` the player's evidence:
//! a saved, signed acceptance checked against what the server stores and publishes now.

use super::{step, Fetch, Step, Verdict};
use crate::epoch_record as record;
use anyhow::Context;
use serde_json::Value;
use vrs_engine::merkle::{self, Hash};
use vrs_protocol::acceptance::{AcceptanceDoc, Place};
use vrs_protocol::commit::{parse_leaf, LEAF_FIELD_NAMES};
use vrs_protocol::epoch_group::{Group, SeedRule};

/// The operator's published keys (`GET /`), and since when the first was in use.
#[derive(Debug, Default)]
pub(super) struct Keys {
    keys: Vec<String>,
    signing_since_ms: Option<i64>,
}

impl Keys {
    /// A server without `GET /` publishes no key: every signature then fails.
    pub(super) fn fetch(fetch: &dyn Fetch, server: &str) -> anyhow::Result<Self> {
        let info = fetch.get_opt(&format!("{server}/"))?.unwrap_or(Value::Null);
        let mut keys = Vec::new();
        let mut since = None::<i64>;
        for k in info["acceptance_keys"].as_array().into_iter().flatten() {
            if let Some(pk) = k["public_key"].as_str() {
                keys.push(pk.to_ascii_lowercase());
            }
            // A key without its first time could have signed anything: from the start.
            let at = k["since_ms"].as_i64().unwrap_or(i64::MIN);
            since = Some(since.map_or(at, |s| s.min(at)));
        }
        Ok(Self {
            keys,
            signing_since_ms: since,
        })
    }

    fn published(&self, key: &str) -> bool {
        self.keys.iter().any(|k| k.eq_ignore_ascii_case(key))
    }

    fn signing_at(&self, at_ms: i64) -> bool {
        self.signing_since_ms.is_some_and(|s| at_ms >= s)
    }
}

/// Where a verification's proof says its game was accepted.
fn place_of(proof: &Value) -> Option<Place> {
    if proof["pool_served"].as_bool() == Some(true) {
        proof["pool_index"].as_u64().map(Place::Pool)
    } else {
        // A moved game was accepted into its own epoch, not the one it resolved with.
        proof["moved_from"]
            .as_u64()
            .or_else(|| proof["vdfEpoch"].as_u64())
            .map(Place::Epoch)
    }
}

/// The signature on its own, and its key among the published ones.
fn signature(doc: &AcceptanceDoc, keys: &Keys) -> Result<String, String> {
    doc.check_signature()?;
    if !keys.published(&doc.public_key) {
        return Err(format!(
            "signed by {}, which is not among the operator's acceptance keys (GET /)",
            doc.public_key
        ));
    }
    Ok(format!(
        "Ed25519 signature by published key {} over the leaf hash, {} and acceptance time {} ms",
        doc.public_key,
        describe(doc),
        doc.accepted_at_ms
    ))
}

fn describe(doc: &AcceptanceDoc) -> String {
    match doc.place() {
        Ok(Place::Epoch(e)) => format!("epoch {e}"),
        Ok(Place::Pool(i)) => format!("pool entry {i}"),
        Err(e) => e,
    }
}

/// The `acceptance` step of a verification: the proof's stored acceptance is valid and is the
/// game's (its leaf, place and time).
pub(super) fn acceptance_step(proof: &Value, keys: &Keys) -> Step {
    let created = proof["bet_created_at_ms"].as_i64();
    let result = match proof.get("acceptance") {
        None | Some(Value::Null) => match created {
            None if keys.signing_since_ms.is_some() => Err(
                "no acceptance signature, and no bet_created_at_ms to show the game came before \
                 the operator began signing"
                    .into(),
            ),
            Some(at) if keys.signing_at(at) => Err(format!(
                "no acceptance signature, yet the game was accepted at {at} ms, after the \
                 operator's first acceptance key was in use"
            )),
            _ => Ok("accepted before protocol version 2: not signed".to_owned()),
        },
        Some(raw) => match serde_json::from_value::<AcceptanceDoc>(raw.clone()) {
            Err(e) => Err(format!("the acceptance object does not parse: {e}")),
            Ok(doc) => signature(&doc, keys).and_then(|d| {
                if Some(doc.leaf.to_ascii_lowercase())
                    != proof["leaf"].as_str().map(str::to_ascii_lowercase)
                {
                    Err("the signed leaf is not the game's leaf".into())
                } else if doc.place().ok() != place_of(proof) {
                    Err(format!(
                        "signed for {}, not where the game is",
                        describe(&doc)
                    ))
                } else if created.is_some_and(|c| c != doc.accepted_at_ms) {
                    Err("the signed acceptance time is not the game's".into())
                } else {
                    Ok(d)
                }
            }),
        },
    };
    step("acceptance", result)
}

/// An epoch's tree as published: its leaf hashes, bets root and count, and (once resolved) the
/// full record to check that the root is bound into x and the VDF.
struct PublishedTree {
    status: String,
    leaf_hashes: Vec<Hash>,
    bets_root: Option<Hash>,
    bet_count: u64,
    /// The full record once resolved (`Err`: resolved, yet not a decodable record).
    resolved: Option<Result<record::Epoch, String>>,
}

fn fetch_tree(fetch: &dyn Fetch, server: &str, e: u64) -> anyhow::Result<Option<PublishedTree>> {
    let Some(body) = fetch.get_opt(&format!("{server}/api/v1/epochs/{e}"))? else {
        return Ok(None);
    };
    let hash = |s: &str| -> Option<Hash> { hex::decode(s).ok()?.try_into().ok() };
    let leaf_hashes = body["leaf_hashes"]
        .as_array()
        .map(|a| a.iter().filter_map(|h| h.as_str().and_then(hash)).collect())
        .unwrap_or_default();
    Ok(Some(PublishedTree {
        status: body["status"].as_str().unwrap_or_default().to_owned(),
        leaf_hashes,
        bets_root: body["bets_root"].as_str().and_then(hash),
        bet_count: body["bet_count"].as_u64().unwrap_or(0),
        resolved: (body["status"] == "resolved")
            .then(|| record::decode(&body).map_err(|e| format!("{e:#}"))),
    }))
}

/// Whether `leaf_hash` is in epoch `e`'s published, committed tree: its position, and the
/// tree adds up (leaf hashes → bets root → x_e → y_e when resolved).
fn in_tree(tree: &PublishedTree, e: u64, leaf_hash: &Hash, group: &str) -> Verdict {
    let Some(root) = tree.bets_root.filter(|_| tree.status != "open") else {
        return Verdict::Pending(format!(
            "epoch {e} is still open: its tree is not fixed yet"
        ));
    };
    let n = tree.leaf_hashes.len();
    if merkle::root(&tree.leaf_hashes) != root || n as u64 != tree.bet_count {
        return Verdict::Fail(format!(
            "epoch {e}'s {n} published leaf hashes do not give its bets root of {} bets",
            tree.bet_count
        ));
    }
    let Some(i) = tree.leaf_hashes.iter().position(|h| h == leaf_hash) else {
        return Verdict::Fail(format!(
            "the bet is not in epoch {e}'s committed tree ({n} leaves): dropped or altered \
             after it was accepted"
        ));
    };
    // Only a resolved epoch shows that its tree is the one its x and y commit to.
    let bound = match &tree.resolved {
        Some(Ok(rec)) => match bound_into_output(rec, group) {
            Ok(d) => d,
            Err(err) => return Verdict::Fail(format!("epoch {e}: {err}")),
        },
        Some(Err(err)) => return Verdict::Fail(format!("epoch {e}'s record: {err}")),
        None => {
            return Verdict::Pending(format!(
                "leaf {i} of {n} of epoch {e}'s published tree; bound once the epoch resolves \
                 (its x and y then commit to that tree)"
            ))
        }
    };
    Verdict::Pass(format!(
        "leaf {i} of {n} under epoch {e}'s bets root {}{bound}",
        hex::encode(root)
    ))
}

/// The bets root is inside x_e (from the epoch's committed fields) and y_e passes its proof.
fn bound_into_output(rec: &record::Epoch, group: &str) -> Result<String, String> {
    let group = Group::by_name(group).map_err(|e| format!("{e:#}"))?;
    let rule = match &rec.committed {
        Some((timing, nonce)) => SeedRule::V2 { nonce, timing },
        None => SeedRule::V1 {
            iterations: rec.iterations,
        },
    };
    let (seed, x) = group
        .input_for(rec.number, &rec.previous_output, &rec.bets_root, &rule)
        .map_err(|e| format!("{e:#}"))?;
    if x != rec.x {
        return Err("x does not follow from the epoch's committed fields".into());
    }
    group.verify_proof(&seed, &rec.x, &rec.y, rec.iterations, &rec.l, &rec.pi)?;
    Ok(", which its x commits to and its Wesolowski proof verifies".into())
}

/// The `pool_bet_inclusion` step of a pool-served game: its leaf is in its bet epoch's tree.
pub(super) fn pool_bet_step(
    fetch: &dyn Fetch,
    server: &str,
    proof: &Value,
    keys: &Keys,
    group: &str,
) -> anyhow::Result<Step> {
    let name = "pool_bet_inclusion";
    let b = &proof["bet_epoch"];
    let Some(e) = b["epoch"].as_u64() else {
        return Ok(match proof["bet_created_at_ms"].as_i64() {
            Some(at) if keys.signing_at(at) => step(
                name,
                Err(format!(
                    "bound to no epoch, yet served at {at} ms, after the operator began binding \
                     served bets"
                )),
            ),
            _ => step(
                name,
                Ok("served before protocol version 2: bound by no epoch".into()),
            ),
        });
    };
    // The leaf of the bet the outcome was recomputed from (`bet`), not the server's copy.
    let leaf = match super::new_game(&proof["bet"]) {
        Ok(g) => vrs_protocol::commit::bet_leaf(&g),
        Err(e) => return Ok(step(name, Err(format!("the proof's bet: {e}")))),
    };
    if proof["leaf"].as_str().map(str::to_ascii_lowercase) != Some(hex::encode(&leaf)) {
        return Ok(step(
            name,
            Err("the proof's leaf does not encode its bet".into()),
        ));
    }
    let leaf_hash = merkle::leaf_hash(&leaf);
    let verdict = match fetch_tree(fetch, server, e)? {
        None => Verdict::Fail(format!("its bet epoch {e} is not published")),
        Some(tree) => match in_tree(&tree, e, &leaf_hash, group) {
            Verdict::Pass(d)
                if b["leaf_index"]
                    .as_u64()
                    .is_some_and(|i| tree.leaf_hashes.get(i as usize) != Some(&leaf_hash)) =>
            {
                Verdict::Fail(format!(
                    "bet_epoch.leaf_index is not the leaf's position ({d})"
                ))
            }
            v => v,
        },
    };
    Ok(Step::new(name, verdict))
}

/// A saved acceptance, as the player kept it: a 202 or instant 200 response (its `acceptance`
/// member), or the acceptance object alone.
pub(super) struct Saved {
    pub game_id: String,
    pub doc: AcceptanceDoc,
}

pub(super) fn read_saved(path: &std::path::Path) -> anyhow::Result<Saved> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the saved acceptance {}", path.display()))?;
    let v: Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let raw = match v.get("acceptance") {
        Some(a) => a.clone(),
        None if v.get("signature").is_some() => v.clone(),
        None => anyhow::bail!(
            "{} has no acceptance object: save the whole 202 (or instant 200) response of the bet",
            path.display()
        ),
    };
    let doc: AcceptanceDoc = serde_json::from_value(raw)
        .with_context(|| format!("{}: the acceptance object does not parse", path.display()))?;
    let leaf = hex::decode(&doc.leaf).context("the acceptance's leaf is not hex")?;
    let fields = parse_leaf(&leaf).map_err(|e| anyhow::anyhow!("the signed leaf: {e}"))?;
    let game_id = fields[0].clone();
    if let Some(id) = v.get("game_id").and_then(Value::as_str) {
        if id != game_id {
            anyhow::bail!("the response names game {id}, but its acceptance signs game {game_id}");
        }
    }
    Ok(Saved { game_id, doc })
}

/// The player's evidence steps: the saved acceptance is the operator's signature, the server
/// still has the game exactly as signed, and the signed bet is in its epoch's committed tree.
/// Returns the steps and the server's verification when it has one (to check the game fully).
pub(super) fn evidence_steps(
    fetch: &dyn Fetch,
    server: &str,
    saved: &Saved,
    keys: &Keys,
    group: &str,
) -> anyhow::Result<(Vec<Step>, Option<Value>)> {
    let doc = &saved.doc;
    let id = &saved.game_id;
    let mut steps = vec![step("acceptance_signature", signature(doc, keys))];
    let place = doc
        .place()
        .map_err(|e| anyhow::anyhow!("the saved acceptance: {e}"))?;
    let what = format!(
        "the bet the operator signed as accepted into {} at {} ms",
        describe(doc),
        doc.accepted_at_ms
    );
    let body = fetch.get_opt(&format!("{server}/api/v1/verify/{id}"))?;
    let proof = body
        .as_ref()
        .and_then(|b| b.get("proof"))
        .filter(|p| p.is_object());
    let stored = match (&body, proof) {
        (None, _) => Verdict::Fail(format!("the server has no game {id}: {what} was removed")),
        (Some(b), None) => match (place, b["resolves_at_epoch"].as_u64()) {
            (Place::Epoch(e), Some(at)) if at != e => Verdict::Fail(format!(
                "the server has game {id} in epoch {at}, not epoch {e} as signed"
            )),
            _ => Verdict::Pending(format!(
                "game {id} is stored and pending; its fields are shown once it resolves"
            )),
        },
        (Some(_), Some(p)) => stored_as_signed(p, doc, &what),
    };
    steps.push(Step::new("acceptance_stored", stored));
    // Where the signed leaf must be: the signed epoch, or a pool game's bet epoch.
    let tree_epoch = match place {
        Place::Epoch(e) => Some(e),
        Place::Pool(_) => proof.and_then(|p| p["bet_epoch"]["epoch"].as_u64()),
    };
    if let Some(e) = tree_epoch {
        let leaf_hash: Hash = hex::decode(&doc.leaf_hash)
            .ok()
            .and_then(|h| h.try_into().ok())
            .context("the acceptance's leaf_hash is not 64 hex digits")?;
        let verdict = match fetch_tree(fetch, server, e)? {
            None => Verdict::Fail(format!("epoch {e} is not published")),
            Some(tree) => in_tree(&tree, e, &leaf_hash, group),
        };
        steps.push(Step::new("acceptance_in_tree", verdict));
    }
    Ok((
        steps,
        body.filter(|b| b.get("proof").is_some_and(Value::is_object)),
    ))
}

/// The stored game against the signed leaf: the same bytes, place and time, or which field
/// changed.
fn stored_as_signed(proof: &Value, doc: &AcceptanceDoc, what: &str) -> Verdict {
    let stored_leaf = proof["leaf"]
        .as_str()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if stored_leaf != doc.leaf.to_ascii_lowercase() {
        let signed = hex::decode(&doc.leaf)
            .ok()
            .and_then(|l| parse_leaf(&l).ok());
        let now = hex::decode(&stored_leaf)
            .ok()
            .and_then(|l| parse_leaf(&l).ok());
        let changes = match (signed, now) {
            (Some(a), Some(b)) => LEAF_FIELD_NAMES
                .iter()
                .zip(a.iter().zip(&b))
                .filter(|(_, (x, y))| x != y)
                .map(|(n, (x, y))| format!("{n} signed {x:?}, stored {y:?}"))
                .collect::<Vec<_>>()
                .join("; "),
            _ => "the stored leaf does not parse".to_owned(),
        };
        return Verdict::Fail(format!("{what} is stored altered: {changes}"));
    }
    if doc.place().ok() != place_of(proof) {
        return Verdict::Fail(format!("{what} is stored elsewhere"));
    }
    if proof["bet_created_at_ms"]
        .as_i64()
        .is_some_and(|at| at != doc.accepted_at_ms)
    {
        return Verdict::Fail(format!("{what} is stored with another acceptance time"));
    }
    Verdict::Pass("the server stores the game exactly as signed".into())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn tree(
        status: &str,
        resolved: Option<Result<record::Epoch, String>>,
    ) -> (PublishedTree, Hash) {
        let leaves: Vec<Hash> = [b"a", b"b", b"c"]
            .iter()
            .map(|l| merkle::leaf_hash(*l))
            .collect();
        let t = PublishedTree {
            status: status.into(),
            bets_root: Some(merkle::root(&leaves)),
            bet_count: 3,
            leaf_hashes: leaves.clone(),
            resolved,
        };
        (t, leaves[1])
    }

    #[test]
    fn a_tree_binds_only_once_its_epoch_resolved() {
        let pending = |v: Verdict| matches!(v, Verdict::Pending(_));
        let failed = |v: Verdict| matches!(v, Verdict::Fail(_));
        let (open, leaf) = tree("open", None);
        assert!(pending(in_tree(&open, 5, &leaf, "test512")));
        // Closed, or claiming to be, without the output that commits to the tree: not bound.
        let (closed, leaf) = tree("closed", None);
        assert!(pending(in_tree(&closed, 5, &leaf, "test512")));
        let (bad, leaf) = tree("resolved", Some(Err("no y".into())));
        assert!(failed(in_tree(&bad, 5, &leaf, "test512")));
        let (closed, _) = tree("closed", None);
        assert!(failed(in_tree(
            &closed,
            5,
            &merkle::leaf_hash(b"z"),
            "test512"
        )));
        let (mut lying, leaf) = tree("closed", None);
        lying.bet_count = 4;
        assert!(failed(in_tree(&lying, 5, &leaf, "test512")));
    }

    #[test]
    fn unsigned_games_pass_only_from_before_signing() {
        let keys = |since: Option<i64>| Keys {
            keys: vec!["00".repeat(32)],
            signing_since_ms: since,
        };
        let proof = |created: Option<i64>| serde_json::json!({"acceptance": null, "bet_created_at_ms": created, "vdfEpoch": 1});
        assert!(acceptance_step(&proof(Some(5)), &keys(Some(10))).passed);
        assert!(!acceptance_step(&proof(Some(10)), &keys(Some(10))).passed);
        assert!(!acceptance_step(&proof(None), &keys(Some(10))).passed);
        assert!(acceptance_step(&proof(None), &Keys::default()).passed);
    }
}
