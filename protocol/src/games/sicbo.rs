//! Sic Bo on three dice, with the Atlantic City pay table.
//!
//! Odds are quoted "X:1": a winning bet returns `amount × (X + 1)`, stake included, which is
//! exact in cents. The even-money bets (big, small, odd, even) lose on any triple; that is
//! where their house edge comes from.

use super::amount::Amount;
use super::settlement::Settlement;

/// A Sic Bo bet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SicboBet {
    /// Total 11–17, not a triple. 1:1.
    Big,
    /// Total 4–10, not a triple. 1:1.
    Small,
    /// Odd total, not a triple. 1:1.
    Odd,
    /// Even total, not a triple. 1:1.
    Even,
    /// The total equals the target, 4..=17 (triples win too). 60:1 down to 6:1.
    Total(u8),
    /// The face 1..=6 appears: 1:1, 2:1, 3:1 for one, two, three matching dice.
    Single(u8),
    /// At least two dice show the face 1..=6. 10:1.
    Double(u8),
    /// All three dice show the face 1..=6. 180:1.
    Triple(u8),
    /// All three dice show the same face. 30:1.
    AnyTriple,
    /// Both of two distinct faces 1..=6 appear, stored ascending. 5:1.
    Combo(u8, u8),
}

/// Every bet type name, in the order they are documented.
pub const SICBO_BET_TYPES: &[&str] = &[
    "big",
    "small",
    "odd",
    "even",
    "total",
    "single",
    "double",
    "triple",
    "anyTriple",
    "combo",
];

/// The range of a `total` target.
pub const TOTAL_TARGETS: std::ops::RangeInclusive<u8> = 4..=17;

/// The range of a face: `single`, `double`, `triple` targets and `combo` values.
pub const FACES: std::ops::RangeInclusive<u8> = 1..=6;

/// The "X" of "X:1" for a `total` bet on `t`, or `None` outside 4..=17.
pub fn total_odds(t: u8) -> Option<u32> {
    match t {
        4 | 17 => Some(60),
        5 | 16 => Some(30),
        6 | 15 => Some(17),
        7 | 14 => Some(12),
        8 | 13 => Some(8),
        9..=12 => Some(6),
        _ => None,
    }
}

impl SicboBet {
    /// Every bet the game offers: each bet type with each of its targets and combos.
    pub fn all() -> Vec<SicboBet> {
        let mut all = vec![
            SicboBet::Big,
            SicboBet::Small,
            SicboBet::Odd,
            SicboBet::Even,
        ];
        all.extend(TOTAL_TARGETS.map(SicboBet::Total));
        all.extend(FACES.map(SicboBet::Single));
        all.extend(FACES.map(SicboBet::Double));
        all.extend(FACES.map(SicboBet::Triple));
        all.push(SicboBet::AnyTriple);
        for a in FACES {
            for b in a + 1..=6 {
                all.push(SicboBet::Combo(a, b));
            }
        }
        all
    }

    /// The bet type's name in requests.
    pub fn bet_type(&self) -> &'static str {
        match self {
            SicboBet::Big => "big",
            SicboBet::Small => "small",
            SicboBet::Odd => "odd",
            SicboBet::Even => "even",
            SicboBet::Total(_) => "total",
            SicboBet::Single(_) => "single",
            SicboBet::Double(_) => "double",
            SicboBet::Triple(_) => "triple",
            SicboBet::AnyTriple => "anyTriple",
            SicboBet::Combo(_, _) => "combo",
        }
    }

    /// The target of `total`, `single`, `double` and `triple` bets.
    pub fn target(&self) -> Option<u8> {
        match self {
            SicboBet::Total(t)
            | SicboBet::Single(t)
            | SicboBet::Double(t)
            | SicboBet::Triple(t) => Some(*t),
            _ => None,
        }
    }

    /// The two faces of a `combo` bet, ascending.
    pub fn combo(&self) -> Option<[u8; 2]> {
        match self {
            SicboBet::Combo(a, b) => Some([*a.min(b), *a.max(b)]),
            _ => None,
        }
    }

    /// The "X" of "X:1" that this bet pays on these dice, `None` if it loses.
    pub fn odds(&self, dice: [u8; 3]) -> Option<u32> {
        let total: u32 = dice.iter().map(|&d| u32::from(d)).sum();
        let triple = dice[0] == dice[1] && dice[1] == dice[2];
        let count = |face: u8| dice.iter().filter(|&&d| d == face).count() as u32;
        let even_money = |wins: bool| (wins && !triple).then_some(1);
        match *self {
            SicboBet::Big => even_money((11..=17).contains(&total)),
            SicboBet::Small => even_money((4..=10).contains(&total)),
            SicboBet::Odd => even_money(total % 2 == 1),
            SicboBet::Even => even_money(total.is_multiple_of(2)),
            SicboBet::Total(t) => total_odds(t).filter(|_| total == u32::from(t)),
            SicboBet::Single(k) => match count(k) {
                0 => None,
                n => Some(n),
            },
            SicboBet::Double(k) => (count(k) >= 2).then_some(10),
            SicboBet::Triple(k) => (count(k) == 3).then_some(180),
            SicboBet::AnyTriple => triple.then_some(30),
            SicboBet::Combo(a, b) => (a != b && count(a) >= 1 && count(b) >= 1).then_some(5),
        }
    }

    /// Human text for the bet, e.g. `big`, `total 10`, `combo 2+5`.
    pub fn label(&self) -> String {
        match self {
            SicboBet::Combo(a, b) => format!("combo {a}+{b}"),
            other => match other.target() {
                Some(t) => format!("{} {t}", other.bet_type()),
                None => other.bet_type().to_string(),
            },
        }
    }

    /// The house edge of this bet, e.g. `"2.78%"` for big: what a unit stake loses on average
    /// over all 216 outcomes, as a percentage with two decimals (rounded half up).
    pub fn house_edge(&self) -> String {
        let returned = returns_per_216()
            .into_iter()
            .find(|(b, _)| b == self)
            .map_or(0, |(_, r)| r);
        edge_percent(returned)
    }

    /// Settles the bet on `dice`: a win returns `amount × (X + 1)`.
    pub fn settle(&self, amount: Amount, dice: [u8; 3]) -> Settlement {
        let odds = self.odds(dice);
        let total: u32 = dice.iter().map(|&d| u32::from(d)).sum();
        let shown = format!("dice {}-{}-{} (total {total})", dice[0], dice[1], dice[2]);
        match odds {
            Some(x) => {
                let cents = u128::from(amount.cents()) * (u128::from(x) + 1);
                Settlement {
                    won: true,
                    payout: Amount::from_cents(u64::try_from(cents).unwrap_or(u64::MAX)),
                    rule: format!("{}: {shown} wins, pays {x}:1", self.label()),
                }
            }
            None => Settlement {
                won: false,
                payout: Amount::ZERO,
                rule: format!("{}: {shown} loses", self.label()),
            },
        }
    }
}

