//! Return to player: for every bet type and target of a game, what the rolls of a tally would
//! have paid (through the production settlement) against what the rules promise. The exact
//! expectation and spread of a bet come from its payouts over the 6^n equally likely ordered
//! results; the measured return is the same payouts weighted by how often each result came up.

use super::special::{normal_isf, normal_sf};
use super::tally::Tally;
use serde::Serialize;
use vrs_protocol::games::{Amount, BetSpec, DiceBet, SicboBet};

/// The stake every bet is measured at: at 100.00 no payout is floored to the cent, so the dice
/// edge is exactly the 1 % of docs/GAMES.md.
pub const STAKE_CENTS: u64 = 10_000;

/// Every bet of a game of `dice` dice (2: dice, 3: Sic Bo), targets and combos included.
pub fn bets(dice: usize) -> Vec<BetSpec> {
    if dice == 2 {
        DiceBet::all().into_iter().map(BetSpec::Dice).collect()
    } else {
        SicboBet::all().into_iter().map(BetSpec::Sicbo).collect()
    }
}

/// One bet's return to player over a tally.
#[derive(Clone, Debug, Serialize)]
pub struct Rtp {
    pub bet_type: String,
    pub target: Option<u8>,
    pub combo: Option<[u8; 2]>,
    pub rolls: u64,
    /// The rules' return per unit staked: Σ payout / (6^n · stake), exact.
    pub expected: f64,
    /// The house edge, 1 − expected.
    pub house_edge: f64,
    /// The measured return per unit staked.
    pub observed: f64,
    /// The 99 % confidence interval of the return, from the measured spread.
    pub ci99: [f64; 2],
    /// (observed − expected) / (σ / √rolls), σ the exact standard deviation of one roll's
    /// return.
    pub z: f64,
    /// The two-sided p-value of z under fair dice (normal approximation).
    pub p_value: f64,
}

impl Rtp {
    /// The bet as people write it: `exact 7`, `combo 1,2`, `big`.
    pub fn label(&self) -> String {
        match (self.target, self.combo) {
            (Some(t), _) => format!("{} {t}", self.bet_type),
            (_, Some([a, b])) => format!("{} {a},{b}", self.bet_type),
            _ => self.bet_type.clone(),
        }
    }
}

/// The return to player of `bet` over `t`.
pub fn measure(t: &Tally, bet: &BetSpec) -> Rtp {
    let stake = STAKE_CENTS as f64;
    let outcomes = t.counts.len() as f64;
    let (mut sum, mut sum_sq) = (0f64, 0f64);
    let (mut seen, mut seen_sq) = (0f64, 0f64);
    for (roll, n) in t.cells() {
        let r = bet
            .settle(Amount::from_cents(STAKE_CENTS), &roll)
            .payout
            .cents() as f64
            / stake;
        sum += r;
        sum_sq += r * r;
        seen += n as f64 * r;
        seen_sq += n as f64 * r * r;
    }
    let expected = sum / outcomes;
    let sigma = (sum_sq / outcomes - expected * expected).max(0.0).sqrt();
    let rolls = t.rolls();
    let n = rolls.max(1) as f64;
    let observed = seen / n;
    let spread = (seen_sq / n - observed * observed).max(0.0).sqrt();
    let half = normal_isf(0.005) * spread / n.sqrt();
    let z = if sigma > 0.0 {
        (observed - expected) / (sigma / n.sqrt())
    } else {
        0.0
    };
    Rtp {
        bet_type: bet.bet_type().to_owned(),
        target: bet.target(),
        combo: bet.combo(),
        rolls,
        expected,
        house_edge: 1.0 - expected,
        observed,
        ci99: [observed - half, observed + half],
        z,
        p_value: (2.0 * normal_sf(z.abs())).min(1.0),
    }
}

/// Every bet of the tally's game.
pub fn measure_all(t: &Tally) -> Vec<Rtp> {
    bets(t.dice).iter().map(|b| measure(t, b)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_returns_are_the_documented_edges() {
        let t = Tally::new(2);
        for r in measure_all(&t) {
            // GAMES.md §3: exactly 1.00 % at a stake of 100.00, for every bet.
            assert!((r.house_edge - 0.01).abs() < 1e-12, "{r:?}");
        }
        let t = Tally::new(3);
        let all = measure_all(&t);
        assert_eq!(all.len(), bets(3).len());
        let edge = |label: &str| {
            all.iter()
                .find(|r| r.label() == label)
                .map(|r| r.house_edge)
        };
        // GAMES.md §4: big 2.78 %, triple 16.20 %, total 9 18.98 %.
        assert!((edge("big").unwrap_or(0.0) - 6.0 / 216.0).abs() < 1e-12);
        assert!((edge("triple 4").unwrap_or(0.0) - 35.0 / 216.0).abs() < 1e-12);
        assert!((edge("total 9").unwrap_or(0.0) - 41.0 / 216.0).abs() < 1e-12);
    }

    #[test]
    fn a_flat_tally_returns_exactly_the_expectation() {
        let mut t = Tally::new(3);
        t.counts.iter_mut().for_each(|c| *c = 1000);
        for r in measure_all(&t) {
            assert!((r.observed - r.expected).abs() < 1e-12, "{r:?}");
            assert!(r.z.abs() < 1e-6);
            assert!(r.ci99[0] <= r.expected && r.expected <= r.ci99[1]);
        }
    }
}
