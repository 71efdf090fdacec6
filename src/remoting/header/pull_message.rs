//! PULL_MESSAGE (11) / LITE_PULL_MESSAGE (361) request and response headers.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `PullMessageRequestHeader`: a pull of `maxMsgNums` messages from one queue; `sysFlag` holds PullSysFlag bits.
///
/// ```text
/// key                   type     req
/// consumerGroup         String   Y
/// topic                 String   Y
/// queueId               Integer  Y
/// queueOffset           Long     Y
/// maxMsgNums            Integer  Y
/// sysFlag               Integer  Y
/// commitOffset          Long     Y
/// suspendTimeoutMillis  Long     Y
/// subscription          String   N
/// subVersion            Long     Y
/// expressionType        String   N
/// maxMsgBytes           Integer  N
/// requestSource         Integer  N
/// proxyFrowardClientId  String   N
/// + rpc                 bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PullMessageRequestHeader {
    pub consumer_group: String,
    pub topic: String,
    pub queue_id: i32,
    pub queue_offset: i64,
    pub max_msg_nums: i32,
    pub sys_flag: i32,
    pub commit_offset: i64,
    pub suspend_timeout_millis: i64,
    pub subscription: Option<String>,
    pub sub_version: i64,
    pub expression_type: Option<String>,
    pub max_msg_bytes: Option<i32>,
    pub request_source: Option<i32>,
    /// Java spells the key `proxyFrowardClientId` (sic).
    pub proxy_forward_client_id: Option<String>,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for PullMessageRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("consumerGroup", &self.consumer_group);
        ext.put("topic", &self.topic);
        ext.put("queueId", self.queue_id);
        ext.put("queueOffset", self.queue_offset);
        ext.put("maxMsgNums", self.max_msg_nums);
        ext.put("sysFlag", self.sys_flag);
        ext.put("commitOffset", self.commit_offset);
        ext.put("suspendTimeoutMillis", self.suspend_timeout_millis);
        ext.put_opt("subscription", &self.subscription);
        ext.put("subVersion", self.sub_version);
        ext.put_opt("expressionType", &self.expression_type);
        ext.put_opt("maxMsgBytes", &self.max_msg_bytes);
        ext.put_opt("requestSource", &self.request_source);
        ext.put_opt("proxyFrowardClientId", &self.proxy_forward_client_id);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            consumer_group: ext.string("consumerGroup")?,
            topic: ext.string("topic")?,
            queue_id: ext.i32("queueId")?,
            queue_offset: ext.i64("queueOffset")?,
            max_msg_nums: ext.i32("maxMsgNums")?,
            sys_flag: ext.i32("sysFlag")?,
            commit_offset: ext.i64("commitOffset")?,
            suspend_timeout_millis: ext.i64("suspendTimeoutMillis")?,
            subscription: ext.string_opt("subscription"),
            sub_version: ext.i64("subVersion")?,
            expression_type: ext.string_opt("expressionType"),
            max_msg_bytes: ext.i32_opt("maxMsgBytes")?,
            request_source: ext.i32_opt("requestSource")?,
            proxy_forward_client_id: ext.string_opt("proxyFrowardClientId"),
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

/// `PullMessageResponseHeader`: the four offsets Java unboxes are required even on NOT_FOUND / OFFSET_MOVED.
///
/// ```text
/// key                   type     req
/// suggestWhichBrokerId  Long     Y
/// nextBeginOffset       Long     Y
/// minOffset             Long     Y
/// maxOffset             Long     Y
/// offsetDelta           Long     N
/// topicSysFlag          Integer  N
/// groupSysFlag          Integer  N
/// forbiddenType         Integer  N
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PullMessageResponseHeader {
    pub suggest_which_broker_id: i64,
    pub next_begin_offset: i64,
    pub min_offset: i64,
    pub max_offset: i64,
    pub offset_delta: Option<i64>,
    pub topic_sys_flag: Option<i32>,
    pub group_sys_flag: Option<i32>,
    /// On NO_PERMISSION: 1 broker, 2 group, 3 topic, 4 broadcasting disabled, 5 subscription.
    pub forbidden_type: Option<i32>,
}

impl CommandHeader for PullMessageResponseHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("suggestWhichBrokerId", self.suggest_which_broker_id);
        ext.put("nextBeginOffset", self.next_begin_offset);
        ext.put("minOffset", self.min_offset);
        ext.put("maxOffset", self.max_offset);
        ext.put_opt("offsetDelta", &self.offset_delta);
        ext.put_opt("topicSysFlag", &self.topic_sys_flag);
        ext.put_opt("groupSysFlag", &self.group_sys_flag);
        ext.put_opt("forbiddenType", &self.forbidden_type);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            suggest_which_broker_id: ext.i64("suggestWhichBrokerId")?,
            next_begin_offset: ext.i64("nextBeginOffset")?,
            min_offset: ext.i64("minOffset")?,
            max_offset: ext.i64("maxOffset")?,
            offset_delta: ext.i64_opt("offsetDelta")?,
            topic_sys_flag: ext.i32_opt("topicSysFlag")?,
            group_sys_flag: ext.i32_opt("groupSysFlag")?,
            forbidden_type: ext.i32_opt("forbiddenType")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn pull_message_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("consumerGroup", "v_consumerGroup"),
            ("topic", "v_topic"),
            ("queueId", "3"),
            ("queueOffset", "1700000000000"),
            ("maxMsgNums", "3"),
            ("sysFlag", "3"),
            ("commitOffset", "1700000000000"),
            ("suspendTimeoutMillis", "1700000000000"),
            ("subscription", "v_subscription"),
            ("subVersion", "1700000000000"),
            ("expressionType", "v_expressionType"),
            ("maxMsgBytes", "3"),
            ("requestSource", "3"),
            ("proxyFrowardClientId", "v_proxyFrowardClientId"),
            ("bname", "broker-a"),
        ]);
        let h = PullMessageRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.consumer_group.as_str(), "v_consumerGroup");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn pull_message_request_header_missing_consumer_group_is_an_error() {
        let err = PullMessageRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(
            err,
            RemotingError::Header {
                field: "consumerGroup",
                ..
            }
        ));
    }

    #[test]
    fn pull_message_response_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("suggestWhichBrokerId", "1700000000000"),
            ("nextBeginOffset", "1700000000000"),
            ("minOffset", "1700000000000"),
            ("maxOffset", "1700000000000"),
            ("offsetDelta", "1700000000000"),
            ("topicSysFlag", "3"),
            ("groupSysFlag", "3"),
            ("forbiddenType", "3"),
        ]);
        let h = PullMessageResponseHeader::read_from(&ext).unwrap();
        assert_eq!(h.suggest_which_broker_id, 1700000000000);
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn pull_message_response_header_missing_suggest_which_broker_id_is_an_error() {
        let err = PullMessageResponseHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(
            err,
            RemotingError::Header {
                field: "suggestWhichBrokerId",
                ..
            }
        ));
    }
}
