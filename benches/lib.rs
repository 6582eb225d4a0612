//! Shared benchmark inputs live in vrs-engine; this crate holds the criterion targets and the
//! `vrs-loadgen` HTTP load generator (loadgen.rs, driven by load.sh).
