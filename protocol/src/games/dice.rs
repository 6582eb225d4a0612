//! Two dice, house edge 1%.
//!
//! Every bet is a set of totals. A bet covering `ways` of the 36 equally likely outcomes pays
//! (stake included) `amount × 0.99 × 36 / ways`, floored to the cent: the fair payout `36/ways`
//! less 1%. The arithmetic is done in integer cents, `cents × 99 × 36 / (100 × ways)`, so the
//! payout is exact and anyone can recompute it.

use super::amount::Amount;
use super::settlement::Settlement;

/// A bet on the total of two dice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DiceBet {
    /// The total equals the target, 2..=12.
    Exact(u8),
    /// The total is more than 7.
    Over7,
    /// The total is less than 7.
    Under7,
    /// The total is odd.
    Odd,
    /// The total is even.
    Even,
}

/// Every bet type name, in the order they are documented.
pub const DICE_BET_TYPES: &[&str] = &["exact", "over7", "under7", "odd", "even"];

/// The smallest and largest total of two dice: the range of an `exact` target.
pub const EXACT_TARGETS: std::ops::RangeInclusive<u8> = 2..=12;

impl DiceBet {
    /// Every bet the game offers: each bet type, and `exact` with each target.
    pub fn all() -> Vec<DiceBet> {
        let mut all: Vec<DiceBet> = EXACT_TARGETS.map(DiceBet::Exact).collect();
        all.extend([DiceBet::Over7, DiceBet::Under7, DiceBet::Odd, DiceBet::Even]);
        all
    }

    /// The bet type's name in requests: `exact`, `over7`, `under7`, `odd`, `even`.
    pub fn bet_type(&self) -> &'static str {
        match self {
            DiceBet::Exact(_) => "exact",
            DiceBet::Over7 => "over7",
            DiceBet::Under7 => "under7",
            DiceBet::Odd => "odd",
            DiceBet::Even => "even",
        }
    }

    /// The target total of an `exact` bet.
    pub fn target(&self) -> Option<u8> {
        match self {
            DiceBet::Exact(t) => Some(*t),
            _ => None,
        }
    }

    /// How many of the 36 outcomes win: exact `t` → 6 − |t − 7|, over7 and under7 → 15,
    /// odd and even → 18. An `exact` target outside 2..=12 has no ways.
    pub fn ways(&self) -> u32 {
        match self {
            DiceBet::Exact(t) if EXACT_TARGETS.contains(t) => 6 - u32::from(t.abs_diff(7)),
            DiceBet::Exact(_) => 0,
            DiceBet::Over7 | DiceBet::Under7 => 15,
            DiceBet::Odd | DiceBet::Even => 18,
        }
    }

    /// Whether the dice `d1`, `d2` win this bet.
    pub fn wins(&self, d1: u8, d2: u8) -> bool {
        let total = u32::from(d1) + u32::from(d2);
        match self {
            DiceBet::Exact(t) => total == u32::from(*t),
            DiceBet::Over7 => total > 7,
            DiceBet::Under7 => total < 7,
            DiceBet::Odd => total % 2 == 1,
            DiceBet::Even => total % 2 == 0,
        }
    }

    /// What a winning bet of `amount` returns, stake included:
    /// `floor(cents × 99 × 36 / (100 × ways))` cents.
    pub fn win_payout(&self, amount: Amount) -> Amount {
        let ways = u128::from(self.ways());
        if ways == 0 {
            return Amount::ZERO;
        }
        let cents = u128::from(amount.cents()) * 99 * 36 / (100 * ways);
        // Saturates only for stakes far beyond any limit (above ~5 × 10^17 units).
        Amount::from_cents(u64::try_from(cents).unwrap_or(u64::MAX))
    }

    /// Human text for the bet, e.g. `over7` or `exact 7`.
    pub fn label(&self) -> String {
        match self {
            DiceBet::Exact(t) => format!("exact {t}"),
            other => other.bet_type().to_string(),
        }
    }

    /// Settles the bet on the dice `d1`, `d2`.
    pub fn settle(&self, amount: Amount, d1: u8, d2: u8) -> Settlement {
        let total = u32::from(d1) + u32::from(d2);
        let won = self.wins(d1, d2);
        let condition = match self {
            DiceBet::Exact(t) if won => format!("= {t}"),
            DiceBet::Exact(t) => format!("≠ {t}"),
            DiceBet::Over7 if won => "> 7".to_string(),
            DiceBet::Over7 => "is not > 7".to_string(),
            DiceBet::Under7 if won => "< 7".to_string(),
            DiceBet::Under7 => "is not < 7".to_string(),
            DiceBet::Odd if won => "is odd".to_string(),
            DiceBet::Odd => "is not odd".to_string(),
            DiceBet::Even if won => "is even".to_string(),
            DiceBet::Even => "is not even".to_string(),
        };
        let outcome = if won {
            format!("pays 0.99×36/{}", self.ways())
        } else {
            "loses".to_string()
        };
        Settlement {
            won,
            payout: if won {
                self.win_payout(amount)
            } else {
                Amount::ZERO
            },
            rule: format!(
                "{}: total {total} ({d1}+{d2}) {condition}, {outcome}",
                self.label()
            ),
        }
    }
}

