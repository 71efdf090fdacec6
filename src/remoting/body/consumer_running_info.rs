//! GET_CONSUMER_RUNNING_INFO (307) body `ConsumerRunningInfo`, relayed from the client to mqadmin
//! unchanged. The broker only needs to check that it is JSON and, at most, peek at a few fields.
//!
//! ```text
//! {"jstack":"...","mqTable":{{mq}:{ProcessQueueInfo}},"properties":{"PROP_CONSUME_TYPE":"..."},
//!  "statusTable":{"T":{...}},"subscriptionSet":[SubscriptionData],...}
//! ```

use std::collections::BTreeMap;

use serde_json::Value;

use super::fastjson;
use crate::remoting::error::RemotingError;

/// The client's bytes, kept as they came (`mqTable` has fastjson object keys).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConsumerRunningInfo {
    raw: Vec<u8>,
}

impl ConsumerRunningInfo {
    /// Accepts any fastjson object; the bytes are kept verbatim.
    pub fn decode(body: &[u8]) -> Result<Self, RemotingError> {
        match fastjson::from_slice::<Value>(body)? {
            Value::Object(_) => Ok(Self { raw: body.to_vec() }),
            other => Err(RemotingError::Body(format!(
                "ConsumerRunningInfo is not an object: {other}"
            ))),
        }
    }

    /// The original bytes, to relay.
    pub fn encode(&self) -> Vec<u8> {
        self.raw.clone()
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.raw
    }

    /// The `properties` map (string values only), empty if absent.
    pub fn properties(&self) -> BTreeMap<String, String> {
        let v: Value = fastjson::from_slice(&self.raw).unwrap_or(Value::Null);
        v.get("properties")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passthrough_keeps_fastjson_bytes() {
        let body = br#"{"jstack":"","mqTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"cachedMsgCount":0}},"properties":{"PROP_CONSUME_TYPE":"CONSUME_PASSIVELY","n":1}}"#;
        let info = ConsumerRunningInfo::decode(body).unwrap();
        assert_eq!(info.encode(), body.to_vec());
        let props = info.properties();
        assert_eq!(
            props.get("PROP_CONSUME_TYPE").map(String::as_str),
            Some("CONSUME_PASSIVELY")
        );
        assert_eq!(props.len(), 1);
        assert!(ConsumerRunningInfo::decode(b"[1]").is_err());
        assert!(ConsumerRunningInfo::decode(b"{{").is_err());
    }
}
