//! Chi-square goodness-of-fit tests of dice against their exact probabilities (every ordered
//! result of n fair dice has probability 6^−n): the faces, the ordered pairs of two dice, the
//! totals, and Sic Bo's triples.

use super::special::{chi2_isf, chi2_sf, noncentral_chi2_sf};
use super::tally::Tally;
use serde::Serialize;

/// One test's result.
#[derive(Clone, Debug, Serialize)]
pub struct ChiSquare {
    /// What was counted, e.g. `faces`.
    pub name: String,
    /// How many observations were classified (dice for `faces`, rolls otherwise).
    pub observations: u64,
    pub cells: usize,
    pub df: u32,
    pub statistic: f64,
    /// P(χ²_df > statistic) under fair dice.
    pub p_value: f64,
    /// The counts, cell by cell.
    pub observed: Vec<u64>,
    /// The expected counts under fair dice.
    pub expected: Vec<f64>,
}

/// Pearson's statistic of `observed` counts against cell probabilities `probs` (summing to 1).
pub fn goodness_of_fit(name: &str, observed: &[u64], probs: &[f64]) -> ChiSquare {
    let n: u64 = observed.iter().sum();
    let expected: Vec<f64> = probs.iter().map(|p| n as f64 * p).collect();
    let statistic = observed
        .iter()
        .zip(&expected)
        .map(|(&o, &e)| (o as f64 - e).powi(2) / e)
        .sum();
    let df = observed.len().saturating_sub(1) as u32;
    ChiSquare {
        name: name.to_owned(),
        observations: n,
        cells: observed.len(),
        df,
        statistic,
        p_value: chi2_sf(statistic, f64::from(df)),
        observed: observed.to_vec(),
        expected,
    }
}

/// Groups the ordered results of a tally by `key` (a cell index in 0..cells): the observed
/// counts and the exact probabilities of the groups.
fn grouped(t: &Tally, cells: usize, key: impl Fn(&[u8]) -> usize) -> (Vec<u64>, Vec<f64>) {
    let mut observed = vec![0u64; cells];
    let mut ways = vec![0u64; cells];
    for (roll, n) in t.cells() {
        let k = key(&roll);
        observed[k] += n;
        ways[k] += 1;
    }
    let all = t.counts.len() as f64;
    (observed, ways.iter().map(|&w| w as f64 / all).collect())
}

/// The faces of every die rolled (each die of each roll is one observation).
pub fn faces(t: &Tally) -> ChiSquare {
    let mut observed = [0u64; 6];
    for (roll, n) in t.cells() {
        for d in roll {
            observed[usize::from(d - 1)] += n;
        }
    }
    goodness_of_fit("faces", &observed, &[1.0 / 6.0; 6])
}

/// Every ordered result (36 cells for two dice, 216 for three): pairs and order included.
pub fn ordered(t: &Tally) -> ChiSquare {
    let cells = t.counts.len();
    let name = if t.dice == 2 {
        "ordered pairs"
    } else {
        "ordered triples of dice"
    };
    goodness_of_fit(name, &t.counts, &vec![1.0 / cells as f64; cells])
}

/// The totals (2–12 for two dice, 3–18 for three), each with its exact probability.
pub fn totals(t: &Tally) -> ChiSquare {
    let lowest = t.dice;
    let cells = 5 * t.dice + 1;
    let (observed, probs) = grouped(t, cells, |r| {
        r.iter().map(|&d| usize::from(d)).sum::<usize>() - lowest
    });
    goodness_of_fit("totals", &observed, &probs)
}

/// Sic Bo's triples: each of the six triples (1/216 each) and "no triple" (210/216).
pub fn triples(t: &Tally) -> ChiSquare {
    let (observed, probs) = grouped(t, 7, |r| {
        if r.iter().all(|&d| d == r[0]) {
            usize::from(r[0] - 1)
        } else {
            6
        }
    });
    goodness_of_fit("triples", &observed, &probs)
}

