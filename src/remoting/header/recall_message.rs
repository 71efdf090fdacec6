//! RECALL_MESSAGE (370) request and response headers (RocketMQ 5.3.2+).

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `RecallMessageRequestHeader` (a `TopicRequestHeader`).
///
/// ```text
/// key            type     req
/// producerGroup  String   N
/// topic          String   Y
/// recallHandle   String   Y
/// + rpc          bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecallMessageRequestHeader {
    pub producer_group: Option<String>,
    pub topic: String,
    pub recall_handle: String,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for RecallMessageRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put_opt("producerGroup", &self.producer_group);
        ext.put("topic", &self.topic);
        ext.put("recallHandle", &self.recall_handle);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            producer_group: ext.string_opt("producerGroup"),
            topic: ext.string("topic")?,
            recall_handle: ext.string("recallHandle")?,
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

/// `RecallMessageResponseHeader`: the recalled message's UNIQ_KEY.
///
/// ```text
/// key    type    req
/// msgId  String  Y
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecallMessageResponseHeader {
    pub msg_id: String,
}

impl CommandHeader for RecallMessageResponseHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("msgId", &self.msg_id);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            msg_id: ext.string("msgId")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn recall_message_headers_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("producerGroup", "PG"),
            ("topic", "T"),
            ("recallHandle", "djEgVCBiIDEgSUQ="),
            ("bname", "broker-a"),
        ]);
        let h = RecallMessageRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.producer_group.as_deref(), Some("PG"));
        assert_eq!(h.recall_handle, "djEgVCBiIDEgSUQ=");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
        let missing = ext_from_pairs(&[("topic", "T")]);
        assert!(matches!(
            RecallMessageRequestHeader::read_from(&missing),
            Err(RemotingError::Header {
                field: "recallHandle",
                ..
            })
        ));
        let r = RecallMessageResponseHeader::read_from(&ext_from_pairs(&[("msgId", "M")]));
        assert_eq!(r.unwrap().msg_id, "M");
    }
}
