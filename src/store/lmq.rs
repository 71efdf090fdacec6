//! LMQ (light message queues): a message stored once and dispatched into many `%LMQ%` consume
//! queues. The put assigns each LMQ its next queue offset under the put lock and writes them into
//! the record as `INNER_MULTI_QUEUE_OFFSET` (Java `LmqDispatch.wrapLmqDispatch`, re-encoded in
//! `CommitLog.handlePropertiesForLmqMsg`); dispatch then writes one more consume-queue unit per
//! queue named in `INNER_MULTI_DISPATCH` at that offset (Java `ConsumeQueue.multiDispatchLmqQueue`).

use crate::common::message::{PROPERTY_INNER_MULTI_DISPATCH, PROPERTY_INNER_MULTI_QUEUE_OFFSET};
use crate::common::properties::Properties;
use crate::common::topic::{is_lmq, RETRY_GROUP_TOPIC_PREFIX};
use crate::store::util::find_property;

/// The queue id of every `%LMQ%` queue (Java `MixAll.LMQ_QUEUE_ID`).
pub const LMQ_QUEUE_ID: i32 = 0;
/// Whether `topic`/`queue_id` is an LMQ's queue: queue 0 of a `%LMQ%` topic. The store keeps
/// these apart from other queues, flat by name, with their put offsets in them.
pub fn is_lmq_queue(topic: &str, queue_id: i32) -> bool {
    queue_id == LMQ_QUEUE_ID && is_lmq(topic)
}

/// Separates queue names and offsets (Java `MixAll.LMQ_DISPATCH_SEPARATOR`).
const SEPARATOR: char = ',';

/// Java `MixAll.topicAllowsLMQ`: retry topics, `rmq_sys_` topics and the delay-level topic are
/// never multi-dispatched (their copies keep the property; the re-put into the real topic is).
pub fn topic_allows_lmq(topic: &str) -> bool {
    !topic.starts_with(RETRY_GROUP_TOPIC_PREFIX)
        && !topic.starts_with("rmq_sys_")
        && topic != "SCHEDULE_TOPIC_XXXX"
}

/// Java `String.split(",")`: trailing empty strings are dropped (and a string of separators
/// only splits into nothing), inner empty ones kept.
fn java_split(s: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = s.split(SEPARATOR).collect();
    while parts.len() > 1 && parts.last() == Some(&"") {
        parts.pop();
    }
    if parts.len() == 1 && parts[0].is_empty() && !s.is_empty() {
        parts.clear();
    }
    parts
}

/// `INNER_MULTI_DISPATCH` when the put must assign LMQ offsets (Java `needDispatchLMQ`: the
/// property is not blank and the topic allows LMQ).
pub fn dispatch_names<'a>(topic: &str, properties: &'a [u8]) -> Option<&'a str> {
    if !topic_allows_lmq(topic) {
        return None;
    }
    let v = find_property(properties, PROPERTY_INNER_MULTI_DISPATCH)?;
    let v = std::str::from_utf8(v).ok()?;
    (!v.trim().is_empty()).then_some(v)
}

/// What the put writes for an LMQ message: the properties with `INNER_MULTI_QUEUE_OFFSET` set to
/// the next offset of each `%LMQ%` name (an empty element for any other name), and the LMQ
/// names whose counters the append then moves on by one each.
pub struct LmqPut {
    pub properties: String,
    pub advance: Vec<String>,
}

/// Java re-serialises the properties from its map (duplicates and empty pairs dropped) with the
/// offsets put in; `next_offset` reads an LMQ's counter (under the put lock).
pub fn assign_offsets(
    properties: &str,
    names: &str,
    mut next_offset: impl FnMut(&str) -> i64,
) -> LmqPut {
    let mut offsets = String::new();
    let mut advance = Vec::new();
    for (i, name) in java_split(names).into_iter().enumerate() {
        if i > 0 {
            offsets.push(SEPARATOR);
        }
        if is_lmq(name) {
            offsets.push_str(&next_offset(name).to_string());
            advance.push(name.to_string());
        }
    }
    let mut props = Properties::decode(properties);
    props.insert(PROPERTY_INNER_MULTI_QUEUE_OFFSET, &offsets);
    LmqPut {
        properties: props.encode(),
        advance,
    }
}

/// One extra consume-queue unit of a multi-dispatched message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LmqTarget {
    pub queue: String,
    pub queue_id: i32,
    pub queue_offset: i64,
}

