//! What both kinds of game share in their verification: the outcome recomputed from the
//! output (rngValue, dice, payout), the result document, the interface's proof members and the
//! replay steps 3 to 5.

use vrs_protocol::games::{DERIVATION, DICE_DERIVATION};
use vrs_protocol::outcome::{self, Outcome};
use vrs_protocol::report::{check, Check};
use vrs_protocol::verification::{
    BetEvaluated, BetMembers, DiceRolled, GameResult, InterfaceMembers, OutcomeDoc, Proof,
    RandomnessDerived, ReplayStep, ResultMembers, RngMembers,
};
use vrs_store::GameRecord;

/// The stored resolution, the outcome recomputed from `y`, and the `rng_value`, `dice` and
/// `payout` checks comparing them.
pub(crate) fn outcome_checks(
    checks: &mut Vec<Check>,
    y: &[u8],
    game: &GameRecord,
) -> (vrs_store::GameResolution, Result<Outcome, String>) {
    let g = &game.new;
    let stored = game
        .resolution
        .clone()
        .unwrap_or_else(|| vrs_store::GameResolution {
            game_id: g.game_id.clone(),
            rng_value: String::new(),
            dice: vec![],
            won: None,
            payout: None,
        });
    let derived = outcome::derive(y, g);
    match &derived {
        Ok(o) => {
            let again = o.resolution(&g.game_id);
            check(checks, "rng_value", {
                if again.rng_value == stored.rng_value {
                    Ok("HMAC-SHA256(y, game_id ‖ player_seed) matches".into())
                } else {
                    Err(format!(
                        "recomputed {} but stored {}",
                        again.rng_value, stored.rng_value
                    ))
                }
            });
            check(checks, "dice", {
                if again.dice == stored.dice {
                    Ok(format!("dice {:?}", again.dice))
                } else {
                    Err(format!(
                        "recomputed {:?} but stored {:?}",
                        again.dice, stored.dice
                    ))
                }
            });
            check(checks, "payout", {
                if again.won == stored.won && again.payout == stored.payout {
                    Ok(match &o.bet {
                        Some((_, _, s)) => s.rule.clone(),
                        None => "raw RNG: no bet".into(),
                    })
                } else {
                    Err(format!(
                        "recomputed won {:?} payout {:?} but stored {:?} {:?}",
                        again.won, again.payout, stored.won, stored.payout
                    ))
                }
            });
        }
        Err(msg) => check(checks, "rng_value", Err(msg.clone())),
    }
    (stored, derived)
}

/// The interface's proof members (section 2.9): the epoch, rngValue and the derivation text;
/// [`attach`] adds the anchor members.
pub(crate) fn interface_members(vdf_epoch: u64, rng_value: &str) -> InterfaceMembers {
    InterfaceMembers {
        vdf_epoch,
        rng_value: rng_value.to_owned(),
        derivation: DERIVATION.to_owned(),
    }
}

/// The result object of a resolved game; `y` is the output it was derived from (the epoch's,
/// or a pool entry's).
pub(crate) fn game_result(
    game: &GameRecord,
    y: Option<String>,
    stored: &vrs_store::GameResolution,
    derived: Option<&Outcome>,
    proof: Proof,
) -> GameResult {
    let g = &game.new;
    let members = if g.game == "rng" {
        ResultMembers::Rng(RngMembers {
            request_id: g.request_id.clone(),
            client_seed: g.player_seed.clone(),
            random: stored.rng_value.clone(),
        })
    } else {
        ResultMembers::Bet(Box::new(BetMembers {
            bet_id: g.request_id.clone(),
            bet_type: g.bet_type.clone(),
            target: g.target,
            combo: g.combo,
            amount: g.amount.clone(),
            player_id: g.player_id.clone(),
            player_seed: g.player_seed.clone(),
            operator_key: g.operator_key.clone(),
            outcome: OutcomeDoc::of(&stored.dice),
            won: stored.won,
            payout: stored.payout.clone(),
            rule: derived
                .and_then(|d| d.bet.as_ref())
                .map(|(_, _, s)| s.rule.clone()),
        }))
    };
    GameResult {
        game_id: g.game_id.clone(),
        game: g.game.clone(),
        epoch: game.epoch,
        rng_value: stored.rng_value.clone(),
        entropy: y,
        resolved_at: game.resolved_at_ms.map(|ms| ms / 1000),
        verify_url: format!("/api/v1/verify/{}", g.game_id),
        verify_page: format!("/verify?game={}", g.game_id),
        result_hash: hex::encode(vrs_protocol::commit::result_hash(g, stored)),
        members,
        pool_served: None,
        pool_index: None,
        verified: false,
        proof,
    }
}

/// Replay steps 3 to 5, the same for every game: rngValue from the key y, the dice, the bet.
pub(crate) fn outcome_steps(
    game: &GameRecord,
    y_hex: &str,
    stored: &vrs_store::GameResolution,
    derived: Option<&Outcome>,
) -> Vec<ReplayStep> {
    let g = &game.new;
    let seed = g.player_seed.clone().unwrap_or_default();
    let mut message = g.game_id.as_bytes().to_vec();
    message.extend_from_slice(seed.as_bytes());
    let roll = derived.and_then(|d| d.roll.as_ref());
    let settlement = derived.and_then(|d| d.bet.as_ref());
    let raw = g.game == "rng";
    vec![
        ReplayStep::RandomnessDerived(Box::new(RandomnessDerived {
            step: 3,
            action: "randomness_derived".into(),
            formula: DERIVATION.into(),
            key: y_hex.to_owned(),
            message: hex::encode(&message),
            game_id: g.game_id.clone(),
            player_seed: g.player_seed.clone(),
            rng_value: stored.rng_value.clone(),
        })),
        ReplayStep::DiceRolled(Box::new(DiceRolled {
            step: 4,
            action: "dice_rolled".into(),
            rule: DICE_DERIVATION.into(),
            dice: stored.dice.clone(),
            bytes_used: roll.map(|r| hex::encode(&r.bytes_used)),
            skipped: roll.map(|r| r.skipped as u64),
            hmac_blocks: roll.map(|r| r.blocks),
            note: raw.then(|| "raw RNG request: no dice are rolled".into()),
        })),
        ReplayStep::BetEvaluated(Box::new(BetEvaluated {
            step: 5,
            action: "bet_evaluated".into(),
            bet_type: g.bet_type.clone(),
            target: g.target,
            combo: g.combo,
            amount: g.amount.clone(),
            total: (!stored.dice.is_empty())
                .then(|| stored.dice.iter().map(|&d| u32::from(d)).sum()),
            won: stored.won,
            payout: stored.payout.clone(),
            rule: settlement.map(|s| s.2.rule.clone()),
            note: raw.then(|| "raw RNG request: nothing to evaluate".into()),
        })),
    ]
}
