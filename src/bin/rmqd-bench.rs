//! `rmqd-bench`: a lean Remoting load generator, identical for the Java broker and rmqd.
//!
//! It talks to one broker address directly (no NameServer) and prints one JSON line per command.
//!
//! ```text
//! rmqd-bench create-topic --addr H:P --topic T [--queues 8] [--attributes +k=v,+k2=v2]
//! rmqd-bench run   --addr H:P --topic T [--mode sync|async] [--size 1024] [--conns 4] [--window 32]
//!                  [--duration 20 | --count N] [--consume true|false|pop] [--broker-name broker-a] [--group G]
//!                  [--drain-timeout 15] [--suspend-ms 1000] [--rate 0] [--lites N [--lite-prefix l] [--lite-start 0]]
//! rmqd-bench lite-drain --addr H:P --topic PARENT --lites N [--lite-prefix l] [--conns 2] [--window 16] [--group G]
//! rmqd-bench probe --addr H:P --topic T [--since-ns <unix ns>] [--timeout 120]
//! rmqd-bench offsets --addr H:P --topic T [--queues 8] [--group G]
//! rmqd-bench lite-info --addr H:P
//! ```
//! `run`: `conns` connections, each with `window` requests in flight (`sync` forces window 1). With `--consume`,
//! one extra connection long-polls every queue from offset 0 (use a fresh topic per run) and the run fails when the
//! number consumed differs from the number acknowledged. Send RTT and end-to-end latency (send time written in the
//! first 8 bytes of the body → receive time) go into log-bucket histograms (3% resolution, exact max).
//! `run --lites N`: every send carries the `__LITE_TOPIC` property (a Lite Topic of RocketMQ 5.5), cycling over the
//! names `<lite-prefix><(lite-start + k) % N>` with one counter shared by all senders (send k of the run); with
//! `--count N --lites N` each send names a lite topic of its own (the first send of a new lite topic creates its
//! LMQ `%LMQ%$<topic>$<name>`). Use `--consume false` with it and read the lite queues with `lite-drain`.
//! `lite-drain`: reads every lite queue `%LMQ%$<topic>$<prefix><i>` (queue 0, i < N) from offset 0 to its end with
//! plain PULL_MESSAGE (no suspend; what an LMQ pull consumer sends), `conns` x `window` queues at a time; counts
//! the messages and the queues that had any.
//! `probe`: retries connect + create-topic + send until one send is acknowledged; prints the time since
//! `--since-ns` (the broker's process start) — start-up / recovery time.
//! `offsets`: the topic's stored messages (sum of the queues' max offsets) and, with `--group`, what that group has
//! committed (sum of its consumer offsets; a queue without one counts 0): counts for load the generator did not send
//! (the official benchmark tools print rates, not totals).
//! `lite-info`: GET_BROKER_LITE_INFO (200074, what `mqadmin getBrokerLiteInfo` sends); prints the broker's answer with
//! its `currentLmqNum` (the LMQs the consume-queue store holds: on `storeType=defaultRocksDB` the lite queues are
//! keys, not directories, so this is how a script counts them).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use rmqd::common::message::PROPERTY_LITE_TOPIC;
use rmqd::common::topic::lite_lmq_name;
use rmqd::remoting::codec::encode_frame;
use rmqd::remoting::header::create_topic::CreateTopicRequestHeader;
use rmqd::remoting::header::get_max_offset::GetMaxOffsetRequestHeader;
use rmqd::remoting::header::pull_message::PullMessageRequestHeader;
use rmqd::remoting::header::query_consumer_offset::QueryConsumerOffsetRequestHeader;
use rmqd::remoting::header::send_message::SendMessageRequestHeaderV2;
use rmqd::remoting::header::CommandHeader;
use rmqd::remoting::{FrameCodec, RemotingCommand, RequestCode, ResponseCode, SerializeType};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio_util::codec::FramedRead;

/// The same allocator as the broker: the generator shares the 2 cores with the broker it drives,
/// and glibc's malloc was a fifth of its CPU (one request, one response, one oneshot per send).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const RPC_TIMEOUT: Duration = Duration::from_secs(5);
const PULL_BATCH: i32 = 32;

// ---------------------------------------------------------------------------------------------------------------
// Histogram: exact below 64 µs, then 32 sub-buckets per power of two (≤3.2% relative error); exact max.

#[derive(Clone)]
struct Hist {
    counts: Vec<u64>,
    n: u64,
    max: u64,
}

impl Default for Hist {
    fn default() -> Self {
        Self::new()
    }
}

impl Hist {
    fn new() -> Self {
        Self {
            counts: vec![0; 64 + 60 * 32],
            n: 0,
            max: 0,
        }
    }

    fn index(v: u64) -> usize {
        if v < 64 {
            return v as usize;
        }
        let msb = 63 - v.leading_zeros() as usize;
        let shift = msb - 5;
        let mantissa = (v >> shift) as usize;
        64 + (shift - 1) * 32 + (mantissa - 32)
    }

    fn value(idx: usize) -> u64 {
        if idx < 64 {
            return idx as u64;
        }
        let shift = (idx - 64) / 32 + 1;
        let mantissa = ((idx - 64) % 32 + 32) as u64;
        (mantissa << shift) + (1u64 << shift) / 2
    }

    fn record(&mut self, v: u64) {
        self.counts[Self::index(v)] += 1;
        self.n += 1;
        self.max = self.max.max(v);
    }

    fn merge(&mut self, o: &Hist) {
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
        self.n += o.n;
        self.max = self.max.max(o.max);
    }

    fn quantile(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::value(i).min(self.max);
            }
        }
        self.max
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "count": self.n,
            "p50": self.quantile(0.50),
            "p90": self.quantile(0.90),
            "p99": self.quantile(0.99),
            "p999": self.quantile(0.999),
            "max": self.max,
        })
    }
}

// ---------------------------------------------------------------------------------------------------------------
// A multiplexed Remoting client: one writer task, one reader task, responses matched by opaque.

type Pending = Arc<Mutex<HashMap<i32, oneshot::Sender<RemotingCommand>>>>;

