//! SEND_MESSAGE (10, long keys) and SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE (310/320, keys `a`..`n`)
//! request headers, and the conversion between them (`SendMessageRequestHeaderV2`).

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;
use crate::remoting::request_code::RequestCode;

/// `SendMessageRequestHeader` (code 10; Go uses it for single messages). The broker's view of
/// every send: V2 requests are converted to this.
///
/// ```text
/// key                    V2  type     req
/// producerGroup          a   String   Y
/// topic                  b   String   Y
/// defaultTopic           c   String   Y   clients send TBW102
/// defaultTopicQueueNums  d   Integer  Y
/// queueId                e   Integer  Y   negative: broker picks one
/// sysFlag                f   Integer  Y   MessageSysFlag bits
/// bornTimestamp          g   Long     Y
/// flag                   h   Integer  Y
/// properties             i   String   N   properties string (0x01/0x02)
/// reconsumeTimes         j   Integer  N
/// unitMode               k   Boolean  N
/// maxReconsumeTimes      l   Integer  N
/// batch                  m   Boolean  N   body is a batch (decides batch, not the code)
/// bname                  n   String   N   target broker name
/// + rpc                      ns nsd oway lo
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SendMessageRequestHeader {
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
    pub unit_mode: Option<bool>,
    pub batch: Option<bool>,
    pub max_reconsume_times: Option<i32>,
    /// `bname` here, `n` in V2.
    pub rpc: RpcRequestHeader,
}

impl SendMessageRequestHeader {
    /// `SendMessageRequestHeader.parseRequestHeader`: codes 310, 320 and 325 (reply V2) carry
    /// the short keys, everything else the long ones.
    pub fn read_for_code(code: i32, ext: &ExtFields) -> Result<Self, RemotingError> {
        let short = matches!(
            RequestCode::from_code(code),
            Some(
                RequestCode::SEND_MESSAGE_V2
                    | RequestCode::SEND_BATCH_MESSAGE
                    | RequestCode::SEND_REPLY_MESSAGE_V2
            )
        );
        if short {
            // V2 only renames the keys (a, b, c, ...): `From` moves its fields, copying nothing.
            SendMessageRequestHeaderV2::read_from(ext).map(Self::from)
        } else {
            Self::read_from(ext)
        }
    }

    pub fn is_batch(&self) -> bool {
        self.batch.unwrap_or(false)
    }
}

