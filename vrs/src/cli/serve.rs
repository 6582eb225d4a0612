//! `vrs serve`: the HTTP service, on the embedded store or on PostgreSQL.

use crate::config::ServeConfig;
use anyhow::{bail, Context};
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use vrs_chain::rpc::Chain;
use vrs_chain::x402::X402;
use vrs_engine::calibrate::{classgroup_squarings_per_second, squarings_per_second};
use vrs_engine::timing::centi;
use vrs_http::listener::{self, ConnOptions, Drained};
use vrs_http::{app_with, notary_app, AppState};
use vrs_observe::clock::now_ms;
use vrs_protocol::acceptance::AcceptanceSigner;
use vrs_protocol::epoch_group::Group;
use vrs_protocol::schedule::{schedule, Ask};
use vrs_protocol::tlog::note::{parse_vkey, LogSigner};
use vrs_protocol::tlog::witnessed::{default_max_rate, DELTA_MS};
use vrs_service::anchor::{load_key, AnchorStatus, AnchorView, Anchorer};
use vrs_service::epoch::{EpochConfig, EpochLoop, LoopStatus};
use vrs_service::leader;
use vrs_service::notary::sealer::Sealer;
use vrs_service::notary::Notary;
use vrs_service::pool::{Generator, PoolStatus};
use vrs_service::tlog::{Declaration, OperatorLog, OwnFloor, WitnessTarget};
use vrs_store::postgres::PgStore;
use vrs_store::sqlite::SqliteStore;
use vrs_store::Store;

/// Longest wait for the epoch loop after the listener has stopped.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

pub fn run(config: ServeConfig) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.http_threads())
        .enable_all()
        .thread_name("vrs-http")
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(serve(config))?;
    Ok(ExitCode::SUCCESS)
}

