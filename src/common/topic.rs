//! `TopicConfig` with Java's field names (topics.json, REGISTER_BROKER bodies, admin bodies), the
//! permission bits of `PermName`, topic/group name rules (`TopicValidator`), system topic names and
//! `MessageQueue`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub const PERM_PRIORITY: i32 = 8;
pub const PERM_READ: i32 = 4;
pub const PERM_WRITE: i32 = 2;
pub const PERM_INHERIT: i32 = 1;

pub fn is_readable(perm: i32) -> bool {
    perm & PERM_READ != 0
}

pub fn is_writeable(perm: i32) -> bool {
    perm & PERM_WRITE != 0
}

/// One topic's configuration. Every field has Java's default, so partial JSON loads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopicConfig {
    pub attributes: BTreeMap<String, String>,
    pub order: bool,
    pub perm: i32,
    pub read_queue_nums: i32,
    pub topic_filter_type: String,
    pub topic_name: String,
    pub topic_sys_flag: i32,
    pub write_queue_nums: i32,
}

impl Default for TopicConfig {
    fn default() -> Self {
        Self {
            attributes: BTreeMap::new(),
            order: false,
            perm: PERM_READ | PERM_WRITE,
            read_queue_nums: 16,
            topic_filter_type: "SINGLE_TAG".to_string(),
            topic_name: String::new(),
            topic_sys_flag: 0,
            write_queue_nums: 16,
        }
    }
}

impl TopicConfig {
    pub fn new(name: &str, read: i32, write: i32, perm: i32) -> Self {
        Self {
            topic_name: name.to_string(),
            read_queue_nums: read,
            write_queue_nums: write,
            perm,
            ..Self::default()
        }
    }
}

/// `MessageQueue`: JSON properties in fastjson order `brokerName, queueId, topic`; ordered as
/// Java's `compareTo` (topic, brokerName, queueId).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MessageQueue {
    pub broker_name: String,
    pub queue_id: i32,
    pub topic: String,
}

impl MessageQueue {
    pub fn new(topic: &str, broker_name: &str, queue_id: i32) -> Self {
        Self {
            topic: topic.to_string(),
            broker_name: broker_name.to_string(),
            queue_id,
        }
    }
}

impl Ord for MessageQueue {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (&self.topic, &self.broker_name, self.queue_id).cmp(&(
            &other.topic,
            &other.broker_name,
            other.queue_id,
        ))
    }
}

