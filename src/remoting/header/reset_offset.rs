//! INVOKE_BROKER_TO_RESET_OFFSET (222) / RESET_CONSUMER_CLIENT_OFFSET (220) header.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `ResetOffsetRequestHeader`: `queueId` -1 = all queues; `timestamp` -1 = reset to max.
///
/// ```text
/// key        type     req
/// group      String   Y
/// topic      String   Y
/// queueId    Integer  P default -1
/// offset     Long     N
/// timestamp  Long     Y
/// isForce    Boolean  P default false
/// + rpc      bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResetOffsetRequestHeader {
    pub group: String,
    pub topic: String,
    pub queue_id: i32,
    /// Explicit target when `queueId >= 0`.
    pub offset: Option<i64>,
    pub timestamp: i64,
    pub is_force: bool,
    pub rpc: RpcRequestHeader,
}

impl Default for ResetOffsetRequestHeader {
    fn default() -> Self {
        Self {
            group: Default::default(),
            topic: Default::default(),
            queue_id: -1,
            offset: Default::default(),
            timestamp: Default::default(),
            is_force: Default::default(),
            rpc: RpcRequestHeader::default(),
        }
    }
}

impl CommandHeader for ResetOffsetRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("group", &self.group);
        ext.put("topic", &self.topic);
        ext.put("queueId", self.queue_id);
        ext.put_opt("offset", &self.offset);
        ext.put("timestamp", self.timestamp);
        ext.put("isForce", self.is_force);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            group: ext.string("group")?,
            topic: ext.string("topic")?,
            queue_id: ext.i32_opt("queueId")?.unwrap_or(-1),
            offset: ext.i64_opt("offset")?,
            timestamp: ext.i64("timestamp")?,
            is_force: ext.bool_or("isForce", false),
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn reset_offset_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("group", "v_group"),
            ("topic", "v_topic"),
            ("queueId", "3"),
            ("offset", "1700000000000"),
            ("timestamp", "1700000000000"),
            ("isForce", "true"),
            ("bname", "broker-a"),
        ]);
        let h = ResetOffsetRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.group.as_str(), "v_group");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn reset_offset_request_header_missing_group_is_an_error() {
        let err = ResetOffsetRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(err, RemotingError::Header { field: "group", .. }));
    }
}
