//! Shared benchmark inputs live in vrs-engine; this crate only holds criterion targets.
