// Store recovery over mutated store files, shared with `include!` by the `store_recovery` fuzz
// target and the stable loop in `tests/store_recovery_fuzz.rs`. A small valid store is written
// once through the library API (`StoreTemplate::build`); each input is a list of mutations
// (`Mutation::parse`) applied to a fresh copy of its files, then the copy is verified, opened
// (normal or abnormal recovery), every queue is read, keys are looked up, the broker's config
// files are loaded and one message is appended. The property is "returns instead of panicking
// or hanging": errors are fine. (No `//!` here: this file is included, not a module.)

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use rmqd::store::{BoundaryType, MessageInput, MessageStore, MessageStoreConfig};

/// The queues the template writes: (topic, queue id, messages).
pub const QUEUES: &[(&str, i32, usize)] = &[
    ("T0", 0, 180),
    ("T0", 1, 90),
    ("T1", 0, 40),
    ("SCHEDULE_TOPIC_XXXX", 0, 6),
];

/// Files that may be absent in the template but that a mutation can create.
const OPTIONAL_FILES: &[&str] = &["abort", "config/rmqdTimer.json", "config/timercheck"];

/// Tiny files so the template spans several of each (3+ commit-log files, 2+ consume-queue files
/// per busy queue) and recovery crosses file boundaries.
pub fn store_config(root: &Path) -> MessageStoreConfig {
    let mut c = MessageStoreConfig::with_root(root);
    c.mapped_file_size_commit_log = 32 * 1024;
    c.mapped_file_size_consume_queue = 20 * 64;
    c.max_hash_slot_num = 32;
    c.max_index_num = 256;
    c.flush_interval_commit_log = 10;
    c.flush_interval_consume_queue = 10;
    c
}

fn message(topic: &str, queue_id: i32, i: usize) -> MessageInput {
    let born: SocketAddr = "192.168.1.10:54321".parse().expect("address");
    let store: SocketAddr = "192.168.1.20:10911".parse().expect("address");
    let tag = ["TagA", "TagB", ""][i % 3];
    let mut properties = format!(
        "KEYS\u{1}key{i} k{}\u{2}UNIQ_KEY\u{1}{topic}-{queue_id}-{i:05}\u{2}WAIT\u{1}true\u{2}",
        i % 7
    );
    if !tag.is_empty() {
        properties = format!("TAGS\u{1}{tag}\u{2}{properties}");
    }
    if topic == "SCHEDULE_TOPIC_XXXX" {
        properties.push_str("DELAY\u{1}1\u{2}REAL_TOPIC\u{1}T1\u{2}REAL_QID\u{1}0\u{2}");
    }
    MessageInput {
        topic: topic.to_string(),
        queue_id,
        flag: 0,
        sys_flag: if i % 11 == 5 { 1 } else { 0 },
        body: Bytes::from(format!("body-{i}-{}", "x".repeat(40 + i % 200))),
        properties,
        tags_code: rmqd::store::util::java_hash(tag) as i64,
        wait_store_msg_ok: true,
        born_timestamp: 1_726_000_000_000 + i as i64,
        born_host: born,
        store_host: store,
        reconsume_times: 0,
        prepared_transaction_offset: 0,
    }
}

/// The broker's JSON config files, in fastjson's dialect (bare integer keys).
const CONFIG_FILES: &[(&str, &str)] = &[
    (
        "config/topics.json",
        r#"{"dataVersion":{"counter":3,"stateVersion":0,"timestamp":1726000000000},"topicConfigTable":{"T0":{"order":false,"perm":6,"readQueueNums":2,"topicFilterType":"SINGLE_TAG","topicName":"T0","topicSysFlag":0,"writeQueueNums":2},"T1":{"perm":6,"readQueueNums":1,"topicName":"T1","writeQueueNums":1,"attributes":{"+message.type":"NORMAL"}}}}"#,
    ),
    (
        "config/consumerOffset.json",
        r#"{"offsetTable":{"T0@G1":{0:120,1:7},"%RETRY%G1@G1":{0:0},"T1@G2":{0:40}}}"#,
    ),
    (
        "config/subscriptionGroup.json",
        r#"{"dataVersion":{"counter":2,"timestamp":1726000000000},"forbiddenTable":{"G1":{"T0":1}},"subscriptionGroupTable":{"G1":{"consumeBroadcastEnable":true,"groupName":"G1","groupRetryPolicy":{"type":"CUSTOMIZED"},"retryMaxTimes":16,"retryQueueNums":1}}}"#,
    ),
    (
        "config/delayOffset.json",
        r#"{"dataVersion":{"counter":1},"offsetTable":{1:3,2:0,18:9}}"#,
    ),
    (
        "config/rmqdTimer.json",
        r#"{"readOffset":0,"minPendingOffset":0,"nextDueMs":0,"nextDueOffset":0}"#,
    ),
];

