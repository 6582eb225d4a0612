//! The bet use case (docs/PROTOCOL.md §11, §14, §15): a validated bet or raw RNG request
//! becomes a game, signed and committed into the open epoch, or served at once from the pool.
//! HTTP hands it a [`PlacedBet`] and turns what comes back into a response.

use std::sync::Arc;
use std::time::{Duration, Instant};
use vrs_engine::pool;
use vrs_observe::clock::now_ms;
use vrs_observe::metrics;
use vrs_protocol::acceptance::{AcceptanceSigner, Place, Signed};
use vrs_protocol::commit::bet_leaf;
use vrs_protocol::games::{self, Game, PlacedBet};
use vrs_protocol::outcome;
use vrs_store::{BuildInstant, GameRecord, NewGame, Store, StoreError};

/// Longest a game waits for the next epoch to take games when the open one has passed its
/// deadline: the close is a few milliseconds away unless no leader runs the chain.
const OVERDUE_WAIT: Duration = Duration::from_secs(2);

/// A game committed into the open epoch: the epoch, the game as stored (its leaf and
/// acceptance time) and the operator's signature the player keeps.
#[derive(Clone, Debug)]
pub struct Accepted {
    pub epoch: u64,
    pub game: NewGame,
    pub signed: Signed,
}

/// Where a bet went.
#[derive(Debug)]
pub enum Placement {
    /// Served from the pool and resolved at once.
    Instant(Box<GameRecord>),
    /// Committed into an epoch; resolved when it does.
    Epoch(Box<Accepted>),
}

/// Places `bet` on `game`: from the pool when `instant` and an entry is there, otherwise into
/// the open epoch. The path depends on the request (and the operator's default) only, never on
/// an outcome (docs/PROTOCOL.md §15).
pub async fn place(
    store: &dyn Store,
    signer: &Arc<AcceptanceSigner>,
    game: Game,
    bet: PlacedBet,
    instant: bool,
) -> Result<Placement, StoreError> {
    let new = NewGame {
        bet_type: Some(bet.spec.bet_type().to_owned()),
        target: bet.spec.target(),
        combo: bet.spec.combo(),
        amount: Some(bet.amount.to_string()),
        ..arriving(game, bet.player_id, bet.player_seed, bet.operator_key)
    };
    if instant {
        if let Some(served) = serve_from_pool(store, signer, &new).await? {
            let m = metrics::global();
            m.bets_accepted.with(&[game.name(), "instant"]).inc();
            m.bets_resolved.with(&[game.name(), "instant"]).inc();
            return Ok(Placement::Instant(Box::new(served)));
        }
    }
    let accepted = commit(store, signer, new).await?;
    metrics::global()
        .bets_accepted
        .with(&[game.name(), "epoch"])
        .inc();
    Ok(Placement::Epoch(Box::new(accepted)))
}

/// Commits a raw RNG request (docs/PROTOCOL.md §12) with the player's `client_seed`.
pub async fn request_rng(
    store: &dyn Store,
    signer: &Arc<AcceptanceSigner>,
    client_seed: Option<String>,
) -> Result<Accepted, StoreError> {
    let new = arriving(
        Game::Rng,
        games::DEFAULT_PLAYER_ID.to_owned(),
        client_seed,
        games::DEFAULT_OPERATOR_KEY.to_owned(),
    );
    let accepted = commit(store, signer, new).await?;
    metrics::global()
        .bets_accepted
        .with(&[Game::Rng.name(), "epoch"])
        .inc();
    Ok(accepted)
}

/// A game arriving now, with fresh ids and no bet: its leaf and acceptance come when it is
/// committed or served.
fn arriving(
    game: Game,
    player_id: String,
    player_seed: Option<String>,
    operator_key: String,
) -> NewGame {
    let now = now_ms();
    NewGame {
        game_id: time_ordered_id(now),
        request_id: time_ordered_id(now),
        game: game.name().to_owned(),
        bet_type: None,
        target: None,
        combo: None,
        amount: None,
        player_id,
        player_seed,
        operator_key,
        created_at_ms: now,
        leaf: Vec::new(),
        acceptance: None,
    }
}

