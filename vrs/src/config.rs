//! Typed configuration of `vrs serve`: defaults in code, overridden by `VRS_*` environment
//! variables, overridden by flags (clap reads both).

use clap::Args;
use std::path::PathBuf;
use std::time::Duration;
use vrs_protocol::games::{Amount, Limits};

/// --epoch-ms when not given: the interface's "about 5 seconds".
pub const DEFAULT_EPOCH_MS: u64 = 5000;

/// Options of `vrs serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeConfig {
    /// Address to listen on (port 0 picks a free port; the chosen URL is printed).
    #[arg(long, env = "VRS_ADDR", default_value = "127.0.0.1:8080")]
    pub addr: String,
    /// Directory of the embedded store (created if missing), and of the acceptance key unless
    /// one is configured (with --database-url, only the key).
    #[arg(long, env = "VRS_DATA_DIR", default_value = "./vrs-data")]
    pub data_dir: PathBuf,
    /// PostgreSQL instead of the embedded store, e.g. postgres://user@host:5432/db. Any number
    /// of processes may share one database: one leads the epoch chain, all accept bets. Pick a
    /// schema with ?options=-csearch_path%3Dname (it must exist).
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    /// Most PostgreSQL connections this process keeps (plus one for the leader lock). Keep
    /// replicas × (pool + 1) under the server's max_connections.
    #[arg(long, env = "VRS_DATABASE_POOL_SIZE", default_value_t = 16,
          value_parser = clap::value_parser!(u16).range(2..=1000))]
    pub database_pool_size: u16,
    /// How long each epoch takes games, in milliseconds (default 5000): T is calibrated so that
    /// the timing rule allows windows this long at the security margin (docs/PROTOCOL.md §10).
    #[arg(long, env = "VRS_EPOCH_MS",
          value_parser = clap::value_parser!(u64).range(20..=3_600_000))]
    pub epoch_ms: Option<u64>,
    /// Fixed number of sequential squarings per epoch, instead of calibrating T for
    /// --epoch-ms. Refused when it is too small for the --epoch-ms given: a bet set may stay
    /// open only as long as T squarings take an adversary --security-margin times faster.
    #[arg(long, env = "VRS_ITERATIONS", value_parser = clap::value_parser!(u64).range(1..))]
    pub iterations: Option<u64>,
    /// How much faster than this server's squarer an adversary (the operator included, with
    /// any amount of parallel hardware) may be and still be unable to evaluate any bet set an
    /// epoch could still take, as a number ≥ 1 with at most two decimals. Up to 1.8 one VDF
    /// thread runs; above it ⌈1.1 × margin⌉ run side by side, each T about margin × epoch
    /// (docs/PROTOCOL.md §10, "Timing"; the costs: docs/OPERATIONS.md).
    #[arg(long, env = "VRS_SECURITY_MARGIN", default_value = vrs_protocol::schedule::DEFAULT_MARGIN,
          value_parser = vrs_protocol::schedule::parse_margin)]
    pub security_margin: u32,
    /// Group of the epoch VDF: rsa2048 (default), classgroup-1024 (class groups: no trusted
    /// setup, a fresh discriminant per epoch, chiavdf-compatible; classgroup-<bits> for other
    /// sizes), or test512 / test1024 (insecure RSA moduli, for tests). Also read from
    /// VRS_MODULUS, its former name.
    #[arg(long, visible_alias = "modulus", env = "VRS_GROUP")]
    pub group: Option<String>,
    /// Smallest bet amount accepted.
    #[arg(long, env = "VRS_MIN_BET", default_value = "0.01", value_parser = parse_amount)]
    pub min_bet: Amount,
    /// Largest bet amount accepted.
    #[arg(long, env = "VRS_MAX_BET", default_value = "10000.00", value_parser = parse_amount)]
    pub max_bet: Amount,
    /// Threads serving HTTP and the store (default: all cores but those the epoch VDFs
    /// occupy, at least one).
    #[arg(long, env = "VRS_HTTP_THREADS", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub http_threads: Option<u16>,
    /// Resolve bets that do not say `"instant"` from the precomputed pool (a body's
    /// `"instant": false` still takes the epoch path).
    #[arg(long, env = "VRS_INSTANT_BETS")]
    pub instant_bets: bool,
    /// Threads computing pool entries on the leader (default: all cores but those running the
    /// epoch VDFs, at least one; 0 turns the generator off).
    #[arg(long, env = "VRS_POOL_THREADS")]
    pub pool_threads: Option<usize>,
    /// Batch backend the pool generator computes entries on: cpu, simd, gpu (feature `gpu`),
    /// or auto (the fastest that runs here: a real GPU, else simd or cpu, whichever is faster
    /// on this CPU).
    #[arg(long, env = "VRS_BATCH_BACKEND", default_value = "auto", value_parser = parse_batch_backend)]
    pub batch_backend: BatchChoice,
    /// Squarings per pool entry (T_pool), recorded per entry.
    #[arg(long, env = "VRS_POOL_ITERATIONS", default_value_t = 1024,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub pool_iterations: u64,
    /// Entries per pool batch (one Merkle root each; verifying a pool-served game reads its
    /// whole batch, about 0.8 KB per entry with rsa2048).
    #[arg(long, env = "VRS_POOL_BATCH", default_value_t = 256,
          value_parser = clap::value_parser!(u64).range(1..=8192))]
    pub pool_batch: u64,
    /// Refill the pool when fewer entries than this are left.
    #[arg(long, env = "VRS_POOL_LOW_WATER", default_value_t = 20_000)]
    pub pool_low_water: u64,
    /// Stop refilling once this many entries are ready.
    #[arg(long, env = "VRS_POOL_DEPTH", default_value_t = 50_000)]
    pub pool_depth: u64,
    /// Most pool entries generated per second (0: as fast as the threads go).
    #[arg(long, env = "VRS_POOL_REFILL_RATE", default_value_t = 0)]
    pub pool_refill_rate: u64,
    /// Most instant bets per second, service-wide, that take a pool entry (0: no limit);
    /// beyond it an instant bet takes the epoch path (accepted, resolved with the next epoch),
    /// so a few clients cannot drain the reserve.
    #[arg(long, env = "VRS_INSTANT_RATE", default_value_t = 0)]
    pub instant_rate: u64,
    /// Verification reports of resolved games kept in memory (0: none, and no epoch-wide
    /// checks either: every GET /api/v1/verify recomputes everything). A kept report is served
    /// without redoing its checks; its anchor members are read anew on every request.
    #[arg(long, env = "VRS_VERIFY_CACHE", default_value_t = vrs_service::verify::cache::REPORTS_KEPT)]
    pub verify_cache: usize,
    /// File holding the Ed25519 key that signs every acceptance (64 hex digits, a 32-byte
    /// RFC 8032 seed); VRS_SIGNING_KEY (the same 64 hex digits) takes precedence. Default:
    /// <data-dir>/acceptance.key, created on first start. Replicas sharing one PostgreSQL may
    /// share one key or each use their own: every key in use is published at GET /
    /// (docs/PROTOCOL.md §11, "Signed acceptance").
    #[arg(long, env = "VRS_SIGNING_KEY_FILE")]
    pub signing_key_file: Option<PathBuf>,
    /// JSON-RPC URL of the EVM chain that batch Merkle roots are anchored on. Without it
    /// anchoring is off (anchorTx stays null). The signing key comes from
    /// VRS_ANCHOR_PRIVATE_KEY or --anchor-key-file.
    #[arg(long, env = "VRS_ANCHOR_RPC_URL", hide_env_values = true)]
    pub anchor_rpc_url: Option<String>,
    /// EIP-155 chain id the RPC must report (eth_chainId); anchoring is refused otherwise.
    #[arg(long, env = "VRS_ANCHOR_CHAIN_ID", default_value_t = 8453)]
    pub anchor_chain_id: u64,
    /// Name of the anchor chain, as proofs show it (anchorChain).
    #[arg(long, env = "VRS_ANCHOR_CHAIN_NAME", default_value = "base")]
    pub anchor_chain_name: String,
    /// File holding the anchor account's private key (64 hex digits); VRS_ANCHOR_PRIVATE_KEY
    /// takes precedence. Keep it readable by the service only.
    #[arg(long, env = "VRS_ANCHOR_KEY_FILE")]
    pub anchor_key_file: Option<PathBuf>,
    /// Address the anchor transactions are sent to (default: the anchor account itself).
    #[arg(long, env = "VRS_ANCHOR_ADDRESS")]
    pub anchor_address: Option<String>,
    /// Resolved epochs per anchor batch (one transaction each; 12 × 5 s ≈ one a minute).
    #[arg(long, env = "VRS_ANCHOR_EVERY", default_value_t = 12,
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub anchor_every: u64,
    /// Blocks (the including one counted) before a batch counts as confirmed.
    #[arg(long, env = "VRS_ANCHOR_CONFIRMATIONS", default_value_t = 2,
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub anchor_confirmations: u64,
    /// Seconds an anchor transaction may wait for inclusion before it is replaced by one with
    /// the same nonce and at least 12.5 % higher fees.
    #[arg(long, env = "VRS_ANCHOR_REPLACE_AFTER", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub anchor_replace_after: u64,
    /// Highest max fee per gas an anchor transaction may offer, in gwei (replacements stop
    /// there and wait; 0: no cap). L2 fees are usually far below it.
    #[arg(long, env = "VRS_ANCHOR_MAX_FEE_GWEI", default_value_t = 100.0)]
    pub anchor_max_fee_gwei: f64,
    /// Serve the notary API (/v1/notarize…) on its own address instead of beside the
    /// randomness API.
    #[arg(long, env = "VRS_NOTARY_ADDR")]
    pub notary_addr: Option<String>,
    /// Milliseconds between two notary batches (each one RFC 6962 tree over the receipts
    /// accepted meanwhile).
    #[arg(long, env = "VRS_NOTARY_BATCH_MS", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(10..=3_600_000))]
    pub notary_batch_ms: u64,
    /// Address x402 payments go to. Default: the anchor account's address. Without either,
    /// the notary accepts API keys only.
    #[arg(long, env = "VRS_X402_PAY_TO")]
    pub x402_pay_to: Option<String>,
    /// Price of one notarization in the asset's smallest units (20000 = 0.02 USDC).
    #[arg(long, env = "VRS_X402_AMOUNT", default_value = "20000")]
    pub x402_amount: String,
    /// The EIP-3009 token payments are made in (default: USDC on Base).
    #[arg(
        long,
        env = "VRS_X402_ASSET",
        default_value = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
    )]
    pub x402_asset: String,
    /// Decimals of the asset (for showing the price).
    #[arg(long, env = "VRS_X402_ASSET_DECIMALS", default_value_t = 6)]
    pub x402_asset_decimals: u32,
    /// EIP-712 domain name of the asset (USDC on Base: "USD Coin").
    #[arg(long, env = "VRS_X402_ASSET_NAME", default_value = "USD Coin")]
    pub x402_asset_name: String,
    /// EIP-712 domain version of the asset.
    #[arg(long, env = "VRS_X402_ASSET_VERSION", default_value = "2")]
    pub x402_asset_version: String,
    /// Network of payments, as x402 v2 names it (CAIP-2, eip155:<chain id>).
    #[arg(long, env = "VRS_X402_NETWORK", default_value = "eip155:8453")]
    pub x402_network: String,
    /// The same network as x402 v1 names it.
    #[arg(long, env = "VRS_X402_NETWORK_NAME", default_value = "base")]
    pub x402_network_name: String,
    /// Seconds a payment authorization may take to settle (maxTimeoutSeconds).
    #[arg(long, env = "VRS_X402_MAX_TIMEOUT", default_value_t = 300,
          value_parser = clap::value_parser!(u64).range(10..=86_400))]
    pub x402_max_timeout: u64,
    /// An x402 facilitator (its /verify and /settle). Without it, payments are settled on
    /// chain by calling transferWithAuthorization through the anchor RPC and key.
    #[arg(long, env = "VRS_X402_FACILITATOR_URL")]
    pub x402_facilitator_url: Option<String>,
    /// Seconds after which a payment still settling is taken to be abandoned (its process
    /// died) and the leader finishes it: settles it, or finds it settled on chain, and stores
    /// its receipt. Longer than any settlement takes.
    #[arg(long, env = "VRS_X402_RECOVER_AFTER", default_value_t = 300,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub x402_recover_after: u64,
    /// Write requests (bets, RNG requests, notarizations) per second allowed to one client: an
    /// IP address, IPv6 by /64. Above it the answer is 429 with Retry-After and nothing is
    /// written. 0 turns the limit off (a trusted operator backend, a load test).
    #[arg(long, env = "VRS_RATE_LIMIT", default_value_t = 100.0, value_parser = parse_rate)]
    pub rate_limit: f64,
    /// Write requests one client may send back to back before the rate applies.
    #[arg(long, env = "VRS_RATE_LIMIT_BURST", default_value_t = 200,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_limit_burst: u32,
    /// Behind a reverse proxy: the header it puts the client's address in (e.g.
    /// X-Forwarded-For, whose last entry is taken: the address the proxy saw). Without it the
    /// rate limit counts by peer address. Set it only when every request comes through the
    /// proxy, or clients can pick their own address.
    #[arg(long, env = "VRS_CLIENT_IP_HEADER", value_parser = parse_header_name)]
    pub client_ip_header: Option<axum::http::HeaderName>,
    /// The base URL clients reach this service at, e.g. https://vrs.example.com: notary
    /// receipt URLs and the x402 payment resource are built on it. Without it they come from
    /// each request's Host header (and X-Forwarded-Proto, believed only with
    /// --client-ip-header), which a client controls.
    #[arg(long, env = "VRS_PUBLIC_URL", value_parser = parse_public_url)]
    pub public_url: Option<String>,
    /// Keep the witnessed log (docs/PROTOCOL.md §21) under this origin, e.g.
    /// vrs.example.com/log: every plan, commitment and pool batch as an entry, signed
    /// checkpoints and C2SP tiles at /log/. Off when unset.
    #[arg(long, env = "VRS_LOG_ORIGIN")]
    pub log_origin: Option<String>,
    /// The log's Ed25519 key (64 hex digits), created on first start (mode 0600); every replica
    /// of one log needs the same file. Default: log.key in --data-dir.
    #[arg(long, env = "VRS_LOG_KEY_FILE")]
    pub log_key_file: Option<PathBuf>,
    /// A witness to push each checkpoint to: its cosignature key (`vrs witness` prints it),
    /// a space, its URL. Repeatable; needs --log-origin.
    #[arg(long = "witness", value_name = "VKEY URL")]
    pub witnesses: Vec<String>,
    /// How many of the --witness witnesses this server's own `witnessed` check requires
    /// (default: a majority). Verifiers name their own quorum; this is only the server's.
    #[arg(long, env = "VRS_WITNESS_QUORUM", value_parser = clap::value_parser!(u64).range(1..))]
    pub witness_quorum: Option<u64>,
    /// S of this server's own `witnessed` check: the fastest squarer, in squarings a second,
    /// that an epoch's T must outlast from its plan's cosignature to its commitment's
    /// (docs/PROTOCOL.md §21). Default 9e6 (RSA groups) or 1e6 (class groups), as every
    /// verifier's; an epoch whose T is too short for it fails `witnessed` everywhere.
    #[arg(long, env = "VRS_MAX_RATE", value_parser = vrs_protocol::schedule::parse_rate)]
    pub max_rate: Option<u64>,
    /// Seconds a client gets to send a request's headers; also how long an idle keep-alive
    /// connection stays open.
    #[arg(long, env = "VRS_HEADER_TIMEOUT", default_value = "10", value_parser = parse_seconds)]
    pub header_timeout: Duration,
    /// Seconds a client gets to send a request's body (408 after it).
    #[arg(long, env = "VRS_BODY_TIMEOUT", default_value = "10", value_parser = parse_seconds)]
    pub body_timeout: Duration,
    /// Seconds requests in flight get to finish after SIGTERM or Ctrl-C before their
    /// connections are closed (a second signal stops at once).
    #[arg(long, env = "VRS_SHUTDOWN_GRACE", default_value = "10", value_parser = parse_seconds)]
    pub shutdown_grace: Duration,
    /// Address of a second listener serving Prometheus metrics at /metrics (e.g.
    /// 127.0.0.1:9100). Off without it: metrics are never on the public listener.
    #[arg(long, env = "VRS_METRICS_ADDR")]
    pub metrics_addr: Option<String>,
    /// Test-only (feature `testkit`, never in a release build): the squaring rate this server
    /// declares in its plans instead of the one it measures, as a modified operator that
    /// understates its rate would (docs/PROTOCOL.md §21, "An understated rate").
    #[cfg(feature = "testkit")]
    #[arg(long, hide = true, value_parser = vrs_protocol::schedule::parse_rate)]
    pub testkit_declared_rate: Option<u64>,
    /// Test-only (feature `testkit`, never in a release build): how long (ms) the log holds
    /// each epoch's output back once this server has it, as a modified operator that chooses
    /// y_p after the commitments taking it would (docs/PROTOCOL.md §21, "A withheld output").
    #[cfg(feature = "testkit")]
    #[arg(long, hide = true)]
    pub testkit_held_output_ms: Option<u64>,
    /// Test-only (feature `testkit`, never in a release build): the log gets a second
    /// commitment of this epoch (another nonce) right after its first, as a modified operator
    /// that shows each requester the record it prefers would (docs/PROTOCOL.md §21, "Reading
    /// the whole log").
    #[cfg(feature = "testkit")]
    #[arg(long, hide = true)]
    pub testkit_second_commitment_of: Option<u64>,
    /// Test-only (feature `testkit`, never in a release build): a void epoch's games resolve
    /// with its own output instead of moving on, as a modified operator that stalled to grind
    /// and wants the outcome it chose would (docs/PROTOCOL.md §21, "A staged stall").
    #[cfg(feature = "testkit")]
    #[arg(long, hide = true)]
    pub testkit_keep_void_outcomes: bool,
    /// Log lines on stderr: text (for people) or json (one JSON object per line, for log
    /// collectors). RUST_LOG sets the level (default info).
    #[arg(long, env = "VRS_LOG_FORMAT", default_value = "text",
          value_parser = ["text", "json"])]
    pub log_format: String,
}