#[derive(Clone)]
struct Client {
    tx: mpsc::Sender<Bytes>,
    pending: Pending,
    next: Arc<AtomicI32>,
    dead: Arc<AtomicBool>,
}

#[derive(Debug)]
enum RpcError {
    Timeout,
    Closed,
}

/// Why a subcommand failed; printed as JSON `{"error": ...}` and on stderr.
#[derive(Debug, thiserror::Error)]
enum BenchError {
    #[error(
        "usage: rmqd-bench create-topic|run|lite-drain|probe|offsets|lite-info --addr H:P --topic T [...]; see the source header"
    )]
    Usage,
    #[error("unexpected argument {0}")]
    UnexpectedArgument(String),
    #[error("--{0} needs a value")]
    MissingValue(String),
    #[error("--{key}: bad number {value}")]
    BadNumber { key: String, value: String },
    #[error("connect {addr}: {source}")]
    Connect {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{what}: {rpc:?}")]
    Rpc { what: String, rpc: RpcError },
    #[error("{what}: code {code} {remark:?}")]
    Refused {
        what: String,
        code: i32,
        remark: Option<String>,
    },
    #[error("no acknowledged send within {0:?}")]
    NoAck(Duration),
    #[error("{0}")]
    Task(#[from] tokio::task::JoinError),
}

impl BenchError {
    fn rpc(what: &str, rpc: RpcError) -> Self {
        Self::Rpc {
            what: what.to_string(),
            rpc,
        }
    }

    fn refused(what: &str, r: &RemotingCommand) -> Self {
        Self::Refused {
            what: what.to_string(),
            code: r.code,
            remark: r.remark.clone(),
        }
    }
}

impl Client {
    async fn connect(addr: &str) -> std::io::Result<Client> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let (rd, mut wr) = stream.into_split();
        let (tx, mut rx) = mpsc::channel::<Bytes>(4096);
        let pending: Pending = Arc::new(Mutex::new(HashMap::new()));
        let dead = Arc::new(AtomicBool::new(false));
        let d = dead.clone();
        tokio::spawn(async move {
            // Coalesce whatever is queued into one write.
            let mut buf = BytesMut::with_capacity(256 * 1024);
            while let Some(first) = rx.recv().await {
                buf.extend_from_slice(&first);
                while buf.len() < 1024 * 1024 {
                    match rx.try_recv() {
                        Ok(b) => buf.extend_from_slice(&b),
                        Err(_) => break,
                    }
                }
                if wr.write_all(&buf).await.is_err() {
                    d.store(true, Ordering::Relaxed);
                    break;
                }
                buf.clear();
            }
        });
        let p = pending.clone();
        let d = dead.clone();
        tokio::spawn(async move {
            let mut frames = FramedRead::with_capacity(rd, FrameCodec::default(), 256 * 1024);
            while let Some(Ok(cmd)) = frames.next().await {
                if !cmd.is_response() {
                    continue; // broker-initiated requests (none expected) are ignored
                }
                if let Some(s) = p.lock().unwrap().remove(&cmd.opaque) {
                    let _ = s.send(cmd);
                }
            }
            d.store(true, Ordering::Relaxed);
            p.lock().unwrap().clear();
        });
        Ok(Client {
            tx,
            pending,
            next: Arc::new(AtomicI32::new(1)),
            dead,
        })
    }

    async fn call(
        &self,
        mut cmd: RemotingCommand,
        timeout: Duration,
    ) -> Result<RemotingCommand, RpcError> {
        if self.dead.load(Ordering::Relaxed) {
            return Err(RpcError::Closed);
        }
        let opaque = self.next.fetch_add(1, Ordering::Relaxed);
        cmd.opaque = opaque;
        let mut buf = BytesMut::new();
        encode_frame(&cmd, &mut buf);
        let (s, r) = oneshot::channel();
        self.pending.lock().unwrap().insert(opaque, s);
        if self.tx.send(buf.freeze()).await.is_err() {
            self.pending.lock().unwrap().remove(&opaque);
            return Err(RpcError::Closed);
        }
        match tokio::time::timeout(timeout, r).await {
            Ok(Ok(resp)) => Ok(resp),
            Ok(Err(_)) => Err(RpcError::Closed),
            Err(_) => {
                self.pending.lock().unwrap().remove(&opaque);
                Err(RpcError::Timeout)
            }
        }
    }
}

fn request(code: RequestCode, header: &impl CommandHeader) -> RemotingCommand {
    let mut cmd = RemotingCommand::request(code.code());
    // the ROCKETMQ header holds the code in 16 bits: the 5.x codes above 32767 (POP, ACK) go
    // as JSON, as the Java client sends them
    cmd.serialize_type = if code.code() > i16::MAX as i32 {
        SerializeType::Json
    } else {
        SerializeType::RocketMq
    };
    header.write_to(cmd.ext_mut());
    cmd
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_micros() as u64
}

fn create_topic_cmd(topic: &str, queues: i32) -> RemotingCommand {
    create_topic_cmd_with(topic, queues, None)
}

/// UPDATE_AND_CREATE_TOPIC with `attributes` (`+message.type=LITE,+lite.topic.expiration=<min>`, as mqadmin `-a`).
fn create_topic_cmd_with(topic: &str, queues: i32, attributes: Option<String>) -> RemotingCommand {
    let h = CreateTopicRequestHeader {
        topic: topic.to_string(),
        default_topic: "TBW102".into(),
        read_queue_nums: queues,
        write_queue_nums: queues,
        perm: 6,
        topic_filter_type: "SINGLE_TAG".into(),
        topic_sys_flag: Some(0),
        order: false,
        attributes,
        ..Default::default()
    };
    request(RequestCode::UPDATE_AND_CREATE_TOPIC, &h)
}

fn send_cmd(topic: &str, queue: i32, body: Bytes) -> RemotingCommand {
    send_cmd_lite(topic, queue, body, None)
}

