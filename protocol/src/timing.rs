//! The `timing` step of a verification (docs/PROTOCOL.md §10, "Timing"), over facts however
//! they were obtained: from the store (the service's report) or from a server's public records
//! (`vrs verify`, `vrs audit`).

/// What the `timing` step reads, however it was obtained: from the store, or from a server's
/// public records (`vrs verify`, `vrs audit`).
#[derive(Clone, Debug, Default)]
pub struct TimingFacts {
    pub epoch: u64,
    /// The version-2 commitment of a closed epoch; None for version 1.
    pub timing: Option<vrs_engine::epoch::Timing>,
    /// T the VDF ran (the input's), where known.
    pub ran_iterations: Option<u64>,
    /// p(e)'s close and T, when p ≥ 1 and its record was found.
    pub predecessor: Option<vrs_engine::timing::Predecessor>,
    /// Epoch e − 1's record, where e ≥ 2 and it was found.
    pub prior: Option<PriorEpoch>,
    /// The least margin (hundredths) the verifier asked for; 0: none asked (then the
    /// protocol's least, 1, and version-1 epochs pass).
    pub min_margin_centi: u32,
}

/// What the `timing` step reads of epoch e − 1.
#[derive(Clone, Copy, Debug, Default)]
pub struct PriorEpoch {
    pub version: u8,
    pub closed_at_ms: Option<i64>,
    /// When its y was stored.
    pub resolved_at_ms: Option<i64>,
}

/// The `timing` step (docs/PROTOCOL.md §10, "Timing"): the epoch's games were fixed before y of
/// epoch e − 1 was stored, after e − 1's were, and its window keeps the bound of its declared
/// margin and rate. Version-1 epochs carry no timing commitment and pass, saying so, unless
/// they follow a version-2 epoch (a downgrade).
pub fn timing_step(f: &TimingFacts) -> Result<String, String> {
    let e = f.epoch;
    let Some(timing) = f.timing else {
        if f.min_margin_centi > 0 {
            return Err(format!(
                "version 1: the epoch makes no timing commitment, and a margin of {} was required",
                vrs_engine::timing::centi(u64::from(f.min_margin_centi))
            ));
        }
        if f.prior.is_some_and(|p| p.version >= 2) {
            return Err(format!(
                "a version-1 epoch after version-2 epoch {}: epochs never go back to the rules \
                 without a timing commitment",
                e - 1
            ));
        }
        return Ok(
            "version 1: no timing commitment (an epoch from before the timing rule; \
             docs/PROTOCOL.md §10 says what version 1 did not guarantee)"
                .into(),
        );
    };
    if timing.margin_centi < f.min_margin_centi {
        return Err(format!(
            "the epoch declares margin {}, below the {} this check requires",
            vrs_engine::timing::centi(u64::from(timing.margin_centi)),
            vrs_engine::timing::centi(u64::from(f.min_margin_centi))
        ));
    }
    if let Some(ran) = f.ran_iterations {
        if ran != timing.iterations {
            return Err(format!(
                "the VDF ran T = {ran} but the epoch committed to T = {} when it opened",
                timing.iterations
            ));
        }
    }
    let closed = timing.closed_at_ms as i64;
    let prior = match (e, f.prior) {
        (0 | 1, _) => String::new(),
        (_, None) => return Err(format!("epoch {}'s record is missing", e - 1)),
        (_, Some(p)) => {
            let (Some(stored), Some(prior_closed)) = (p.resolved_at_ms, p.closed_at_ms) else {
                return Err(format!(
                    "epoch {} has no stored output or close time, yet epoch {e} after it is \
                     resolved (epochs resolve in order)",
                    e - 1
                ));
            };
            if closed > stored {
                return Err(format!(
                    "closed at {closed} ms, after y of epoch {} was stored at {stored} ms: its \
                     games could still change while that output was known",
                    e - 1
                ));
            }
            if (timing.opened_at_ms as i64) < prior_closed {
                return Err(format!(
                    "opened at {} ms, before epoch {} closed at {prior_closed} ms: two epochs \
                     took games at once",
                    timing.opened_at_ms,
                    e - 1
                ));
            }
            format!(
                "closed {} ms before y of epoch {} was stored; ",
                stored - closed,
                e - 1
            )
        }
    };
    let predecessor = match timing.previous {
        0 => None,
        p => Some(
            f.predecessor
                .ok_or_else(|| format!("epoch {p} (the predecessor) is missing or not closed"))?,
        ),
    };
    vrs_engine::timing::check(e, &timing, predecessor).map(|d| format!("{prior}{d}"))
}
