//! GET_MAX_OFFSET (30) request and response headers.

use super::rpc::RpcRequestHeader;
use super::shared::OffsetResponseHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `GetMaxOffsetRequestHeader`: `committed` is a Java primitive (always sent), unused by the 5.3 broker.
///
/// ```text
/// key        type     req
/// topic      String   Y
/// queueId    Integer  Y
/// committed  Boolean  P default true
/// + rpc      bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetMaxOffsetRequestHeader {
    pub topic: String,
    pub queue_id: i32,
    pub committed: bool,
    pub rpc: RpcRequestHeader,
}

impl Default for GetMaxOffsetRequestHeader {
    fn default() -> Self {
        Self {
            topic: Default::default(),
            queue_id: Default::default(),
            committed: true,
            rpc: RpcRequestHeader::default(),
        }
    }
}

impl CommandHeader for GetMaxOffsetRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("topic", &self.topic);
        ext.put("queueId", self.queue_id);
        ext.put("committed", self.committed);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            topic: ext.string("topic")?,
            queue_id: ext.i32("queueId")?,
            committed: ext.bool_or("committed", true),
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

/// `GetMaxOffsetResponseHeader`: the next offset to be written.
///
/// ```text
/// key     type     req
/// offset  Long     Y
/// ```
pub type GetMaxOffsetResponseHeader = OffsetResponseHeader;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn get_max_offset_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("topic", "v_topic"),
            ("queueId", "3"),
            ("committed", "true"),
            ("bname", "broker-a"),
        ]);
        let h = GetMaxOffsetRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.topic.as_str(), "v_topic");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn get_max_offset_request_header_missing_topic_is_an_error() {
        let err = GetMaxOffsetRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(err, RemotingError::Header { field: "topic", .. }));
    }
}
