//! `RocksCqStore`, the RocksDB consume queue of Java's `storeType=defaultRocksDB` (feature
//! `rocksdb-cq`): round trips through the wrapper, reopen after flush, expiry by compaction, and
//! (ignored: they need Java and `compat-tests/rocksdb-java` built, see its `run.sh`) both
//! directions against the real rocketmq-rocksdb 1.0.6 jar of Java 5.5.0.
#![cfg(feature = "rocksdb-cq")]

mod store_common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use rmqd::store::commitlog::record::{self, Decoded};
use rmqd::store::consumequeue::rocksdb_codec::{
    checkpoint_key, encode_cq_key, encode_cq_value, encode_offset_key, encode_offset_value,
    CqValue, OffsetKind, PhyAndCqOffset,
};
use rmqd::store::consumequeue::rocksdb_store::{RocksCqError, RocksCqStore};
use rmqd::store::consumequeue::rocksdb_table::DispatchEntry;
use rmqd::store::lmq::LmqTarget;
use rmqd::store::util::{find_property, java_hash};
use rmqd::store::{BoundaryType, MessageStore, PutMessageStatus, StorePaths};

fn unit(phy: i64, ts: i64) -> CqValue {
    CqValue {
        phy_offset: phy,
        size: 200,
        tags_code: 0x1234,
        store_timestamp: ts,
    }
}

fn entry<'a>(
    topic: &'a str,
    qid: i32,
    off: i64,
    phy: i64,
    lmq: &'a [LmqTarget],
) -> DispatchEntry<'a> {
    DispatchEntry {
        topic,
        queue_id: qid,
        queue_offset: off,
        unit: unit(phy, 1_700_000_000_000 + off),
        lmq,
    }
}

/// Units `first..first+n` of `topic`/`qid`, phy `1000 * i`, time `1700000000000 + i`.
fn put_queue(store: &RocksCqStore, topic: &str, qid: i32, first: i64, n: i64) {
    let entries: Vec<_> = (first..first + n)
        .map(|i| entry(topic, qid, i, 1000 * i, &[]))
        .collect();
    store.put_batch(&entries).unwrap();
}

#[test]
fn batch_round_trips_units_max_checkpoint_and_lmq_copies() {
    let dir = tempfile::tempdir().unwrap();
    let store = RocksCqStore::open(&StorePaths::new(dir.path(), None), false).unwrap();
    assert_eq!(store.path(), dir.path().join("consumequeue"));
    let lmq = [LmqTarget {
        queue: "%LMQ%$P$l".into(),
        queue_id: 0,
        queue_offset: 7,
    }];
    let entries = [
        entry("TopicTest", 1, 0, 0, &[]),
        entry("TopicTest", 1, 1, 1000, &lmq),
        entry("Other", 3, 5, 2000, &[]),
    ];
    store.put_batch(&entries).unwrap();
    assert_eq!(
        store.get_unit("TopicTest", 1, 1).unwrap(),
        Some(unit(1000, 1_700_000_000_001))
    );
    assert_eq!(
        store.get_unit("%LMQ%$P$l", 0, 7).unwrap(),
        Some(unit(1000, 1_700_000_000_001))
    );
    assert_eq!(store.get_unit("TopicTest", 1, 2).unwrap(), None);
    assert_eq!(store.get_units("TopicTest", 1, 0, 32).unwrap().len(), 2);
    assert_eq!(store.max_offset_in_queue("TopicTest", 1).unwrap(), 2);
    assert_eq!(store.max_offset_in_queue("%LMQ%$P$l", 0).unwrap(), 8);
    assert_eq!(store.max_offset_in_queue("Nope", 0).unwrap(), 0);
    let max = store.max_phy_and_cq_offset("Other", 3).unwrap();
    assert_eq!(
        max,
        Some(PhyAndCqOffset {
            phy_offset: 2000,
            cq_offset: 5
        })
    );
    assert_eq!(store.checkpoint().unwrap(), 2200);
    let all = store.load_max_offsets().unwrap();
    assert_eq!((all.queues.len(), all.lmq_count), (3, 1));
    store.destroy_queue("TopicTest", 1).unwrap();
    assert_eq!(store.get_units("TopicTest", 1, 0, 32).unwrap(), vec![]);
    assert_eq!(store.max_offset_in_queue("TopicTest", 1).unwrap(), 0);
    assert!(store.get_unit("Other", 3, 5).unwrap().is_some());
}

#[test]
fn the_store_is_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<RocksCqStore>();
}

