//! The message store with `storeType=defaultRocksDB` (feature `rocksdb-cq`): dispatch into the
//! RocksDB consume queue (LMQ copies in the record's batch), pulls, min/max, search by time,
//! restart, truncation after a damaged commit-log tail, topic deletion and expiry.
#![cfg(feature = "rocksdb-cq")]

mod store_common;

use std::time::Duration;

use rmqd::store::commitlog::record::{self, Decoded};
use rmqd::store::consumequeue::rocksdb_store::RocksCqStore;
use rmqd::store::{
    BoundaryType, GetMessageStatus, MessageStore, MessageStoreConfig, PutMessageStatus, StorePaths,
};
use store_common::*;

fn rocks_config(root: &std::path::Path) -> MessageStoreConfig {
    let mut c = small_config(root);
    c.store_type = "defaultRocksDB".to_string();
    c.enable_lmq = true;
    c.enable_multi_dispatch = true;
    c
}

fn put(store: &MessageStore, topic: &str, qid: i32, i: usize, lmq: Option<&str>) {
    let mut m = msg(
        topic,
        qid,
        format!("body-{i}").as_bytes(),
        if i % 2 == 0 { "TagA" } else { "TagB" },
        &format!("k{i}"),
        &format!("U{i:04}"),
    );
    if let Some(l) = lmq {
        m.properties
            .push_str(&format!("INNER_MULTI_DISPATCH\u{1}{l}\u{2}"));
    }
    let r = store.put_message(&m).wait_blocking();
    assert_eq!(r.status, PutMessageStatus::PUT_OK);
}

fn bodies(store: &MessageStore, topic: &str, qid: i32, from: i64) -> Vec<(i64, String)> {
    let r = store.get_message(topic, qid, from, 1000, 1 << 24, None);
    if r.status != GetMessageStatus::FOUND {
        return Vec::new();
    }
    r.messages
        .iter()
        .zip(&r.queue_offsets)
        .map(|(b, qo)| {
            let Ok(Decoded::Record(rec)) = record::decode(b, true) else {
                panic!("not a record")
            };
            (*qo, String::from_utf8_lossy(rec.body).into_owned())
        })
        .collect()
}

#[test]
fn messages_dispatch_into_rocksdb_and_read_back_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let store = MessageStore::open(rocks_config(dir.path())).unwrap();
    for i in 0..40 {
        let lmq = (i % 4 == 0).then_some("%LMQ%$P$a,%LMQ%$P$b");
        put(&store, "T", (i % 2) as i32, i, lmq);
    }
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    // no file consume queue: the database lives in consumequeue/ itself
    let paths = StorePaths::new(dir.path(), None);
    assert!(paths.consume_queue_root().join("CURRENT").is_file());
    assert!(!paths.consume_queue_root().join("T").exists());
    let check = |store: &MessageStore| {
        assert_eq!(store.max_offset_in_queue("T", 0), 20);
        assert_eq!(store.max_offset_in_queue("T", 1), 20);
        assert_eq!(store.min_offset_in_queue("T", 0), 0);
        assert_eq!(store.max_offset_in_queue("%LMQ%$P$a", 0), 10);
        assert_eq!(store.lmq_count(), 2);
        let q1 = bodies(store, "T", 1, 0);
        assert_eq!(q1.len(), 20);
        assert_eq!(q1[3], (3, "body-7".to_string()));
        let a = bodies(store, "%LMQ%$P$b", 0, 4);
        let want: Vec<_> = (4..10).map(|k| (k, format!("body-{}", 4 * k))).collect();
        assert_eq!(a, want);
        let r = store.get_message("T", 0, 20, 32, 1 << 20, None);
        assert_eq!(r.status, GetMessageStatus::OFFSET_OVERFLOW_ONE);
        assert!(store.message_store_timestamp("T", 0, 5) > 0);
    };
    check(&store);
    // search by time: the message stored at a time is found from that time
    let t10 = store.message_store_timestamp("T", 0, 10);
    let found = store.offset_in_queue_by_time("T", 0, t10, BoundaryType::Lower);
    assert!(found <= 10 && store.message_store_timestamp("T", 0, found) == t10);
    store.shutdown();
    drop(store);

    let store = MessageStore::open(rocks_config(dir.path())).unwrap();
    check(&store);
    // new sends continue each queue where it ended
    put(&store, "T", 0, 40, Some("%LMQ%$P$a"));
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    assert_eq!(bodies(&store, "T", 0, 20), [(20, "body-40".to_string())]);
    assert_eq!(
        bodies(&store, "%LMQ%$P$a", 0, 10),
        [(10, "body-40".to_string())]
    );
    store.shutdown();
}

