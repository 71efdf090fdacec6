//! QUERY_CONSUMER_OFFSET (14) request and response headers.

use super::rpc::RpcRequestHeader;
use super::shared::OffsetResponseHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `QueryConsumerOffsetRequestHeader`.
///
/// ```text
/// key                type     req
/// consumerGroup      String   Y
/// topic              String   Y
/// queueId            Integer  Y
/// setZeroIfNotFound  Boolean  N
/// + rpc              bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueryConsumerOffsetRequestHeader {
    pub consumer_group: String,
    pub topic: String,
    pub queue_id: i32,
    pub set_zero_if_not_found: Option<bool>,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for QueryConsumerOffsetRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("consumerGroup", &self.consumer_group);
        ext.put("topic", &self.topic);
        ext.put("queueId", self.queue_id);
        ext.put_opt("setZeroIfNotFound", &self.set_zero_if_not_found);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            consumer_group: ext.string("consumerGroup")?,
            topic: ext.string("topic")?,
            queue_id: ext.i32("queueId")?,
            set_zero_if_not_found: ext.bool_opt("setZeroIfNotFound"),
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

/// `QueryConsumerOffsetResponseHeader`.
///
/// ```text
/// key     type     req
/// offset  Long     Y
/// ```
pub type QueryConsumerOffsetResponseHeader = OffsetResponseHeader;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn query_consumer_offset_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("consumerGroup", "v_consumerGroup"),
            ("topic", "v_topic"),
            ("queueId", "3"),
            ("setZeroIfNotFound", "true"),
            ("bname", "broker-a"),
        ]);
        let h = QueryConsumerOffsetRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.consumer_group.as_str(), "v_consumerGroup");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn query_consumer_offset_request_header_missing_consumer_group_is_an_error() {
        let err = QueryConsumerOffsetRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(
            err,
            RemotingError::Header {
                field: "consumerGroup",
                ..
            }
        ));
    }
}
