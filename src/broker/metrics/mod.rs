//! The broker's Prometheus metrics (`metricsExporterType=PROM`): the families the Java 5.3.3
//! broker's OpenTelemetry exporter serves, named, typed and labelled as they appear on its wire
//! (`rocketmq_*`), plus rmqd's own (`rmqd_*`).
//!
//! Counters the request path touches are relaxed atomics reached by one map lookup per request
//! (never per message), made on first use; when metrics are off the path costs one branch.
//! Everything else — gauges, lag, connections — is computed when `/metrics` is scraped
//! (`text.rs`), and names and labels are built then too.

pub mod http;
pub mod text;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use dashmap::DashMap;

pub use crate::common::histogram::Histogram;
use crate::common::topic::{DLQ_GROUP_TOPIC_PREFIX, RETRY_GROUP_TOPIC_PREFIX};

/// Java's message size view: 1 KiB, 4 KiB, 512 KiB, 1 MiB, 2 MiB, 4 MiB.
pub const MESSAGE_SIZE_BUCKETS: &[f64] = &[
    1024.0,
    4096.0,
    524_288.0,
    1_048_576.0,
    2_097_152.0,
    4_194_304.0,
];
/// Java `RemotingMetricsManager`'s rpc latency view (ms).
pub const RPC_LATENCY_BUCKETS: &[f64] = &[1.0, 3.0, 5.0, 7.0, 10.0, 100.0, 1000.0, 2000.0, 3000.0];

/// Java `TopicMessageType.getMetricsValue()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageType {
    Normal = 0,
    Fifo = 1,
    Delay = 2,
    Transaction = 3,
}

impl MessageType {
    pub const ALL: [MessageType; 4] = [
        MessageType::Normal,
        MessageType::Fifo,
        MessageType::Delay,
        MessageType::Transaction,
    ];

    pub fn label(self) -> &'static str {
        match self {
            MessageType::Normal => "normal",
            MessageType::Fifo => "fifo",
            MessageType::Delay => "delay",
            MessageType::Transaction => "transaction",
        }
    }

    /// Java `BrokerMetricsManager.getMessageType`: prepared transaction, then sharding key
    /// (FIFO), then any delay or timer property.
    pub fn of_properties(props: &[u8]) -> Self {
        use crate::store::util::find_property;
        let has = |k: &str| find_property(props, k).is_some();
        if find_property(props, "TRAN_MSG") == Some(b"true") {
            MessageType::Transaction
        } else if has("__SHARDINGKEY") {
            MessageType::Fifo
        } else if has("__STARTDELIVERTIME")
            || has("DELAY")
            || has("TIMER_DELIVER_MS")
            || has("TIMER_DELAY_SEC")
            || has("TIMER_DELAY_MS")
        {
            MessageType::Delay
        } else {
            MessageType::Normal
        }
    }
}

pub use crate::common::histogram::STORE_LATENCY_BUCKETS;

struct InCounters {
    msgs: AtomicU64,
    bytes: AtomicU64,
    size: Histogram,
}

#[derive(Default)]
struct OutCounters {
    msgs: AtomicU64,
    bytes: AtomicU64,
}

struct TopicCounters {
    by_type: [InCounters; 4],
    /// By consumer group.
    out: DashMap<String, Arc<OutCounters>>,
    /// What POP handed out, by (consumer group, read from the pop retry topic): Java labels the
    /// pop path's out series with `is_retry`.
    pop_out: DashMap<(String, bool), Arc<OutCounters>>,
    /// Messages sent to a DLQ, by consumer group.
    dlq: DashMap<String, Arc<AtomicU64>>,
    commit: AtomicU64,
    rollback: AtomicU64,
    /// Commit time − born time of committed half messages, in seconds (Java records seconds
    /// under its `ms` unit).
    finish_latency: Histogram,
}

/// Java's `commitLatencyBuckets` (s).
pub const FINISH_LATENCY_BUCKETS: &[f64] = &[5.0, 60.0, 600.0, 3600.0, 43200.0, 86400.0];