fn init_logging(format: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // alloy's HTTP transport puts the RPC URL (often with an API key in it) into its debug
    // spans: keep it at info whatever RUST_LOG asks.
    let filter = match "alloy_transport_http=info".parse() {
        Ok(d) => filter.add_directive(d),
        Err(_) => filter,
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = if format == "json" {
        // One object per line: timestamp, level, target, message and the event's fields at the
        // top level, where collectors index them.
        builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .try_init()
    } else {
        builder.try_init()
    };
}

async fn serve(config: ServeConfig) -> anyhow::Result<()> {
    init_logging(&config.log_format);
    if config.min_bet > config.max_bet {
        bail!(
            "--min-bet {} is above --max-bet {}",
            config.min_bet,
            config.max_bet
        );
    }
    // A key that cannot be read stops the start before anything else is done.
    let acceptance = Arc::new(acceptance_signer(&config)?);
    let group_id = config.group_id();
    let group = Group::by_name(&group_id).with_context(|| format!("--group {group_id}"))?;
    // The rate is measured even when T is given: the timing rule measures windows against it.
    let calibrate_for = Duration::from_millis(config.epoch_ms().clamp(100, 500));
    let g = group.clone();
    let rate = tokio::task::spawn_blocking(move || match &g {
        Group::Rsa(m) => squarings_per_second(m, calibrate_for),
        Group::Class { bits } => classgroup_squarings_per_second(*bits, calibrate_for),
    })
    .await??;
    let plan = schedule(&Ask {
        margin_centi: config.security_margin,
        epoch_ms: config.epoch_ms(),
        epoch_ms_given: config.epoch_ms.is_some(),
        iterations: config.iterations,
        rate,
        class_group: matches!(group, Group::Class { .. }),
    })
    .map_err(|msg| anyhow::anyhow!(msg))?;
    let iterations = plan.iterations;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if plan.lanes as usize >= cores {
        tracing::warn!(
            lanes = plan.lanes,
            cores,
            "security margin {} runs {} VDFs side by side on {cores} cores: they slow each other \
             and the service (the timing rule follows the rate they reach)",
            centi(u64::from(plan.margin_centi)),
            plan.lanes
        );
    }
    let how = match config.iterations {
        None => "calibrated".to_owned(),
        Some(_) => "fixed by --iterations".to_owned(),
    };
    println!(
        "vrs: group {}, T = {iterations} squarings per epoch ({how}; {rate:.0} squarings/s on \
         this CPU), security margin {} with {} VDF thread{}, epochs taking games for about {:.0} ms",
        group.id(),
        centi(u64::from(plan.margin_centi)),
        plan.lanes,
        if plan.lanes == 1 { "" } else { "s" },
        plan.epoch_ms
    );
    let epoch_config = EpochConfig {
        group: group.clone(),
        schedule: plan,
    };
    #[cfg(feature = "testkit")]
    {
        use vrs_service::epoch::testkit::{
            DECLARED_RATE, HELD_OUTPUT_MS, KEEP_VOID_OUTCOMES, SECOND_COMMITMENT_OF,
        };
        let attacks = [
            (
                config.testkit_declared_rate,
                &DECLARED_RATE,
                "every plan declares this rate",
            ),
            (
                config.testkit_held_output_ms,
                &HELD_OUTPUT_MS,
                "the log holds outputs back (ms)",
            ),
            (
                config.testkit_second_commitment_of,
                &SECOND_COMMITMENT_OF,
                "the log gets a second commitment of this epoch",
            ),
            (
                config.testkit_keep_void_outcomes.then_some(1),
                &KEEP_VOID_OUTCOMES,
                "void epochs' games keep their own outcome",
            ),
        ];
        for (value, slot, what) in attacks {
            if let Some(v) = value {
                tracing::warn!(value = v, "testkit: {what}");
                let _ = slot.set(v);
            }
        }
    }
    let store = open_store(&config).await?;
    store
        .bootstrap(
            &group.id(),
            now_ms(),
            &epoch_config.plan_params(rate as u64),
        )
        .await
        .context("preparing the epoch chain")?;

    let listener = tokio::net::TcpListener::bind(&config.addr)
        .await
        .with_context(|| format!("cannot listen on {}", config.addr))?;
    let local = listener.local_addr()?;
    println!("vrs listening on http://{local}");
    std::io::stdout().flush()?;

    let engine = Arc::new(LoopStatus::default());
    engine
        .squarings_per_second
        .store(rate.max(1.0) as u64, std::sync::atomic::Ordering::Relaxed);
    engine
        .iterations
        .store(iterations, std::sync::atomic::Ordering::Relaxed);
    let (stop_tx, stop_rx) = watch::channel(false);
    let epoch_loop = EpochLoop::new(Arc::clone(&store), epoch_config, Arc::clone(&engine))?;
    // Replicas ask for the lease often enough to take over well within two epochs.
    let poll = Duration::from_millis((plan.epoch_ms as u64 / 4).clamp(20, 1000));
    let mut pool = config.pool();
    let pool_status = Arc::new(PoolStatus::default());
    // The instant-bet pool's batch backends square modulo N: RSA groups only. On a class group
    // every bet takes the epoch path (an instant request is answered with a 202 saying so).
    let generator = match group.modulus() {
        Some(m) => Some(Generator::new(
            Arc::clone(&store),
            m.clone(),
            pool.clone(),
            Arc::clone(&pool_status),
        )?),
        None => {
            if pool.threads > 0 && config.pool_threads.is_some() {
                println!(
                    "vrs: the instant-bet pool runs on RSA groups only: no pool on {}",
                    group.id()
                );
            }
            pool.threads = 0;
            None
        }
    };
    store
        .register_acceptance_key(acceptance.public_key(), now_ms())
        .await
        .context("recording the acceptance key in the store")?;
    println!(
        "vrs: acceptances signed with Ed25519 key {}",
        hex::encode(acceptance.public_key())
    );
    let anchor_config = config.anchor()?;
    let anchor_status = Arc::new(AnchorStatus::new(config.anchor_rpc().is_some()));
    let chain = match config.anchor_rpc() {
        Some(url) => {
            let key = load_key(config.anchor_key_file.as_deref())?;
            let chain = Chain::new(url, key)?;
            println!(
                "vrs: anchoring every {} epochs on {} (chain id {}) from {:#x}",
                anchor_config.every,
                anchor_config.chain_name,
                anchor_config.chain_id,
                chain.address()
            );
            Some(chain)
        }
        None => None,
    };
    let x402 = match config.x402(chain.as_ref().map(Chain::address))? {
        Some(x) if x.facilitator_url.is_none() && x.chain_id != anchor_config.chain_id => {
            let why = format!(
                "x402 payments on {} would settle on chain {}, but the anchor RPC is chain {}",
                x.network, x.chain_id, anchor_config.chain_id
            );
            // Asked for explicitly: refuse to start. Implied by an anchor key alone: leave
            // payments off rather than stop a service that anchors on another chain.
            if config.x402_pay_to.is_some() {
                bail!("{why}; use --x402-facilitator-url or a matching --x402-network");
            }
            println!("vrs: notary takes API keys only ({why}; set --x402-network to match)");
            None
        }
        Some(x) => {
            let x = X402::new(
                x,
                chain.clone(),
                anchor_config.chain_id,
                anchor_config.max_fee,
            )?;
            println!(
                "vrs: notary takes API keys and x402 payments of {} units of {:#x} on {} to {:#x} \
                 (settled via {})",
                x.config.amount,
                x.config.asset,
                x.config.network,
                x.config.pay_to,
                x.settles_via()
            );
            Some(x)
        }
        None => {
            println!("vrs: notary takes API keys only (x402 needs --x402-pay-to or an anchor key)");
            None
        }
    };
    let operator_log = witnessed_log(
        &config,
        &store,
        Declaration {
            group: group.id(),
            acceptance_key: acceptance.public_key(),
            anchor_chain_id: if chain.is_some() {
                anchor_config.chain_id
            } else {
                0
            },
            anchor_address: chain.as_ref().map_or([0; 20], |c| c.address().into_array()),
        },
    )
    .await?;
    if let Some(floor) = operator_log.as_ref().and_then(|d| d.log.floor()) {
        warn_if_short_for(iterations, plan.epoch_ms, floor.max_rate);
    }
    // With witnesses, an epoch's games wait for its commitment to be witnessed, or go on to
    // a later epoch when it is void (docs/PROTOCOL.md §21, "Voids").
    let epoch_loop = epoch_loop.with_settler(
        operator_log
            .as_ref()
            .filter(|d| !d.log.witnesses().is_empty())
            .map(|d| Arc::clone(&d.log) as Arc<dyn vrs_service::epoch::Settle>),
    );
    let notary = Arc::new(Notary {
        batch_every: Duration::from_millis(config.notary_batch_ms),
        x402,
        recover_after: Duration::from_secs(config.x402_recover_after),
    });
    let sealer = Sealer::new(Arc::clone(&store), Arc::clone(&notary));
    let anchorer = Anchorer::new(
        Arc::clone(&store),
        anchor_config.clone(),
        chain,
        Arc::clone(&anchor_status),
    )
    .with_log(operator_log.as_ref().map(|d| Arc::clone(&d.log)));
    let duties = leader::Duties {
        generator,
        anchorer: Some(anchorer),
        sealer: Some(sealer),
        log: operator_log.clone(),
    };
    let loop_task = tokio::spawn(leader::lead(epoch_loop, stop_rx, poll, duties));
    let notary_listener = match config.notary_addr.as_deref().map(str::trim) {
        Some(addr) if !addr.is_empty() => {
            let l = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen on --notary-addr {addr}"))?;
            println!("vrs notary listening on http://{}", l.local_addr()?);
            std::io::stdout().flush()?;
            Some(l)
        }
        _ => None,
    };
    let metrics_listener = match config.metrics_addr.as_deref().map(str::trim) {
        Some(addr) if !addr.is_empty() => {
            let l = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen on --metrics-addr {addr}"))?;
            println!(
                "vrs metrics listening on http://{}/metrics",
                l.local_addr()?
            );
            std::io::stdout().flush()?;
            Some(l)
        }
        _ => None,
    };

    let state = Arc::new(AppState {
        log: operator_log.as_ref().map(|d| Arc::clone(&d.log)),
        store,
        engine,
        modulus: group.id(),
        iterations,
        epoch_ms: plan.epoch_ms.round() as u64,
        margin_centi: plan.margin_centi,
        lanes: plan.lanes,
        limits: config.limits(),
        started: Instant::now(),
        pool,
        pool_status,
        anchor: AnchorView::new(&anchor_config, anchor_status)
            .with_log(operator_log.as_ref().map(|d| Arc::clone(&d.log))),
        notary,
        notary_separate: notary_listener.is_some(),
        entropy: Default::default(),
        acceptance,
        public_url: config.public_url.clone(),
        behind_proxy: config.client_ip_header.is_some(),
        instant_budget: Arc::new(vrs_service::pool::InstantBudget::new(config.instant_rate)),
        verify_cache: Arc::new(vrs_service::verify::VerifyCache::for_reports(
            config.verify_cache,
        )),
        read_workers: Arc::new(vrs_service::read_workers::ReadWorkers::start(
            config.http_threads(),
        )?),
    });
    let (quit_tx, quit_rx) = watch::channel(false);
    tokio::spawn(stop_on_signals(quit_tx));
    let options = ConnOptions {
        header_timeout: config.header_timeout,
        shutdown_grace: config.shutdown_grace,
    };
    let edge = config.edge();
    let quit = |mut rx: watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|q| *q).await;
    };
    let notary_server = notary_listener.map(|l| {
        let app = notary_app(Arc::clone(&state), &edge);
        tokio::spawn(listener::serve(l, app, options, quit(quit_rx.clone())))
    });
    let metrics_server = match metrics_listener {
        Some(l) => {
            let app = vrs_http::metrics::app(Arc::clone(&state));
            Some(tokio::spawn(listener::serve(
                l,
                app,
                options,
                quit(quit_rx.clone()),
            )))
        }
        None => None,
    };
    let mut drained =
        listener::serve(listener, app_with(state, &edge), options, quit(quit_rx)).await;
    for task in [notary_server, metrics_server].into_iter().flatten() {
        match task.await {
            Ok(Drained::TimedOut) => drained = Drained::TimedOut,
            Ok(Drained::All) => {}
            Err(e) => tracing::warn!(error = %e, "a listener stopped abnormally"),
        }
    }
    if drained == Drained::All {
        tracing::info!("every request in flight was answered");
    }

    tracing::info!("stopping: the epoch in progress resumes from its stored input on restart");
    let _ = stop_tx.send(true);
    if tokio::time::timeout(SHUTDOWN_GRACE, loop_task)
        .await
        .is_err()
    {
        tracing::warn!("the epoch loop did not stop in time");
    }
    println!("vrs stopped");
    Ok(())
}