#[test]
fn flushed_data_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let paths = StorePaths::new(dir.path(), None);
    {
        let store = RocksCqStore::open(&paths, true).unwrap();
        put_queue(&store, "T", 0, 0, 100);
        store.flush().unwrap();
    }
    assert!(dir.path().join("consumequeue_rocksdb/CURRENT").is_file());
    let store = RocksCqStore::open(&paths, true).unwrap();
    assert_eq!(store.max_offset_in_queue("T", 0).unwrap(), 100);
    assert_eq!(store.checkpoint().unwrap(), 99 * 1000 + 200);
    assert_eq!(store.get_units("T", 0, 90, 20).unwrap().len(), 10);
}

#[test]
fn a_database_in_the_other_path_is_refused_as_java_does() {
    let dir = tempfile::tempdir().unwrap();
    let paths = StorePaths::new(dir.path(), None);
    drop(RocksCqStore::open(&paths, false).unwrap());
    let err = RocksCqStore::open(&paths, true).err().unwrap();
    assert!(matches!(err, RocksCqError::OtherPathInUse { .. }), "{err}");
}

#[test]
fn compaction_expires_units_and_min_offset_follows_lazily() {
    let dir = tempfile::tempdir().unwrap();
    let store = RocksCqStore::open_dir(dir.path()).unwrap();
    put_queue(&store, "T", 0, 0, 6);
    assert_eq!(store.min_offset_in_queue("T", 0, 0).unwrap(), 0);
    store.flush().unwrap();
    store.clean_expired(2500).unwrap();
    assert_eq!(store.get_unit("T", 0, 2).unwrap(), None);
    assert!(store.get_unit("T", 0, 3).unwrap().is_some());
    assert_eq!(store.min_offset_in_queue("T", 0, 2500).unwrap(), 3);
    let by_time = |ts, b| store.offset_in_queue_by_time("T", 0, ts, 2500, b).unwrap();
    assert_eq!(by_time(1_700_000_000_000, BoundaryType::Lower), 3);
    assert_eq!(by_time(1_700_000_000_004, BoundaryType::Upper), 4);
    assert_eq!(by_time(1_800_000_000_000, BoundaryType::Lower), 6);
}

// ---- against the real rocketmq-rocksdb 1.0.6 jar (Java 5.5.0) ----

/// `java` with the classpath of `compat-tests/rocksdb-java` (built by its `run.sh`).
fn java_rocks_cq(args: &[&str]) -> BTreeSet<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("compat-tests/rocksdb-java/target");
    let cp = std::fs::read_to_string(dir.join("cp.txt"))
        .expect("build compat-tests/rocksdb-java first (run.sh)");
    let cp = format!("{}:{}", cp.trim(), dir.join("classes").display());
    let out = Command::new("java")
        .args(["-cp", &cp, "compat.rocksdb.RocksCq"])
        .args(args)
        .output()
        .expect("java");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "java {args:?}: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("rocksdb 8.4.4"), "{stdout}");
    stdout
        .lines()
        .filter(|l| !l.starts_with("rocksdb "))
        .map(str::to_string)
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn line(cf: &str, key: &[u8], value: &[u8]) -> String {
    format!("{cf} {} {}", hex(key), hex(value))
}

fn unit_line(topic: &str, qid: i32, off: i64, phy: i64) -> String {
    let v = encode_cq_value(&unit(phy, 1_700_000_000_000 + off));
    line("cq", &encode_cq_key(topic, qid, off).unwrap(), &v)
}

fn max_line(topic: &str, qid: i32, phy: i64, cq: i64) -> String {
    let v = PhyAndCqOffset {
        phy_offset: phy,
        cq_offset: cq,
    };
    let key = encode_offset_key(topic, OffsetKind::Max, qid).unwrap();
    line("off", &key, &encode_offset_value(&v))
}

fn db_dir(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join(name);
    (dir, db)
}