#[test]
fn a_lost_commit_log_tail_truncates_the_rocksdb_queues_and_the_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let store = MessageStore::open(rocks_config(dir.path())).unwrap();
    for i in 0..10 {
        put(&store, "T", 0, i, Some("%LMQ%x"));
    }
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    let keep_end = {
        let r = store.get_message("T", 0, 6, 1, 1 << 20, None);
        let Ok(Decoded::Record(rec)) = record::decode(&r.messages[0], true) else {
            panic!()
        };
        rec.phys_offset
    };
    store.shutdown();
    drop(store);
    // the last four records are lost (zeroed): recovery ends the log at message 6
    let paths = StorePaths::new(dir.path(), None);
    let f = paths.commit_log_dir().join("00000000000000000000");
    let mut bytes = std::fs::read(&f).unwrap();
    for b in &mut bytes[keep_end as usize..] {
        *b = 0;
    }
    std::fs::write(&f, &bytes).unwrap();
    std::fs::write(paths.abort(), b"1").unwrap();

    let store = MessageStore::open(rocks_config(dir.path())).unwrap();
    assert_eq!(store.max_offset_in_queue("T", 0), 6);
    assert_eq!(store.max_offset_in_queue("%LMQ%x", 0), 6);
    assert_eq!(bodies(&store, "T", 0, 0).len(), 6);
    put(&store, "T", 0, 99, Some("%LMQ%x"));
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    assert_eq!(bodies(&store, "T", 0, 6), [(6, "body-99".to_string())]);
    assert_eq!(bodies(&store, "%LMQ%x", 0, 6), [(6, "body-99".to_string())]);
    store.shutdown();
    drop(store);
    let db = RocksCqStore::open(&paths, false).unwrap();
    let max = db.max_phy_and_cq_offset("T", 0).unwrap().unwrap();
    assert_eq!((max.phy_offset, max.cq_offset), (keep_end, 6));
    let unit = db.get_unit("T", 0, 6).unwrap().unwrap();
    assert_eq!(db.checkpoint().unwrap(), keep_end + i64::from(unit.size));
}

#[test]
fn deleted_topics_stay_deleted_and_expired_units_leave_by_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let store = MessageStore::open(rocks_config(dir.path())).unwrap();
    // 64 KiB commit-log files: enough messages to fill a few
    for i in 0..1000 {
        put(&store, "Old", (i % 2) as i32, i, None);
    }
    put(&store, "Gone", 0, 0, Some("%LMQ%gone"));
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    assert_eq!(store.delete_topics(&["Gone", "%LMQ%gone"]).unwrap(), 2);
    assert_eq!(store.max_offset_in_queue("Gone", 0), 0);
    assert_eq!(store.lmq_count(), 0);
    // the oldest commit-log files go (forced, as under disk pressure): the mins follow
    let files_before = std::fs::read_dir(StorePaths::new(dir.path(), None).commit_log_dir())
        .unwrap()
        .count();
    assert!(files_before > 2, "{files_before} commit-log files");
    // read (and corrected) before the deletion: the deletion must make it stale
    assert_eq!(store.min_offset_in_queue("Old", 0), 0);
    let report = store.delete_expired_files_now(true);
    assert!(report.commit_log_files > 0, "{report:?}");
    let min0 = store.min_offset_in_queue("Old", 0);
    assert!(min0 > 0, "min offset did not move");
    let r = store.get_message("Old", 0, 0, 1, 1 << 20, None);
    assert_eq!(r.status, GetMessageStatus::OFFSET_TOO_SMALL);
    assert_eq!(r.next_begin_offset, min0);
    store.shutdown();
    drop(store);
    let store = MessageStore::open(rocks_config(dir.path())).unwrap();
    assert_eq!(store.max_offset_in_queue("Gone", 0), 0);
    assert!(!store.queue_exists("%LMQ%gone"));
    assert_eq!(store.min_offset_in_queue("Old", 0), min0);
    store.shutdown();
}

#[test]
fn a_store_whose_commit_log_is_gone_starts_empty_with_the_checkpoint_at_zero() {
    let dir = tempfile::tempdir().unwrap();
    let store = MessageStore::open(rocks_config(dir.path())).unwrap();
    for i in 0..5 {
        put(&store, "T", 0, i, Some("%LMQ%g"));
    }
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    store.shutdown();
    drop(store);
    let paths = StorePaths::new(dir.path(), None);
    std::fs::remove_dir_all(paths.commit_log_dir()).unwrap();
    let store = MessageStore::open(rocks_config(dir.path())).unwrap();
    assert_eq!(store.max_offset_in_queue("T", 0), 0);
    assert!(!store.queue_exists("%LMQ%g"));
    store.shutdown();
    drop(store);
    // what Java re-dispatches from: nothing dispatched yet in the new log
    let db = RocksCqStore::open(&paths, false).unwrap();
    assert_eq!(db.checkpoint().unwrap(), 0);
    drop(db);
    let store = MessageStore::open(rocks_config(dir.path())).unwrap();
    put(&store, "T", 0, 7, None);
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    assert_eq!(bodies(&store, "T", 0, 0), [(0, "body-7".to_string())]);
    store.shutdown();
    drop(store);
    let db = RocksCqStore::open(&paths, false).unwrap();
    let unit = db.get_unit("T", 0, 0).unwrap().unwrap();
    assert_eq!(unit.phy_offset, 0);
    assert_eq!(db.checkpoint().unwrap(), i64::from(unit.size));
}
