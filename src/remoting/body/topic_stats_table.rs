//! GET_TOPIC_STATS_INFO (202) body `TopicStatsTable`, with `MessageQueue` objects as map keys.
//!
//! ```text
//! {"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:
//!   {"lastUpdateTimestamp":1700000000000,"maxOffset":5,"minOffset":0}},"topicPutTps":0.0}
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::fastjson::{self, mq_key_map};
use crate::common::topic::MessageQueue;

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TopicStatsTable {
    #[serde(with = "mq_key_map")]
    pub offset_table: BTreeMap<MessageQueue, TopicOffset>,
    pub topic_put_tps: f64,
}

/// `lastUpdateTimestamp` = store time of message `maxOffset - 1` (0 when empty).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TopicOffset {
    pub last_update_timestamp: i64,
    pub max_offset: i64,
    pub min_offset: i64,
}

fastjson::fastjson_body!(TopicStatsTable);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_fastjson_form() {
        let mut t = TopicStatsTable::default();
        t.offset_table.insert(
            MessageQueue::new("T", "b", 0),
            TopicOffset {
                last_update_timestamp: 1700000000000,
                max_offset: 5,
                min_offset: 0,
            },
        );
        let json = String::from_utf8(t.encode()).unwrap();
        assert_eq!(
            json,
            r#"{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"lastUpdateTimestamp":1700000000000,"maxOffset":5,"minOffset":0}},"topicPutTps":0.0}"#
        );
        assert_eq!(TopicStatsTable::decode(json.as_bytes()).unwrap(), t);
    }
}
