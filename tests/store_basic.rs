//! Put / get / query / reopen through the public `MessageStore` API.

mod store_common;

use std::time::Duration;

use rmqd::store::commitlog::record::{self, Decoded};
use rmqd::store::{
    BoundaryType, FlushDiskType, GetMessageStatus, MessageFilter, MessageStore, PutMessageStatus,
};
use store_common::*;

struct TagFilter(i64);
impl MessageFilter for TagFilter {
    fn is_matched_by_consume_queue(&self, tags_code: i64) -> bool {
        tags_code == self.0
    }
    fn is_matched_by_commit_log(&self, _record: &[u8]) -> bool {
        true
    }
}

#[test]
fn put_get_query_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = small_config(dir.path());
    let store = MessageStore::open(cfg.clone()).unwrap();
    let mut offsets = Vec::new();
    for i in 0..300 {
        let body = format!("body-{i}-{}", "x".repeat(i % 50 + 200));
        let tag = if i % 2 == 0 { "even" } else { "odd" };
        let m = msg(
            "TopicA",
            (i % 2) as i32,
            body.as_bytes(),
            tag,
            &format!("k{i} shared"),
            &format!("U{i:04}"),
        );
        let r = store.put_message(&m).wait_blocking();
        assert_eq!(r.status, PutMessageStatus::PUT_OK);
        let a = r.append.unwrap();
        assert_eq!(a.logics_offset, (i / 2) as i64);
        assert_eq!(a.msg_id.len(), 32);
        offsets.push(a.wrote_offset);
    }
    // 300 records of ~200 bytes cross several 64 KiB files
    assert!(store.max_phy_offset() > 64 * 1024);
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    assert_eq!(store.max_offset_in_queue("TopicA", 0), 150);
    assert_eq!(store.min_offset_in_queue("TopicA", 0), 0);

    let r = store.get_message("TopicA", 1, 0, 10, 1 << 20, None);
    assert_eq!(r.status, GetMessageStatus::FOUND);
    assert_eq!(r.messages.len(), 10);
    assert_eq!(r.next_begin_offset, 10);
    let Ok(Decoded::Record(rec)) = record::decode(&r.messages[3], true) else {
        panic!()
    };
    assert_eq!(rec.queue_offset, 3);
    assert_eq!(rec.phys_offset, offsets[7]);
    assert!(rec.body.starts_with(b"body-7-"));

    assert_eq!(
        store
            .get_message("TopicA", 1, 150, 10, 1 << 20, None)
            .status,
        GetMessageStatus::OFFSET_OVERFLOW_ONE
    );
    let bad = store.get_message("TopicA", 1, 170, 10, 1 << 20, None);
    assert_eq!(
        (bad.status, bad.next_begin_offset),
        (GetMessageStatus::OFFSET_OVERFLOW_BADLY, 150)
    );
    // a queue never written reads as Java's freshly created one
    assert_eq!(
        store.get_message("Nope", 0, 0, 10, 1 << 20, None).status,
        GetMessageStatus::NO_MESSAGE_IN_QUEUE
    );
    let f = TagFilter(rmqd::store::util::java_hash("nomatch") as i64);
    let nm = store.get_message("TopicA", 0, 0, 10, 1 << 20, Some(&f));
    assert_eq!(nm.status, GetMessageStatus::NO_MATCHED_MESSAGE);
    assert!(nm.next_begin_offset > 0);

    let q = store.query_message("TopicA", "U0042", 10, 0, i64::MAX);
    assert_eq!(q.phy_offsets, vec![offsets[42]]);
    let q = store.query_message("TopicA", "shared", 64, 0, i64::MAX);
    assert_eq!(q.messages.len(), 64);
    let looked = store.lookup_message_by_offset(offsets[5]).unwrap();
    let Ok(Decoded::Record(rec)) = record::decode(&looked, true) else {
        panic!()
    };
    assert_eq!(rec.phys_offset, offsets[5]);
    assert!(store.lookup_message_by_offset(offsets[5] + 1).is_none());

    let ts = store.message_store_timestamp("TopicA", 0, 10);
    assert!(ts > 0);
    let lo = store.offset_in_queue_by_time("TopicA", 0, ts, BoundaryType::Lower);
    assert!(lo <= 10);
    assert_eq!(
        store.offset_in_queue_by_time("TopicA", 0, i64::MAX, BoundaryType::Lower),
        150
    );
    assert_eq!(store.dispatch_behind_bytes(), 0);
    let max_phy = store.max_phy_offset();
    store.shutdown();
    assert!(!dir.path().join("abort").exists());
    drop(store);

    let store = MessageStore::open(cfg).unwrap();
    assert_eq!(store.max_phy_offset(), max_phy);
    assert_eq!(store.max_offset_in_queue("TopicA", 0), 150);
    let r = store
        .put_message(&msg("TopicA", 0, b"after", "even", "k", "U9999"))
        .wait_blocking();
    assert_eq!(r.append.unwrap().logics_offset, 150);
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    assert_eq!(
        store
            .query_message("TopicA", "U0042", 10, 0, i64::MAX)
            .phy_offsets,
        vec![offsets[42]]
    );
}

