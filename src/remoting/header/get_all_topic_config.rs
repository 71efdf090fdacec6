//! GET_ALL_TOPIC_CONFIG (21) paging request and response headers (5.x).

use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `GetAllTopicConfigRequestHeader`: absent fields (old clients) mean "everything at once".
///
/// ```text
/// key          type     req
/// topicSeq     Integer  N
/// dataVersion  String   N
/// maxTopicNum  Integer  N
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GetAllTopicConfigRequestHeader {
    pub topic_seq: Option<i32>,
    pub data_version: Option<String>,
    pub max_topic_num: Option<i32>,
}

impl CommandHeader for GetAllTopicConfigRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put_opt("topicSeq", &self.topic_seq);
        ext.put_opt("dataVersion", &self.data_version);
        ext.put_opt("maxTopicNum", &self.max_topic_num);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            topic_seq: ext.i32_opt("topicSeq")?,
            data_version: ext.string_opt("dataVersion"),
            max_topic_num: ext.i32_opt("maxTopicNum")?,
        })
    }
}

/// `GetAllTopicConfigResponseHeader`: omitted or the table size when everything is returned at once.
///
/// ```text
/// key            type     req
/// totalTopicNum  Integer  N
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GetAllTopicConfigResponseHeader {
    pub total_topic_num: Option<i32>,
}

impl CommandHeader for GetAllTopicConfigResponseHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put_opt("totalTopicNum", &self.total_topic_num);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            total_topic_num: ext.i32_opt("totalTopicNum")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn get_all_topic_config_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("topicSeq", "3"),
            ("dataVersion", "v_dataVersion"),
            ("maxTopicNum", "3"),
        ]);
        let h = GetAllTopicConfigRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.topic_seq, Some(3));
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn get_all_topic_config_response_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[("totalTopicNum", "3")]);
        let h = GetAllTopicConfigResponseHeader::read_from(&ext).unwrap();
        assert_eq!(h.total_topic_num, Some(3));
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }
}