impl TopicCounters {
    fn new() -> Self {
        TopicCounters {
            by_type: std::array::from_fn(|_| InCounters {
                msgs: AtomicU64::new(0),
                bytes: AtomicU64::new(0),
                size: Histogram::new(MESSAGE_SIZE_BUCKETS, 1.0),
            }),
            out: DashMap::new(),
            pop_out: DashMap::new(),
            dlq: DashMap::new(),
            commit: AtomicU64::new(0),
            rollback: AtomicU64::new(0),
            finish_latency: Histogram::new(FINISH_LATENCY_BUCKETS, 1.0),
        }
    }
}

tokio::task_local! {
    /// Set by a pull that was held for long polling, for the rpc latency's `is_long_polling`.
    pub static LONG_POLLED: std::cell::Cell<bool>;
}

/// Marks the current request as held for long polling (no-op outside a metrics scope).
pub fn mark_long_polled() {
    let _ = LONG_POLLED.try_with(|c| c.set(true));
}

/// One rpc latency series: request code, response code, long polling, result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RpcKey {
    pub request_code: i32,
    pub response_code: Option<i32>,
    /// `None`: no `is_long_polling` label (Java records its zero-copy transfers without it).
    pub long_polling: Option<bool>,
    pub result: RpcResult,
}

/// Java `RemotingMetricsConstant.RESULT_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RpcResult {
    Success,
    Oneway,
    ProcessRequestFailed,
    WriteChannelFailed,
}

impl RpcResult {
    pub fn label(self) -> &'static str {
        match self {
            RpcResult::Success => "success",
            RpcResult::Oneway => "oneway",
            RpcResult::ProcessRequestFailed => "process_request_failed",
            RpcResult::WriteChannelFailed => "write_channel_failed",
        }
    }
}

