//! Exact money. Stakes and payouts are whole cents in a `u64`, never `f64`: a binary float
//! cannot hold 0.10 exactly, and a payout that is off by a cent cannot be verified by anyone
//! recomputing it. Amounts arrive as the literal text of a JSON number, so they are parsed
//! from that text (not from a float serde_json already rounded).

use std::fmt;
use std::str::FromStr;

/// A non-negative amount of money in cents (hundredths of a unit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Amount(u64);

/// Exponents beyond this magnitude are clamped while parsing: any such number is either far too
/// large for a `u64` of cents or has far more than two fraction digits, so its exact value no
/// longer matters, only that it is rejected (and that parsing it cannot overflow).
const EXPONENT_CLAMP: i64 = 1_000_000_000_000;

impl Amount {
    /// Zero.
    pub const ZERO: Amount = Amount(0);

    /// The amount of `c` cents.
    pub const fn from_cents(c: u64) -> Self {
        Amount(c)
    }

    /// The amount in cents.
    pub fn cents(self) -> u64 {
        self.0
    }

    /// Parse the exact text of a JSON number (e.g. `1`, `1.5`, `1.50`, `1.500`, `1e2`,
    /// `2.5E-1`, `-3`).
    ///
    /// Ok only if the value is an exact multiple of 0.01 and non-negative; trailing zeros do not
    /// count as fraction digits (`1.500` is 1.50, `1e-2` is 0.01). Huge exponents and long digit
    /// strings (`1e999999999`, 400 digits) are rejected with a message, never overflow or panic.
    pub fn parse_json_number(text: &str) -> Result<Amount, String> {
        let text = text.trim();
        // Client input echoed in messages is cut short: a 400-digit number stays readable.
        let shown: String = if text.chars().count() > 40 {
            format!("{}…", text.chars().take(40).collect::<String>())
        } else {
            text.to_string()
        };
        let bytes = text.as_bytes();
        let mut i = 0;

        let negative = bytes.first() == Some(&b'-');
        if negative {
            i += 1;
        }

        // Integer part: `0` or a non-zero digit followed by digits.
        let int_start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        let int_digits = &bytes[int_start..i];
        if int_digits.is_empty() {
            return Err(format!("amount must be a JSON number, got `{shown}`"));
        }
        if int_digits.len() > 1 && int_digits[0] == b'0' {
            return Err(format!(
                "amount must be a JSON number (no leading zeros), got `{shown}`"
            ));
        }

        // Fraction part.
        let mut frac_digits: &[u8] = &[];
        if i < bytes.len() && bytes[i] == b'.' {
            i += 1;
            let frac_start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            frac_digits = &bytes[frac_start..i];
            if frac_digits.is_empty() {
                return Err(format!(
                    "amount must be a JSON number (digits after `.`), got `{shown}`"
                ));
            }
        }

        // Exponent part, clamped so that absurd exponents cannot overflow.
        let mut exponent: i64 = 0;
        if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
            i += 1;
            let mut exp_negative = false;
            if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
                exp_negative = bytes[i] == b'-';
                i += 1;
            }
            let exp_start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                exponent = (exponent * 10 + i64::from(bytes[i] - b'0')).min(EXPONENT_CLAMP);
                i += 1;
            }
            if i == exp_start {
                return Err(format!(
                    "amount must be a JSON number (digits in the exponent), got `{shown}`"
                ));
            }
            if exp_negative {
                exponent = -exponent;
            }
        }
        if i != bytes.len() {
            return Err(format!("amount must be a JSON number, got `{shown}`"));
        }

        // value = digits × 10^(exponent − fraction length), with the significant digits stripped
        // of leading zeros and trailing zeros folded into the exponent.
        let all_digits = int_digits.iter().chain(frac_digits.iter()).copied();
        let significant: Vec<u8> = all_digits.skip_while(|&d| d == b'0').collect();
        let trailing_zeros = significant.iter().rev().take_while(|&&d| d == b'0').count();
        let significant = &significant[..significant.len() - trailing_zeros];
        if significant.is_empty() {
            // Zero, whatever its sign or exponent ("-0" is zero, which is not negative).
            return Ok(Amount::ZERO);
        }
        if negative {
            return Err(format!("amount must not be negative, got `{shown}`"));
        }
        let frac_len = i64::try_from(frac_digits.len()).unwrap_or(i64::MAX);
        let zeros = i64::try_from(trailing_zeros).unwrap_or(i64::MAX);
        // Power of ten applied to `significant` to get cents.
        let cents_exponent = exponent
            .saturating_sub(frac_len)
            .saturating_add(zeros)
            .saturating_add(2);
        if cents_exponent < 0 {
            return Err(format!(
                "amount must have at most 2 fraction digits, got `{shown}`"
            ));
        }
        let too_large = || format!("amount is too large, got `{shown}`");
        // u64::MAX has 20 digits: anything longer cannot fit.
        let sig_len = i64::try_from(significant.len()).unwrap_or(i64::MAX);
        if sig_len.saturating_add(cents_exponent) > 20 {
            return Err(too_large());
        }
        let mut cents: u64 = 0;
        for &d in significant {
            cents = cents
                .checked_mul(10)
                .and_then(|c| c.checked_add(u64::from(d - b'0')))
                .ok_or_else(too_large)?;
        }
        for _ in 0..cents_exponent {
            cents = cents.checked_mul(10).ok_or_else(too_large)?;
        }
        Ok(Amount(cents))
    }
}