/// A valid store's files, relative path -> content, sorted by path.
pub struct StoreTemplate {
    pub files: Vec<(PathBuf, Vec<u8>)>,
}

impl StoreTemplate {
    /// Writes the store through the library API in a temporary directory and reads its files
    /// back. Panics only if the (valid) store cannot be written.
    pub fn build() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = MessageStore::open(store_config(dir.path())).expect("open template store");
        let longest = QUEUES.iter().map(|q| q.2).max().unwrap_or(0);
        for i in 0..longest {
            for &(topic, qid, n) in QUEUES {
                if i < n {
                    let r = store.put_message(&message(topic, qid, i)).wait_blocking();
                    assert!(
                        r.append.is_some(),
                        "template put {topic}/{qid}/{i}: {:?}",
                        r.status
                    );
                }
            }
        }
        assert!(
            store.wait_dispatched(Duration::from_secs(10)),
            "template dispatch"
        );
        store.shutdown();
        drop(store);
        for (rel, text) in CONFIG_FILES {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("config dir");
            std::fs::write(path, text).expect("config file");
        }
        let mut files = Vec::new();
        collect_files(dir.path(), dir.path(), &mut files);
        for rel in OPTIONAL_FILES {
            if !files.iter().any(|(p, _)| p == Path::new(rel)) {
                files.push((PathBuf::from(rel), Vec::new()));
            }
        }
        files.retain(|(p, _)| p != Path::new("lock"));
        files.sort();
        Self { files }
    }
}

fn collect_files(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            collect_files(root, &path, out);
        } else if let (Ok(rel), Ok(content)) = (path.strip_prefix(root), std::fs::read(&path)) {
            out.push((rel.to_path_buf(), content));
        }
    }
}

/// One change to the template's files, read from the fuzz input.
#[derive(Debug)]
pub enum Mutation {
    /// Overwrite bytes at `offset` (modulo the file length; may extend the file by a few bytes).
    Patch {
        file: usize,
        offset: usize,
        bytes: Vec<u8>,
    },
    /// Cut the file to `len` (modulo its length + 1).
    Truncate { file: usize, len: usize },
    /// Remove the file (an optional file that is absent: create it, empty).
    Toggle { file: usize },
    /// Copy file `from` over file `to` (a consume queue in place of another, a wrong index...).
    Copy { from: usize, to: usize },
    /// Write a 4- or 8-byte big-endian value at `offset`: lengths, offsets, magic codes.
    Number {
        file: usize,
        offset: usize,
        value: i64,
        wide: bool,
    },
}

