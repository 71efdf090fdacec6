//! CONSUMER_SEND_MSG_BACK (36) request header.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `ConsumerSendMsgBackRequestHeader`: `offset` is the failed message's commit-log offset.
///
/// ```text
/// key                type     req
/// offset             Long     Y
/// group              String   Y
/// delayLevel         Integer  Y
/// originMsgId        String   N
/// originTopic        String   N
/// unitMode           Boolean  P default false
/// maxReconsumeTimes  Integer  N
/// + rpc              bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConsumerSendMsgBackRequestHeader {
    pub offset: i64,
    pub group: String,
    /// 0 ⇒ broker uses 3 + reconsumeTimes; < 0 ⇒ straight to DLQ.
    pub delay_level: i32,
    pub origin_msg_id: Option<String>,
    pub origin_topic: Option<String>,
    pub unit_mode: bool,
    pub max_reconsume_times: Option<i32>,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for ConsumerSendMsgBackRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("offset", self.offset);
        ext.put("group", &self.group);
        ext.put("delayLevel", self.delay_level);
        ext.put_opt("originMsgId", &self.origin_msg_id);
        ext.put_opt("originTopic", &self.origin_topic);
        ext.put("unitMode", self.unit_mode);
        ext.put_opt("maxReconsumeTimes", &self.max_reconsume_times);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            offset: ext.i64("offset")?,
            group: ext.string("group")?,
            delay_level: ext.i32("delayLevel")?,
            origin_msg_id: ext.string_opt("originMsgId"),
            origin_topic: ext.string_opt("originTopic"),
            unit_mode: ext.bool_or("unitMode", false),
            max_reconsume_times: ext.i32_opt("maxReconsumeTimes")?,
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn consumer_send_msg_back_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("offset", "1700000000000"),
            ("group", "v_group"),
            ("delayLevel", "3"),
            ("originMsgId", "v_originMsgId"),
            ("originTopic", "v_originTopic"),
            ("unitMode", "true"),
            ("maxReconsumeTimes", "3"),
            ("bname", "broker-a"),
        ]);
        let h = ConsumerSendMsgBackRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.offset, 1700000000000);
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn consumer_send_msg_back_request_header_missing_offset_is_an_error() {
        let err = ConsumerSendMsgBackRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(
            err,
            RemotingError::Header {
                field: "offset",
                ..
            }
        ));
    }
}