/// `--batch-backend`: a kind, or `None` for auto.
pub type BatchChoice = Option<vrs_engine::batch::BatchKind>;

fn parse_batch_backend(s: &str) -> Result<BatchChoice, String> {
    match s.trim() {
        "auto" => Ok(None),
        other => vrs_engine::batch::BatchKind::parse(other)
            .map(Some)
            .map_err(|_| format!("{other:?}: use auto, cpu, simd or gpu")),
    }
}

fn parse_rate(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r >= 0.0 => Ok(r),
        _ => Err(format!("{s:?}: a number of requests per second, 0 or more")),
    }
}

fn parse_seconds(s: &str) -> Result<Duration, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 86_400.0 => Ok(Duration::from_secs_f64(v)),
        _ => Err(format!(
            "{s:?}: a number of seconds above 0 (at most 86400)"
        )),
    }
}

fn parse_header_name(s: &str) -> Result<axum::http::HeaderName, String> {
    axum::http::HeaderName::from_bytes(s.trim().as_bytes())
        .map_err(|_| format!("{s:?} is not an HTTP header name"))
}

fn parse_public_url(s: &str) -> Result<String, String> {
    let url = s.trim().trim_end_matches('/');
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or_else(|| format!("{s:?} is not an http:// or https:// URL"))?;
    let host = rest.split('/').next().unwrap_or_default();
    if host.is_empty()
        || !rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-:[]/_~%".contains(&b))
    {
        return Err(format!(
            "{s:?} is not a base URL (scheme, host, optional port and path)"
        ));
    }
    Ok(url.to_owned())
}