/// Says so when T is too short for verifiers with bound S: an epoch passes `witnessed` only
/// when T ≥ S × (its window + 1 s + δ) (docs/PROTOCOL.md §21, "The witnessed step").
fn warn_if_short_for(iterations: u64, epoch_ms: f64, max_rate: u64) {
    let seconds = epoch_ms / 1000.0 + 1.0 + DELTA_MS as f64 / 1000.0;
    let needed = (max_rate as f64 * seconds).ceil() as u64;
    if iterations < needed {
        println!(
            "vrs: warning: T = {iterations} is short of the {needed} squarings that S = \
             {max_rate} squarings/s (--max-rate) needs over epochs of about {epoch_ms:.0} ms: \
             games will fail `witnessed` for verifiers with that S; raise T about {:.1}-fold \
             (--security-margin, --iterations) or shorten --epoch-ms (docs/OPERATIONS.md, \
             \"Publishing the log and pushing to witnesses\")",
            needed as f64 / iterations.max(1) as f64
        );
    }
}

/// The witnessed log of `--log-origin`, with its key and its witnesses; None when unset.
async fn witnessed_log(
    config: &ServeConfig,
    store: &Arc<dyn Store>,
    declaration: Declaration,
) -> anyhow::Result<Option<leader::LogDuty>> {
    let Some(origin) = config.log_origin.as_deref().map(str::trim) else {
        if !config.witnesses.is_empty() {
            bail!("--witness needs --log-origin: there is no log to witness");
        }
        return Ok(None);
    };
    let key_file = match &config.log_key_file {
        Some(p) => p.clone(),
        None => {
            std::fs::create_dir_all(&config.data_dir)
                .with_context(|| format!("creating the data dir {}", config.data_dir.display()))?;
            config.data_dir.join("log.key")
        }
    };
    let seed = super::acceptance_key::load_named(&key_file, true, "log key")?.seed();
    let signer = LogSigner::new(origin, ed25519_dalek::SigningKey::from_bytes(&seed))
        .map_err(anyhow::Error::msg)
        .context("--log-origin")?;
    let mut witnesses = Vec::new();
    for spec in &config.witnesses {
        let mut words = spec.split_whitespace();
        let (Some(vkey), Some(url), None) = (words.next(), words.next(), words.next()) else {
            bail!("--witness {spec:?}: a cosignature key, a space, then the witness's URL");
        };
        let key = parse_vkey(vkey)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("--witness {spec:?}"))?;
        if key.alg != vrs_protocol::tlog::note::ALG_COSIGNATURE_V1 {
            bail!("--witness {spec:?}: a witness's key is a cosignature/v1 key (type 0x04)");
        }
        witnesses.push(WitnessTarget {
            key,
            url: url.to_owned(),
        });
    }
    let n = witnesses.len() as u64;
    let quorum = config.witness_quorum.unwrap_or(n / 2 + 1);
    if n > 0 && quorum > n {
        bail!("--witness-quorum {quorum}: only {n} witnesses are configured");
    }
    let own = OwnFloor {
        quorum: usize::try_from(quorum).unwrap_or(usize::MAX),
        max_rate: config
            .max_rate
            .unwrap_or_else(|| default_max_rate(&config.group_id())),
        delta_ms: DELTA_MS,
    };
    let log = OperatorLog::open(Arc::clone(store), signer, witnesses, own).await?;
    println!("vrs log {} key {}", log.origin(), log.vkey());
    Ok(Some(leader::LogDuty {
        log,
        declaration,
        every: Duration::from_millis(100),
    }))
}

