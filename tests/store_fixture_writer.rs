//! rmqd-written stores checked against the Java broker.
//!
//! `write_store_for_java` writes an rmqd store for the Java broker to start on (used by
//! scripts/store-fixtures, phase 2): 2000 messages on topic `R01_<run id>` (4 queues) shaped like
//! compat.Main's R01-SEND, topics.json with the topic, and the acked ids file R01-VERIFY reads. Does
//! nothing unless `RMQD_WRITE_STORE_FOR_JAVA` (the store root) is set; also `RMQD_FIXTURE_STATE_DIR`,
//! `RMQD_FIXTURE_RUN_ID`, `RMQD_FIXTURE_BROKER_CONF`.
//!
//! `rmqd_store_for_the_java_workload_matches_java_field_by_field` (always runs) replays, through
//! rmqd's store, the workload the Java fixture recorded (compat.Main J01, J04, J07, rebuilt here
//! from their definitions) and compares the result with tests/fixtures/java-store-clean in every
//! field that does not depend on time or host.

mod store_common;

use std::io::Read;
use std::net::SocketAddr;
use std::path::Path;

use rmqd::store::commitlog::record::{self, Decoded};
use rmqd::store::config_files::{
    self, ConsumerOffsetWrapper, DataVersion, TopicConfig, TopicConfigSerializeWrapper,
};
use rmqd::store::{
    MessageBatchInput, MessageInput, MessageStore, MessageStoreConfig, PutMessageStatus,
};

#[test]
fn write_store_for_java() {
    let Ok(root) = std::env::var("RMQD_WRITE_STORE_FOR_JAVA") else {
        return;
    };
    let state = std::env::var("RMQD_FIXTURE_STATE_DIR").unwrap();
    let run_id = std::env::var("RMQD_FIXTURE_RUN_ID").unwrap();
    let conf = std::fs::read_to_string(std::env::var("RMQD_FIXTURE_BROKER_CONF").unwrap()).unwrap();
    let mut cfg = MessageStoreConfig::with_root(&root);
    let mut port = 10911;
    let mut cluster = String::from("DefaultCluster");
    for line in conf.lines() {
        if let Some((k, v)) = line.split_once('=') {
            if k.starts_with('#') || k.starts_with("storePath") {
                continue;
            }
            cfg.set(k.trim(), v).unwrap();
            match k.trim() {
                "listenPort" => port = v.trim().parse().unwrap(),
                "brokerClusterName" => cluster = v.trim().to_string(),
                _ => {}
            }
        }
    }
    let topic = format!("R01_{run_id}");
    let store = MessageStore::open(cfg).unwrap();
    let born: SocketAddr = "127.0.0.1:45678".parse().unwrap();
    let store_host: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut ids = Vec::new();
    for i in 0..2000 {
        let uniq = format!(
            "7F000001{:04X}0000000000{:010X}",
            std::process::id() & 0xFFFF,
            i
        );
        let body = format!("restart {i} {}", "x".repeat(i % 200));
        let m = MessageInput {
            topic: topic.clone(),
            queue_id: (i % 4) as i32,
            flag: 0,
            sys_flag: 0,
            body: body.into_bytes().into(),
            properties: format!("TAGS\u{1}r\u{2}KEYS\u{1}rk{i}\u{2}UNIQ_KEY\u{1}{uniq}\u{2}WAIT\u{1}true\u{2}CLUSTER\u{1}{cluster}\u{2}"),
            tags_code: rmqd::store::util::java_hash("r") as i64,
            wait_store_msg_ok: true,
            born_timestamp: rmqd::store::util::now_ms(),
            born_host: born,
            store_host,
            reconsume_times: 0,
            prepared_transaction_offset: 0,
        };
        let r = store.put_message(&m).wait_blocking();
        assert_eq!(r.status, PutMessageStatus::PUT_OK);
        ids.push(uniq);
    }
    store.shutdown();
    let mut topics = TopicConfigSerializeWrapper {
        data_version: DataVersion::default(),
        ..Default::default()
    };
    let mut tc = TopicConfig::new(&topic, 16, 16, 6);
    tc.read_queue_nums = 4;
    tc.write_queue_nums = 4;
    topics.topic_config_table.insert(topic.clone(), tc);
    config_files::persist_typed(
        &std::path::Path::new(&root).join("config/topics.json"),
        &topics,
    )
    .unwrap();
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(format!("{state}/R01_{run_id}.ids"), ids.join("\n") + "\n").unwrap();
}

