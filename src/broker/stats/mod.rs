//! Java `BrokerStatsManager` and `BrokerStats`: the stats items VIEW_BROKER_STATS_DATA (315) reads
//! (messages and bytes put per topic, got per topic and group, sent back, per broker), and the
//! day-boundary totals GET_BROKER_RUNTIME_INFO reports. TPS over 10/60/600 s comes from the
//! store's own counters (`store::stats`).
//!
//! Items are sampled by the broker's stats task: every 10 s, 10 min and hour, as Java's
//! `StatsItem` schedules do.

pub mod item;

use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use crate::common::topic::{is_lmq, is_system_topic, LMQ_PREFIX};
pub use item::{Period, StatsItem, StatsItemSet, StatsSnapshot};

/// Java `Stats` / `BrokerStatsManager` names served by VIEW_BROKER_STATS_DATA.
pub const TOPIC_PUT_NUMS: &str = "TOPIC_PUT_NUMS";
pub const TOPIC_PUT_SIZE: &str = "TOPIC_PUT_SIZE";
pub const GROUP_GET_NUMS: &str = "GROUP_GET_NUMS";
pub const GROUP_GET_SIZE: &str = "GROUP_GET_SIZE";
pub const GROUP_GET_LATENCY: &str = "GROUP_GET_LATENCY";
pub const SNDBCK_PUT_NUMS: &str = "SNDBCK_PUT_NUMS";
pub const BROKER_PUT_NUMS: &str = "BROKER_PUT_NUMS";
pub const BROKER_GET_NUMS: &str = "BROKER_GET_NUMS";
pub const BROKER_PUT_NUMS_WITHOUT_SYSTEM_TOPIC: &str = "BROKER_PUT_NUMS_WITHOUT_SYSTEM_TOPIC";
pub const BROKER_GET_NUMS_WITHOUT_SYSTEM_TOPIC: &str = "BROKER_GET_NUMS_WITHOUT_SYSTEM_TOPIC";

/// Names Java registers but rmqd has nothing to count for yet (POP acks and checkpoints, per
/// queue, commercial and DLQ accounting): their items are never created, so 315 answers them as
/// Java answers a key with no item.
const SETS: [&str; 8] = [
    TOPIC_PUT_NUMS,
    TOPIC_PUT_SIZE,
    GROUP_GET_NUMS,
    GROUP_GET_SIZE,
    GROUP_GET_LATENCY,
    SNDBCK_PUT_NUMS,
    BROKER_PUT_NUMS,
    BROKER_GET_NUMS,
];

pub struct BrokerStats {
    topic_put_nums: StatsItemSet,
    topic_put_size: StatsItemSet,
    group_get_nums: StatsItemSet,
    group_get_size: StatsItemSet,
    group_get_latency: StatsItemSet,
    sndbck_put_nums: StatsItemSet,
    broker_put_nums: StatsItemSet,
    broker_get_nums: StatsItemSet,
    broker_put_nums_user: StatsItemSet,
    broker_get_nums_user: StatsItemSet,
    /// The broker-level items (keyed by the cluster name in their sets), held to add without a
    /// lookup.
    broker_put: Arc<StatsItem>,
    broker_get: Arc<StatsItem>,
    broker_put_user: Arc<StatsItem>,
    broker_get_user: Arc<StatsItem>,
    /// Messages forced cleanup deleted before their groups consumed them (summed over groups).
    pub forced_unconsumed: AtomicU64,
    days: Mutex<DayTotals>,
    last_sample: Mutex<[i64; 3]>,
    /// `enableLmq` without `enableLmqStats`: LMQ names count as `%LMQ%` (Java `LmqBrokerStatsManager`).
    collapse_lmq: bool,
}

#[derive(Default, Clone, Copy)]
struct DayTotals {
    day: u64,
    put_today_morning: u64,
    get_today_morning: u64,
    put_yesterday_morning: u64,
    get_yesterday_morning: u64,
}

impl BrokerStats {
    pub fn new(cluster_name: &str) -> Self {
        let (put, get) = (StatsItemSet::default(), StatsItemSet::default());
        let (put_user, get_user) = (StatsItemSet::default(), StatsItemSet::default());
        let broker_put = put.item(cluster_name);
        let broker_get = get.item(cluster_name);
        let broker_put_user = put_user.item(cluster_name);
        let broker_get_user = get_user.item(cluster_name);
        BrokerStats {
            topic_put_nums: StatsItemSet::default(),
            topic_put_size: StatsItemSet::default(),
            group_get_nums: StatsItemSet::default(),
            group_get_size: StatsItemSet::default(),
            group_get_latency: StatsItemSet::default(),
            sndbck_put_nums: StatsItemSet::default(),
            broker_put_nums: put,
            broker_get_nums: get,
            broker_put_nums_user: put_user,
            broker_get_nums_user: get_user,
            broker_put,
            broker_get,
            broker_put_user,
            broker_get_user,
            forced_unconsumed: AtomicU64::new(0),
            days: Mutex::new(DayTotals::default()),
            last_sample: Mutex::new([i64::MIN; 3]),
            collapse_lmq: false,
        }
    }

