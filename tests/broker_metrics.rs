//! `/metrics` (`metricsExporterType=PROM`) over real HTTP after a real workload over the Remoting
//! port: the values agree with what the clients saw (messages in = acknowledged sends, out =
//! pulled, lag = sent − committed, dispatch behind 0 at rest, usage ratio = statvfs of the store
//! path), and the text has the shape of the Java broker's OpenTelemetry exporter.

mod support;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use rmqd::remoting::{RequestCode, ResponseCode};
use support::{create_topic, request as req, RawClient};

const TOPIC: &str = "MET_T";
const GROUP: &str = "MET_G";

fn http(addr: SocketAddr, method: &str) -> (String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "{method} /metrics HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    (head.to_string(), body.to_string())
}

/// `name{labels}` -> value, for every sample line.
fn samples(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        // the two info lines carry no timestamp, as in Java's exporter
        .filter(|l| !l.starts_with("target_info") && !l.starts_with("otel_scope_info"))
        .map(|l| {
            let mut parts = l.rsplitn(3, ' ');
            let _ts = parts.next().unwrap();
            let v: f64 = parts.next().unwrap().parse().unwrap();
            (parts.next().unwrap().to_string(), v)
        })
        .collect()
}

/// The value of the one sample of `name` whose labels include every `want` pair.
fn value(s: &BTreeMap<String, f64>, name: &str, want: &[(&str, &str)]) -> f64 {
    let hits: Vec<f64> = s
        .iter()
        .filter(|(k, _)| {
            k.split('{').next() == Some(name)
                && want
                    .iter()
                    .all(|(lk, lv)| k.contains(&format!("{lk}=\"{lv}\"")))
        })
        .map(|(_, v)| *v)
        .collect();
    assert_eq!(hits.len(), 1, "{name} {want:?}: {hits:?}");
    hits[0]
}

fn send(c: &mut RawClient, props: &str, body: &[u8]) {
    send_born(c, props, body, 1_700_000_000_000)
}

fn send_born(c: &mut RawClient, props: &str, body: &[u8], born_ms: i64) {
    let born = born_ms.to_string();
    let mut cmd = req(
        RequestCode::SEND_MESSAGE_V2,
        &[
            ("a", "MET_PG"),
            ("b", TOPIC),
            ("c", "TBW102"),
            ("d", "4"),
            ("e", "0"),
            ("f", "0"),
            ("g", &born),
            ("h", "0"),
            ("i", props),
        ],
    );
    cmd.body = bytes::Bytes::copy_from_slice(body).into();
    let r = c.call_past_requests(&cmd);
    assert_eq!(r.code, 0, "{:?}", r.remark);
}

/// statvfs used / (used + available), as `rmqd_storage_usage_ratio` reports it.
fn statvfs_ratio(path: &std::path::Path) -> f64 {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: zeroed statvfs is valid and the C string lives across the call.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
    let f = st.f_frsize as f64;
    let used = (st.f_blocks - st.f_bfree) as f64 * f;
    used / (used + st.f_bavail as f64 * f)
}

