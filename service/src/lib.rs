//! The service's use cases and the loops that run them: the bet use case ([`bets`]), the
//! epoch loop and its VDF threads ([`epoch`]), the pool generator ([`pool`]), anchoring
//! ([`anchor`]), the notary's receipts, payments and sealing ([`notary`]), the verification of
//! a stored game ([`verify`]), the witnessed log and its witnesses' pushers ([`tlog`]), and the leader supervisor that runs the loops while this process
//! holds the store's lease ([`leader`]). Above the store and the chain client, below HTTP and
//! the CLI: no HTTP framework here (the one HTTP-shaped record is the notary's stored
//! Idempotency-Key answer, which a replay repeats byte for byte).

pub mod anchor;
pub mod bets;
mod bounded;
pub mod epoch;
pub mod leader;
pub mod notary;
pub mod pool;
pub mod read_workers;
pub mod tlog;
pub mod verify;
