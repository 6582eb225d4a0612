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
    /// What the verifier requires beyond the protocol's least.
    pub floor: Floor,
}

/// What a verifier requires of an epoch's declarations beyond the protocol's least
/// (`--min-margin`, `--min-rate`, `--allow-version-1` of `vrs verify` and `vrs audit`). A
/// version-1 epoch, which declares neither margin nor rate, fails unless `allow_version_1`
/// and neither floor is asked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Floor {
    /// The least margin A_e, in hundredths; 0: none asked (the protocol's least, 1, holds).
    pub margin_centi: u32,
    /// The least declared rate R_e, in squarings per second; 0: none asked. The window is timed
    /// against R_e, so an operator that understates it buys time: A_e · R_e is the fastest
    /// squarer the window excludes.
    pub rate: u64,
    /// Whether a version-1 epoch (no timing commitment: docs/PROTOCOL.md §10, "Version 1")
    /// passes, saying so. Off by default: an operator could publish a whole chain as version 1.
    pub allow_version_1: bool,
}

impl Floor {
    /// Whether the verifier asked for anything beyond the protocol's least.
    pub fn asked(&self) -> bool {
        self.margin_centi > 0 || self.rate > 0
    }

    /// What was asked, in words ("a margin of 2 and a rate of 2000000 squarings/s").
    fn describe(&self) -> String {
        let margin = (self.margin_centi > 0).then(|| {
            format!(
                "a margin of {}",
                vrs_engine::timing::centi(u64::from(self.margin_centi))
            )
        });
        let rate = (self.rate > 0).then(|| format!("a rate of {} squarings/s", self.rate));
        match (margin, rate) {
            (Some(m), Some(r)) => format!("{m} and {r}"),
            (Some(x), None) | (None, Some(x)) => x,
            (None, None) => "nothing".into(),
        }
    }
}

/// What the `timing` step reads of epoch e − 1.
#[derive(Clone, Copy, Debug, Default)]
pub struct PriorEpoch {
    pub version: u8,
    pub closed_at_ms: Option<i64>,
    /// When its y was stored.
    pub resolved_at_ms: Option<i64>,
}

/// Why a verifier refuses a version-1 epoch by default.
pub const VERSION_1_REFUSED: &str = "version 1: the epoch makes no timing commitment, so an \
     operator could have closed it once it had evaluated its candidates; refused unless \
     version 1 is allowed (--allow-version-1; docs/PROTOCOL.md §10, \"Version 1\")";

/// The `timing` step (docs/PROTOCOL.md §10, "Timing"): the epoch's games were fixed before y of
/// epoch e − 1 was stored, after e − 1's were, and its window keeps the bound of its declared
/// margin and rate. Version-1 epochs carry no timing commitment: they fail, unless the floor
/// allows them, and then pass, saying so, unless they follow a version-2 epoch (a downgrade).
pub fn timing_step(f: &TimingFacts) -> Result<String, String> {
    let e = f.epoch;
    let Some(timing) = f.timing else {
        if f.floor.asked() {
            return Err(format!(
                "version 1: the epoch makes no timing commitment, and {} was required",
                f.floor.describe()
            ));
        }
        if !f.floor.allow_version_1 {
            return Err(VERSION_1_REFUSED.into());
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
    if timing.margin_centi < f.floor.margin_centi {
        return Err(format!(
            "the epoch declares margin {}, below the {} this check requires",
            vrs_engine::timing::centi(u64::from(timing.margin_centi)),
            vrs_engine::timing::centi(u64::from(f.floor.margin_centi))
        ));
    }
    if timing.squarings_per_second < f.floor.rate {
        return Err(format!(
            "the epoch declares R = {} squarings/s, below the {} this check requires: its window \
             is timed for a slower squarer than the verifier compares against",
            timing.squarings_per_second, f.floor.rate
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