/// The key acceptances are signed with: VRS_SIGNING_KEY, else --signing-key-file, else
/// `<data-dir>/acceptance.key` (created on first start). Never logged.
fn acceptance_signer(config: &ServeConfig) -> anyhow::Result<AcceptanceSigner> {
    if let Ok(text) = std::env::var("VRS_SIGNING_KEY") {
        return AcceptanceSigner::from_hex(&text).context("VRS_SIGNING_KEY");
    }
    match &config.signing_key_file {
        Some(path) => super::acceptance_key::load(path, false)
            .with_context(|| format!("--signing-key-file {}", path.display())),
        None => {
            std::fs::create_dir_all(&config.data_dir)
                .with_context(|| format!("creating the data dir {}", config.data_dir.display()))?;
            super::acceptance_key::load(&config.data_dir.join("acceptance.key"), true)
        }
    }
}

/// PostgreSQL when a database URL is given, else the embedded store in the data dir.
async fn open_store(config: &ServeConfig) -> anyhow::Result<Arc<dyn Store>> {
    match config.database_url.as_deref() {
        Some(url) if !url.trim().is_empty() => {
            let store = PgStore::connect_with_pool(url, usize::from(config.database_pool_size))
                .await
                .context("connecting to PostgreSQL (--database-url / DATABASE_URL)")?;
            tracing::info!(schema = store.schema(), "store: PostgreSQL");
            Ok(Arc::new(store))
        }
        _ => {
            let store = SqliteStore::open(&config.data_dir)
                .with_context(|| format!("opening the store in {}", config.data_dir.display()))?;
            Ok(Arc::new(store))
        }
    }
}

/// The first SIGINT or SIGTERM starts a graceful stop; a second one stops at once (exit 130),
/// for an operator who will not wait for the grace period.
async fn stop_on_signals(quit: watch::Sender<bool>) {
    let name = next_signal().await;
    tracing::info!(
        signal = name,
        "stopping: no new connections; requests in flight are finishing"
    );
    let _ = quit.send(true);
    let name = next_signal().await;
    tracing::warn!(signal = name, "second signal: stopping at once");
    std::process::exit(130);
}

/// Resolves on the next SIGINT or SIGTERM, with its name.
async fn next_signal() -> &'static str {
    let ctrl_c = async {
        match tokio::signal::ctrl_c().await {
            Ok(()) => {}
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => "SIGINT",
        () = term => "SIGTERM",
    }
}
