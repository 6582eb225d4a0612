//! The notary's formats (docs/PROTOCOL.md §17): canonical JSON, the payload schemas and the
//! receipt documents.

pub mod jcs;
pub mod receipt_doc;
pub mod schema;
