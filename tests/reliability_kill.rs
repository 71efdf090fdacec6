//! The `kill -9` part of the reliability campaign (issue 24), against the real `rmqd` binary over
//! real TCP: concurrent producers, each on its own connection, send under SYNC_FLUSH and
//! ASYNC_FLUSH; the broker is SIGKILLed at a random moment and restarted on the same store, and
//! every acknowledged message must be there byte for byte at its acknowledged queue offset, no
//! message twice, queue offsets contiguous, and new sends accepted. A second test kills the broker
//! again and again during its start-up recovery before letting it start.
//!
//! Opt-in, longer runs (the numbers in README.md come from these):
//! - `RMQD_KILL_ROUNDS=N`: kill rounds per flush mode (default 4).
//! - `RMQD_KILL_CHAIN=N`: rounds on one store before a fresh one (default 10).
//! - `RMQD_KILL_FILE_KB=N`: commit-log file size of the kill rounds (default 256 KiB: every round
//!   rolls over files, and a kill may land as a file is created).
//! - `RMQD_KILL_RECOVERY_FILES=N`, `RMQD_KILL_RECOVERY_FILE_MB=M`: the store killed during
//!   recovery, N commit-log files of M MiB (default 16 x 1).
//! - `RMQD_KILL_RECOVERY_KILLS=N`: kills during recovery before the full start (default 6).
//! - `RMQD_BIN=path`: the broker binary to test (e.g. `target/release/rmqd`).
//! - `RMQD_KILL_SEED=n`: replays the random delays of an earlier run (the seed is printed).
//! - `RMQD_KILL_STORE_TYPE=defaultRocksDB`: the same on the RocksDB consume queue (a binary built
//!   with `--features rocksdb-cq`; `scripts/test` runs it so).

mod support;

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rmqd::remoting::{RemotingCommand, RequestCode};
use support::{create_topic, pull_request, records, request, RawClient};

const TOPIC: &str = "KillTopic";
const QUEUES: i32 = 4;
const PRODUCERS: u32 = 4;

fn env_num(key: &str, default: u64) -> u64 {
    std::env::var(key)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

fn rmqd_bin() -> PathBuf {
    std::env::var_os("RMQD_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_rmqd")))
}

/// xorshift64*: reproducible random delays without a dependency.
struct Rng(u64);