/// `java.util.Random`, for compat.Main's `new Random(42)` bodies.
struct JavaRandom(u64);

impl JavaRandom {
    const MASK: u64 = (1 << 48) - 1;
    fn new(seed: u64) -> Self {
        JavaRandom((seed ^ 0x5DEE_CE66D) & Self::MASK)
    }
    fn next_int(&mut self) -> i32 {
        self.0 = (self.0.wrapping_mul(0x5DEE_CE66D).wrapping_add(0xB)) & Self::MASK;
        (self.0 >> 16) as i32
    }
    fn next_bytes(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(4) {
            let mut rnd = self.next_int();
            for b in chunk {
                *b = rnd as u8;
                rnd >>= 8;
            }
        }
    }
}

/// One message as the Java producer built it (before the client adds UNIQ_KEY & co.).
struct Sent {
    topic: String,
    body: Vec<u8>,
    flag: i32,
    /// TAGS, KEYS and user properties.
    props: Vec<(String, String)>,
}

fn sent(topic: &str, body: &[u8], tags: Option<&str>, keys: Option<&str>) -> Sent {
    let mut props = Vec::new();
    if let Some(t) = tags {
        props.push(("TAGS".to_string(), t.to_string()));
    }
    if let Some(k) = keys {
        props.push(("KEYS".to_string(), k.to_string()));
    }
    Sent {
        topic: topic.to_string(),
        body: body.to_vec(),
        flag: 0,
        props,
    }
}

/// compat.Main `variant(topic, i, rnd)` for J01 (50 single sends).
fn j01() -> Vec<Sent> {
    let topic = "J01_fixture_t";
    let mut rnd = JavaRandom::new(42);
    (0..50)
        .map(|i| {
            let small = format!("small body {i}");
            let mut m = match i % 6 {
                0 => {
                    let key = format!("key{i} common");
                    let mut m = sent(topic, small.as_bytes(), Some("TagA"), Some(&key));
                    m.props.push(("p1".into(), format!("v{i}")));
                    m.props.push((
                        "unicode".into(),
                        "h\u{e9}llo w\u{f6}rld \u{4f60}\u{597d}".into(),
                    ));
                    m
                }
                1 => {
                    let mut b = vec![0u8; 1024];
                    rnd.next_bytes(&mut b);
                    sent(topic, &b, Some("TagB"), Some(&format!("k1k{i}")))
                }
                2 => {
                    let mut b = vec![0u8; 200 * 1024];
                    rnd.next_bytes(&mut b);
                    sent(topic, &b, None, Some(&format!("big{i}")))
                }
                3 => {
                    let mut b = String::new();
                    while b.len() < 16 * 1024 {
                        b.push_str(&format!("compressible-line-{i} "));
                    }
                    let mut m = sent(topic, b.as_bytes(), Some("TagZ"), None);
                    m.props.push(("compress".into(), "yes".into()));
                    m
                }
                4 => {
                    let mut m = sent(topic, &[i as u8], None, None);
                    m.props.push(("a".into(), "1".into()));
                    m.props.push(("b".into(), "x y z".into()));
                    m
                }
                _ => sent(topic, small.as_bytes(), Some("TagA"), None),
            };
            if i % 6 == 5 {
                m.flag = 7;
            }
            m
        })
        .collect()
}

/// compat.Main J04: one batch of 32 to one queue.
fn j04() -> Vec<Sent> {
    (0..32)
        .map(|i| {
            let body = format!("batch body {i}");
            let mut m = sent(
                "J04_fixture_t",
                body.as_bytes(),
                Some("batch"),
                Some(&format!("bk{i}")),
            );
            m.props.push(("i".into(), i.to_string()));
            m
        })
        .collect()
}

/// compat.Main J07: five messages sharing a key, one unrelated.
fn j07() -> Vec<Sent> {
    let topic = "J07_fixture_t";
    let mut v: Vec<Sent> = (0..5)
        .map(|i| {
            let keys = format!("J07_fixture_KEY other{i}");
            sent(topic, format!("q{i}").as_bytes(), Some("q"), Some(&keys))
        })
        .collect();
    v.push(sent(topic, b"x", Some("q"), Some("unrelated")));
    v
}

