//! LITE_SUBSCRIPTION_CTL (200071) body (Java 5.5 `LiteSubscriptionCtlRequestBody`):
//!
//! ```text
//! {"subscriptionSet":[{"action":"PARTIAL_ADD","clientId":"c","group":"G","liteTopicSet":["l1"],
//!   "offsetOption":{"type":"POLICY","value":1},"topic":"P","version":0}]}
//! ```
//! `liteTopicSet` holds lite names (not LMQ names). `offsetOption.type` is POLICY (value 0 keeps
//! the offset, 1 = the queue's min, 2 = its max), OFFSET, TAIL_N or TIMESTAMP.

use serde::{Deserialize, Serialize};

use super::fastjson;
use crate::remoting::error::RemotingError;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct LiteSubscriptionCtlRequestBody {
    pub subscription_set: Vec<LiteSubscriptionDto>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct LiteSubscriptionDto {
    /// PARTIAL_ADD, PARTIAL_REMOVE, COMPLETE_ADD or COMPLETE_REMOVE.
    pub action: String,
    pub client_id: String,
    pub group: String,
    pub topic: String,
    pub lite_topic_set: Vec<String>,
    pub offset_option: Option<OffsetOption>,
    pub version: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct OffsetOption {
    #[serde(rename = "type")]
    pub kind: String,
    pub value: i64,
}

impl LiteSubscriptionCtlRequestBody {
    /// Lenient as fastjson: unquoted keys, single quotes, unknown fields, nulls.
    pub fn decode(body: &[u8]) -> Result<Self, RemotingError> {
        fastjson::from_slice(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_what_the_java_client_sends() {
        let b = LiteSubscriptionCtlRequestBody::decode(
            br#"{"subscriptionSet":[{"action":"PARTIAL_ADD","clientId":"c","group":"G","liteTopicSet":["l1","l2"],"offsetOption":{"type":"POLICY","value":1},"topic":"P","version":3,"extra":null}]}"#,
        )
        .unwrap();
        let d = &b.subscription_set[0];
        assert_eq!(d.action, "PARTIAL_ADD");
        assert_eq!(d.lite_topic_set, ["l1", "l2"]);
        assert_eq!(d.offset_option.as_ref().unwrap().kind, "POLICY");
        let empty = LiteSubscriptionCtlRequestBody::decode(br#"{"subscriptionSet":null}"#).unwrap();
        assert!(empty.subscription_set.is_empty());
    }
}