impl Rng {
    fn from_env(salt: u64) -> Self {
        let seed = std::env::var("RMQD_KILL_SEED")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
            });
        println!("RMQD_KILL_SEED={seed}");
        Rng((seed ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

/// Who sent a message: the round, the producer thread and its sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct MsgId {
    round: u32,
    producer: u32,
    seq: u32,
}

impl MsgId {
    fn key(&self) -> String {
        format!("r{}p{}-{}", self.round, self.producer, self.seq)
    }

    /// `r<round>p<producer>-<seq>:` and 16..1500 filler bytes, all derived from the id.
    fn body(&self) -> Vec<u8> {
        let mut h = (u64::from(self.round) << 40 | u64::from(self.producer) << 32)
            .wrapping_add(u64::from(self.seq))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 29;
        let mut body = format!("{}:", self.key()).into_bytes();
        let len = 16 + (h % 1485) as usize;
        body.extend((0..len).map(|k| (h as usize).wrapping_add(k * 31) as u8));
        body
    }

    fn parse(body: &[u8]) -> Option<MsgId> {
        let end = body.iter().take(40).position(|&b| b == b':')?;
        let s = std::str::from_utf8(&body[..end]).ok()?;
        let (rp, seq) = s.strip_prefix('r')?.split_once('-')?;
        let (round, producer) = rp.split_once('p')?;
        Some(MsgId {
            round: round.parse().ok()?,
            producer: producer.parse().ok()?,
            seq: seq.parse().ok()?,
        })
    }
}

fn send_request(id: MsgId, queue: i32) -> RemotingCommand {
    let q = queue.to_string();
    let props = format!(
        "KEYS\u{1}{}\u{2}UNIQ_KEY\u{1}{:08X}{:08X}{:016X}\u{2}",
        id.key(),
        id.round,
        id.producer,
        id.seq
    );
    let mut cmd = request(
        RequestCode::SEND_MESSAGE_V2,
        &[
            ("a", "KillPG"),
            ("b", TOPIC),
            ("c", "TBW102"),
            ("d", "4"),
            ("e", &q),
            ("f", "0"),
            ("g", "1700000000000"),
            ("h", "0"),
            ("i", &props),
        ],
    );
    cmd.body = bytes::Bytes::from(id.body()).into();
    cmd
}

/// What the producers know: every message they tried to send and the acknowledged ones with their
/// queue and queue offset.
#[derive(Default)]
struct Ledger {
    attempted: HashSet<MsgId>,
    acked: HashMap<MsgId, (i32, i64)>,
}

/// One producer's round.
#[derive(Default)]
struct ProducerLog {
    attempted: Vec<MsgId>,
    acked: Vec<(MsgId, i32, i64)>,
    /// Answers other than SEND_OK, by response code (e.g. FLUSH_DISK_TIMEOUT).
    refused: HashMap<i32, u64>,
}

/// Sends until the connection breaks (the kill); round-robins over the queues.
fn produce(addr: SocketAddr, round: u32, producer: u32) -> ProducerLog {
    let mut log = ProducerLog::default();
    let mut c = RawClient::connect(addr);
    // a SYNC_FLUSH answer waits for an fsync on a busy disk: longer than the client's 5 s
    c.stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    for seq in 0.. {
        let id = MsgId {
            round,
            producer,
            seq,
        };
        let queue = (producer as i32 + seq as i32) % QUEUES;
        log.attempted.push(id);
        let Some(r) = c.try_call(&send_request(id, queue)) else {
            break;
        };
        if r.code != 0 {
            *log.refused.entry(r.code).or_default() += 1;
            continue;
        }
        let q = r.ext("queueId").and_then(|v| v.parse().ok());
        let o = r.ext("queueOffset").and_then(|v| v.parse().ok());
        let (Some(q), Some(o)) = (q, o) else {
            panic!("SEND_OK without queueId/queueOffset: {r:?}")
        };
        assert_eq!(q, queue, "{id:?} acknowledged on another queue");
        log.acked.push((id, q, o));
    }
    log
}

/// A scratch store with its `broker.conf`.
struct Scratch {
    dir: tempfile::TempDir,
    flush: &'static str,
    commit_log_file: u64,
    starts: u32,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Scratch {
    fn new(flush: &'static str, commit_log_file: u64) -> Self {
        Scratch {
            dir: tempfile::tempdir().unwrap(),
            flush,
            commit_log_file,
            starts: 0,
        }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("store")
    }

    fn conf(&self) -> PathBuf {
        self.dir.path().join("broker.conf")
    }

    /// Writes `broker.conf` for `port`: small commit-log, consume-queue and index files so that
    /// rounds cross file boundaries; no forced cleanup (a busy shared disk must not delete
    /// unconsumed messages in the middle of the test).
    fn write_conf(&self, port: u16) {
        let text = format!(
            "brokerName=kill\nlistenPort={port}\nbindAddress=127.0.0.1\nbrokerIP1=127.0.0.1\n\
             rmqdFastChannelEnable=false\nrmqdEmbeddedNamesrv=false\n\
             storePathRootDir={}\nflushDiskType={}\nmappedFileSizeCommitLog={}\n\
             mappedFileSizeConsumeQueue=60000\nmaxHashSlotNum=20000\nmaxIndexNum=80000\n\
             cleanFileForciblyEnable=false\ndiskMaxUsedSpaceRatio=95\nstoreType={}\n",
            self.root().display(),
            self.flush,
            self.commit_log_file,
            std::env::var("RMQD_KILL_STORE_TYPE").unwrap_or_else(|_| "default".to_string()),
        );
        std::fs::write(self.conf(), text).unwrap();
    }

    /// Starts `rmqd` on a fresh port; stdout and stderr go to `rmqd-<n>.log` in the scratch dir
    /// and the stdout lines also to [`Broker::lines`].
    fn spawn(&mut self) -> Broker {
        let port = free_port();
        self.write_conf(port);
        self.starts += 1;
        let log_path = self.dir.path().join(format!("rmqd-{}.log", self.starts));
        let log = std::fs::File::create(&log_path).unwrap();
        let started = Instant::now();
        let mut child = Command::new(rmqd_bin())
            .arg("-c")
            .arg(self.conf())
            .env("RMQD_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log.try_clone().unwrap()))
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut log = log;
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let _ = writeln!(log, "{line}");
                let _ = tx.send((started.elapsed(), line));
            }
        });
        Broker {
            child,
            addr: ([127, 0, 0, 1], port).into(),
            started,
            lines,
            log: log_path,
        }
    }

    /// `rmqd store verify` on the stopped store: must exit 0 (warnings allowed).
    fn verify_tool(&self) -> (Duration, String) {
        let t0 = Instant::now();
        let out = Command::new(rmqd_bin())
            .args(["store", "verify"])
            .arg(self.root())
            .arg("-c")
            .arg(self.conf())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "rmqd store verify after kill -9 ({}): {stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let summary = stdout.lines().last().unwrap_or("").to_string();
        (t0.elapsed(), summary)
    }
}