/// SEND_MESSAGE_V2; with `lite`, the message names that lite topic of `topic` (`__LITE_TOPIC`).
fn send_cmd_lite(topic: &str, queue: i32, body: Bytes, lite: Option<&str>) -> RemotingCommand {
    let mut props = String::from("WAIT\u{1}true\u{2}");
    if let Some(l) = lite {
        props.push_str(PROPERTY_LITE_TOPIC);
        props.push('\u{1}');
        props.push_str(l);
        props.push('\u{2}');
    }
    let h = SendMessageRequestHeaderV2 {
        a: "rmqd_bench_producer".into(),
        b: topic.to_string(),
        c: "TBW102".into(),
        d: 4,
        e: queue,
        f: 0,
        g: (now_us() / 1000) as i64,
        h: 0,
        i: Some(props),
        j: Some(0),
        k: Some(false),
        m: Some(false),
        ..Default::default()
    };
    request(RequestCode::SEND_MESSAGE_V2, &h).with_body(body)
}

fn body_of(size: usize) -> Vec<u8> {
    let mut b = vec![b'x'; size.max(16)];
    b[8..16].copy_from_slice(b"rmqdbnch");
    b
}

fn stamped(template: &[u8]) -> Bytes {
    let mut b = BytesMut::from(template);
    b[0..8].copy_from_slice(&now_us().to_be_bytes());
    b.freeze()
}

// ---------------------------------------------------------------------------------------------------------------
// Arguments: `--key value` pairs after the sub-command.

struct Args(HashMap<String, String>);

