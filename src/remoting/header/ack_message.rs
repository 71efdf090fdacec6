//! ACK_MESSAGE (200051) and CHANGE_MESSAGE_INVISIBLETIME (200053) headers.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `AckMessageRequestHeader`: `topic` is the topic the message was read from (the pop retry
/// topic for a retried message), `extraInfo` the receipt (`POP_CK`), `offset` the message's
/// queue offset.
///
/// ```text
/// key            type     req
/// consumerGroup  String   Y
/// topic          String   Y
/// queueId        Integer  Y
/// extraInfo      String   Y
/// offset         Long     Y
/// liteTopic      String   N   (5.5)
/// + rpc          bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AckMessageRequestHeader {
    pub consumer_group: String,
    pub topic: String,
    pub queue_id: i32,
    pub extra_info: String,
    pub offset: i64,
    pub lite_topic: Option<String>,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for AckMessageRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("consumerGroup", &self.consumer_group);
        ext.put("topic", &self.topic);
        ext.put("queueId", self.queue_id);
        ext.put("extraInfo", &self.extra_info);
        ext.put("offset", self.offset);
        ext.put_opt("liteTopic", &self.lite_topic);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            consumer_group: ext.string("consumerGroup")?,
            topic: ext.string("topic")?,
            queue_id: ext.i32("queueId")?,
            extra_info: ext.string("extraInfo")?,
            offset: ext.i64("offset")?,
            lite_topic: ext.string_opt("liteTopic"),
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

/// `ChangeInvisibleTimeRequestHeader`: an ack's keys plus the new `invisibleTime` (ms from now).
///
/// ```text
/// key            type     req
/// consumerGroup  String   Y
/// topic          String   Y
/// queueId        Integer  Y
/// extraInfo      String   Y
/// offset         Long     Y
/// invisibleTime  Long     Y
/// liteTopic      String   N   (5.5)
/// + rpc          bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChangeInvisibleTimeRequestHeader {
    pub ack: AckMessageRequestHeader,
    pub invisible_time: i64,
    /// 5.5, lite: the whole pop becomes visible at the new time (default false).
    pub suspend: bool,
}

impl CommandHeader for ChangeInvisibleTimeRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        self.ack.write_to(ext);
        ext.put("invisibleTime", self.invisible_time);
        if self.suspend {
            ext.put("suspend", true);
        }
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            ack: AckMessageRequestHeader::read_from(ext)?,
            invisible_time: ext.i64("invisibleTime")?,
            suspend: ext.bool_or("suspend", false),
        })
    }
}

/// `ChangeInvisibleTimeResponseHeader`: all three always written.
///
/// ```text
/// key            type   req
/// popTime        long   Y
/// invisibleTime  long   Y
/// reviveQid      int    Y
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChangeInvisibleTimeResponseHeader {
    pub pop_time: i64,
    pub invisible_time: i64,
    pub revive_qid: i32,
}

impl CommandHeader for ChangeInvisibleTimeResponseHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("popTime", self.pop_time);
        ext.put("invisibleTime", self.invisible_time);
        ext.put("reviveQid", self.revive_qid);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            pop_time: ext.i64("popTime")?,
            invisible_time: ext.i64("invisibleTime")?,
            revive_qid: ext.i32("reviveQid")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn change_invisible_time_carries_the_ack_keys() {
        let ext = ext_from_pairs(&[
            ("consumerGroup", "G"),
            ("topic", "T"),
            ("queueId", "2"),
            ("extraInfo", "5 1700000000000 60000 3 0 broker-a 2 7"),
            ("offset", "7"),
            ("invisibleTime", "10000"),
        ]);
        let h = ChangeInvisibleTimeRequestHeader::read_from(&ext).unwrap();
        assert_eq!(
            (h.ack.queue_id, h.ack.offset, h.invisible_time),
            (2, 7, 10_000)
        );
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(
            ChangeInvisibleTimeRequestHeader::read_from(&out).unwrap(),
            h
        );
        assert!(AckMessageRequestHeader::read_from(&ext_from_pairs(&[("topic", "T")])).is_err());
    }
}
