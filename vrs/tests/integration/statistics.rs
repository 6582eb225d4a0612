//! Certification statistics (docs/STATISTICS.md): `vrs sample` collects outcomes through the
//! production derivation, locally from a seed or from a running service's epochs, and `vrs
//! stats` checks them. The small deterministic run CI makes: 10^6 rolls of each game from a
//! local epoch chain with a fixed seed pass every chi-square and return-to-player check at a
//! family-wise false-alarm probability of 10^-6; the same samples with one face shown 1 % more
//! often fail. `vrs sp800-22` passes 100 sequences of a fixed-seed raw stream and fails the same
//! stream made slightly biased or repetitive; `vrs sample raw --out -` streams.

use crate::server::{Server, FAST};
use crate::{output_text, vrs};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const ROLLS: u64 = 1_000_000;

fn sample(kind: &str, count: &str, out: &Path, extra: &[&str]) {
    let path = out.to_str().expect("utf-8 path");
    let mut args = vec!["sample", kind, "--count", count, "--out", path];
    args.extend_from_slice(extra);
    let o = vrs(&args, "");
    assert!(o.status.success(), "vrs sample {kind}: {}", output_text(&o));
}

/// `vrs stats --json FILES…`: the exit code and the report.
fn stats(files: &[&Path]) -> (i32, Value) {
    let mut args = vec!["stats", "--json"];
    args.extend(files.iter().map(|f| f.to_str().expect("utf-8 path")));
    let o = vrs(&args, "");
    let report =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", output_text(&o)));
    (o.status.code().unwrap_or(-1), report)
}

/// A copy of a sample where face 1 comes up 1 % more often than 1/6 (relative), the other
/// faces each losing a fifth of that, spread evenly through the file.
fn load_face_one(from: &Path, to: &Path) {
    let text = std::fs::read_to_string(from).expect("sample");
    let mut lines = text.lines();
    let header = lines.next().expect("header");
    let die_columns: Vec<usize> = header
        .split(',')
        .enumerate()
        .filter(|(_, n)| n.starts_with("die"))
        .map(|(i, _)| i)
        .collect();
    let rows: Vec<Vec<String>> = lines
        .map(|l| l.split(',').map(str::to_owned).collect())
        .collect();
    let dice = rows.len() * die_columns.len();
    let mut seen = [0u64; 7];
    for r in &rows {
        for &c in &die_columns {
            seen[r[c].parse::<usize>().expect("a die")] += 1;
        }
    }
    // Move N/600 dice to face 1 (1/6 · 1 % of N), N/3000 from each other face.
    let per_face = dice as u64 / 3000;
    let mut moved = [0u64; 7];
    let mut count = [0u64; 7];
    let mut out = String::with_capacity(text.len());
    out.push_str(header);
    out.push('\n');
    for mut r in rows {
        for &c in &die_columns {
            let face: usize = r[c].parse().expect("a die");
            count[face] += 1;
            // Every (seen / per_face)-th die of the face, so the change is spread out.
            if face != 1 && moved[face] < per_face && count[face] % (seen[face] / per_face) == 0 {
                r[c] = "1".into();
                moved[face] += 1;
            }
        }
        out.push_str(&r.join(","));
        out.push('\n');
    }
    assert!(moved[2..].iter().all(|&m| m == per_face), "{moved:?}");
    std::fs::write(to, out).expect("write the loaded sample");
}

