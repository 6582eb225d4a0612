//! The notary's formats (docs/PROTOCOL.md §17): canonical JSON and the payload schemas.

pub mod jcs;
pub mod schema;
