//! Writes an rmqd store for the Java broker to start on (used by scripts/store-fixtures, phase 2):
//! 2000 messages on topic `R01_<run id>` (4 queues) shaped like compat.Main's R01-SEND, topics.json with
//! the topic, and the acked ids file R01-VERIFY reads. Does nothing unless `RMQD_WRITE_STORE_FOR_JAVA`
//! (the store root) is set; also `RMQD_FIXTURE_STATE_DIR`, `RMQD_FIXTURE_RUN_ID`, `RMQD_FIXTURE_BROKER_CONF`.

use std::net::SocketAddr;

use rmqd::store::config_files::{self, DataVersion, TopicConfig, TopicConfigSerializeWrapper};
use rmqd::store::{MessageInput, MessageStore, MessageStoreConfig, PutMessageStatus};

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
            tags_code: 0,
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