#[test]
fn a_fixed_seed_run_passes_every_check_and_a_die_loaded_by_one_percent_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dice = dir.path().join("dice.csv");
    let sicbo = dir.path().join("sicbo.csv");
    let seed = ["--seed", "ci-statistics"];
    sample("dice", "1e6", &dice, &seed);
    sample("sicbo", "1e6", &sicbo, &seed);
    // One output per 4096 games, listed beside the sample.
    let outputs =
        std::fs::read_to_string(dir.path().join("dice.csv.outputs.csv")).expect("outputs");
    assert_eq!(outputs.lines().count() as u64, 1 + ROLLS.div_ceil(4096));

    let (code, report) = stats(&[&dice, &sicbo]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["passed"], true);
    // 3 chi-square tests and 15 bets of dice, 4 tests and 50 bets of Sic Bo, faces of all dice.
    let checks = report["checks"].as_u64().expect("checks");
    let bets = |i: usize| report["samples"][i]["rtp"].as_array().expect("rtp").len() as u64;
    assert_eq!(bets(0), 15);
    assert_eq!(checks, 3 + bets(0) + 4 + bets(1) + 1);
    let threshold = report["threshold"].as_f64().expect("threshold");
    assert!((threshold * checks as f64 - 1e-6).abs() < 1e-18);
    for s in report["samples"].as_array().expect("samples") {
        assert_eq!(s["rolls"], ROLLS);
    }
    // The faces test over all 5·10^6 dice catches a 1 % excess with probability above 0.99.
    let power = report["power"]["power"].as_f64().expect("power");
    assert!(power > 0.99, "{}", report["power"]);
    assert_eq!(report["power"]["dice"], 5 * ROLLS);

    // --svg draws each game's faces, totals and returns.
    let plots = dir.path().join("plots");
    let o = vrs(
        &[
            "stats",
            "--svg",
            plots.to_str().expect("utf-8"),
            dice.to_str().expect("utf-8"),
            sicbo.to_str().expect("utf-8"),
        ],
        "",
    );
    assert!(o.status.success(), "{}", output_text(&o));
    for game in ["dice", "sicbo"] {
        for (plot, says) in [
            ("faces", "faces of 1000000"),
            ("totals", "totals of 1000000"),
            ("rtp", "return to player of 1000000"),
        ] {
            let svg = std::fs::read_to_string(plots.join(format!("{game}-{plot}.svg")))
                .unwrap_or_else(|e| panic!("{game}-{plot}.svg: {e}"));
            assert!(svg.trim_start().starts_with("<svg"), "{game}-{plot}");
            assert!(svg.contains(says) && svg.contains(game), "{game}-{plot}");
        }
    }

    // The same samples from a die that shows 1 one percent more often.
    let loaded_dice = dir.path().join("loaded-dice.csv");
    let loaded_sicbo = dir.path().join("loaded-sicbo.csv");
    load_face_one(&dice, &loaded_dice);
    load_face_one(&sicbo, &loaded_sicbo);
    let (code, report) = stats(&[&loaded_dice, &loaded_sicbo]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["passed"], false);
    assert_eq!(
        report["all_faces"]["passed"], false,
        "{}",
        report["all_faces"]
    );
}

#[test]
fn samples_are_deterministic_and_the_raw_stream_is_the_games_rng_values() {
    let dir = tempfile::tempdir().expect("tempdir");
    let raw = dir.path().join("raw.bin");
    let again = dir.path().join("again.bin");
    let dice = dir.path().join("dice.csv");
    let small = [
        "--seed",
        "same",
        "--games-per-output",
        "100",
        "--group",
        "test512",
    ];
    sample("raw", "64KiB", &raw, &small);
    sample("raw", "64KiB", &again, &small);
    let bytes = std::fs::read(&raw).expect("raw");
    assert_eq!(bytes.len(), 64 << 10);
    assert_eq!(
        bytes,
        std::fs::read(&again).expect("again"),
        "same seed, same stream"
    );
    sample("dice", "300", &dice, &small);
    let csv = std::fs::read_to_string(&dice).expect("dice");
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("game,output,game_id,player_seed,rng_value,die1,die2,total")
    );
    // Game i of any sample of one seed has the same rngValue: the raw stream is theirs.
    for (i, line) in lines.enumerate() {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f[0], i.to_string());
        assert_eq!(f[3], format!("same/{i}"), "game {i} in its place");
        assert_eq!(f[4], hex::encode(&bytes[32 * i..32 * i + 32]), "game {i}");
        let dice: Vec<u8> = [f[5], f[6]]
            .iter()
            .map(|d| d.parse().expect("die"))
            .collect();
        assert!(dice.iter().all(|d| (1..=6).contains(d)));
        assert_eq!(f[7], (dice[0] + dice[1]).to_string());
    }
    // Another seed, another stream.
    sample(
        "raw",
        "64KiB",
        &again,
        &["--seed", "other", "--group", "test512"],
    );
    assert_ne!(bytes, std::fs::read(&again).expect("again"));
}

