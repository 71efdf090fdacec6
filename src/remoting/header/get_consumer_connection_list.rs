//! GET_CONSUMER_CONNECTION_LIST (203) request header.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `GetConsumerConnectionListRequestHeader`.
///
/// ```text
/// key            type     req
/// consumerGroup  String   Y
/// + rpc          bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GetConsumerConnectionListRequestHeader {
    pub consumer_group: String,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for GetConsumerConnectionListRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("consumerGroup", &self.consumer_group);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            consumer_group: ext.string("consumerGroup")?,
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn get_consumer_connection_list_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[("consumerGroup", "v_consumerGroup"), ("bname", "broker-a")]);
        let h = GetConsumerConnectionListRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.consumer_group.as_str(), "v_consumerGroup");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn get_consumer_connection_list_request_header_missing_consumer_group_is_an_error() {
        let err = GetConsumerConnectionListRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(
            err,
            RemotingError::Header {
                field: "consumerGroup",
                ..
            }
        ));
    }
}
