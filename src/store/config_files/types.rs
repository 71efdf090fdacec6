//! Typed forms of topics.json, consumerOffset.json, delayOffset.json (and, from `common`,
//! subscriptionGroup.json) with Java's field names. Fields are declared alphabetically: fastjson
//! sorts bean properties.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::common::data_version::DataVersion;
pub use crate::common::subscription_group::{
    GroupRetryPolicy, SubscriptionGroupConfig, SubscriptionGroupWrapper,
};
pub use crate::common::topic::TopicConfig;

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
    /// `lmqConsumerOffset.json` only (Java `LmqConsumerOffsetManager`): `topic@group` -> offset for
    /// groups named `%LMQ%…` (their one queue, 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lmq_offset_table: Option<BTreeMap<String, i64>>,
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

/// `delayOffset.json`: delay level -> next offset in `SCHEDULE_TOPIC_XXXX` queue level-1.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DelayOffsetWrapper {
    pub data_version: DataVersion,
    pub offset_table: BTreeMap<i32, i64>,
}