fn parse_amount(s: &str) -> Result<Amount, String> {
    Amount::parse_json_number(s)
}

impl ServeConfig {
    /// Async worker threads: the VDF keeps one core busy, and on a small machine one more
    /// worker than the cores left only adds context switches (measured: docs/PERFORMANCE.md).
    /// --epoch-ms, or its default.
    pub fn epoch_ms(&self) -> u64 {
        self.epoch_ms.unwrap_or(DEFAULT_EPOCH_MS)
    }

    pub fn http_threads(&self) -> usize {
        self.http_threads
            .map_or_else(|| self.cores_beside_vdf(), usize::from)
    }

    /// The cores the epoch VDFs leave (at least one).
    fn cores_beside_vdf(&self) -> usize {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let lanes = vrs_protocol::schedule::lanes(self.security_margin);
        cores
            .saturating_sub(usize::try_from(lanes).unwrap_or(usize::MAX))
            .max(1)
    }

    /// The group id: --group, else VRS_MODULUS (its former name), else rsa2048.
    pub fn group_id(&self) -> String {
        self.group
            .clone()
            .or_else(|| std::env::var("VRS_MODULUS").ok())
            .unwrap_or_else(|| "rsa2048".to_owned())
    }

    pub fn pool(&self) -> vrs_service::pool::PoolConfig {
        vrs_service::pool::PoolConfig {
            iterations: self.pool_iterations,
            threads: self.pool_threads.unwrap_or_else(|| self.cores_beside_vdf()),
            batch_size: self.pool_batch,
            low_water: self.pool_low_water.min(self.pool_depth),
            target_depth: self.pool_depth,
            refill_rate: self.pool_refill_rate,
            instant_default: self.instant_bets,
            batch_backend: self.batch_backend,
        }
    }

