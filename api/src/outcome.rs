//! From an epoch's output to a game's outcome: the one code path that both resolution (when
//! the epoch's VDF finishes) and verification (at read time) run, so they cannot disagree.

use crate::games::{
    rng_value, roll_dice, Amount, BetSpec, DiceBet, DiceRoll, Game, Settlement, SicboBet,
};
use crate::store::{GameResolution, NewGame};

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
    let bet_type = g.bet_type.as_deref().unwrap_or("");
    let target = |lo: u8, hi: u8| g.target.filter(|t| (lo..=hi).contains(t)).ok_or_else(bad);
    Ok(Some(match game {
        Game::Rng => return Ok(None),
        Game::Dice => BetSpec::Dice(match bet_type {
            "exact" => DiceBet::Exact(target(2, 12)?),
            "over7" => DiceBet::Over7,
            "under7" => DiceBet::Under7,
            "odd" => DiceBet::Odd,
            "even" => DiceBet::Even,
            _ => return Err(bad()),
        }),
        Game::Sicbo => BetSpec::Sicbo(match bet_type {
            "big" => SicboBet::Big,
            "small" => SicboBet::Small,
            "odd" => SicboBet::Odd,
            "even" => SicboBet::Even,
            "total" => SicboBet::Total(target(4, 17)?),
            "single" => SicboBet::Single(target(1, 6)?),
            "double" => SicboBet::Double(target(1, 6)?),
            "triple" => SicboBet::Triple(target(1, 6)?),
            "anyTriple" => SicboBet::AnyTriple,
            "combo" => match g.combo {
                Some([a, b]) if a != b && (1..=6).contains(&a) && (1..=6).contains(&b) => {
                    SicboBet::Combo(a.min(b), a.max(b))
                }
                _ => return Err(bad()),
            },
            _ => return Err(bad()),
        }),
    }))
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
