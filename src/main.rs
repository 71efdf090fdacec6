//! `rmqd`: load config, start the broker (and the embedded NameServer), wait for a signal, shut down.
//!
//! ```text
//! rmqd [-c broker.conf] [-n namesrvAddr] [-p]     a broker (+ embedded NameServer when no address is given)
//! rmqd namesrv [-c namesrv.conf] [-p]             only a NameServer, like mqnamesrv
//! ```

use std::path::Path;
use std::process::ExitCode;

use rmqd::broker::config::EmbeddedNamesrv;
use rmqd::broker::error::StartError;
use rmqd::broker::{BrokerConfig, BrokerController};
use rmqd::common::java_properties;
use rmqd::namesrv::server::NamesrvServer;
use rmqd::namesrv::NamesrvConfig;
use rmqd::server::ReceiveBudget;
use rmqd::store::config::MessageStoreConfig;

/// mimalloc instead of glibc malloc: every request allocates a few small, short-lived buffers
/// (header strings, properties, the response), which mimalloc's thread-local free lists serve
/// without the cost glibc's malloc/free showed under load (`benches/README.md`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "usage: rmqd [-c broker.conf] [-n namesrvAddr] [-p]
       rmqd namesrv [-c namesrv.conf] [-p]
       rmqd store verify <storeDir> [-c broker.conf]
       rmqd store dump <storeDir> commitlog [fromOffset [limit]] | cq <topic> <queueId> | index | checkpoint [-c broker.conf]";

