//! UNREGISTER_CLIENT (35) request header (note the key `clientID`).

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `UnregisterClientRequestHeader`: Java sends one request per group on shutdown.
///
/// ```text
/// key            type     req
/// clientID       String   Y
/// producerGroup  String   N
/// consumerGroup  String   N
/// + rpc          bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UnregisterClientRequestHeader {
    pub client_id: String,
    pub producer_group: Option<String>,
    pub consumer_group: Option<String>,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for UnregisterClientRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("clientID", &self.client_id);
        ext.put_opt("producerGroup", &self.producer_group);
        ext.put_opt("consumerGroup", &self.consumer_group);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            client_id: ext.string("clientID")?,
            producer_group: ext.string_opt("producerGroup"),
            consumer_group: ext.string_opt("consumerGroup"),
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn unregister_client_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("clientID", "v_clientID"),
            ("producerGroup", "v_producerGroup"),
            ("consumerGroup", "v_consumerGroup"),
            ("bname", "broker-a"),
        ]);
        let h = UnregisterClientRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.client_id.as_str(), "v_clientID");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn unregister_client_request_header_missing_client_id_is_an_error() {
        let err = UnregisterClientRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(
            err,
            RemotingError::Header {
                field: "clientID",
                ..
            }
        ));
    }
}