impl PartialOrd for MessageQueue {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

pub const TOPIC_MAX_LENGTH: usize = 127;
/// `%RETRY%` and `%DLQ%` topics may be longer.
pub const RETRY_DLQ_TOPIC_MAX_LENGTH: usize = 255;
pub const GROUP_MAX_LENGTH: usize = 120;
/// `Validators.CHARACTER_MAX_LENGTH`: the longest group name a broker auto-creates.
pub const CHARACTER_MAX_LENGTH: usize = 255;

pub const RETRY_GROUP_TOPIC_PREFIX: &str = "%RETRY%";
pub const DLQ_GROUP_TOPIC_PREFIX: &str = "%DLQ%";
pub const LMQ_PREFIX: &str = "%LMQ%";
pub const SYSTEM_TOPIC_PREFIX: &str = "rmq_sys_";
pub const SYSTEM_GROUP_PREFIX: &str = "CID_RMQ_SYS_";

pub const AUTO_CREATE_TOPIC_KEY_TOPIC: &str = "TBW102";
pub const RMQ_SYS_SCHEDULE_TOPIC: &str = "SCHEDULE_TOPIC_XXXX";
pub const RMQ_SYS_BENCHMARK_TOPIC: &str = "BenchmarkTest";
pub const RMQ_SYS_TRANS_HALF_TOPIC: &str = "RMQ_SYS_TRANS_HALF_TOPIC";
pub const RMQ_SYS_TRACE_TOPIC: &str = "RMQ_SYS_TRACE_TOPIC";
pub const RMQ_SYS_TRANS_OP_HALF_TOPIC: &str = "RMQ_SYS_TRANS_OP_HALF_TOPIC";
pub const RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC: &str = "TRANS_CHECK_MAX_TIME_TOPIC";
pub const RMQ_SYS_SELF_TEST_TOPIC: &str = "SELF_TEST_TOPIC";
pub const RMQ_SYS_OFFSET_MOVED_EVENT: &str = "OFFSET_MOVED_EVENT";
pub const RMQ_SYS_CHECKPOINT_TOPIC: &str = "CHECKPOINT_TOPIC";
pub const SYSTEM_TOPIC_TIMER_WHEEL: &str = "rmq_sys_wheel_timer";
pub const SYNC_BROKER_MEMBER_GROUP_PREFIX: &str = "rmq_sys_SYNC_BROKER_MEMBER_";
pub const REVIVE_LOG_PREFIX: &str = "rmq_sys_REVIVE_LOG_";

pub const DEFAULT_PRODUCER_GROUP: &str = "DEFAULT_PRODUCER";
pub const DEFAULT_CONSUMER_GROUP: &str = "DEFAULT_CONSUMER";
pub const TOOLS_CONSUMER_GROUP: &str = "TOOLS_CONSUMER";
pub const CLIENT_INNER_PRODUCER_GROUP: &str = "CLIENT_INNER_PRODUCER";
pub const SCHEDULE_CONSUMER_GROUP: &str = "SCHEDULE_CONSUMER";
pub const MONITOR_CONSUMER_GROUP: &str = "__MONITOR_CONSUMER";
pub const SELF_TEST_PRODUCER_GROUP: &str = "SELF_TEST_P_GROUP";
pub const SELF_TEST_CONSUMER_GROUP: &str = "SELF_TEST_C_GROUP";
pub const CID_SYS_RMQ_TRANS: &str = "CID_RMQ_SYS_TRANS";

/// The fixed system topics of `TopicValidator.SYSTEM_TOPIC_SET`.
pub const SYSTEM_TOPICS: [&str; 10] = [
    AUTO_CREATE_TOPIC_KEY_TOPIC,
    RMQ_SYS_SCHEDULE_TOPIC,
    RMQ_SYS_BENCHMARK_TOPIC,
    RMQ_SYS_TRANS_HALF_TOPIC,
    RMQ_SYS_TRACE_TOPIC,
    RMQ_SYS_TRANS_OP_HALF_TOPIC,
    RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC,
    RMQ_SYS_SELF_TEST_TOPIC,
    RMQ_SYS_OFFSET_MOVED_EVENT,
    RMQ_SYS_CHECKPOINT_TOPIC,
];

/// Topics clients may not send to (`TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET`).
pub const NOT_ALLOWED_SEND_TOPICS: [&str; 6] = [
    RMQ_SYS_SCHEDULE_TOPIC,
    RMQ_SYS_TRANS_HALF_TOPIC,
    RMQ_SYS_TRANS_OP_HALF_TOPIC,
    RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC,
    RMQ_SYS_SELF_TEST_TOPIC,
    RMQ_SYS_OFFSET_MOVED_EVENT,
];

/// Why a topic or group name was refused; the text follows Java's remarks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("the specified {kind} is blank")]
    Blank { kind: &'static str },
    #[error("the specified {kind}[{name}] contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$")]
    Charset { kind: &'static str, name: String },
    #[error("the specified {kind}[{name}] is longer than {max} characters")]
    Length {
        kind: &'static str,
        name: String,
        max: usize,
    },
}

/// `TopicValidator.isTopicOrGroupIllegal`: a character outside `[%|a-zA-Z0-9_-]` (or none at all).
pub fn is_topic_or_group_illegal(name: &str) -> bool {
    name.is_empty() || !valid_chars(name)
}

fn valid_chars(name: &str) -> bool {
    name.bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'%' | b'|' | b'_' | b'-'))
}

fn check_name(kind: &'static str, name: &str, max: usize) -> Result<(), NameError> {
    if name.trim().is_empty() {
        return Err(NameError::Blank { kind });
    }
    if !valid_chars(name) {
        return Err(NameError::Charset {
            kind,
            name: name.to_string(),
        });
    }
    if name.len() > max {
        return Err(NameError::Length {
            kind,
            name: name.to_string(),
            max,
        });
    }
    Ok(())
}

/// `TopicValidator.validateTopic`: charset, 127 chars (255 for `%RETRY%`/`%DLQ%` topics).
pub fn validate_topic(topic: &str) -> Result<(), NameError> {
    let max = if is_retry_topic(topic) || is_dlq_topic(topic) {
        RETRY_DLQ_TOPIC_MAX_LENGTH
    } else {
        TOPIC_MAX_LENGTH
    };
    check_name("topic", topic, max)
}

/// Group names: same charset, 120 chars.
pub fn validate_group(group: &str) -> Result<(), NameError> {
    check_name("group", group, GROUP_MAX_LENGTH)
}

pub fn is_retry_topic(topic: &str) -> bool {
    topic.starts_with(RETRY_GROUP_TOPIC_PREFIX)
}

pub fn is_dlq_topic(topic: &str) -> bool {
    topic.starts_with(DLQ_GROUP_TOPIC_PREFIX)
}

pub fn is_lmq(topic: &str) -> bool {
    topic.starts_with(LMQ_PREFIX)
}

/// Java 5.5 `LiteUtil.LITE_TOPIC_PREFIX`: the LMQ of a lite topic is `%LMQ%$<parent>$<lite>`.
pub const LITE_TOPIC_PREFIX: &str = "%LMQ%$";

/// Java `LiteUtil.toLmqName`: `None` when either name is empty.
pub fn lite_lmq_name(parent: &str, lite: &str) -> Option<String> {
    (!parent.is_empty() && !lite.is_empty()).then(|| format!("{LITE_TOPIC_PREFIX}{parent}${lite}"))
}

