//! The game rules, as pure functions: no HTTP, no store, no clock.
//!
//! Everything a player needs to check a result is here and in `docs/GAMES.md`: how `rngValue`
//! is derived from the epoch's VDF output ([`rng_value`]), how dice are drawn from it
//! ([`roll_dice`]), and how each bet is settled ([`BetSpec::settle`]). Money is exact
//! ([`Amount`], whole cents), so every payout can be recomputed to the cent.

mod amount;
mod bet;
mod dice;
mod rng;
mod settlement;
mod sicbo;

pub use amount::Amount;
pub use bet::{
    example, parse_bet, valid_bet_types, BetError, BetSpec, Limits, PlacedBet, DEFAULT_AMOUNT,
    DEFAULT_OPERATOR_KEY, DEFAULT_PLAYER_ID, MAX_OPERATOR_KEY_CHARS, MAX_PLAYER_ID_CHARS,
    MAX_PLAYER_SEED_CHARS,
};
pub use dice::{DiceBet, DICE_BET_TYPES, EXACT_TARGETS};
pub use rng::{rng_value, roll_dice, DiceRoll, DERIVATION, DICE_DERIVATION, REJECT_AT};
pub use settlement::Settlement;
pub use sicbo::{total_odds, SicboBet, FACES, SICBO_BET_TYPES, TOTAL_TARGETS};

/// A game the service runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Game {
    /// Two dice, bets on the total, house edge 1%.
    Dice,
    /// Sic Bo: three dice, Atlantic City pay table.
    Sicbo,
    /// Raw randomness: the `rngValue` itself, no bet.
    Rng,
}

impl Game {
    /// Every game, in catalog order.
    pub const ALL: [Game; 3] = [Game::Dice, Game::Sicbo, Game::Rng];

    /// The game's name in URLs and records: `dice`, `sicbo`, `rng`.
    pub fn name(self) -> &'static str {
        match self {
            Game::Dice => "dice",
            Game::Sicbo => "sicbo",
            Game::Rng => "rng",
        }
    }

    /// The game named `s` (exact, case-sensitive), if any.
    pub fn parse(s: &str) -> Option<Game> {
        Game::ALL.into_iter().find(|g| g.name() == s)
    }
}

/// One game as listed to clients.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogEntry {
    /// The game.
    pub game: Game,
    /// Its name, as [`Game::name`].
    pub name: &'static str,
    /// One line on how it plays.
    pub description: &'static str,
    /// The house edge: one figure, or the range over bet types, e.g. `2.78%–18.98%`; `n/a` for
    /// `rng`, which takes no bet.
    pub house_edge: String,
}

