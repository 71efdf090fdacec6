//! GET_PRODUCER_CONNECTION_LIST (204) request header.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `GetProducerConnectionListRequestHeader`.
///
/// ```text
/// key            type     req
/// producerGroup  String   Y
/// + rpc          bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GetProducerConnectionListRequestHeader {
    pub producer_group: String,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for GetProducerConnectionListRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("producerGroup", &self.producer_group);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            producer_group: ext.string("producerGroup")?,
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn get_producer_connection_list_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[("producerGroup", "v_producerGroup"), ("bname", "broker-a")]);
        let h = GetProducerConnectionListRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.producer_group.as_str(), "v_producerGroup");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn get_producer_connection_list_request_header_missing_producer_group_is_an_error() {
        let err = GetProducerConnectionListRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(
            err,
            RemotingError::Header {
                field: "producerGroup",
                ..
            }
        ));
    }
}