#[test]
#[ignore = "needs Java and compat-tests/rocksdb-java built; run compat-tests/rocksdb-java/run.sh"]
fn java_written_database_opens_and_extends_in_rmqd_and_java_reads_it_back() {
    let (_dir, db) = db_dir("consumequeue");
    let java = java_rocks_cq(&["write", db.to_str().unwrap()]);
    assert_eq!(java.len(), 9);
    {
        let store = RocksCqStore::open_dir(&db).unwrap();
        assert_eq!(store.max_offset_in_queue("TopicTest", 1).unwrap(), 5);
        assert_eq!(store.max_offset_in_queue("%LMQ%$P$l", 0).unwrap(), 1);
        assert_eq!(store.checkpoint().unwrap(), 4200);
        assert_eq!(
            store.get_unit("TopicTest", 1, 1).unwrap(),
            Some(unit(1000, 1_700_000_000_001))
        );
        assert_eq!(store.get_units("TopicTest", 1, 0, 10).unwrap().len(), 5);
        let all = store.load_max_offsets().unwrap();
        assert_eq!((all.queues.len(), all.lmq_count), (2, 1));
        let lmq = [LmqTarget {
            queue: "%LMQ%$P$l".into(),
            queue_id: 0,
            queue_offset: 1,
        }];
        store
            .put_batch(&[
                entry("TopicTest", 1, 5, 5000, &[]),
                entry("TopicTest", 1, 6, 6000, &lmq),
            ])
            .unwrap();
        store.flush().unwrap();
    }
    let java = java_rocks_cq(&["dump", db.to_str().unwrap()]);
    for want in [
        unit_line("TopicTest", 1, 5, 5000),
        unit_line("TopicTest", 1, 6, 6000),
        // The LMQ copy carries its parent's value (store time of cq offset 6).
        line(
            "cq",
            &encode_cq_key("%LMQ%$P$l", 0, 1).unwrap(),
            &encode_cq_value(&unit(6000, 1_700_000_000_006)),
        ),
        max_line("TopicTest", 1, 6000, 6),
        max_line("%LMQ%$P$l", 0, 6000, 1),
        line("off", &checkpoint_key(), &6200i64.to_be_bytes()),
    ] {
        assert!(java.contains(&want), "Java does not see {want}:\n{java:#?}");
    }
    assert_eq!(java.len(), 12);
    // Java's native filter expires what rmqd wrote; rmqd then corrects the min lazily.
    java_rocks_cq(&["compact", db.to_str().unwrap(), "5500"]);
    let store = RocksCqStore::open_dir(&db).unwrap();
    assert_eq!(store.get_unit("TopicTest", 1, 5).unwrap(), None);
    assert!(store.get_unit("TopicTest", 1, 6).unwrap().is_some());
    assert_eq!(store.min_offset_in_queue("TopicTest", 1, 5500).unwrap(), 6);
}

#[test]
#[ignore = "needs Java and compat-tests/rocksdb-java built; run compat-tests/rocksdb-java/run.sh"]
fn rmqd_written_database_reads_in_java_with_the_exact_bytes() {
    let (_dir, db) = db_dir("consumequeue");
    {
        let store = RocksCqStore::open_dir(&db).unwrap();
        put_queue(&store, "TopicTest", 1, 0, 5);
        put_queue(&store, "Gone", 2, 0, 3);
        store.destroy_queue("Gone", 2).unwrap();
        assert_eq!(store.min_offset_in_queue("TopicTest", 1, 1500).unwrap(), 2);
    }
    let java = java_rocks_cq(&["dump", db.to_str().unwrap()]);
    let mut want: BTreeSet<String> = (0..5)
        .map(|i| unit_line("TopicTest", 1, i, 1000 * i))
        .collect();
    want.insert(max_line("TopicTest", 1, 4000, 4));
    let min_key = encode_offset_key("TopicTest", OffsetKind::Min, 1).unwrap();
    let min = PhyAndCqOffset {
        phy_offset: 2000,
        cq_offset: 2,
    };
    want.insert(line("off", &min_key, &encode_offset_value(&min)));
    // `put_queue` of "Gone" ran last: the checkpoint is its end, 2000 + 200.
    want.insert(line("off", &checkpoint_key(), &2200i64.to_be_bytes()));
    assert_eq!(java, want);
    // A queue destroyed by Java is gone for rmqd.
    java_rocks_cq(&["destroy", db.to_str().unwrap(), "TopicTest", "1"]);
    let store = RocksCqStore::open_dir(&db).unwrap();
    assert_eq!(store.get_units("TopicTest", 1, 0, 10).unwrap(), vec![]);
    assert_eq!(store.max_offset_in_queue("TopicTest", 1).unwrap(), 0);
    assert_eq!(store.checkpoint().unwrap(), 2200);
}

// ---- a store for the real Java 5.5.0 broker (storeType=defaultRocksDB) ----

/// Messages of the broker fixture: `TopicTest`, 4 queues, tags TagA/TagB, bodies `rocks-<i>`.
const BROKER_FIXTURE_MESSAGES: usize = 200;

/// Every record of the commit log in `dir`, in order, as dispatch entries (tags code from `TAGS`).
fn commit_log_entries(dir: &Path) -> Vec<(String, i32, i64, CqValue)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut out = Vec::new();
    'files: for f in files {
        let buf = std::fs::read(&f).unwrap();
        let mut pos = 0;
        while pos < buf.len() {
            match record::decode(&buf[pos..], true).unwrap() {
                Decoded::Record(r) => {
                    let tags = find_property(r.properties, "TAGS")
                        .map(|t| String::from_utf8_lossy(t).into_owned());
                    let unit = CqValue {
                        phy_offset: r.phys_offset,
                        size: r.total_size,
                        tags_code: tags.map_or(0, |t| i64::from(java_hash(&t))),
                        store_timestamp: r.store_timestamp,
                    };
                    out.push((r.topic_str().to_string(), r.queue_id, r.queue_offset, unit));
                    pos += r.total_size as usize;
                }
                Decoded::Blank => continue 'files,
                Decoded::End => break 'files,
            }
        }
    }
    out
}