/// Why `rmqd` stops with exit code 1; printed as `rmqd: <error>`.
#[derive(Debug, thiserror::Error)]
enum CliError {
    #[error("{0}\n{USAGE}")]
    Usage(String),
    #[error("cannot read config file {path}: {source}")]
    ReadConfig {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {reason}")]
    BadConfig { path: String, reason: String },
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("{0}")]
    Broker(#[from] StartError),
    #[error("{0}")]
    Namesrv(String),
    #[error("{0}")]
    Store(#[from] rmqd::store::StoreError),
    #[error("{0}")]
    StoreConfig(#[from] rmqd::store::ConfigError),
    #[error("{0} problem(s) found; start the broker to recover, or restore from a replica")]
    StoreProblems(usize),
}

impl CliError {
    fn usage(what: impl Into<String>) -> Self {
        Self::Usage(what.into())
    }

    fn bad_config(path: &str, reason: impl std::fmt::Display) -> Self {
        Self::BadConfig {
            path: path.to_string(),
            reason: reason.to_string(),
        }
    }
}

type CliResult<T> = Result<T, CliError>;

fn main() -> ExitCode {
    init_logging();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("namesrv") => run_namesrv(&args[1..]),
        Some("store") => run_store_tool(&args[1..]),
        Some("-h" | "--help") => {
            println!("{USAGE}");
            Ok(())
        }
        Some("--version" | "-v") => {
            println!("rmqd {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        _ => run_broker(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rmqd: {e}");
            ExitCode::from(1)
        }
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("RMQD_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    use std::io::IsTerminal;
    let ansi = std::io::stdout().is_terminal();
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(ansi)
        .init();
}

/// Parsed `-c`, `-n`, `-p` flags.
#[derive(Default)]
struct Flags {
    config_file: Option<String>,
    namesrv_addr: Option<String>,
    print_config: bool,
}

fn parse_flags(args: &[String]) -> CliResult<Flags> {
    let mut flags = Flags::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |what: &str| it.next().cloned().ok_or_else(|| CliError::usage(what));
        match a.as_str() {
            "-c" => flags.config_file = Some(value("-c needs a file")?),
            "-n" => flags.namesrv_addr = Some(value("-n needs an address")?),
            "-p" | "-m" => flags.print_config = true,
            other => return Err(CliError::usage(format!("unknown argument {other:?}"))),
        }
    }
    Ok(flags)
}

fn read_properties(path: &str) -> CliResult<Vec<(String, String)>> {
    let text = std::fs::read_to_string(path).map_err(|source| CliError::ReadConfig {
        path: path.to_string(),
        source,
    })?;
    Ok(java_properties::parse(&text))
}

/// Loads `-c` into the broker's and the store's configs; a key neither knows is logged and ignored.
fn load_broker_config(flags: &Flags) -> CliResult<(BrokerConfig, MessageStoreConfig)> {
    let mut config = BrokerConfig::default();
    let mut store = MessageStoreConfig::default();
    if let Some(path) = &flags.config_file {
        for (k, v) in read_properties(path)? {
            // Both halves see every key: a few (brokerRole, ...) matter to each.
            let for_broker = config
                .set(&k, &v)
                .map_err(|e| CliError::bad_config(path, e))?;
            let for_store = store
                .set(&k, &v)
                .map_err(|e| CliError::bad_config(path, e))?;
            let known = for_broker || for_store;
            if !known {
                tracing::warn!(key = %k, file = %path, "unknown or unsupported config key, ignored");
            }
        }
    }
    if let Some(addr) = &flags.namesrv_addr {
        config.namesrv_addr = Some(addr.clone());
    }
    if config.namesrv_addr.is_none() {
        config.namesrv_addr = std::env::var("NAMESRV_ADDR").ok().filter(|s| !s.is_empty());
    }
    // Both halves need the role; the broker's copy was validated above.
    store.set("brokerRole", &config.broker_role)?;
    Ok((config, store))
}

/// Network worker threads: `TOKIO_WORKER_THREADS` when set, else half the cores (at least one).
///
/// The store runs its own threads beside these (flush, dispatch, prefault, cleanup) and the
/// kernel's loopback and disk work needs CPU too, so one worker per core only adds hand-offs
/// between workers (each a cross-CPU wake-up, which costs most in a VM): on 2 cores one worker
/// used less CPU per message and had the shorter tail (`benches/README.md`).
fn worker_threads() -> usize {
    let from_env = std::env::var("TOKIO_WORKER_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0);
    from_env.unwrap_or_else(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (cores / 2).max(1)
    })
}

fn runtime() -> CliResult<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(worker_threads())
        .enable_all()
        .thread_name("rmqd")
        .build()
        .map_err(CliError::Runtime)
}

fn run_broker(args: &[String]) -> CliResult<()> {
    let flags = parse_flags(args)?;
    let (config, store_config) = load_broker_config(&flags)?;
    if flags.print_config {
        let mut pairs = config.key_values();
        pairs.extend(
            store_config
                .keys_and_values()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v)),
        );
        print!("{}", java_properties::write(&pairs));
        return Ok(());
    }
    runtime()?.block_on(async move {
        let mut config = config;
        // one receive budget for the process: the broker's ports and the embedded NameServer
        let budget = ReceiveBudget::new(config.receive_buffer_budget);
        let namesrv = start_embedded_namesrv(&mut config, &budget).await?;
        let broker = BrokerController::start_with_budget(config, store_config, budget).await?;
        let c = &broker.ctx.config;
        println!(
            "The broker[{}, {}] boot success. serializeType=JSON and name server is {}",
            c.broker_name,
            c.broker_addr(),
            c.namesrv_addr.as_deref().unwrap_or("")
        );
        wait_for_signal().await;
        tracing::info!("shutting down");
        broker.shutdown().await;
        if let Some(ns) = namesrv {
            ns.shutdown();
        }
        Ok(())
    })
}

