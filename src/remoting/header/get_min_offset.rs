//! GET_MIN_OFFSET (31) request and response headers.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `GetMinOffsetRequestHeader`.
///
/// ```text
/// key      type     req
/// topic    String   Y
/// queueId  Integer  Y
/// + rpc    bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GetMinOffsetRequestHeader {
    pub topic: String,
    pub queue_id: i32,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for GetMinOffsetRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("topic", &self.topic);
        ext.put("queueId", self.queue_id);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            topic: ext.string("topic")?,
            queue_id: ext.i32("queueId")?,
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

/// `GetMinOffsetResponseHeader`.
///
/// ```text
/// key     type     req
/// offset  Long     Y
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GetMinOffsetResponseHeader {
    pub offset: i64,
}

impl CommandHeader for GetMinOffsetResponseHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("offset", self.offset);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            offset: ext.i64("offset")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn get_min_offset_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("topic", "v_topic"),
            ("queueId", "3"),
            ("bname", "broker-a"),
        ]);
        let h = GetMinOffsetRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.topic.as_str(), "v_topic");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn get_min_offset_request_header_missing_topic_is_an_error() {
        let err = GetMinOffsetRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(err, RemotingError::Header { field: "topic", .. }));
    }

    #[test]
    fn get_min_offset_response_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[("offset", "1700000000000")]);
        let h = GetMinOffsetResponseHeader::read_from(&ext).unwrap();
        assert_eq!(h.offset, 1700000000000);
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn get_min_offset_response_header_missing_offset_is_an_error() {
        let err = GetMinOffsetResponseHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(
            err,
            RemotingError::Header {
                field: "offset",
                ..
            }
        ));
    }
}
