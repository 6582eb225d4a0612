//! The service's use cases and the loops that run them: the epoch loop and its VDF threads
//! ([`epoch`]), the pool generator ([`pool`]), anchoring ([`anchor`]), the bet use case ([`bets`]), the notary's receipts,
//! payments and sealing ([`notary`]) and the verification of a stored game ([`verify`]). Above
//! the store and the chain client, below HTTP and the CLI: nothing here knows a status code.

pub mod anchor;
pub mod bets;
pub mod epoch;
pub mod notary;
pub mod pool;
pub mod verify;
