//! What operators' tools read, over real TCP after a real workload: GET_BROKER_RUNTIME_INFO with
//! every key rocketmq-exporter parses (parsed as it parses them), VIEW_BROKER_STATS_DATA (315)
//! items counting the messages put and pulled, and GET_ALL_PRODUCER_INFO (328).

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rmqd::remoting::body::consume_stats::ConsumeStats;
use rmqd::remoting::{RemotingCommand, RequestCode, ResponseCode};
use support::{create_topic, request as req, RawClient};

const SENDS: usize = 10;
const BATCH: usize = 3;

fn send(c: &mut RawClient, topic: &str, body: &[u8], batch: bool) -> RemotingCommand {
    send_with(c, topic, body, batch, "")
}

fn send_with(
    c: &mut RawClient,
    topic: &str,
    body: &[u8],
    batch: bool,
    properties: &str,
) -> RemotingCommand {
    let mut fields = vec![
        ("a", "PG_STATS"),
        ("b", topic),
        ("c", "TBW102"),
        ("d", "4"),
        ("e", "0"),
        ("f", "0"),
        ("g", "1700000000000"),
        ("h", "0"),
        ("i", properties),
    ];
    if batch {
        fields.push(("m", "true"));
    }
    let mut cmd = req(
        if batch {
            RequestCode::SEND_BATCH_MESSAGE
        } else {
            RequestCode::SEND_MESSAGE_V2
        },
        &fields,
    );
    cmd.body = bytes::Bytes::copy_from_slice(body).into();
    c.call(&cmd)
}

/// A batch body of `n` messages (Java `MessageDecoder.encodeMessages`: total, magic, crc, flag,
/// body, properties per message).
fn batch_body(n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        let body = format!("batch-{i}");
        let total = 4 + 4 + 4 + 4 + 4 + body.len() + 2;
        out.extend((total as i32).to_be_bytes());
        out.extend(0i32.to_be_bytes()); // magic
        out.extend(0i32.to_be_bytes()); // body crc
        out.extend(0i32.to_be_bytes()); // flag
        out.extend((body.len() as i32).to_be_bytes());
        out.extend(body.as_bytes());
        out.extend(0i16.to_be_bytes()); // no properties
    }
    out
}

