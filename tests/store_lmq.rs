//! LMQ through the public `MessageStore` API: offsets assigned at put, extra consume-queue units
//! at dispatch, continuity across a restart and a kill.

mod store_common;

use std::time::Duration;

use rmqd::common::properties::Properties;
use rmqd::store::commitlog::record::{self, Decoded};
use rmqd::store::{GetMessageStatus, MessageStore, MessageStoreConfig, PutMessageStatus};
use store_common::*;

fn lmq_config(root: &std::path::Path) -> MessageStoreConfig {
    let mut c = small_config(root);
    c.enable_lmq = true;
    c.enable_multi_dispatch = true;
    c
}

fn lmq_msg(i: usize, dispatch: &str) -> rmqd::store::MessageInput {
    let mut m = msg(
        "Parent",
        (i % 2) as i32,
        format!("body-{i}").as_bytes(),
        "tag",
        &format!("k{i}"),
        &format!("U{i:04}"),
    );
    m.properties
        .push_str(&format!("INNER_MULTI_DISPATCH\u{1}{dispatch}\u{2}"));
    m
}

/// `(queue offset, INNER_MULTI_QUEUE_OFFSET, body)` of every message of an LMQ, read back.
fn read_lmq(store: &MessageStore, lmq: &str) -> Vec<(i64, String, String)> {
    let r = store.get_message(lmq, 0, 0, 100, 1 << 20, None);
    assert_eq!(r.status, GetMessageStatus::FOUND, "{lmq}");
    r.messages
        .iter()
        .map(|b| {
            let Ok(Decoded::Record(rec)) = record::decode(b, true) else {
                panic!("record")
            };
            let p = Properties::decode_bytes(rec.properties);
            (
                rec.queue_offset,
                p.get("INNER_MULTI_QUEUE_OFFSET").unwrap_or("").to_string(),
                String::from_utf8_lossy(rec.body).into_owned(),
            )
        })
        .collect()
}

#[test]
fn lmq_offsets_are_assigned_at_put_and_dispatched_into_lmq_queues() {
    let dir = tempfile::tempdir().unwrap();
    let store = MessageStore::open(lmq_config(dir.path())).unwrap();
    // a: messages 0..6; b: the even ones; "plain" is no LMQ: no offset, no queue of its own
    // under enableLmq (it gets the record's queue id and no value, so nothing is dispatched for
    // the message that ends with it)
    let mut want_offsets = Vec::new();
    for i in 0..6 {
        let d = if i % 2 == 0 {
            "%LMQ%a,%LMQ%b"
        } else {
            "%LMQ%a"
        };
        let r = store.put_message(&lmq_msg(i, d)).wait_blocking();
        assert_eq!(r.status, PutMessageStatus::PUT_OK);
        want_offsets.push(if i % 2 == 0 {
            format!("{},{}", i, i / 2)
        } else {
            format!("{i}")
        });
    }
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    let a = read_lmq(&store, "%LMQ%a");
    assert_eq!(a.len(), 6);
    for (i, (qo, offs, body)) in a.iter().enumerate() {
        assert_eq!(body, &format!("body-{i}"));
        assert_eq!(offs, &want_offsets[i]);
        // the record keeps the parent's queue offset
        assert_eq!(*qo, (i / 2) as i64);
    }
    let b = read_lmq(&store, "%LMQ%b");
    assert_eq!(
        b.iter().map(|x| x.2.as_str()).collect::<Vec<_>>(),
        ["body-0", "body-2", "body-4"]
    );
    assert_eq!(store.max_offset_in_queue("%LMQ%a", 0), 6);
    assert_eq!(store.max_offset_in_queue("%LMQ%b", 0), 3);
    // the parent topic has every message once
    assert_eq!(
        store.max_offset_in_queue("Parent", 0) + store.max_offset_in_queue("Parent", 1),
        6
    );
    // unit bytes: same commit-log offset, size and tagsCode as the parent's unit
    let parent = store.get_message("Parent", 0, 0, 1, 1 << 20, None);
    let lmq = store.get_message("%LMQ%a", 0, 0, 1, 1 << 20, None);
    assert_eq!(parent.messages[0], lmq.messages[0]);

    // restart: offsets continue from the consume queues
    store.shutdown();
    drop(store);
    let store = MessageStore::open(lmq_config(dir.path())).unwrap();
    let r = store
        .put_message(&lmq_msg(6, "%LMQ%b,%LMQ%c"))
        .wait_blocking();
    assert_eq!(r.status, PutMessageStatus::PUT_OK);
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    let b = read_lmq(&store, "%LMQ%b");
    assert_eq!(b.len(), 4);
    assert_eq!(b[3].1, "3,0");
    assert_eq!(read_lmq(&store, "%LMQ%c").len(), 1);
}

