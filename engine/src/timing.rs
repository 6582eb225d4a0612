//! The timing rule of a version-2 epoch (docs/PROTOCOL.md §10, "Timing"): how long its set of
//! games may stay open, so that an adversary whose squarer is up to A times faster than the
//! server's cannot evaluate any set of games the epoch could still take.
//!
//! a(T) = T / (A · R) is the time such an adversary needs for T squarings (R: the server's
//! squarings per second, A: the margin). y_e needs y_p, which needs T_p squarings from p's
//! close, then T_e squarings over a bet set that includes games accepted no earlier than e
//! opened. So e must close by
//!
//! ```text
//! bound_e = max(opened_e, closed_p + a(T_p)) + a(T_e)      (p ≥ 1)
//! bound_e = opened_e + a(T_e)                               (p = 0: y_0 is public)
//! ```
//!
//! checked exactly in integers, times in milliseconds, margin in hundredths:
//!
//! ```text
//! D = margin_centi · R,  K = 100 000
//! closed_e · D ≤ max(opened_e · D, closed_p · D + T_p · K) + T_e · K
//! ```

use crate::epoch::Timing;

/// The least margin an epoch may declare: below 1, an adversary slower than the server could
/// evaluate the epoch's bets before it closes.
pub const MIN_MARGIN_CENTI: u32 = 100;

/// T · K over D is a(T) in milliseconds (margin in hundredths, rate per second).
const K: u128 = 100_000;

/// How far an operator's clock may run ahead of the anchor chain's block timestamps: an epoch
/// in an anchor batch must have closed and resolved no later than this after the block that
/// anchors it.
pub const ANCHOR_CLOCK_TOLERANCE_MS: i64 = 30_000;

/// How long after the last epoch of an anchor batch resolved (by the operator's clock) the
/// block anchoring it may come. It bounds how far the operator's published times may fall
/// behind real time over a batch: an operator that held epochs open longer than it says must
/// publish earlier times than the real ones, and that drift accumulates until the next anchor.
pub const ANCHOR_LAG_MAX_MS: i64 = 600_000;

/// Checks one anchored epoch's published times against its anchor block's timestamp (Unix ms):
/// closed and resolved no later than the block (with [`ANCHOR_CLOCK_TOLERANCE_MS`]); and, for
/// the last epoch of its batch (`last_of_batch`), resolved no more than [`ANCHOR_LAG_MAX_MS`]
/// before the block.
pub fn check_anchor_time(
    closed_at_ms: i64,
    resolved_at_ms: i64,
    block_ms: i64,
    last_of_batch: bool,
) -> Result<String, String> {
    let latest = closed_at_ms.max(resolved_at_ms);
    if latest > block_ms + ANCHOR_CLOCK_TOLERANCE_MS {
        return Err(format!(
            "resolved at {latest} ms by the operator's clock, {} s after the block that anchors \
             it ({block_ms} ms; tolerance {} s)",
            (latest - block_ms) / 1000,
            ANCHOR_CLOCK_TOLERANCE_MS / 1000
        ));
    }
    let lag = block_ms - resolved_at_ms;
    if last_of_batch && lag > ANCHOR_LAG_MAX_MS {
        return Err(format!(
            "anchored {} s after the operator says the batch's last epoch resolved (at most {} \
             s): its published times may lag real time by that much",
            lag / 1000,
            ANCHOR_LAG_MAX_MS / 1000
        ));
    }
    Ok(format!(
        "resolved {} s before its anchor block",
        lag.max(0) / 1000
    ))
}

/// What the rule needs of the predecessor p (p ≥ 1): when its games were fixed and its T.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Predecessor {
    pub closed_at_ms: u64,
    pub iterations: u64,
}

/// a(T) in milliseconds: T squarings at A · R per second.
pub fn allowance_ms(iterations: u64, margin_centi: u32, squarings_per_second: u64) -> f64 {
    let d = f64::from(margin_centi) * squarings_per_second as f64;
    if d <= 0.0 {
        return 0.0;
    }
    iterations as f64 * K as f64 / d
}

/// bound_e in milliseconds, rounded down (the latest whole millisecond the rule allows);
/// `None` when the margin or the rate is zero, or the numbers are too large to compute with
/// (beyond any real clock or squarer).
pub fn close_bound_ms(t: &Timing, predecessor: Option<Predecessor>) -> Option<u64> {
    let d = u128::from(t.margin_centi).checked_mul(u128::from(t.squarings_per_second))?;
    if d == 0 {
        return None;
    }
    let bound = start_scaled(t, predecessor, d)?.checked_add(u128::from(t.iterations) * K)?;
    u64::try_from(bound / d).ok()
}