fn encode_props(pairs: &[(String, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}\u{1}{v}\u{2}"))
        .collect()
}

fn prop_multiset(props: &[u8]) -> Vec<(String, String)> {
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let mut v: Vec<_> = rmqd::store::util::props_iter(props)
        .map(|(k, v)| (s(k), s(v)))
        .collect();
    v.sort();
    v
}

fn java_prop<'a>(r: &'a record::RecordView<'_>, key: &str) -> &'a str {
    let v = rmqd::store::util::find_property(r.properties, key).unwrap();
    std::str::from_utf8(v).unwrap()
}

/// The body the client put on the wire: Java's zlib bytes when it compressed (sysflag bit 0),
/// after checking they inflate to the workload's body.
fn wire_body(java: &record::RecordView<'_>, sent: &Sent) -> Vec<u8> {
    if java.sys_flag & 1 == 0 {
        assert_eq!(java.body, &sent.body[..], "body as sent");
        return sent.body.clone();
    }
    let mut plain = Vec::new();
    flate2::read::ZlibDecoder::new(java.body)
        .read_to_end(&mut plain)
        .unwrap();
    assert_eq!(
        plain, sent.body,
        "compressed body inflates to the body sent"
    );
    java.body.to_vec()
}

/// Every record field that depends on neither time nor host.
fn assert_same_record(j: &record::RecordView<'_>, r: &record::RecordView<'_>, what: &str) {
    assert_eq!(
        (j.total_size, j.magic, j.body_crc, j.queue_id, j.flag),
        (r.total_size, r.magic, r.body_crc, r.queue_id, r.flag),
        "{what}: size/magic/crc/queue/flag"
    );
    assert_eq!(
        (j.queue_offset, j.phys_offset, j.sys_flag),
        (r.queue_offset, r.phys_offset, r.sys_flag),
        "{what}: offsets/sysflag"
    );
    assert_eq!(
        (j.reconsume_times, j.prepared_transaction_offset),
        (r.reconsume_times, r.prepared_transaction_offset),
        "{what}"
    );
    assert_eq!((j.body, j.topic), (r.body, r.topic), "{what}: body/topic");
    assert_eq!(
        prop_multiset(j.properties),
        prop_multiset(r.properties),
        "{what}: properties (any order)"
    );
}

fn decode(b: &[u8]) -> record::RecordView<'_> {
    match record::decode(b, true) {
        Ok(Decoded::Record(r)) => r,
        other => panic!("{other:?}"),
    }
}

fn decode_all(root: &Path, file_size: usize) -> Vec<(i64, Vec<u8>)> {
    store_common::java_fixture::read_records(root, file_size)
        .into_iter()
        .map(|r| (r.phys, r.bytes))
        .collect()
}