    /// Counts every `%LMQ%` topic and group under `%LMQ%` in the group items (a million lite
    /// queues must not make a million stats items), as Java's `LmqBrokerStatsManager` does.
    pub fn collapsing_lmq(mut self, on: bool) -> Self {
        self.collapse_lmq = on;
        self
    }

    /// `topic@group` as the group items key it.
    fn group_key(&self, group: &str, topic: &str) -> String {
        let adjust = |n: &str| -> String {
            if self.collapse_lmq && is_lmq(n) {
                LMQ_PREFIX.to_string()
            } else {
                n.to_string()
            }
        };
        format!("{}@{}", adjust(topic), adjust(group))
    }

    fn set(&self, name: &str) -> Option<&StatsItemSet> {
        Some(match name {
            TOPIC_PUT_NUMS => &self.topic_put_nums,
            TOPIC_PUT_SIZE => &self.topic_put_size,
            GROUP_GET_NUMS => &self.group_get_nums,
            GROUP_GET_SIZE => &self.group_get_size,
            GROUP_GET_LATENCY => &self.group_get_latency,
            SNDBCK_PUT_NUMS => &self.sndbck_put_nums,
            BROKER_PUT_NUMS => &self.broker_put_nums,
            BROKER_GET_NUMS => &self.broker_get_nums,
            BROKER_PUT_NUMS_WITHOUT_SYSTEM_TOPIC => &self.broker_put_nums_user,
            BROKER_GET_NUMS_WITHOUT_SYSTEM_TOPIC => &self.broker_get_nums_user,
            _ => return None,
        })
    }

    /// Java `getStatsItem(statsName, statsKey)`: `None` when the name is unknown or nothing was
    /// counted under the key yet.
    pub fn item(&self, name: &str, key: &str) -> Option<std::sync::Arc<StatsItem>> {
        self.set(name)?.get(key)
    }

    /// A put of `msgs` messages in `bytes` to `topic` (Java's SendMessageProcessor, reply,
    /// end-transaction and schedule paths: incTopicPutNums, incTopicPutSize, incBrokerPutNums).
    pub fn put(&self, topic: &str, msgs: u64, bytes: u64) {
        self.topic_put(topic, msgs, bytes);
        // Java adds to the broker items' value only, not their call count
        self.broker_put.add(msgs, 0);
        if !is_system_topic(topic) {
            self.broker_put_user.add(msgs, 0);
        }
    }

    /// TOPIC_PUT_NUMS and TOPIC_PUT_SIZE alone (Java's send-back counts a delayed retry so).
    pub fn topic_put(&self, topic: &str, msgs: u64, bytes: u64) {
        self.topic_put_nums.add(topic, msgs, 1);
        self.topic_put_size.add(topic, bytes, 1);
    }

    /// A pull that found `msgs` messages of `bytes` (Java's DefaultPullMessageResultHandler:
    /// incGroupGetNums, incGroupGetSize, incBrokerGetNums, and incGroupGetLatency with the time
    /// spent reading them).
    pub fn got(&self, group: &str, topic: &str, msgs: u64, bytes: u64, latency_ms: u64) {
        let key = self.group_key(group, topic);
        self.group_get_nums.add(&key, msgs, 1);
        self.group_get_size.add(&key, bytes, 1);
        self.group_get_latency.add(&key, latency_ms, 1);
        self.broker_get.add(msgs, 0);
        if !is_system_topic(topic) {
            self.broker_get_user.add(msgs, 0);
        }
    }

    /// GROUP_GET_NUMS and GROUP_GET_SIZE alone (Java's schedule service counts each delivery so,
    /// as a get of SCHEDULE_TOPIC_XXXX by SCHEDULE_CONSUMER).
    pub fn group_get(&self, group: &str, topic: &str, msgs: u64, bytes: u64) {
        let key = self.group_key(group, topic);
        self.group_get_nums.add(&key, msgs, 1);
        self.group_get_size.add(&key, bytes, 1);
    }

    /// A consumer's send-back (Java incSendBackNums, keyed by the original topic).
    pub fn sent_back(&self, group: &str, topic: &str) {
        self.sndbck_put_nums
            .add(&self.group_key(group, topic), 1, 1);
    }

    /// Drops the items of a deleted topic (Java `onTopicDeleted`).
    pub fn topic_deleted(&self, topic: &str) {
        self.topic_put_nums.retain(|k| k != topic);
        self.topic_put_size.retain(|k| k != topic);
        let of_topic = |k: &str| k.strip_prefix(topic).is_some_and(|r| r.starts_with('@'));
        for set in [
            &self.group_get_nums,
            &self.group_get_size,
            &self.group_get_latency,
            &self.sndbck_put_nums,
        ] {
            set.retain(|k| !of_topic(k));
        }
    }

