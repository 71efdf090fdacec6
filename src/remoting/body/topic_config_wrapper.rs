//! GET_ALL_TOPIC_CONFIG (21) body `TopicConfigAndMappingSerializeWrapper`: the same shape as the
//! register body's topic wrapper, so one type serves both.
//!
//! ```text
//! {"dataVersion":{"counter":12,"stateVersion":0,"timestamp":1700000000000},
//!  "mappingDataVersion":{...},"topicConfigTable":{"T":TopicConfig},
//!  "topicQueueMappingDetailMap":{},"topicQueueMappingInfoMap":{}}
//! ```

pub use super::register_broker::TopicConfigSerializeWrapper as TopicConfigAndMappingSerializeWrapper;

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