/// The embedded NameServer on a thread and runtime of its own: however busy the broker's
/// workers are, route queries and registrations are answered.
struct NamesrvThread {
    addr: std::net::SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl NamesrvThread {
    fn start(config: NamesrvConfig, budget: ReceiveBudget) -> CliResult<Self> {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("namesrv".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.to_string()));
                        return;
                    }
                };
                rt.block_on(async move {
                    match NamesrvServer::start_with_budget(config, budget).await {
                        Ok(ns) => {
                            let _ = ready_tx.send(Ok(ns.local_addr()));
                            let _ = stop_rx.await;
                            ns.shutdown().await;
                        }
                        Err(e) => {
                            let _ = ready_tx.send(Err(e.to_string()));
                        }
                    }
                });
            })
            .map_err(|e| CliError::Namesrv(e.to_string()))?;
        let addr = ready_rx
            .recv()
            .map_err(|_| CliError::Namesrv("the NameServer thread ended".into()))?
            .map_err(CliError::Namesrv)?;
        Ok(Self {
            addr,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    fn local_addr(&self) -> std::net::SocketAddr {
        self.addr
    }

    /// Stops it and waits for its thread.
    fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn load_namesrv_config(flags: &Flags) -> CliResult<NamesrvConfig> {
    let mut config = NamesrvConfig::default();
    if let Some(path) = &flags.config_file {
        for (k, v) in read_properties(path)? {
            if !config
                .set(&k, &v)
                .map_err(|e| CliError::bad_config(path, e))?
            {
                tracing::warn!(key = %k, file = %path, "unknown or unsupported config key, ignored");
            }
        }
    }
    Ok(config)
}

fn run_namesrv(args: &[String]) -> CliResult<()> {
    let flags = parse_flags(args)?;
    let config = load_namesrv_config(&flags)?;
    if flags.print_config {
        print!("{}", config.to_properties_text());
        return Ok(());
    }
    runtime()?.block_on(async move {
        let ns = NamesrvServer::start(config)
            .await
            .map_err(|e| CliError::Namesrv(e.to_string()))?;
        println!(
            "The Name Server boot success. serializeType=JSON, address {}",
            ns.local_addr()
        );
        wait_for_signal().await;
        tracing::info!("shutting down");
        ns.shutdown().await;
        Ok(())
    })
}

/// The embedded NameServer, when the broker has no NameServer address (or is told to run one).
async fn start_embedded_namesrv(
    config: &mut BrokerConfig,
    budget: &ReceiveBudget,
) -> CliResult<Option<NamesrvThread>> {
    let wanted = match config.embedded_namesrv {
        EmbeddedNamesrv::On => true,
        EmbeddedNamesrv::Off => false,
        EmbeddedNamesrv::Auto => config.namesrv_addr.is_none(),
    };
    if !wanted {
        return Ok(None);
    }
    let ns_config = NamesrvConfig {
        listen_port: config.embedded_namesrv_listen_port,
        bind_address: config.embedded_namesrv_bind_address.clone(),
        ..Default::default()
    };
    let ns = NamesrvThread::start(ns_config, budget.clone())?;
    let addr = ns.local_addr();
    let host = if addr.ip().is_unspecified() {
        "127.0.0.1".to_string()
    } else {
        addr.ip().to_string()
    };
    let own = format!("{host}:{}", addr.port());
    config.namesrv_addr = Some(match config.namesrv_addr.take() {
        Some(list) if !list.split(';').any(|a| a == own) => format!("{list};{own}"),
        Some(list) => list,
        None => own,
    });
    tracing::info!(%addr, "embedded NameServer started");
    Ok(Some(ns))
}

/// `rmqd store verify|dump <dir>`: the operator's store tool. File sizes come from `-c` (the
/// broker's config) or the Java defaults.
fn run_store_tool(args: &[String]) -> CliResult<()> {
    let (mut rest, mut conf) = (Vec::new(), None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-c" => {
                conf = Some(
                    it.next()
                        .cloned()
                        .ok_or_else(|| CliError::usage("-c needs a file"))?,
                )
            }
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(());
            }
            _ => rest.push(a.as_str()),
        }
    }
    let (Some(cmd), Some(dir)) = (rest.first(), rest.get(1)) else {
        return Err(CliError::usage("store needs a command and a directory"));
    };
    // The tool only reads a store; it must not leave a fresh `lock` in a mistyped path.
    if !Path::new(dir).is_dir() {
        return Err(CliError::usage(format!(
            "store directory {dir:?} does not exist (give the broker's storePathRootDir)"
        )));
    }
    let mut cfg = MessageStoreConfig::default();
    if let Some(path) = &conf {
        for (k, v) in read_properties(path)? {
            cfg.set(&k, &v).map_err(|e| CliError::bad_config(path, e))?;
        }
    }
    cfg.set("storePathRootDir", dir)?;
    cfg.store_path_commit_log = None;
    match *cmd {
        "verify" => verify_store(&cfg),
        "dump" => dump_store(&cfg, &rest[2..]),
        other => Err(CliError::usage(format!("unknown store command {other:?}"))),
    }
}