/// Every game, with its house edge computed from the rules.
pub fn catalog() -> Vec<CatalogEntry> {
    Game::ALL
        .into_iter()
        .map(|game| {
            let (description, house_edge) = match game {
                Game::Dice => (
                    "Two dice. Bet on the total: exact (2–12), over7, under7, odd, even. \
                     A win pays amount × 0.99 × 36 / ways, floored to the cent.",
                    dice::house_edge_range(),
                ),
                Game::Sicbo => (
                    "Sic Bo on three dice, Atlantic City pay table: big, small, odd, even, \
                     total, single, double, triple, anyTriple, combo. X:1 returns amount × (X+1).",
                    sicbo::house_edge_range(),
                ),
                Game::Rng => (
                    "Raw verifiable randomness: the 32-byte rngValue for a game id and \
                     player seed, no bet.",
                    "n/a".to_string(),
                ),
            };
            CatalogEntry {
                game,
                name: game.name(),
                description,
                house_edge,
            }
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn game_names() {
        for game in Game::ALL {
            assert_eq!(Game::parse(game.name()), Some(game));
        }
        assert_eq!(Game::parse("dice"), Some(Game::Dice));
        assert_eq!(Game::parse("sicbo"), Some(Game::Sicbo));
        assert_eq!(Game::parse("rng"), Some(Game::Rng));
        assert_eq!(Game::parse("Dice"), None);
        assert_eq!(Game::parse("sic-bo"), None);
        assert_eq!(Game::parse(""), None);
    }

    #[test]
    fn catalog_house_edges() {
        let catalog = catalog();
        let edges: Vec<(&str, &str)> = catalog
            .iter()
            .map(|e| (e.name, e.house_edge.as_str()))
            .collect();
        assert_eq!(
            edges,
            [("dice", "1.00%"), ("sicbo", "2.78%–18.98%"), ("rng", "n/a")]
        );
        for e in &catalog {
            assert_eq!(e.name, e.game.name());
            assert!(!e.description.is_empty());
        }
    }

    /// The worked examples in docs/GAMES.md. If this fails, the document is wrong: update both.
    #[test]
    fn docs_worked_example() {
        let y: Vec<u8> = (1..=64u8).collect();
        let game_id = "0123456789abcdef0123456789abcdef";
        let value = rng_value(&y, game_id, "lucky");
        assert_eq!(
            hex::encode(value),
            "e94bba8eb7923ebd2bc4a789e0c0de16070e66afbf3acb57fabb6c174843d336"
        );
        assert_eq!(
            hex::encode(rng_value(&y, game_id, "")),
            "4bac22548031788f86f3a049bd5685e8bbe0700cd9ee4f40452701d759e0b20a"
        );

        // Dice game: two dice from bytes 0xe9 = 233 → 6 and 0x4b = 75 → 4.
        let two = roll_dice(&value, 2);
        assert_eq!(two.bytes_used, [233, 75]);
        assert_eq!(two.dice, [6, 4]);
        assert_eq!((two.skipped, two.blocks), (0, 0));
        let dice_bet = parse_bet(
            Game::Dice,
            br#"{"bet_type":"over7","amount":1.00,"player_seed":"lucky"}"#,
            &Limits::default(),
        )
        .unwrap();
        let s = dice_bet.spec.settle(dice_bet.amount, &two.dice);
        assert!(s.won);
        assert_eq!(s.payout.to_string(), "2.37");
        assert_eq!(s.rule, "over7: total 10 (6+4) > 7, pays 0.99×36/15");

        // Sic Bo: three dice, the third from 0xba = 186 → 1.
        let three = roll_dice(&value, 3);
        assert_eq!(three.bytes_used, [233, 75, 186]);
        assert_eq!(three.dice, [6, 4, 1]);
        let sicbo_bet = parse_bet(
            Game::Sicbo,
            br#"{"bet_type":"total","target":10,"amount":2.50,"player_seed":"lucky"}"#,
            &Limits::default(),
        )
        .unwrap();
        let s = sicbo_bet.spec.settle(sicbo_bet.amount, &three.dice);
        assert!(!s.won);
        assert_eq!(s.payout.to_string(), "0.00");
        assert_eq!(s.rule, "total 10: dice 6-4-1 (total 11) loses");
        // Had the dice totalled 10, the same bet would return 2.50 × 7.
        let s = sicbo_bet.spec.settle(sicbo_bet.amount, &[6, 3, 1]);
        assert_eq!((s.won, s.payout.to_string()), (true, "17.50".to_string()));

        // The stream past rngValue: block 1 = HMAC-SHA256(key = rngValue, message = 00000001).
        let more = roll_dice(&value, 64);
        assert_eq!((more.blocks, more.skipped), (1, 0));
        assert_eq!(
            hex::encode(&more.bytes_used[32..]),
            "5983f2c2432ff1007704047145361790c62afbb520664d1f629adb2463da57bb"
        );
        assert_eq!(more.dice[32..40], [6, 6, 3, 3, 2, 6, 2, 1]);

        // A skipped byte: seed "lucky-20", second byte 0xfd = 253.
        let skip = rng_value(&y, game_id, "lucky-20");
        assert_eq!(
            hex::encode(skip),
            "63fd6a4c78e4d0b91e372182e75130924489f583ab532aa3cbb15fc1924e27af"
        );
        let roll = roll_dice(&skip, 3);
        assert_eq!(roll.bytes_used, [99, 253, 106, 76]);
        assert_eq!(roll.skipped, 1);
        assert_eq!(roll.dice, [4, 5, 5]);
        let s = SicboBet::Total(14).settle(Amount::from_cents(100), [4, 5, 5]);
        assert_eq!((s.won, s.payout.to_string()), (true, "13.00".to_string()));
    }
}
