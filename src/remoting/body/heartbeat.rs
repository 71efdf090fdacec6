//! HEART_BEAT (34) body `HeartbeatData` with `ProducerData`, `ConsumerData` and the consumer enums
//! (`ConsumeType`, `MessageModel`, `ConsumeFromWhere`), in Java's and Go's shapes.
//!
//! ```text
//! {"clientID":"ip@pid#nanos","consumerDataSet":[ConsumerData],"heartbeatFingerprint":0,
//!  "producerDataSet":[{"groupName":"PG"}],"withoutSub":false}
//! ConsumerData: {"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","consumeType":"CONSUME_PASSIVELY",
//!  "groupName":"G","messageModel":"CLUSTERING","subscriptionDataSet":[SubscriptionData],"unitMode":false}
//! ```
//! Go omits `heartbeatFingerprint`/`withoutSub`; enums are read by name or ordinal.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::fastjson;
use super::subscription_data::SubscriptionData;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct HeartbeatData {
    #[serde(rename = "clientID")]
    pub client_id: String,
    #[serde(rename = "consumerDataSet")]
    pub consumer_data_set: Vec<ConsumerData>,
    /// 5.x Java only; non-zero selects the "heartbeat V2" path.
    #[serde(rename = "heartbeatFingerprint")]
    pub heartbeat_fingerprint: i32,
    #[serde(rename = "producerDataSet")]
    pub producer_data_set: Vec<ProducerData>,
    #[serde(rename = "withoutSub", alias = "isWithoutSub")]
    pub without_sub: bool,
}

// `encode` cannot fail: no map keys besides strings.
fastjson::fastjson_body!(HeartbeatData);

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ProducerData {
    pub group_name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ConsumerData {
    pub consume_from_where: ConsumeFromWhere,
    pub consume_type: ConsumeType,
    pub group_name: String,
    pub message_model: MessageModel,
    pub subscription_data_set: Vec<SubscriptionData>,
    pub unit_mode: bool,
}

/// Reads the enum from `NAMES` by name or ordinal.
fn read_enum<'de, D: Deserializer<'de>, T: Copy>(
    d: D,
    names: &[&str],
    all: &[T],
) -> Result<T, D::Error> {
    let i = fastjson::java_enum_index(d, names)?;
    all.get(i)
        .copied()
        .ok_or_else(|| serde::de::Error::custom("enum ordinal out of range"))
}

/// `ConsumeType`: pull, push or pop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ConsumeType {
    ConsumeActively,
    #[default]
    ConsumePassively,
    ConsumePop,
}

impl ConsumeType {
    pub const NAMES: [&'static str; 3] = ["CONSUME_ACTIVELY", "CONSUME_PASSIVELY", "CONSUME_POP"];
    const ALL: [Self; 3] = [
        Self::ConsumeActively,
        Self::ConsumePassively,
        Self::ConsumePop,
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

impl Serialize for ConsumeType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for ConsumeType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read_enum(d, &Self::NAMES, &Self::ALL)
    }
}

/// `MessageModel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MessageModel {
    Broadcasting,
    #[default]
    Clustering,
}

impl MessageModel {
    pub const NAMES: [&'static str; 2] = ["BROADCASTING", "CLUSTERING"];
    const ALL: [Self; 2] = [Self::Broadcasting, Self::Clustering];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

impl Serialize for MessageModel {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for MessageModel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read_enum(d, &Self::NAMES, &Self::ALL)
    }
}

/// `ConsumeFromWhere`, in Java's declaration order (ordinals matter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ConsumeFromWhere {
    #[default]
    ConsumeFromLastOffset,
    ConsumeFromLastOffsetAndFromMinWhenBootFirst,
    ConsumeFromMinOffset,
    ConsumeFromMaxOffset,
    ConsumeFromFirstOffset,
    ConsumeFromTimestamp,
}

