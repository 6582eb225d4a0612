//! The protocol-version-2 checks a verification adds on both paths: the game's signed
//! acceptance (docs/PROTOCOL.md §11, "Signed acceptance") and, for a pool-served game, its
//! binding to an epoch's bets tree (§14, "Binding served bets").

use super::{epoch_tree, VerifyCache};
use vrs_engine::merkle;
use vrs_protocol::acceptance::{self, AcceptanceDoc, Place};
use vrs_protocol::report::{check, Check, Verification};
use vrs_protocol::verification::{BetEpochDoc, Proof};
use vrs_store::{EpochStatus, GameRecord, Store};

/// The acceptance keys a store has published, and since when the first one was in use: a game
/// accepted from then on must be signed (so clearing a game's signature cannot pass it off as
/// a version-1 game).
#[derive(Debug, Default)]
pub struct PublishedKeys {
    pub keys: Vec<[u8; 32]>,
    pub signing_since_ms: Option<i64>,
}

impl PublishedKeys {
    pub async fn load(store: &dyn Store) -> anyhow::Result<Self> {
        let list = store.acceptance_keys().await?;
        Ok(Self {
            signing_since_ms: list.iter().map(|(_, at)| *at).min(),
            keys: list.into_iter().map(|(k, _)| k).collect(),
        })
    }

    fn signing_at(&self, at_ms: i64) -> bool {
        self.signing_since_ms.is_some_and(|since| at_ms >= since)
    }
}

/// Where the store says the game was accepted.
fn place_of(game: &GameRecord) -> Option<Place> {
    match (game.pool_index, game.epoch) {
        (Some(i), _) => Some(Place::Pool(i)),
        (None, Some(e)) => Some(Place::Epoch(e)),
        (None, None) => None,
    }
}

/// Adds the `acceptance` check (before `anchor_inclusion`, which [`crate::anchor::proof::attach`]
/// adds later) and the proof's `acceptance` and `bet_created_at_ms` members.
pub fn add_acceptance(v: &mut Verification, game: &GameRecord, keys: &PublishedKeys) {
    let g = &game.new;
    let place = place_of(game);
    let doc = match (place, g.acceptance) {
        (Some(p), Some(signed)) => Some(AcceptanceDoc::new(p, &g.leaf, g.created_at_ms, &signed)),
        _ => None,
    };
    let result = match (place, g.acceptance) {
        (_, None) if keys.signing_at(g.created_at_ms) => Err(format!(
            "no acceptance signature, yet the game was accepted at {} ms, when this service \
             already signed every acceptance",
            g.created_at_ms
        )),
        (_, None) => Ok("accepted before protocol version 2: not signed".to_owned()),
        (None, Some(_)) => Err("the game names neither an epoch nor a pool entry".to_owned()),
        (Some(p), Some(signed)) => {
            let message = acceptance::message(p, &merkle::leaf_hash(&g.leaf), g.created_at_ms);
            if !keys.keys.contains(&signed.public_key) {
                Err(format!(
                    "signed by {}, which is not a published acceptance key",
                    hex::encode(signed.public_key)
                ))
            } else {
                acceptance::verify(&signed, &message).map(|()| {
                    format!(
                        "Ed25519 signature by {} over the leaf hash, {} {} and the acceptance \
                         time {} ms",
                        hex::encode(signed.public_key),
                        p.name(),
                        p.number(),
                        g.created_at_ms
                    )
                })
            }
        }
    };
    check(&mut v.checks, "acceptance", result);
    v.proof_mut().set_acceptance(doc);
    v.seal();
}

/// Adds a pool-served game's `pool_bet_inclusion` check (after `pool_game_id`) once its bet
/// epoch has closed, and the proof's `bet_epoch` member. Says whether that is final (the bet
/// epoch's input committed its tree, or the game has no bet epoch).
pub async fn add_pool_binding(
    store: &dyn Store,
    cache: &VerifyCache,
    v: &mut Verification,
    game: &GameRecord,
    keys: &PublishedKeys,
) -> anyhow::Result<bool> {
    let g = &game.new;
    let (member, result) = match game.bet_epoch {
        None if keys.signing_at(g.created_at_ms) => (
            None,
            Some(Err(format!(
                "bound to no epoch, yet served at {} ms, when this service already bound every \
                 served bet",
                g.created_at_ms
            ))),
        ),
        None => (
            None,
            Some(Ok(
                "served before protocol version 2: bound by no epoch".to_owned()
            )),
        ),
        Some(e) => match store.epoch(e).await? {
            None => (
                Some(BetEpochDoc::short(e, "missing")),
                Some(Err(format!("its bet epoch {e} is missing"))),
            ),
            Some(rec) => match (&rec.status, &rec.input) {
                (EpochStatus::Open, _) | (_, None) => {
                    (Some(BetEpochDoc::short(e, "pending")), None)
                }
                (_, Some(input)) => {
                    let tree = epoch_tree(store, cache, &rec).await?;
                    let leaf_hash = merkle::leaf_hash(&g.leaf);
                    let position = tree.leaves().iter().position(|h| *h == leaf_hash);
                    let path = position.and_then(|i| tree.path(i)).unwrap_or_default();
                    let size = tree.len() as u64;
                    let result = match position {
                        None => Err(format!("the game's leaf is not in epoch {e}'s bets tree")),
                        Some(_) if tree.root() != input.bets_root => Err(format!(
                            "epoch {e}'s stored leaves do not hash to its bets root"
                        )),
                        Some(_) if input.bet_count != size => Err(format!(
                            "epoch {e} counts {} bets but has {size} leaves",
                            input.bet_count
                        )),
                        Some(i) => {
                            if merkle::verify_inclusion(
                                &leaf_hash,
                                i as u64,
                                size,
                                &path,
                                &input.bets_root,
                            ) {
                                Ok(format!(
                                    "leaf {i} of {size} under epoch {e}'s bets root {}, which \
                                     its input committed",
                                    hex::encode(input.bets_root)
                                ))
                            } else {
                                Err(format!("leaf {i} does not lead to epoch {e}'s bets root"))
                            }
                        }
                    };
                    let member = BetEpochDoc {
                        epoch: e,
                        status: "bound".into(),
                        leaf_index: Some(position.map(|i| i as u64)),
                        tree_size: Some(size),
                        audit_path: Some(path.iter().map(hex::encode).collect()),
                        bets_root: Some(hex::encode(input.bets_root)),
                    };
                    (Some(member), Some(result))
                }
            },
        },
    };
    let settled = match &member {
        None => true,
        Some(m) => m.status == "bound",
    };
    if let Some(result) = result {
        let mut one = Vec::new();
        check(&mut one, "pool_bet_inclusion", result);
        insert_after(&mut v.checks, "pool_game_id", one);
    }
    if let Proof::Pool(p) = v.proof_mut() {
        p.bet_epoch = Some(member);
    }
    v.seal();
    Ok(settled)
}

fn insert_after(checks: &mut Vec<Check>, name: &str, new: Vec<Check>) {
    let at = checks
        .iter()
        .position(|c| c.name == name)
        .map_or(checks.len(), |i| i + 1);
    checks.splice(at..at, new);
}
