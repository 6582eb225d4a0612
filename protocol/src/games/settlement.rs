//! What a settled bet gives: won or lost, the payout and the rule as applied.

use super::amount::Amount;

/// The outcome of a bet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settlement {
    /// Whether the bet won.
    pub won: bool,
    /// Total returned to the player, stake included; 0.00 on a loss.
    pub payout: Amount,
    /// How the rule applied, for people: e.g. `over7: total 9 (4+5) > 7, pays 0.99×36/15`.
    pub rule: String,
}