impl CommandHeader for SendMessageRequestHeader {
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
        ext.put_opt("unitMode", &self.unit_mode);
        ext.put_opt("batch", &self.batch);
        ext.put_opt("maxReconsumeTimes", &self.max_reconsume_times);
        self.rpc.write_to(ext);
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
            unit_mode: ext.bool_opt("unitMode"),
            batch: ext.bool_opt("batch"),
            max_reconsume_times: ext.i32_opt("maxReconsumeTimes")?,
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

/// `SendMessageRequestHeaderV2`: the same fields under one-letter keys (see the table on
/// [`SendMessageRequestHeader`]); `n` is the target broker name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SendMessageRequestHeaderV2 {
    pub a: String,
    pub b: String,
    pub c: String,
    pub d: i32,
    pub e: i32,
    pub f: i32,
    pub g: i64,
    pub h: i32,
    pub i: Option<String>,
    pub j: Option<i32>,
    pub k: Option<bool>,
    pub l: Option<i32>,
    pub m: Option<bool>,
    pub n: Option<String>,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for SendMessageRequestHeaderV2 {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("a", &self.a);
        ext.put("b", &self.b);
        ext.put("c", &self.c);
        ext.put("d", self.d);
        ext.put("e", self.e);
        ext.put("f", self.f);
        ext.put("g", self.g);
        ext.put("h", self.h);
        ext.put_opt("i", &self.i);
        ext.put_opt("j", &self.j);
        ext.put_opt("k", &self.k);
        ext.put_opt("l", &self.l);
        ext.put_opt("m", &self.m);
        ext.put_opt("n", &self.n);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            a: ext.string("a")?,
            b: ext.string("b")?,
            c: ext.string("c")?,
            d: ext.i32("d")?,
            e: ext.i32("e")?,
            f: ext.i32("f")?,
            g: ext.i64("g")?,
            h: ext.i32("h")?,
            i: ext.string_opt("i"),
            j: ext.i32_opt("j")?,
            k: ext.bool_opt("k"),
            l: ext.i32_opt("l")?,
            m: ext.bool_opt("m"),
            n: ext.string_opt("n"),
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

/// `createSendMessageRequestHeaderV1`: `n` becomes the V1 `bname`.
impl From<SendMessageRequestHeaderV2> for SendMessageRequestHeader {
    fn from(v2: SendMessageRequestHeaderV2) -> Self {
        let mut rpc = v2.rpc;
        if v2.n.is_some() {
            rpc.broker_name = v2.n;
        }
        Self {
            producer_group: v2.a,
            topic: v2.b,
            default_topic: v2.c,
            default_topic_queue_nums: v2.d,
            queue_id: v2.e,
            sys_flag: v2.f,
            born_timestamp: v2.g,
            flag: v2.h,
            properties: v2.i,
            reconsume_times: v2.j,
            unit_mode: v2.k,
            max_reconsume_times: v2.l,
            batch: v2.m,
            rpc,
        }
    }
}

/// `createSendMessageRequestHeaderV2`: the V1 `bname` becomes `n` (and stays in `rpc`).
impl From<SendMessageRequestHeader> for SendMessageRequestHeaderV2 {
    fn from(v1: SendMessageRequestHeader) -> Self {
        Self {
            a: v1.producer_group,
            b: v1.topic,
            c: v1.default_topic,
            d: v1.default_topic_queue_nums,
            e: v1.queue_id,
            f: v1.sys_flag,
            g: v1.born_timestamp,
            h: v1.flag,
            i: v1.properties,
            j: v1.reconsume_times,
            k: v1.unit_mode,
            l: v1.max_reconsume_times,
            m: v1.batch,
            n: v1.rpc.broker_name.clone(),
            rpc: v1.rpc,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    /// extFields of a Java 5.3 `DefaultMQProducer` synchronous send (SEND_MESSAGE_V2).
    fn java_v2_ext() -> ExtFields {
        ext_from_pairs(&[
            ("a", "PG"),
            ("b", "TopicTest"),
            ("c", "TBW102"),
            ("d", "4"),
            ("e", "1"),
            ("f", "0"),
            ("g", "1700000000000"),
            ("h", "0"),
            (
                "i",
                "TAGS\u{1}TagA\u{2}UNIQ_KEY\u{1}AC1100010000\u{2}WAIT\u{1}true\u{2}",
            ),
            ("j", "0"),
            ("k", "false"),
            ("m", "false"),
            ("n", "broker-a"),
            ("bname", "broker-a"),
        ])
    }

    #[test]
    fn java_v2_send_decodes_into_v1() {
        let code = RequestCode::SEND_MESSAGE_V2;
        let h = SendMessageRequestHeader::read_for_code(code.code(), &java_v2_ext()).unwrap();
        assert_eq!(
            (h.producer_group.as_str(), h.topic.as_str()),
            ("PG", "TopicTest")
        );
        assert_eq!(
            (h.queue_id, h.born_timestamp, h.default_topic_queue_nums),
            (1, 1700000000000, 4)
        );
        assert_eq!(h.rpc.broker_name.as_deref(), Some("broker-a"));
        assert!(!h.is_batch());
        assert_eq!(h.max_reconsume_times, None);
    }

    #[test]
    fn v2_keys_round_trip_through_v1() {
        let v2 = SendMessageRequestHeaderV2::read_from(&java_v2_ext()).unwrap();
        let back = SendMessageRequestHeaderV2::from(SendMessageRequestHeader::from(v2.clone()));
        assert_eq!(back, v2);
        let mut out = ExtFields::new();
        back.write_to(&mut out);
        assert_eq!(out, java_v2_ext());
    }

    #[test]
    fn go_send_message_uses_long_keys() {
        let ext = ext_from_pairs(&[
            ("producerGroup", "PG"),
            ("topic", "T"),
            ("queueId", "0"),
            ("sysFlag", "0"),
            ("bornTimestamp", "1700000000000"),
            ("flag", "0"),
            ("reconsumeTimes", "0"),
            ("unitMode", "false"),
            ("maxReconsumeTimes", "0"),
            ("defaultTopic", "TBW102"),
            ("defaultTopicQueueNums", "4"),
            ("batch", "false"),
            ("properties", ""),
            ("bname", "broker-a"),
        ]);
        let h = SendMessageRequestHeader::read_for_code(RequestCode::SEND_MESSAGE.code(), &ext)
            .unwrap();
        assert_eq!((h.max_reconsume_times, h.unit_mode), (Some(0), Some(false)));
        assert_eq!(h.properties.as_deref(), Some(""));
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        let mut want: Vec<_> = ext.iter().collect();
        let mut got: Vec<_> = out.iter().collect();
        want.sort();
        got.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn batch_code_reads_short_keys_and_bad_numbers_fail() {
        let mut ext = java_v2_ext();
        ext.insert("m", "true");
        let h =
            SendMessageRequestHeader::read_for_code(RequestCode::SEND_BATCH_MESSAGE.code(), &ext)
                .unwrap();
        assert!(h.is_batch());
        ext.insert("g", "soon");
        let err = SendMessageRequestHeaderV2::read_from(&ext).unwrap_err();
        assert!(matches!(err, RemotingError::Header { field: "g", .. }));
        assert!(SendMessageRequestHeader::read_from(&java_v2_ext()).is_err());
    }
}
