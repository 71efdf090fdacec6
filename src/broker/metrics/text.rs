//! The `/metrics` text, in the shape the Java broker's OpenTelemetry Prometheus exporter writes:
//! `target_info` and `otel_scope_info` first; per family `# TYPE <name> <type>` and `# HELP`
//! under the name without its unit, samples under the name with the unit (`_milliseconds`,
//! `_bytes`); `otel_scope_name` first, then the labels in name order; values as Java doubles;
//! every sample stamped with the scrape time in ms.

use std::fmt::Write;
use std::sync::atomic::Ordering;

use super::{
    is_retry_or_dlq, is_sys_consumer_group, is_system_group, Histogram, MessageType, RpcKey,
};
use crate::broker::BrokerContext;
use crate::common::java_format::{java_double, mq_version_desc};
use crate::common::topic::{is_system_topic, RETRY_GROUP_TOPIC_PREFIX};
use crate::remoting::body::heartbeat::ConsumeType;
use crate::remoting::{RequestCode, ResponseCode};
use crate::store::StoreRuntimeInfo;

const SCOPE: &str = "broker-meter";
/// Java's `processor_watermark` series, one per request thread pool.
const PROCESSORS: [&str; 12] = [
    "send",
    "async_put",
    "pull",
    "ack",
    "query_message",
    "client_manager",
    "heartbeat",
    "lite_pull",
    "transaction",
    "consumer_manager",
    "admin",
    "reply",
];

