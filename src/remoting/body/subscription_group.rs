//! UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200) body `SubscriptionGroupConfig` and
//! GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201) body `SubscriptionGroupWrapper`, Java names and defaults.
//!
//! ```text
//! {"attributes":{},"brokerId":0,"consumeBroadcastEnable":true,"consumeEnable":true,
//!  "consumeFromMinEnable":true,"consumeMessageOrderly":false,"consumeTimeoutMinute":15,
//!  "groupName":"G1","groupRetryPolicy":{"type":"CUSTOMIZED"},"groupSysFlag":0,
//!  "notifyConsumerIdsChangedEnable":true,"retryMaxTimes":16,"retryQueueNums":1,
//!  "whichBrokerWhenConsumeSlowly":1}
//! wrapper: {"dataVersion":{...},"forbiddenTable":{},"subscriptionGroupTable":{"G1":{...}}}
//! ```
//! The wrapper is standard JSON (Go's admin decodes it with `encoding/json`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::fastjson;
use crate::remoting::error::RemotingError;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SubscriptionGroupConfig {
    pub attributes: BTreeMap<String, String>,
    pub broker_id: i64,
    pub consume_broadcast_enable: bool,
    pub consume_enable: bool,
    pub consume_from_min_enable: bool,
    pub consume_message_orderly: bool,
    pub consume_timeout_minute: i32,
    pub group_name: String,
    pub group_retry_policy: GroupRetryPolicy,
    pub group_sys_flag: i32,
    pub notify_consumer_ids_changed_enable: bool,
    pub retry_max_times: i32,
    pub retry_queue_nums: i32,
    /// Optional; omitted when null (fastjson writes no null fields).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscription_data_set: Option<Vec<SimpleSubscriptionData>>,
    pub which_broker_when_consume_slowly: i64,
}

impl Default for SubscriptionGroupConfig {
    fn default() -> Self {
        Self {
            attributes: BTreeMap::new(),
            broker_id: 0,
            consume_broadcast_enable: true,
            consume_enable: true,
            consume_from_min_enable: true,
            consume_message_orderly: false,
            consume_timeout_minute: 15,
            group_name: String::new(),
            group_retry_policy: GroupRetryPolicy::default(),
            group_sys_flag: 0,
            notify_consumer_ids_changed_enable: true,
            retry_max_times: 16,
            retry_queue_nums: 1,
            subscription_data_set: None,
            which_broker_when_consume_slowly: 1,
        }
    }
}

impl SubscriptionGroupConfig {
    pub fn new(group_name: &str) -> Self {
        Self {
            group_name: group_name.to_string(),
            ..Self::default()
        }
    }

    pub fn decode(body: &[u8]) -> Result<Self, RemotingError> {
        fastjson::from_slice(body)
    }

    pub fn encode(&self) -> Vec<u8> {
        fastjson::to_vec(self).unwrap_or_default()
    }
}

/// `GroupRetryPolicy`: `type` is `CUSTOMIZED` (default) or `EXPONENTIAL`; the policies are kept
/// as JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct GroupRetryPolicy {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub customized_retry_policy: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exponential_retry_policy: Option<Value>,
    #[serde(rename = "type")]
    pub kind: String,
}

impl Default for GroupRetryPolicy {
    fn default() -> Self {
        Self {
            customized_retry_policy: None,
            exponential_retry_policy: None,
            kind: "CUSTOMIZED".to_string(),
        }
    }
}

/// `SimpleSubscriptionData` (5.x, proxy-managed subscriptions).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SimpleSubscriptionData {
    pub expression: String,
    pub expression_type: String,
    pub topic: String,
    pub version: i64,
}

// TODO(namesrv): `data_version` becomes `body::data_version::DataVersion` after the merge.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SubscriptionGroupWrapper {
    pub data_version: Value,
    /// group → topic → forbidden bits.
    pub forbidden_table: BTreeMap<String, BTreeMap<String, i32>>,
    pub subscription_group_table: BTreeMap<String, SubscriptionGroupConfig>,
}

impl SubscriptionGroupWrapper {
    pub fn decode(body: &[u8]) -> Result<Self, RemotingError> {
        fastjson::from_slice(body)
    }

    /// Standard JSON: no bare keys occur here, so this equals Java's bytes.
    pub fn encode(&self) -> Vec<u8> {
        fastjson::to_vec_standard(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULTS: &str = r#"{"attributes":{},"brokerId":0,"consumeBroadcastEnable":true,"consumeEnable":true,"consumeFromMinEnable":true,"consumeMessageOrderly":false,"consumeTimeoutMinute":15,"groupName":"G1","groupRetryPolicy":{"type":"CUSTOMIZED"},"groupSysFlag":0,"notifyConsumerIdsChangedEnable":true,"retryMaxTimes":16,"retryQueueNums":1,"whichBrokerWhenConsumeSlowly":1}"#;

    #[test]
    fn defaults_match_java() {
        let g = SubscriptionGroupConfig::new("G1");
        assert_eq!(String::from_utf8(g.encode()).unwrap(), DEFAULTS);
        assert_eq!(
            SubscriptionGroupConfig::decode(DEFAULTS.as_bytes()).unwrap(),
            g
        );
        let partial =
            SubscriptionGroupConfig::decode(br#"{"groupName":"G2","retryMaxTimes":3}"#).unwrap();
        assert_eq!((partial.retry_max_times, partial.retry_queue_nums), (3, 1));
    }

    #[test]
    fn wrapper_is_standard_json() {
        let mut w = SubscriptionGroupWrapper {
            data_version: serde_json::json!({"counter":1,"stateVersion":0,"timestamp":5}),
            ..Default::default()
        };
        w.subscription_group_table
            .insert("G1".into(), SubscriptionGroupConfig::new("G1"));
        let json = w.encode();
        let v: Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(v["subscriptionGroupTable"]["G1"]["retryMaxTimes"], 16);
        assert!(json.starts_with(
            br#"{"dataVersion":{"counter":1,"stateVersion":0,"timestamp":5},"forbiddenTable":{},"#
        ));
        assert_eq!(SubscriptionGroupWrapper::decode(&json).unwrap(), w);
    }
}