fn runtime_info(c: &mut RawClient) -> BTreeMap<String, String> {
    let r = c.call(&req(RequestCode::GET_BROKER_RUNTIME_INFO, &[]));
    assert_eq!(r.code, 0, "{:?}", r.remark);
    let v: serde_json::Value = serde_json::from_slice(&r.body.to_bytes()).unwrap();
    v["table"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect()
}

fn stats(c: &mut RawClient, name: &str, key: &str) -> RemotingCommand {
    c.call(&req(
        RequestCode::VIEW_BROKER_STATS_DATA,
        &[("statsName", name), ("statsKey", key)],
    ))
}

fn minute_sum(r: &RemotingCommand) -> i64 {
    let v: serde_json::Value = serde_json::from_slice(&r.body.to_bytes()).unwrap();
    v["statsMinute"]["sum"].as_i64().unwrap()
}

/// Polls 315 until the item exists and its minute sum is `want` (items are sampled every 10 s, as Java's are: two
/// periods at most).
fn wait_minute_sum(c: &mut RawClient, name: &str, key: &str, want: i64) -> RemotingCommand {
    let t0 = Instant::now();
    loop {
        let r = stats(c, name, key);
        let late = t0.elapsed() > Duration::from_secs(21);
        // an item exists from its first count on (a delivery still to come: not yet)
        if r.code != 0 && !late {
            std::thread::sleep(Duration::from_millis(250));
            continue;
        }
        assert_eq!(r.code, 0, "{name} {key}: {:?}", r.remark);
        if minute_sum(&r) == want || late {
            return r;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// The keys BrokerRuntimeStats (rocketmq-exporter) reads without a null check, parsed its way.
fn parse_as_the_exporter_does(kv: &BTreeMap<String, String>) {
    let get = |k: &str| {
        kv.get(k)
            .unwrap_or_else(|| panic!("runtime info lacks {k}"))
            .as_str()
    };
    for k in [
        "msgPutTotalTodayNow",
        "sendThreadPoolQueueHeadWaitTimeMills",
        "queryThreadPoolQueueHeadWaitTimeMills",
        "msgGetTotalTodayNow",
        "queryThreadPoolQueueSize",
        "bootTimestamp",
        "msgPutTotalYesterdayMorning",
        "msgGetTotalYesterdayMorning",
        "pullThreadPoolQueueSize",
        "commitLogMinOffset",
        "pullThreadPoolQueueHeadWaitTimeMills",
        "dispatchMaxBuffer",
        "pageCacheLockTimeMills",
        "commitLogMaxOffset",
        "getMessageEntireTimeMax",
        "msgPutTotalTodayMorning",
        "putMessageTimesTotal",
        "msgGetTotalTodayMorning",
        "sendThreadPoolQueueSize",
        "startAcceptSendRequestTimeStamp",
        "putMessageEntireTimeMax",
        "earliestMessageTimeStamp",
        "remainTransientStoreBufferNumbs",
        "queryThreadPoolQueueCapacity",
        "dispatchBehindBytes",
        "putMessageSizeTotal",
        "sendThreadPoolQueueCapacity",
        "pullThreadPoolQueueCapacity",
    ] {
        get(k)
            .parse::<i64>()
            .unwrap_or_else(|e| panic!("{k}={:?}: {e}", get(k)));
    }
    get("brokerVersion").parse::<i32>().unwrap();
    for k in [
        "consumeQueueDiskRatio",
        "commitLogDiskRatio",
        "putMessageAverageSize",
    ] {
        get(k).parse::<f64>().unwrap();
    }
    get("remainHowManyDataToFlush")
        .split(' ')
        .next()
        .unwrap()
        .parse::<f64>()
        .unwrap();
    let cap = get("commitLogDirCapacity");
    assert!(
        cap.starts_with("Total : ") && cap.contains(", Free : ") && cap.ends_with('.'),
        "{cap}"
    );
    // "[<=0ms]:0 [0~10ms]:0 ..." once a minute has been rolled, "null" before (as Java)
    let dist = get("putMessageDistributeTime");
    assert!(dist == "null" || dist.starts_with("[<=0ms]:"), "{dist}");
    for k in [
        "putTps",
        "getMissTps",
        "getTransferredTps",
        "getTotalTps",
        "getFoundTps",
    ] {
        let _ = get(k);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_info_and_stats_items_count_the_workload() {
    let dir = tempfile::tempdir().unwrap();
    let broker = support::start_broker(dir.path(), &[]).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, "STATS_T", 1);
        let before = runtime_info(&mut c);
        parse_as_the_exporter_does(&before);
        assert_eq!(before["brokerVersionDesc"], "V5_3_3");
        assert_eq!(before["remainTransientStoreBufferNumbs"], i32::MAX.to_string());

        for i in 0..SENDS {
            let r = send(&mut c, "STATS_T", format!("m{i}").as_bytes(), false);
            assert_eq!(r.code, 0, "{:?}", r.remark);
        }
        let r = send(&mut c, "STATS_T", &batch_body(BATCH), true);
        assert_eq!(r.code, 0, "batch: {:?}", r.remark);
        let sent = (SENDS + BATCH) as i64;

        // pull everything as group SG (the shared helper pulls as CG); a put is acknowledged
        // before the consume queue has it (dispatch follows, as Java's reput does): a pull right
        // after may find nothing yet
        let mut pulled = 0;
        let mut offset = 0i64;
        while pulled < sent {
            let mut p = support::pull_request("STATS_T", 0, offset);
            p.ext_mut().insert("consumerGroup", "SG");
            let r = support::pull_dispatched(&mut c, &p);
            assert_eq!(r.code, 0, "pull: {:?}", r.remark);
            let recs = support::records(&r.body.to_bytes());
            pulled += recs.len() as i64;
            offset = recs.last().unwrap().queue_offset + 1;
        }

        let after = runtime_info(&mut c);
        parse_as_the_exporter_does(&after);
        let n = |kv: &BTreeMap<String, String>, k: &str| kv[k].parse::<i64>().unwrap();
        // Java counts each message of a batch (the first runtime info came before any put: 1)
        assert_eq!(n(&after, "putMessageTimesTotal"), sent);
        assert_eq!(n(&after, "msgPutTotalTodayNow"), sent);
        assert_eq!(n(&after, "msgGetTotalTodayNow"), sent);
        assert!(n(&after, "putMessageSizeTotal") > 0);
        assert_eq!(n(&after, "putMessageFailedTimes"), 0);
        assert_eq!(
            n(&after, "commitLogMaxOffset"),
            n(&after, "putMessageSizeTotal"),
            "one topic, fresh store: every byte stored was counted"
        );

        let put = wait_minute_sum(&mut c, "TOPIC_PUT_NUMS", "STATS_T", sent);
        assert_eq!(minute_sum(&put), sent, "TOPIC_PUT_NUMS minute sum");
        let v: serde_json::Value = serde_json::from_slice(&put.body.to_bytes()).unwrap();
        // two sends counted: the single ones (1 message each) and the batch (BATCH messages)
        let avg = v["statsMinute"]["avgpt"].as_f64().unwrap();
        assert!((avg - sent as f64 / (SENDS + 1) as f64).abs() < 1e-9, "{v}");
        assert!(v["statsMinute"]["tps"].as_f64().unwrap() > 0.0);
        let got = wait_minute_sum(&mut c, "GROUP_GET_NUMS", "STATS_T@SG", sent);
        assert_eq!(minute_sum(&got), sent, "GROUP_GET_NUMS minute sum");
        // GET_CONSUME_STATS' consumeTps is that item's minute TPS (Java tpsGroupGetNums), read
        // between two 315 calls that agree (a 10 s sample may land in between)
        let minute_tps = |c: &mut RawClient| {
            let v: serde_json::Value =
                serde_json::from_slice(&stats(c, "GROUP_GET_NUMS", "STATS_T@SG").body.to_bytes())
                    .unwrap();
            v["statsMinute"]["tps"].as_f64().unwrap()
        };
        let (tps, consume_tps) = loop {
            let before = minute_tps(&mut c);
            let r = c.call(&req(
                RequestCode::GET_CONSUME_STATS,
                &[("consumerGroup", "SG"), ("topic", "STATS_T")],
            ));
            assert_eq!(r.code, 0, "208: {:?}", r.remark);
            let cs = ConsumeStats::decode(&r.body.to_bytes()).unwrap();
            assert_eq!(cs.offset_table.len(), 1, "one queue");
            if minute_tps(&mut c) == before {
                break (before, cs.consume_tps);
            }
        };
        assert!(tps > 0.0, "GROUP_GET_NUMS minute tps {tps}");
        assert_eq!(consume_tps, tps, "GET_CONSUME_STATS consumeTps");
        let size = wait_minute_sum(
            &mut c,
            "TOPIC_PUT_SIZE",
            "STATS_T",
            n(&after, "putMessageSizeTotal"),
        );
        assert_eq!(minute_sum(&size), n(&after, "putMessageSizeTotal"));
        let cluster = wait_minute_sum(&mut c, "BROKER_PUT_NUMS", "DefaultCluster", sent);
        assert_eq!(minute_sum(&cluster), sent);

        let missing = stats(&mut c, "TOPIC_PUT_NUMS", "NO_SUCH_TOPIC");
        assert_eq!(missing.code, ResponseCode::SYSTEM_ERROR.code());
        assert_eq!(
            missing.remark.as_deref(),
            Some("The stats <TOPIC_PUT_NUMS> <NO_SUCH_TOPIC> not exist")
        );
        let bad = c.call(&req(
            RequestCode::VIEW_BROKER_STATS_DATA,
            &[("statsName", "TOPIC_PUT_NUMS")],
        ));
        assert_ne!(bad.code, 0, "statsKey is required");

        // 328: a producer registered by heartbeat is listed under its group
        let body = r#"{"clientID":"127.0.0.1@stats","consumerDataSet":[],"producerDataSet":[{"groupName":"PG_STATS"}]}"#;
        let mut hb = req(RequestCode::HEART_BEAT, &[]);
        hb.body = bytes::Bytes::from(body).into();
        assert_eq!(c.call(&hb).code, 0);
        let r = c.call(&req(RequestCode::GET_ALL_PRODUCER_INFO, &[]));
        assert_eq!(r.code, 0, "{:?}", r.remark);
        let v: serde_json::Value = serde_json::from_slice(&r.body.to_bytes()).unwrap();
        let p = &v["data"]["PG_STATS"][0];
        assert_eq!(p["clientId"], "127.0.0.1@stats");
        assert_eq!(p["language"], "JAVA");
        // Java's channel address text, with its leading slash
        assert!(p["remoteIP"].as_str().unwrap().starts_with("/127.0.0.1:"));
        let age = rmqd_now() - p["lastUpdateTimestamp"].as_i64().unwrap();
        assert!((0..10_000).contains(&age), "lastUpdateTimestamp {age} ms ago");
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

/// Java's delivery paths count a delayed message put back under its topic: the schedule service
/// as a put of the topic and a get of SCHEDULE_TOPIC_XXXX by SCHEDULE_CONSUMER, the timer as a
/// put of the topic. The sends themselves count under the queues they were stored in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delayed_and_timer_deliveries_count_as_puts() {
    let dir = tempfile::tempdir().unwrap();
    let broker = support::start_broker(dir.path(), &[]).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, "STATS_D", 1);
        // delay level 1 (1 s) and a 1 s timer
        let r = send_with(&mut c, "STATS_D", b"delayed", false, "DELAY\u{1}1\u{2}");
        assert_eq!(r.code, 0, "{:?}", r.remark);
        let r = send_with(
            &mut c,
            "STATS_D",
            b"timer",
            false,
            "TIMER_DELAY_MS\u{1}1000\u{2}",
        );
        assert_eq!(r.code, 0, "{:?}", r.remark);
        let put = wait_minute_sum(&mut c, "TOPIC_PUT_NUMS", "STATS_D", 2);
        assert_eq!(minute_sum(&put), 2, "both deliveries counted under STATS_D");
        let sched = wait_minute_sum(&mut c, "TOPIC_PUT_NUMS", "SCHEDULE_TOPIC_XXXX", 1);
        assert_eq!(minute_sum(&sched), 1, "the delayed send, as stored");
        let timer = wait_minute_sum(&mut c, "TOPIC_PUT_NUMS", "rmq_sys_wheel_timer", 1);
        assert_eq!(minute_sum(&timer), 1, "the timer send, as stored");
        let got = wait_minute_sum(
            &mut c,
            "GROUP_GET_NUMS",
            "SCHEDULE_TOPIC_XXXX@SCHEDULE_CONSUMER",
            1,
        );
        assert_eq!(minute_sum(&got), 1, "the schedule service's get");
        let cluster = wait_minute_sum(&mut c, "BROKER_PUT_NUMS", "DefaultCluster", 4);
        assert_eq!(minute_sum(&cluster), 4, "two sends and two deliveries");
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

fn rmqd_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}