#[test]
fn without_enable_lmq_the_property_is_stored_as_sent() {
    let dir = tempfile::tempdir().unwrap();
    let store = MessageStore::open(small_config(dir.path())).unwrap();
    let r = store.put_message(&lmq_msg(0, "%LMQ%a")).wait_blocking();
    assert_eq!(r.status, PutMessageStatus::PUT_OK);
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    assert_eq!(store.max_offset_in_queue("%LMQ%a", 0), 0);
    let got = store.get_message("Parent", 0, 0, 1, 1 << 20, None);
    let Ok(Decoded::Record(rec)) = record::decode(&got.messages[0], true) else {
        panic!()
    };
    assert_eq!(rec.properties, lmq_msg(0, "%LMQ%a").properties.as_bytes());
}

#[test]
fn retry_and_system_topics_are_not_multi_dispatched() {
    let dir = tempfile::tempdir().unwrap();
    let store = MessageStore::open(lmq_config(dir.path())).unwrap();
    for topic in ["%RETRY%g", "rmq_sys_wheel_timer", "SCHEDULE_TOPIC_XXXX"] {
        let mut m = lmq_msg(0, "%LMQ%a");
        m.topic = topic.to_string();
        assert_eq!(
            store.put_message(&m).wait_blocking().status,
            PutMessageStatus::PUT_OK
        );
    }
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    assert_eq!(store.max_offset_in_queue("%LMQ%a", 0), 0);
}

#[test]
fn lmq_units_lost_in_a_crash_come_back_from_the_commit_log() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = lmq_config(dir.path());
    {
        let store = MessageStore::open(cfg.clone()).unwrap();
        for i in 0..20 {
            let r = store.put_message(&lmq_msg(i, "%LMQ%x")).wait_blocking();
            assert_eq!(r.status, PutMessageStatus::PUT_OK);
        }
        assert!(store.wait_dispatched(Duration::from_secs(5)));
        // an unclean stop: the abort file stays
        std::mem::forget(store);
    }
    // the LMQ consume queue lost its last 5 units (never written back before the crash)
    let cq = dir
        .path()
        .join("consumequeue/%LMQ%x/0/00000000000000000000");
    let mut bytes = std::fs::read(&cq).unwrap();
    assert!(bytes[15 * 20..20 * 20].iter().any(|&b| b != 0));
    bytes[15 * 20..].fill(0);
    std::fs::write(&cq, &bytes).unwrap();
    let _ = std::fs::remove_file(dir.path().join("lock"));
    let store = MessageStore::open(cfg).unwrap();
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    assert_eq!(store.max_offset_in_queue("%LMQ%x", 0), 20);
    // and the next put continues at 20
    let r = store.put_message(&lmq_msg(20, "%LMQ%x")).wait_blocking();
    assert_eq!(r.status, PutMessageStatus::PUT_OK);
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    let x = read_lmq(&store, "%LMQ%x");
    assert_eq!(x.len(), 21);
    assert_eq!(x[20].1, "20");
    assert_eq!(x[20].2, "body-20");
}

/// An LMQ whose consume-queue file cannot be created (here a plain file stands where its
/// directory goes; in production: too many open files or mappings) holds dispatch up for at
/// most 30 s, as Java's `doDispatchLmqQueue` (30 tries, then the unit is dropped): the other
/// LMQ of the record, the parent and the next records are dispatched; the unwritable one
/// stays empty.
#[test]
fn an_lmq_unit_that_cannot_be_written_is_dropped_after_30_s_not_retried_forever() {
    let dir = tempfile::tempdir().unwrap();
    let store = MessageStore::open(lmq_config(dir.path())).unwrap();
    std::fs::create_dir_all(dir.path().join("consumequeue")).unwrap();
    std::fs::write(dir.path().join("consumequeue").join("%LMQ%bad"), b"x").unwrap();
    let r = store
        .put_message(&lmq_msg(0, "%LMQ%good,%LMQ%bad"))
        .wait_blocking();
    assert_eq!(r.status, PutMessageStatus::PUT_OK);
    let r = store.put_message(&lmq_msg(1, "%LMQ%good")).wait_blocking();
    assert_eq!(r.status, PutMessageStatus::PUT_OK);
    let t0 = std::time::Instant::now();
    assert!(
        store.wait_dispatched(Duration::from_secs(60)),
        "dispatch still stuck after 60 s"
    );
    assert!(
        t0.elapsed() >= Duration::from_secs(25),
        "{:?}",
        t0.elapsed()
    );
    let good: Vec<String> = read_lmq(&store, "%LMQ%good")
        .into_iter()
        .map(|(_, _, body)| body)
        .collect();
    assert_eq!(good, ["body-0", "body-1"]);
    assert_eq!(store.max_offset_in_queue("%LMQ%bad", 0), 0);
    assert_eq!(store.max_offset_in_queue("Parent", 0), 1);
    assert_eq!(store.max_offset_in_queue("Parent", 1), 1);
}
