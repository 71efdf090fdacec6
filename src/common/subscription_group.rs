//! `SubscriptionGroupConfig`, its `GroupRetryPolicy` and the `SubscriptionGroupWrapper` of
//! `subscriptionGroup.json`, GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201) and
//! UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200): one model for the store's file and the wire.
//!
//! Fields are declared alphabetically (fastjson sorts bean properties), so serde's order is
//! Java's:
//! ```text
//! {"attributes":{},"brokerId":0,"consumeBroadcastEnable":true,"consumeEnable":true,
//!  "consumeFromMinEnable":true,"consumeMessageOrderly":false,"consumeTimeoutMinute":15,
//!  "groupName":"G1","groupRetryPolicy":{"type":"CUSTOMIZED"},"groupSysFlag":0,
//!  "notifyConsumerIdsChangedEnable":true,"retryMaxTimes":16,"retryQueueNums":1,
//!  "whichBrokerWhenConsumeSlowly":1}
//! wrapper: {"dataVersion":{...},"forbiddenTable":{},"subscriptionGroupTable":{"G1":{...}}}
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::common::data_version::DataVersion;

/// Java `SubscriptionGroupConfig`; absent fields take Java's defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SubscriptionGroupConfig {
    pub attributes: BTreeMap<String, String>,
    pub broker_id: i64,
    pub consume_broadcast_enable: bool,
    pub consume_enable: bool,
    pub consume_from_min_enable: bool,
    pub consume_message_orderly: bool,
    /// Java `long`.
    pub consume_timeout_minute: i64,
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
    /// Java defaults for `group_name`.
    pub fn new(group_name: &str) -> Self {
        Self {
            group_name: group_name.to_string(),
            ..Self::default()
        }
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

/// `subscriptionGroup.json` (SubscriptionGroupManager) and the GET_ALL_SUBSCRIPTIONGROUP_CONFIG
/// body.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SubscriptionGroupWrapper {
    /// A `dataVersion` that does not parse reads as a fresh one: the groups still load.
    #[serde(deserialize_with = "lenient_data_version")]
    pub data_version: DataVersion,
    /// group → topic → forbidden bits.
    pub forbidden_table: BTreeMap<String, BTreeMap<String, i32>>,
    pub subscription_group_table: BTreeMap<String, SubscriptionGroupConfig>,
}

fn lenient_data_version<'de, D: Deserializer<'de>>(d: D) -> Result<DataVersion, D::Error> {
    Ok(serde_json::from_value(Value::deserialize(d)?).unwrap_or_default())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Java's `JSON.toJSONString(new SubscriptionGroupConfig())` with groupName `G1`.
    pub(crate) const DEFAULTS: &str = r#"{"attributes":{},"brokerId":0,"consumeBroadcastEnable":true,"consumeEnable":true,"consumeFromMinEnable":true,"consumeMessageOrderly":false,"consumeTimeoutMinute":15,"groupName":"G1","groupRetryPolicy":{"type":"CUSTOMIZED"},"groupSysFlag":0,"notifyConsumerIdsChangedEnable":true,"retryMaxTimes":16,"retryQueueNums":1,"whichBrokerWhenConsumeSlowly":1}"#;

    #[test]
    fn defaults_serialize_in_java_order() {
        let g = SubscriptionGroupConfig::new("G1");
        assert_eq!(serde_json::to_string(&g).unwrap(), DEFAULTS);
        let partial: SubscriptionGroupConfig =
            serde_json::from_str(r#"{"groupName":"G2","retryMaxTimes":3}"#).unwrap();
        assert_eq!((partial.retry_max_times, partial.retry_queue_nums), (3, 1));
        assert_eq!(partial.group_retry_policy.kind, "CUSTOMIZED");
    }

    #[test]
    fn wrapper_reads_a_bad_data_version_as_fresh() {
        let w: SubscriptionGroupWrapper = serde_json::from_str(
            r#"{"dataVersion":"x","subscriptionGroupTable":{"g":{"groupName":"g"}}}"#,
        )
        .unwrap();
        assert_eq!(w.data_version.counter, 0);
        assert_eq!(w.subscription_group_table["g"].retry_max_times, 16);
        let w: SubscriptionGroupWrapper =
            serde_json::from_str(r#"{"dataVersion":{"counter":4,"timestamp":9}}"#).unwrap();
        assert_eq!((w.data_version.counter, w.data_version.timestamp), (4, 9));
    }
}