/// A game or request id: 32 lowercase hex digits, the arrival time in Unix milliseconds (48
/// bits, 12 digits), then 80 bits from the operating system's CSPRNG. Ids that grow with time
/// keep the store's indexes on them appending at one end, so their working set stays small
/// however many games are stored (random ids touch a random page of each index per bet:
/// docs/PERFORMANCE.md, "PostgreSQL soak"). 80 random bits keep them unguessable.
fn time_ordered_id(now_ms: i64) -> String {
    use rand::RngCore;
    let mut b = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut b[6..]);
    let ms = u64::try_from(now_ms).unwrap_or(0).to_be_bytes();
    b[..6].copy_from_slice(&ms[2..]);
    hex::encode(b)
}

/// Commits `game` into the open epoch, signed; a game that arrives between an epoch's deadline
/// and its close waits for the next epoch instead of being refused.
async fn commit(
    store: &dyn Store,
    signer: &Arc<AcceptanceSigner>,
    mut game: NewGame,
) -> Result<Accepted, StoreError> {
    game.leaf = bet_leaf(&game);
    let give_up = Instant::now() + OVERDUE_WAIT;
    loop {
        match store.insert_game(game.clone(), signer).await {
            Err(StoreError::EpochOverdue(_)) if Instant::now() < give_up => {
                tokio::time::sleep(Duration::from_millis(5)).await;
                // Accepted when it is committed, into the epoch open then.
                game.created_at_ms = now_ms();
            }
            Ok((epoch, signed)) => {
                return Ok(Accepted {
                    epoch,
                    game,
                    signed,
                })
            }
            Err(e) => return Err(e),
        }
    }
}

/// Serves the bet from the pool, bound to the open epoch; like an epoch-path bet it waits for
/// the next epoch when the open one is past its deadline. `None`: no entry for it.
async fn serve_from_pool(
    store: &dyn Store,
    signer: &Arc<AcceptanceSigner>,
    bet: &NewGame,
) -> Result<Option<GameRecord>, StoreError> {
    let give_up = Instant::now() + OVERDUE_WAIT;
    let mut bet = bet.clone();
    loop {
        let build = instant_builder(&bet, Arc::clone(signer));
        match store.serve_instant(build).await {
            Err(StoreError::EpochOverdue(_)) if Instant::now() < give_up => {
                tokio::time::sleep(Duration::from_millis(5)).await;
                bet.created_at_ms = now_ms();
            }
            other => return other,
        }
    }
}

/// Makes a pool-served game from the bet and the entry the store hands it: the game id is
/// the entry's (docs/PROTOCOL.md §14), the outcome derives from the entry's y, and the
/// acceptance is signed for the entry.
fn instant_builder(bet: &NewGame, signer: Arc<AcceptanceSigner>) -> BuildInstant {
    let template = bet.clone();
    Box::new(move |entry: &pool::Entry| {
        let mut g = template.clone();
        g.game_id = pool::game_id(entry.index, &entry.y);
        g.leaf = bet_leaf(&g);
        g.acceptance = Some(signer.sign(Place::Pool(entry.index), &g.leaf, g.created_at_ms));
        let o = outcome::derive(&entry.y, &g)?;
        let resolution = o.resolution(&g.game_id);
        Ok((g, resolution))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_lead_with_the_arrival_time_and_end_random() {
        let now = 1_795_000_000_123;
        let (a, b) = (time_ordered_id(now), time_ordered_id(now));
        assert_eq!(a.len(), 32);
        assert!(a
            .bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)));
        assert_eq!(&a[..12], format!("{now:012x}"));
        assert_eq!(a[..12], b[..12]);
        assert_ne!(a[12..], b[12..], "80 random bits");
        // Later arrivals sort after earlier ones, as text, which is what the indexes compare.
        assert!(time_ordered_id(now + 1) > a);
        assert!(time_ordered_id(now + 1) > time_ordered_id(now - 1));
    }
}