/// Recovery flavour and the mutations, read from the input.
#[derive(Debug)]
pub struct Plan {
    /// Start with an `abort` marker (abnormal recovery).
    pub abort: bool,
    pub mutations: Vec<Mutation>,
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn u8(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    fn u24(&mut self) -> Option<usize> {
        Some((self.u8()? as usize) << 16 | (self.u8()? as usize) << 8 | self.u8()? as usize)
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        let n = n.min(self.0.len());
        let (a, rest) = self.0.split_at(n);
        self.0 = rest;
        a.to_vec()
    }
}

const INTERESTING: &[i64] = &[
    0,
    -1,
    1,
    8,
    20,
    i32::MAX as i64,
    i32::MIN as i64,
    0xdaa3_20a7, // MAGIC_V1
    0xdaa3_20a7_u32 as i32 as i64,
    0xcbd4_3194_u32 as i32 as i64, // BLANK_MAGIC
    32 * 1024,
    1 << 40,
    i64::MAX,
    i64::MIN,
];

impl Plan {
    /// Reads `data`: a flags byte, then mutations of the form `kind file args...` until the bytes
    /// run out (at most 32).
    pub fn parse(data: &[u8], files: usize) -> Plan {
        let mut r = Reader(data);
        let abort = r.u8().is_some_and(|f| f & 1 == 1);
        let mut mutations = Vec::new();
        let files = files.max(1);
        while mutations.len() < 32 {
            let (Some(kind), Some(sel)) = (r.u8(), r.u8()) else {
                break;
            };
            let file = sel as usize % files;
            let m = match kind % 8 {
                0..=2 => {
                    let Some(offset) = r.u24() else { break };
                    let n = 1 + r.u8().unwrap_or(0) as usize % 16;
                    Mutation::Patch {
                        file,
                        offset,
                        bytes: r.bytes(n),
                    }
                }
                3 => {
                    let Some(len) = r.u24() else { break };
                    Mutation::Truncate { file, len }
                }
                4 => Mutation::Toggle { file },
                5 => Mutation::Copy {
                    from: r.u8().unwrap_or(0) as usize % files,
                    to: file,
                },
                _ => {
                    let Some(offset) = r.u24() else { break };
                    let pick = r.u8().unwrap_or(0) as usize;
                    let value = INTERESTING[pick % INTERESTING.len()];
                    Mutation::Number {
                        file,
                        offset,
                        value,
                        wide: kind % 8 == 7,
                    }
                }
            };
            mutations.push(m);
        }
        Plan { abort, mutations }
    }