    /// Drops the items of a deleted group (Java `onGroupDeleted`).
    pub fn group_deleted(&self, group: &str) {
        let of_group = |k: &str| k.strip_suffix(group).is_some_and(|r| r.ends_with('@'));
        for set in [
            &self.group_get_nums,
            &self.group_get_size,
            &self.group_get_latency,
            &self.sndbck_put_nums,
        ] {
            set.retain(|k| !of_group(k));
        }
    }

    /// Java BrokerStats's `msgPutTotalTodayNow` and `msgGetTotalTodayNow`: messages put and
    /// got on topics that are not system topics.
    pub fn message_totals(&self) -> (u64, u64) {
        (self.broker_put_user.value(), self.broker_get_user.value())
    }

    /// Called once a second by the broker's stats task: rolls the day totals at local midnight
    /// (Java records them each morning) and samples the items when their period is due.
    pub fn sample(&self) {
        let (put_total, get_total) = self.message_totals();
        let now = now_millis();
        {
            let mut last = self.last_sample.lock();
            for (i, p) in [Period::Minute, Period::Hour, Period::Day]
                .into_iter()
                .enumerate()
            {
                let every = match p {
                    Period::Minute => 10_000,
                    Period::Hour => 600_000,
                    Period::Day => 3_600_000,
                };
                if last[i] == i64::MIN || now - last[i] >= every {
                    last[i] = now;
                    for name in SETS {
                        if let Some(set) = self.set(name) {
                            set.sample(p, now);
                        }
                    }
                    self.broker_put_nums_user.sample(p, now);
                    self.broker_get_nums_user.sample(p, now);
                }
            }
        }
        let secs = now_secs() as i64;
        let local = secs + crate::store::mapped_file::os::utc_offset_secs(secs);
        let day = (local / 86_400) as u64;
        let mut d = self.days.lock();
        if d.day == 0 {
            d.day = day;
        } else if d.day != day {
            *d = DayTotals {
                day,
                put_today_morning: put_total,
                get_today_morning: get_total,
                put_yesterday_morning: d.put_today_morning,
                get_yesterday_morning: d.get_today_morning,
            };
        }
    }

    /// (yesterday morning, today morning) totals for puts and gets.
    pub fn day_totals(&self) -> [(u64, u64); 2] {
        let d = *self.days.lock();
        [
            (d.put_yesterday_morning, d.put_today_morning),
            (d.get_yesterday_morning, d.get_today_morning),
        ]
    }
}

pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lmq_names_share_one_key_unless_lmq_stats_are_on() {
        let s = BrokerStats::new("C").collapsing_lmq(true);
        s.got("%LMQ%g1", "%LMQ%a", 2, 20, 1);
        s.got("G", "%LMQ%b", 3, 30, 1);
        s.got("G", "T", 1, 10, 1);
        assert_eq!(s.item(GROUP_GET_NUMS, "%LMQ%@%LMQ%").unwrap().value(), 2);
        assert_eq!(s.item(GROUP_GET_NUMS, "%LMQ%@G").unwrap().value(), 3);
        assert_eq!(s.item(GROUP_GET_NUMS, "T@G").unwrap().value(), 1);
        let plain = BrokerStats::new("C");
        plain.got("G", "%LMQ%b", 3, 30, 1);
        assert!(plain.item(GROUP_GET_NUMS, "%LMQ%b@G").is_some());
    }

    #[test]
    fn puts_and_gets_land_in_javas_items() {
        let s = BrokerStats::new("DefaultCluster");
        s.put("T", 3, 300);
        s.put("T", 1, 100);
        s.got("G", "T", 4, 400, 2);
        s.sent_back("G", "T");
        s.sample();
        assert_eq!(s.message_totals(), (4, 4));
        let m = |name, key| s.item(name, key).unwrap().snapshot(Period::Minute);
        assert_eq!(m(TOPIC_PUT_NUMS, "T").sum, 4);
        assert_eq!(m(TOPIC_PUT_NUMS, "T").times, 2);
        assert_eq!(m(TOPIC_PUT_SIZE, "T").sum, 400);
        assert_eq!(m(GROUP_GET_NUMS, "T@G").sum, 4);
        assert_eq!(m(GROUP_GET_SIZE, "T@G").avgpt, 400.0);
        assert_eq!(m(SNDBCK_PUT_NUMS, "T@G").sum, 1);
        assert_eq!(m(BROKER_PUT_NUMS, "DefaultCluster").sum, 4);
        assert_eq!(m(BROKER_GET_NUMS, "DefaultCluster").sum, 4);
        assert!(s.item(TOPIC_PUT_NUMS, "other").is_none());
        assert!(s.item("NO_SUCH_STATS", "T").is_none());
        s.topic_deleted("T");
        assert!(s.item(TOPIC_PUT_NUMS, "T").is_none());
        assert!(s.item(GROUP_GET_NUMS, "T@G").is_none());
    }
}
