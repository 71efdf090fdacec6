//! NOTIFICATION (200054), POLLING_INFO (200055) and PEEK_MESSAGE (200052) headers. PEEK answers
//! with `PopMessageResponseHeader` (only `restNum` meaningful).

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `NotificationRequestHeader`: is there anything to pop (waiting up to `pollTime`)?
///
/// ```text
/// key            type     req
/// consumerGroup  String   Y
/// topic          String   Y
/// queueId        int      Y   < 0: any queue
/// pollTime       long     Y
/// bornTime       long     Y   missing or 0: the broker's now
/// order          Boolean  N   default false
/// attemptId      String   N
/// + rpc          bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NotificationRequestHeader {
    pub consumer_group: String,
    pub topic: String,
    pub queue_id: i32,
    pub poll_time: i64,
    pub born_time: i64,
    pub order: bool,
    pub attempt_id: Option<String>,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for NotificationRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("consumerGroup", &self.consumer_group);
        ext.put("topic", &self.topic);
        ext.put("queueId", self.queue_id);
        ext.put("pollTime", self.poll_time);
        ext.put("bornTime", self.born_time);
        ext.put("order", self.order);
        ext.put_opt("attemptId", &self.attempt_id);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            consumer_group: ext.string("consumerGroup")?,
            topic: ext.string("topic")?,
            queue_id: ext.i32("queueId")?,
            poll_time: ext.i64("pollTime")?,
            born_time: ext.i64_opt("bornTime")?.unwrap_or(0),
            order: ext.bool_or("order", false),
            attempt_id: ext.string_opt("attemptId"),
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

/// `NotificationResponseHeader`.
///
/// ```text
/// key          type     req
/// hasMsg       boolean  Y
/// pollingFull  boolean  N
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NotificationResponseHeader {
    pub has_msg: bool,
    pub polling_full: bool,
}

impl CommandHeader for NotificationResponseHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("hasMsg", self.has_msg);
        ext.put("pollingFull", self.polling_full);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            has_msg: ext.bool_or("hasMsg", false),
            polling_full: ext.bool_or("pollingFull", false),
        })
    }
}

/// `PollingInfoRequestHeader` (and, with `maxMsgNums`, `PeekMessageRequestHeader`).
///
/// ```text
/// key            type     req
/// consumerGroup  String   Y
/// topic          String   Y
/// queueId        int      Y
/// maxMsgNums     int      Y   (PEEK only)
/// + rpc          bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PollingInfoRequestHeader {
    pub consumer_group: String,
    pub topic: String,
    pub queue_id: i32,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for PollingInfoRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("consumerGroup", &self.consumer_group);
        ext.put("topic", &self.topic);
        ext.put("queueId", self.queue_id);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            consumer_group: ext.string("consumerGroup")?,
            topic: ext.string("topic")?,
            queue_id: ext.i32("queueId")?,
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

/// `PollingInfoResponseHeader`: POP requests held for (topic, group, queueId).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PollingInfoResponseHeader {
    pub polling_num: i32,
}

impl CommandHeader for PollingInfoResponseHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("pollingNum", self.polling_num);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            polling_num: ext.i32("pollingNum")?,
        })
    }
}

/// `PeekMessageRequestHeader`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PeekMessageRequestHeader {
    pub queue: PollingInfoRequestHeader,
    pub max_msg_nums: i32,
}

impl CommandHeader for PeekMessageRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        self.queue.write_to(ext);
        ext.put("maxMsgNums", self.max_msg_nums);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            queue: PollingInfoRequestHeader::read_from(ext)?,
            max_msg_nums: ext.i32("maxMsgNums")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn headers_round_trip() {
        let ext = ext_from_pairs(&[
            ("consumerGroup", "G"),
            ("topic", "T"),
            ("queueId", "-1"),
            ("pollTime", "15000"),
            ("maxMsgNums", "4"),
        ]);
        let n = NotificationRequestHeader::read_from(&ext).unwrap();
        assert_eq!((n.queue_id, n.born_time, n.order), (-1, 0, false));
        let p = PeekMessageRequestHeader::read_from(&ext).unwrap();
        assert_eq!(p.max_msg_nums, 4);
        let mut out = ExtFields::new();
        NotificationResponseHeader {
            has_msg: true,
            polling_full: false,
        }
        .write_to(&mut out);
        assert!(NotificationResponseHeader::read_from(&out).unwrap().has_msg);
    }
}
