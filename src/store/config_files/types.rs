//! Typed forms of topics.json, consumerOffset.json, subscriptionGroup.json, delayOffset.json with
//! Java's field names. Fields are declared alphabetically: fastjson sorts bean properties.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

pub use crate::common::data_version::DataVersion;
pub use crate::common::topic::TopicConfig;

fn t() -> bool {
    true
}
fn sixteen() -> i32 {
    16
}

/// `topics.json` (TopicConfigSerializeWrapper).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopicConfigSerializeWrapper {
    pub data_version: DataVersion,
    pub topic_config_table: BTreeMap<String, TopicConfig>,
}

/// `consumerOffset.json`: `topic@group -> queueId -> next offset`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ConsumerOffsetWrapper {
    pub data_version: DataVersion,
    /// Derived on write (group -> topics), ignored on load like Java.
    #[serde(skip_deserializing)]
    pub group_topic_map: BTreeMap<String, Vec<String>>,
    pub offset_table: BTreeMap<String, BTreeMap<i32, i64>>,
}

impl ConsumerOffsetWrapper {
    /// Recomputes `groupTopicMap` from the offset table (keys with exactly one `@`).
    pub fn derive_group_topic_map(&mut self) {
        let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for key in self.offset_table.keys() {
            let mut parts = key.split('@');
            if let (Some(topic), Some(group), None) = (parts.next(), parts.next(), parts.next()) {
                m.entry(group.to_string())
                    .or_default()
                    .push(topic.to_string());
            }
        }
        self.group_topic_map = m;
    }
}

/// `groupRetryPolicy`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupRetryPolicy {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub customized_retry_policy: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exponential_retry_policy: Option<serde_json::Value>,
    #[serde(rename = "type", default = "customized")]
    pub kind: String,
}

fn customized() -> String {
    "CUSTOMIZED".into()
}

impl Default for GroupRetryPolicy {
    fn default() -> Self {
        GroupRetryPolicy {
            customized_retry_policy: None,
            exponential_retry_policy: None,
            kind: customized(),
        }
    }
}

fn one() -> i32 {
    1
}
fn fifteen() -> i64 {
    15
}

/// `SubscriptionGroupConfig`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionGroupConfig {
    #[serde(default)]
    pub attributes: BTreeMap<String, String>,
    #[serde(default)]
    pub broker_id: i64,
    #[serde(default = "t")]
    pub consume_broadcast_enable: bool,
    #[serde(default = "t")]
    pub consume_enable: bool,
    #[serde(default = "t")]
    pub consume_from_min_enable: bool,
    #[serde(default)]
    pub consume_message_orderly: bool,
    #[serde(default = "fifteen")]
    pub consume_timeout_minute: i64,
    #[serde(default)]
    pub group_name: String,
    #[serde(default)]
    pub group_retry_policy: GroupRetryPolicy,
    #[serde(default)]
    pub group_sys_flag: i32,
    #[serde(default = "t")]
    pub notify_consumer_ids_changed_enable: bool,
    #[serde(default = "sixteen")]
    pub retry_max_times: i32,
    #[serde(default = "one")]
    pub retry_queue_nums: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription_data_set: Option<serde_json::Value>,
    #[serde(default = "one_i64")]
    pub which_broker_when_consume_slowly: i64,
}

fn one_i64() -> i64 {
    1
}

impl SubscriptionGroupConfig {
    /// Java defaults for `name`.
    pub fn new(name: &str) -> Self {
        SubscriptionGroupConfig {
            attributes: BTreeMap::new(),
            broker_id: 0,
            consume_broadcast_enable: true,
            consume_enable: true,
            consume_from_min_enable: true,
            consume_message_orderly: false,
            consume_timeout_minute: 15,
            group_name: name.to_string(),
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

/// `subscriptionGroup.json` (SubscriptionGroupManager).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SubscriptionGroupWrapper {
    pub data_version: DataVersion,
    pub forbidden_table: BTreeMap<String, HashMap<String, i32>>,
    pub subscription_group_table: BTreeMap<String, SubscriptionGroupConfig>,
}

/// `delayOffset.json`: delay level -> next offset in `SCHEDULE_TOPIC_XXXX` queue level-1.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DelayOffsetWrapper {
    pub data_version: DataVersion,
    pub offset_table: BTreeMap<i32, i64>,
}
