//! How epochs are laid out for a security margin (docs/PROTOCOL.md §10, "Timing"): how many
//! VDFs run side by side and how many squarings each takes, from the margin, the epoch length
//! asked for and this CPU's squaring rate; and the settings that cannot keep the rule, refused
//! with what to change.

use vrs_engine::timing::{centi, MIN_MARGIN_CENTI};

/// The least time an epoch takes games: below it, closing and committing epochs would be most
/// of the work.
pub const MIN_EPOCH_MS: u64 = 20;

/// The largest margin accepted (a hundred VDF lanes).
pub const MAX_MARGIN_CENTI: u32 = 10_000;

/// The default margin: one VDF lane keeps 5 s epochs on a 2-core machine (see [`lanes`]).
pub const DEFAULT_MARGIN: &str = "1.5";

/// Share of a one-lane epoch given to its T squarings: the lane's next VDF starts a few
/// milliseconds after the last one ends (the proof runs beside it).
const RSA_SHARE: f64 = 0.95;
/// The same for class groups, whose lane also carries the proof (chiavdf's prover hands y out
/// with it), and whose calibration runs about 6 % above the rate sustained over an epoch
/// (docs/PERFORMANCE.md, "A class-group epoch in the service").
const CLASS_SHARE: f64 = 0.8;

/// A margin up to this (in hundredths) runs on one lane: its epochs close at the gate of the
/// previous one, well within the bound max(opened, closed_p + a) + a = closed_{e−1} + 2a.
const ONE_LANE_MAX_CENTI: u32 = 180;

/// Parses a margin such as "1.5" into hundredths, refusing what the rule cannot use.
pub fn parse_margin(s: &str) -> Result<u32, String> {
    let s = s.trim();
    let (whole, frac) = match s.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (s, None),
    };
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || frac.is_some_and(|f| !digits(f) || f.len() > 2) {
        return Err(format!(
            "{s:?} is not a margin: give a number such as 1.5 or 4 (two decimals at most)"
        ));
    }
    let whole: u32 = whole.parse().map_err(|_| format!("{s:?} is too large"))?;
    let frac: u32 = format!("{:0<2}", frac.unwrap_or("")).parse().unwrap_or(0);
    let m = whole
        .checked_mul(100)
        .and_then(|w| w.checked_add(frac))
        .ok_or_else(|| format!("{s:?} is too large"))?;
    if m < MIN_MARGIN_CENTI {
        return Err(format!(
            "margin {s} is below 1: an adversary slower than this server could evaluate an \
             epoch's bets before it closes"
        ));
    }
    if m > MAX_MARGIN_CENTI {
        return Err(format!(
            "margin {s} is above {}",
            centi(u64::from(MAX_MARGIN_CENTI))
        ));
    }
    Ok(m)
}

/// A rate flag (`--min-rate`, `--max-rate`): a whole number of squarings per second, at least 1, written out or with an
/// exponent (`2e6`).
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let refuse =
        || format!("{s:?} is not a rate: give squarings per second, such as 2000000 or 2e6");
    if let Ok(r) = s.parse::<u64>() {
        return if r >= 1 { Ok(r) } else { Err(refuse()) };
    }
    let x: f64 = s.parse().map_err(|_| refuse())?;
    if x.is_finite() && x >= 1.0 && x.fract() == 0.0 && x <= 1e18 {
        Ok(x as u64)
    } else {
        Err(refuse())
    }
}

/// VDFs run side by side for `margin_centi`: one up to 1.8, else ⌈1.1·A⌉ (a lane must finish
/// its T squarings, about A windows, within `lanes` windows, with a tenth to spare).
pub fn lanes(margin_centi: u32) -> u64 {
    if margin_centi <= ONE_LANE_MAX_CENTI {
        1
    } else {
        u64::from(margin_centi * 11).div_ceil(1000)
    }
}

/// The epochs a service runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    /// T at the start-up rate.
    pub iterations: u64,
    pub lanes: u64,
    pub margin_centi: u32,
    /// About how long each epoch takes games, at the measured rate.
    pub epoch_ms: f64,
    /// Squarings per second of rate that one epoch's T takes (T = rate × this), when T
    /// follows the rate; None when --iterations fixed it.
    pub seconds_per_rate: Option<f64>,
}

impl Schedule {
    /// T of an epoch opened when the squarer runs at `rate`: calibrated T follows the rate the
    /// last VDF reached, so that epochs keep their length on a loaded or throttled machine
    /// (and a start-up calibration that ran fast costs only the first epochs).
    pub fn iterations_at(&self, rate: f64) -> u64 {
        match self.seconds_per_rate {
            Some(secs) if rate >= 1.0 => ((rate * secs).ceil() as u64).max(1),
            _ => self.iterations,
        }
    }
}

/// What the layout is computed from.
#[derive(Clone, Copy, Debug)]
pub struct Ask {
    pub margin_centi: u32,
    /// --epoch-ms, and whether it was given (flag or environment) rather than defaulted.
    pub epoch_ms: u64,
    pub epoch_ms_given: bool,
    /// --iterations, if given.
    pub iterations: Option<u64>,
    /// This CPU's squarings per second, measured at start-up.
    pub rate: f64,
    pub class_group: bool,
}