fn verify_store(cfg: &MessageStoreConfig) -> CliResult<()> {
    use std::io::Write;
    let mut last = std::time::Instant::now();
    let mut progress = |phase: &str, done: u64, total: u64| {
        if last.elapsed().as_millis() >= 200 || done == total {
            last = std::time::Instant::now();
            let pct = (done * 100).checked_div(total).unwrap_or(100);
            eprint!("\r{phase:<14} {pct:>3}% ({done}/{total})   ");
            let _ = std::io::stderr().flush();
        }
    };
    let report = rmqd::store::tools::verify(cfg, &mut progress)?;
    eprintln!();
    println!(
        "commitlog: {} files, {} records ({} bytes), valid end {}; consumequeue: {} queues, {} units; index: {} files, {} entries; abort file: {}",
        report.commit_log_files, report.records, report.record_bytes, report.commit_log_end,
        report.consume_queues, report.cq_units, report.index_files, report.index_entries,
        if report.abort_present { "present (last stop was not clean)" } else { "absent" },
    );
    let rocks = rmqd::store::StorePaths::new(&cfg.store_path_root_dir, None).consume_queue_root();
    if rocks.join("CURRENT").is_file() {
        println!(
            "consumequeue: a RocksDB consume queue (storeType=defaultRocksDB) at {}; not checked \
             by this tool (start the broker: recovery re-dispatches from its checkpoint)",
            rocks.display()
        );
    }
    for p in &report.problems {
        let label = match p.severity {
            rmqd::store::tools::Severity::Warning => "WARNING",
            rmqd::store::tools::Severity::Error => "PROBLEM",
        };
        println!("{label} {} @ {}: {}", p.file.display(), p.offset, p.what);
    }
    let warnings = report.problems.len() - report.errors();
    if report.is_ok() {
        match warnings {
            0 => println!("store OK"),
            n => println!("store OK: {n} warnings, each repaired by recovery as the Java broker's"),
        }
        Ok(())
    } else {
        Err(CliError::StoreProblems(report.errors()))
    }
}

fn dump_store(cfg: &MessageStoreConfig, what: &[&str]) -> CliResult<()> {
    use rmqd::store::tools::DumpTarget;
    let num = |s: Option<&&str>, d: i64| {
        s.map(|v| {
            v.parse::<i64>()
                .map_err(|_| CliError::usage(format!("not a number: {v}")))
        })
        .unwrap_or(Ok(d))
    };
    let target = match what.first().copied() {
        Some("commitlog") | None => DumpTarget::CommitLog {
            from: num(what.get(1), 0)?,
            limit: num(what.get(2), 100)? as usize,
        },
        Some("cq") => DumpTarget::ConsumeQueue {
            topic: what
                .get(1)
                .ok_or_else(|| CliError::usage("cq needs a topic"))?
                .to_string(),
            queue_id: num(what.get(2), 0)? as i32,
        },
        Some("index") => DumpTarget::Index,
        Some("checkpoint") => DumpTarget::Checkpoint,
        Some(other) => return Err(CliError::usage(format!("unknown dump target {other:?}"))),
    };
    Ok(rmqd::store::tools::dump(
        cfg,
        &target,
        &mut std::io::stdout().lock(),
    )?)
}

async fn wait_for_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}
