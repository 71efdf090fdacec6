//! GET_ALL_TOPIC_CONFIG (21) body `TopicConfigAndMappingSerializeWrapper`.
//!
//! ```text
//! {"dataVersion":{"counter":12,"stateVersion":0,"timestamp":1700000000000},
//!  "mappingDataVersion":{...},"topicConfigTable":{"T":TopicConfig},
//!  "topicQueueMappingDetailMap":{},"topicQueueMappingInfoMap":{}}
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::fastjson;
use crate::common::topic::TopicConfig;

// TODO(namesrv): use `body::data_version::DataVersion` once branch `namesrv` lands; until then
// the data versions are kept as plain JSON.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TopicConfigAndMappingSerializeWrapper {
    pub data_version: Value,
    pub mapping_data_version: Value,
    pub topic_config_table: BTreeMap<String, TopicConfig>,
    /// Static-topic mappings; empty for ordinary topics.
    pub topic_queue_mapping_detail_map: BTreeMap<String, Value>,
    pub topic_queue_mapping_info_map: BTreeMap<String, Value>,
}

fastjson::fastjson_body!(TopicConfigAndMappingSerializeWrapper);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_body_round_trips() {
        let java = r#"{"dataVersion":{"counter":12,"stateVersion":0,"timestamp":1700000000000},"mappingDataVersion":{"counter":0,"stateVersion":0,"timestamp":1700000000000},"topicConfigTable":{"TopicTest":{"attributes":{},"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":4}},"topicQueueMappingDetailMap":{},"topicQueueMappingInfoMap":{}}"#;
        let w = TopicConfigAndMappingSerializeWrapper::decode(java.as_bytes()).unwrap();
        assert_eq!(w.topic_config_table["TopicTest"].perm, 6);
        assert_eq!(String::from_utf8(w.encode()).unwrap(), java);
    }
}
