//! `vrs keys`: API keys of the notary. A key is printed once, at creation; the store keeps
//! only its SHA-256. The commands open the same store as `vrs serve` (`--data-dir`, or
//! PostgreSQL with `DATABASE_URL`) and work while the service runs.

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use vrs_observe::clock::now_ms;
use vrs_service::notary::keys;
use vrs_store::postgres::PgStore;
use vrs_store::sqlite::SqliteStore;
use vrs_store::{ApiKey, Store};

#[derive(Debug, Args)]
pub struct KeysArgs {
    #[command(subcommand)]
    command: KeysCommand,
    /// Directory of the embedded store (the same as `vrs serve --data-dir`).
    #[arg(
        long,
        env = "VRS_DATA_DIR",
        default_value = "./vrs-data",
        global = true
    )]
    data_dir: PathBuf,
    /// PostgreSQL instead of the embedded store (the same as `vrs serve`).
    #[arg(long, env = "DATABASE_URL", hide_env_values = true, global = true)]
    database_url: Option<String>,
    /// Print JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum KeysCommand {
    /// Create a key and print it (once: it cannot be shown again).
    Create {
        /// Who or what the key is for (shown by `vrs keys list`).
        #[arg(long)]
        name: String,
    },
    /// List the keys: id, name, creation, revocation, usage. Never the keys themselves.
    List,
    /// Revoke a key by its id (key_…); requests with it get 401 from then on.
    Revoke {
        /// The key's id, as `vrs keys list` shows it.
        id: String,
    },
}

pub fn run(args: KeysArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(run_async(args))
}

async fn open(args: &KeysArgs) -> anyhow::Result<Arc<dyn Store>> {
    match args.database_url.as_deref().map(str::trim) {
        Some(url) if !url.is_empty() => {
            Ok(Arc::new(PgStore::connect_with_pool(url, 2).await.context(
                "connecting to PostgreSQL (--database-url / DATABASE_URL)",
            )?))
        }
        _ => Ok(Arc::new(
            SqliteStore::open_admin(&args.data_dir)
                .with_context(|| format!("opening the store in {}", args.data_dir.display()))?,
        )),
    }
}

fn when(ms: Option<i64>) -> String {
    ms.map_or_else(|| "-".to_owned(), |ms| (ms / 1000).to_string())
}

fn key_json(k: &ApiKey) -> serde_json::Value {
    json!({
        "id": k.id,
        "name": k.name,
        "created_at": k.created_at_ms / 1000,
        "revoked_at": k.revoked_at_ms.map(|ms| ms / 1000),
        "active": k.revoked_at_ms.is_none(),
        "uses": k.uses,
        "last_used_at": k.last_used_ms.map(|ms| ms / 1000),
    })
}

async fn run_async(args: KeysArgs) -> anyhow::Result<ExitCode> {
    let store = open(&args).await?;
    match &args.command {
        KeysCommand::Create { name } => {
            let name = name.trim();
            if name.is_empty() || name.len() > 200 {
                bail!("--name must be 1 to 200 characters");
            }
            let (key, record) = keys::generate(name, now_ms());
            store
                .create_api_key(&record)
                .await
                .context("storing the new key")?;
            if args.json {
                let mut v = key_json(&record);
                v["key"] = json!(key);
                println!("{v}");
            } else {
                println!("{key}");
                eprintln!(
                    "Created API key {} ({name}). It is printed above once and cannot be shown \
                     again; send it as \"Authorization: Bearer <key>\".",
                    record.id
                );
            }
        }
        KeysCommand::List => {
            let all = store.api_keys().await.context("reading the keys")?;
            if args.json {
                println!("{}", json!(all.iter().map(key_json).collect::<Vec<_>>()));
            } else if all.is_empty() {
                eprintln!("No API keys yet; create one with `vrs keys create --name NAME`.");
            } else {
                println!(
                    "{:<17} {:<24} {:>11} {:>11} {:>9} {:>11}",
                    "ID", "NAME", "CREATED", "REVOKED", "USES", "LAST USED"
                );
                for k in &all {
                    println!(
                        "{:<17} {:<24} {:>11} {:>11} {:>9} {:>11}",
                        k.id,
                        k.name,
                        k.created_at_ms / 1000,
                        when(k.revoked_at_ms),
                        k.uses,
                        when(k.last_used_ms)
                    );
                }
            }
        }
        KeysCommand::Revoke { id } => {
            if !store
                .revoke_api_key(id, now_ms())
                .await
                .context("revoking the key")?
            {
                eprintln!("No API key has the id {id:?}; see `vrs keys list`.");
                return Ok(ExitCode::from(1));
            }
            if args.json {
                println!("{}", json!({ "id": id, "revoked": true }));
            } else {
                println!("Revoked {id}.");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
