//! CONSUME_MESSAGE_DIRECTLY (309) header, admin → broker → client.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `ConsumeMessageDirectlyResultRequestHeader`: the broker adds `brokerName`, `topicSysFlag`, `groupSysFlag` when relaying.
///
/// ```text
/// key            type     req
/// consumerGroup  String   Y
/// clientId       String   N
/// msgId          String   N
/// brokerName     String   N
/// topic          String   N
/// topicSysFlag   Integer  N
/// groupSysFlag   Integer  N
/// + rpc          bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConsumeMessageDirectlyResultRequestHeader {
    pub consumer_group: String,
    pub client_id: Option<String>,
    pub msg_id: Option<String>,
    pub broker_name: Option<String>,
    pub topic: Option<String>,
    pub topic_sys_flag: Option<i32>,
    pub group_sys_flag: Option<i32>,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for ConsumeMessageDirectlyResultRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("consumerGroup", &self.consumer_group);
        ext.put_opt("clientId", &self.client_id);
        ext.put_opt("msgId", &self.msg_id);
        ext.put_opt("brokerName", &self.broker_name);
        ext.put_opt("topic", &self.topic);
        ext.put_opt("topicSysFlag", &self.topic_sys_flag);
        ext.put_opt("groupSysFlag", &self.group_sys_flag);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            consumer_group: ext.string("consumerGroup")?,
            client_id: ext.string_opt("clientId"),
            msg_id: ext.string_opt("msgId"),
            broker_name: ext.string_opt("brokerName"),
            topic: ext.string_opt("topic"),
            topic_sys_flag: ext.i32_opt("topicSysFlag")?,
            group_sys_flag: ext.i32_opt("groupSysFlag")?,
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn consume_message_directly_result_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("consumerGroup", "v_consumerGroup"),
            ("clientId", "v_clientId"),
            ("msgId", "v_msgId"),
            ("brokerName", "v_brokerName"),
            ("topic", "v_topic"),
            ("topicSysFlag", "3"),
            ("groupSysFlag", "3"),
            ("bname", "broker-a"),
        ]);
        let h = ConsumeMessageDirectlyResultRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.consumer_group.as_str(), "v_consumerGroup");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn consume_message_directly_result_request_header_missing_consumer_group_is_an_error() {
        let err =
            ConsumeMessageDirectlyResultRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(
            err,
            RemotingError::Header {
                field: "consumerGroup",
                ..
            }
        ));
    }
}
