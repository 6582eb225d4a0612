//! Statistics of game outcomes for RNG certification (docs/STATISTICS.md): chi-square tests of
//! dice against their exact probabilities, the measured return to player of every bet, and the
//! thresholds that keep a whole run's false-alarm probability below a chosen bound. Pure
//! functions of the tallied outcomes; the payouts come from the production settlement
//! (`vrs_protocol::games`), never from a copy of the rules.

pub mod chi_square;
pub mod rtp;
pub mod sp800_22;
pub mod special;
pub mod tally;
