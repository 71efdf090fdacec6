//! A store directory written by the real Java broker (scripts/store-fixtures: RocketMQ 5.3.x, J01/J04/J07
//! scenarios, clean stop) must verify clean, open without truncation, serve every queue and key, keep its config
//! JSON readable, and accept appends that still verify.

mod store_common;

use std::path::Path;
use std::time::Duration;

use rmqd::store::commitlog::record::{self, Decoded};
use rmqd::store::config_files::{
    self, ConsumerOffsetWrapper, SubscriptionGroupWrapper, TopicConfigSerializeWrapper,
};
use rmqd::store::{tools, GetMessageStatus, MessageStore, MessageStoreConfig, PutMessageStatus};
use store_common::java_fixture::{unpack_from, CLEAN as FIXTURE, KILLED};

/// Unpacks the clean fixture into `dst`; None when the fixture has not been generated.
fn unpack(dst: &Path) -> Option<MessageStoreConfig> {
    unpack_from(FIXTURE, dst)
}

#[test]
fn java_written_store_verifies_opens_and_serves() {
    let dir = tempfile::tempdir().unwrap();
    let Some(cfg) = unpack(dir.path()) else {
        eprintln!("fixture {FIXTURE} missing; run scripts/store-fixtures");
        return;
    };
    let rep = tools::verify(&cfg, &mut |_, _, _| {}).unwrap();
    assert!(rep.is_ok(), "{:?}", rep.problems);
    assert!(
        rep.records > 0 && rep.cq_units > 0 && rep.index_entries > 0,
        "{rep:?}"
    );

    let topics: TopicConfigSerializeWrapper =
        config_files::load_typed(&dir.path().join("config/topics.json"))
            .unwrap()
            .unwrap();
    assert!(!topics.topic_config_table.is_empty());
    let _: Option<ConsumerOffsetWrapper> =
        config_files::load_typed(&dir.path().join("config/consumerOffset.json")).unwrap();
    let _: Option<SubscriptionGroupWrapper> =
        config_files::load_typed(&dir.path().join("config/subscriptionGroup.json")).unwrap();

    let store = MessageStore::open(cfg.clone()).unwrap();
    assert_eq!(
        store.max_phy_offset(),
        rep.commit_log_end,
        "recovery must not truncate Java's data"
    );
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    let mut checked = 0;
    let mut keyed = None;
    for entry in std::fs::read_dir(dir.path().join("consumequeue")).unwrap() {
        let topic = entry.unwrap().file_name().to_string_lossy().into_owned();
        for q in 0..16 {
            let max = store.max_offset_in_queue(&topic, q);
            let mut off = store.min_offset_in_queue(&topic, q);
            while off < max {
                let g = store.get_message(&topic, q, off, 32, 4 << 20, None);
                assert_eq!(g.status, GetMessageStatus::FOUND, "{topic}/{q}@{off}");
                for (b, qo) in g.messages.iter().zip(&g.queue_offsets) {
                    let Ok(Decoded::Record(r)) = record::decode(b, true) else {
                        panic!("{topic}/{q}@{qo}")
                    };
                    assert_eq!(
                        (r.topic_str(), r.queue_id, r.queue_offset),
                        (topic.as_str(), q, *qo)
                    );
                    if let Some(k) = rmqd::store::util::find_property(r.properties, "UNIQ_KEY") {
                        keyed.get_or_insert((
                            topic.clone(),
                            String::from_utf8_lossy(k).into_owned(),
                            r.phys_offset,
                        ));
                    }
                    checked += 1;
                }
                off = g.next_begin_offset;
            }
        }
    }
    assert_eq!(checked as u64, rep.cq_units);
    let (topic, key, phys) = keyed.expect("a message with UNIQ_KEY");
    assert!(store
        .query_message(&topic, &key, 32, 0, i64::MAX)
        .phy_offsets
        .contains(&phys));

    // Append on top of Java's data; the result still verifies.
    let born = "127.0.0.1:40000".parse().unwrap();
    let m = rmqd::store::MessageInput {
        topic: topic.clone(),
        queue_id: 0,
        flag: 0,
        sys_flag: 0,
        body: bytes::Bytes::from_static(b"from rmqd"),
        properties: "UNIQ_KEY\u{1}RMQD0001\u{2}WAIT\u{1}true\u{2}".into(),
        tags_code: 0,
        wait_store_msg_ok: true,
        born_timestamp: 1,
        born_host: born,
        store_host: "127.0.0.1:30911".parse().unwrap(),
        reconsume_times: 0,
        prepared_transaction_offset: 0,
    };
    let before = store.max_offset_in_queue(&topic, 0);
    let r = store.put_message(&m).wait_blocking();
    assert_eq!(r.status, PutMessageStatus::PUT_OK);
    assert_eq!(r.append.unwrap().logics_offset, before);
    store.shutdown();
    drop(store);
    let rep2 = tools::verify(&cfg, &mut |_, _, _| {}).unwrap();
    assert!(rep2.is_ok(), "{:?}", rep2.problems);
    assert_eq!(rep2.records, rep.records + 1);
}

#[test]
fn java_store_left_by_sigkill_recovers_abnormally_and_completely() {
    let dir = tempfile::tempdir().unwrap();
    let Some(cfg) = unpack_from(KILLED, dir.path()) else {
        eprintln!("fixture {KILLED} missing; run scripts/store-fixtures");
        return;
    };
    assert!(dir.path().join("abort").exists());
    let before = tools::verify(&cfg, &mut |_, _, _| {}).unwrap();
    let store = MessageStore::open(cfg.clone()).unwrap();
    assert_eq!(
        store.max_phy_offset(),
        before.commit_log_end,
        "no valid Java record may be cut"
    );
    assert!(store.wait_dispatched(Duration::from_secs(5)));
    store.shutdown();
    drop(store);
    assert!(!dir.path().join("abort").exists());
    let after = tools::verify(&cfg, &mut |_, _, _| {}).unwrap();
    assert!(after.is_ok(), "{:?}", after.problems);
    assert_eq!(after.records, before.records);
    assert_eq!(
        after.cq_units, after.records,
        "every record has its consume-queue unit"
    );
}