#[test]
fn second_open_is_refused_while_locked() {
    let dir = tempfile::tempdir().unwrap();
    let store = MessageStore::open(small_config(dir.path())).unwrap();
    let err = MessageStore::open(small_config(dir.path())).err().unwrap();
    assert!(
        err.to_string().contains("locked by another broker process"),
        "{err}"
    );
    drop(store);
    MessageStore::open(small_config(dir.path())).unwrap();
}

#[test]
fn sync_flush_group_commit_many_writers() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = small_config(dir.path());
    cfg.flush_disk_type = FlushDiskType::SyncFlush;
    cfg.mapped_file_size_commit_log = 1 << 20;
    let store = std::sync::Arc::new(MessageStore::open(cfg).unwrap());
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let s = store.clone();
            std::thread::spawn(move || {
                for i in 0..50 {
                    let m = msg("Sync", t, b"payload", "t", "k", &format!("U{t}-{i}"));
                    assert_eq!(
                        s.put_message(&m).wait_blocking().status,
                        PutMessageStatus::PUT_OK
                    );
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let info = store.runtime_info();
    assert!(info.group_commit_flushes <= info.group_commit_requests);
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    assert_eq!(store.max_offset_in_queue("Sync", 3), 50);
}

#[test]
fn batch_is_one_record_per_message() {
    let dir = tempfile::tempdir().unwrap();
    let store = MessageStore::open(small_config(dir.path())).unwrap();
    let mut body = Vec::new();
    for i in 0..5u8 {
        let b = [b'a' + i; 3];
        let p = b"KEYS\x01bk\x02";
        let total = 20 + b.len() + 2 + p.len();
        body.extend_from_slice(&(total as i32).to_be_bytes());
        body.extend_from_slice(&[0; 8]);
        body.extend_from_slice(&(i as i32).to_be_bytes());
        body.extend_from_slice(&(b.len() as i32).to_be_bytes());
        body.extend_from_slice(&b);
        body.extend_from_slice(&(p.len() as i16).to_be_bytes());
        body.extend_from_slice(p);
    }
    let m = msg("B", 0, b"", "", "", "");
    let batch = rmqd::store::MessageBatchInput {
        topic: "B".into(),
        queue_id: 0,
        sys_flag: 0,
        body: body.into(),
        batch_properties: "CLUSTER\u{1}DefaultCluster\u{2}".into(),
        born_timestamp: m.born_timestamp,
        born_host: m.born_host,
        store_host: m.store_host,
        reconsume_times: 0,
    };
    let r = store.put_messages(&batch).wait_blocking();
    let a = r.append.unwrap();
    assert_eq!((a.msg_num, a.logics_offset), (5, 0));
    assert_eq!(a.msg_id.split(',').count(), 5);
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    let g = store.get_message("B", 0, 0, 32, 1 << 20, None);
    assert_eq!(g.messages.len(), 5);
    let Ok(Decoded::Record(rec)) = record::decode(&g.messages[4], true) else {
        panic!()
    };
    assert_eq!((rec.flag, rec.queue_offset, rec.body), (4, 4, &b"eee"[..]));
    assert_eq!(
        rec.properties,
        b"KEYS\x01bk\x02CLUSTER\x01DefaultCluster\x02"
    );
    assert_eq!(
        store
            .query_message("B", "bk", 32, 0, i64::MAX)
            .messages
            .len(),
        5
    );
}

#[test]
fn sync_flush_handle_is_awaitable_from_tokio() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = small_config(dir.path());
    cfg.flush_disk_type = FlushDiskType::SyncFlush;
    let store = std::sync::Arc::new(MessageStore::open(cfg).unwrap());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let statuses = rt.block_on(async {
        let mut tasks = Vec::new();
        for i in 0..32 {
            let s = store.clone();
            tasks.push(tokio::spawn(async move {
                let h = s.put_message(&msg("Async", 0, b"x", "t", "k", &format!("A{i}")));
                assert!(h.needs_flush_wait());
                h.wait().await.status
            }));
        }
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.unwrap());
        }
        out
    });
    assert!(statuses.iter().all(|s| *s == PutMessageStatus::PUT_OK));
    // WAIT=false does not wait
    let mut m = msg("Async", 0, b"x", "t", "k", "nowait");
    m.properties = "WAIT\u{1}false\u{2}".into();
    (m.tags_code, m.wait_store_msg_ok) = (0, false);
    assert!(!store.put_message(&m).needs_flush_wait());
}