/// The extra units a stored record gets at dispatch (Java `checkMultiDispatchQueue` then
/// `multiDispatchLmqQueue`): both properties present and of the same length once split, names
/// holding a path separator skipped; an `%LMQ%` name goes to queue 0 under `enable_lmq`, any other
/// to the record's queue id. An offset that does not parse skips its name (Java throws there and
/// stops the dispatch of everything after it).
pub fn dispatch_targets(
    topic: &str,
    properties: &[u8],
    queue_id: i32,
    enable_lmq: bool,
) -> Vec<LmqTarget> {
    if !topic_allows_lmq(topic) {
        return Vec::new();
    }
    let text = |k: &str| {
        find_property(properties, k)
            .and_then(|v| std::str::from_utf8(v).ok())
            .filter(|v| !v.trim().is_empty())
    };
    let (Some(names), Some(offsets)) = (
        text(PROPERTY_INNER_MULTI_DISPATCH),
        text(PROPERTY_INNER_MULTI_QUEUE_OFFSET),
    ) else {
        return Vec::new();
    };
    let (names, offsets) = (java_split(names), java_split(offsets));
    if names.len() != offsets.len() {
        tracing::error!(
            topic,
            names = names.len(),
            offsets = offsets.len(),
            "INNER_MULTI_DISPATCH and INNER_MULTI_QUEUE_OFFSET differ in length; no LMQ dispatch"
        );
        return Vec::new();
    }
    let mut out = Vec::with_capacity(names.len());
    for (name, offset) in names.into_iter().zip(offsets) {
        if name.contains('/') || name.is_empty() {
            continue;
        }
        let Ok(queue_offset) = offset.parse::<i64>() else {
            tracing::warn!(
                topic,
                name,
                offset,
                "LMQ offset does not parse; not dispatched"
            );
            continue;
        };
        let queue_id = if enable_lmq && is_lmq(name) {
            LMQ_QUEUE_ID
        } else {
            queue_id
        };
        out.push(LmqTarget {
            queue: name.to_string(),
            queue_id,
            queue_offset,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_drops_trailing_empties_as_java_does() {
        assert_eq!(java_split("a,b"), vec!["a", "b"]);
        assert_eq!(java_split("a,,b,,"), vec!["a", "", "b"]);
        assert_eq!(java_split("a"), vec!["a"]);
        assert_eq!(java_split(",,"), Vec::<&str>::new());
        assert_eq!(java_split(""), vec![""]);
    }

    #[test]
    fn offsets_go_to_lmq_names_only_and_replace_a_sent_value() {
        let props = "WAIT\u{1}true\u{2}INNER_MULTI_DISPATCH\u{1}%LMQ%a,plain,%LMQ%b\u{2}\
                     INNER_MULTI_QUEUE_OFFSET\u{1}9,9,9\u{2}";
        let put = assign_offsets(props, "%LMQ%a,plain,%LMQ%b", |n| {
            if n == "%LMQ%a" {
                4
            } else {
                0
            }
        });
        assert_eq!(put.advance, vec!["%LMQ%a", "%LMQ%b"]);
        let p = Properties::decode(&put.properties);
        assert_eq!(p.get(PROPERTY_INNER_MULTI_QUEUE_OFFSET), Some("4,,0"));
        assert_eq!(
            p.get("WAIT"),
            Some("true"),
            "Java puts WAIT back into the record"
        );
        assert_eq!(p.len(), 3);
    }

    #[test]
    fn dispatch_targets_follow_java_rules() {
        let rec = |d: &str, o: &str| {
            format!("INNER_MULTI_DISPATCH\u{1}{d}\u{2}INNER_MULTI_QUEUE_OFFSET\u{1}{o}\u{2}")
        };
        let t = dispatch_targets("T", rec("%LMQ%a,%LMQ%b", "3,0").as_bytes(), 2, true);
        assert_eq!(
            t,
            vec![
                LmqTarget {
                    queue: "%LMQ%a".into(),
                    queue_id: 0,
                    queue_offset: 3
                },
                LmqTarget {
                    queue: "%LMQ%b".into(),
                    queue_id: 0,
                    queue_offset: 0
                }
            ]
        );
        // a non-LMQ name keeps the record's queue id; a path separator is skipped
        let t = dispatch_targets("T", rec("x,%LMQ%a/b", "7,1").as_bytes(), 2, true);
        assert_eq!(t.len(), 1);
        assert_eq!((t[0].queue.as_str(), t[0].queue_id), ("x", 2));
        // a trailing non-LMQ name leaves the offsets one short: nothing is dispatched
        assert!(dispatch_targets("T", rec("%LMQ%a,x", "3,").as_bytes(), 0, true).is_empty());
        // retry and system topics are never multi-dispatched
        assert!(dispatch_targets("%RETRY%g", rec("%LMQ%a", "0").as_bytes(), 0, true).is_empty());
        assert!(dispatch_targets(
            "rmq_sys_wheel_timer",
            rec("%LMQ%a", "0").as_bytes(),
            0,
            true
        )
        .is_empty());
        assert!(dispatch_names("SCHEDULE_TOPIC_XXXX", rec("%LMQ%a", "0").as_bytes()).is_none());
        assert_eq!(
            dispatch_names("T", rec("%LMQ%a", "0").as_bytes()),
            Some("%LMQ%a")
        );
        assert!(dispatch_names("T", b"INNER_MULTI_DISPATCH\x01 \x02").is_none());
    }
}
