//! VIEW_MESSAGE_BY_ID (33) request header; the response has no header.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `ViewMessageRequestHeader`: `offset` is the commit-log offset decoded from an offset msgId.
///
/// ```text
/// key     type     req
/// topic   String   N
/// offset  Long     Y
/// + rpc   bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ViewMessageRequestHeader {
    pub topic: Option<String>,
    pub offset: i64,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for ViewMessageRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put_opt("topic", &self.topic);
        ext.put("offset", self.offset);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            topic: ext.string_opt("topic"),
            offset: ext.i64("offset")?,
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn view_message_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("topic", "v_topic"),
            ("offset", "1700000000000"),
            ("bname", "broker-a"),
        ]);
        let h = ViewMessageRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.topic.as_deref(), Some("v_topic"));
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn view_message_request_header_missing_offset_is_an_error() {
        let err = ViewMessageRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(
            err,
            RemotingError::Header {
                field: "offset",
                ..
            }
        ));
    }
}
