//! GET_CONSUMER_RUNNING_INFO (307) header, admin → broker → client.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `GetConsumerRunningInfoRequestHeader`.
///
/// ```text
/// key            type     req
/// consumerGroup  String   Y
/// clientId       String   Y
/// jstackEnable   Boolean  P default false
/// + rpc          bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GetConsumerRunningInfoRequestHeader {
    pub consumer_group: String,
    pub client_id: String,
    pub jstack_enable: bool,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for GetConsumerRunningInfoRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("consumerGroup", &self.consumer_group);
        ext.put("clientId", &self.client_id);
        ext.put("jstackEnable", self.jstack_enable);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            consumer_group: ext.string("consumerGroup")?,
            client_id: ext.string("clientId")?,
            jstack_enable: ext.bool_or("jstackEnable", false),
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn get_consumer_running_info_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("consumerGroup", "v_consumerGroup"),
            ("clientId", "v_clientId"),
            ("jstackEnable", "true"),
            ("bname", "broker-a"),
        ]);
        let h = GetConsumerRunningInfoRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.consumer_group.as_str(), "v_consumerGroup");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn get_consumer_running_info_request_header_missing_consumer_group_is_an_error() {
        let err = GetConsumerRunningInfoRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(
            err,
            RemotingError::Header {
                field: "consumerGroup",
                ..
            }
        ));
    }
}
