//! `TopicConfig` with Java's field names (topics.json, REGISTER_BROKER bodies, admin bodies) and
//! the permission bits of `PermName`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub const PERM_PRIORITY: i32 = 8;
pub const PERM_READ: i32 = 4;
pub const PERM_WRITE: i32 = 2;
pub const PERM_INHERIT: i32 = 1;

pub fn is_readable(perm: i32) -> bool {
    perm & PERM_READ != 0
}

pub fn is_writeable(perm: i32) -> bool {
    perm & PERM_WRITE != 0
}

/// One topic's configuration. Every field has Java's default, so partial JSON loads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopicConfig {
    pub attributes: BTreeMap<String, String>,
    pub order: bool,
    pub perm: i32,
    pub read_queue_nums: i32,
    pub topic_filter_type: String,
    pub topic_name: String,
    pub topic_sys_flag: i32,
    pub write_queue_nums: i32,
}

impl Default for TopicConfig {
    fn default() -> Self {
        Self {
            attributes: BTreeMap::new(),
            order: false,
            perm: PERM_READ | PERM_WRITE,
            read_queue_nums: 16,
            topic_filter_type: "SINGLE_TAG".to_string(),
            topic_name: String::new(),
            topic_sys_flag: 0,
            write_queue_nums: 16,
        }
    }
}

impl TopicConfig {
    pub fn new(name: &str, read: i32, write: i32, perm: i32) -> Self {
        Self {
            topic_name: name.to_string(),
            read_queue_nums: read,
            write_queue_nums: write,
            perm,
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_json_round_trip_with_defaults() {
        let t: TopicConfig = serde_json::from_str(r#"{"topicName":"T","perm":7,"x":1}"#).unwrap();
        assert_eq!(
            (t.read_queue_nums, t.perm, t.topic_filter_type.as_str()),
            (16, 7, "SINGLE_TAG")
        );
        let s = serde_json::to_string(&t).unwrap();
        assert!(s.starts_with(r#"{"attributes":{},"order":false,"perm":7,"readQueueNums":16"#));
    }
}