/// max(opened_e · D, closed_p · D + T_p · K): D times the earliest moment an adversary could
/// begin to evaluate a bet set of e; `None` on overflow.
fn start_scaled(t: &Timing, predecessor: Option<Predecessor>, d: u128) -> Option<u128> {
    let opened = u128::from(t.opened_at_ms).checked_mul(d)?;
    let Some(p) = predecessor else {
        return Some(opened);
    };
    let chained = u128::from(p.closed_at_ms)
        .checked_mul(d)?
        .checked_add(u128::from(p.iterations) * K)?;
    Some(opened.max(chained))
}

/// The largest margin (in hundredths) under which this epoch's close still keeps the rule:
/// what its published times actually guarantee.
pub fn effective_margin_centi(t: &Timing, predecessor: Option<Predecessor>) -> u64 {
    let r = u128::from(t.squarings_per_second.max(1));
    // The rule holds if either term of the max does: the window alone, or the chain through p.
    let by_window = ratio(
        u128::from(t.iterations) * K,
        t.closed_at_ms.saturating_sub(t.opened_at_ms),
        r,
    );
    let by_chain = predecessor.map_or(0, |p| {
        ratio(
            (u128::from(p.iterations) + u128::from(t.iterations)) * K,
            t.closed_at_ms.saturating_sub(p.closed_at_ms),
            r,
        )
    });
    let m = by_window.max(by_chain);
    u64::try_from(m).unwrap_or(u64::MAX)
}

/// ⌊num / (span · r)⌋, unbounded (u128::MAX) for a span of zero.
fn ratio(num: u128, span_ms: u64, r: u128) -> u128 {
    match u128::from(span_ms) * r {
        0 => u128::MAX,
        den => num / den,
    }
}

/// Checks a version-2 epoch's timing commitment (`epoch` is e). `predecessor` must be given
/// exactly when `t.previous ≥ 1`. `Ok`: a sentence on what holds; `Err`: which part fails.
pub fn check(epoch: u64, t: &Timing, predecessor: Option<Predecessor>) -> Result<String, String> {
    if t.margin_centi < MIN_MARGIN_CENTI {
        return Err(format!(
            "declared margin {} is below 1: an adversary slower than the server could evaluate \
             this epoch's bets before it closed",
            centi(u64::from(t.margin_centi))
        ));
    }
    if t.squarings_per_second == 0 || t.iterations == 0 {
        return Err("the declared squaring rate and T must be positive".into());
    }
    if t.previous >= epoch {
        return Err(format!(
            "the input is taken from epoch {}, not an earlier one",
            t.previous
        ));
    }
    if t.closed_at_ms < t.opened_at_ms {
        return Err(format!(
            "closed at {} ms, before it opened at {} ms",
            t.closed_at_ms, t.opened_at_ms
        ));
    }
    match (t.previous, predecessor) {
        (0, None) => {}
        (p, Some(pred)) if p >= 1 => {
            if pred.closed_at_ms > t.opened_at_ms {
                return Err(format!(
                    "epoch {p} closed at {} ms, after this epoch opened at {} ms",
                    pred.closed_at_ms, t.opened_at_ms
                ));
            }
        }
        (p, _) => {
            return Err(format!(
                "the predecessor's record (epoch {p}) is needed and was not given"
            ))
        }
    }
    let bound = close_bound_ms(t, predecessor).ok_or_else(|| {
        format!(
            "margin {} at {} squarings/s and these times are beyond what the rule computes with",
            centi(u64::from(t.margin_centi)),
            t.squarings_per_second
        )
    })?;
    let window = t.closed_at_ms - t.opened_at_ms;
    let a = allowance_ms(t.iterations, t.margin_centi, t.squarings_per_second);
    let margin = centi(u64::from(t.margin_centi));
    let effective = centi(effective_margin_centi(t, predecessor));
    if t.closed_at_ms > bound {
        return Err(format!(
            "window of {window} ms closed at {} ms, after its bound {bound} ms: at margin \
             {margin} and {} squarings/s, T = {} allows {a:.0} ms (effective margin {effective})",
            t.closed_at_ms, t.squarings_per_second, t.iterations
        ));
    }
    Ok(format!(
        "window of {window} ms closed {} ms before its bound: an adversary {margin}× as fast as \
         {} squarings/s needs {a:.0} ms for T = {} (effective margin {effective})",
        bound - t.closed_at_ms,
        t.squarings_per_second,
        t.iterations
    ))
}

