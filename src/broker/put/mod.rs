//! The one home of the messages the broker puts (Java builds a `MessageExtBrokerInner` for each):
//! the checks before a client's send (`check.rs`), its send, batch and reply (`client.rs`), and
//! the re-puts of stored messages — send-back to retry or DLQ, delay levels and timers coming
//! due, transaction half, commit, op and check records (`stored.rs`). Every [`MessageInput`] is finished here, once its properties are final,
//! with what the store is told about them (TAGS hash, WAIT).

pub mod check;
pub mod client;
pub mod stored;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};

use bytes::Bytes;

use crate::common::message::{PROPERTY_TAGS, PROPERTY_WAIT_STORE_MSG_OK};
use crate::common::properties::Properties;
use crate::common::tag::tag_hash;
use crate::store::message::{sysflag, MessageInput, RecordView};
use crate::store::util::find_property;

/// A message's fields besides its properties.
#[derive(Debug, Clone)]
pub struct Draft {
    pub topic: String,
    pub queue_id: i32,
    pub flag: i32,
    /// SYSFLAG; the store sets the host-family bits from the addresses.
    pub sys_flag: i32,
    pub body: Bytes,
    pub born_timestamp: i64,
    pub born_host: SocketAddr,
    pub store_host: SocketAddr,
    pub reconsume_times: i32,
    pub prepared_transaction_offset: i64,
}

impl Draft {
    /// A stored record as a new message (same body, flag, sysflag, born fields, reconsume times
    /// and prepared offset), to `store_host`; the caller changes what the re-put changes.
    pub fn from_record(rec: &RecordView<'_>, store_host: SocketAddr) -> Self {
        Self {
            topic: rec.topic_str().to_string(),
            queue_id: rec.queue_id,
            flag: rec.flag,
            sys_flag: rec.sys_flag & !(sysflag::BORNHOST_V6 | sysflag::STOREHOST_V6),
            body: Bytes::copy_from_slice(rec.body),
            born_timestamp: rec.born_timestamp,
            born_host: rec.born_host,
            store_host,
            reconsume_times: rec.reconsume_times,
            prepared_transaction_offset: rec.prepared_transaction_offset,
        }
    }

    /// The input with `props` encoded, the TAGS hash and WAIT read from the decoded map.
    pub fn with_properties(self, props: &Properties) -> MessageInput {
        let tags_code = props.get(PROPERTY_TAGS).map_or(0, tag_hash);
        let wait = props.get(PROPERTY_WAIT_STORE_MSG_OK) != Some("false");
        self.finish(props.encode(), tags_code, wait)
    }

    /// The input with `properties` stored exactly as given (as sent, or as stored), scanned once
    /// for TAGS and WAIT.
    pub fn with_raw_properties(self, properties: String) -> MessageInput {
        let raw = properties.as_bytes();
        let tags_code =
            find_property(raw, PROPERTY_TAGS).map_or(0, |t| tag_hash(&String::from_utf8_lossy(t)));
        let wait = find_property(raw, PROPERTY_WAIT_STORE_MSG_OK) != Some(b"false");
        self.finish(properties, tags_code, wait)
    }

    fn finish(self, properties: String, tags_code: i64, wait_store_msg_ok: bool) -> MessageInput {
        MessageInput {
            topic: self.topic,
            queue_id: self.queue_id,
            flag: self.flag,
            sys_flag: self.sys_flag,
            body: self.body,
            properties,
            tags_code,
            wait_store_msg_ok,
            born_timestamp: self.born_timestamp,
            born_host: self.born_host,
            store_host: self.store_host,
            reconsume_times: self.reconsume_times,
            prepared_transaction_offset: self.prepared_transaction_offset,
        }
    }
}

/// The next queue of `queue_nums`, round robin (a send with queueId < 0, a send-back).
pub fn random_queue(queue_nums: i32) -> i32 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = queue_nums.max(1) as u32;
    (NEXT.fetch_add(1, Ordering::Relaxed) % n) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draft() -> Draft {
        let host: SocketAddr = "127.0.0.1:10911".parse().unwrap();
        Draft {
            topic: "T".into(),
            queue_id: 0,
            flag: 0,
            sys_flag: 0,
            body: Bytes::new(),
            born_timestamp: 0,
            born_host: host,
            store_host: host,
            reconsume_times: 0,
            prepared_transaction_offset: 0,
        }
    }

    #[test]
    fn the_store_is_told_the_tags_hash_and_the_wait_flag_either_way() {
        let raw = "TAGS\u{1}TagA\u{2}WAIT\u{1}false\u{2}";
        let a = draft().with_raw_properties(raw.to_string());
        let b = draft().with_properties(&Properties::decode(raw));
        for m in [&a, &b] {
            assert_eq!(m.tags_code, tag_hash("TagA"));
            assert!(!m.wait_store_msg_ok);
            assert_eq!(m.properties, raw);
        }
        let m = draft().with_raw_properties("KEYS\u{1}k".to_string());
        assert_eq!((m.tags_code, m.wait_store_msg_ok), (0, true));
        assert_eq!(m.properties, "KEYS\u{1}k", "raw properties stay as given");
    }
}