impl Args {
    fn parse(it: impl Iterator<Item = String>) -> Result<Args, BenchError> {
        let mut m = HashMap::new();
        let mut it = it.peekable();
        while let Some(k) = it.next() {
            let key = k
                .strip_prefix("--")
                .ok_or_else(|| BenchError::UnexpectedArgument(k.clone()))?;
            let v = it
                .next()
                .ok_or_else(|| BenchError::MissingValue(key.to_string()))?;
            m.insert(key.to_string(), v);
        }
        Ok(Args(m))
    }
    fn s(&self, k: &str, d: &str) -> String {
        self.0.get(k).cloned().unwrap_or_else(|| d.to_string())
    }
    fn n<T: std::str::FromStr>(&self, k: &str, d: T) -> Result<T, BenchError> {
        match self.0.get(k) {
            None => Ok(d),
            Some(v) => v.parse().map_err(|_| BenchError::BadNumber {
                key: k.to_string(),
                value: v.clone(),
            }),
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------

async fn create_topic(a: &Args) -> Result<serde_json::Value, BenchError> {
    let addr = a.s("addr", "127.0.0.1:10911");
    let topic = a.s("topic", "BenchTopic");
    let queues = a.n("queues", 8)?;
    let attributes = a.0.get("attributes").cloned();
    let c = connect(&addr).await?;
    let r = c
        .call(
            create_topic_cmd_with(&topic, queues, attributes.clone()),
            RPC_TIMEOUT,
        )
        .await
        .map_err(|e| BenchError::rpc("create topic", e))?;
    if r.code != ResponseCode::SUCCESS.code() {
        return Err(BenchError::refused("create topic", &r));
    }
    Ok(
        serde_json::json!({"cmd": "create-topic", "topic": topic, "queues": queues, "attributes": attributes}),
    )
}

async fn lite_info(a: &Args) -> Result<serde_json::Value, BenchError> {
    let addr = a.s("addr", "127.0.0.1:10911");
    let c = connect(&addr).await?;
    let mut cmd = RemotingCommand::request(RequestCode::GET_BROKER_LITE_INFO.code());
    cmd.serialize_type = SerializeType::Json;
    let r = c
        .call(cmd, RPC_TIMEOUT)
        .await
        .map_err(|e| BenchError::rpc("broker lite info", e))?;
    if r.code != ResponseCode::SUCCESS.code() {
        return Err(BenchError::refused("broker lite info", &r));
    }
    let raw = r.body.to_bytes();
    let body: serde_json::Value = serde_json::from_slice(&raw)
        .unwrap_or_else(|_| String::from_utf8_lossy(&raw).into_owned().into());
    let current = body
        .get("currentLmqNum")
        .cloned()
        .unwrap_or(serde_json::Value::Null);
    Ok(serde_json::json!({"cmd": "lite-info", "currentLmqNum": current, "body": body}))
}

/// The `offset` of an offset query's response; with `missing_is_zero`, QUERY_NOT_FOUND (a group that has
/// committed nothing on the queue) counts 0.
async fn offset_call(
    c: &Client,
    cmd: RemotingCommand,
    what: &str,
    missing_is_zero: bool,
) -> Result<i64, BenchError> {
    let r = c
        .call(cmd, RPC_TIMEOUT)
        .await
        .map_err(|e| BenchError::rpc(what, e))?;
    match r.ext("offset").and_then(|v| v.parse().ok()) {
        Some(o) if r.code == ResponseCode::SUCCESS.code() => Ok(o),
        _ if missing_is_zero && r.code == ResponseCode::QUERY_NOT_FOUND.code() => Ok(0),
        _ => Err(BenchError::refused(what, &r)),
    }
}

async fn offsets(a: &Args) -> Result<serde_json::Value, BenchError> {
    let addr = a.s("addr", "127.0.0.1:10911");
    let topic = a.s("topic", "BenchTopic");
    let queues: i32 = a.n("queues", 8)?;
    let group = a.0.get("group").cloned();
    let c = connect(&addr).await?;
    let (mut stored, mut committed) = (0i64, 0i64);
    for queue_id in 0..queues {
        let h = GetMaxOffsetRequestHeader {
            topic: topic.clone(),
            queue_id,
            ..Default::default()
        };
        stored += offset_call(
            &c,
            request(RequestCode::GET_MAX_OFFSET, &h),
            "max offset",
            false,
        )
        .await?;
        if let Some(g) = &group {
            let h = QueryConsumerOffsetRequestHeader {
                consumer_group: g.clone(),
                topic: topic.clone(),
                queue_id,
                ..Default::default()
            };
            let cmd = request(RequestCode::QUERY_CONSUMER_OFFSET, &h);
            committed += offset_call(&c, cmd, "committed", true).await?;
        }
    }
    let mut v = serde_json::json!({"cmd": "offsets", "topic": topic, "stored": stored});
    if let Some(g) = group {
        v["group"] = g.into();
        v["committed"] = committed.into();
    }
    Ok(v)
}

async fn probe(a: &Args) -> Result<serde_json::Value, BenchError> {
    let addr = a.s("addr", "127.0.0.1:10911");
    let topic = a.s("topic", "BenchProbe");
    let since_ns: u128 = a.n("since-ns", 0u128)?;
    let timeout = Duration::from_secs(a.n("timeout", 180u64)?);
    let started = Instant::now();
    let base = if since_ns == 0 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos()
    } else {
        since_ns
    };
    let mut attempts = 0u64;
    let mut connected_ms = None;
    loop {
        if started.elapsed() > timeout {
            return Err(BenchError::NoAck(timeout));
        }
        attempts += 1;
        let Ok(c) = Client::connect(&addr).await else {
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        };
        let elapsed_ms = |base: u128| {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos();
            (now.saturating_sub(base)) as f64 / 1e6
        };
        connected_ms.get_or_insert_with(|| elapsed_ms(base));
        let ok_topic = matches!(
            c.call(create_topic_cmd(&topic, 8), RPC_TIMEOUT).await,
            Ok(r) if r.code == ResponseCode::SUCCESS.code()
        );
        if ok_topic {
            if let Ok(r) = c
                .call(send_cmd(&topic, 0, stamped(&body_of(128))), RPC_TIMEOUT)
                .await
            {
                if r.code == ResponseCode::SUCCESS.code() {
                    return Ok(serde_json::json!({
                        "cmd": "probe",
                        "first_ack_ms": elapsed_ms(base),
                        "port_open_ms": connected_ms,
                        "attempts": attempts,
                    }));
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[derive(Default)]
struct SendResult {
    hist: Hist,
    ok: u64,
    failed: u64,
    codes: HashMap<String, u64>,
}

/// CPU seconds (user + system, all threads) this process has used so far: fields 14 and 15 of
/// `/proc/self/stat`, in USER_HZ ticks (100 on every Linux architecture this runs on).
fn own_cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let ticks: u64 = after_name
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|x| x.parse::<u64>().ok())
        .sum();
    ticks as f64 / 100.0
}

/// `run`'s options (see the module doc).
struct RunOptions {
    addr: String,
    topic: String,
    mode: String,
    size: usize,
    conns: usize,
    window: usize,
    duration: Duration,
    count: u64,
    queues: i32,
    consume: bool,
    /// `--consume pop`: consume by POP_MESSAGE (every queue, 32 at a time) and one ACK_MESSAGE
    /// per message, as the Java push consumer in POP mode does; `--broker-name` goes into the
    /// receipts (it must be the broker's, or the acks do not pair with the checkpoints).
    pop: bool,
    broker_name: String,
    group: String,
    drain_timeout: Duration,
    suspend_ms: i64,
    /// Offered load in messages/s over all connections (0 = as fast as the window allows), so
    /// both brokers can be measured at the same rate.
    rate: f64,
    /// `--lites N`: lite topics the sends cycle over (0 = plain sends).
    lites: u64,
    lite_prefix: String,
    lite_start: u64,
}

impl RunOptions {
    fn parse(a: &Args) -> Result<Self, BenchError> {
        let topic = a.s("topic", "BenchTopic");
        let mode = a.s("mode", "sync");
        Ok(RunOptions {
            addr: a.s("addr", "127.0.0.1:10911"),
            size: a.n("size", 1024)?,
            conns: a.n("conns", 4)?,
            window: if mode == "sync" {
                1
            } else {
                a.n("window", 32)?
            },
            duration: Duration::from_secs_f64(a.n("duration", 20.0)?),
            count: a.n("count", 0)?,
            queues: a.n("queues", 8)?,
            consume: a.s("consume", "true") != "false",
            pop: a.s("consume", "true") == "pop",
            broker_name: a.s("broker-name", "broker-a"),
            group: a.s("group", &format!("bench_{topic}")),
            drain_timeout: Duration::from_secs_f64(a.n("drain-timeout", 15.0)?),
            suspend_ms: a.n("suspend-ms", 1000)?,
            rate: a.n("rate", 0.0)?,
            lites: a.n("lites", 0)?,
            lite_prefix: a.s("lite-prefix", "l"),
            lite_start: a.n("lite-start", 0)?,
            topic,
            mode,
        })
    }
}

async fn run(a: &Args) -> Result<(serde_json::Value, bool), BenchError> {
    let cpu0 = own_cpu_secs();
    let o = RunOptions::parse(a)?;
    let mut clients = Vec::new();
    for _ in 0..o.conns {
        clients.push(connect(&o.addr).await?);
    }
    let consumers = Consumers::start(&o).await?;
    let plan = SendPlan::new(&o);
    let (t0, t0_us) = (plan.t0, plan.t0_us);
    let sends = SendResult::join(spawn_senders(&o, &clients, &plan)).await?;
    let send_secs = t0.elapsed().as_secs_f64();
    let sent = sends.ok;
    let got = consumers.drain(&o, sent, t0).await;
    let mismatch = o.consume && got.n != sent;
    let v = serde_json::json!({
        "cmd": "run",
        "topic": o.topic,
        "mode": o.mode,
        "size": o.size,
        "conns": o.conns,
        "window": o.window,
        "rate": o.rate,
        "lites": o.lites,
        "send_secs": send_secs,
        "sent": sent,
        "failed": sends.failed,
        "fail_codes": sends.codes,
        "send_tps": sent as f64 / send_secs,
        "send_rtt_us": sends.hist.json(),
        "consumed": got.n,
        "consume_tps": if got.secs > 0.0 { got.n as f64 / got.secs } else { 0.0 },
        "e2e_us": got.e2e.json(),
        "slow_e2e": slow_episodes(got.slow, t0_us),
        "count_mismatch": mismatch,
        // the generator's own CPU over the run; near `--threads` x run time means it, not the
        // broker, limited the throughput
        "generator_cpu_s": own_cpu_secs() - cpu0,
    });
    Ok((v, mismatch))
}

async fn connect(addr: &str) -> Result<Client, BenchError> {
    Client::connect(addr)
        .await
        .map_err(|source| BenchError::Connect {
            addr: addr.to_string(),
            source,
        })
}

/// What every sender task of a run shares.
#[derive(Clone)]
struct SendPlan {
    topic: String,
    template: Arc<Vec<u8>>,
    /// Sends left (`--count`; unbounded with `--duration`).
    budget: Arc<AtomicU64>,
    /// With `--rate`: the next send slot, counted from `t0`.
    tickets: Arc<AtomicU64>,
    rate: f64,
    /// The start of the sends, as an `Instant` and in µs since the epoch.
    t0: Instant,
    t0_us: u64,
    deadline: Option<Instant>,
    queues: i32,
    /// `--lites`: send k names lite topic `lite_prefix` + (`lite_start` + k) % `lites`.
    lites: u64,
    lite_prefix: Arc<str>,
    lite_start: u64,
    lite_next: Arc<AtomicU64>,
}

impl SendPlan {
    fn new(o: &RunOptions) -> Self {
        let template = Arc::new(body_of(o.size));
        let budget = Arc::new(AtomicU64::new(if o.count == 0 {
            u64::MAX
        } else {
            o.count
        }));
        let t0 = Instant::now();
        SendPlan {
            topic: o.topic.clone(),
            template,
            budget,
            tickets: Arc::new(AtomicU64::new(0)),
            rate: o.rate,
            t0,
            t0_us: now_us(),
            deadline: (o.count == 0).then(|| t0 + o.duration),
            queues: o.queues,
            lites: o.lites,
            lite_prefix: o.lite_prefix.as_str().into(),
            lite_start: o.lite_start,
            lite_next: Arc::new(AtomicU64::new(0)),
        }
    }
}

/// `window` sender tasks per connection, spreading their sends over the queues.
fn spawn_senders(
    o: &RunOptions,
    clients: &[Client],
    plan: &SendPlan,
) -> Vec<tokio::task::JoinHandle<SendResult>> {
    let mut senders = Vec::new();
    for (ci, c) in clients.iter().enumerate() {
        for w in 0..o.window {
            let q = ((ci * o.window + w) as i32) % o.queues;
            senders.push(tokio::spawn(send_loop(c.clone(), plan.clone(), q)));
        }
    }
    senders
}

/// One sender: waits for its rate slot, sends, records the RTT; until the deadline or the
/// budget runs out.
async fn send_loop(c: Client, plan: SendPlan, mut q: i32) -> SendResult {
    let mut r = SendResult::default();
    loop {
        if plan.rate > 0.0 {
            let k = plan.tickets.fetch_add(1, Ordering::Relaxed);
            let at = plan.t0 + Duration::from_secs_f64(k as f64 / plan.rate);
            tokio::time::sleep_until(at.into()).await;
        }
        if plan.deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        if plan
            .budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| b.checked_sub(1))
            .is_err()
        {
            break;
        }
        let lite = (plan.lites > 0).then(|| {
            let k = plan.lite_next.fetch_add(1, Ordering::Relaxed);
            format!("{}{}", plan.lite_prefix, (plan.lite_start + k) % plan.lites)
        });
        let cmd = send_cmd_lite(&plan.topic, q, stamped(&plan.template), lite.as_deref());
        q = (q + 1) % plan.queues;
        let start = Instant::now();
        if r.add(c.call(cmd, RPC_TIMEOUT).await, start) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    r
}

impl SendResult {
    /// Counts one send's outcome; true when the connection is closed.
    fn add(&mut self, resp: Result<RemotingCommand, RpcError>, start: Instant) -> bool {
        match resp {
            Ok(resp) if resp.code == ResponseCode::SUCCESS.code() => {
                self.ok += 1;
                self.hist.record(start.elapsed().as_micros() as u64);
            }
            Ok(resp) => {
                self.failed += 1;
                *self.codes.entry(format!("code_{}", resp.code)).or_default() += 1;
            }
            Err(e) => {
                self.failed += 1;
                *self.codes.entry(format!("{e:?}")).or_default() += 1;
                return matches!(e, RpcError::Closed);
            }
        }
        false
    }

    /// Waits for every sender and adds up their results.
    async fn join(senders: Vec<tokio::task::JoinHandle<SendResult>>) -> Result<Self, BenchError> {
        let mut all = SendResult::default();
        for s in senders {
            let r = s.await?;
            all.hist.merge(&r.hist);
            all.ok += r.ok;
            all.failed += r.failed;
            for (k, v) in r.codes {
                *all.codes.entry(k).or_default() += v;
            }
        }
        Ok(all)
    }
}

/// The consuming side of a run: with `--consume`, one connection and one long-polling task per
/// queue, from offset 0.
struct Consumers {
    stop: Arc<AtomicBool>,
    consumed: Arc<AtomicU64>,
    tasks: Vec<tokio::task::JoinHandle<(Hist, SlowDeliveries)>>,
}

/// What the consumers received.
struct Consumed {
    e2e: Hist,
    slow: SlowDeliveries,
    /// Seconds from the start of the sends until the consumers caught up (0 without `--consume`).
    secs: f64,
    n: u64,
}

impl Consumers {
    async fn start(o: &RunOptions) -> Result<Self, BenchError> {
        let mut consumers = Consumers {
            stop: Arc::new(AtomicBool::new(false)),
            consumed: Arc::new(AtomicU64::new(0)),
            tasks: Vec::new(),
        };
        if !o.consume {
            return Ok(consumers);
        }
        let c = connect(&o.addr).await?;
        if o.pop {
            for _ in 0..POP_TASKS {
                let (c, topic, group) = (c.clone(), o.topic.clone(), o.group.clone());
                let (stop, consumed) = (consumers.stop.clone(), consumers.consumed.clone());
                let (suspend_ms, broker) = (o.suspend_ms, o.broker_name.clone());
                consumers.tasks.push(tokio::spawn(async move {
                    pop_loop(c, topic, group, broker, suspend_ms, stop, consumed).await
                }));
            }
            return Ok(consumers);
        }
        for q in 0..o.queues {
            let (c, topic, group) = (c.clone(), o.topic.clone(), o.group.clone());
            let (stop, consumed) = (consumers.stop.clone(), consumers.consumed.clone());
            let suspend_ms = o.suspend_ms;
            consumers.tasks.push(tokio::spawn(async move {
                pull_loop(c, topic, group, q, suspend_ms, stop, consumed).await
            }));
        }
        Ok(consumers)
    }

    /// Waits (up to `--drain-timeout`) until `sent` messages were consumed, then stops the
    /// consumers and merges what they saw.
    async fn drain(self, o: &RunOptions, sent: u64, t0: Instant) -> Consumed {
        let mut got = Consumed {
            e2e: Hist::new(),
            slow: Vec::new(),
            secs: 0.0,
            n: 0,
        };
        if !o.consume {
            return got;
        }
        let dl = Instant::now() + o.drain_timeout;
        while self.consumed.load(Ordering::Relaxed) < sent && Instant::now() < dl {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        got.secs = t0.elapsed().as_secs_f64();
        // Let any over-delivery show up before stopping.
        tokio::time::sleep(Duration::from_millis(200)).await;
        self.stop.store(true, Ordering::Relaxed);
        for c in self.tasks {
            if let Ok((h, s)) = c.await {
                got.e2e.merge(&h);
                got.slow.extend(s);
            }
        }
        got.n = self.consumed.load(Ordering::Relaxed);
        got
    }
}

/// End-to-end latency from which a delivery counts as slow in `slow_e2e`.
const SLOW_E2E_US: u64 = 10_000;
/// Slow deliveries kept per queue (send time, e2e µs) for `slow_e2e`.
const SLOW_KEEP: usize = 4096;

/// Slow deliveries: (send time in µs since the epoch, e2e µs).
type SlowDeliveries = Vec<(u64, u64)>;

/// Long-polls one queue; returns the end-to-end histogram of the bench's own messages and its
/// slow deliveries (send time in µs since the epoch, e2e µs).
async fn pull_loop(
    c: Client,
    topic: String,
    group: String,
    queue: i32,
    suspend_ms: i64,
    stop: Arc<AtomicBool>,
    consumed: Arc<AtomicU64>,
) -> (Hist, SlowDeliveries) {
    let mut h = Hist::new();
    let mut slow = Vec::new();
    let mut offset = 0i64;
    while !stop.load(Ordering::Relaxed) {
        let cmd = pull_cmd(&topic, &group, queue, offset, suspend_ms);
        let resp = match c
            .call(cmd, Duration::from_millis(suspend_ms as u64 + 5000))
            .await
        {
            Ok(r) => r,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        if let Some(next) = resp.ext("nextBeginOffset").and_then(|v| v.parse().ok()) {
            if resp.code == ResponseCode::SUCCESS.code() {
                let now = now_us();
                let body = resp.body.to_bytes();
                let n = parse_records(&body, |b| {
                    if b.len() >= 16 && &b[8..16] == b"rmqdbnch" {
                        let born = u64::from_be_bytes(b[0..8].try_into().unwrap());
                        let e2e = now.saturating_sub(born);
                        h.record(e2e);
                        if e2e >= SLOW_E2E_US && slow.len() < SLOW_KEEP {
                            slow.push((born, e2e));
                        }
                    }
                });
                consumed.fetch_add(n, Ordering::Relaxed);
            }
            offset = next;
        } else {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    (h, slow)
}

/// Concurrent POP requests of a `--consume pop` run.
const POP_TASKS: usize = 2;
/// Invisible time of the bench's pops: far beyond a run, so nothing is revived during it.
const POP_INVISIBLE_MS: i64 = 60_000;

/// Pops every queue of `topic` and acknowledges each message with its own ACK_MESSAGE (sent
/// together); returns the end-to-end histogram and the slow deliveries, as `pull_loop`.
async fn pop_loop(
    c: Client,
    topic: String,
    group: String,
    broker: String,
    poll_ms: i64,
    stop: Arc<AtomicBool>,
    consumed: Arc<AtomicU64>,
) -> (Hist, SlowDeliveries) {
    use rmqd::remoting::header::ack_message::AckMessageRequestHeader;
    use rmqd::remoting::header::pop_message::PopMessageRequestHeader;
    let mut h = Hist::new();
    let mut slow = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let hdr = PopMessageRequestHeader {
            consumer_group: group.clone(),
            topic: topic.clone(),
            queue_id: -1,
            max_msg_nums: PULL_BATCH,
            invisible_time: POP_INVISIBLE_MS,
            poll_time: poll_ms,
            born_time: (now_us() / 1000) as i64,
            init_mode: 0,
            exp_type: Some("TAG".into()),
            exp: Some("*".into()),
            ..Default::default()
        };
        let timeout = Duration::from_millis(poll_ms as u64 + 5000);
        let resp = match c
            .call(request(RequestCode::POP_MESSAGE, &hdr), timeout)
            .await
        {
            Ok(r) if r.code == ResponseCode::SUCCESS.code() => r,
            // nothing within the poll time: pop again at once; a refusal: not in a tight loop
            Ok(r) if r.code == ResponseCode::POLLING_TIMEOUT.code() => continue,
            Ok(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let now = now_us();
        // "<mark> <queueId> <startOffset>;..." -> the checkpoint start of each queue
        let starts: HashMap<i32, i64> = resp
            .ext("startOffsetInfo")
            .unwrap_or("")
            .split(';')
            .filter_map(|e| {
                let f: Vec<&str> = e.split(' ').collect();
                Some((f.get(1)?.parse().ok()?, f.get(2)?.parse().ok()?))
            })
            .collect();
        let (pop_time, revive) = (
            resp.ext("popTime").unwrap_or("0").to_string(),
            resp.ext("reviveQid").unwrap_or("0").to_string(),
        );
        let body = resp.body.to_bytes();
        let mut acks = Vec::new();
        let n = parse_queue_records(&body, |queue_id, offset, b| {
            if b.len() >= 16 && &b[8..16] == b"rmqdbnch" {
                let born = u64::from_be_bytes(b[0..8].try_into().unwrap());
                let e2e = now.saturating_sub(born);
                h.record(e2e);
                if e2e >= SLOW_E2E_US && slow.len() < SLOW_KEEP {
                    slow.push((born, e2e));
                }
            }
            let so = starts.get(&queue_id).copied().unwrap_or(offset);
            let ack = AckMessageRequestHeader {
                consumer_group: group.clone(),
                topic: topic.clone(),
                queue_id,
                extra_info: format!(
                    "{so} {pop_time} {POP_INVISIBLE_MS} {revive} 0 {broker} {queue_id} {offset}"
                ),
                offset,
                ..Default::default()
            };
            acks.push(c.call(
                request(RequestCode::ACK_MESSAGE, &ack),
                Duration::from_secs(10),
            ));
        });
        futures_util::future::join_all(acks).await;
        consumed.fetch_add(n, Ordering::Relaxed);
    }
    (h, slow)
}

/// Like `parse_records`, with each record's queue id and queue offset.
fn parse_queue_records(mut buf: &[u8], mut f: impl FnMut(i32, i64, &[u8])) -> u64 {
    let mut n = 0;
    while buf.len() >= 28 {
        let total = i32::from_be_bytes(buf[0..4].try_into().unwrap()) as usize;
        if total < 28 || total > buf.len() {
            break;
        }
        let queue_id = i32::from_be_bytes(buf[12..16].try_into().unwrap());
        let offset = i64::from_be_bytes(buf[20..28].try_into().unwrap());
        parse_records(&buf[..total], |b| f(queue_id, offset, b));
        n += 1;
        buf = &buf[total..];
    }
    n
}

/// A long-polling PULL_MESSAGE for `PULL_BATCH` messages from `offset`, subscribed to `*`.
fn pull_cmd(topic: &str, group: &str, queue: i32, offset: i64, suspend_ms: i64) -> RemotingCommand {
    pull_cmd_flags(topic, group, queue, offset, suspend_ms, 0x2 | 0x4)
}

/// PULL_MESSAGE with these `sysFlag` bits (0x2 FLAG_SUSPEND, 0x4 FLAG_SUBSCRIPTION).
fn pull_cmd_flags(
    topic: &str,
    group: &str,
    queue: i32,
    offset: i64,
    suspend_ms: i64,
    sys_flag: i32,
) -> RemotingCommand {
    let hdr = PullMessageRequestHeader {
        consumer_group: group.to_string(),
        topic: topic.to_string(),
        queue_id: queue,
        queue_offset: offset,
        max_msg_nums: PULL_BATCH,
        sys_flag,
        commit_offset: 0,
        suspend_timeout_millis: suspend_ms,
        subscription: Some("*".into()),
        sub_version: (now_us() / 1000) as i64,
        expression_type: Some("TAG".into()),
        ..Default::default()
    };
    request(RequestCode::PULL_MESSAGE, &hdr)
}

/// Slow deliveries grouped into episodes (sends less than 50 ms apart), the 10 worst by their
/// slowest delivery, in time order: when in the run the tail happened and how many it hit.
fn slow_episodes(mut slow: Vec<(u64, u64)>, t0_us: u64) -> serde_json::Value {
    slow.sort_unstable();
    let mut eps: Vec<(u64, u64, u64)> = Vec::new(); // (first send, count, max e2e)
    let mut last = 0;
    for &(born, e2e) in &slow {
        match eps.last_mut() {
            Some(ep) if born.saturating_sub(last) < 50_000 => {
                ep.1 += 1;
                ep.2 = ep.2.max(e2e);
            }
            _ => eps.push((born, 1, e2e)),
        }
        last = born;
    }
    let n = eps.len();
    eps.sort_unstable_by_key(|e| std::cmp::Reverse(e.2));
    eps.truncate(10);
    eps.sort_unstable();
    serde_json::json!({
        "threshold_us": SLOW_E2E_US,
        "deliveries": slow.len(),
        "episodes": n,
        "worst": eps.iter().map(|&(at, k, max)| serde_json::json!({
            "at_ms": at.saturating_sub(t0_us) as f64 / 1000.0,
            "n": k,
            "max_us": max,
        })).collect::<Vec<_>>(),
    })
}

/// Walks the records of a pull body (remoting-protocol.md §8.6), calling `f` with each message body.
fn parse_records(mut buf: &[u8], mut f: impl FnMut(&[u8])) -> u64 {
    let mut n = 0;
    let be32 = |b: &[u8], at: usize| i32::from_be_bytes(b[at..at + 4].try_into().unwrap());
    while buf.len() >= 8 {
        let total = be32(buf, 0) as usize;
        if total < 8 || total > buf.len() {
            break;
        }
        let rec = &buf[..total];
        // total magic crc queueId flag queueOffset physOffset sysFlag bornTs
        let sys_flag = be32(rec, 36);
        let mut p = 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8;
        p += if sys_flag & 0x10 != 0 { 20 } else { 8 }; // born host
        p += 8; // store timestamp
        p += if sys_flag & 0x20 != 0 { 20 } else { 8 }; // store host
        p += 4 + 8; // reconsumeTimes, preparedTransactionOffset
        if p + 4 <= rec.len() {
            let len = be32(rec, p) as usize;
            if p + 4 + len <= rec.len() {
                f(&rec[p + 4..p + 4 + len]);
            }
        }
        n += 1;
        buf = &buf[total..];
    }
    n
}

/// What `lite-drain` tasks add up.
#[derive(Default)]
struct DrainCount {
    messages: AtomicU64,
    pulls: AtomicU64,
    non_empty: AtomicU64,
    errors: AtomicU64,
}

/// `lite-drain`: every lite queue of `--topic` read from 0 to its end by PULL_MESSAGE.
async fn lite_drain(a: &Args) -> Result<serde_json::Value, BenchError> {
    let addr = a.s("addr", "127.0.0.1:10911");
    let parent = a.s("topic", "BenchLite");
    let lites: u64 = a.n("lites", 1000)?;
    let prefix = a.s("lite-prefix", "l");
    let conns: usize = a.n("conns", 2)?;
    let window: usize = a.n("window", 16)?;
    let group = a.s("group", &format!("bench_drain_{parent}"));
    let mut clients = Vec::new();
    for _ in 0..conns.max(1) {
        clients.push(connect(&addr).await?);
    }
    let next = Arc::new(AtomicU64::new(0));
    let count = Arc::new(DrainCount::default());
    let t0 = Instant::now();
    let mut tasks = Vec::new();
    for c in &clients {
        for _ in 0..window.max(1) {
            let (c, next, count) = (c.clone(), next.clone(), count.clone());
            let (parent, prefix, group) = (parent.clone(), prefix.clone(), group.clone());
            tasks.push(tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= lites {
                        break;
                    }
                    let lmq = lite_lmq_name(&parent, &format!("{prefix}{i}")).unwrap_or_default();
                    drain_queue(&c, &lmq, &group, &count).await;
                }
            }));
        }
    }
    for t in tasks {
        t.await?;
    }
    let secs = t0.elapsed().as_secs_f64();
    let n = count.messages.load(Ordering::Relaxed);
    Ok(serde_json::json!({
        "cmd": "lite-drain",
        "topic": parent,
        "lites": lites,
        "secs": secs,
        "consumed": n,
        "consume_tps": if secs > 0.0 { n as f64 / secs } else { 0.0 },
        "pulls": count.pulls.load(Ordering::Relaxed),
        "non_empty_queues": count.non_empty.load(Ordering::Relaxed),
        "errors": count.errors.load(Ordering::Relaxed),
    }))
}

/// Pulls one LMQ (queue 0) from offset 0 until the broker has no more.
async fn drain_queue(c: &Client, lmq: &str, group: &str, count: &DrainCount) {
    let (mut offset, mut got, mut retries) = (0i64, 0u64, 0);
    loop {
        // FLAG_SUBSCRIPTION only: answered at once, never parked
        let cmd = pull_cmd_flags(lmq, group, 0, offset, 0, 0x4);
        count.pulls.fetch_add(1, Ordering::Relaxed);
        let resp = match c.call(cmd, RPC_TIMEOUT).await {
            Ok(r) => r,
            Err(_) if retries < 3 => {
                retries += 1;
                continue;
            }
            Err(_) => {
                count.errors.fetch_add(1, Ordering::Relaxed);
                break;
            }
        };
        let next: Option<i64> = resp.ext("nextBeginOffset").and_then(|v| v.parse().ok());
        if resp.code == ResponseCode::SUCCESS.code() {
            let n = parse_records(&resp.body.to_bytes(), |_| {});
            got += n;
            count.messages.fetch_add(n, Ordering::Relaxed);
            match next {
                Some(next) if next > offset => offset = next,
                _ => break,
            }
        } else if resp.code == ResponseCode::PULL_RETRY_IMMEDIATELY.code() && retries < 3 {
            retries += 1;
        } else {
            if resp.code != ResponseCode::PULL_NOT_FOUND.code()
                && resp.code != ResponseCode::PULL_OFFSET_MOVED.code()
            {
                count.errors.fetch_add(1, Ordering::Relaxed);
            }
            break;
        }
    }
    if got > 0 {
        count.non_empty.fetch_add(1, Ordering::Relaxed);
    }
}

fn main() {
    let mut argv = std::env::args().skip(1);
    let sub = argv.next().unwrap_or_default();
    let args = match Args::parse(argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("rmqd-bench: {e}");
            std::process::exit(2);
        }
    };
    let threads: usize = args.n("threads", 2).unwrap_or(2);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .enable_all()
        .build()
        .expect("tokio runtime");
    let result = rt.block_on(async {
        match sub.as_str() {
            "create-topic" => create_topic(&args).await.map(|v| (v, false)),
            "probe" => probe(&args).await.map(|v| (v, false)),
            "offsets" => offsets(&args).await.map(|v| (v, false)),
            "lite-info" => lite_info(&args).await.map(|v| (v, false)),
            "run" => run(&args).await,
            "lite-drain" => lite_drain(&args).await.map(|v| (v, false)),
            _ => Err(BenchError::Usage),
        }
    });
    match result {
        Ok((v, mismatch)) => {
            println!("{v}");
            if mismatch {
                eprintln!("rmqd-bench: sent and consumed counts differ");
                std::process::exit(1);
            }
        }
        Err(e) => {
            println!("{}", serde_json::json!({"error": e.to_string()}));
            eprintln!("rmqd-bench: {e}");
            std::process::exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{slow_episodes, Hist};

    #[test]
    fn slow_deliveries_group_into_episodes_by_send_time() {
        let t0 = 1_000_000_000;
        // two bursts 1 s apart (sends 10 ms apart inside each), out of order
        let slow = vec![
            (t0 + 1_010_000, 40_000),
            (t0 + 10_000, 90_000),
            (t0 + 1_000_000, 30_000),
            (t0, 120_000),
            (t0 + 20_000, 60_000),
        ];
        let v = slow_episodes(slow, t0);
        assert_eq!(
            (v["deliveries"].as_u64(), v["episodes"].as_u64()),
            (Some(5), Some(2))
        );
        let worst = v["worst"].as_array().unwrap();
        assert_eq!(worst[0]["at_ms"], 0.0);
        assert_eq!(
            (worst[0]["n"].as_u64(), worst[0]["max_us"].as_u64()),
            (Some(3), Some(120_000))
        );
        assert_eq!(worst[1]["at_ms"], 1000.0);
        assert_eq!(
            (worst[1]["n"].as_u64(), worst[1]["max_us"].as_u64()),
            (Some(2), Some(40_000))
        );
    }

    #[test]
    fn histogram_buckets_are_monotonic_and_close() {
        let mut prev = 0;
        for v in [0u64, 1, 63, 64, 65, 127, 128, 1000, 65_535, 1 << 40] {
            let i = Hist::index(v);
            assert!(i >= prev);
            prev = i;
            let back = Hist::value(i);
            assert!(
                (back as f64 - v as f64).abs() <= v as f64 * 0.04 + 1.0,
                "{v} -> {back}"
            );
        }
        let mut h = Hist::new();
        (1..=1000).for_each(|v| h.record(v));
        let p50 = h.quantile(0.5);
        assert!((480..=520).contains(&p50), "{p50}");
        assert_eq!(h.quantile(1.0), 1000);
    }
}