/// The layout for `ask`, or why it cannot keep the timing rule (with what to change).
pub fn schedule(ask: &Ask) -> Result<Schedule, String> {
    let lanes = lanes(ask.margin_centi);
    let a = f64::from(ask.margin_centi) / 100.0;
    let rate = ask.rate.max(1.0);
    let share = if ask.class_group {
        CLASS_SHARE
    } else {
        RSA_SHARE
    };
    // One lane: an epoch lasts about its predecessor's VDF. Several: a(T) = T / (A·R).
    let epoch_of = |t: u64| {
        if lanes == 1 {
            t as f64 / rate * 1000.0 / share
        } else {
            t as f64 / (a * rate) * 1000.0
        }
    };
    // Seconds of squaring per epoch: 95 % of it on one lane, A epochs on several.
    let secs_for = |ms: f64| {
        if lanes == 1 {
            ms / 1000.0 * share
        } else {
            ms / 1000.0 * a
        }
    };
    let t_for = |ms: f64| ((secs_for(ms) * rate).ceil() as u64).max(1);
    let iterations = match ask.iterations {
        None => t_for(ask.epoch_ms as f64),
        Some(t) => {
            let implied = epoch_of(t);
            if implied < MIN_EPOCH_MS as f64 {
                return Err(format!(
                    "--iterations {t} takes about {:.1} ms at this CPU's {:.0} squarings/s, so \
                     epochs would take games for about {implied:.1} ms at security margin {}; \
                     the least is {MIN_EPOCH_MS} ms: raise --iterations to {} or more, or leave \
                     it out to have T calibrated for --epoch-ms",
                    t as f64 / rate * 1000.0,
                    rate,
                    centi(u64::from(ask.margin_centi)),
                    t_for(MIN_EPOCH_MS as f64)
                ));
            }
            if ask.epoch_ms_given && implied < 0.9 * ask.epoch_ms as f64 {
                return Err(format!(
                    "--iterations {t} takes about {:.0} ms at this CPU's {:.0} squarings/s, so \
                     at security margin {} an epoch may take games for about {implied:.0} ms \
                     only, not the {} ms of --epoch-ms (a longer window would let an adversary \
                     that fast evaluate the epoch's bets before it closes): raise --iterations \
                     to {} or more, lower --epoch-ms, or leave --iterations out to have T \
                     calibrated",
                    t as f64 / rate * 1000.0,
                    rate,
                    centi(u64::from(ask.margin_centi)),
                    ask.epoch_ms,
                    t_for(ask.epoch_ms as f64)
                ));
            }
            t
        }
    };
    Ok(Schedule {
        iterations,
        lanes,
        margin_centi: ask.margin_centi,
        epoch_ms: epoch_of(iterations),
        seconds_per_rate: match ask.iterations {
            None => Some(secs_for(ask.epoch_ms as f64)),
            Some(_) => None,
        },
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn ask(margin: &str, epoch_ms: u64, iterations: Option<u64>) -> Ask {
        Ask {
            margin_centi: parse_margin(margin).unwrap_or(0),
            epoch_ms,
            epoch_ms_given: true,
            iterations,
            rate: 1_000_000.0,
            class_group: false,
        }
    }

    #[test]
    fn margins_parse_to_hundredths() {
        assert_eq!(parse_margin("1.5"), Ok(150));
        assert_eq!(parse_margin("2"), Ok(200));
        assert_eq!(parse_margin(" 3.25 "), Ok(325));
        assert_eq!(parse_margin("1.0"), Ok(100));
        for bad in [
            "0.99", "0", "", "1.234", "-2", "abc", "1e3", "101", ".5", "2.",
        ] {
            assert!(parse_margin(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn one_lane_up_to_1_8_then_a_tenth_to_spare() {
        assert_eq!(lanes(100), 1);
        assert_eq!(lanes(150), 1);
        assert_eq!(lanes(180), 1);
        assert_eq!(lanes(181), 2);
        assert_eq!(lanes(200), 3);
        assert_eq!(lanes(400), 5);
        assert_eq!(lanes(1000), 11);
    }

    #[test]
    fn calibrated_t_fills_the_epoch() {
        let one = schedule(&ask("1.5", 5000, None)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(one.lanes, 1);
        assert_eq!(one.iterations, 4_750_000);
        let four = schedule(&ask("4", 1000, None)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(four.lanes, 5);
        assert_eq!(four.iterations, 4_000_000, "a(T) = T/(A·R) = 1 s");
        assert!((four.epoch_ms - 1000.0).abs() < 1e-6);
        // A squarer found 20 % slower than calibrated: T follows, the epoch keeps its length.
        assert_eq!(one.iterations_at(800_000.0), 3_800_000);
        assert_eq!(four.iterations_at(800_000.0), 3_200_000);
        let fixed = schedule(&ask("1.5", 1000, Some(2_000_000))).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            fixed.iterations_at(800_000.0),
            2_000_000,
            "--iterations is kept"
        );
    }

    /// The attack of issue 26: 50 000 squarings cannot cover a 1 s epoch.
    #[test]
    fn a_t_too_small_for_the_epoch_is_refused_with_what_to_change() {
        let err = schedule(&ask("1.5", 1000, Some(50_000))).unwrap_err();
        assert!(err.contains("--iterations 50000"), "{err}");
        assert!(err.contains("950000"), "{err}");
        let ok = schedule(&Ask {
            epoch_ms_given: false,
            ..ask("1.5", 1000, Some(50_000))
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert!((ok.epoch_ms - 52.6).abs() < 0.1, "{ok:?}");
        assert!(schedule(&ask("1.5", 1000, Some(10_000))).is_err());
        let tiny = schedule(&Ask {
            epoch_ms_given: false,
            ..ask("1.5", 1000, Some(10_000))
        })
        .unwrap_err();
        assert!(tiny.contains("the least is 20 ms"), "{tiny}");
    }
}