type Labels = Vec<(&'static str, String)>;

/// Builds one exposition; families are written whole, in the order they are added.
pub struct Exposition {
    out: String,
    now_ms: i64,
    /// On every series: cluster, node and `metricsLabel`'s pairs.
    common: Vec<(String, String)>,
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

impl Exposition {
    pub fn new(now_ms: i64, common: Vec<(String, String)>) -> Self {
        let mut out = String::with_capacity(16 * 1024);
        out.push_str("# TYPE target info\n# HELP target Target metadata\ntarget_info{} 1\n");
        let _ = writeln!(
            out,
            "# TYPE otel_scope_info info\n# HELP otel_scope_info Scope metadata\n\
             otel_scope_info{{otel_scope_name=\"{SCOPE}\"}} 1"
        );
        Exposition {
            out,
            now_ms,
            common,
        }
    }

    fn labels(&self, own: &Labels, extra: Option<(&str, String)>) -> String {
        let mut all: Vec<(&str, &str)> = self
            .common
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .chain(own.iter().map(|(k, v)| (*k, v.as_str())))
            .collect();
        all.sort_by(|a, b| a.0.cmp(b.0));
        let mut s = format!("otel_scope_name=\"{SCOPE}\"");
        for (k, v) in all {
            let _ = write!(s, ",{k}=\"{}\"", escape(v));
        }
        if let Some((k, v)) = extra {
            let _ = write!(s, ",{k}=\"{v}\"");
        }
        s
    }

    fn header(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.out, "# TYPE {name} {kind}\n# HELP {name} {help}");
    }

    /// A gauge family; `unit` is appended to the samples' name. Nothing is written without series.
    pub fn gauge(&mut self, name: &str, unit: &str, series: &[(Labels, f64)]) {
        self.scalar(name, unit, "gauge", "default view for gauge.", series);
    }

    /// A counter family (`name` ends in `_total`).
    pub fn counter(&mut self, name: &str, series: &[(Labels, f64)]) {
        self.scalar(name, "", "counter", "default view for counter.", series);
    }

    fn scalar(&mut self, name: &str, unit: &str, kind: &str, help: &str, series: &[(Labels, f64)]) {
        if series.is_empty() {
            return;
        }
        self.header(name, kind, help);
        for (labels, v) in series {
            let l = self.labels(labels, None);
            let _ = writeln!(
                self.out,
                "{name}{unit}{{{l}}} {} {}",
                java_double(*v),
                self.now_ms
            );
        }
    }

    /// A histogram family.
    pub fn histogram(
        &mut self,
        name: &str,
        unit: &str,
        help: &str,
        series: &[(Labels, &Histogram)],
    ) {
        if series.is_empty() {
            return;
        }
        self.header(name, "histogram", help);
        for (labels, h) in series {
            let (buckets, sum, count) = h.snapshot();
            let l = self.labels(labels, None);
            let ts = self.now_ms;
            let _ = writeln!(
                self.out,
                "{name}{unit}_count{{{l}}} {} {ts}",
                java_double(count as f64)
            );
            let _ = writeln!(
                self.out,
                "{name}{unit}_sum{{{l}}} {} {ts}",
                java_double(sum)
            );
            for (le, c) in buckets {
                let le = if le.is_infinite() {
                    "+Inf".to_string()
                } else {
                    java_double(le)
                };
                let l = self.labels(labels, Some(("le", le)));
                let _ = writeln!(
                    self.out,
                    "{name}{unit}_bucket{{{l}}} {} {ts}",
                    java_double(c as f64)
                );
            }
        }
    }

    pub fn finish(self) -> String {
        self.out
    }
}

fn b(v: bool) -> String {
    v.to_string()
}

/// The whole exposition for one scrape.
pub fn render(ctx: &BrokerContext) -> String {
    let now = crate::broker::now_millis();
    let cfg = &ctx.config;
    let mut common: Vec<(String, String)> = vec![
        ("cluster".into(), cfg.broker_cluster_name.clone()),
        ("node_id".into(), cfg.broker_name.clone()),
        ("node_type".into(), "broker".into()),
    ];
    // Java's `metricsLabel`: extra k:v pairs on every series
    for pair in cfg.metrics_label.split(',') {
        if let Some((k, v)) = pair.split_once(':') {
            common.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let mut e = Exposition::new(now, common);
    broker_gauges(ctx, &mut e);
    let info = ctx.store.runtime_info();
    storage_gauges(&info, now, &mut e);
    if ctx.store.config().timer_wheel_enable {
        timer(ctx, now, &mut e);
    }
    traffic(ctx, &mut e);
    connections(ctx, &mut e);
    lag(ctx, now, &mut e);
    pop(ctx, now, &mut e);
    rmqd_own(ctx, &info, &mut e);
    e.finish()
}

/// Java `PopMetricsManager`'s families. rmqd has no pop buffer (Java's `enablePopBufferMerge` is
/// off by default, and its offset queue is rmqd's immediate commit): both buffer gauges are 0 and
/// there is no buffer-scan histogram. As Java, `rocketmq_pop_revive_lag` holds the revive queue's
/// messages behind and `rocketmq_pop_revive_latency` the milliseconds behind.
fn pop(ctx: &BrokerContext, now: i64, e: &mut Exposition) {
    use crate::broker::pop::records::REVIVE_GROUP;
    e.gauge("rocketmq_pop_offset_buffer_size", "", &[(vec![], 0.0)]);
    e.gauge("rocketmq_pop_checkpoint_buffer_size", "", &[(vec![], 0.0)]);
    let topic = crate::broker::pop::revive::revive_topic(ctx);
    let (mut behind, mut latency) = (Vec::new(), Vec::new());
    for (qid, ts) in ctx.pop.revive_ts.iter().enumerate() {
        let ts = ts.load(std::sync::atomic::Ordering::Relaxed);
        let q = qid as i32;
        let done = ctx.offsets.query(REVIVE_GROUP, &topic, q).unwrap_or(-1);
        let max = ctx.store.max_offset_in_queue(&topic, q).max(0);
        let (messages, millis) = if ts <= 0 {
            (0, 0)
        } else if max - done > 1 {
            (max - done, (now - ts).max(0))
        } else {
            ((max - done).max(0), 0)
        };
        behind.push((vec![("queue_id", qid.to_string())], messages as f64));
        latency.push((vec![("queue_id", qid.to_string())], millis as f64));
    }
    e.gauge("rocketmq_pop_revive_lag", "_milliseconds", &behind);
    e.gauge("rocketmq_pop_revive_latency", "_milliseconds", &latency);
    let m = &ctx.metrics;
    let put: Vec<(Labels, f64)> = m
        .pop_revive_in
        .iter()
        .map(|kv| {
            let (g, t, ty, st) = kv.key();
            let labels = vec![
                ("consumer_group", g.clone()),
                ("topic", t.clone()),
                ("revive_message_type", ty.to_string()),
                ("put_status", st.clone()),
            ];
            (labels, *kv.value() as f64)
        })
        .collect();
    e.counter("rocketmq_pop_revive_in_message_total", &put);
    let got: Vec<(Labels, f64)> = m
        .pop_revive_out
        .iter()
        .map(|kv| {
            let (g, t, q, ty) = kv.key();
            let labels = vec![
                ("consumer_group", g.clone()),
                ("topic", t.clone()),
                ("queue_id", q.to_string()),
                ("revive_message_type", ty.to_string()),
            ];
            (labels, *kv.value() as f64)
        })
        .collect();
    e.counter("rocketmq_pop_revive_out_message_total", &got);
    let retry: Vec<(Labels, f64)> = m
        .pop_revive_retry
        .iter()
        .map(|kv| {
            let (g, t, st) = kv.key();
            let labels = vec![
                ("consumer_group", g.clone()),
                ("topic", t.clone()),
                ("put_status", st.clone()),
            ];
            (labels, *kv.value() as f64)
        })
        .collect();
    e.counter("rocketmq_pop_revive_retry_messages_total", &retry);
}

/// Java `DefaultStoreMetricsManager`'s timer families (registered when `timerWheelEnable`),
/// from rmqd's timer service.
fn timer(ctx: &BrokerContext, now: i64, e: &mut Exposition) {
    let m = ctx.timer.metrics(now);
    let one = |v: i64| vec![(store_labels(Vec::new()), v as f64)];
    let per_topic = |v: &[(String, u64)]| -> Vec<(Labels, f64)> {
        v.iter()
            .map(|(t, n)| (store_labels(vec![("topic", t.clone())]), *n as f64))
            .collect()
    };
    let series = one(m.enqueue_lag);
    e.gauge("rocketmq_timer_enqueue_lag", "", &series);
    let series = one(m.enqueue_latency_ms);
    e.gauge("rocketmq_timer_enqueue_latency", "_milliseconds", &series);
    let series = one(m.dequeue_lag);
    e.gauge("rocketmq_timer_dequeue_lag", "", &series);
    let series = one(m.dequeue_behind_s);
    e.gauge("rocketmq_timer_dequeue_latency", "_milliseconds", &series);
    let timing: Vec<(Labels, f64)> = m
        .timing
        .iter()
        .map(|(t, n)| (store_labels(vec![("topic", t.clone())]), *n as f64))
        .collect();
    e.gauge("rocketmq_timing_messages", "", &timing);
    let series = per_topic(&m.enqueued);
    e.counter("rocketmq_timer_enqueue_total", &series);
    let series = per_topic(&m.dequeued);
    e.counter("rocketmq_timer_dequeue_total", &series);
    let dist: Vec<(Labels, f64)> = m
        .distribution
        .iter()
        .map(|(b, n)| {
            (
                store_labels(vec![("timer_bound_s", b.to_string())]),
                *n as f64,
            )
        })
        .collect();
    e.gauge("rocketmq_timer_message_snapshot", "", &dist);
    let latency: Vec<(Labels, &crate::common::histogram::Histogram)> = m
        .set_latency
        .iter()
        .map(|(t, h)| (store_labels(vec![("topic", t.clone())]), h.as_ref()))
        .collect();
    e.histogram(
        "rocketmq_delay_message_latency",
        "_seconds",
        "Timer message set latency distribution",
        &latency,
    );
}

/// `extra` with the labels Java's store families carry (DefaultStoreMetricsManager).
fn store_labels(mut extra: Labels) -> Labels {
    extra.push(("storage_medium", "disk".to_string()));
    extra.push(("storage_type", "local".to_string()));
    extra
}

fn broker_gauges(ctx: &BrokerContext, e: &mut Exposition) {
    e.gauge(
        "rocketmq_broker_permission",
        "",
        &[(vec![], ctx.broker_permission() as f64)],
    );
    e.gauge(
        "rocketmq_topic_number",
        "",
        &[(vec![], ctx.topics.names().len() as f64)],
    );
    e.gauge(
        "rocketmq_consumer_group_number",
        "",
        &[(vec![], ctx.groups.all().len() as f64)],
    );
    // rmqd serves requests on its network workers with no queue in front: nothing waits
    let watermark: Vec<(Labels, f64)> = PROCESSORS
        .iter()
        .map(|p| (vec![("processor", p.to_string())], 0.0))
        .collect();
    e.gauge("rocketmq_processor_watermark", "", &watermark);
}

fn storage_gauges(info: &StoreRuntimeInfo, now: i64, e: &mut Exposition) {
    let disk = || {
        vec![
            ("storage_medium", "disk".to_string()),
            ("storage_type", "local".to_string()),
        ]
    };
    if let Some((total, free)) = info.root_dir_space {
        e.gauge(
            "rocketmq_storage_size",
            "_bytes",
            &[(disk(), total.saturating_sub(free) as f64)],
        );
    }
    e.gauge(
        "rocketmq_storage_flush_behind_bytes",
        "",
        &[(disk(), info.remain_to_flush as f64)],
    );
    e.gauge(
        "rocketmq_storage_dispatch_behind_bytes",
        "",
        &[(disk(), info.dispatch_behind_bytes.max(0) as f64)],
    );
    if info.earliest_message_time > 0 {
        e.gauge(
            "rocketmq_storage_message_reserve_time",
            "_milliseconds",
            &[(disk(), (now - info.earliest_message_time) as f64)],
        );
    }
}

fn traffic(ctx: &BrokerContext, e: &mut Exposition) {
    let m = &ctx.metrics;
    let mut msgs_in = Vec::new();
    let mut bytes_in = Vec::new();
    let mut sizes = Vec::new();
    let mut msgs_out = Vec::new();
    let mut bytes_out = Vec::new();
    let mut dlq = Vec::new();
    let mut commit = Vec::new();
    let mut rollback = Vec::new();
    let mut finish: Vec<(Labels, &Histogram)> = Vec::new();
    let topics: Vec<(String, std::sync::Arc<super::TopicCounters>)> = m
        .topics
        .iter()
        .map(|t| (t.key().clone(), t.value().clone()))
        .collect();
    for (topic, t) in &topics {
        let system = is_system_topic(topic);
        for ty in MessageType::ALL {
            let c = &t.by_type[ty as usize];
            let n = c.msgs.load(Ordering::Relaxed);
            if n == 0 {
                continue;
            }
            let l: Labels = vec![
                ("topic", topic.clone()),
                ("message_type", ty.label().to_string()),
                ("is_system", b(system)),
            ];
            msgs_in.push((l.clone(), n as f64));
            bytes_in.push((l.clone(), c.bytes.load(Ordering::Relaxed) as f64));
            sizes.push((l, &c.size));
        }
        for o in t.out.iter() {
            let l: Labels = vec![
                ("topic", topic.clone()),
                ("consumer_group", o.key().clone()),
                ("is_system", b(system || is_sys_consumer_group(o.key()))),
            ];
            msgs_out.push((l.clone(), o.msgs.load(Ordering::Relaxed) as f64));
            bytes_out.push((l, o.bytes.load(Ordering::Relaxed) as f64));
        }
        for o in t.pop_out.iter() {
            let (group, is_retry) = o.key();
            let l: Labels = vec![
                ("topic", topic.clone()),
                ("consumer_group", group.clone()),
                ("is_retry", b(*is_retry)),
                ("is_system", b(system || is_sys_consumer_group(group))),
            ];
            msgs_out.push((l.clone(), o.msgs.load(Ordering::Relaxed) as f64));
            bytes_out.push((l, o.bytes.load(Ordering::Relaxed) as f64));
        }
        for d in t.dlq.iter() {
            let l: Labels = vec![
                ("topic", topic.clone()),
                ("consumer_group", d.key().clone()),
                ("is_system", b(system || is_sys_consumer_group(d.key()))),
            ];
            dlq.push((l, d.load(Ordering::Relaxed) as f64));
        }
        if t.finish_latency.snapshot().2 > 0 {
            finish.push((vec![("topic", topic.clone())], &t.finish_latency));
        }
        for (count, into) in [(&t.commit, &mut commit), (&t.rollback, &mut rollback)] {
            let n = count.load(Ordering::Relaxed);
            if n > 0 {
                into.push((vec![("topic", topic.clone())], n as f64));
            }
        }
    }
    e.counter("rocketmq_messages_in_total", &msgs_in);
    e.counter("rocketmq_throughput_in_total", &bytes_in);
    e.histogram(
        "rocketmq_message_size",
        "",
        "Incoming messages size",
        &sizes,
    );
    e.counter("rocketmq_messages_out_total", &msgs_out);
    e.counter("rocketmq_throughput_out_total", &bytes_out);
    e.counter("rocketmq_send_to_dlq_messages_total", &dlq);
    e.counter("rocketmq_commit_messages_total", &commit);
    e.counter("rocketmq_rollback_messages_total", &rollback);
    // Java's gauge reads TransactionMetrics: every topic that ever had a half message, across
    // restarts (`config/transactionMetrics`)
    let half: Vec<(Labels, f64)> = ctx
        .tx_counts
        .snapshot()
        .into_iter()
        .map(|(topic, n)| (vec![("topic", topic)], n as f64))
        .collect();
    e.gauge("rocketmq_half_messages", "", &half);
    e.histogram(
        "rocketmq_finish_message_latency",
        "_milliseconds",
        "Transaction finish latency",
        &finish,
    );

    let rpc: Vec<(RpcKey, std::sync::Arc<Histogram>)> = m
        .rpc
        .iter()
        .map(|r| (*r.key(), r.value().clone()))
        .collect();
    let series: Vec<(Labels, &Histogram)> = rpc
        .iter()
        .map(|(k, h)| {
            let mut l: Labels = vec![
                ("protocol_type", "remoting".to_string()),
                ("request_code", request_code_desc(k.request_code)),
                ("result", k.result.label().to_string()),
            ];
            if let Some(long_polling) = k.long_polling {
                l.push(("is_long_polling", b(long_polling)));
            }
            if let Some(code) = k.response_code {
                l.push(("response_code", response_code_desc(code)));
            }
            (l, &**h)
        })
        .collect();
    e.histogram(
        "rocketmq_rpc_latency",
        "_milliseconds",
        "Rpc latency",
        &series,
    );

    // Java's creation times: a series once a creation was recorded under its labels
    let status = |success: bool| if success { "success" } else { "failure" }.to_string();
    let mut topics: Vec<(Labels, &Histogram)> = Vec::new();
    for (i, h) in m.topic_create.iter().enumerate() {
        if h.snapshot().2 > 0 {
            let labels = vec![
                ("invocation_status", status(i >= 2)),
                ("is_system", b(i % 2 == 1)),
            ];
            topics.push((labels, h));
        }
    }
    e.histogram(
        "rocketmq_topic_create_execution_time",
        "_milliseconds",
        "The distribution of create topic time",
        &topics,
    );
    let mut groups: Vec<(Labels, &Histogram)> = Vec::new();
    for (i, h) in m.group_create.iter().enumerate() {
        if h.snapshot().2 > 0 {
            groups.push((vec![("invocation_status", status(i == 1))], h));
        }
    }
    e.histogram(
        "rocketmq_consumer_group_create_execution_time",
        "_milliseconds",
        "The distribution of create subscription time",
        &groups,
    );
}

/// Java `RemotingHelper.getRequestCodeDesc`: the constant's name in lower case, else the number.
fn request_code_desc(code: i32) -> String {
    RequestCode::from_code(code).map_or_else(|| code.to_string(), |c| c.name().to_lowercase())
}

fn response_code_desc(code: i32) -> String {
    ResponseCode::from_code(code).map_or_else(|| code.to_string(), |c| c.name().to_lowercase())
}

fn consume_mode(t: ConsumeType) -> &'static str {
    match t {
        ConsumeType::ConsumeActively => "pull",
        ConsumeType::ConsumePassively => "push",
        ConsumeType::ConsumePop => "pop",
    }
}

fn connections(ctx: &BrokerContext, e: &mut Exposition) {
    use std::collections::BTreeMap;
    let mut producers: BTreeMap<(String, String), u64> = BTreeMap::new();
    for (_, channels) in ctx.clients.producer_table() {
        for c in channels {
            let key = (
                c.language.name().to_lowercase(),
                mq_version_desc(c.version).to_lowercase(),
            );
            *producers.entry(key).or_default() += 1;
        }
    }
    let series: Vec<(Labels, f64)> = producers
        .into_iter()
        .map(|((language, version), n)| {
            (
                vec![
                    ("language", language),
                    ("version", version),
                    ("protocol_type", "remoting".to_string()),
                ],
                n as f64,
            )
        })
        .collect();
    e.gauge("rocketmq_producer_connections", "", &series);

    let mut consumers: BTreeMap<(String, String, String, &'static str), u64> = BTreeMap::new();
    for g in ctx.clients.consumer_table() {
        for c in g.channels.values() {
            let key = (
                g.group_name.clone(),
                c.language.name().to_lowercase(),
                mq_version_desc(c.version).to_lowercase(),
                consume_mode(g.consume_type),
            );
            *consumers.entry(key).or_default() += 1;
        }
    }
    let series: Vec<(Labels, f64)> = consumers
        .into_iter()
        .map(|((group, language, version, mode), n)| {
            let system = is_system_group(&group);
            (
                vec![
                    ("consumer_group", group),
                    ("language", language),
                    ("version", version),
                    ("consume_mode", mode.to_string()),
                    ("protocol_type", "remoting".to_string()),
                    ("is_system", b(system)),
                ],
                n as f64,
            )
        })
        .collect();
    e.gauge("rocketmq_consumer_connections", "", &series);
}

/// Java `ConsumeQueue.estimateMessageCount` (brokerConfig `estimateAccumulation`, on by default):
/// the units of `from..to` whose tag code the group's TAG subscription takes. A `from` below the
/// queue's minimum moves up keeping the span; past `maxConsumeQueueScan` (20 000) units scanned or
/// `sampleCountThreshold` (5 000) matched, the matched share of what was scanned is extrapolated.
fn estimate_count(
    ctx: &BrokerContext,
    topic: &str,
    q: i32,
    mut from: i64,
    mut to: i64,
    filter: &crate::common::tag::TagFilter,
) -> i64 {
    const MAX_SCAN: i64 = 20_000;
    const SAMPLE_MATCHES: i64 = 5_000;
    const BATCH: i32 = 1_024;
    let min = ctx.store.min_offset_in_queue(topic, q);
    if from < min {
        let span = to - from;
        from = min;
        to = from + span;
    }
    let (mut raw, mut matched, mut at) = (0i64, 0i64, from);
    while at < to {
        let want = (to - at).min(BATCH as i64) as i32;
        let units = match ctx.store.consume_queue_units(topic, q, at, want) {
            Some(u) if !u.is_empty() => u,
            // nothing to scan (Java: no file in range means the plain difference)
            _ if raw == 0 => return to - from,
            _ => break,
        };
        for (_, _, tags_code) in &units {
            raw += 1;
            if filter.codes.contains(&(*tags_code as i32)) {
                matched += 1;
            }
            if raw >= MAX_SCAN || matched > SAMPLE_MATCHES {
                return (matched as f64 * (to - from) as f64 / raw as f64) as i64;
            }
        }
        at += units.len() as i64;
    }
    matched
}

/// Java `ConsumerLagCalculator` for Remoting consumers: every subscription group with online
/// consumers, every topic they subscribe (retry topics skipped), over the topic's write queues.
fn lag(ctx: &BrokerContext, now: i64, e: &mut Exposition) {
    let mut lag_msgs = Vec::new();
    let mut lag_latency = Vec::new();
    let mut inflight = Vec::new();
    let mut queueing = Vec::new();
    let mut ready = Vec::new();
    let perm = ctx.broker_permission();
    for sub in ctx.groups.all() {
        let group = &sub.group_name;
        let Some(topics) = ctx.clients.subscribed_topics(group) else {
            continue;
        };
        for topic in &topics {
            if topic.starts_with(RETRY_GROUP_TOPIC_PREFIX) {
                continue;
            }
            let Some(tc) = ctx.topics.select(topic) else {
                continue;
            };
            let p = tc.perm & perm;
            if p & (crate::common::topic::PERM_READ | crate::common::topic::PERM_WRITE) == 0 {
                continue;
            }
            let filter = ctx
                .clients
                .subscription(group, topic)
                .filter(|sd| sd.is_tag_type())
                .map(|sd| sd.tag_filter())
                .filter(|f| !f.all);
            let count = |q: i32, from: i64, to: i64| match &filter {
                Some(f) if to > from => estimate_count(ctx, topic, q, from, to, f),
                _ => (to - from).max(0),
            };
            let (mut lag, mut in_flight, mut avail) = (0i64, 0i64, 0i64);
            let (mut earliest_unconsumed, mut earliest_unpulled) = (i64::MAX, i64::MAX);
            for q in 0..tc.write_queue_nums {
                let max = ctx.store.max_offset_in_queue(topic, q).max(0);
                let committed = ctx.offsets.query(group, topic, q);
                let consumer = committed.filter(|o| *o >= 0).unwrap_or(max);
                lag += count(q, consumer, max);
                earliest_unconsumed = earliest_unconsumed.min(store_time(ctx, topic, q, consumer));
                // Java's queryPullOffset falls back to the committed offset
                let pull_or_commit = ctx.offsets.query_pull(group, topic, q).or(committed);
                let pulled = pull_or_commit.unwrap_or(0).max(0);
                let commit = committed.filter(|o| *o >= 0).unwrap_or(pulled);
                in_flight += count(q, commit, pulled);
                earliest_unpulled = earliest_unpulled.min(store_time(ctx, topic, q, pulled));
                let from = pull_or_commit.filter(|o| *o >= 0).unwrap_or(max);
                avail += count(q, from, max);
            }
            let age = |t: i64| {
                if t <= 0 || t == i64::MAX {
                    0
                } else {
                    (now - t).max(0)
                }
            };
            let l: Labels = vec![
                ("consumer_group", group.clone()),
                ("topic", topic.clone()),
                ("is_retry", b(false)),
                (
                    "is_system",
                    b(is_system_topic(topic) || is_system_group(group)),
                ),
            ];
            lag_msgs.push((l.clone(), lag as f64));
            lag_latency.push((l.clone(), age(earliest_unconsumed) as f64));
            inflight.push((l.clone(), in_flight as f64));
            queueing.push((l.clone(), age(earliest_unpulled) as f64));
            ready.push((l, avail as f64));
        }
    }
    e.gauge("rocketmq_consumer_ready_messages", "", &ready);
    e.gauge("rocketmq_consumer_lag_messages", "", &lag_msgs);
    e.gauge(
        "rocketmq_consumer_lag_latency",
        "_milliseconds",
        &lag_latency,
    );
    e.gauge("rocketmq_consumer_inflight_messages", "", &inflight);
    e.gauge(
        "rocketmq_consumer_queueing_latency",
        "_milliseconds",
        &queueing,
    );
}

/// Store time of the message at `offset`, `i64::MAX` when there is none (Java `getStoreTimeStamp`).
fn store_time(ctx: &BrokerContext, topic: &str, queue: i32, offset: i64) -> i64 {
    if offset < 0 {
        return i64::MAX;
    }
    let t = ctx.store.message_store_timestamp(topic, queue, offset);
    if t > 0 {
        t
    } else {
        i64::MAX
    }
}

/// rmqd's own families (README "Metrics"): what seed 001 asks an operator to watch beyond Java's.
fn rmqd_own(ctx: &BrokerContext, info: &StoreRuntimeInfo, e: &mut Exposition) {
    let o = ctx.store.observability();
    let path = |p: &str| vec![("path", p.to_string())];
    let mut usage = Vec::new();
    let mut marks = Vec::new();
    for (p, ratio) in &o.path_usage {
        usage.push((path(p), *ratio));
        for (mark, v) in &o.watermarks {
            let mut l = path(p);
            l.push(("watermark", mark.to_string()));
            marks.push((l, *v));
        }
    }
    e.gauge("rmqd_storage_usage_ratio", "", &usage);
    e.gauge("rmqd_storage_watermark_ratio", "", &marks);
    e.gauge(
        "rmqd_dispatch_behind",
        "_milliseconds",
        &[(vec![], o.dispatch_behind_ms as f64)],
    );
    e.histogram(
        "rmqd_put_latency",
        "_milliseconds",
        "Time from a put's start to its answer (after the flush under SYNC_FLUSH)",
        &[(vec![], o.put_latency)],
    );
    e.histogram(
        "rmqd_commitlog_flush_latency",
        "_milliseconds",
        "Time of one commit-log flush (msync of the dirty range: the fsync of the data)",
        &[(vec![], o.flush_latency)],
    );
    // what forced cleanup (disk pressure) deleted before it expired (README "Where rmqd differs")
    e.counter(
        "rmqd_cleanup_forced_deleted_files_total",
        &[(vec![], info.forced_deleted_files as f64)],
    );
    e.counter(
        "rmqd_cleanup_forced_deleted_messages_total",
        &[(vec![], info.forced_deleted_messages as f64)],
    );
    e.counter(
        "rmqd_cleanup_forced_deleted_unconsumed_messages_total",
        &[(
            vec![],
            ctx.stats
                .forced_unconsumed
                .load(std::sync::atomic::Ordering::Relaxed) as f64,
        )],
    );
    e.gauge(
        "rmqd_commitlog_fsync_failed",
        "",
        &[(vec![], if info.poisoned.is_some() { 1.0 } else { 0.0 })],
    );
    e.gauge(
        "rmqd_disk_full",
        "",
        &[(vec![], if info.disk_full { 1.0 } else { 0.0 })],
    );
    e.gauge(
        "rmqd_pull_held_requests",
        "",
        &[(vec![], ctx.pull_hold.held() as f64)],
    );
    e.gauge(
        "rmqd_recovery_duration",
        "_milliseconds",
        &[(vec![], o.recovery_ms as f64)],
    );
    e.gauge(
        "rmqd_recovery_scanned_bytes",
        "",
        &[(vec![], o.recovery_scanned_bytes as f64)],
    );
    let _ = is_retry_or_dlq;
}
