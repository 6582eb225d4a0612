//! `vrs witness`: run a witness of vrs logs (docs/OPERATIONS.md, "Running a witness"), the
//! crate vrs-witness behind a listener, its key file and its state directory.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context as _};
use clap::Args;
use vrs_protocol::tlog::note::{parse_vkey, Cosigner, ALG_ED25519};
use vrs_witness::{Config, LogConfig, Witness};

/// Cosign a vrs operator's log checkpoints (C2SP tlog-witness) after checking, by this
/// machine's clock, that every epoch was committed once, after its plan and on time.
#[derive(Debug, Args)]
#[command(after_long_help = "\
Example:
  vrs witness --name witness.example/w1 --state-dir /var/lib/vrs-witness \\
    --log 'vrs.example/log+1a2b3c4d+AX… https://vrs.example/log/'

The witness prints its verifier key (`vrs witness key NAME+ID+…`): give it to the operator
(`vrs serve --witness 'KEY URL'`) and to verifiers (a `witness` line of their policy). Keep
--state-dir: it is what stops the witness from ever cosigning two trees of one size.")]
pub struct WitnessArgs {
    /// The witness's name in its cosignatures (no spaces or '+'), e.g. witness.example/w1.
    #[arg(long, env = "VRS_WITNESS_NAME")]
    name: String,
    /// Where the witness keeps its state: one file per log, replaced atomically.
    #[arg(long, env = "VRS_WITNESS_STATE_DIR", default_value = "vrs-witness")]
    state_dir: PathBuf,
    /// The Ed25519 key (64 hex digits); created on first start (mode 0600). Default:
    /// witness.key in --state-dir.
    #[arg(long, env = "VRS_WITNESS_KEY_FILE")]
    key_file: Option<PathBuf>,
    /// A log to cosign: its verifier key (`vrs serve` prints it), then optionally a space and
    /// its tiles URL (the server's /log/). With the URL the witness reads every new entry and
    /// applies vrs's rules; without, it only checks that the log is append-only. Repeatable.
    #[arg(
        long = "log",
        value_name = "VKEY [URL]",
        required_unless_present = "print_key"
    )]
    logs: Vec<String>,
    /// δ: how far (ms) an entry's stamped time may be from this machine's clock when the
    /// witness first sees it.
    #[arg(long, env = "VRS_WITNESS_DELTA_MS", default_value_t = vrs_witness::DEFAULT_DELTA_MS)]
    delta_ms: u64,
    /// Listen address.
    #[arg(long, env = "VRS_WITNESS_ADDR", default_value = "127.0.0.1:8090")]
    addr: SocketAddr,
    /// Print the witness's verifier key and exit.
    #[arg(long)]
    print_key: bool,
}

pub fn run(args: WitnessArgs) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(&args.state_dir)
        .with_context(|| format!("creating {}", args.state_dir.display()))?;
    let key_file = args
        .key_file
        .clone()
        .unwrap_or_else(|| args.state_dir.join("witness.key"));
    let seed = super::acceptance_key::load_named(&key_file, true, "witness key")?.seed();
    let cosigner = Cosigner::new(&args.name, ed25519_dalek::SigningKey::from_bytes(&seed))
        .map_err(anyhow::Error::msg)?;
    if args.print_key {
        println!("{}", cosigner.vkey());
        return Ok(ExitCode::SUCCESS);
    }
    let mut logs = Vec::new();
    for spec in &args.logs {
        let mut words = spec.split_whitespace();
        let key = parse_vkey(words.next().unwrap_or_default())
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("--log {spec:?}"))?;
        if key.alg != ALG_ED25519 {
            bail!("--log {spec:?}: a log's key is an Ed25519 note key (type 0x01)");
        }
        let url = words.next().map(str::to_owned);
        if words.next().is_some() {
            bail!("--log {spec:?}: one key and at most one URL");
        }
        if logs.iter().any(|l: &LogConfig| l.key.name == key.name) {
            bail!("--log {spec:?}: that origin is listed twice");
        }
        logs.push(LogConfig { key, url });
    }
    let witness = Witness::new(Config {
        cosigner,
        state_dir: args.state_dir.clone(),
        delta_ms: args.delta_ms,
        logs,
    })?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("vrs-witness")
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(serve(witness, args.addr))?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(witness: Witness, addr: SocketAddr) -> anyhow::Result<()> {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .try_init();
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    println!("vrs witness key {}", witness.config.cosigner.vkey());
    println!("vrs witness listening on http://{}", listener.local_addr()?);
    let app = vrs_witness::server::router(Arc::new(witness));
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .context("the witness's listener failed")
}
