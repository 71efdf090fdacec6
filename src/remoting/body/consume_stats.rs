//! GET_CONSUME_STATS (208) body `ConsumeStats`, with `MessageQueue` objects as map keys.
//!
//! ```text
//! {"consumeTps":0.0,"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:
//!   {"brokerOffset":120,"consumerOffset":118,"lastTimestamp":1700000123456,"pullOffset":120}}}
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::fastjson::{self, mq_key_map};
use crate::common::topic::MessageQueue;

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ConsumeStats {
    pub consume_tps: f64,
    #[serde(with = "mq_key_map")]
    pub offset_table: BTreeMap<MessageQueue, OffsetWrapper>,
}

/// Per-queue progress: `brokerOffset` = queue max, `consumerOffset` = committed,
/// `pullOffset` = max(committed, last pull's next offset), `lastTimestamp` = store time of
/// message `consumerOffset - 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct OffsetWrapper {
    pub broker_offset: i64,
    pub consumer_offset: i64,
    pub last_timestamp: i64,
    pub pull_offset: i64,
}

// `encode` writes bare `MessageQueue` keys (what mqadmin and Go expect).
fastjson::fastjson_body!(ConsumeStats);

#[cfg(test)]
mod tests {
    use super::*;

    const JAVA: &str = r#"{"consumeTps":0.0,"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"TopicTest"}:{"brokerOffset":120,"consumerOffset":118,"lastTimestamp":1700000123456,"pullOffset":120},{"brokerName":"broker-a","queueId":1,"topic":"TopicTest"}:{"brokerOffset":97,"consumerOffset":97,"lastTimestamp":1700000120000,"pullOffset":97}}}"#;

    #[test]
    fn reference_body_round_trips_byte_for_byte() {
        let cs = ConsumeStats::decode(JAVA.as_bytes()).unwrap();
        let q1 = &cs.offset_table[&MessageQueue::new("TopicTest", "broker-a", 1)];
        assert_eq!(q1.broker_offset, 97);
        assert_eq!(String::from_utf8(cs.encode()).unwrap(), JAVA);
    }

    #[test]
    fn bad_keys_are_errors() {
        assert!(ConsumeStats::decode(br#"{"offsetTable":{{"queueId":"x"}:{}}}"#).is_err());
        assert!(ConsumeStats::decode(br#"{"offsetTable":{"nope":{}}}"#).is_err());
    }
}