/// Under ASYNC_FLUSH a put dispatches its own record when no one else is dispatching, so the
/// message can be read from its consume queue as soon as the put returns, with no wait for the
/// dispatch thread. The first message of a queue (it creates the queue's file) is left to the
/// dispatch thread; the dispatch thread may also rarely be mid-pass and take a record itself,
/// hence the margin.
#[test]
fn a_put_is_readable_from_its_queue_as_soon_as_it_returns() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = small_config(dir.path());
    cfg.mapped_file_size_consume_queue = 20 * 1000;
    let store = MessageStore::open(cfg).unwrap();
    let put = |i: i64| {
        let m = msg("Inline", 0, b"body", "t", "k", &format!("U{i:04}"));
        assert_eq!(
            store.put_message(&m).wait_blocking().status,
            PutMessageStatus::PUT_OK
        );
    };
    put(0);
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    let mut at_once = 0;
    for i in 1..200i64 {
        put(i);
        let got = store.get_message("Inline", 0, i, 1, 1 << 20, None);
        if got.status == GetMessageStatus::FOUND {
            at_once += 1;
        }
    }
    assert!(
        at_once >= 190,
        "only {at_once} of 199 puts readable at once"
    );
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    let all = store.get_message("Inline", 0, 0, 200, 1 << 20, None);
    assert_eq!(all.status, GetMessageStatus::FOUND);
    assert_eq!(all.max_offset, 200);
}

/// SYNC_FLUSH with concurrent putters rolling small commit-log files: a roll (write lock on the
/// file list) while the group commit flushes must not deadlock. `flush_all` held a read guard
/// through its loop and read again inside; a waiting roll then parked the nested read for ever.
#[test]
fn sync_flush_rolls_under_concurrent_puts_without_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = small_config(dir.path());
    cfg.flush_disk_type = FlushDiskType::SyncFlush;
    let store = std::sync::Arc::new(MessageStore::open(cfg).unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    for t in 0..4 {
        let (store, tx) = (store.clone(), tx.clone());
        std::thread::spawn(move || {
            for i in 0..500 {
                let body = format!("{t}-{i}-{}", "x".repeat(1000));
                let m = msg("Roll", t, body.as_bytes(), "t", "k", &format!("U{t}-{i}"));
                let r = store.put_message(&m).wait_blocking();
                assert_eq!(r.status, PutMessageStatus::PUT_OK);
            }
            tx.send(()).unwrap();
        });
    }
    drop(tx);
    for _ in 0..4 {
        rx.recv_timeout(Duration::from_secs(30))
            .expect("puts stopped: the store deadlocked on a commit-log roll");
    }
    store.shutdown();
}

/// An index file that cannot be created (here `index` is no longer a directory) costs the
/// records their index entries, not their delivery: dispatch goes on, every record is in its
/// queue and readable, and the records indexed before stay queryable (Java's
/// `CommitLogDispatcherBuildIndex` logs and goes on as well).
#[test]
fn records_whose_index_file_cannot_be_created_are_still_dispatched_and_readable() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = small_config(dir.path());
    let entries = cfg.max_index_num as usize;
    let store = MessageStore::open(cfg).unwrap();
    let put = |i: usize| {
        let m = msg(
            "IX",
            0,
            format!("ix-{i}").as_bytes(),
            "t",
            &format!("k{i}"),
            &format!("U{i:05}"),
        );
        let r = store.put_message(&m).wait_blocking();
        assert_eq!(r.status, PutMessageStatus::PUT_OK);
    };
    // two keys per record (UNIQ_KEY and one KEYS word): a quarter of the first file
    let before = entries / 8;
    (0..before).for_each(put);
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    assert_eq!(
        store
            .query_message("IX", "k3", 4, 0, i64::MAX)
            .phy_offsets
            .len(),
        1
    );
    let index = dir.path().join("index");
    let aside = dir.path().join("index.aside");
    std::fs::rename(&index, &aside).unwrap();
    std::fs::write(&index, b"not a directory").unwrap();
    // enough keys to fill the open file (mapped, still writable) and need the next one
    let total = before + entries;
    (before..total).for_each(put);
    assert!(
        store.wait_dispatched(Duration::from_secs(10)),
        "dispatch stalled on the index"
    );
    assert_eq!(store.max_offset_in_queue("IX", 0), total as i64);
    let mut read = 0;
    while read < total {
        let r = store.get_message("IX", 0, read as i64, 32, 1 << 20, None);
        assert_eq!(r.status, GetMessageStatus::FOUND, "at {read}");
        for (n, m) in r.messages.iter().enumerate() {
            let Ok(Decoded::Record(rec)) = record::decode(m, true) else {
                panic!("record at {read}")
            };
            assert_eq!(rec.body, format!("ix-{}", read + n).as_bytes());
        }
        read += r.messages.len();
    }
    assert_eq!(
        store
            .query_message("IX", "k3", 4, 0, i64::MAX)
            .phy_offsets
            .len(),
        1
    );
    let last = format!("k{}", total - 1);
    assert!(
        store
            .query_message("IX", &last, 4, 0, i64::MAX)
            .phy_offsets
            .is_empty(),
        "a record past the failed index file was indexed"
    );
}
