//! PUSH_REPLY_MESSAGE_TO_CLIENT (326) request header, broker → requesting client.

use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `ReplyMessageRequestHeader`: the reply's send header plus where and when it was stored;
/// body = the reply body as sent.
///
/// ```text
/// key                    type     req
/// producerGroup          String   Y
/// topic                  String   Y
/// defaultTopic           String   Y
/// defaultTopicQueueNums  Integer  Y
/// queueId                Integer  Y
/// sysFlag                Integer  Y
/// bornTimestamp          Long     Y
/// flag                   Integer  Y
/// properties             String   N
/// reconsumeTimes         Integer  N
/// unitMode               boolean  N   default false
/// bornHost               String   Y   "ip:port" of the replier
/// storeHost              String   Y   "ip:port" of the broker
/// storeTimestamp         long     Y
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReplyMessageRequestHeader {
    pub producer_group: String,
    pub topic: String,
    pub default_topic: String,
    pub default_topic_queue_nums: i32,
    pub queue_id: i32,
    pub sys_flag: i32,
    pub born_timestamp: i64,
    pub flag: i32,
    pub properties: Option<String>,
    pub reconsume_times: Option<i32>,
    pub unit_mode: bool,
    pub born_host: String,
    pub store_host: String,
    pub store_timestamp: i64,
}

impl CommandHeader for ReplyMessageRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("producerGroup", &self.producer_group);
        ext.put("topic", &self.topic);
        ext.put("defaultTopic", &self.default_topic);
        ext.put("defaultTopicQueueNums", self.default_topic_queue_nums);
        ext.put("queueId", self.queue_id);
        ext.put("sysFlag", self.sys_flag);
        ext.put("bornTimestamp", self.born_timestamp);
        ext.put("flag", self.flag);
        ext.put_opt("properties", &self.properties);
        ext.put_opt("reconsumeTimes", &self.reconsume_times);
        ext.put("unitMode", self.unit_mode);
        ext.put("bornHost", &self.born_host);
        ext.put("storeHost", &self.store_host);
        ext.put("storeTimestamp", self.store_timestamp);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            producer_group: ext.string("producerGroup")?,
            topic: ext.string("topic")?,
            default_topic: ext.string("defaultTopic")?,
            default_topic_queue_nums: ext.i32("defaultTopicQueueNums")?,
            queue_id: ext.i32("queueId")?,
            sys_flag: ext.i32("sysFlag")?,
            born_timestamp: ext.i64("bornTimestamp")?,
            flag: ext.i32("flag")?,
            properties: ext.string_opt("properties"),
            reconsume_times: ext.i32_opt("reconsumeTimes")?,
            unit_mode: ext.bool_or("unitMode", false),
            born_host: ext.string("bornHost")?,
            store_host: ext.string("storeHost")?,
            store_timestamp: ext.i64("storeTimestamp")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn reply_message_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("producerGroup", "pg"),
            ("topic", "DefaultCluster_REPLY_TOPIC"),
            ("defaultTopic", "TBW102"),
            ("defaultTopicQueueNums", "4"),
            ("queueId", "0"),
            ("sysFlag", "0"),
            ("bornTimestamp", "1700000000000"),
            ("flag", "0"),
            ("properties", "CORRELATION_ID\u{1}c\u{2}"),
            ("reconsumeTimes", "0"),
            ("unitMode", "false"),
            ("bornHost", "127.0.0.1:50000"),
            ("storeHost", "127.0.0.1:10911"),
            ("storeTimestamp", "1700000000001"),
        ]);
        let h = ReplyMessageRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.store_host, "127.0.0.1:10911");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }
}
