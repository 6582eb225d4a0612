//! The EVM client: JSON-RPC to an EVM layer-2 ([`rpc`]: fees, transactions,
//! receipts, the anchor key) and x402 payments ([`x402`]: EIP-712 authorizations, the
//! facilitator and direct settlement). No store and no HTTP server: the service calls these.

pub mod rpc;
pub mod x402;