/// A margin in hundredths as a decimal ("1.5", "2").
pub fn centi(m: u64) -> String {
    match m {
        u64::MAX => "unbounded".into(),
        m if m % 100 == 0 => format!("{}", m / 100),
        m if m % 10 == 0 => format!("{}.{}", m / 100, (m % 100) / 10),
        m => format!("{}.{:02}", m / 100, m % 100),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn timing(opened: u64, closed: u64) -> Timing {
        Timing {
            previous: 4,
            iterations: 1_000_000,
            opened_at_ms: opened,
            closed_at_ms: closed,
            margin_centi: 200,
            squarings_per_second: 1_000_000,
        }
    }

    /// a(T) = 10^6 / (2 · 10^6) s = 500 ms.
    #[test]
    fn the_window_alone_bounds_an_epoch_from_the_genesis() {
        let t = Timing {
            previous: 0,
            ..timing(10_000, 10_500)
        };
        assert_eq!(close_bound_ms(&t, None), Some(10_500));
        assert!(check(1, &t, None).is_ok());
        let late = Timing {
            closed_at_ms: 10_501,
            ..t
        };
        let err = check(1, &late, None).unwrap_err();
        assert!(err.contains("after its bound 10500"), "{err}");
    }

    /// With p closed at 9 000: y_p no earlier than 9 500, so e may close up to 10 000 even
    /// though it opened at 9 400 (a window of 600 ms > a(T)).
    #[test]
    fn the_chain_through_the_predecessor_extends_the_bound() {
        let p = Predecessor {
            closed_at_ms: 9_000,
            iterations: 1_000_000,
        };
        let t = timing(9_400, 10_000);
        assert_eq!(close_bound_ms(&t, Some(p)), Some(10_000));
        assert!(check(5, &t, Some(p)).is_ok());
        assert_eq!(effective_margin_centi(&t, Some(p)), 200);
        assert!(check(5, &timing(9_400, 10_001), Some(p)).is_err());
        // A predecessor that closed long before: the window rule alone.
        let old = Predecessor {
            closed_at_ms: 1_000,
            iterations: 1_000_000,
        };
        assert_eq!(close_bound_ms(&t, Some(old)), Some(9_900));
    }

    #[test]
    fn malformed_commitments_fail() {
        let p = Some(Predecessor {
            closed_at_ms: 9_000,
            iterations: 1,
        });
        let t = timing(9_400, 9_500);
        assert!(check(
            5,
            &Timing {
                margin_centi: 99,
                ..t
            },
            p
        )
        .is_err());
        assert!(check(
            5,
            &Timing {
                squarings_per_second: 0,
                ..t
            },
            p
        )
        .is_err());
        assert!(check(4, &t, p).is_err(), "p = e");
        assert!(check(5, &t, None).is_err(), "p's record missing");
        assert!(
            check(5, &timing(9_400, 9_300), p).is_err(),
            "closed before opened"
        );
        let after = Some(Predecessor {
            closed_at_ms: 9_401,
            iterations: 1,
        });
        assert!(check(5, &t, after).is_err(), "p closed after e opened");
    }

    #[test]
    fn exact_at_the_millisecond_without_floats() {
        // D = 3 · 10^6 · 1.5 → a(T) = 7 · 10^5 / 4.5·10^6 s = 155.55… ms.
        let t = Timing {
            previous: 0,
            iterations: 700_000,
            opened_at_ms: 0,
            closed_at_ms: 155,
            margin_centi: 150,
            squarings_per_second: 3_000_000,
        };
        assert_eq!(close_bound_ms(&t, None), Some(155));
        assert!(check(1, &t, None).is_ok());
        assert!(check(
            1,
            &Timing {
                closed_at_ms: 156,
                ..t
            },
            None
        )
        .is_err());
    }

    /// Numbers from an untrusted record never overflow the check: they fail it.
    #[test]
    fn absurd_numbers_fail_instead_of_wrapping() {
        let t = Timing {
            previous: 0,
            iterations: u64::MAX,
            opened_at_ms: u64::MAX - 1,
            closed_at_ms: u64::MAX,
            margin_centi: u32::MAX,
            squarings_per_second: u64::MAX,
        };
        assert!(check(1, &t, None).is_err());
        let p = Some(Predecessor {
            closed_at_ms: 1,
            iterations: u64::MAX,
        });
        assert!(check(2, &Timing { previous: 1, ..t }, p).is_err());
    }

    #[test]
    fn margins_print_as_decimals() {
        assert_eq!(centi(150), "1.5");
        assert_eq!(centi(200), "2");
        assert_eq!(centi(185), "1.85");
        assert_eq!(centi(u64::MAX), "unbounded");
    }
}
