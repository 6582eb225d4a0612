//! From an epoch's output to a game's outcome: the one code path that both resolution (when
//! the epoch's VDF finishes) and verification (at read time) run, so they cannot disagree.

use crate::games::{rng_value, roll_dice, Amount, BetSpec, DiceRoll, Game, Settlement};
use crate::record::{GameResolution, NewGame};

/// Everything derived for one game from y.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub rng_value: [u8; 32],
    /// The dice and the bytes they came from; None for raw RNG.
    pub roll: Option<DiceRoll>,
    pub bet: Option<(BetSpec, Amount, Settlement)>,
}

impl Outcome {
    pub fn resolution(&self, game_id: &str) -> GameResolution {
        GameResolution {
            game_id: game_id.to_owned(),
            rng_value: hex::encode(self.rng_value),
            dice: self
                .roll
                .as_ref()
                .map(|r| r.dice.clone())
                .unwrap_or_default(),
            won: self.bet.as_ref().map(|b| b.2.won),
            payout: self.bet.as_ref().map(|b| b.2.payout.to_string()),
        }
    }
}

/// The typed bet of a stored game, or None for raw RNG; Err when the stored fields do not
/// name a valid bet (which the API never stores).
pub fn bet_spec(g: &NewGame) -> Result<Option<BetSpec>, String> {
    let bad = || {
        format!(
            "stored game {} has no valid bet: {} {:?} target {:?} combo {:?}",
            g.game_id, g.game, g.bet_type, g.target, g.combo
        )
    };
    let game = Game::parse(&g.game).ok_or_else(bad)?;
    if game == Game::Rng {
        return Ok(None);
    }
    let bet_type = g.bet_type.as_deref().unwrap_or("");
    BetSpec::from_stored(game, bet_type, g.target, g.combo)
        .map(Some)
        .ok_or_else(bad)
}

/// Derives rngValue, dice and settlement of `g` from the epoch output `y` (fixed-width bytes).
pub fn derive(y: &[u8], g: &NewGame) -> Result<Outcome, String> {
    let rng = rng_value(y, &g.game_id, g.player_seed.as_deref().unwrap_or(""));
    let Some(spec) = bet_spec(g)? else {
        return Ok(Outcome {
            rng_value: rng,
            roll: None,
            bet: None,
        });
    };
    let amount: Amount = g
        .amount
        .as_deref()
        .unwrap_or("")
        .parse()
        .map_err(|_| format!("stored game {} has a bad amount {:?}", g.game_id, g.amount))?;
    let roll = roll_dice(&rng, spec.dice_count());
    let settlement = spec.settle(amount, &roll.dice);
    Ok(Outcome {
        rng_value: rng,
        roll: Some(roll),
        bet: Some((spec, amount, settlement)),
    })
}
