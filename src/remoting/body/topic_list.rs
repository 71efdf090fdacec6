//! `TopicList`: `{"brokerAddr":"…","topicList":["A","B"]}`; `brokerAddr` omitted when null.

use serde::{Deserialize, Serialize};

use crate::remoting::error::RemotingError;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopicList {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub broker_addr: Option<String>,
    pub topic_list: Vec<String>,
}

impl TopicList {
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, RemotingError> {
        super::fastjson::from_slice(bytes)
            .map_err(|e| RemotingError::Body(format!("TopicList: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_shape_omits_null_broker_addr() {
        let t = TopicList {
            broker_addr: None,
            topic_list: vec!["TBW102".into(), "TopicTest".into()],
        };
        assert_eq!(
            String::from_utf8(t.encode()).unwrap(),
            r#"{"topicList":["TBW102","TopicTest"]}"#
        );
    }
}
