//! POP_MESSAGE (200050) request and response headers; PEEK's response reuses the response header.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `PopMessageRequestHeader`. `queueId` < 0 pops every readable queue of the topic on this
/// broker; `initMode` 0 = MIN, 1 = MAX (where a group without an offset starts).
///
/// ```text
/// key            type     req
/// consumerGroup  String   Y
/// topic          String   Y   the subscribed topic, never a retry topic
/// queueId        int      Y
/// maxMsgNums     int      Y   at most 32
/// invisibleTime  long     Y   ms
/// pollTime       long     Y   ms of long polling
/// bornTime       long     Y   client clock; missing or 0: the broker's now
/// initMode       int      Y
/// expType        String   N   TAG | SQL92
/// exp            String   N   empty: *
/// order          Boolean  N   default false
/// attemptId      String   N
/// + rpc          bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PopMessageRequestHeader {
    pub consumer_group: String,
    pub topic: String,
    pub queue_id: i32,
    pub max_msg_nums: i32,
    pub invisible_time: i64,
    pub poll_time: i64,
    pub born_time: i64,
    pub init_mode: i32,
    pub exp_type: Option<String>,
    pub exp: Option<String>,
    pub order: bool,
    pub attempt_id: Option<String>,
    pub rpc: RpcRequestHeader,
}

impl PopMessageRequestHeader {
    /// Java `isTimeoutTooMuch`: the request spent more than 500 ms beyond its poll time on the way.
    pub fn is_timeout_too_much(&self, now: i64) -> bool {
        now.saturating_sub(self.born_time)
            .saturating_sub(self.poll_time)
            > 500
    }
}

impl CommandHeader for PopMessageRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("consumerGroup", &self.consumer_group);
        ext.put("topic", &self.topic);
        ext.put("queueId", self.queue_id);
        ext.put("maxMsgNums", self.max_msg_nums);
        ext.put("invisibleTime", self.invisible_time);
        ext.put("pollTime", self.poll_time);
        ext.put("bornTime", self.born_time);
        ext.put("initMode", self.init_mode);
        ext.put_opt("expType", &self.exp_type);
        ext.put_opt("exp", &self.exp);
        ext.put("order", self.order);
        ext.put_opt("attemptId", &self.attempt_id);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            consumer_group: ext.string("consumerGroup")?,
            topic: ext.string("topic")?,
            queue_id: ext.i32("queueId")?,
            max_msg_nums: ext.i32("maxMsgNums")?,
            invisible_time: ext.i64("invisibleTime")?,
            poll_time: ext.i64("pollTime")?,
            // Java fills a missing or "0" bornTime with its own clock before decoding
            born_time: ext.i64_opt("bornTime")?.unwrap_or(0),
            init_mode: ext.i32("initMode")?,
            exp_type: ext.string_opt("expType"),
            exp: ext.string_opt("exp"),
            order: ext.bool_or("order", false),
            attempt_id: ext.string_opt("attemptId"),
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

/// `PopMessageResponseHeader`: the four numbers are always written (0 when unset); the info
/// strings only when set.
///
/// ```text
/// key              type     req
/// popTime          long     Y
/// invisibleTime    long     Y
/// reviveQid        int      Y
/// restNum          long     Y
/// startOffsetInfo  String   N   "<retryMark> <queueId> <startOffset>;..."
/// msgOffsetInfo    String   N   "<retryMark> <queueId> <off>,<off>;..."
/// orderCountInfo   String   N
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PopMessageResponseHeader {
    pub pop_time: i64,
    pub invisible_time: i64,
    pub revive_qid: i32,
    pub rest_num: i64,
    pub start_offset_info: Option<String>,
    pub msg_offset_info: Option<String>,
    pub order_count_info: Option<String>,
}

impl CommandHeader for PopMessageResponseHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("popTime", self.pop_time);
        ext.put("invisibleTime", self.invisible_time);
        ext.put("reviveQid", self.revive_qid);
        ext.put("restNum", self.rest_num);
        ext.put_opt("startOffsetInfo", &self.start_offset_info);
        ext.put_opt("msgOffsetInfo", &self.msg_offset_info);
        ext.put_opt("orderCountInfo", &self.order_count_info);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            pop_time: ext.i64("popTime")?,
            invisible_time: ext.i64("invisibleTime")?,
            revive_qid: ext.i32("reviveQid")?,
            rest_num: ext.i64("restNum")?,
            start_offset_info: ext.string_opt("startOffsetInfo"),
            msg_offset_info: ext.string_opt("msgOffsetInfo"),
            order_count_info: ext.string_opt("orderCountInfo"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn pop_request_as_the_java_push_consumer_sends_it() {
        let ext = ext_from_pairs(&[
            ("consumerGroup", "G"),
            ("topic", "T"),
            ("queueId", "-1"),
            ("maxMsgNums", "32"),
            ("invisibleTime", "60000"),
            ("pollTime", "15000"),
            ("bornTime", "1700000000000"),
            ("initMode", "0"),
            ("expType", "TAG"),
            ("exp", "*"),
            ("order", "false"),
            ("bname", "broker-a"),
        ]);
        let h = PopMessageRequestHeader::read_from(&ext).unwrap();
        assert_eq!((h.queue_id, h.max_msg_nums, h.init_mode), (-1, 32, 0));
        assert!(!h.order);
        assert!(!h.is_timeout_too_much(1_700_000_015_500));
        assert!(h.is_timeout_too_much(1_700_000_015_501));
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(PopMessageRequestHeader::read_from(&out).unwrap(), h);
    }

    #[test]
    fn response_writes_the_numbers_always_and_the_infos_when_set() {
        let mut out = ExtFields::new();
        PopMessageResponseHeader::default().write_to(&mut out);
        assert_eq!(out.len(), 4);
        let h = PopMessageResponseHeader {
            start_offset_info: Some("0 1 5".into()),
            ..Default::default()
        };
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(PopMessageResponseHeader::read_from(&out).unwrap(), h);
    }
}