/// The house edge over every bet type and target, e.g. `"1.00%"`: the return of a 100.00 stake
/// summed over all 36 outcomes, against 36 × 100.00, as a percentage with two decimals (rounded
/// half up). It is a single figure because every bet pays 0.99 of fair odds; a range would be
/// shown if the figures differed.
pub fn house_edge_range() -> String {
    let stake = Amount::from_cents(10_000);
    let edge_bp = |bet: &DiceBet| -> u64 {
        let returned: u64 = (1..=6u8)
            .flat_map(|a| (1..=6u8).map(move |b| (a, b)))
            .map(|(a, b)| bet.settle(stake, a, b).payout.cents())
            .sum();
        let staked = 36 * stake.cents();
        // Basis points of the stake kept by the house.
        (staked.saturating_sub(returned) * 10_000 + staked / 2) / staked
    };
    let edges: Vec<u64> = DiceBet::all().iter().map(edge_bp).collect();
    let min = edges.iter().copied().min().unwrap_or(0);
    let max = edges.iter().copied().max().unwrap_or(0);
    let percent = |bp: u64| format!("{}.{:02}%", bp / 100, bp % 100);
    if min == max {
        percent(min)
    } else {
        format!("{}–{}", percent(min), percent(max))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn outcomes() -> impl Iterator<Item = (u8, u8)> {
        (1..=6u8).flat_map(|a| (1..=6u8).map(move |b| (a, b)))
    }

    #[test]
    fn ways_count_winning_outcomes() {
        let bets = DiceBet::all();
        assert_eq!(bets.len(), 15);
        for bet in bets {
            let wins = outcomes().filter(|&(a, b)| bet.wins(a, b)).count();
            assert_eq!(wins as u32, bet.ways(), "{bet:?}");
        }
        let expected_exact = [1, 2, 3, 4, 5, 6, 5, 4, 3, 2, 1];
        for (t, ways) in EXACT_TARGETS.zip(expected_exact) {
            assert_eq!(DiceBet::Exact(t).ways(), ways);
        }
        assert_eq!(DiceBet::Exact(1).ways(), 0);
        assert_eq!(DiceBet::Exact(13).ways(), 0);
        assert_eq!(DiceBet::Over7.ways(), 15);
        assert_eq!(DiceBet::Under7.ways(), 15);
        assert_eq!(DiceBet::Odd.ways(), 18);
        assert_eq!(DiceBet::Even.ways(), 18);
    }

    #[test]
    fn expected_return_is_99_percent() {
        for stake_cents in [10_000u64, 1, 3, 137, 1_000_000] {
            let stake = Amount::from_cents(stake_cents);
            for bet in DiceBet::all() {
                let total: u64 = outcomes()
                    .map(|(a, b)| bet.settle(stake, a, b).payout.cents())
                    .sum();
                // total / 36 is the expected return; compare as integers.
                assert!(total * 100 <= 99 * 36 * stake_cents, "{bet:?} at {stake}");
                if stake_cents == 10_000 {
                    assert!(total * 1000 >= 989 * 36 * stake_cents, "{bet:?}");
                    // 100.00 divides exactly: exactly 99%.
                    assert_eq!(total * 100, 99 * 36 * stake_cents, "{bet:?}");
                }
            }
        }
    }

    #[test]
    fn specific_payouts() {
        let one = Amount::from_cents(100);
        assert_eq!(DiceBet::Over7.settle(one, 4, 5).payout.to_string(), "2.37");
        assert_eq!(
            DiceBet::Exact(7).settle(one, 3, 4).payout.to_string(),
            "5.94"
        );
        let ten = Amount::from_cents(1000);
        assert_eq!(
            DiceBet::Exact(2).settle(ten, 1, 1).payout.to_string(),
            "356.40"
        );
        assert_eq!(DiceBet::Odd.win_payout(one).to_string(), "1.98");
        assert_eq!(DiceBet::Exact(12).win_payout(one).to_string(), "35.64");
        assert_eq!(DiceBet::Exact(6).win_payout(one).to_string(), "7.12"); // 7.128
        assert_eq!(
            DiceBet::Over7
                .win_payout(Amount::from_cents(u64::MAX))
                .cents(),
            u64::MAX
        );
        let loss = DiceBet::Over7.settle(one, 3, 4);
        assert!(!loss.won);
        assert_eq!(loss.payout, Amount::ZERO);
    }

    #[test]
    fn rule_text() {
        let one = Amount::from_cents(100);
        assert_eq!(
            DiceBet::Over7.settle(one, 4, 5).rule,
            "over7: total 9 (4+5) > 7, pays 0.99×36/15"
        );
        assert_eq!(
            DiceBet::Over7.settle(one, 3, 4).rule,
            "over7: total 7 (3+4) is not > 7, loses"
        );
        assert_eq!(
            DiceBet::Exact(7).settle(one, 6, 1).rule,
            "exact 7: total 7 (6+1) = 7, pays 0.99×36/6"
        );
        assert_eq!(
            DiceBet::Even.settle(one, 6, 1).rule,
            "even: total 7 (6+1) is not even, loses"
        );
    }

    #[test]
    fn names_and_targets() {
        let names: Vec<&str> = [
            DiceBet::Exact(2),
            DiceBet::Over7,
            DiceBet::Under7,
            DiceBet::Odd,
            DiceBet::Even,
        ]
        .iter()
        .map(DiceBet::bet_type)
        .collect();
        assert_eq!(names, DICE_BET_TYPES);
        assert_eq!(DiceBet::Exact(9).target(), Some(9));
        assert_eq!(DiceBet::Odd.target(), None);
    }

    proptest! {
        #[test]
        fn payout_never_exceeds_99_percent_fair(cents in 0u64..1_000_000_000_000, idx in 0usize..15) {
            let bet = DiceBet::all()[idx];
            let paid = bet.win_payout(Amount::from_cents(cents)).cents();
            let ways = u64::from(bet.ways());
            // paid ≤ cents × 0.99 × 36 / ways < paid + 1
            prop_assert!(paid * ways * 100 <= cents * 99 * 36);
            prop_assert!((paid + 1) * ways * 100 > cents * 99 * 36);
        }
    }
}
