//! What POP keeps on disk and hands out, in the Java broker's shapes: the checkpoint (CK) and ack
//! records of the revive topic (`PopCheckPoint`, `AckMsg`, `BatchAckMsg` as fastjson writes them,
//! short names sorted), the receipt a popped message carries (`POP_CK`, Java `ExtraInfoUtil`), the
//! offset-info strings of a POP answer, and the pop retry topic names (Java `KeyBuilder`).

use serde::{Deserialize, Serialize};

use crate::common::topic::RETRY_GROUP_TOPIC_PREFIX;

/// Java `KeyBuilder.POP_ORDER_REVIVE_QUEUE`: the revive queue id of an orderly pop's receipt.
pub const ORDER_REVIVE_QUEUE: i32 = 999;
/// Tags of the revive records (Java `PopAckConstants`).
pub const CK_TAG: &str = "ck";
pub const ACK_TAG: &str = "ack";
pub const BATCH_ACK_TAG: &str = "bAck";
/// The group whose offsets on the revive topic are the revive progress.
pub const REVIVE_GROUP: &str = "CID_RMQ_SYS_REVIVE_GROUP";
/// Java `PopAckConstants.ackTimeInterval`: a CK is due this long before its revive time.
pub const ACK_TIME_INTERVAL: i64 = 1_000;

/// `PopCheckPoint`: one pop of one queue. Fields in fastjson's (sorted) order; `reviveTime` is
/// written (a Java getter) and ignored on read.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PopCheckPoint {
    #[serde(rename = "bm", alias = "bitMap")]
    pub bit_map: i32,
    #[serde(
        rename = "bn",
        alias = "brokerName",
        skip_serializing_if = "Option::is_none"
    )]
    pub broker_name: Option<String>,
    #[serde(rename = "c", alias = "cid", alias = "cId")]
    pub cid: String,
    #[serde(
        rename = "d",
        alias = "queueOffsetDiff",
        skip_serializing_if = "Option::is_none"
    )]
    pub queue_offset_diff: Option<Vec<i32>>,
    #[serde(rename = "it", alias = "invisibleTime")]
    pub invisible_time: i64,
    #[serde(rename = "n", alias = "num")]
    pub num: i32,
    #[serde(rename = "pt", alias = "popTime")]
    pub pop_time: i64,
    #[serde(rename = "q", alias = "queueId")]
    pub queue_id: i32,
    #[serde(rename = "reviveTime", skip_deserializing)]
    pub revive_time_written: i64,
    #[serde(rename = "ro", alias = "reviveOffset")]
    pub revive_offset: i64,
    #[serde(
        rename = "rp",
        alias = "rePutTimes",
        skip_serializing_if = "Option::is_none"
    )]
    pub re_put_times: Option<String>,
    #[serde(rename = "so", alias = "startOffset")]
    pub start_offset: i64,
    #[serde(rename = "t", alias = "topic")]
    pub topic: String,
}

impl PopCheckPoint {
    pub fn revive_time(&self) -> i64 {
        self.pop_time.saturating_add(self.invisible_time)
    }

    /// The queue offset of message `i` (`so + d[i]`, or `so + i` for a CK without `d`).
    pub fn offset_at(&self, i: usize) -> i64 {
        match &self.queue_offset_diff {
            Some(d) => self
                .start_offset
                .saturating_add(d.get(i).copied().unwrap_or(i as i32) as i64),
            None => self.start_offset.saturating_add(i as i64),
        }
    }

    /// Java `indexOfAck`: the position of `offset` among the CK's messages.
    pub fn index_of_ack(&self, offset: i64) -> Option<usize> {
        if offset < self.start_offset {
            return None;
        }
        match &self.queue_offset_diff {
            Some(d) => d
                .iter()
                .position(|&x| self.start_offset + x as i64 == offset),
            None => {
                let i = (offset - self.start_offset) as usize;
                (i < self.num.max(0) as usize).then_some(i)
            }
        }
    }

    /// Java's merge key (plain concatenation) that pairs acks with this CK.
    pub fn merge_key(&self, local_broker: &str) -> String {
        merge_key(
            &self.topic,
            &self.cid,
            self.queue_id,
            self.start_offset,
            self.pop_time,
            self.broker_name.as_deref().unwrap_or(local_broker),
        )
    }

    /// The JSON body (fastjson's shape, `reviveTime` included).
    pub fn to_json(&self) -> String {
        let mut ck = self.clone();
        ck.revive_time_written = self.revive_time();
        serde_json::to_string(&ck).unwrap_or_default()
    }

    /// Java `genCkUniqueId`.
    pub fn uniq_key(&self) -> String {
        format!(
            "{}@{}@{}@{}@{}@{}@ck",
            self.topic,
            self.queue_id,
            self.start_offset,
            self.cid,
            self.pop_time,
            self.broker_name.as_deref().unwrap_or("null")
        )
    }
}