    /// The template's files with the mutations applied; `None` marks a removed file.
    pub fn apply(&self, template: &StoreTemplate) -> Vec<(PathBuf, Option<Vec<u8>>)> {
        let mut files: Vec<(PathBuf, Option<Vec<u8>>)> = template
            .files
            .iter()
            .map(|(p, c)| {
                let optional = OPTIONAL_FILES.iter().any(|o| p == Path::new(o));
                let present = !optional || !c.is_empty();
                (p.clone(), present.then(|| c.clone()))
            })
            .collect();
        if self.abort {
            if let Some(f) = files.iter_mut().find(|f| f.0 == Path::new("abort")) {
                f.1 = Some(Vec::new());
            }
        }
        for m in &self.mutations {
            apply_one(&mut files, m);
        }
        files
    }
}

fn apply_one(files: &mut [(PathBuf, Option<Vec<u8>>)], m: &Mutation) {
    let write = |c: &mut Vec<u8>, offset: usize, bytes: &[u8]| {
        let at = offset % (c.len() + 1);
        let end = at + bytes.len();
        if c.len() < end {
            c.resize(end, 0);
        }
        c[at..end].copy_from_slice(bytes);
    };
    match m {
        Mutation::Patch {
            file,
            offset,
            bytes,
        } => {
            if let Some(c) = &mut files[*file].1 {
                write(c, *offset, bytes);
            }
        }
        Mutation::Number {
            file,
            offset,
            value,
            wide,
        } => {
            if let Some(c) = &mut files[*file].1 {
                let b = value.to_be_bytes();
                write(c, *offset, if *wide { &b[..] } else { &b[4..] });
            }
        }
        Mutation::Truncate { file, len } => {
            if let Some(c) = &mut files[*file].1 {
                let n = len % (c.len() + 1);
                c.truncate(n);
            }
        }
        Mutation::Toggle { file } => {
            let f = &mut files[*file].1;
            *f = if f.is_some() { None } else { Some(Vec::new()) };
        }
        Mutation::Copy { from, to } => {
            let content = files[*from].1.clone();
            files[*to].1 = content;
        }
    }
}

/// Writes the mutated files under `root`.
pub fn write_files(root: &Path, files: &[(PathBuf, Option<Vec<u8>>)]) {
    for (rel, content) in files {
        let Some(content) = content else { continue };
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = std::fs::write(&path, content);
    }
}

/// The whole property for one input: write the mutated store, verify it, recover it, read it.
pub fn recover_mutated_store(template: &StoreTemplate, data: &[u8]) {
    let plan = Plan::parse(data, template.files.len());
    let files = plan.apply(template);
    let Ok(dir) = tempfile::Builder::new()
        .prefix("rmqd-fuzz-store")
        .tempdir_in(scratch_dir())
    else {
        return;
    };
    write_files(dir.path(), &files);
    exercise_store(dir.path());
}

/// A tmpfs when there is one: each input writes ~200 KB of files.
fn scratch_dir() -> PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

/// Verifies, opens, reads and appends to the store under `root`; every error is accepted.
pub fn exercise_store(root: &Path) {
    let cfg = store_config(root);
    let _ = rmqd::store::tools::verify(&cfg, &mut |_, _, _| {});
    let Ok(store) = MessageStore::open(cfg) else {
        return;
    };
    let store = Arc::new(store);
    store.wait_dispatched(Duration::from_millis(100));
    read_every_queue(&store, root);
    for key in ["key0", "key7", "k3", "T0-0-00017", "T1-0-00039", "missing"] {
        for topic in ["T0", "T1"] {
            let _ = store.query_message(topic, key, 32, 0, i64::MAX);
        }
    }
    let (min, max) = (store.min_phy_offset(), store.max_phy_offset());
    for phy in [min, max, min + (max - min) / 2, 0, 77, -1, i64::MAX] {
        let _ = store.lookup_message_by_offset(phy);
    }
    let _ = store.earliest_message_time_store();
    let _ = store.runtime_info();
    load_broker_metadata(&store, root);
    let _ = store.put_message(&message("T0", 0, 1)).wait_blocking();
    let _ = store.get_message("T0", 0, 0, 4, 1 << 20, None);
    store.shutdown();
}

/// Every queue the template wrote plus every directory under `consumequeue/`: each is read from
/// its min to its max offset (bounded), with time searches at both ends.
fn read_every_queue(store: &MessageStore, root: &Path) {
    let mut queues: Vec<(String, i32)> =
        QUEUES.iter().map(|&(t, q, _)| (t.to_string(), q)).collect();
    if let Ok(topics) = std::fs::read_dir(root.join("consumequeue")) {
        for t in topics.flatten() {
            let topic = t.file_name().to_string_lossy().into_owned();
            for q in std::fs::read_dir(t.path()).into_iter().flatten().flatten() {
                if let Ok(qid) = q.file_name().to_string_lossy().parse::<i32>() {
                    queues.push((topic.clone(), qid));
                }
            }
        }
    }
    queues.sort();
    queues.dedup();
    for (topic, qid) in queues.iter().take(16) {
        read_queue(store, topic, *qid);
    }
}

fn read_queue(store: &MessageStore, topic: &str, qid: i32) {
    let min = store.min_offset_in_queue(topic, qid);
    let max = store.max_offset_in_queue(topic, qid);
    let mut offset = min.min(max);
    for _ in 0..64 {
        if offset >= max {
            break;
        }
        let r = store.get_message(topic, qid, offset, 32, 256 * 1024, None);
        offset = r.next_begin_offset.max(offset + 1);
    }
    let _ = store.get_message(topic, qid, max, 32, 256 * 1024, None);
    let _ = store.get_message(topic, qid, -5, 1, 1024, None);
    for ts in [0, 1_726_000_000_000, i64::MAX] {
        for b in [BoundaryType::Lower, BoundaryType::Upper] {
            let _ = store.offset_in_queue_by_time(topic, qid, ts, b);
        }
    }
    let _ = store.earliest_message_time(topic, qid);
    let _ = store.message_store_timestamp(topic, qid, min);
    let _ = store.consume_queue_units(topic, qid, min, 32);
}

/// The broker's loaders over the (mutated) `config/` files.
fn load_broker_metadata(store: &Arc<MessageStore>, root: &Path) {
    use rmqd::broker::metadata::{
        groups::SubscriptionGroupManager, offsets::ConsumerOffsetManager,
        topics::TopicConfigManager,
    };
    let config = root.join("config");
    let broker = rmqd::broker::config::BrokerConfig::default();
    let _ = TopicConfigManager::load(&broker, config.join("topics.json"));
    let _ = ConsumerOffsetManager::load(config.join("consumerOffset.json"));
    let _ = SubscriptionGroupManager::load(config.join("subscriptionGroup.json"), true);
    let _ = rmqd::broker::schedule_message_service::ScheduleMessageService::load(store.clone());
    let _ = rmqd::broker::timer_message_service::TimerMessageService::load(store.clone());
}
