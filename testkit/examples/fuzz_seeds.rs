//! Writes the seed corpus of every fuzz target (the service's and the engine's), one
//! directory per target and one file per seed: `cargo run -p vrs-testkit --example fuzz_seeds --
//! fuzz/corpus`. The seeds come from the service running in process (docs/OPERATIONS.md,
//! "Fuzzing the decoders").

use std::path::PathBuf;

fn main() -> Result<(), String> {
    let root = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "fuzz/corpus".into()),
    );
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let harness = vrs_testkit::fuzz::Harness::open(dir.path())?;
    let mut seeds: Vec<(String, String, Vec<u8>)> = vrs_testkit::seeds::seeds(&harness)?
        .into_iter()
        .map(|s| (s.target.to_owned(), s.name, s.data))
        .collect();
    seeds.extend(
        vrs_engine::fuzz::seeds()?
            .into_iter()
            .map(|(t, n, d)| (t.to_owned(), n, d)),
    );
    for (target, name, data) in &seeds {
        let at = root.join(target);
        std::fs::create_dir_all(&at).map_err(|e| format!("{}: {e}", at.display()))?;
        let file = at.join(format!("seed-{name}"));
        std::fs::write(&file, data).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    println!("{} seeds under {}", seeds.len(), root.display());
    drop(harness);
    Ok(())
}
