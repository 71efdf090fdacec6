//! LOCK_BATCH_MQ (41) / UNLOCK_BATCH_MQ (42) bodies: `LockBatchRequestBody`,
//! `UnlockBatchRequestBody` and `LockBatchResponseBody`.
//!
//! ```text
//! request:  {"clientId":"c","consumerGroup":"G","mqSet":[{"brokerName":"b","queueId":0,"topic":"T"}],"onlyThisBroker":false}
//! response: {"lockOKMQSet":[{"brokerName":"b","queueId":0,"topic":"T"}]}
//! ```
//! Go sends only `consumerGroup`, `clientId`, `mqSet`.

use serde::{Deserialize, Serialize};

use super::fastjson;
use crate::common::topic::MessageQueue;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct LockBatchRequestBody {
    pub client_id: String,
    pub consumer_group: String,
    pub mq_set: Vec<MessageQueue>,
    pub only_this_broker: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct UnlockBatchRequestBody {
    pub client_id: String,
    pub consumer_group: String,
    pub mq_set: Vec<MessageQueue>,
    pub only_this_broker: bool,
}

/// The subset of the requested queues now locked by the requesting client.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LockBatchResponseBody {
    #[serde(rename = "lockOKMQSet")]
    pub lock_ok_mq_set: Vec<MessageQueue>,
}

fastjson::fastjson_body!(LockBatchRequestBody);

fastjson::fastjson_body!(UnlockBatchRequestBody);

fastjson::fastjson_body!(LockBatchResponseBody);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_and_go_requests_decode() {
        let java = br#"{"clientId":"10.0.0.5@1234#55","consumerGroup":"G1","mqSet":[{"brokerName":"broker-a","queueId":0,"topic":"T"}],"onlyThisBroker":false}"#;
        let r = LockBatchRequestBody::decode(java).unwrap();
        assert_eq!(r.mq_set[0], MessageQueue::new("T", "broker-a", 0));
        assert_eq!(r.encode(), java.to_vec());
        let go = br#"{"consumerGroup":"G1","clientId":"c","mqSet":[{"topic":"T","brokerName":"b","queueId":3}]}"#;
        let u = UnlockBatchRequestBody::decode(go).unwrap();
        assert_eq!((u.mq_set[0].queue_id, u.only_this_broker), (3, false));
    }

    #[test]
    fn response_pins_key_name() {
        let r = LockBatchResponseBody {
            lock_ok_mq_set: vec![MessageQueue::new("T", "b", 0)],
        };
        assert_eq!(
            r.encode(),
            br#"{"lockOKMQSet":[{"brokerName":"b","queueId":0,"topic":"T"}]}"#.to_vec()
        );
    }
}