impl fmt::Display for Amount {
    /// Always two fraction digits: `0.00`, `1.00`, `10000.00`, `2.37`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:02}", self.0 / 100, self.0 % 100)
    }
}

impl FromStr for Amount {
    type Err = String;

    /// Reads back what [`Display`](fmt::Display) writes: digits, optionally a `.` and one or two
    /// fraction digits (`12.34`, `12.3`, `12`). No sign, no exponent.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (int_part, frac_part) = match s.split_once('.') {
            Some((i, f)) => (i, f),
            None => (s, ""),
        };
        let bad = || format!("invalid amount `{s}`: expected digits with up to 2 fraction digits");
        let is_digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
        if int_part.is_empty()
            || !is_digits(int_part)
            || !is_digits(frac_part)
            || frac_part.len() > 2
            || (s.contains('.') && frac_part.is_empty())
        {
            return Err(bad());
        }
        let units: u64 = int_part.parse().map_err(|_| bad())?;
        let frac: u64 = match frac_part.len() {
            0 => 0,
            1 => u64::from(frac_part.as_bytes()[0] - b'0') * 10,
            _ => frac_part.parse().map_err(|_| bad())?,
        };
        units
            .checked_mul(100)
            .and_then(|c| c.checked_add(frac))
            .map(Amount)
            .ok_or_else(bad)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parse_json_number_table() {
        let ok: &[(&str, u64)] = &[
            ("0", 0),
            ("-0", 0),
            ("0.0", 0),
            ("0e5", 0),
            ("0.01", 1),
            ("1e-2", 1),
            ("1E-2", 1),
            ("0.10", 10),
            ("0.1", 10),
            ("1", 100),
            ("1.5", 150),
            ("1.50", 150),
            ("1.500", 150),
            ("1.5000000000000000000000000000", 150),
            ("2.37", 237),
            ("1e2", 10_000),
            ("1E+2", 10_000),
            ("2.5E-1", 25),
            ("250e-2", 250),
            ("10000", 1_000_000),
            ("10000.00", 1_000_000),
            ("184467440737095516.15", u64::MAX),
        ];
        for &(text, cents) in ok {
            assert_eq!(
                Amount::parse_json_number(text),
                Ok(Amount(cents)),
                "parsing {text}"
            );
        }
        // A long run of trailing zeros is still exact.
        let long_ok = format!("1.{}", "0".repeat(400));
        assert_eq!(Amount::parse_json_number(&long_ok), Ok(Amount(100)));
        let long_zero_exp = format!("1{}e-400", "0".repeat(400));
        assert_eq!(Amount::parse_json_number(&long_zero_exp), Ok(Amount(100)));

        let err: &[(&str, &str)] = &[
            ("1.005", "at most 2 fraction digits"),
            ("0.001", "at most 2 fraction digits"),
            ("12345e-4", "at most 2 fraction digits"),
            ("1e-3", "at most 2 fraction digits"),
            ("1e-999999999", "at most 2 fraction digits"),
            ("1e-99999999999999999999999", "at most 2 fraction digits"),
            ("-3", "negative"),
            ("-0.01", "negative"),
            ("-1e999999999", "negative"),
            ("1e999999999", "too large"),
            ("1e99999999999999999999999999", "too large"),
            ("184467440737095516.16", "too large"),
            ("1e18", "too large"),
            ("01", "leading zeros"),
            ("00.5", "leading zeros"),
            ("", "JSON number"),
            ("-", "JSON number"),
            ("1.", "digits after"),
            (".5", "JSON number"),
            ("1e", "exponent"),
            ("1e+", "exponent"),
            ("+1", "JSON number"),
            ("\"1.00\"", "JSON number"),
            ("1.0.0", "JSON number"),
            ("0x10", "JSON number"),
            ("NaN", "JSON number"),
            ("Infinity", "JSON number"),
            ("true", "JSON number"),
        ];
        for &(text, needle) in err {
            let e = Amount::parse_json_number(text).unwrap_err();
            assert!(e.contains(needle), "parsing {text:?}: {e}");
        }
        let digits400 = "9".repeat(400);
        assert!(Amount::parse_json_number(&digits400)
            .unwrap_err()
            .contains("too large"));
        let frac400 = format!("0.{}1", "0".repeat(400));
        assert!(Amount::parse_json_number(&frac400)
            .unwrap_err()
            .contains("at most 2 fraction digits"));
    }

    #[test]
    fn display_and_from_str() {
        let table: &[(u64, &str)] = &[
            (0, "0.00"),
            (1, "0.01"),
            (10, "0.10"),
            (100, "1.00"),
            (237, "2.37"),
            (1_000_000, "10000.00"),
            (u64::MAX, "184467440737095516.15"),
        ];
        for &(cents, text) in table {
            assert_eq!(Amount(cents).to_string(), text);
            assert_eq!(text.parse::<Amount>(), Ok(Amount(cents)));
        }
        assert_eq!("12.3".parse::<Amount>(), Ok(Amount(1230)));
        assert_eq!("12".parse::<Amount>(), Ok(Amount(1200)));
        assert_eq!("007.05".parse::<Amount>(), Ok(Amount(705)));
        for bad in [
            "",
            ".5",
            "1.",
            "1.234",
            "-1",
            "+1",
            "1e2",
            "1,00",
            " 1",
            "184467440737095516.16",
            "99999999999999999999",
        ] {
            assert!(bad.parse::<Amount>().is_err(), "{bad:?} should be rejected");
        }
    }

    proptest! {
        #[test]
        fn display_round_trips(cents in any::<u64>()) {
            let a = Amount(cents);
            prop_assert_eq!(a.to_string().parse::<Amount>(), Ok(a));
            prop_assert_eq!(Amount::parse_json_number(&a.to_string()), Ok(a));
        }

        #[test]
        fn exponent_forms_agree(cents in 1u64..10_000_000_000, shift in 0u32..6) {
            // cents × 10^shift written as an integer with exponent −(2 + shift).
            let text = format!("{}{}e-{}", cents, "0".repeat(shift as usize), 2 + shift);
            prop_assert_eq!(Amount::parse_json_number(&text), Ok(Amount(cents)));
        }
    }
}
