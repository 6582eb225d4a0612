//! RFC 8785 JSON Canonicalization Scheme: object members sorted by their UTF-16 code units,
//! no whitespace, strings with the minimal escapes, numbers as ECMAScript prints them. The
//! notary hashes metadata in this form, so anyone can recompute a receipt's leaf from the
//! JSON it shows, whatever the order its members arrive in.

use serde_json::Value;
use std::fmt::Write;

/// The canonical form of `value`. `None` for a number JSON cannot carry in canonical form
/// (not finite; serde_json never produces one from text).
pub fn canonical(value: &Value) -> Option<String> {
    let mut out = String::new();
    write_value(&mut out, value)?;
    Some(out)
}

fn write_value(out: &mut String, value: &Value) -> Option<()> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number(n)?),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, v)?;
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            // RFC 8785 §3.2.3: by UTF-16 code units, not by UTF-8 bytes.
            members.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push('{');
            for (i, (k, v)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_value(out, v)?;
            }
            out.push('}');
        }
    }
    Some(())
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A number as ECMAScript's Number.prototype.toString prints its IEEE 754 double.
fn number(n: &serde_json::Number) -> Option<String> {
    let f = n.as_f64()?;
    if !f.is_finite() {
        return None;
    }
    if f == 0.0 {
        return Some("0".into());
    }
    // Shortest round-trip digits and the decimal exponent, from Rust's `{:e}` (also
    // shortest round-trip): "d.ddde±x".
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e')?;
    let exp: i32 = exp.parse().ok()?;
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i32;
    // ECMAScript: the value is digits × 10^(n − k).
    let n_exp = exp + 1;
    let mut s = String::new();
    if f < 0.0 {
        s.push('-');
    }
    if k <= n_exp && n_exp <= 21 {
        s.push_str(&digits);
        s.extend(std::iter::repeat_n('0', (n_exp - k) as usize));
    } else if 0 < n_exp && n_exp <= 21 {
        s.push_str(&digits[..n_exp as usize]);
        s.push('.');
        s.push_str(&digits[n_exp as usize..]);
    } else if -6 < n_exp && n_exp <= 0 {
        s.push_str("0.");
        s.extend(std::iter::repeat_n('0', (-n_exp) as usize));
        s.push_str(&digits);
    } else {
        s.push_str(&digits[..1]);
        if k > 1 {
            s.push('.');
            s.push_str(&digits[1..]);
        }
        s.push('e');
        s.push(if n_exp > 0 { '+' } else { '-' });
        let _ = write!(s, "{}", (n_exp - 1).abs());
    }
    Some(s)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn num(text: &str) -> String {
        canonical(&serde_json::from_str(text).unwrap()).unwrap()
    }

    #[test]
    fn numbers_print_as_ecmascript_does() {
        // RFC 8785 appendix B and ECMAScript's boundaries.
        for (input, want) in [
            ("0", "0"),
            ("-0.0", "0"),
            ("1", "1"),
            ("-1", "-1"),
            ("1.5", "1.5"),
            ("100", "100"),
            ("1e21", "1e+21"),
            ("1e20", "100000000000000000000"),
            ("123456789012345678901", "123456789012345680000"),
            ("0.000001", "0.000001"),
            ("0.0000001", "1e-7"),
            ("1.2e-7", "1.2e-7"),
            ("9007199254740993", "9007199254740992"),
            ("4.50", "4.5"),
            ("2e-3", "0.002"),
            ("0.1", "0.1"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("5e-324", "5e-324"),
            ("333333333.33333329", "333333333.3333333"),
        ] {
            assert_eq!(num(input), want, "{input}");
        }
    }

    #[test]
    fn members_sort_by_utf16_and_strings_escape_minimally() {
        let v = json!({"b": 1, "a": [true, null, "x\u{1}\n\"é"], "\u{20ac}": 2, "\u{1f600}": 3});
        assert_eq!(
            canonical(&v).unwrap(),
            "{\"a\":[true,null,\"x\\u0001\\n\\\"é\"],\"b\":1,\"€\":2,\"😀\":3}"
        );
        // U+FF01 (FF01) sorts after U+1F600 (D83D …) in UTF-16, before it in UTF-8.
        let v = json!({"\u{ff01}": 1, "\u{1f600}": 2});
        assert_eq!(canonical(&v).unwrap(), "{\"😀\":2,\"！\":1}");
    }

    #[test]
    fn rfc8785_example() {
        let input = r#"{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
            "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
            "literals": [null, true, false]}"#;
        let want = r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#;
        assert_eq!(num(input), want);
    }
}