/// Writes, into `RMQD_ROCKSDB_BROKER_STORE`, a store for the Java 5.5.0 broker with
/// `storeType=defaultRocksDB` and `mappedFileSizeCommitLog=65536`: rmqd's commit log, and a
/// `consumequeue/` that `RocksCqStore` wrote (the file consume queue rmqd's store made is removed)
/// with the checkpoint at the end of the log, so Java dispatches nothing itself.
/// `compat-tests/rocksdb-java/broker.sh` runs it and then the Java broker.
#[test]
#[ignore = "writes a fixture for compat-tests/rocksdb-java/broker.sh (RMQD_ROCKSDB_BROKER_STORE)"]
fn write_store_for_java_broker() {
    let root = PathBuf::from(
        std::env::var("RMQD_ROCKSDB_BROKER_STORE").expect("RMQD_ROCKSDB_BROKER_STORE"),
    );
    let cfg = store_common::small_config(&root);
    let store = MessageStore::open(cfg).unwrap();
    for i in 0..BROKER_FIXTURE_MESSAGES {
        let tag = if i % 2 == 0 { "TagA" } else { "TagB" };
        let body = format!("rocks-{i}");
        let m = store_common::msg(
            "TopicTest",
            (i % 4) as i32,
            body.as_bytes(),
            tag,
            &format!("k{i}"),
            &format!("U{i:04}"),
        );
        assert_eq!(
            store.put_message(&m).wait_blocking().status,
            PutMessageStatus::PUT_OK
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    store.shutdown();
    drop(store);
    let paths = StorePaths::new(&root, None);
    std::fs::remove_dir_all(paths.consume_queue_root()).unwrap();
    let entries = commit_log_entries(paths.commit_log_dir());
    assert_eq!(entries.len(), BROKER_FIXTURE_MESSAGES);
    let cq = RocksCqStore::open(&paths, false).unwrap();
    for group in entries.chunks(64) {
        let batch: Vec<_> = group
            .iter()
            .map(|(t, q, off, unit)| DispatchEntry {
                topic: t,
                queue_id: *q,
                queue_offset: *off,
                unit: *unit,
                lmq: &[],
            })
            .collect();
        cq.put_batch(&batch).unwrap();
    }
    cq.flush().unwrap();
    let last = entries.last().unwrap().3;
    assert_eq!(
        cq.checkpoint().unwrap(),
        last.phy_offset + i64::from(last.size)
    );
    for q in 0..4 {
        assert_eq!(
            cq.max_offset_in_queue("TopicTest", q).unwrap(),
            (BROKER_FIXTURE_MESSAGES / 4) as i64
        );
    }
    let (first, t120) = (entries[0].3.store_timestamp, entries[120].3.store_timestamp);
    assert_eq!((entries[120].1, entries[120].2), (0, 30));
    let before = entries[119].3.store_timestamp;
    assert!(before < t120, "messages 119 and 120 share a store time");
    println!(
        "rocksdb-cq fixture: {} units, checkpoint {}, first store time {first}, store time of 120: {t120}",
        entries.len(),
        cq.checkpoint().unwrap()
    );
}

/// After `broker.sh` ran the Java broker on the fixture and sent one message (queue 3, body
/// `from-java`): `RocksCqStore` reads the unit, max and checkpoint Java's RocksDB wrote.
#[test]
#[ignore = "reads the fixture after compat-tests/rocksdb-java/broker.sh ran the Java broker on it"]
fn read_store_after_java_broker() {
    let root = PathBuf::from(
        std::env::var("RMQD_ROCKSDB_BROKER_STORE").expect("RMQD_ROCKSDB_BROKER_STORE"),
    );
    let paths = StorePaths::new(&root, None);
    let entries = commit_log_entries(paths.commit_log_dir());
    assert_eq!(entries.len(), BROKER_FIXTURE_MESSAGES + 1);
    let (topic, qid, off, unit) = entries.last().unwrap().clone();
    assert_eq!((topic.as_str(), qid, off), ("TopicTest", 3, 50));
    let cq = RocksCqStore::open(&paths, false).unwrap();
    assert_eq!(cq.get_unit("TopicTest", 3, 50).unwrap(), Some(unit));
    assert_eq!(cq.max_offset_in_queue("TopicTest", 3).unwrap(), 51);
    assert_eq!(
        cq.checkpoint().unwrap(),
        unit.phy_offset + i64::from(unit.size)
    );
    let all = cq.load_max_offsets().unwrap();
    println!(
        "java unit: TopicTest/3/50 {unit:?}; max keys: {:?}",
        all.queues
            .iter()
            .map(|q| (&q.topic, q.queue_id, q.max.cq_offset))
            .collect::<Vec<_>>()
    );
}
