//! Helpers shared by the store integration tests.
#![allow(dead_code)]

pub mod java_fixture;
pub mod twin;

use std::net::SocketAddr;
use std::path::Path;

use bytes::Bytes;
use rmqd::store::{MessageInput, MessageStoreConfig};

pub fn small_config(root: &Path) -> MessageStoreConfig {
    let mut c = MessageStoreConfig::with_root(root);
    c.mapped_file_size_commit_log = 64 * 1024;
    c.mapped_file_size_consume_queue = 20 * 100;
    c.max_hash_slot_num = 64;
    c.max_index_num = 400;
    c.flush_interval_commit_log = 10;
    c.flush_interval_consume_queue = 10;
    c
}

pub fn props(tag: &str, keys: &str, uniq: &str) -> String {
    format!("TAGS\u{1}{tag}\u{2}KEYS\u{1}{keys}\u{2}UNIQ_KEY\u{1}{uniq}\u{2}WAIT\u{1}true\u{2}")
}

pub fn msg(topic: &str, qid: i32, body: &[u8], tag: &str, keys: &str, uniq: &str) -> MessageInput {
    let born: SocketAddr = "192.168.1.10:54321".parse().unwrap();
    let store: SocketAddr = "192.168.1.20:10911".parse().unwrap();
    MessageInput {
        topic: topic.to_string(),
        queue_id: qid,
        flag: 0,
        sys_flag: 0,
        body: Bytes::copy_from_slice(body),
        properties: props(tag, keys, uniq),
        tags_code: rmqd::store::util::java_hash(tag) as i64,
        wait_store_msg_ok: true,
        born_timestamp: 1_726_000_000_000,
        born_host: born,
        store_host: store,
        reconsume_times: 0,
        prepared_transaction_offset: 0,
    }
}
