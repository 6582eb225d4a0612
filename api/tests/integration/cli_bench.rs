//! `vrs bench vdf --json`: one row per backend with the documented fields.

use crate::{stdout, vrs};
use serde_json::Value;

#[test]
fn bench_vdf_json_rows() {
    let o = vrs(
        &[
            "bench",
            "vdf",
            "--seconds",
            "0.05",
            "--rounds",
            "2",
            "--json",
        ],
        "",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Vec<Value> = serde_json::from_str(&stdout(&o)).expect("JSON array");
    let names: Vec<&str> = rows.iter().filter_map(|r| r["backend"].as_str()).collect();
    for want in ["fast", "fast-portable", "crypto-bigint", "reference"] {
        assert!(names.contains(&want), "missing {want} in {names:?}");
    }
    let with_gmp = names.contains(&"gmp");
    for r in &rows {
        let ns = r["ns_per_square"].as_f64().expect("ns_per_square");
        let per_s = r["squarings_per_s"].as_f64().expect("squarings_per_s");
        assert!(ns > 0.0 && (ns * per_s / 1e9 - 1.0).abs() < 1e-6, "{r}");
        // ratio_to_gmp is a number exactly when the build has GMP.
        assert_eq!(r["ratio_to_gmp"].is_number(), with_gmp, "{r}");
    }
    assert_eq!(with_gmp, cfg!(feature = "gmp"));
    if with_gmp {
        let ratios: Vec<f64> = rows
            .iter()
            .filter(|r| r["backend"].as_str().is_some_and(|b| b.starts_with("gmp")))
            .filter_map(|r| r["ratio_to_gmp"].as_f64())
            .collect();
        // The yardstick is the faster GMP path, so it reads exactly 1.
        assert!(
            ratios.iter().any(|&r| (r - 1.0).abs() < 1e-12),
            "{ratios:?}"
        );
    }
}

#[test]
fn bench_rejects_unknown_backend() {
    let o = vrs(&["bench", "vdf", "--backends", "fast,nope"], "");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn help_explains_the_commands() {
    let o = vrs(&["--help"], "");
    let text = stdout(&o);
    for word in ["vdf", "bench"] {
        assert!(text.contains(word), "{text}");
    }
    let o = vrs(&["vdf", "prove", "--help"], "");
    assert!(stdout(&o).contains("--iterations"));
}

/// `vrs bench pool --json`: complete entries per second, the yardstick (fast on one thread)
/// first with ratio 1.
#[test]
fn bench_pool_json_rows() {
    let o = vrs(
        &[
            "bench",
            "pool",
            "--modulus",
            "test512",
            "--iterations",
            "16",
            "--seconds",
            "0.1",
            "--threads",
            "2",
            "--backends",
            "reference,fast",
            "--json",
        ],
        "",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Vec<Value> = serde_json::from_str(&stdout(&o)).expect("JSON array");
    let plan: Vec<(&str, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["backend"].as_str().unwrap(),
                r["threads"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        plan,
        [("fast", 1), ("fast", 2), ("reference", 1), ("reference", 2)]
    );
    assert_eq!(rows[0]["ratio"], 1.0);
    for r in &rows {
        let rate = r["entries_per_s"].as_f64().unwrap();
        let us = r["us_per_entry"].as_f64().unwrap();
        assert!(rate > 0.0 && (rate * us / 1e6 - 1.0).abs() < 1e-6, "{r}");
    }
}
