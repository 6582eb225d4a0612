//! The protocol's pure rules and formats (docs/PROTOCOL.md, docs/GAMES.md): bets and their
//! leaves, outcomes and payouts, the epoch's group and seed rules, the timing rule, signed
//! acceptance, notary schemas, proof documents and the verification report's shape. No I/O and
//! no clock: every function here is a function of its arguments, so the service, the offline
//! verifier and the tests compute the same thing.

pub mod acceptance;
pub mod commit;
pub mod epoch_group;
pub mod games;
pub mod notary;
pub mod outcome;
pub mod proof_json;
pub mod record;
pub mod report;
pub mod schedule;
pub mod sorted;
pub mod timing;
pub mod tlog;
pub mod unique_json;
pub mod verification;
