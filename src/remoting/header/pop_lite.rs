//! Lite topics (Java 5.5): POP_LITE_MESSAGE (200070) and NOTIFY_UNSUBSCRIBE_LITE (200073, broker
//! to client) headers.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `PopLiteMessageRequestHeader`: pop from the lite topics the client is told have messages.
///
/// ```text
/// key            type    req
/// clientId       String  Y
/// consumerGroup  String  Y
/// topic          String  Y   the LITE parent topic
/// maxMsgNum      int     Y   at most 32
/// invisibleTime  long    Y
/// pollTime       long    Y
/// bornTime       long    Y   missing or 0: the broker's now
/// attemptId      String  N
/// + rpc
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PopLiteMessageRequestHeader {
    pub client_id: String,
    pub consumer_group: String,
    pub topic: String,
    pub max_msg_num: i32,
    pub invisible_time: i64,
    pub poll_time: i64,
    pub born_time: i64,
    pub attempt_id: Option<String>,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for PopLiteMessageRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("clientId", &self.client_id);
        ext.put("consumerGroup", &self.consumer_group);
        ext.put("topic", &self.topic);
        ext.put("maxMsgNum", self.max_msg_num);
        ext.put("invisibleTime", self.invisible_time);
        ext.put("pollTime", self.poll_time);
        ext.put("bornTime", self.born_time);
        ext.put_opt("attemptId", &self.attempt_id);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            client_id: ext.string("clientId")?,
            consumer_group: ext.string("consumerGroup")?,
            topic: ext.string("topic")?,
            max_msg_num: ext.i32("maxMsgNum")?,
            invisible_time: ext.i64("invisibleTime")?,
            poll_time: ext.i64("pollTime")?,
            born_time: ext.i64_opt("bornTime")?.unwrap_or(0),
            attempt_id: ext.string_opt("attemptId"),
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

/// `PopLiteMessageResponseHeader`: the broker sets popTime, invisibleTime, reviveQid (999) and
/// orderCountInfo; startOffsetInfo and msgOffsetInfo are never set.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PopLiteMessageResponseHeader {
    pub pop_time: i64,
    pub invisible_time: i64,
    pub revive_qid: i32,
    pub order_count_info: Option<String>,
}

impl CommandHeader for PopLiteMessageResponseHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("popTime", self.pop_time);
        ext.put("invisibleTime", self.invisible_time);
        ext.put("reviveQid", self.revive_qid);
        ext.put_opt("orderCountInfo", &self.order_count_info);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            pop_time: ext.i64("popTime")?,
            invisible_time: ext.i64("invisibleTime")?,
            revive_qid: ext.i32("reviveQid")?,
            order_count_info: ext.string_opt("orderCountInfo"),
        })
    }
}

/// `NotifyUnsubscribeLiteRequestHeader` (oneway, broker to client): the client lost `liteTopic`
/// (the lite name, not the LMQ) to another client of an exclusive group.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NotifyUnsubscribeLiteRequestHeader {
    pub lite_topic: String,
    pub consumer_group: String,
    pub client_id: String,
}

impl CommandHeader for NotifyUnsubscribeLiteRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("liteTopic", &self.lite_topic);
        ext.put("consumerGroup", &self.consumer_group);
        ext.put("clientId", &self.client_id);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            lite_topic: ext.string("liteTopic")?,
            consumer_group: ext.string("consumerGroup")?,
            client_id: ext.string("clientId")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pop_lite_header_round_trips_and_tolerates_a_missing_born_time() {
        let h = PopLiteMessageRequestHeader {
            client_id: "c1".into(),
            consumer_group: "G".into(),
            topic: "P".into(),
            max_msg_num: 32,
            invisible_time: 30_000,
            poll_time: 15_000,
            born_time: 7,
            attempt_id: Some("a".into()),
            rpc: RpcRequestHeader::default(),
        };
        let mut ext = ExtFields::default();
        h.write_to(&mut ext);
        assert_eq!(PopLiteMessageRequestHeader::read_from(&ext).unwrap(), h);
        ext.remove("bornTime");
        assert_eq!(
            PopLiteMessageRequestHeader::read_from(&ext)
                .unwrap()
                .born_time,
            0
        );
        ext.remove("clientId");
        assert!(PopLiteMessageRequestHeader::read_from(&ext).is_err());
    }
}
