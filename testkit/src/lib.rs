//! Test harnesses, fixtures and fuzz entry points: the in-process service the fuzz targets and
//! the proptest suite drive ([`harness`]), the entry points themselves ([`fuzz`]) and their seed
//! inputs ([`seeds`]), and a test-only operator's witnessed log ([`operator_log`]). A dev-dependency only: no release binary links it.

pub mod fuzz;
pub mod harness;
pub mod operator_log;
pub mod seeds;