pub struct BrokerMetrics {
    enabled: bool,
    topics: DashMap<String, Arc<TopicCounters>>,
    rpc: DashMap<RpcKey, Arc<Histogram>>,
    /// UPDATE_AND_CREATE_TOPIC times by (success, system topic); UPDATE_AND_CREATE_SUBSCRIPTIONGROUP
    /// times by success (Java's `rocketmq_topic_create_execution_time`, `_consumer_group_…`).
    pub(crate) topic_create: [Histogram; 4],
    pub(crate) group_create: [Histogram; 2],
    /// POP (Java `PopMetricsManager`): checkpoint/ack records put to the revive topic by
    /// (group, topic, CK|ACK, put status), read back by (group, topic, revive queue, CK|ACK),
    /// and messages put to pop retry topics by (group, topic, put status).
    pub(crate) pop_revive_in: DashMap<(String, String, &'static str, String), u64>,
    pub(crate) pop_revive_out: DashMap<(String, String, i32, &'static str), u64>,
    pub(crate) pop_revive_retry: DashMap<(String, String, String), u64>,
}

/// Java's `createTimeBuckets` (ms).
pub const CREATE_TIME_BUCKETS: &[f64] = &[10.0, 100.0, 1000.0, 3000.0, 5000.0];

pub(crate) fn is_retry_or_dlq(topic: &str) -> bool {
    topic.starts_with(RETRY_GROUP_TOPIC_PREFIX) || topic.starts_with(DLQ_GROUP_TOPIC_PREFIX)
}

/// Java `MixAll.isSysConsumerGroup` (the out and DLQ series): the `CID_RMQ_SYS_` prefix.
pub fn is_sys_consumer_group(group: &str) -> bool {
    group.starts_with("CID_RMQ_SYS_")
}

/// Java `BrokerMetricsManager.isSystemGroup` (the connection series): the prefix, any case.
pub fn is_system_group(group: &str) -> bool {
    group
        .get(..12)
        .is_some_and(|p| p.eq_ignore_ascii_case("CID_RMQ_SYS_"))
}

impl BrokerMetrics {
    pub fn new(enabled: bool) -> Self {
        BrokerMetrics {
            enabled,
            topics: DashMap::new(),
            rpc: DashMap::new(),
            topic_create: std::array::from_fn(|_| Histogram::new(CREATE_TIME_BUCKETS, 1000.0)),
            group_create: std::array::from_fn(|_| Histogram::new(CREATE_TIME_BUCKETS, 1000.0)),
            pop_revive_in: DashMap::new(),
            pop_revive_out: DashMap::new(),
            pop_revive_retry: DashMap::new(),
        }
    }

    /// A POP checkpoint (`ck` true) or ack record put to the revive topic with `status`.
    pub fn pop_revive_put(&self, group: &str, topic: &str, ck: bool, status: &str) {
        if self.enabled {
            let ty = if ck { "CK" } else { "ACK" };
            let key = (group.to_string(), topic.to_string(), ty, status.to_string());
            *self.pop_revive_in.entry(key).or_default() += 1;
        }
    }

    /// The revive service read a checkpoint or ack record from revive queue `qid`.
    pub fn pop_revive_get(&self, group: &str, topic: &str, qid: i32, ck: bool) {
        if self.enabled {
            let ty = if ck { "CK" } else { "ACK" };
            let key = (group.to_string(), topic.to_string(), qid, ty);
            *self.pop_revive_out.entry(key).or_default() += 1;
        }
    }

    /// The revive service put a message nobody acknowledged into its pop retry topic.
    pub fn pop_retry_put(&self, group: &str, topic: &str, status: &str) {
        if self.enabled {
            let key = (group.to_string(), topic.to_string(), status.to_string());
            *self.pop_revive_retry.entry(key).or_default() += 1;
        }
    }

    /// An UPDATE_AND_CREATE_TOPIC answered in `ms` (whole milliseconds, as Java records it).
    pub fn topic_created(&self, success: bool, system: bool, ms: u64) {
        if self.enabled {
            self.topic_create[usize::from(success) * 2 + usize::from(system)].record(ms * 1000);
        }
    }

    /// An UPDATE_AND_CREATE_SUBSCRIPTIONGROUP answered in `ms`.
    pub fn group_created(&self, success: bool, ms: u64) {
        if self.enabled {
            self.group_create[usize::from(success)].record(ms * 1000);
        }
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    fn topic(&self, topic: &str) -> Arc<TopicCounters> {
        if let Some(t) = self.topics.get(topic) {
            return t.clone();
        }
        self.topics
            .entry(topic.to_string())
            .or_insert_with(|| Arc::new(TopicCounters::new()))
            .clone()
    }

    /// A send stored `msgs` messages of `bytes` (Java skips retry and DLQ topics).
    pub fn message_in(&self, topic: &str, ty: MessageType, msgs: u64, bytes: u64) {
        if !self.enabled || is_retry_or_dlq(topic) || msgs == 0 {
            return;
        }
        let t = self.topic(topic);
        let c = &t.by_type[ty as usize];
        c.msgs.fetch_add(msgs, Ordering::Relaxed);
        c.bytes.fetch_add(bytes, Ordering::Relaxed);
        c.size.record(bytes / msgs);
    }

    /// A pull delivered `msgs` messages of `bytes` to `group`.
    pub fn message_out(&self, group: &str, topic: &str, msgs: u64, bytes: u64) {
        if !self.enabled || is_retry_or_dlq(topic) {
            return;
        }
        let t = self.topic(topic);
        let o = match t.out.get(group) {
            Some(o) => o.clone(),
            None => t.out.entry(group.to_string()).or_default().clone(),
        };
        o.msgs.fetch_add(msgs, Ordering::Relaxed);
        o.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// A POP of `topic` handed out `msgs` messages of `bytes`, read from its pop retry topic
    /// when `is_retry`.
    pub fn pop_message_out(&self, group: &str, topic: &str, is_retry: bool, msgs: u64, bytes: u64) {
        if !self.enabled {
            return;
        }
        let t = self.topic(topic);
        let key = (group.to_string(), is_retry);
        let o = t.pop_out.entry(key).or_default().clone();
        o.msgs.fetch_add(msgs, Ordering::Relaxed);
        o.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// A consumer's message went to its DLQ (labelled with the original topic).
    pub fn sent_to_dlq(&self, group: &str, topic: &str) {
        if !self.enabled {
            return;
        }
        let t = self.topic(topic);
        let c = match t.dlq.get(group) {
            Some(c) => c.clone(),
            None => t.dlq.entry(group.to_string()).or_default().clone(),
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// An END_TRANSACTION committed (`true`) or rolled back a half message of `topic`.
    /// An END_TRANSACTION committed (with the half message's born time) or rolled back a half
    /// message of `topic`.
    pub fn transaction_finished(&self, topic: &str, commit: Option<i64>) {
        if !self.enabled {
            return;
        }
        let t = self.topic(topic);
        match commit {
            Some(born_ms) => {
                t.commit.fetch_add(1, Ordering::Relaxed);
                let secs = (crate::broker::now_millis() - born_ms).max(0) / 1000;
                t.finish_latency.record(secs as u64);
            }
            None => {
                t.rollback.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// A request answered (or failed) after `micros`.
    pub fn rpc(&self, key: RpcKey, micros: u64) {
        if !self.enabled {
            return;
        }
        let h = match self.rpc.get(&key) {
            Some(h) => h.clone(),
            None => self
                .rpc
                .entry(key)
                .or_insert_with(|| Arc::new(Histogram::new(RPC_LATENCY_BUCKETS, 1000.0)))
                .clone(),
        };
        h.record(micros);
    }

    /// Forgets a deleted topic's series.
    pub fn topic_deleted(&self, topic: &str) {
        self.topics.remove(topic);
    }

    /// Forgets a deleted group's series.
    pub fn group_deleted(&self, group: &str) {
        for t in self.topics.iter() {
            t.out.remove(group);
            t.dlq.remove(group);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative_with_inf_last() {
        let h = Histogram::new(RPC_LATENCY_BUCKETS, 1000.0);
        for us in [500, 2_000, 2_000, 150_000, 9_000_000] {
            h.record(us);
        }
        let (b, sum, count) = h.snapshot();
        assert_eq!(count, 5);
        assert_eq!(b[0], (1.0, 1));
        assert_eq!(b[1], (3.0, 3));
        assert_eq!(b[6], (1000.0, 4));
        assert_eq!(b.last().unwrap().1, 5);
        assert!(b.last().unwrap().0.is_infinite());
        assert!((sum - 9154.5).abs() < 1e-9);
    }

    #[test]
    fn message_types_follow_javas_order() {
        assert_eq!(
            MessageType::of_properties(b"TRAN_MSG\x01true\x02__SHARDINGKEY\x01k\x02"),
            MessageType::Transaction
        );
        assert_eq!(
            MessageType::of_properties(b"__SHARDINGKEY\x01k\x02DELAY\x013\x02"),
            MessageType::Fifo
        );
        assert_eq!(
            MessageType::of_properties(b"DELAY\x013\x02"),
            MessageType::Delay
        );
        assert_eq!(
            MessageType::of_properties(b"KEYS\x01k\x02"),
            MessageType::Normal
        );
    }

    #[test]
    fn disabled_metrics_count_nothing_and_retry_topics_are_skipped() {
        let off = BrokerMetrics::new(false);
        off.message_in("T", MessageType::Normal, 1, 100);
        assert!(off.topics.is_empty());
        let on = BrokerMetrics::new(true);
        on.message_in("%RETRY%G", MessageType::Normal, 1, 100);
        on.message_in("%DLQ%G", MessageType::Normal, 1, 100);
        assert!(on.topics.is_empty());
        on.message_in("T", MessageType::Normal, 2, 300);
        assert_eq!(on.topic("T").by_type[0].msgs.load(Ordering::Relaxed), 2);
        assert!(is_system_group("cid_rmq_sys_trans"));
        assert!(!is_system_group("CID_RMQ"));
    }
}