impl ConsumeFromWhere {
    pub const NAMES: [&'static str; 6] = [
        "CONSUME_FROM_LAST_OFFSET",
        "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST",
        "CONSUME_FROM_MIN_OFFSET",
        "CONSUME_FROM_MAX_OFFSET",
        "CONSUME_FROM_FIRST_OFFSET",
        "CONSUME_FROM_TIMESTAMP",
    ];
    const ALL: [Self; 6] = [
        Self::ConsumeFromLastOffset,
        Self::ConsumeFromLastOffsetAndFromMinWhenBootFirst,
        Self::ConsumeFromMinOffset,
        Self::ConsumeFromMaxOffset,
        Self::ConsumeFromFirstOffset,
        Self::ConsumeFromTimestamp,
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

impl Serialize for ConsumeFromWhere {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for ConsumeFromWhere {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read_enum(d, &Self::NAMES, &Self::ALL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub const JAVA: &str = r#"{"clientID":"192.168.1.20@4242#2298434581234","consumerDataSet":[{"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","consumeType":"CONSUME_PASSIVELY","groupName":"G1","messageModel":"CLUSTERING","subscriptionDataSet":[{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*","subVersion":1700000000000,"tagsSet":[],"topic":"TopicTest"},{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*","subVersion":1700000000001,"tagsSet":[],"topic":"%RETRY%G1"}],"unitMode":false}],"heartbeatFingerprint":0,"producerDataSet":[{"groupName":"CLIENT_INNER_PRODUCER"}],"withoutSub":false}"#;

    const GO: &str = r#"{"clientID":"192.168.1.21@9876","producerDataSet":[],"consumerDataSet":[{"groupName":"G1","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","subscriptionDataSet":[{"classFilterMode":false,"topic":"TopicTest","subString":"TagA || TagB","tagsSet":["TagA","TagB"],"codeSet":["2598919","2598920"],"subVersion":1700000000123456789,"expressionType":"TAG"}],"unitMode":false}]}"#;

    #[test]
    fn java_heartbeat_decodes_and_re_encodes_byte_for_byte() {
        let hb = HeartbeatData::decode(JAVA.as_bytes()).unwrap();
        assert_eq!(hb.client_id, "192.168.1.20@4242#2298434581234");
        let c = &hb.consumer_data_set[0];
        assert_eq!(
            (c.consume_type, c.message_model),
            (ConsumeType::ConsumePassively, MessageModel::Clustering)
        );
        assert_eq!(c.subscription_data_set[1].topic, "%RETRY%G1");
        assert_eq!(String::from_utf8(hb.encode()).unwrap(), JAVA);
    }

    #[test]
    fn go_heartbeat_with_string_codes_decodes() {
        let hb = HeartbeatData::decode(GO.as_bytes()).unwrap();
        let sub = &hb.consumer_data_set[0].subscription_data_set[0];
        assert_eq!(sub.code_set, vec![2598919, 2598920]);
        assert_eq!(sub.sub_version, 1700000000123456789);
        assert!(hb.producer_data_set.is_empty() && !hb.without_sub);
    }

    /// rocketmq-client-cpp (jsoncpp): enums as ordinals, `subVersion` as a string, no
    /// `tagsSet`/`codeSet`/`expressionType`, no `heartbeatFingerprint`/`withoutSub`.
    const CPP: &str = r#"{"clientID":"127.0.0.1@12345#0#DEFAULT","consumerDataSet":[{"consumeFromWhere":4,"consumeType":1,"groupName":"CG","messageModel":1,"subscriptionDataSet":[{"classFilterMode":false,"subString":"*","subVersion":"1764612345678","topic":"T"},{"classFilterMode":false,"subString":"*","subVersion":"1764612345679","topic":"%RETRY%CG"}],"unitMode":false}],"producerDataSet":[{"groupName":"PG"}]}"#;

    #[test]
    fn cpp_heartbeat_with_ordinals_and_string_sub_version_decodes() {
        let hb = HeartbeatData::decode(CPP.as_bytes()).unwrap();
        let c = &hb.consumer_data_set[0];
        assert_eq!(
            (c.consume_type, c.message_model, c.consume_from_where),
            (
                ConsumeType::ConsumePassively,
                MessageModel::Clustering,
                ConsumeFromWhere::ConsumeFromFirstOffset
            )
        );
        let sub = &c.subscription_data_set[0];
        assert_eq!((sub.topic.as_str(), sub.sub_version), ("T", 1764612345678));
        assert!(sub.tags_set.is_empty() && sub.code_set.is_empty() && sub.is_tag_type());
        assert!(sub.tag_filter().all);
        assert_eq!(hb.producer_data_set[0].group_name, "PG");
    }

    #[test]
    fn enum_ordinals_and_bad_bodies() {
        let hb = HeartbeatData::decode(
            br#"{"consumerDataSet":[{"consumeType":0,"messageModel":0,"consumeFromWhere":5}]}"#,
        )
        .unwrap();
        let c = &hb.consumer_data_set[0];
        assert_eq!(c.consume_type, ConsumeType::ConsumeActively);
        assert_eq!(c.message_model, MessageModel::Broadcasting);
        assert_eq!(c.consume_from_where, ConsumeFromWhere::ConsumeFromTimestamp);
        assert!(HeartbeatData::decode(br#"{"consumerDataSet":[{"consumeType":"NOPE"}]}"#).is_err());
        assert!(HeartbeatData::decode(b"{").is_err());
    }
}