#[test]
fn rmqd_store_for_the_java_workload_matches_java_field_by_field() {
    use store_common::java_fixture::{fixture_config, unpack_from, CLEAN};
    let java_dir = tempfile::tempdir().unwrap();
    let Some(jcfg) = unpack_from(CLEAN, java_dir.path()) else {
        eprintln!("fixture {CLEAN} missing; run scripts/store-fixtures");
        return;
    };
    let fs = jcfg.mapped_file_size_commit_log as usize;
    let java = decode_all(java_dir.path(), fs);
    let workload: Vec<Sent> = j01().into_iter().chain(j04()).chain(j07()).collect();
    assert_eq!(java.len(), workload.len(), "one record per message sent");

    let rmqd_dir = tempfile::tempdir().unwrap();
    let rcfg = fixture_config(CLEAN, rmqd_dir.path());
    let cluster = "CompatCluster";
    let store = MessageStore::open(rcfg.clone()).unwrap();
    let mut i = 0;
    while i < workload.len() {
        let j = decode(&java[i].1);
        let w = &workload[i];
        assert_eq!(j.topic_str(), w.topic, "record {i}");
        let client = |uniq: &str| {
            [
                ("WAIT", "true"),
                ("UNIQ_KEY", uniq),
                ("MSG_REGION", "DefaultRegion"),
                ("TRACE_ON", "true"),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
        };
        if w.topic == "J04_fixture_t" {
            // The batch: client-encoded inner messages, batch-level properties appended (5.3.x).
            let mut body = Vec::new();
            for (k, m) in workload[i..i + 32].iter().enumerate() {
                let jk = decode(&java[i + k].1);
                let inner_uniq = rmqd::store::util::props_iter(jk.properties)
                    .find(|(k, _)| *k == b"UNIQ_KEY")
                    .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
                    .unwrap();
                let mut p = m.props.clone();
                p.push(("UNIQ_KEY".into(), inner_uniq));
                p.push(("WAIT".into(), "true".into()));
                let props = encode_props(&p);
                let len = 20 + m.body.len() + 2 + props.len();
                body.extend_from_slice(&(len as i32).to_be_bytes());
                body.extend_from_slice(&[0u8; 8]);
                body.extend_from_slice(&m.flag.to_be_bytes());
                body.extend_from_slice(&(m.body.len() as i32).to_be_bytes());
                body.extend_from_slice(&m.body);
                body.extend_from_slice(&(props.len() as i16).to_be_bytes());
                body.extend_from_slice(props.as_bytes());
            }
            let batch_uniq = java_prop(&j, "UNIQ_KEY").to_string();
            let batch_props = [
                ("MSG_REGION", "DefaultRegion"),
                ("UNIQ_KEY", batch_uniq.as_str()),
                ("CLUSTER", cluster),
                ("WAIT", "true"),
                ("TRACE_ON", "true"),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()));
            let b = MessageBatchInput {
                topic: w.topic.clone(),
                queue_id: j.queue_id,
                sys_flag: j.sys_flag,
                body: body.into(),
                batch_properties: encode_props(&batch_props),
                born_timestamp: j.born_timestamp,
                born_host: j.born_host,
                store_host: j.store_host,
                reconsume_times: 0,
            };
            let r = store.put_messages(&b).wait_blocking();
            assert_eq!(r.status, PutMessageStatus::PUT_OK);
            i += 32;
            continue;
        }
        let mut p = w.props.clone();
        p.extend(client(java_prop(&j, "UNIQ_KEY")));
        p.push(("CLUSTER".into(), cluster.into()));
        let m = MessageInput {
            topic: w.topic.clone(),
            queue_id: j.queue_id,
            flag: w.flag,
            sys_flag: j.sys_flag,
            body: wire_body(&j, w).into(),
            properties: encode_props(&p),
            tags_code: p
                .iter()
                .find(|(k, _)| k == "TAGS")
                .map_or(0, |(_, v)| rmqd::store::util::java_hash(v) as i64),
            wait_store_msg_ok: true,
            born_timestamp: j.born_timestamp,
            born_host: j.born_host,
            store_host: j.store_host,
            reconsume_times: 0,
            prepared_transaction_offset: 0,
        };
        let r = store.put_message(&m).wait_blocking();
        assert_eq!(r.status, PutMessageStatus::PUT_OK, "record {i}");
        i += 1;
    }
    assert!(store.wait_dispatched(std::time::Duration::from_secs(10)));
    let max_offsets: Vec<(String, i32, i64)> = ["J01_fixture_t", "J04_fixture_t", "J07_fixture_t"]
        .iter()
        .flat_map(|t| (0..4).map(move |q| (t.to_string(), q)))
        .map(|(t, q)| {
            let m = store.max_offset_in_queue(&t, q);
            (t, q, m)
        })
        .collect();
    store.shutdown();
    drop(store);

    // CommitLog: same records at the same offsets, the same blank record before the roll.
    let ours = decode_all(rmqd_dir.path(), fs);
    assert_eq!(ours.len(), java.len());
    for ((jp, jb), (rp, rb)) in java.iter().zip(&ours) {
        assert_eq!(jp, rp, "physical offset");
        assert_same_record(&decode(jb), &decode(rb), &format!("record at {jp}"));
    }
    let cl0 = "commitlog/00000000000000000000";
    let (jf, rf) = (
        std::fs::read(java_dir.path().join(cl0)).unwrap(),
        std::fs::read(rmqd_dir.path().join(cl0)).unwrap(),
    );
    let blank_at = ours.iter().rev().find(|(p, _)| (*p as usize) < fs).unwrap();
    let blank_at = blank_at.0 as usize + blank_at.1.len();
    assert_eq!(
        &jf[blank_at..blank_at + 8],
        &rf[blank_at..blank_at + 8],
        "blank record"
    );
    assert!(
        jf[blank_at + 8..].iter().all(|&b| b == 0) && rf[blank_at + 8..].iter().all(|&b| b == 0)
    );

    // ConsumeQueues: every file byte for byte (phyOffset, size, tagsCode; zero tail).
    let mut cq_files = 0;
    for line in std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(CLEAN)
            .join("manifest.txt"),
    )
    .unwrap()
    .lines()
    {
        let path = line.rsplit_once(' ').unwrap().0;
        if path.starts_with("consumequeue/") {
            let j = std::fs::read(java_dir.path().join(path)).unwrap();
            let r = std::fs::read(rmqd_dir.path().join(path)).unwrap();
            assert!(j == r, "{path} differs");
            cq_files += 1;
        }
    }
    assert_eq!(cq_files, 9);

    // Index: header counts and offsets, slot table, entries (hash, phyOffset, prev chain); only
    // the begin/end timestamps and each entry's timeDiff depend on time.
    let only = |root: &Path| {
        let mut v: Vec<_> = std::fs::read_dir(root.join("index"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(v.len(), 1, "{v:?}");
        std::fs::read(v.pop().unwrap()).unwrap()
    };
    let (mut ji, mut ri) = (only(java_dir.path()), only(rmqd_dir.path()));
    assert_eq!(ji.len(), ri.len());
    let count = i32::from_be_bytes(ji[36..40].try_into().unwrap()) as usize;
    assert!(count > 100, "index entries {count}");
    let base = 40 + rcfg.max_hash_slot_num as usize * 4;
    for buf in [&mut ji, &mut ri] {
        buf[..16].fill(0);
        for n in 1..count {
            buf[base + n * 20 + 12..base + n * 20 + 16].fill(0);
        }
    }
    for n in 0..count {
        let e = base + n * 20..base + n * 20 + 20;
        assert_eq!(ji[e.clone()], ri[e], "index entry {n}");
    }
    assert!(ji == ri, "index header or slot table differs");

    // The rmqd store verifies clean.
    let rep = rmqd::store::tools::verify(&rcfg, &mut |_, _, _| {}).unwrap();
    assert!(rep.is_ok(), "{:#?}", rep.problems);
    assert_eq!(rep.records as usize, java.len());

    // Config: the topics as rmqd creates them (createTopic with 4 queues) serialise to Java's
    // objects; Java's consumed offsets are the queue ends rmqd computed.
    let jt: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(java_dir.path().join("config/topics.json")).unwrap(),
    )
    .unwrap();
    let mut ours_topics = TopicConfigSerializeWrapper::default();
    for t in ["J01_fixture_t", "J04_fixture_t", "J07_fixture_t"] {
        ours_topics
            .topic_config_table
            .insert(t.to_string(), TopicConfig::new(t, 4, 4, 6));
    }
    let tp = rmqd_dir.path().join("config/topics.json");
    config_files::persist_typed(&tp, &ours_topics).unwrap();
    let rt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&tp).unwrap()).unwrap();
    for t in ["J01_fixture_t", "J04_fixture_t", "J07_fixture_t"] {
        assert_eq!(
            jt["topicConfigTable"][t], rt["topicConfigTable"][t],
            "topics.json entry {t}"
        );
    }
    let offsets: ConsumerOffsetWrapper =
        config_files::load_typed(&java_dir.path().join("config/consumerOffset.json"))
            .unwrap()
            .unwrap();
    let mut checked = 0;
    for (key, table) in &offsets.offset_table {
        let topic = key.split('@').next().unwrap();
        for (q, off) in table {
            let ours = max_offsets
                .iter()
                .find(|(t, qq, _)| t == topic && qq == q)
                .map(|x| x.2);
            assert_eq!(ours, Some(*off), "{key} queue {q}");
            checked += 1;
        }
    }
    assert_eq!(checked, 5);
}