/// Java `LiteUtil.getParentAndLiteTopic` without its split quirks: `(parent, lite)` of
/// `%LMQ%$<parent>$<lite>`, both non-empty and without another `$`.
pub fn lite_parent_and_topic(lmq: &str) -> Option<(&str, &str)> {
    let rest = lmq.strip_prefix(LITE_TOPIC_PREFIX)?;
    let (parent, lite) = rest.split_once('$')?;
    (!parent.is_empty() && !lite.is_empty() && !lite.contains('$')).then_some((parent, lite))
}

/// `TopicValidator.isSystemTopic`: the fixed set or the `rmq_sys_` prefix. Topics named after the
/// cluster or broker are the broker's business.
pub fn is_system_topic(topic: &str) -> bool {
    SYSTEM_TOPICS.contains(&topic) || topic.starts_with(SYSTEM_TOPIC_PREFIX)
}

pub fn is_not_allowed_send_topic(topic: &str) -> bool {
    NOT_ALLOWED_SEND_TOPICS.contains(&topic)
}

pub fn is_system_group(group: &str) -> bool {
    group.starts_with(SYSTEM_GROUP_PREFIX)
        || [
            DEFAULT_PRODUCER_GROUP,
            DEFAULT_CONSUMER_GROUP,
            TOOLS_CONSUMER_GROUP,
            CLIENT_INNER_PRODUCER_GROUP,
            SCHEDULE_CONSUMER_GROUP,
            MONITOR_CONSUMER_GROUP,
            SELF_TEST_PRODUCER_GROUP,
            SELF_TEST_CONSUMER_GROUP,
        ]
        .contains(&group)
}

pub fn retry_topic(group: &str) -> String {
    format!("{RETRY_GROUP_TOPIC_PREFIX}{group}")
}

pub fn dlq_topic(group: &str) -> String {
    format!("{DLQ_GROUP_TOPIC_PREFIX}{group}")
}

/// `PermName.isValid`.
pub fn is_valid_perm(perm: i32) -> bool {
    (0..8).contains(&perm)
}

/// `PermName.perm2String`: `R`/`W`/`X` or `-` per bit.
pub fn perm_to_string(perm: i32) -> String {
    let bit = |mask, c| if perm & mask != 0 { c } else { '-' };
    [
        bit(PERM_READ, 'R'),
        bit(PERM_WRITE, 'W'),
        bit(PERM_INHERIT, 'X'),
    ]
    .iter()
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_json_round_trip_with_defaults() {
        let t: TopicConfig = serde_json::from_str(r#"{"topicName":"T","perm":7,"x":1}"#).unwrap();
        assert_eq!(
            (t.read_queue_nums, t.perm, t.topic_filter_type.as_str()),
            (16, 7, "SINGLE_TAG")
        );
        let s = serde_json::to_string(&t).unwrap();
        assert!(s.starts_with(r#"{"attributes":{},"order":false,"perm":7,"readQueueNums":16"#));
    }

    #[test]
    fn topic_names_follow_topic_validator() {
        assert!(validate_topic("Topic_a-1|%").is_ok());
        assert_eq!(validate_topic(" "), Err(NameError::Blank { kind: "topic" }));
        assert!(matches!(
            validate_topic("a b"),
            Err(NameError::Charset { .. })
        ));
        assert!(validate_topic(&"t".repeat(127)).is_ok());
        assert!(matches!(
            validate_topic(&"t".repeat(128)),
            Err(NameError::Length { max: 127, .. })
        ));
        assert!(validate_topic(&format!("%RETRY%{}", "g".repeat(248))).is_ok());
        assert!(validate_topic(&format!("%DLQ%{}", "g".repeat(251))).is_err());
        assert!(validate_group(&"g".repeat(120)).is_ok());
        assert!(validate_group(&"g".repeat(121)).is_err());
    }

    #[test]
    fn system_topics_and_send_ban() {
        assert!(is_system_topic("TBW102") && is_system_topic("rmq_sys_wheel_timer"));
        assert!(!is_system_topic("TopicTest"));
        assert!(is_not_allowed_send_topic("SCHEDULE_TOPIC_XXXX"));
        assert!(!is_not_allowed_send_topic("TBW102"));
        assert_eq!(retry_topic("G"), "%RETRY%G");
        assert!(is_system_group("CID_RMQ_SYS_X") && is_system_group("TOOLS_CONSUMER"));
        assert_eq!(perm_to_string(6), "RW-");
        assert_eq!(perm_to_string(7), "RWX");
    }

    #[test]
    fn message_queue_json_in_fastjson_order() {
        let mq = MessageQueue::new("T", "broker-a", 0);
        assert_eq!(
            serde_json::to_string(&mq).unwrap(),
            r#"{"brokerName":"broker-a","queueId":0,"topic":"T"}"#
        );
    }
}
