//! Counts of ordered outcomes: how often each of the 6^n ordered dice results came up. They are
//! all the chi-square tests and the return to player need (each bet's payout is a function of
//! the ordered result), so a run of any length is summarised in 36 or 216 counters.

/// The ordered outcomes of one game's rolls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tally {
    /// Dice per roll: 2 for dice, 3 for Sic Bo.
    pub dice: usize,
    /// counts[i] for the ordered result whose dice, as base-6 digits (die − 1), read i.
    pub counts: Vec<u64>,
}

impl Tally {
    /// An empty tally of rolls of `dice` dice (2 or 3).
    pub fn new(dice: usize) -> Self {
        Tally {
            dice,
            counts: vec![0; 6usize.pow(dice as u32)],
        }
    }

    /// Adds one roll; Err when it does not have `dice` dice in 1..=6.
    pub fn add(&mut self, roll: &[u8]) -> Result<(), String> {
        let index = self.index(roll)?;
        self.counts[index] += 1;
        Ok(())
    }

    /// The cell of a roll.
    pub fn index(&self, roll: &[u8]) -> Result<usize, String> {
        if roll.len() != self.dice || roll.iter().any(|d| !(1..=6).contains(d)) {
            return Err(format!(
                "a roll must be {} dice in 1..=6, not {roll:?}",
                self.dice
            ));
        }
        Ok(roll.iter().fold(0, |i, d| i * 6 + usize::from(d - 1)))
    }

    /// The dice of cell `i`.
    pub fn roll_of(&self, mut i: usize) -> Vec<u8> {
        let mut roll = vec![0u8; self.dice];
        for slot in roll.iter_mut().rev() {
            *slot = (i % 6) as u8 + 1;
            i /= 6;
        }
        roll
    }

    /// Every cell with its dice and count.
    pub fn cells(&self) -> impl Iterator<Item = (Vec<u8>, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .map(|(i, &n)| (self.roll_of(i), n))
    }

    /// How many rolls.
    pub fn rolls(&self) -> u64 {
        self.counts.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_round_trip_and_bad_rolls_are_refused() {
        let mut t = Tally::new(3);
        for i in 0..216 {
            let roll = t.roll_of(i);
            assert_eq!(t.index(&roll), Ok(i));
        }
        t.add(&[6, 1, 2]).expect("a roll");
        assert_eq!(t.counts[5 * 36 + 1], 1);
        assert!(t.add(&[0, 1, 2]).is_err());
        assert!(t.add(&[1, 2]).is_err());
        assert_eq!(t.rolls(), 1);
    }
}
