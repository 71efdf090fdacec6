//! QUERY_CONSUME_QUEUE (321) request header.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `QueryConsumeQueueRequestHeader`: `count` consume-queue units from `index`.
///
/// ```text
/// key            type     req
/// topic          String   Y
/// queueId        Integer  P default 0
/// index          Long     P default 0
/// count          Integer  P default 0
/// consumerGroup  String   N
/// + rpc          bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueryConsumeQueueRequestHeader {
    pub topic: String,
    pub queue_id: i32,
    pub index: i64,
    pub count: i32,
    pub consumer_group: Option<String>,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for QueryConsumeQueueRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("topic", &self.topic);
        ext.put("queueId", self.queue_id);
        ext.put("index", self.index);
        ext.put("count", self.count);
        ext.put_opt("consumerGroup", &self.consumer_group);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            topic: ext.string("topic")?,
            queue_id: ext.i32_opt("queueId")?.unwrap_or(0),
            index: ext.i64_opt("index")?.unwrap_or(0),
            count: ext.i32_opt("count")?.unwrap_or(0),
            consumer_group: ext.string_opt("consumerGroup"),
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn query_consume_queue_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("topic", "v_topic"),
            ("queueId", "3"),
            ("index", "1700000000000"),
            ("count", "3"),
            ("consumerGroup", "v_consumerGroup"),
            ("bname", "broker-a"),
        ]);
        let h = QueryConsumeQueueRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.topic.as_str(), "v_topic");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn query_consume_queue_request_header_missing_topic_is_an_error() {
        let err = QueryConsumeQueueRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(err, RemotingError::Header { field: "topic", .. }));
    }
}
