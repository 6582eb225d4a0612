//! `vrs sample`: collections of randomness for the labs that certify an RNG (docs/STATISTICS.md).
//! Every value goes through the production derivation (`vrs_protocol::outcome::derive`: rngValue
//! by HMAC-SHA256 under an epoch output y, dice by rejection sampling, exactly as resolution
//! does); only where y comes from differs:
//!
//! - a local run (`--seed S`): a real epoch chain, y_0 the group's genesis output and each y_k =
//!   x_k^(2^T) evaluated here at a small T, with x_k from y_{k−1} and a bets root drawn from S
//!   (docs/PROTOCOL.md §10, version 1): deterministic for S, the group and T;
//! - a running service (`--server URL --from E1 --to E2`): the published y of each resolved
//!   epoch of the range.
//!
//! Each y serves `--games-per-output` games in a row, with game ids and player seeds drawn from
//! S, as the service's own games of one epoch share its y.

use anyhow::{bail, ensure, Context};
use clap::{Args, Subcommand};
use rayon::prelude::*;
use serde_json::Value;
use sha2::Digest;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use vrs_engine::backend::fast::Fast;
use vrs_engine::backend::Backend;
use vrs_engine::classgroup::{epoch as cg, FastFormSquarer};
use vrs_engine::hash::tagged;
use vrs_engine::vdf::{self, EvalOptions};
use vrs_protocol::epoch_group::{Group, SeedRule};
use vrs_protocol::outcome::{derive, Outcome};
use vrs_protocol::record::NewGame;
use vrs_verifier::progress;
use vrs_verifier::verify::{Fetch, Http};

#[derive(Debug, Subcommand)]
pub enum SampleCommand {
    /// The raw stream: the rngValue (32 bytes) of successive games, in order, as binary (for
    /// dieharder's raw file input and NIST SP 800-22 tools).
    Raw {
        /// How many bytes to write (rounded up to whole games of 32 bytes).
        #[arg(long, value_name = "BYTES", value_parser = parse_size)]
        count: u64,
        #[command(flatten)]
        common: Common,
    },
    /// Two-dice games: one game per line, CSV with the columns game, output, game_id,
    /// player_seed, rng_value, die1, die2, total.
    Dice {
        /// How many games.
        #[arg(long, value_name = "GAMES", value_parser = parse_size)]
        count: u64,
        #[command(flatten)]
        common: Common,
    },
    /// Sic Bo games: as `dice`, with die3.
    Sicbo {
        /// How many games.
        #[arg(long, value_name = "GAMES", value_parser = parse_size)]
        count: u64,
        #[command(flatten)]
        common: Common,
    },
}

#[derive(Debug, Args)]
pub struct Common {
    /// The file to write; the outputs used go beside it, one per line, in FILE.outputs.csv
    /// (output, source, y), so that anyone can recompute every value. "-" writes the sample to
    /// standard output and no outputs file (the same arguments give the same sample again), and
    /// stops quietly when the reader closes the pipe: `vrs sample raw --count 1TiB --out - |
    /// dieharder -g 200 …` streams as much as a test reads.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Draws the game ids, player seeds and, for a local run, the bets roots: the same seed
    /// gives the same file.
    #[arg(long, default_value = "vrs-sample")]
    seed: String,
    /// The group of a local run's epoch chain: rsa2048, classgroup-1024, test512, test1024 or
    /// hex:<digits>.
    #[arg(long, default_value = "rsa2048")]
    group: String,
    /// T of a local run's epochs (sequential squarings per output).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    iterations: u64,
    /// How many successive games share one output y.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..))]
    games_per_output: u64,
    /// Take the outputs of a running service instead of a local run: its resolved epochs
    /// --from … --to, in order.
    #[arg(long, value_name = "URL", requires_all = ["from", "to"])]
    server: Option<String>,
    /// The first epoch of the range (with --server).
    #[arg(long, value_name = "E1", requires = "server")]
    from: Option<u64>,
    /// The last epoch of the range, included (with --server).
    #[arg(long, value_name = "E2", requires = "server")]
    to: Option<u64>,
}

