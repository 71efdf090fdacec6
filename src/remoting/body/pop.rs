//! Bodies of the POP family: QUERY_ASSIGNMENT (400), SET_MESSAGE_REQUEST_MODE (401) and
//! BATCH_ACK_MESSAGE (200151).
//!
//! ```text
//! QueryAssignmentRequestBody  {"clientId":"c","consumerGroup":"G","messageModel":"CLUSTERING","strategyName":"AVG","topic":"T"}
//! QueryAssignmentResponseBody {"messageQueueAssignments":[{"messageQueue":{"brokerName":"b","queueId":-1,"topic":"T"},"mode":"POP"}]}
//! SetMessageRequestModeRequestBody {"consumerGroup":"G","mode":"POP","popShareQueueNum":0,"topic":"T"}
//! BatchAckMessageRequestBody  {"acks":[{"b":"BQ==","c":"G","it":60000,"pt":1700000000000,"q":1,"r":"0","rq":3,"so":5,"t":"T"}],"brokerName":"b"}
//! ```
//! `b` is a `java.util.BitSet` as fastjson writes a byte array: Base64 of `toByteArray()` (bit
//! `i` is bit `i % 8` of byte `i / 8`); bit `i` acks queue offset `so + i`.

use serde::{Deserialize, Deserializer, Serialize};

use super::fastjson;
use crate::common::topic::MessageQueue;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct QueryAssignmentRequestBody {
    pub client_id: String,
    pub consumer_group: String,
    pub message_model: String,
    pub strategy_name: String,
    pub topic: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct MessageQueueAssignment {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attachments: Option<std::collections::BTreeMap<String, String>>,
    pub message_queue: MessageQueue,
    pub mode: String,
}

/// `messageQueueAssignments` absent (null) tells the client to keep what it has.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct QueryAssignmentResponseBody {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_queue_assignments: Option<Vec<MessageQueueAssignment>>,
}

/// One (topic, group) entry of `messageRequestMode.json`, and the 401 request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SetMessageRequestModeRequestBody {
    pub consumer_group: String,
    pub mode: String,
    pub pop_share_queue_num: i32,
    pub topic: String,
}

impl Default for SetMessageRequestModeRequestBody {
    fn default() -> Self {
        Self {
            consumer_group: String::new(),
            mode: "PULL".into(),
            pop_share_queue_num: 0,
            topic: String::new(),
        }
    }
}

/// Most offsets one `BatchAck` entry is read for.
pub const MAX_BATCH_ACK_BITS: usize = 65_536;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct BatchAck {
    #[serde(rename = "b", alias = "bitSet", deserialize_with = "bit_set")]
    pub bit_set: Vec<u8>,
    #[serde(rename = "c", alias = "consumerGroup")]
    pub consumer_group: String,
    #[serde(rename = "it", alias = "invisibleTime")]
    pub invisible_time: i64,
    #[serde(rename = "pt", alias = "popTime")]
    pub pop_time: i64,
    #[serde(rename = "q", alias = "queueId")]
    pub queue_id: i32,
    /// The retry mark: "0" the topic itself, "1" / "2" its pop retry topic (V1 / V2).
    #[serde(rename = "r", alias = "retry")]
    pub retry: String,
    #[serde(rename = "rq", alias = "reviveQueueId")]
    pub revive_queue_id: i32,
    #[serde(rename = "so", alias = "startOffset")]
    pub start_offset: i64,
    #[serde(rename = "t", alias = "topic")]
    pub topic: String,
}

impl BatchAck {
    /// The acked queue offsets up to `max` (inclusive), ascending, at most
    /// [`MAX_BATCH_ACK_BITS`] of them (a checkpoint covers 32 messages; a hostile bit set must
    /// not turn a 16 MiB body into a gigabyte of offsets).
    pub fn offsets_up_to(&self, max: i64) -> Vec<i64> {
        let mut out = Vec::new();
        for (i, byte) in self.bit_set.iter().enumerate() {
            for bit in 0..8 {
                let offset = self.start_offset.saturating_add((i * 8 + bit) as i64);
                if offset > max || out.len() >= MAX_BATCH_ACK_BITS {
                    return out;
                }
                if byte & (1 << bit) != 0 {
                    out.push(offset);
                }
            }
        }
        out
    }

    /// Every acked queue offset (bounded as [`Self::offsets_up_to`]).
    pub fn offsets(&self) -> Vec<i64> {
        self.offsets_up_to(i64::MAX)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct BatchAckMessageRequestBody {
    pub acks: Vec<BatchAck>,
    pub broker_name: String,
}

fastjson::fastjson_body!(
    QueryAssignmentRequestBody,
    QueryAssignmentResponseBody,
    SetMessageRequestModeRequestBody,
    BatchAckMessageRequestBody,
);

/// A byte array as fastjson reads one: a Base64 string, or an array of numbers.
fn bit_set<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Bytes {
        Text(String),
        Numbers(Vec<i64>),
    }
    match Option::<Bytes>::deserialize(d)? {
        None => Ok(Vec::new()),
        Some(Bytes::Numbers(n)) => Ok(n.into_iter().map(|b| b as u8).collect()),
        Some(Bytes::Text(s)) => base64_decode(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("bit set is not Base64: {}", s.len()))),
    }
}

pub use crate::common::base64::{decode as base64_decode, encode as base64_encode};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_ack_bit_set_is_java_base64() {
        let body = br#"{"acks":[{"b":"BQ==","c":"G","it":60000,"pt":1700000000000,"q":1,"r":"0","rq":3,"so":120,"t":"T"}],"brokerName":"broker-a"}"#;
        let b = BatchAckMessageRequestBody::decode(body).unwrap();
        assert_eq!(b.acks[0].offsets(), vec![120, 122]);
        assert_eq!(b.acks[0].revive_queue_id, 3);
        let long = br#"{"acks":[{"bitSet":[0,1],"consumerGroup":"G","startOffset":"8","queueId":0,"topic":"T","retry":"1"}]}"#;
        let b = BatchAckMessageRequestBody::decode(long).unwrap();
        assert_eq!(b.acks[0].offsets(), vec![16]);
        assert_eq!(b.acks[0].consumer_group, "G");
    }

    #[test]
    fn assignment_shapes() {
        let r = QueryAssignmentResponseBody {
            message_queue_assignments: Some(vec![MessageQueueAssignment {
                attachments: None,
                message_queue: MessageQueue::new("T", "b", -1),
                mode: "POP".into(),
            }]),
        };
        assert_eq!(
            String::from_utf8(r.encode()).unwrap(),
            r#"{"messageQueueAssignments":[{"messageQueue":{"brokerName":"b","queueId":-1,"topic":"T"},"mode":"POP"}]}"#
        );
        assert_eq!(
            QueryAssignmentResponseBody::default().encode(),
            b"{}".to_vec()
        );
        let m = SetMessageRequestModeRequestBody::decode(br#"{"topic":"T","consumerGroup":"G"}"#)
            .unwrap();
        assert_eq!((m.mode.as_str(), m.pop_share_queue_num), ("PULL", 0));
    }
}
