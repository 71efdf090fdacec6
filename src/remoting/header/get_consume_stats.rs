//! GET_CONSUME_STATS (208) request header; body `ConsumeStats`.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `GetConsumeStatsRequestHeader`: blank `topic` = every topic with offsets for the group.
///
/// ```text
/// key            type     req
/// consumerGroup  String   Y
/// topic          String   N
/// topicList      String   N
/// + rpc          bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GetConsumeStatsRequestHeader {
    pub consumer_group: String,
    pub topic: Option<String>,
    /// `;`-separated topics (5.x).
    pub topic_list: Option<String>,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for GetConsumeStatsRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("consumerGroup", &self.consumer_group);
        ext.put_opt("topic", &self.topic);
        ext.put_opt("topicList", &self.topic_list);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            consumer_group: ext.string("consumerGroup")?,
            topic: ext.string_opt("topic"),
            topic_list: ext.string_opt("topicList"),
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn get_consume_stats_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("consumerGroup", "v_consumerGroup"),
            ("topic", "v_topic"),
            ("topicList", "v_topicList"),
            ("bname", "broker-a"),
        ]);
        let h = GetConsumeStatsRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.consumer_group.as_str(), "v_consumerGroup");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn get_consume_stats_request_header_missing_consumer_group_is_an_error() {
        let err = GetConsumeStatsRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(
            err,
            RemotingError::Header {
                field: "consumerGroup",
                ..
            }
        ));
    }
}