/// The tests run on a game's tally: faces, ordered results and totals; triples for Sic Bo.
pub fn tests_for(t: &Tally) -> Vec<ChiSquare> {
    let mut out = vec![faces(t), ordered(t), totals(t)];
    if t.dice == 3 {
        out.push(triples(t));
    }
    out
}

/// The faces test's power: the probability that it fails, at p-value threshold `alpha`, on
/// `dice` dice from a die that shows one face `excess` (relative: 0.01 is 1 %) more often than
/// 1/6, the others equally less often.
pub fn faces_power(dice: u64, excess: f64, alpha: f64) -> FacesPower {
    let p0 = 1.0 / 6.0;
    let up = p0 * excess;
    let down = up / 5.0;
    // Noncentrality λ = N Σ (p_i − p0)² / p0.
    let lambda = dice as f64 * (up * up + 5.0 * down * down) / p0;
    let threshold = chi2_isf(alpha, 5.0);
    FacesPower {
        dice,
        excess,
        lambda,
        threshold,
        power: noncentral_chi2_sf(threshold, 5.0, lambda),
    }
}

/// See [`faces_power`].
#[derive(Clone, Debug, Serialize)]
pub struct FacesPower {
    pub dice: u64,
    pub excess: f64,
    /// The noncentrality of the statistic under that die.
    pub lambda: f64,
    /// The statistic above which the test fails.
    pub threshold: f64,
    pub power: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tally with every ordered result exactly `k` times: every statistic is 0.
    fn flat(dice: usize, k: u64) -> Tally {
        let mut t = Tally::new(dice);
        t.counts.iter_mut().for_each(|c| *c = k);
        t
    }

    #[test]
    fn fair_counts_give_zero_and_the_right_cells() {
        for dice in [2, 3] {
            for test in tests_for(&flat(dice, 10)) {
                assert!(test.statistic.abs() < 1e-9, "{test:?}");
                assert!((test.p_value - 1.0).abs() < 1e-9);
            }
        }
        let t = flat(2, 1);
        assert_eq!(totals(&t).cells, 11);
        assert_eq!(ordered(&t).df, 35);
        let t = flat(3, 1);
        assert_eq!(totals(&t).cells, 16);
        assert_eq!(triples(&t).cells, 7);
        assert_eq!(faces(&t).observations, 3 * 216);
    }

    #[test]
    fn a_loaded_die_is_seen() {
        // Two dice where each die shows 6 about a fifth more often than the other faces.
        let mut t = Tally::new(2);
        for (i, c) in t.counts.iter_mut().enumerate() {
            let sixes = u64::from(i / 6 == 5) + u64::from(i % 6 == 5);
            *c = 1000 + 200 * sixes;
        }
        let f = faces(&t);
        assert!(f.p_value < 1e-6, "{f:?}");
        // Pearson's statistic by hand.
        let by_hand: f64 = {
            let o: Vec<f64> = (0..6)
                .map(|face| {
                    let mut n = 0u64;
                    for (roll, c) in t.cells() {
                        n += c * roll.iter().filter(|&&d| d == face + 1).count() as u64;
                    }
                    n as f64
                })
                .collect();
            let e = o.iter().sum::<f64>() / 6.0;
            o.iter().map(|x| (x - e).powi(2) / e).sum()
        };
        assert!((f.statistic - by_hand).abs() < 1e-9);
    }

    #[test]
    fn power_of_the_faces_test() {
        // 2·10^6 dice, 1 % more of one face: λ = 2·10^6 · 2·10^-5 = 40.
        let p = faces_power(2_000_000, 0.01, 1e-6);
        assert!((p.lambda - 40.0).abs() < 1e-9);
        assert!(p.power > 0.5 && p.power < 0.9, "{p:?}");
        assert!(faces_power(5_000_000, 0.01, 1e-8).power > 0.99);
    }
}