#[test]
fn a_sample_from_a_running_service_uses_its_published_outputs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("data"), FAST);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while server.get("/api/v1/epochs/3").1["status"] != "resolved" {
        assert!(
            std::time::Instant::now() < deadline,
            "epoch 3 never resolved"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = dir.path().join("served.csv");
    let url = server.url.clone();
    let from_server = [
        "--server",
        &url,
        "--from",
        "1",
        "--to",
        "3",
        "--group",
        "test512",
        "--games-per-output",
        "100",
    ];
    sample("sicbo", "300", &out, &from_server);
    let outputs =
        std::fs::read_to_string(dir.path().join("served.csv.outputs.csv")).expect("outputs");
    for (e, line) in (1..=3).zip(outputs.lines().skip(1)) {
        let y = server.get(&format!("/api/v1/epochs/{e}")).1["y"].clone();
        assert_eq!(line, format!("{e},epoch {e},{}", y.as_str().expect("y")));
    }
    // More games than the range holds, another group, an epoch the server does not have:
    // refused with exit 2.
    let path = out.to_str().expect("utf-8");
    let with = |count: &'static str, extra: &[&'static str], range: [&'static str; 2]| {
        let mut args = vec![
            "sample", "dice", "--count", count, "--out", path, "--server", &url,
        ];
        args.extend(["--from", range[0], "--to", range[1]]);
        args.extend_from_slice(extra);
        args
    };
    let small = ["--group", "test512", "--games-per-output", "100"];
    for (args, says) in [
        (with("301", &small, ["1", "3"]), "widen the range"),
        (with("10", &[], ["1", "3"]), "not \"rsa2048\""),
        (
            with("10", &["--group", "test512"], ["100000", "100000"]),
            "not found",
        ),
    ] {
        let o = vrs(&args, "");
        assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
        assert!(output_text(&o).contains(says), "{}", output_text(&o));
    }
}

/// `vrs sp800-22 --json FILE …`: the exit code and the report.
fn sp800_22(file: &Path, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["sp800-22", "--json", "--streams", "100"];
    args.extend_from_slice(extra);
    args.push(file.to_str().expect("utf-8 path"));
    let o = vrs(&args, "");
    let report =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", output_text(&o)));
    (o.status.code().unwrap_or(-1), report)
}

/// The report's row of a test (and variant).
fn row<'a>(report: &'a Value, test: &str, variant: &str) -> &'a Value {
    report["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .find(|t| t["test"] == test && t["variant"] == variant)
        .unwrap_or_else(|| panic!("no {test} {variant}"))
}