/// A running `rmqd`; dropped = killed.
struct Broker {
    child: Child,
    addr: SocketAddr,
    started: Instant,
    lines: mpsc::Receiver<(Duration, String)>,
    log: PathBuf,
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Broker {
    /// Time from spawn until the client port accepts a connection; panics with the log when the
    /// process exits first or takes longer than `limit`.
    fn wait_listening(&mut self, limit: Duration) -> Duration {
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "rmqd exited ({status}) while starting:\n{}",
                    self.log_tail()
                );
            }
            if TcpStream::connect(self.addr).is_ok() {
                return self.started.elapsed();
            }
            assert!(
                self.started.elapsed() < limit,
                "rmqd not listening after {limit:?}:\n{}",
                self.log_tail()
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// SIGKILL, and the time since spawn.
    fn kill(&mut self) -> Duration {
        self.child.kill().unwrap();
        let at = self.started.elapsed();
        self.child.wait().unwrap();
        at
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

/// What a full read of the topic found.
#[derive(Default, Debug)]
struct Check {
    records: u64,
    lost: Vec<MsgId>,
    duplicated: Vec<MsgId>,
    /// Gaps, corrupt bodies, messages nobody sent, acknowledged messages at another offset.
    problems: Vec<String>,
    max_offsets: Vec<i64>,
}

fn queue_offset(c: &mut RawClient, code: RequestCode, queue: i32) -> i64 {
    let q = queue.to_string();
    let r = c.call(&request(code, &[("topic", TOPIC), ("queueId", &q)]));
    assert_eq!(r.code, 0, "{code:?} of queue {queue}: {:?}", r.remark);
    r.ext("offset").unwrap().parse().unwrap()
}

/// Pulls every queue from 0 to its max and checks each record against the ledger.
fn check_store(addr: SocketAddr, ledger: &Ledger) -> Check {
    let mut c = RawClient::connect(addr);
    let mut check = Check::default();
    let mut seen = HashSet::new();
    for q in 0..QUEUES {
        let min = queue_offset(&mut c, RequestCode::GET_MIN_OFFSET, q);
        let max = queue_offset(&mut c, RequestCode::GET_MAX_OFFSET, q);
        check.max_offsets.push(max);
        if min != 0 {
            check.problems.push(format!("queue {q}: min offset {min}"));
        }
        let mut next = 0;
        while next < max {
            let r = c.call(&pull_request(TOPIC, q, next));
            let recs = records(&r.body.to_bytes());
            if r.code != 0 || recs.is_empty() {
                check.problems.push(format!(
                    "queue {q}: pull at {next} of {max}: code {} {:?}",
                    r.code, r.remark
                ));
                break;
            }
            for rec in recs {
                if rec.queue_offset != next || rec.queue_id != q || rec.topic != TOPIC {
                    check.problems.push(format!(
                        "queue {q}: expected offset {next}, found {}/{}/{}",
                        rec.topic, rec.queue_id, rec.queue_offset
                    ));
                }
                next = rec.queue_offset + 1;
                check.records += 1;
                check_record(q, &rec, ledger, &mut seen, &mut check);
            }
        }
    }
    check.lost = ledger
        .acked
        .keys()
        .filter(|id| !seen.contains(*id))
        .copied()
        .collect();
    check.lost.sort_by_key(|id| (id.round, id.producer, id.seq));
    check
}

fn check_record(
    q: i32,
    rec: &support::Record,
    ledger: &Ledger,
    seen: &mut HashSet<MsgId>,
    check: &mut Check,
) {
    let at = rec.queue_offset;
    let Some(id) = MsgId::parse(&rec.body) else {
        check
            .problems
            .push(format!("queue {q} offset {at}: unreadable body"));
        return;
    };
    if rec.body != id.body() {
        check
            .problems
            .push(format!("queue {q} offset {at}: {id:?} body differs"));
    }
    if !ledger.attempted.contains(&id) {
        check
            .problems
            .push(format!("queue {q} offset {at}: {id:?} was never sent"));
    }
    if !seen.insert(id) {
        check.duplicated.push(id);
    }
    if let Some(&acked_at) = ledger.acked.get(&id) {
        if acked_at != (q, at) {
            check.problems.push(format!(
                "{id:?} acknowledged at {acked_at:?}, stored at queue {q} offset {at}"
            ));
        }
    }
}

/// Asserts the check is clean (first problems in the message).
fn assert_clean(what: &str, check: &Check) {
    let show = |v: &[MsgId]| format!("{:?}", &v[..v.len().min(10)]);
    assert!(
        check.lost.is_empty() && check.duplicated.is_empty() && check.problems.is_empty(),
        "{what}: {} lost {}, {} duplicated {}, problems: {:?}",
        check.lost.len(),
        show(&check.lost),
        check.duplicated.len(),
        show(&check.duplicated),
        &check.problems[..check.problems.len().min(10)],
    );
}

/// After a restart: one new message per queue is acknowledged at the queue's max offset.
fn send_after_restart(addr: SocketAddr, round: u32, check: &Check, ledger: &mut Ledger) {
    let mut c = RawClient::connect(addr);
    for q in 0..QUEUES {
        let id = MsgId {
            round,
            producer: PRODUCERS,
            seq: q as u32,
        };
        ledger.attempted.insert(id);
        let r = c.call(&send_request(id, q));
        assert_eq!(r.code, 0, "send after restart: {:?}", r.remark);
        let offset: i64 = r.ext("queueOffset").unwrap().parse().unwrap();
        assert_eq!(
            offset, check.max_offsets[q as usize],
            "queue {q} after restart"
        );
        ledger.acked.insert(id, (q, offset));
    }
}

/// Starts `PRODUCERS` producers for `round`; returns their handles.
fn start_producers(addr: SocketAddr, round: u32) -> Vec<std::thread::JoinHandle<ProducerLog>> {
    (0..PRODUCERS)
        .map(|p| std::thread::spawn(move || produce(addr, round, p)))
        .collect()
}

/// Joins the producers into the ledger; returns (acknowledged, refused) this round.
fn collect(
    producers: Vec<std::thread::JoinHandle<ProducerLog>>,
    ledger: &mut Ledger,
) -> (u64, HashMap<i32, u64>) {
    let (mut acked, mut refused) = (0, HashMap::new());
    for h in producers {
        let log = h.join().expect("producer panicked");
        ledger.attempted.extend(log.attempted);
        for (id, q, o) in log.acked {
            acked += 1;
            ledger.acked.insert(id, (q, o));
        }
        for (code, n) in log.refused {
            *refused.entry(code).or_default() += n;
        }
    }
    (acked, refused)
}

/// Per flush mode: the closing table's row.
#[derive(Debug, Default)]
struct Stats {
    rounds: u64,
    acked: u64,
    lost: u64,
    duplicated: u64,
    recovery: Vec<Duration>,
}

impl Stats {
    fn row(&self, mode: &str) -> String {
        let mut r = self.recovery.clone();
        r.sort();
        let ms = |d: Option<&Duration>| d.map_or(0, |d| d.as_millis());
        format!(
            "| {mode} | {} | {} | {} | {} | {}–{} ms (median {}) |",
            self.rounds,
            self.acked,
            self.lost,
            self.duplicated,
            ms(r.first()),
            ms(r.last()),
            ms(r.get(r.len() / 2)),
        )
    }
}

const START_LIMIT: Duration = Duration::from_secs(60);

/// One store under one flush mode, killed round after round.
struct Chain {
    scratch: Scratch,
    broker: Broker,
    ledger: Ledger,
}

impl Chain {
    /// A fresh store with the topic created.
    fn start(flush: &'static str) -> Self {
        let mut scratch = Scratch::new(flush, env_num("RMQD_KILL_FILE_KB", 256) << 10);
        let mut broker = scratch.spawn();
        broker.wait_listening(START_LIMIT);
        create_topic(&mut RawClient::connect(broker.addr), TOPIC, QUEUES);
        if std::env::var("RMQD_KILL_STORE_TYPE").is_ok_and(|t| t == "defaultRocksDB") {
            let current = scratch.root().join("consumequeue").join("CURRENT");
            assert!(current.is_file(), "no RocksDB at {}", current.display());
        }
        Chain {
            scratch,
            broker,
            ledger: Ledger::default(),
        }
    }

    /// One round: produce, SIGKILL after a random delay, (every other round) `rmqd store
    /// verify`, restart on the same store, check everything, send again.
    fn round(&mut self, round: u32, rng: &mut Rng, stats: &mut Stats) {
        let flush = self.scratch.flush;
        let producers = start_producers(self.broker.addr, round);
        let delay = Duration::from_millis(rng.range(20, 1500));
        std::thread::sleep(delay);
        self.broker.kill();
        let (acked, refused) = collect(producers, &mut self.ledger);
        let verified = (round % 2 == 0).then(|| self.scratch.verify_tool());
        self.broker = self.scratch.spawn();
        let recovery = self.broker.wait_listening(START_LIMIT);
        let check = check_store(self.broker.addr, &self.ledger);
        println!(
            "{flush} round {round}: killed after {delay:?}, {acked} acked (refused {refused:?}), \
             {} stored in total, restart {recovery:?}, verify {verified:?}",
            check.records
        );
        stats.rounds += 1;
        stats.acked += acked;
        stats.lost += check.lost.len() as u64;
        stats.duplicated += check.duplicated.len() as u64;
        stats.recovery.push(recovery);
        assert_clean(&format!("{flush} round {round}"), &check);
        send_after_restart(self.broker.addr, round, &check, &mut self.ledger);
    }
}

#[test]
fn acknowledged_sends_survive_kill_9_under_both_flush_modes() {
    let rounds = env_num("RMQD_KILL_ROUNDS", 4) as u32;
    let chain = env_num("RMQD_KILL_CHAIN", 10).max(1) as u32;
    let mut rng = Rng::from_env(1);
    let t0 = Instant::now();
    let modes = ["SYNC_FLUSH", "ASYNC_FLUSH"];
    let mut stats = [Stats::default(), Stats::default()];
    let mut chains: [Option<Chain>; 2] = [None, None];
    // the modes alternate round by round, so a slow phase of the machine hits both
    for round in 0..rounds {
        for m in 0..2 {
            if round % chain == 0 {
                chains[m] = None; // the old store goes before the new one is made
                chains[m] = Some(Chain::start(modes[m]));
            }
            chains[m]
                .as_mut()
                .unwrap()
                .round(round, &mut rng, &mut stats[m]);
        }
    }
    println!("| mode | rounds | acknowledged | lost | duplicated | restart (spawn to listening) |");
    println!("|---|---|---|---|---|---|");
    for m in 0..2 {
        println!("{}", stats[m].row(modes[m]));
    }
    println!("total {:?}", t0.elapsed());
    assert!(stats.iter().all(|s| s.acked > 0), "no message acknowledged");
}

/// The log lines that mark the phases of a start, in order.
const PHASES: [&str; 6] = [
    "loading message store",
    "recovering commit-log file",
    "commit-log scan done",
    "re-dispatching",
    "re-dispatch done",
    "broker listening",
];

/// Where a start is killed.
#[derive(Clone, Copy, Debug)]
enum KillPoint {
    /// `extra` ms after the `nth` log line of phase `PHASES[phase]` (or at listening, if that
    /// comes first).
    Phase {
        phase: usize,
        nth: usize,
        extra: u64,
    },
    /// This many ms after spawn.
    Spawned(u64),
    /// This many ms after the client port accepted a connection.
    Listening(u64),
}

/// What one start showed: each phase line with its time since spawn.
struct StartTrace {
    marks: Vec<(Duration, String)>,
}

impl StartTrace {
    /// Every phase line as `phase(n=file)@ms`.
    fn summary(&self) -> String {
        self.marks
            .iter()
            .map(|(t, l)| {
                let name = PHASES.iter().find(|p| l.contains(*p)).unwrap();
                let n = l
                    .split_whitespace()
                    .find(|w| w.starts_with("n="))
                    .map(|w| format!("({w})"))
                    .unwrap_or_default();
                format!("{name}{n}@{}ms", t.as_millis())
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn last(&self) -> String {
        self.marks.last().map_or("none".into(), |(t, l)| {
            let name = PHASES.iter().find(|p| l.contains(*p)).unwrap();
            format!("{name}@{}ms", t.as_millis())
        })
    }
}

impl Broker {
    /// Collects phase lines into `marks` until `stop` says so. Panics when the process exits or
    /// goes quiet for `START_LIMIT`.
    fn follow(&mut self, marks: &mut Vec<(Duration, String)>, mut stop: impl FnMut(&str) -> bool) {
        loop {
            match self.lines.recv_timeout(START_LIMIT) {
                Ok((t, line)) => {
                    if PHASES.iter().any(|p| line.contains(p)) {
                        marks.push((t, line.clone()));
                        if stop(&line) {
                            return;
                        }
                    }
                }
                Err(e) => panic!("rmqd start: {e}:\n{}", self.log_tail()),
            }
        }
    }

    /// The phase lines still buffered (after a kill the reader thread sees end of file).
    fn drain(&mut self, marks: &mut Vec<(Duration, String)>) {
        while let Ok((t, line)) = self.lines.recv_timeout(Duration::from_secs(5)) {
            if PHASES.iter().any(|p| line.contains(p)) {
                marks.push((t, line));
            }
        }
    }

    /// Kills this start at `point`; returns when it was killed and the phases it went through.
    fn kill_at(&mut self, point: KillPoint) -> (Duration, StartTrace) {
        let mut marks = Vec::new();
        match point {
            KillPoint::Phase { phase, nth, extra } => {
                let mut seen = 0;
                self.follow(&mut marks, |l| {
                    seen += usize::from(l.contains(PHASES[phase]));
                    seen == nth || l.contains("broker listening")
                });
                std::thread::sleep(Duration::from_millis(extra));
            }
            KillPoint::Spawned(ms) => {
                std::thread::sleep(
                    Duration::from_millis(ms).saturating_sub(self.started.elapsed()),
                );
            }
            KillPoint::Listening(ms) => {
                self.wait_listening(START_LIMIT);
                std::thread::sleep(Duration::from_millis(ms));
            }
        }
        let at = self.kill();
        self.drain(&mut marks);
        (at, StartTrace { marks })
    }
}

/// Fills a store over TCP until it has `files` commit-log files and kills the broker while the
/// producers are still sending: the ledger, the messages acknowledged and the fill time.
fn fill_and_kill(scratch: &mut Scratch, files: usize) -> (Ledger, u64, Duration) {
    let mut broker = scratch.spawn();
    broker.wait_listening(START_LIMIT);
    create_topic(&mut RawClient::connect(broker.addr), TOPIC, QUEUES);
    let dir = scratch.root().join("commitlog");
    let count = || std::fs::read_dir(&dir).map_or(0, |d| d.count());
    let t0 = Instant::now();
    // two sets of producers (rounds 0 and 1): in a debug build sends are bound by request cost
    let mut producers = start_producers(broker.addr, 0);
    producers.extend(start_producers(broker.addr, 1));
    // the newest file is pre-allocated: `files` full or partly filled files
    while count() <= files {
        assert!(t0.elapsed() < START_LIMIT * 5, "store not filled");
        std::thread::sleep(Duration::from_millis(20));
    }
    broker.kill();
    let mut ledger = Ledger::default();
    let (acked, _) = collect(producers, &mut ledger);
    (ledger, acked, t0.elapsed())
}

/// The kill point of attempt `i`: before the store opens, while the commit log (of `files`
/// files) is scanned, while it is re-dispatched, right after the port listens, and at a random
/// time up to the last full start's.
fn kill_point(i: u64, files: usize, rng: &mut Rng, last_full: Option<Duration>) -> KillPoint {
    match i % 5 {
        0 => KillPoint::Phase {
            phase: 0,
            nth: 1,
            extra: rng.range(0, 3),
        },
        1 => KillPoint::Phase {
            phase: 1,
            nth: rng.range(1, files as u64) as usize,
            extra: rng.range(0, 5),
        },
        2 => KillPoint::Phase {
            phase: 3,
            nth: 1,
            extra: rng.range(0, 50),
        },
        3 => KillPoint::Listening(rng.range(0, 30)),
        _ => KillPoint::Spawned(rng.range(0, last_full.map_or(300, |d| d.as_millis() as u64))),
    }
}

#[test]
fn kill_9_during_recovery_then_a_full_start_loses_nothing() {
    let files = env_num("RMQD_KILL_RECOVERY_FILES", 16) as usize;
    let file_mb = env_num("RMQD_KILL_RECOVERY_FILE_MB", 1);
    let kills = env_num("RMQD_KILL_RECOVERY_KILLS", 6);
    let mut rng = Rng::from_env(2);
    let t0 = Instant::now();
    let mut scratch = Scratch::new("ASYNC_FLUSH", file_mb << 20);
    let (mut ledger, acked, fill) = fill_and_kill(&mut scratch, files);
    println!("filled {files} x {file_mb} MiB commit-log files with {acked} acknowledged messages in {fill:?}, killed");
    let mut last_full = None;
    for i in 0..kills {
        let point = kill_point(i, files, &mut rng, last_full);
        let mut broker = scratch.spawn();
        let (at, trace) = broker.kill_at(point);
        println!(
            "kill {i} at {point:?}: killed {at:?} after spawn, last phase {}; {}",
            trace.last(),
            trace.summary()
        );
        if trace
            .marks
            .iter()
            .any(|(_, l)| l.contains("broker listening"))
        {
            last_full = trace.marks.last().map(|m| m.0);
        }
    }
    let (verified, summary) = scratch.verify_tool();
    println!("store verify before the full start: {verified:?}, {summary}");
    let mut broker = scratch.spawn();
    let mut marks = Vec::new();
    broker.follow(&mut marks, |l| l.contains("broker listening"));
    let recovery = broker.wait_listening(START_LIMIT);
    let trace = StartTrace { marks };
    println!(
        "full start: listening after {recovery:?}; {}",
        trace.summary()
    );
    let check = check_store(broker.addr, &ledger);
    assert_clean("after kills during recovery", &check);
    assert_eq!(check.lost.len(), 0);
    send_after_restart(broker.addr, 2, &check, &mut ledger);
    println!(
        "{} stored, all {acked} acknowledged present; total {:?}",
        check.records,
        t0.elapsed()
    );
}