/// Every bet with what it returns, stake included, summed over all 216 outcomes for a unit stake
/// (216 would be a fair bet).
fn returns_per_216() -> Vec<(SicboBet, u32)> {
    let outcomes: Vec<[u8; 3]> = FACES
        .flat_map(|a| FACES.flat_map(move |b| FACES.map(move |c| [a, b, c])))
        .collect();
    SicboBet::all()
        .into_iter()
        .map(|bet| {
            let returned = outcomes
                .iter()
                .filter_map(|&d| bet.odds(d))
                .map(|x| x + 1)
                .sum();
            (bet, returned)
        })
        .collect()
}

/// A house edge `(216 − returned) / 216` as a percentage with two decimals, rounded half up.
fn edge_percent(returned: u32) -> String {
    let lost = 216u32.saturating_sub(returned);
    let basis_points = (lost * 10_000 + 108) / 216;
    format!("{}.{:02}%", basis_points / 100, basis_points % 100)
}

/// The range of house edges over every bet type and target, e.g. `"2.78%–18.98%"`, computed by
/// enumerating all 216 outcomes.
pub fn house_edge_range() -> String {
    let returns = returns_per_216();
    let best = returns.iter().map(|&(_, r)| r).max().unwrap_or(0);
    let worst = returns.iter().map(|&(_, r)| r).min().unwrap_or(0);
    format!("{}–{}", edge_percent(best), edge_percent(worst))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn outcomes() -> Vec<[u8; 3]> {
        let mut v = Vec::new();
        for a in 1..=6 {
            for b in 1..=6 {
                for c in 1..=6 {
                    v.push([a, b, c]);
                }
            }
        }
        v
    }

    fn wins(bet: SicboBet) -> usize {
        outcomes()
            .iter()
            .filter(|&&d| bet.odds(d).is_some())
            .count()
    }

    #[test]
    fn win_counts_match_combinatorics() {
        assert_eq!(SicboBet::all().len(), 4 + 14 + 6 + 6 + 6 + 1 + 15);
        assert_eq!(wins(SicboBet::Big), 105);
        assert_eq!(wins(SicboBet::Small), 105);
        assert_eq!(wins(SicboBet::Odd), 105);
        assert_eq!(wins(SicboBet::Even), 105);
        // Ways to roll each total 4..=17 with three dice.
        let total_ways = [3, 6, 10, 15, 21, 25, 27, 27, 25, 21, 15, 10, 6, 3];
        for (t, ways) in TOTAL_TARGETS.zip(total_ways) {
            assert_eq!(wins(SicboBet::Total(t)), ways, "total {t}");
        }
        for k in FACES {
            let by_matches = |m: u32| {
                outcomes()
                    .iter()
                    .filter(|&&d| SicboBet::Single(k).odds(d) == Some(m))
                    .count()
            };
            assert_eq!(by_matches(1), 75);
            assert_eq!(by_matches(2), 15);
            assert_eq!(by_matches(3), 1);
            assert_eq!(wins(SicboBet::Single(k)), 91);
            assert_eq!(wins(SicboBet::Double(k)), 16);
            assert_eq!(wins(SicboBet::Triple(k)), 1);
        }
        assert_eq!(wins(SicboBet::AnyTriple), 6);
        for a in 1..=6u8 {
            for b in a + 1..=6 {
                assert_eq!(wins(SicboBet::Combo(a, b)), 30);
            }
        }
    }

    #[test]
    fn odds_table() {
        let expected = [60, 30, 17, 12, 8, 6, 6, 6, 6, 8, 12, 17, 30, 60];
        for (t, x) in TOTAL_TARGETS.zip(expected) {
            assert_eq!(total_odds(t), Some(x));
        }
        assert_eq!(total_odds(3), None);
        assert_eq!(total_odds(18), None);
        // Triples: even-money bets lose, total bets win.
        assert_eq!(SicboBet::Big.odds([5, 5, 5]), None);
        assert_eq!(SicboBet::Small.odds([2, 2, 2]), None);
        assert_eq!(SicboBet::Even.odds([2, 2, 2]), None);
        assert_eq!(SicboBet::Odd.odds([3, 3, 3]), None);
        assert_eq!(SicboBet::Total(6).odds([2, 2, 2]), Some(17));
        assert_eq!(SicboBet::Big.odds([5, 5, 6]), Some(1));
        assert_eq!(SicboBet::Small.odds([1, 2, 1]), Some(1));
        assert_eq!(SicboBet::Single(4).odds([4, 1, 4]), Some(2));
        assert_eq!(SicboBet::Double(4).odds([4, 4, 4]), Some(10));
        assert_eq!(SicboBet::Triple(4).odds([4, 4, 4]), Some(180));
        assert_eq!(SicboBet::AnyTriple.odds([1, 1, 1]), Some(30));
        assert_eq!(SicboBet::Combo(2, 5).odds([5, 3, 2]), Some(5));
        assert_eq!(SicboBet::Combo(2, 5).odds([5, 5, 3]), None);
    }

    #[test]
    fn payouts_are_stake_times_x_plus_one() {
        let stake = Amount::from_cents(250);
        for bet in SicboBet::all() {
            for d in outcomes() {
                let s = bet.settle(stake, d);
                match bet.odds(d) {
                    Some(x) => {
                        assert!(s.won);
                        assert_eq!(s.payout.cents(), 250 * u64::from(x + 1));
                    }
                    None => {
                        assert!(!s.won);
                        assert_eq!(s.payout, Amount::ZERO);
                    }
                }
            }
        }
        let s = SicboBet::Total(10).settle(stake, [3, 3, 4]);
        assert_eq!(s.payout.to_string(), "17.50");
        assert_eq!(s.rule, "total 10: dice 3-3-4 (total 10) wins, pays 6:1");
        let s = SicboBet::Combo(1, 6).settle(stake, [3, 3, 4]);
        assert_eq!(s.rule, "combo 1+6: dice 3-3-4 (total 10) loses");
        let s = SicboBet::Triple(6).settle(Amount::from_cents(100), [6, 6, 6]);
        assert_eq!(s.payout.to_string(), "181.00");
    }

    #[test]
    fn house_edges() {
        assert_eq!(house_edge_range(), "2.78%–18.98%");
        assert_eq!(SicboBet::Big.house_edge(), "2.78%");
        assert_eq!(SicboBet::Total(4).house_edge(), "15.28%");
        assert_eq!(SicboBet::Total(9).house_edge(), "18.98%");
        assert_eq!(SicboBet::Total(10).house_edge(), "12.50%");
        assert_eq!(SicboBet::Single(3).house_edge(), "7.87%");
        assert_eq!(SicboBet::Double(3).house_edge(), "18.52%");
        assert_eq!(SicboBet::Triple(3).house_edge(), "16.20%");
        assert_eq!(SicboBet::AnyTriple.house_edge(), "13.89%");
        assert_eq!(SicboBet::Combo(1, 2).house_edge(), "16.67%");
        // Every bet favours the house.
        for (bet, returned) in returns_per_216() {
            assert!(returned < 216, "{bet:?}");
        }
    }

    #[test]
    fn names_targets_combos() {
        let types: Vec<&str> = [
            SicboBet::Big,
            SicboBet::Small,
            SicboBet::Odd,
            SicboBet::Even,
            SicboBet::Total(4),
            SicboBet::Single(1),
            SicboBet::Double(1),
            SicboBet::Triple(1),
            SicboBet::AnyTriple,
            SicboBet::Combo(1, 2),
        ]
        .iter()
        .map(SicboBet::bet_type)
        .collect();
        assert_eq!(types, SICBO_BET_TYPES);
        assert_eq!(SicboBet::Double(3).target(), Some(3));
        assert_eq!(SicboBet::Combo(2, 5).target(), None);
        assert_eq!(SicboBet::Combo(2, 5).combo(), Some([2, 5]));
        assert_eq!(SicboBet::Big.combo(), None);
    }
}