/// A broker serving /metrics on a free loopback port.
async fn start_prom_broker(dir: &std::path::Path) -> rmqd::broker::BrokerController {
    let keys = [
        ("metricsExporterType", "PROM"),
        ("metricsPromExporterHost", "127.0.0.1"),
        ("metricsPromExporterPort", "0"),
    ];
    support::start_broker_with(dir, &keys, &[]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scraped_values_agree_with_the_workload() {
    let dir = tempfile::tempdir().unwrap();
    let broker = start_prom_broker(dir.path()).await;
    let (addr, metrics) = (broker.local_addr(), broker.metrics_addr().unwrap());
    let root = dir.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, TOPIC, 1);
        // a consumer online for the group, subscribed to the topic (lag gauges need one)
        let hb = format!(
            r#"{{"clientID":"127.0.0.1@met","consumerDataSet":[{{"consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","consumeType":"CONSUME_ACTIVELY","groupName":"{GROUP}","messageModel":"CLUSTERING","subscriptionDataSet":[{{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*","subVersion":0,"tagsSet":[],"topic":"{TOPIC}"}}],"unitMode":false}}],"producerDataSet":[{{"groupName":"MET_PG"}}]}}"#
        );
        let mut h = req(RequestCode::HEART_BEAT, &[]);
        h.body = bytes::Bytes::from(hb).into();
        let r = c.call_past_requests(&h);
        assert_eq!(r.code, 0, "{:?}", r.remark);

        for i in 0..6 {
            send(&mut c, "", format!("normal-{i}").as_bytes());
        }
        for i in 0..2 {
            send(&mut c, "__SHARDINGKEY\u{1}k\u{2}", format!("fifo-{i}").as_bytes());
        }
        let sent = 8.0;
        // pull 8 as the group, commit 5
        let mut pulled = 0.0;
        while pulled < sent {
            let mut p = support::pull_request(TOPIC, 0, pulled as i64);
            p.ext_mut().insert("consumerGroup", GROUP);
            let r = support::pull_dispatched(&mut c, &p);
            assert_eq!(r.code, 0, "pull at {pulled}: {:?}", r.remark);
            pulled += support::records(&r.body.to_bytes()).len() as f64;
        }
        assert_eq!(pulled, sent);
        let r = c.call_past_requests(&req(
            RequestCode::UPDATE_CONSUMER_OFFSET,
            &[
                ("consumerGroup", GROUP),
                ("topic", TOPIC),
                ("queueId", "0"),
                ("commitOffset", "5"),
            ],
        ));
        assert_eq!(r.code, ResponseCode::SUCCESS.code());

        let (head, body) = http(metrics, "GET");
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        assert!(head.contains("text/plain; version=0.0.4"), "{head}");
        let s = samples(&body);
        let t = [("topic", TOPIC)];
        let normal = [("topic", TOPIC), ("message_type", "normal")];
        let fifo = [("topic", TOPIC), ("message_type", "fifo")];
        assert_eq!(value(&s, "rocketmq_messages_in_total", &normal), 6.0);
        assert_eq!(value(&s, "rocketmq_messages_in_total", &fifo), 2.0);
        assert_eq!(value(&s, "rocketmq_message_size_count", &normal), 6.0);
        let bytes_in = value(&s, "rocketmq_throughput_in_total", &normal)
            + value(&s, "rocketmq_throughput_in_total", &fifo);
        let out = [("topic", TOPIC), ("consumer_group", GROUP)];
        assert_eq!(value(&s, "rocketmq_messages_out_total", &out), pulled);
        assert_eq!(
            value(&s, "rocketmq_throughput_out_total", &out),
            bytes_in,
            "every byte stored was pulled"
        );
        let lag = [("topic", TOPIC), ("consumer_group", GROUP), ("is_retry", "false")];
        assert_eq!(value(&s, "rocketmq_consumer_lag_messages", &lag), sent - 5.0);
        assert_eq!(value(&s, "rocketmq_consumer_inflight_messages", &lag), sent - 5.0);
        assert_eq!(value(&s, "rocketmq_consumer_ready_messages", &lag), 0.0);
        // the oldest unconsumed message (offset 5) was stored moments ago
        let age = value(&s, "rocketmq_consumer_lag_latency_milliseconds", &lag);
        assert!((0.0..60_000.0).contains(&age), "{age}");
        assert_eq!(
            value(&s, "rocketmq_storage_dispatch_behind_bytes", &[]),
            0.0,
            "at rest"
        );
        assert_eq!(value(&s, "rmqd_dispatch_behind_milliseconds", &[]), 0.0);
        let root_s = root.display().to_string();
        let usage = value(&s, "rmqd_storage_usage_ratio", &[("path", &root_s)]);
        assert!((usage - statvfs_ratio(&root)).abs() < 0.01, "{usage}");
        assert_eq!(
            value(
                &s,
                "rmqd_storage_watermark_ratio",
                &[("path", &root_s), ("watermark", "refuse_writes")]
            ),
            0.9
        );
        let send_rpc = [("request_code", "send_message_v2"), ("response_code", "success")];
        assert_eq!(value(&s, "rocketmq_rpc_latency_milliseconds_count", &send_rpc), sent);
        assert!(value(&s, "rmqd_put_latency_milliseconds_count", &[]) >= sent);
        assert_eq!(value(&s, "rocketmq_broker_permission", &[]), 6.0);
        let created = [("invocation_status", "success"), ("is_system", "false")];
        assert_eq!(
            value(&s, "rocketmq_topic_create_execution_time_milliseconds_count", &created),
            1.0,
            "the one UPDATE_AND_CREATE_TOPIC"
        );
        assert_eq!(value(&s, "rmqd_disk_full", &[]), 0.0);
        // POP: no buffer (0, as Java's with buffer merge off), a revive gauge per revive queue
        assert_eq!(value(&s, "rocketmq_pop_checkpoint_buffer_size", &[]), 0.0);
        let _ = value(&s, "rocketmq_pop_revive_lag_milliseconds", &[("queue_id", "7")]);
        let _ = value(&s, "rocketmq_pop_revive_latency_milliseconds", &[("queue_id", "0")]);
        assert_eq!(value(&s, "rmqd_commitlog_fsync_failed", &[]), 0.0);
        assert_eq!(value(&s, "rmqd_cleanup_forced_deleted_files_total", &[]), 0.0);
        let _ = value(&s, "rmqd_recovery_duration_milliseconds", &[]);
        let consumers = [("consumer_group", GROUP), ("consume_mode", "pull")];
        assert_eq!(value(&s, "rocketmq_consumer_connections", &consumers), 1.0);
        assert_eq!(
            value(&s, "rocketmq_producer_connections", &[("language", "java")]),
            1.0
        );
        let _ = t;

        // the shape: TYPE/HELP under the unit-less name, scope label first, labels sorted
        let mut typed = std::collections::HashSet::new();
        for line in body.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                typed.insert(rest.split(' ').next().unwrap().to_string());
                continue;
            }
            if line.starts_with('#') {
                continue;
            }
            let (name, rest) = line.split_once('{').unwrap();
            let labels = rest.split_once('}').unwrap().0;
            if name == "target_info" {
                // Java's exporter types it as "target" (`# TYPE target info`)
                assert!(typed.contains("target"));
                continue;
            }
            let family = ["_milliseconds", "_bytes", "_count", "_sum", "_bucket"]
                .iter()
                .fold(name.to_string(), |n, suf| {
                    if typed.contains(&n) {
                        n
                    } else {
                        n.strip_suffix(suf).unwrap_or(&n).to_string()
                    }
                });
            let family = family
                .strip_suffix("_milliseconds")
                .filter(|f| typed.contains(*f))
                .map(str::to_string)
                .unwrap_or(family);
            assert!(typed.contains(&family), "sample before its TYPE: {line}");
            assert!(labels.starts_with("otel_scope_name=\"broker-meter\""), "{line}");
            let keys: Vec<&str> = labels
                .split("\",")
                .skip(1)
                .map(|kv| kv.split('=').next().unwrap())
                .filter(|k| *k != "le")
                .collect();
            let mut sorted = keys.clone();
            sorted.sort();
            assert_eq!(keys, sorted, "labels in name order: {line}");
        }

        // every family config/grafana-rmqd.json charts is in this scrape (DLQ sends aside: this
        // workload makes none)
        let dash = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/grafana-rmqd.json"),
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&dash).unwrap();
        let mut charted = std::collections::BTreeSet::new();
        for p in v["panels"].as_array().unwrap() {
            for t in p["targets"].as_array().unwrap() {
                let e = t["expr"].as_str().unwrap();
                for (i, _) in e.match_indices("rocketmq_").chain(e.match_indices("rmqd_")) {
                    let name: String = e[i..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    charted.insert(name);
                }
            }
        }
        assert!(charted.len() > 10, "{charted:?}");
        for name in charted {
            if name == "rocketmq_send_to_dlq_messages_total" {
                continue;
            }
            assert!(
                body.lines().any(|l| l.starts_with(&format!("{name}{{"))),
                "the dashboard charts {name}, which the scrape lacks"
            );
        }

        // a TAG subscription's lag counts the messages its tags take (Java estimateAccumulation)
        let hb = format!(
            r#"{{"clientID":"127.0.0.1@met2","consumerDataSet":[{{"consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","consumeType":"CONSUME_ACTIVELY","groupName":"MET_TAG_G","messageModel":"CLUSTERING","subscriptionDataSet":[{{"classFilterMode":false,"codeSet":[2598919],"expressionType":"TAG","subString":"TagA","subVersion":0,"tagsSet":["TagA"],"topic":"{TOPIC}"}}],"unitMode":false}}],"producerDataSet":[]}}"#
        );
        let mut h = req(RequestCode::HEART_BEAT, &[]);
        h.body = bytes::Bytes::from(hb).into();
        assert_eq!(c.call_past_requests(&h).code, 0);
        let r = c.call_past_requests(&req(
            RequestCode::UPDATE_CONSUMER_OFFSET,
            &[
                ("consumerGroup", "MET_TAG_G"),
                ("topic", TOPIC),
                ("queueId", "0"),
                ("commitOffset", "0"),
            ],
        ));
        assert_eq!(r.code, ResponseCode::SUCCESS.code());
        for i in 0..3 {
            send(&mut c, "TAGS\u{1}TagA\u{2}", format!("tagged-{i}").as_bytes());
        }
        std::thread::sleep(std::time::Duration::from_millis(1100));
        let s = samples(&http(metrics, "GET").1);
        let tag_lag = [("topic", TOPIC), ("consumer_group", "MET_TAG_G")];
        assert_eq!(value(&s, "rocketmq_consumer_lag_messages", &tag_lag), 3.0);
        assert_eq!(
            value(&s, "rocketmq_consumer_lag_messages", &lag),
            sent + 3.0 - 5.0,
            "a subscription to every tag counts every message"
        );

        // a retry message past its maximum reconsume times goes to the DLQ and is counted, as
        // Java's SendMessageProcessor counts it: the producer group and the retry topic
        let retry = format!("%RETRY%{GROUP}");
        let mut cmd = req(
            RequestCode::SEND_MESSAGE_V2,
            &[
                ("a", "MET_PG"),
                ("b", &retry),
                ("c", "TBW102"),
                ("d", "4"),
                ("e", "0"),
                ("f", "0"),
                ("g", "1700000000000"),
                ("h", "0"),
                ("i", ""),
                ("j", "17"),
                ("l", "16"),
            ],
        );
        cmd.body = bytes::Bytes::from_static(b"to-dlq").into();
        let r = c.call_past_requests(&cmd);
        assert_eq!(r.code, 0, "{:?}", r.remark);
        std::thread::sleep(std::time::Duration::from_millis(1100));
        let (_, dlq_scrape) = http(metrics, "GET");
        let s = samples(&dlq_scrape);
        let dlq = [("topic", retry.as_str()), ("consumer_group", "MET_PG")];
        assert_eq!(value(&s, "rocketmq_send_to_dlq_messages_total", &dlq), 1.0);

        // a request head past 8 KiB is dropped without an answer; the endpoint still serves
        let mut junk = TcpStream::connect(metrics).unwrap();
        let _ = junk.write_all(&[b'a'; 9 * 1024]);
        let mut got = String::new();
        let _ = junk.read_to_string(&mut got);
        assert!(got.is_empty(), "{got}");

        // a deleted topic's series go with it (scrapes within a second share one render)
        let r = c.call_past_requests(&req(
            RequestCode::DELETE_TOPIC_IN_BROKER,
            &[("topic", TOPIC)],
        ));
        assert_eq!(r.code, 0, "{:?}", r.remark);
        std::thread::sleep(std::time::Duration::from_millis(1100));
        let (_, after) = http(metrics, "GET");
        assert!(
            !after.contains(&format!("topic=\"{TOPIC}\"")),
            "series of the deleted topic remain"
        );

        let (head, body) = http(metrics, "HEAD");
        assert!(head.starts_with("HTTP/1.1 200") && body.is_empty());
        let (head, _) = http(metrics, "POST");
        assert!(head.starts_with("HTTP/1.1 405"), "{head}");
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

/// The timer families Java's DefaultStoreMetricsManager registers: three timers enqueued, the two
/// due in a second delivered, the one due in a minute pending in the 60 s band.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timer_families_follow_the_timers() {
    let dir = tempfile::tempdir().unwrap();
    let broker = start_prom_broker(dir.path()).await;
    let (addr, metrics) = (broker.local_addr(), broker.metrics_addr().unwrap());
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, TOPIC, 1);
        for (i, delay) in ["1000", "1000", "60000"].iter().enumerate() {
            let props = format!("TIMER_DELAY_MS\u{1}{delay}\u{2}");
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis() as i64;
            send_born(&mut c, &props, format!("timer-{i}").as_bytes(), now);
        }
        // delivered within the 1 s precision slot after they are due (+ a 100 ms tick)
        let t0 = std::time::Instant::now();
        let s = loop {
            std::thread::sleep(std::time::Duration::from_millis(1100));
            let s = samples(&http(metrics, "GET").1);
            let done = s
                .iter()
                .any(|(k, v)| k.starts_with("rocketmq_timer_dequeue_total{") && *v == 2.0);
            if done || t0.elapsed() > std::time::Duration::from_secs(10) {
                break s;
            }
        };
        let t = [("topic", TOPIC), ("storage_type", "local")];
        assert_eq!(value(&s, "rocketmq_timer_enqueue_total", &t), 3.0);
        assert_eq!(value(&s, "rocketmq_timer_dequeue_total", &t), 2.0);
        assert_eq!(value(&s, "rocketmq_timing_messages", &t), 1.0);
        assert_eq!(value(&s, "rocketmq_timer_enqueue_lag", &[]), 0.0);
        assert_eq!(value(&s, "rocketmq_timer_dequeue_lag", &[]), 1.0);
        assert_eq!(
            value(
                &s,
                "rocketmq_timer_message_snapshot",
                &[("timer_bound_s", "60")]
            ),
            1.0
        );
        assert_eq!(
            value(
                &s,
                "rocketmq_timer_message_snapshot",
                &[("timer_bound_s", "5")]
            ),
            0.0
        );
        let bucket = |le: &str| {
            value(
                &s,
                "rocketmq_delay_message_latency_seconds_bucket",
                &[("topic", TOPIC), ("le", le)],
            )
        };
        assert_eq!(bucket("60.0"), 3.0, "every delay is a minute at most");
        assert_eq!(bucket("+Inf"), 3.0);
        assert_eq!(
            value(&s, "rocketmq_delay_message_latency_seconds_count", &t),
            3.0
        );
        // at rest the delivery is not behind
        assert_eq!(
            value(&s, "rocketmq_timer_dequeue_latency_milliseconds", &[]),
            0.0
        );
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_are_off_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let broker = support::start_broker(dir.path(), &[]).await;
    assert!(broker.metrics_addr().is_none());
    broker.shutdown().await;
}
