//! GET_TOPIC_CONFIG (351) response body `TopicConfigAndQueueMapping`: a `TopicConfig` plus the
//! static-topic `mappingDetail` (absent for ordinary topics).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::fastjson;
use crate::common::topic::TopicConfig;

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TopicConfigAndQueueMapping {
    #[serde(flatten)]
    pub topic_config: TopicConfig,
    pub mapping_detail: Option<Value>,
}

fastjson::fastjson_body!(TopicConfigAndQueueMapping);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flattened_topic_config() {
        let b = TopicConfigAndQueueMapping {
            topic_config: TopicConfig::new("T", 4, 4, 6),
            mapping_detail: None,
        };
        let json = String::from_utf8(b.encode()).unwrap();
        assert_eq!(
            json,
            r#"{"attributes":{},"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"T","topicSysFlag":0,"writeQueueNums":4}"#
        );
        assert_eq!(
            TopicConfigAndQueueMapping::decode(json.as_bytes()).unwrap(),
            b
        );
    }
}