/// "1000000", "1e6", "64MiB", "1GiB": a count (binary suffixes for bytes).
fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, unit) = match t.find(|c: char| c.is_ascii_alphabetic() && c != 'e') {
        Some(i) => (&t[..i], &t[i..]),
        None => (t, ""),
    };
    let scale: u64 = match unit {
        "" => 1,
        "KiB" | "K" | "k" => 1 << 10,
        "MiB" | "M" => 1 << 20,
        "GiB" | "G" => 1 << 30,
        _ => return Err(format!("unknown unit {unit:?}: use KiB, MiB or GiB")),
    };
    let value: f64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a count (e.g. 1000000, 1e6, 64MiB, 1GiB)"))?;
    let n = value * scale as f64;
    if !(n >= 1.0 && n.fract() == 0.0 && n <= 1e15) {
        return Err(format!("{text:?} is not a whole count from 1 to 10^15"));
    }
    Ok(n as u64)
}

/// What one game is for: its game name for the production derivation, and its dice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Raw,
    Dice,
    Sicbo,
}

pub fn run(cmd: SampleCommand) -> anyhow::Result<ExitCode> {
    let (kind, count, common) = match cmd {
        SampleCommand::Raw { count, common } => (Kind::Raw, count.div_ceil(32), common),
        SampleCommand::Dice { count, common } => (Kind::Dice, count, common),
        SampleCommand::Sicbo { count, common } => (Kind::Sicbo, count, common),
    };
    let group = Group::by_name(&common.group)?;
    let outputs_needed = count.div_ceil(common.games_per_output);
    let mut source: Box<dyn Source> = match (&common.server, common.from, common.to) {
        (Some(url), Some(from), Some(to)) => {
            ensure!(
                from >= 1 && from <= to,
                "--from {from} --to {to}: need 1 ≤ E1 ≤ E2"
            );
            let have = to - from + 1;
            ensure!(
                have >= outputs_needed,
                "epochs {from}..={to} give {have} outputs, but {count} games at {} per output need \
                 {outputs_needed}: widen the range or raise --games-per-output",
                common.games_per_output
            );
            Box::new(Published::new(url, from, &group)?)
        }
        _ => Box::new(LocalChain::new(group, common.iterations, &common.seed)),
    };
    let to_stdout = common.out.as_os_str() == "-";
    let mut writer = Writer::create(kind, &common.out)?;
    let mut outputs = if to_stdout {
        None
    } else {
        Some(Writer::outputs(&common.out)?)
    };
    let bar = progress::bar(count, "games");
    let mut game = 0u64;
    let mut output = 0u64;
    while game < count {
        output += 1;
        let (label, y) = source.next_output(output)?;
        if let Some(outputs) = &mut outputs {
            writeln!(outputs, "{output},{label},{}", hex::encode(&y))?;
        }
        let end = count.min(game + common.games_per_output);
        // The games of one output are independent: derive them on every core, write in order.
        let games: Vec<(NewGame, Outcome)> = (game..end)
            .into_par_iter()
            .map(|i| {
                let g = sample_game(kind, &common.seed, i);
                derive(&y, &g).map(|o| (g, o))
            })
            .collect::<Result<_, _>>()
            .map_err(anyhow::Error::msg)?;
        for (g, o) in &games {
            if let Err(e) = writer.write(game, output, g, o) {
                if to_stdout && is_broken_pipe(&e) {
                    bar.finish_and_clear();
                    return Ok(ExitCode::SUCCESS);
                }
                return Err(e);
            }
            game += 1;
        }
        bar.set_position(game);
    }
    bar.finish_and_clear();
    match writer.finish() {
        Err(e) if to_stdout && is_broken_pipe(&e) => return Ok(ExitCode::SUCCESS),
        other => other?,
    }
    if let Some(outputs) = &mut outputs {
        outputs.flush()?;
    }
    eprintln!(
        "{count} games from {output} outputs ({} games per output, {}) written to {}",
        common.games_per_output,
        source.describe(),
        common.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The reader of standard output went away (dieharder has read what its test needs).
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Game `i` of a sample: its id and seed drawn from the sample's seed, its bet a fixed one of
/// the game (the dice do not depend on the bet: only their count does).
fn sample_game(kind: Kind, seed: &str, i: u64) -> NewGame {
    let mut h = tagged(b"vrs/sample/game-id");
    h.update((seed.len() as u64).to_be_bytes());
    h.update(seed.as_bytes());
    h.update(i.to_be_bytes());
    let game_id = hex::encode(&h.finalize()[..16]);
    let (game, bet_type, amount) = match kind {
        Kind::Raw => ("rng", None, None),
        Kind::Dice => ("dice", Some("odd"), Some("1.00")),
        Kind::Sicbo => ("sicbo", Some("big"), Some("1.00")),
    };
    NewGame {
        game_id,
        request_id: format!("sample-{i}"),
        game: game.into(),
        bet_type: bet_type.map(Into::into),
        target: None,
        combo: None,
        amount: amount.map(Into::into),
        player_id: "sample".into(),
        player_seed: Some(format!("{seed}/{i}")),
        operator_key: "sample".into(),
        created_at_ms: 0,
        leaf: Vec::new(),
        acceptance: None,
    }
}

/// Where the outputs y come from.
trait Source {
    /// Output `k` (from 1): a label for the outputs file and y's bytes as the service keys
    /// HMAC with them.
    fn next_output(&mut self, k: u64) -> anyhow::Result<(String, Vec<u8>)>;
    fn describe(&self) -> String;
}

/// A local epoch chain: y_k = VDF(x_k), x_k from y_{k−1} and a bets root drawn from the seed.
struct LocalChain {
    group: Group,
    iterations: u64,
    seed: String,
    previous: Vec<u8>,
}

impl LocalChain {
    fn new(group: Group, iterations: u64, seed: &str) -> Self {
        let previous = group.genesis_output();
        LocalChain {
            group,
            iterations,
            seed: seed.to_owned(),
            previous,
        }
    }
}

impl Source for LocalChain {
    fn next_output(&mut self, k: u64) -> anyhow::Result<(String, Vec<u8>)> {
        let mut h = tagged(b"vrs/sample/bets-root");
        h.update((self.seed.len() as u64).to_be_bytes());
        h.update(self.seed.as_bytes());
        h.update(k.to_be_bytes());
        let root: [u8; 32] = h.finalize().into();
        let how = SeedRule::V1 {
            iterations: self.iterations,
        };
        let (seed, x) = self.group.input_for(k, &self.previous, &root, &how)?;
        let y = evaluate(&self.group, &seed, &x, self.iterations)
            .with_context(|| format!("evaluating local epoch {k}"))?;
        self.previous.clone_from(&y);
        Ok((format!("local epoch {k}"), y))
    }

    fn describe(&self) -> String {
        format!(
            "a local {} chain at T = {}",
            self.group.id(),
            self.iterations
        )
    }
}

/// y = x^(2^T) in the group, encoded as stored (the service's VDF thread, without its proof
/// for RSA groups).
fn evaluate(group: &Group, seed: &[u8; 32], x: &[u8], t: u64) -> anyhow::Result<Vec<u8>> {
    match group {
        Group::Rsa(modulus) => {
            let fast = Fast::prepare(modulus)?;
            let x = modulus.decode("x", x)?;
            let trace = vdf::evaluate(&fast, modulus, &x, t, &EvalOptions::default(), &mut |_| {})?;
            Ok(modulus.encode(&trace.y()))
        }
        Group::Class { .. } => {
            let d = group
                .discriminant(seed)
                .context("a class group has a discriminant")??;
            let squarer = FastFormSquarer::new(&d)?;
            Ok(cg::evaluate(&squarer, &d, t, None, &mut |_| {})?.y)
        }
    }
}

/// The published outputs of a running service, epoch by epoch.
struct Published {
    http: Http,
    base: String,
    first: u64,
    group: String,
}

impl Published {
    fn new(url: &str, first: u64, group: &Group) -> anyhow::Result<Self> {
        Ok(Published {
            http: Http::new()?,
            base: url.trim_end_matches('/').to_owned(),
            first,
            group: group.id(),
        })
    }
}

impl Source for Published {
    fn next_output(&mut self, k: u64) -> anyhow::Result<(String, Vec<u8>)> {
        let e = self.first + k - 1;
        let url = format!("{}/api/v1/epochs/{e}", self.base);
        let rec: Value = self.http.get(&url)?;
        let status = rec["status"].as_str().unwrap_or("");
        if status != "resolved" {
            bail!("epoch {e} is {status:?}, not resolved: end the range at a resolved epoch");
        }
        // The group is the caller's choice: a server naming another is refused, not sampled.
        let named = rec["modulus"].as_str().unwrap_or("");
        ensure!(
            named.eq_ignore_ascii_case(&self.group),
            "epoch {e} is in group {named:?}, not {:?} (--group)",
            self.group
        );
        let y = rec["y"]
            .as_str()
            .and_then(|h| hex::decode(h).ok())
            .with_context(|| format!("epoch {e}: no y in hex"))?;
        Ok((format!("epoch {e}"), y))
    }

    fn describe(&self) -> String {
        format!("epochs of {} from {}", self.base, self.first)
    }
}

/// The sample file and its format.
struct Writer {
    kind: Kind,
    out: BufWriter<Box<dyn Write>>,
}

impl Writer {
    /// The sample's file, or standard output for "-".
    fn create(kind: Kind, path: &Path) -> anyhow::Result<Self> {
        let sink: Box<dyn Write> = if path.as_os_str() == "-" {
            Box::new(std::io::stdout())
        } else {
            Box::new(
                File::create(path).with_context(|| format!("cannot create {}", path.display()))?,
            )
        };
        let mut out = BufWriter::with_capacity(1 << 20, sink);
        match kind {
            Kind::Raw => {}
            Kind::Dice => writeln!(
                out,
                "game,output,game_id,player_seed,rng_value,die1,die2,total"
            )?,
            Kind::Sicbo => writeln!(
                out,
                "game,output,game_id,player_seed,rng_value,die1,die2,die3,total"
            )?,
        }
        Ok(Writer { kind, out })
    }

    /// FILE.outputs.csv: every output used, so that the sample can be recomputed.
    fn outputs(path: &Path) -> anyhow::Result<BufWriter<File>> {
        let mut name = path.as_os_str().to_owned();
        name.push(".outputs.csv");
        let path = PathBuf::from(name);
        let file =
            File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        let mut out = BufWriter::new(file);
        writeln!(out, "output,source,y")?;
        Ok(out)
    }

    fn write(&mut self, i: u64, output: u64, g: &NewGame, o: &Outcome) -> anyhow::Result<()> {
        if self.kind == Kind::Raw {
            self.out.write_all(&o.rng_value)?;
            return Ok(());
        }
        let dice = o.roll.as_ref().map(|r| r.dice.as_slice()).unwrap_or(&[]);
        let total: u32 = dice.iter().map(|&d| u32::from(d)).sum();
        write!(
            self.out,
            "{i},{output},{},{},{}",
            g.game_id,
            g.player_seed.as_deref().unwrap_or(""),
            hex::encode(o.rng_value)
        )?;
        for d in dice {
            write!(self.out, ",{d}")?;
        }
        writeln!(self.out, ",{total}")?;
        Ok(())
    }

    fn finish(mut self) -> anyhow::Result<()> {
        self.out.flush().context("writing the sample")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1000000"), Ok(1_000_000));
        assert_eq!(parse_size("1e6"), Ok(1_000_000));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert!(parse_size("0").is_err());
        assert!(parse_size("1.5").is_err());
        assert!(parse_size("3TB").is_err());
    }

    #[test]
    fn sample_games_are_fixed_by_the_seed() {
        let a = sample_game(Kind::Dice, "s", 7);
        assert_eq!(a.game_id, sample_game(Kind::Dice, "s", 7).game_id);
        assert_ne!(a.game_id, sample_game(Kind::Dice, "s", 8).game_id);
        assert_ne!(a.game_id, sample_game(Kind::Dice, "t", 7).game_id);
        assert_eq!(a.game_id.len(), 32);
        assert_eq!(a.player_seed.as_deref(), Some("s/7"));
    }
}
