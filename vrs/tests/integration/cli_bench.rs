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

/// `vrs bench batch` and `vrs bench verify`: the documented JSON rows for every size, and an
/// SVG chart with one labelled line per backend.
#[test]
fn bench_batch_and_verify_write_json_and_a_chart() {
    let dir = tempfile::tempdir().unwrap();
    for (what, field, per) in [
        ("batch", "squarings_per_s", "ns_per_square"),
        ("verify", "proofs_per_s", "us_per_proof"),
    ] {
        let svg = dir.path().join(format!("{what}.svg"));
        let mut args = vec![
            "bench",
            what,
            "--backend",
            "cpu",
            "--sizes",
            "1,4,32",
            "--modulus",
            "test512",
            "--seconds",
            "0.05",
            "--json",
            "--plot",
            svg.to_str().unwrap(),
        ];
        if what == "verify" {
            args.extend(["--iterations", "50"]);
        }
        let o = vrs(&args, "");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let rows: Vec<Value> = serde_json::from_str(&stdout(&o)).expect("JSON array");
        let sizes: Vec<u64> = rows.iter().filter_map(|r| r["batch"].as_u64()).collect();
        assert_eq!(sizes, [1, 4, 32], "{what}: {rows:?}");
        let scale = if what == "batch" { 1e9 } else { 1e6 };
        for r in &rows {
            assert_eq!(r["backend"], "cpu", "{r}");
            let rate = r[field].as_f64().expect(field);
            let each = r[per].as_f64().expect(per);
            assert!(
                rate > 0.0 && (rate * each / scale - 1.0).abs() < 1e-6,
                "{r}"
            );
        }
        let chart = std::fs::read_to_string(&svg).expect("the chart is written");
        assert!(chart.starts_with("<svg"), "{what}: not SVG");
        let labels: Vec<&str> = chart
            .split("</text>")
            .filter_map(|t| t.rsplit('>').next().map(str::trim))
            .collect();
        assert!(labels.contains(&"cpu"), "{what}: the cpu line is labelled");
    }
}

#[test]
fn bench_batch_refuses_bad_arguments() {
    for args in [
        &["bench", "batch", "--backend", "cpu,nope"][..],
        &["bench", "batch", "--sizes", "1,x"][..],
    ] {
        let o = vrs(args, "");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("invalid value"),
            "{args:?}"
        );
    }
    let o = vrs(&["bench", "batch", "--sizes", "0"], "");
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--sizes"));
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

/// `vrs bench pool --json` on test512 with T_pool = 16 and 2 threads, plus `extra`: the rows
/// and their (backend, threads).
fn pool_rows(extra: &[&str]) -> (Vec<Value>, Vec<(String, u64)>) {
    let mut args = vec![
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
        "--json",
    ];
    args.extend(extra);
    let o = vrs(&args, "");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Vec<Value> = serde_json::from_str(&stdout(&o)).expect("JSON array");
    let plan = rows
        .iter()
        .map(|r| {
            let backend = r["backend"].as_str().unwrap().to_owned();
            (backend, r["threads"].as_u64().unwrap())
        })
        .collect();
    (rows, plan)
}

fn owned(plan: &[(&str, u64)]) -> Vec<(String, u64)> {
    plan.iter().map(|&(b, t)| (b.to_owned(), t)).collect()
}

/// `vrs bench pool --json`: complete entries per second, the yardstick (fast on one thread)
/// first with ratio 1.
#[test]
fn bench_pool_json_rows() {
    let (rows, plan) = pool_rows(&["--backends", "reference,fast"]);
    assert_eq!(
        plan,
        owned(&[("fast", 1), ("fast", 2), ("reference", 1), ("reference", 2)])
    );
    assert_eq!(rows[0]["ratio"], 1.0);
    for r in &rows {
        let rate = r["entries_per_s"].as_f64().unwrap();
        let us = r["us_per_entry"].as_f64().unwrap();
        assert!(rate > 0.0 && (rate * us / 1e6 - 1.0).abs() < 1e-6, "{r}");
    }
}

/// `vrs bench pool --batch`: rows batch:<name> after the single-chain rows, on every thread,
/// computed by the pool generator's path, with the ratio to the yardstick.
#[test]
fn bench_pool_batch_rows() {
    let batch = [
        "--backends",
        "fast",
        "--batch",
        "cpu,simd",
        "--batch-size",
        "8",
    ];
    let (rows, plan) = pool_rows(&batch);
    assert_eq!(
        plan,
        owned(&[
            ("fast", 1),
            ("fast", 2),
            ("batch:cpu", 2),
            ("batch:simd", 2)
        ])
    );
    let yardstick = rows[0]["entries_per_s"].as_f64().unwrap();
    for r in &rows[2..] {
        let rate = r["entries_per_s"].as_f64().unwrap();
        let ratio = r["ratio"].as_f64().unwrap();
        assert!(
            rate > 0.0 && (rate / yardstick / ratio - 1.0).abs() < 1e-9,
            "{r}"
        );
    }
    let o = vrs(&["bench", "pool", "--batch", "cpu,nope"], "");
    assert_eq!(o.status.code(), Some(2));
}

/// `vrs bench batch --simd-kernel`: one simd row per kernel, labelled simd:<kernel>; a name
/// that is no kernel is refused with the list.
#[test]
fn bench_batch_rows_per_simd_kernel() {
    let o = vrs(
        &[
            "bench",
            "batch",
            "--backend",
            "cpu,simd",
            "--simd-kernel",
            "portable",
            "--sizes",
            "4",
            "--modulus",
            "test512",
            "--seconds",
            "0.05",
            "--json",
        ],
        "",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Vec<Value> = serde_json::from_str(&stdout(&o)).expect("JSON array");
    let labels: Vec<&str> = rows.iter().filter_map(|r| r["backend"].as_str()).collect();
    assert_eq!(labels, ["cpu", "simd:portable"]);
    let o = vrs(&["bench", "batch", "--simd-kernel", "sse2"], "");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("avx512ifma-256"), "{err}");
}