/// `AckMsg` / `BatchAckMsg` (`ao` is -1 and `aol` lists the offsets for a batch).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AckMsg {
    #[serde(rename = "ao", alias = "ackOffset")]
    pub ack_offset: i64,
    #[serde(
        rename = "aol",
        alias = "ackOffsetList",
        skip_serializing_if = "Option::is_none"
    )]
    pub ack_offset_list: Option<Vec<i64>>,
    #[serde(
        rename = "bn",
        alias = "brokerName",
        skip_serializing_if = "Option::is_none"
    )]
    pub broker_name: Option<String>,
    #[serde(rename = "c", alias = "consumerGroup")]
    pub consumer_group: String,
    #[serde(rename = "pt", alias = "popTime")]
    pub pop_time: i64,
    #[serde(rename = "q", alias = "queueId")]
    pub queue_id: i32,
    #[serde(rename = "so", alias = "startOffset")]
    pub start_offset: i64,
    #[serde(rename = "t", alias = "topic")]
    pub topic: String,
}

impl AckMsg {
    pub fn merge_key(&self, local_broker: &str) -> String {
        let bn = match self.broker_name.as_deref() {
            Some(b) if !b.trim().is_empty() => b,
            _ => local_broker,
        };
        merge_key(
            &self.topic,
            &self.consumer_group,
            self.queue_id,
            self.start_offset,
            self.pop_time,
            bn,
        )
    }

    /// The offsets this record acks.
    pub fn offsets(&self) -> Vec<i64> {
        match &self.ack_offset_list {
            Some(list) => list.clone(),
            None => vec![self.ack_offset],
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Java `genAckUniqueId` (a batch ack written by the ack processor has `ao` -1 here).
    pub fn uniq_key(&self) -> String {
        format!(
            "{}@{}@{}@{}@{}@{}@ack",
            self.topic,
            self.queue_id,
            self.ack_offset,
            self.consumer_group,
            self.pop_time,
            self.broker_name.as_deref().unwrap_or("null")
        )
    }
}

fn merge_key(topic: &str, group: &str, q: i32, so: i64, pt: i64, bn: &str) -> String {
    format!("{topic}{group}{q}{so}{pt}{bn}")
}

/// The retry mark of a topic: "2" a V2 pop retry topic, "1" any other retry topic, else "0".
pub fn retry_mark(topic: &str) -> &'static str {
    if topic.starts_with(RETRY_GROUP_TOPIC_PREFIX) {
        if topic.contains('+') {
            "2"
        } else {
            "1"
        }
    } else {
        "0"
    }
}

/// `%RETRY%<group>_<topic>` (V1) or `%RETRY%<group>+<topic>` (V2).
pub fn pop_retry_topic(topic: &str, group: &str, v2: bool) -> String {
    let sep = if v2 { '+' } else { '_' };
    format!("{RETRY_GROUP_TOPIC_PREFIX}{group}{sep}{topic}")
}

/// Java `KeyBuilder.parseNormalTopic(topic, group)`.
pub fn normal_topic<'a>(topic: &'a str, group: &str) -> &'a str {
    let Some(rest) = topic.strip_prefix(RETRY_GROUP_TOPIC_PREFIX) else {
        return topic;
    };
    let Some(rest) = rest.strip_prefix(group) else {
        return rest.get(group.len() + 1..).unwrap_or("");
    };
    rest.get(1..).unwrap_or("")
}

/// Java `ExtraInfoUtil.getRealTopic`: the topic a receipt's message was read from.
pub fn real_topic(topic: &str, group: &str, mark: &str) -> String {
    match mark {
        "1" => pop_retry_topic(topic, group, false),
        "2" => pop_retry_topic(topic, group, true),
        _ => topic.to_string(),
    }
}

/// A receipt (`extraInfo`, property `POP_CK`):
/// `<ckStartOffset> <popTime> <invisibleTime> <reviveQid> <retryMark> <brokerName> <queueId> <offset>`
/// (old receipts stop after `queueId`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    pub ck_start_offset: i64,
    pub pop_time: i64,
    pub invisible_time: i64,
    pub revive_qid: i32,
    pub retry_mark: String,
    pub broker_name: String,
    pub queue_id: Option<i32>,
    pub queue_offset: Option<i64>,
}

impl Receipt {
    pub fn parse(text: &str) -> Option<Self> {
        let f: Vec<&str> = text.split(' ').collect();
        if f.len() < 6 {
            return None;
        }
        Some(Self {
            ck_start_offset: f[0].trim().parse().ok()?,
            pop_time: f[1].trim().parse().ok()?,
            invisible_time: f[2].trim().parse().ok()?,
            revive_qid: f[3].trim().parse().ok()?,
            retry_mark: f[4].to_string(),
            broker_name: f[5].to_string(),
            queue_id: f.get(6).and_then(|v| v.trim().parse().ok()),
            queue_offset: f.get(7).and_then(|v| v.trim().parse().ok()),
        })
    }