    /// Anchoring as configured (on only with an RPC URL; the key is read separately).
    pub fn anchor(&self) -> anyhow::Result<vrs_service::anchor::AnchorConfig> {
        let to = self
            .anchor_address
            .as_deref()
            .filter(|a| !a.trim().is_empty())
            .map(|a| {
                a.trim()
                    .parse::<alloy::primitives::Address>()
                    .map_err(|e| anyhow::anyhow!("--anchor-address {a:?}: {e}"))
            })
            .transpose()?;
        Ok(vrs_service::anchor::AnchorConfig {
            every: self.anchor_every,
            chain_name: self.anchor_chain_name.clone(),
            chain_id: self.anchor_chain_id,
            confirmations: self.anchor_confirmations,
            replace_after: Duration::from_secs(self.anchor_replace_after),
            poll: Duration::from_millis((self.epoch_ms() / 5).clamp(200, 2000)),
            to,
            max_fee: match self.anchor_max_fee_gwei {
                g if !g.is_finite() || g < 0.0 => {
                    anyhow::bail!("--anchor-max-fee-gwei must be a number of gwei, 0 or more")
                }
                0.0 => None,
                g => Some((g * 1e9) as u128),
            },
        })
    }

    /// The RPC URL when anchoring is on.
    pub fn anchor_rpc(&self) -> Option<&str> {
        self.anchor_rpc_url
            .as_deref()
            .map(str::trim)
            .filter(|u| !u.is_empty())
    }

