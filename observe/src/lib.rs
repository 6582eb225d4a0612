//! What every layer that does I/O shares: the one wall clock ([`clock`]) and the process-wide
//! metrics registry ([`metrics`]). Plain std, no other vrs crate: the store, the service and
//! HTTP all stamp times and count events here, and `/metrics` renders what they counted.

pub mod clock;
pub mod metrics;
