//! Writes `shaders/montgomery.wgsl` out for one digit count: the template's double-brace markers
//! become the digit count and straight-line code for the Montgomery squaring, the Montgomery
//! product and the loads and stores, every digit index a constant (so a driver keeps the digits
//! in registers; see the template's header for the arithmetic and its bounds).

use std::fmt::Write;

/// The template, embedded so that the binary carries it.
const TEMPLATE: &str = include_str!("../../../../shaders/montgomery.wgsl");

/// The WGSL source for numbers of `digits` 28-bit digits (2 ≤ digits ≤ 74).
pub(super) fn source(digits: usize) -> String {
    let fills = [
        ("{{DIGITS}}", digits.to_string()),
        ("{{MODULUS_VECS}}", digits.div_ceil(4).to_string()),
        ("{{SQR}}", square(digits)),
        ("{{MUL}}", multiply(digits)),
        (
            "{{LOAD_VALUE}}",
            copy(digits, "(*x)[{j}] = values[{j}u * count + i];"),
        ),
        (
            "{{LOAD_BASE}}",
            copy(digits, "(*x)[{j}] = bases[{j}u * count + i];"),
        ),
        (
            "{{STORE_VALUE}}",
            copy(digits, "values[{j}u * count + i] = (*x)[{j}];"),
        ),
    ];
    let mut src = TEMPLATE.to_owned();
    for (marker, text) in fills {
        src = src.replace(marker, &text);
    }
    src
}

/// One line per digit: `line` with `{j}` replaced by the digit index.
fn copy(digits: usize, line: &str) -> String {
    (0..digits)
        .map(|j| format!("    {}\n", line.replace("{j}", &j.to_string())))
        .collect()
}

/// `let` bindings of N's digits (n0, n1, …) and of the digits of each named array (x0, x1, … for
/// `*x`), widened to u64.
fn bind_digits(out: &mut String, digits: usize, arrays: &[(&str, &str)]) {
    for j in 0..digits {
        let _ = writeln!(
            out,
            "    let n{j} = u64(params.modulus[{}].{});",
            j / 4,
            ["x", "y", "z", "w"][j % 4]
        );
    }
    for (name, array) in arrays {
        for j in 0..digits {
            let _ = writeln!(out, "    let {name}{j} = u64((*{array})[{j}]);");
        }
    }
}

/// `a + b + …` of the terms, or `None` when there are none.
fn sum(terms: &[String]) -> Option<String> {
    (!terms.is_empty()).then(|| terms.join(" + "))
}

/// Column `k` of a Montgomery product whose product terms are `products` (a WGSL sum, if any):
/// adds them and the reduction terms m[j]·N[k−j] of the m digits already chosen to `acc`, then
/// either chooses m[k] (k < D: the column's low 28 bits become zero) or binds result digit
/// t[k−D] (k ≥ D), and moves the carry on.
fn column(out: &mut String, digits: usize, k: usize, products: Option<String>) {
    let lo = (k + 1).saturating_sub(digits);
    let reduction: Vec<String> = (lo..k.min(digits))
        .map(|j| format!("m{j} * n{}", k - j))
        .collect();
    let terms: Vec<String> = products.into_iter().chain(sum(&reduction)).collect();
    let _ = writeln!(out, "    // column {k}");
    if let Some(all) = sum(&terms) {
        let _ = writeln!(out, "    acc = acc + {all};");
    }
    if k < digits {
        let _ = writeln!(out, "    let m{k} = u64((u32(acc) * n0inv) & MASK);");
        let _ = writeln!(out, "    acc = (acc + m{k} * n0) >> 28u;");
    } else {
        let _ = writeln!(out, "    let t{} = u32(acc) & MASK;", k - digits);
        out.push_str("    acc = acc >> 28u;\n");
    }
}

/// Stores t0 … t(D−2) and the last digit (the final carry) into `*array`.
fn store_result(out: &mut String, digits: usize, array: &str) {
    let _ = writeln!(out, "    let t{} = u32(acc);", digits - 1);
    for j in 0..digits {
        let _ = writeln!(out, "    (*{array})[{j}] = t{j};");
    }
}

/// The body of `mont_sqr`: columns 0 .. 2D−2, then the last digit from the carry. Column k's
/// cross products x[i]·x[k−i] (i < k−i) are summed once and doubled.
fn square(digits: usize) -> String {
    let mut out = String::new();
    bind_digits(&mut out, digits, &[("x", "x")]);
    for k in 0..2 * digits - 1 {
        let lo = (k + 1).saturating_sub(digits);
        let cross: Vec<String> = (lo..digits)
            .take_while(|i| 2 * i < k)
            .map(|i| format!("x{i} * x{}", k - i))
            .collect();
        let mut products: Vec<String> = sum(&cross)
            .map(|c| format!("(({c}) << 1u)"))
            .into_iter()
            .collect();
        if k % 2 == 0 {
            products.push(format!("x{h} * x{h}", h = k / 2));
        }
        column(&mut out, digits, k, sum(&products));
    }
    store_result(&mut out, digits, "x");
    out
}

/// The body of `mont_mul`: as [`square`], with every product a[i]·b[k−i].
fn multiply(digits: usize) -> String {
    let mut out = String::new();
    bind_digits(&mut out, digits, &[("a", "a"), ("b", "b")]);
    for k in 0..2 * digits - 1 {
        let lo = (k + 1).saturating_sub(digits);
        let products: Vec<String> = (lo..=k.min(digits - 1))
            .map(|i| format!("a{i} * b{}", k - i))
            .collect();
        column(&mut out, digits, k, sum(&products));
    }
    store_result(&mut out, digits, "a");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_marker_is_filled() {
        for digits in [2, 3, 74] {
            let src = source(digits);
            assert!(!src.contains("{{"), "{digits} digits: a marker is left");
            assert!(src.contains(&format!("const DIGITS: u32 = {digits}u;")));
        }
    }

    /// The square has each cross product once, the diagonal and D² reduction products; the
    /// product 2·D² products: what the bounds in the template count.
    #[test]
    fn product_counts() {
        let d = 74;
        // Every " * " is a digit product but the D choices of m[k] (`* n0inv`).
        let count = |s: &str| s.matches(" * ").count() - s.matches(" * n0inv").count();
        assert_eq!(count(&square(d)), d * (d - 1) / 2 + d + d * d);
        assert_eq!(count(&multiply(d)), 2 * d * d);
    }
}