    /// x402's requirements, when there is an address to pay: `--x402-pay-to`, else the anchor
    /// account (`anchor_address`). `None`: API keys only.
    pub fn x402(
        &self,
        anchor_address: Option<alloy::primitives::Address>,
    ) -> anyhow::Result<Option<vrs_chain::x402::X402Config>> {
        use alloy::primitives::{Address, U256};
        let pay_to = match self.x402_pay_to.as_deref().map(str::trim) {
            Some(a) if !a.is_empty() => a
                .parse::<Address>()
                .map_err(|e| anyhow::anyhow!("--x402-pay-to {a:?}: {e}"))?,
            _ => match anchor_address {
                Some(a) => a,
                None => return Ok(None),
            },
        };
        let asset = self
            .x402_asset
            .trim()
            .parse::<Address>()
            .map_err(|e| anyhow::anyhow!("--x402-asset {:?}: {e}", self.x402_asset))?;
        let amount = U256::from_str_radix(self.x402_amount.trim(), 10)
            .ok()
            .filter(|a| !a.is_zero())
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "--x402-amount {:?} must be a positive whole number of the asset's smallest units",
                    self.x402_amount
                )
            })?;
        let chain_id = self
            .x402_network
            .trim()
            .strip_prefix("eip155:")
            .and_then(|id| id.parse::<u64>().ok())
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "--x402-network {:?} must be a CAIP-2 EVM network, eip155:<chain id>",
                    self.x402_network
                )
            })?;
        Ok(Some(vrs_chain::x402::X402Config {
            amount,
            decimals: self.x402_asset_decimals,
            asset,
            asset_name: self.x402_asset_name.clone(),
            asset_version: self.x402_asset_version.clone(),
            pay_to,
            chain_id,
            network: self.x402_network.trim().to_owned(),
            network_v1: self.x402_network_name.trim().to_owned(),
            max_timeout_s: self.x402_max_timeout,
            facilitator_url: self
                .x402_facilitator_url
                .as_deref()
                .map(str::trim)
                .filter(|u| !u.is_empty())
                .map(str::to_owned),
        }))
    }

    /// The guards of the public listeners: rate limit and body timeout.
    pub fn edge(&self) -> vrs_http::EdgeConfig {
        use vrs_http::rate_limit::{RateLimitConfig, RateLimiter};
        let rate_limit = (self.rate_limit > 0.0).then(|| {
            std::sync::Arc::new(RateLimiter::new(
                RateLimitConfig {
                    per_second: self.rate_limit,
                    burst: self.rate_limit_burst,
                },
                self.client_ip_header.clone(),
            ))
        });
        vrs_http::EdgeConfig {
            rate_limit,
            body_timeout: self.body_timeout,
        }
    }

    pub fn limits(&self) -> Limits {
        Limits {
            min_amount: self.min_bet,
            max_amount: self.max_bet,
        }
    }
}
