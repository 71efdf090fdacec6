//! UPDATE_CONSUMER_OFFSET (15) request header; the response has no fields.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `UpdateConsumerOffsetRequestHeader`.
///
/// ```text
/// key            type     req
/// consumerGroup  String   Y
/// topic          String   Y
/// queueId        Integer  Y
/// commitOffset   Long     Y
/// + rpc          bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UpdateConsumerOffsetRequestHeader {
    pub consumer_group: String,
    pub topic: String,
    pub queue_id: i32,
    pub commit_offset: i64,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for UpdateConsumerOffsetRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("consumerGroup", &self.consumer_group);
        ext.put("topic", &self.topic);
        ext.put("queueId", self.queue_id);
        ext.put("commitOffset", self.commit_offset);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            consumer_group: ext.string("consumerGroup")?,
            topic: ext.string("topic")?,
            queue_id: ext.i32("queueId")?,
            commit_offset: ext.i64("commitOffset")?,
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn update_consumer_offset_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("consumerGroup", "v_consumerGroup"),
            ("topic", "v_topic"),
            ("queueId", "3"),
            ("commitOffset", "1700000000000"),
            ("bname", "broker-a"),
        ]);
        let h = UpdateConsumerOffsetRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.consumer_group.as_str(), "v_consumerGroup");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn update_consumer_offset_request_header_missing_consumer_group_is_an_error() {
        let err = UpdateConsumerOffsetRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(
            err,
            RemotingError::Header {
                field: "consumerGroup",
                ..
            }
        ));
    }
}