    /// Java `buildExtraInfo` with the message's queue offset.
    #[allow(clippy::too_many_arguments)]
    pub fn build(
        ck_start_offset: i64,
        pop_time: i64,
        invisible_time: i64,
        revive_qid: i32,
        topic: &str,
        broker_name: &str,
        queue_id: i32,
        queue_offset: i64,
    ) -> String {
        format!(
            "{ck_start_offset} {pop_time} {invisible_time} {revive_qid} {} {broker_name} {queue_id} {queue_offset}",
            retry_mark(topic)
        )
    }
}

/// Appends `<mark> <queueId> <startOffset>` to a `startOffsetInfo` string.
pub fn push_start_offset_info(out: &mut String, topic: &str, queue_id: i32, start: i64) {
    if !out.is_empty() {
        out.push(';');
    }
    out.push_str(&format!("{} {queue_id} {start}", retry_mark(topic)));
}

/// Appends `<mark> <queueId> <o1>,<o2>,...` to a `msgOffsetInfo` string.
pub fn push_msg_offset_info(out: &mut String, topic: &str, queue_id: i32, offsets: &[i64]) {
    if !out.is_empty() {
        out.push(';');
    }
    let list: Vec<String> = offsets.iter().map(|o| o.to_string()).collect();
    out.push_str(&format!(
        "{} {queue_id} {}",
        retry_mark(topic),
        list.join(",")
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoint_json_as_fastjson_writes_it() {
        let ck = PopCheckPoint {
            broker_name: Some("broker-a".into()),
            cid: "GID_A".into(),
            queue_offset_diff: Some(vec![0, 1, 3]),
            invisible_time: 60_000,
            num: 3,
            pop_time: 1_700_000_000_000,
            queue_id: 2,
            start_offset: 120,
            topic: "TopicA".into(),
            ..Default::default()
        };
        assert_eq!(
            ck.to_json(),
            r#"{"bm":0,"bn":"broker-a","c":"GID_A","d":[0,1,3],"it":60000,"n":3,"pt":1700000000000,"q":2,"reviveTime":1700000060000,"ro":0,"so":120,"t":"TopicA"}"#
        );
        let back: PopCheckPoint =
            crate::remoting::body::fastjson::from_slice(ck.to_json().as_bytes()).unwrap();
        assert_eq!(back.revive_time(), 1_700_000_060_000);
        assert_eq!((back.offset_at(2), back.index_of_ack(123)), (123, Some(2)));
        assert_eq!(back.index_of_ack(122), None);
        assert_eq!(
            ck.uniq_key(),
            "TopicA@2@120@GID_A@1700000000000@broker-a@ck"
        );
    }

    #[test]
    fn acks_pair_with_their_checkpoint() {
        let ck = PopCheckPoint {
            cid: "G".into(),
            topic: "T".into(),
            queue_id: 1,
            start_offset: 5,
            pop_time: 9,
            broker_name: Some("b".into()),
            ..Default::default()
        };
        let ack = AckMsg {
            ack_offset: 6,
            consumer_group: "G".into(),
            topic: "T".into(),
            queue_id: 1,
            start_offset: 5,
            pop_time: 9,
            broker_name: Some("b".into()),
            ..Default::default()
        };
        assert_eq!(ck.merge_key("x"), ack.merge_key("x"));
        assert_eq!(
            ack.to_json(),
            r#"{"ao":6,"bn":"b","c":"G","pt":9,"q":1,"so":5,"t":"T"}"#
        );
        let batch: AckMsg = crate::remoting::body::fastjson::from_slice(
            br#"{"ao":-1,"aol":[5,7],"c":"G","pt":9,"q":1,"so":5,"t":"T"}"#,
        )
        .unwrap();
        assert_eq!(batch.offsets(), vec![5, 7]);
        assert_eq!(batch.merge_key("b"), ck.merge_key("x"));
    }

    #[test]
    fn receipts_and_retry_topics() {
        let r = Receipt::build(5, 1_700, 60_000, 3, "%RETRY%G_T", "broker-a", 0, 7);
        assert_eq!(r, "5 1700 60000 3 1 broker-a 0 7");
        let p = Receipt::parse(&r).unwrap();
        assert_eq!((p.revive_qid, p.queue_offset), (3, Some(7)));
        assert!(Receipt::parse("1 2 x 4 0 b").is_none());
        assert_eq!(real_topic("T", "G", "1"), "%RETRY%G_T");
        assert_eq!(real_topic("T", "G", "2"), "%RETRY%G+T");
        assert_eq!(normal_topic("%RETRY%G_T", "G"), "T");
        assert_eq!(normal_topic("%RETRY%G+T", "G"), "T");
        assert_eq!(normal_topic("T", "G"), "T");
        assert_eq!(retry_mark("%RETRY%G"), "1");
        let mut s = String::new();
        push_msg_offset_info(&mut s, "T", 1, &[3, 4]);
        push_msg_offset_info(&mut s, "%RETRY%G_T", 0, &[0]);
        assert_eq!(s, "0 1 3,4;1 0 0");
    }
}