#[test]
fn sp800_22_passes_the_raw_stream_and_fails_a_biased_or_repetitive_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let raw = dir.path().join("raw.bin");
    // 100 sequences of 10^6 bits.
    sample(
        "raw",
        "12500000",
        &raw,
        &["--seed", "ci-sp800-22", "--group", "test512"],
    );
    let (code, report) = sp800_22(&raw, &[]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["pass"], true);
    assert_eq!(report["sequences"], 100);
    assert_eq!(report["tests"].as_array().map(Vec::len), Some(188));
    assert_eq!(report["extreme"], 0);
    let rows = report["tests"].as_array().expect("tests");
    let flagged = rows.iter().filter(|t| t["flagged"] == true).count();
    assert_eq!(
        report["flagged"], flagged,
        "the per-test flags add up to the count"
    );

    // The last bit of every 32nd byte forced to 1: the share of ones rises by 1/512.
    let bytes = std::fs::read(&raw).expect("raw");
    let mut biased = bytes.clone();
    biased.iter_mut().step_by(32).for_each(|b| *b |= 1);
    let path = dir.path().join("biased.bin");
    std::fs::write(&path, &biased).expect("write");
    let (code, report) = sp800_22(&path, &[]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(report["pass"], false);
    let frequency = row(&report, "Frequency", "");
    assert_eq!(frequency["proportion_ok"], false);
    assert_eq!(frequency["flagged"], true);
    assert_eq!(frequency["extreme"], true);

    // Every other rngValue a copy of the one before it.
    let mut repeated = bytes.clone();
    for pair in repeated.chunks_exact_mut(64) {
        let (first, second) = pair.split_at_mut(32);
        second.copy_from_slice(first);
    }
    std::fs::write(&path, &repeated).expect("write");
    let (code, report) = sp800_22(&path, &[]);
    assert_eq!(code, 1, "{report}");
    // Patterns repeat at twice their random variance: approximate entropy and serial see it.
    assert_eq!(row(&report, "ApproximateEntropy", "")["extreme"], true);
    assert_eq!(row(&report, "Serial", "1")["extreme"], true);

    // Usage errors: exit 2 with what to do.
    let file = raw.to_str().expect("utf-8");
    for (args, says) in [
        (
            vec!["sp800-22", "--streams", "101", file],
            "100 sequences of 1000000 bits fit",
        ),
        (
            vec!["sp800-22", "--bits", "999992", file],
            "at least 1000000",
        ),
        (vec!["sp800-22", "--alpha", "1", file], "--alpha"),
    ] {
        let o = vrs(&args, "");
        assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
        assert!(output_text(&o).contains(says), "{}", output_text(&o));
    }
}

#[test]
fn a_raw_sample_streams_to_standard_output_until_the_reader_stops() {
    let dir = tempfile::tempdir().expect("tempdir");
    let raw = dir.path().join("raw.bin");
    let small = ["--seed", "pipe", "--group", "test512"];
    sample("raw", "64KiB", &raw, &small);
    let mut args = vec!["sample", "raw", "--count", "64KiB", "--out", "-"];
    args.extend_from_slice(&small);
    let o = vrs(&args, "");
    assert!(o.status.success(), "{}", output_text(&o));
    assert_eq!(
        o.stdout,
        std::fs::read(&raw).expect("raw"),
        "the same bytes"
    );

    // A reader that takes 1 MiB of an endless stream and closes it: vrs stops, exit 0.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_vrs"))
        .args(["sample", "raw", "--count", "1e15", "--out", "-"])
        .args(small)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("vrs starts");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = vec![0u8; 1 << 20];
    std::io::Read::read_exact(&mut stdout, &mut first).expect("1 MiB");
    assert_eq!(
        &first[..64 << 10],
        &o.stdout[..],
        "the stream starts as the file"
    );
    drop(stdout);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "vrs kept running after its reader left"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
}

#[test]
fn the_statistics_page_shows_its_plots() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("data"), FAST);
    let page = ureq::get(&format!("{}/docs/statistics", server.url))
        .call()
        .expect("the page")
        .into_string()
        .expect("html");
    // Its tables are aligned by classes: the pages' CSP refuses inline styles.
    assert!(page.contains("class=\"align-right\""));
    assert!(
        !page.contains(" style="),
        "an inline style the CSP would refuse"
    );
    for name in [
        "dice-faces",
        "dice-totals",
        "dice-rtp",
        "sicbo-faces",
        "sicbo-totals",
        "sicbo-rtp",
    ] {
        let src = format!("/assets/statistics-{name}.svg");
        assert!(
            page.contains(&format!("src=\"{src}\"")),
            "{name} on the page"
        );
        let res = ureq::get(&format!("{}{src}", server.url))
            .call()
            .expect("the plot");
        assert_eq!(res.header("content-type"), Some("image/svg+xml"));
        let committed = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../docs/statistics/{name}.svg")),
        )
        .expect("docs/statistics");
        assert_eq!(res.into_string().expect("svg"), committed, "{name}");
    }
}
