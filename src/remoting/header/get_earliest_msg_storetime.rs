//! GET_EARLIEST_MSG_STORETIME (32) request and response headers.

use super::shared::QueueRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `GetEarliestMsgStoretimeRequestHeader`.
///
/// ```text
/// key      type     req
/// topic    String   Y
/// queueId  Integer  Y
/// + rpc    bname ns nsd oway lo (RpcRequestHeader)
/// ```
pub type GetEarliestMsgStoretimeRequestHeader = QueueRequestHeader;

/// `GetEarliestMsgStoretimeResponseHeader`.
///
/// ```text
/// key        type     req
/// timestamp  Long     Y
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GetEarliestMsgStoretimeResponseHeader {
    pub timestamp: i64,
}

impl CommandHeader for GetEarliestMsgStoretimeResponseHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("timestamp", self.timestamp);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            timestamp: ext.i64("timestamp")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn get_earliest_msg_storetime_response_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[("timestamp", "1700000000000")]);
        let h = GetEarliestMsgStoretimeResponseHeader::read_from(&ext).unwrap();
        assert_eq!(h.timestamp, 1700000000000);
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn get_earliest_msg_storetime_response_header_missing_timestamp_is_an_error() {
        let err = GetEarliestMsgStoretimeResponseHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(
            err,
            RemotingError::Header {
                field: "timestamp",
                ..
            }
        ));
    }
}
