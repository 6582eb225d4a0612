//! The engine's one error type.

use thiserror::Error;

/// Everything the engine can refuse. Every variant but [`Error::Unavailable`], [`Error::Gpu`]
/// (this machine's) and [`Error::SquarerFault`] (a bug) is the caller's fault: malformed input,
/// an unknown name, an out-of-range parameter, or a proof that does not check.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum Error {
    /// An encoded element has the wrong number of bytes for the modulus.
    #[error("{what}: expected {expected} bytes, got {got}")]
    WrongLength {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    /// A hex string could not be decoded.
    #[error("{what}: not valid hex: {reason}")]
    BadHex { what: &'static str, reason: String },
    /// An element is zero, ±1 where that is refused, ≥ N, or not the canonical
    /// representative min(v, N − v) of its class in Z_N^*/{±1}.
    #[error("{what}: {reason}")]
    NotCanonical {
        what: &'static str,
        reason: &'static str,
    },
    /// The modulus is even, too small, too large or unknown.
    #[error("modulus: {0}")]
    BadModulus(String),
    /// T must be at least 1.
    #[error("iterations T must be at least 1")]
    ZeroIterations,
    /// A backend name that this build does not know (or was built without).
    #[error("unknown backend {0:?}; available: {1}")]
    UnknownBackend(String, String),
    /// A backend this build knows that cannot run here (not compiled in, or this machine
    /// lacks what it needs).
    #[error("backend {0:?} is not available here: {1}")]
    Unavailable(String, String),
    /// The Wesolowski prime ℓ is not the one hash-to-prime gives for (N, x, y, T).
    #[error("proof: challenge prime l does not match hash-to-prime(N, x, y, T)")]
    WrongChallenge,
    /// π^ℓ · x^(2^T mod ℓ) ≠ y in Z_N^*/{±1}.
    #[error("proof: pi^l * x^(2^T mod l) != y")]
    ProofMismatch,
    /// A replay list that is not strictly increasing inside (0, T).
    #[error("replay: {0}")]
    BadReplay(String),
    /// A replay segment does not recompute: c_to ≠ c_from^(2^(to − from)).
    #[error("replay: segment from iteration {from} to {to} does not recompute")]
    ReplayMismatch { from: u64, to: u64 },
    /// A pool entry's input is not the one its batch seed and index derive.
    #[error("pool entry {index}: x is not derived from its batch seed and index")]
    PoolInputMismatch { index: u64 },
    /// A class-group discriminant that is refused: not negative, not ≡ 1 (mod 4), outside the
    /// supported sizes, malformed, or a seed or bit length that chiavdf would refuse too.
    /// The caller's fault.
    #[error("discriminant: {0}")]
    BadDiscriminant(String),
    /// Bytes that are not a canonical compressed form (chiavdf's bqfc encoding) of this
    /// discriminant. The caller's fault.
    #[error("{what}: not a valid compressed form of this discriminant: {reason}")]
    BadFormEncoding { what: &'static str, reason: String },
    /// A form that is not a reduced (primitive) form of this discriminant. The caller's fault.
    #[error("{what} is not a reduced form of this discriminant: {reason}")]
    BadForm {
        what: &'static str,
        reason: &'static str,
    },
    /// A class-group Wesolowski proof that does not check: π^B · x^(2^T mod B) ≠ y with
    /// B = GetB(D, x, y). The caller's fault.
    #[error("proof does not verify: pi^B * x^(2^T mod B) != y")]
    ClassGroupProofMismatch,

    /// A class-group epoch's stored ℓ is not B = GetB(D, x, y).
    #[error("proof: l is not B = GetB(D, x, y) (expected {expected})")]
    WrongClassGroupChallenge { expected: String },
    /// The squarer used by the class-group prover returned something wrong (a form not on the
    /// discriminant, or a y whose proof does not verify). Not the caller's fault: a bug in the
    /// squarer.
    #[error("squarer fault: {0}")]
    SquarerFault(String),
    /// The GPU batch backend could not start (no adapter, no device) or a GPU operation failed.
    /// Not the caller's fault: callers fall back to a CPU backend.
    #[error("gpu: {0}")]
    Gpu(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
