//! The broker data path over real TCP with a raw Remoting client: topic creation, send (V1, V2,
//! batch), pull with tag filtering and offsets, long polling woken by a send, consumer offsets,
//! query by key, view by offset, and the refusals Java gives.

mod support;

use std::time::{Duration, Instant};

use rmqd::broker::BrokerController;
use rmqd::remoting::{RemotingCommand, RequestCode, ResponseCode};
use support::{create_topic, RawClient};

async fn start(dir: &std::path::Path) -> BrokerController {
    support::start_broker(dir, &[]).await
}

use support::request as req;

fn send_v2(
    c: &mut RawClient,
    topic: &str,
    queue: i32,
    body: &[u8],
    props: &str,
) -> RemotingCommand {
    let q = queue.to_string();
    let mut cmd = req(
        RequestCode::SEND_MESSAGE_V2,
        &[
            ("a", "PG"),
            ("b", topic),
            ("c", "TBW102"),
            ("d", "4"),
            ("e", &q),
            ("f", "0"),
            ("g", "1700000000000"),
            ("h", "0"),
            ("i", props),
        ],
    );
    cmd.body = bytes::Bytes::copy_from_slice(body).into();
    c.call(&cmd)
}

fn pull(
    c: &mut RawClient,
    topic: &str,
    queue: i32,
    offset: i64,
    sys_flag: i32,
    sub: &str,
    suspend_ms: i64,
) -> RemotingCommand {
    let (q, o, f, s) = (
        queue.to_string(),
        offset.to_string(),
        sys_flag.to_string(),
        suspend_ms.to_string(),
    );
    c.call(&req(
        RequestCode::PULL_MESSAGE,
        &[
            ("consumerGroup", "CG"),
            ("topic", topic),
            ("queueId", &q),
            ("queueOffset", &o),
            ("maxMsgNums", "32"),
            ("sysFlag", &f),
            ("commitOffset", "0"),
            ("suspendTimeoutMillis", &s),
            ("subscription", sub),
            ("subVersion", "0"),
            ("expressionType", "TAG"),
        ],
    ))
}

/// (queueOffset, body, properties) per stored record of a pull body.
fn records(body: &[u8]) -> Vec<(i64, Vec<u8>, String)> {
    support::records(body)
        .into_iter()
        .map(|r| (r.queue_offset, r.body, r.properties))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_then_pull_with_tags_offsets_and_queries() {
    let dir = tempfile::tempdir().unwrap();
    let broker = start(dir.path()).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, "T1", 2);
        for i in 0..10 {
            let tag = if i % 2 == 0 { "A" } else { "B" };
            let props = format!("TAGS\u{1}{tag}\u{2}KEYS\u{1}k{i}\u{2}UNIQ_KEY\u{1}U{i:030}\u{2}");
            let r = send_v2(&mut c, "T1", 0, format!("body-{i}").as_bytes(), &props);
            assert_eq!(r.code, 0, "{:?}", r.remark);
            assert_eq!(r.ext("queueOffset"), Some(i.to_string().as_str()));
            assert_eq!(r.ext("queueId"), Some("0"));
            assert_eq!(r.ext("msgId").map(str::len), Some(32));
            assert_eq!(r.ext("MSG_REGION"), Some("DefaultRegion"));
        }
        // Dispatch to the consume queue is asynchronous (as in Java): wait until all ten are in.
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            let max = c.call(&req(
                RequestCode::GET_MAX_OFFSET,
                &[("topic", "T1"), ("queueId", "0")],
            ));
            if max.ext("offset") == Some("10") {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let all = pull(&mut c, "T1", 0, 0, 0x4, "*", 0);
        assert_eq!(all.code, ResponseCode::SUCCESS.code());
        let recs = records(&all.body.to_bytes());
        assert_eq!(recs.len(), 10);
        assert_eq!(recs[3].0, 3);
        assert_eq!(recs[3].1, b"body-3");
        assert!(recs[3].2.contains("KEYS\u{1}k3"));
        // the broker's own keys, as Java's buildMsgContext adds them to every message sent
        for key in [
            "MSG_REGION\u{1}DefaultRegion\u{2}",
            "TRACE_ON\u{1}true\u{2}",
        ] {
            assert!(recs[3].2.contains(key), "{key:?} in {:?}", recs[3].2);
        }
        assert_eq!(all.ext("nextBeginOffset"), Some("10"));

        let only_a = pull(&mut c, "T1", 0, 0, 0x4, "A", 0);
        let recs = records(&only_a.body.to_bytes());
        assert_eq!(recs.len(), 5);
        assert!(recs.iter().all(|r| r.2.contains("TAGS\u{1}A")));

        let at_end = pull(&mut c, "T1", 0, 10, 0x4, "*", 0);
        assert_eq!(at_end.code, ResponseCode::PULL_NOT_FOUND.code());
        assert_eq!(at_end.ext("nextBeginOffset"), Some("10"));
        let too_far = pull(&mut c, "T1", 0, 50, 0x4, "*", 0);
        assert_eq!(too_far.code, ResponseCode::PULL_OFFSET_MOVED.code());
        assert_eq!(too_far.ext("nextBeginOffset"), Some("10"));

        let q = c.call(&req(
            RequestCode::QUERY_MESSAGE,
            &[
                ("topic", "T1"),
                ("key", "k7"),
                ("maxNum", "32"),
                ("beginTimestamp", "0"),
                ("endTimestamp", "9999999999999"),
            ],
        ));
        assert_eq!(q.code, 0, "{:?}", q.remark);
        assert_eq!(records(&q.body.to_bytes())[0].1, b"body-7");

        let max = c.call(&req(
            RequestCode::GET_MAX_OFFSET,
            &[("topic", "T1"), ("queueId", "0")],
        ));
        assert_eq!(max.ext("offset"), Some("10"));
        let upd = c.call(&req(
            RequestCode::UPDATE_CONSUMER_OFFSET,
            &[
                ("consumerGroup", "CG"),
                ("topic", "T1"),
                ("queueId", "0"),
                ("commitOffset", "4"),
            ],
        ));
        assert_eq!(upd.code, 0);
        let qo = c.call(&req(
            RequestCode::QUERY_CONSUMER_OFFSET,
            &[("consumerGroup", "CG"), ("topic", "T1"), ("queueId", "0")],
        ));
        assert_eq!(qo.ext("offset"), Some("4"));
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_poll_is_woken_by_a_send() {
    let dir = tempfile::tempdir().unwrap();
    let broker = start(dir.path()).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut setup = RawClient::connect(addr);
        create_topic(&mut setup, "LP", 1);
        let waiter = std::thread::spawn(move || {
            let mut c = RawClient::connect(addr);
            let started = Instant::now();
            let r = pull(&mut c, "LP", 0, 0, 0x2 | 0x4, "*", 15_000);
            (r, started.elapsed())
        });
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(send_v2(&mut setup, "LP", 0, b"wake", "").code, 0);
        let (r, waited) = waiter.join().unwrap();
        assert_eq!(r.code, 0, "{:?}", r.remark);
        assert!(
            waited < Duration::from_secs(5),
            "held {waited:?}: not woken by the arrival"
        );
        assert_eq!(records(&r.body.to_bytes())[0].1, b"wake");
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_carry_java_codes() {
    let dir = tempfile::tempdir().unwrap();
    let broker = start(dir.path()).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        let bad_name = send_v2(&mut c, "bad topic!", 0, b"x", "");
        assert_eq!(bad_name.code, ResponseCode::INVALID_PARAMETER.code());
        let forbidden = send_v2(&mut c, "SCHEDULE_TOPIC_XXXX", 0, b"x", "");
        assert_eq!(forbidden.code, ResponseCode::NO_PERMISSION.code());
        let auto = send_v2(&mut c, "AutoCreated", -1, b"x", "");
        assert_eq!(auto.code, 0, "auto-create from TBW102: {:?}", auto.remark);
        create_topic(&mut c, "Q2", 2);
        let bad_queue = send_v2(&mut c, "Q2", 9, b"x", "");
        assert_eq!(bad_queue.code, ResponseCode::INVALID_PARAMETER.code());
        let missing = c.call(&req(RequestCode::SEND_MESSAGE_V2, &[("b", "Q2")]));
        assert_eq!(missing.code, ResponseCode::SYSTEM_ERROR.code());
        let huge = send_v2(&mut c, "Q2", 0, &vec![0u8; 4 * 1024 * 1024 + 1], "");
        assert_eq!(huge.code, ResponseCode::MESSAGE_ILLEGAL.code());
        // a timer beyond timerMaxDelaySec (3 days) or with a bad number: Java's code and remark
        let far = send_v2(&mut c, "Q2", 0, b"x", "TIMER_DELAY_SEC\u{1}345600\u{2}");
        assert_eq!(far.code, ResponseCode::MESSAGE_ILLEGAL.code());
        assert!(
            far.remark
                .as_deref()
                .unwrap_or("")
                .starts_with("timer message illegal, the delay time should not be bigger than the max delay 259200000ms"),
            "{:?}",
            far.remark
        );
        let garbled = send_v2(&mut c, "Q2", 0, b"x", "TIMER_DELAY_MS\u{1}soon\u{2}");
        assert_eq!(garbled.code, ResponseCode::MESSAGE_ILLEGAL.code());
        let no_topic = pull(&mut c, "Nope", 0, 0, 0x4, "*", 0);
        assert_eq!(no_topic.code, ResponseCode::TOPIC_NOT_EXIST.code());
        assert!(no_topic.ext("nextBeginOffset").is_some());
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

/// A pull carrying a subscription version newer than the broker's (the Java client bumps it on
/// every rebalance, then its heartbeat can be dropped): Java answers SUBSCRIPTION_NOT_LATEST. rmqd
/// keeps that answer whenever the broker's expression could filter out a message the newer one
/// wants, and serves the pull when its subscription is TAG `*`, which delivers every message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn newer_subscription_version_is_refused_unless_the_subscription_is_star() {
    let dir = tempfile::tempdir().unwrap();
    let broker = start(dir.path()).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, "SV_ALL", 1);
        create_topic(&mut c, "SV_TAG", 1);
        assert_eq!(send_v2(&mut c, "SV_ALL", 0, b"a", "TAGS\u{1}A\u{2}").code, 0);
        assert_eq!(send_v2(&mut c, "SV_TAG", 0, b"b", "TAGS\u{1}A\u{2}").code, 0);
        let sub = |topic: &str, expr: &str, code: i64| {
            format!(
                r#"{{"classFilterMode":false,"codeSet":[{code}],"expressionType":"TAG","subString":"{expr}","subVersion":1000,"tagsSet":["{expr}"],"topic":"{topic}"}}"#
            )
        };
        let body = format!(
            r#"{{"clientID":"c1","consumerDataSet":[{{"consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","consumeType":"CONSUME_PASSIVELY","groupName":"SVG","messageModel":"CLUSTERING","subscriptionDataSet":[{},{}],"unitMode":false}}],"producerDataSet":[]}}"#,
            sub("SV_ALL", "*", 42),
            sub("SV_TAG", "A", 65)
        );
        let mut hb = req(RequestCode::HEART_BEAT, &[]);
        hb.body = bytes::Bytes::from(body).into();
        let r = c.call_past_requests(&hb);
        assert_eq!(r.code, 0, "heartbeat: {:?}", r.remark);
        let pull_v = |c: &mut RawClient, topic: &str, version: &str| {
            c.call(&req(
                RequestCode::PULL_MESSAGE,
                &[
                    ("consumerGroup", "SVG"),
                    ("topic", topic),
                    ("queueId", "0"),
                    ("queueOffset", "0"),
                    ("maxMsgNums", "32"),
                    // suspend: dispatch to the consume queue is asynchronous
                    ("sysFlag", "2"),
                    ("commitOffset", "0"),
                    ("suspendTimeoutMillis", "3000"),
                    ("subVersion", version),
                    ("expressionType", "TAG"),
                ],
            ))
        };
        for topic in ["SV_ALL", "SV_TAG"] {
            let r = pull_v(&mut c, topic, "1000");
            assert_eq!(r.code, 0, "{topic} at the broker's version: {:?}", r.remark);
            assert_eq!(records(&r.body.to_bytes()).len(), 1);
        }
        let r = pull_v(&mut c, "SV_ALL", "2000");
        assert_eq!(r.code, 0, "newer version on `*`: {:?}", r.remark);
        assert_eq!(records(&r.body.to_bytes())[0].1, b"a");
        let r = pull_v(&mut c, "SV_TAG", "2000");
        assert_eq!(r.code, ResponseCode::SUBSCRIPTION_NOT_LATEST.code());
        assert_eq!(r.remark.as_deref(), Some("the consumer's subscription not latest"));
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

/// A port P (above 2) with P and P - 2 both free a moment ago.
fn free_port_pair() -> u16 {
    loop {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let p = l.local_addr().unwrap().port();
        if p > 2 && std::net::TcpListener::bind(("127.0.0.1", p - 2)).is_ok() {
            return p;
        }
    }
}

/// Java clients before 4.5.1, the dashboard and Spring's binder send to `listenPort - 2` (Java's
/// fast remoting server); rmqd serves the same requests there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vip_channel_on_listen_port_minus_two_serves_the_same_requests() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port_pair();
    let p = port.to_string();
    let broker = support::start_broker_with(dir.path(), &[("listenPort", &p)], &[]).await;
    let fast = broker.fast_local_addr().expect("VIP channel open");
    assert_eq!((fast.port(), broker.local_addr().port()), (port - 2, port));
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut vip = RawClient::connect(fast);
        create_topic(&mut vip, "VIP", 1);
        let r = send_v2(
            &mut vip,
            "VIP",
            0,
            b"over the VIP channel",
            "TAGS\u{1}A\u{2}",
        );
        assert_eq!(
            (r.code, r.ext("queueOffset")),
            (0, Some("0")),
            "{:?}",
            r.remark
        );
        // dispatch to the consume queue is asynchronous: wait for it
        let max = |c: &mut RawClient| {
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                let r = c.call(&req(
                    RequestCode::GET_MAX_OFFSET,
                    &[("topic", "VIP"), ("queueId", "0")],
                ));
                if r.ext("offset") == Some("1") || Instant::now() > deadline {
                    return r.ext("offset").map(str::to_string);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        };
        let mut c = RawClient::connect(addr);
        assert_eq!(max(&mut c).as_deref(), Some("1"), "main port sees the send");
        assert_eq!(
            max(&mut vip).as_deref(),
            Some("1"),
            "VIP channel answers admin codes"
        );
    })
    .await
    .unwrap();
    broker.shutdown().await;

    // rmqdFastChannelEnable=false: only listenPort
    let dir = tempfile::tempdir().unwrap();
    let port = free_port_pair();
    let keys = [
        ("listenPort", port.to_string()),
        ("rmqdFastChannelEnable", "false".to_string()),
    ];
    let keys: Vec<(&str, &str)> = keys.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let broker = support::start_broker_with(dir.path(), &keys, &[]).await;
    assert!(broker.fast_local_addr().is_none());
    assert!(std::net::TcpStream::connect(("127.0.0.1", port - 2)).is_err());
    broker.shutdown().await;
}

/// A taken `listenPort - 2` stops the start with an error that says what to do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn taken_vip_port_fails_the_start_with_advice() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port_pair();
    let _taken = std::net::TcpListener::bind(("127.0.0.1", port - 2)).unwrap();
    let config = rmqd::broker::BrokerConfig {
        listen_port: port,
        bind_address: "127.0.0.1".into(),
        broker_ip1: "127.0.0.1".into(),
        ..Default::default()
    };
    let store = rmqd::store::config::MessageStoreConfig::with_root(dir.path());
    let err = match BrokerController::start(config, store).await {
        Ok(_) => panic!("started with its VIP port taken"),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains("VIP channel") && err.contains("rmqdFastChannelEnable=false"),
        "{err}"
    );
    // the main port was released again
    assert!(std::net::TcpListener::bind(("127.0.0.1", port)).is_ok());
}

/// QUERY_MESSAGE for a key carried by large messages answers with as many as fit in one frame
/// the clients accept (16 MiB), not a frame they refuse.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_answer_fits_in_one_client_frame() {
    let dir = tempfile::tempdir().unwrap();
    let broker =
        support::start_broker(dir.path(), &[("mappedFileSizeCommitLog", "67108864")]).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, "BIG", 1);
        let body = vec![b'b'; 1024 * 1024];
        for i in 0..20 {
            let props = format!("KEYS\u{1}big\u{2}UNIQ_KEY\u{1}B{i:031}\u{2}");
            let r = send_v2(&mut c, "BIG", 0, &body, &props);
            assert_eq!(r.code, 0, "{:?}", r.remark);
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        let q = loop {
            let q = c.call(&req(
                RequestCode::QUERY_MESSAGE,
                &[
                    ("topic", "BIG"),
                    ("key", "big"),
                    ("maxNum", "32"),
                    ("beginTimestamp", "0"),
                    ("endTimestamp", "9999999999999"),
                ],
            ));
            if q.code == 0 && records(&q.body.to_bytes()).len() >= 15 || Instant::now() > deadline {
                break q;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert_eq!(q.code, 0, "{:?}", q.remark);
        let body = q.body.to_bytes();
        assert!(
            body.len() < rmqd::remoting::MAX_FRAME_LENGTH - 4096,
            "{} bytes",
            body.len()
        );
        assert_eq!(records(&body).len(), 15, "as many 1 MiB messages as fit");
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

/// Forced cleanup (disk pressure, files younger than fileReservedTime) says what it dropped:
/// GET_BROKER_RUNTIME_INFO counts the files, the messages and, summed over consumer groups, the
/// messages deleted before they were consumed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forced_cleanup_reports_unconsumed_messages_per_group() {
    let dir = tempfile::tempdir().unwrap();
    let broker = support::start_broker(dir.path(), &[("mappedFileSizeCommitLog", "65536")]).await;
    let addr = broker.local_addr();
    let c = tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, "FORCED", 1);
        let body = vec![b'f'; 1000];
        for i in 0..300 {
            let r = send_v2(
                &mut c,
                "FORCED",
                0,
                &body,
                &format!("UNIQ_KEY\u{1}F{i:031}\u{2}"),
            );
            assert_eq!(r.code, 0, "{:?}", r.remark);
        }
        let upd = c.call(&req(
            RequestCode::UPDATE_CONSUMER_OFFSET,
            &[
                ("consumerGroup", "SLOW"),
                ("topic", "FORCED"),
                ("queueId", "0"),
                ("commitOffset", "10"),
            ],
        ));
        assert_eq!(upd.code, 0);
        c
    })
    .await
    .unwrap();
    // what a pass over diskSpaceCleanForciblyRatio does, right now (the files are minutes young)
    let report = broker.ctx.store.delete_expired_files_now(true);
    assert!(report.commit_log_files > 0, "{report:?}");
    tokio::task::spawn_blocking(move || {
        let mut c = c;
        let min = c.call(&req(
            RequestCode::GET_MIN_OFFSET,
            &[("topic", "FORCED"), ("queueId", "0")],
        ));
        let min: i64 = min.ext("offset").unwrap().parse().unwrap();
        assert!(min > 10, "first offset {min}");
        let info = c.call(&req(RequestCode::GET_BROKER_RUNTIME_INFO, &[]));
        let table = rmqd::remoting::body::kv_table::KVTable::decode(&info.body.to_bytes()).unwrap();
        let get = |k: &str| -> i64 { table.table[k].parse().unwrap() };
        assert!(get("rmqdForcedDeletedCommitLogFiles") >= report.commit_log_files as i64);
        assert_eq!(get("rmqdForcedDeletedMessages"), min);
        assert_eq!(
            get("rmqdForcedDeletedUnconsumedMessages"),
            min - 10,
            "group SLOW was at 10"
        );
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

/// Connection ids are unique across the client port and the VIP channel: a VIP connection that
/// closes must not drop the registration of a client-port connection (both servers once counted
/// from 1, so the first VIP close removed the first client-port consumer).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_vip_connection_keeps_other_clients_registered() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port_pair();
    let p = port.to_string();
    let broker = support::start_broker_with(dir.path(), &[("listenPort", &p)], &[]).await;
    let (addr, fast) = (broker.local_addr(), broker.fast_local_addr().unwrap());
    tokio::task::spawn_blocking(move || {
        let mut main = RawClient::connect(addr);
        let body = r#"{"clientID":"main-1","consumerDataSet":[{"consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","consumeType":"CONSUME_PASSIVELY","groupName":"IDG","messageModel":"CLUSTERING","subscriptionDataSet":[],"unitMode":false}],"producerDataSet":[]}"#;
        let mut hb = req(RequestCode::HEART_BEAT, &[]);
        hb.body = bytes::Bytes::from(body).into();
        assert_eq!(main.call_past_requests(&hb).code, 0);
        let mut vip = RawClient::connect(fast);
        assert_eq!(vip.call(&req(RequestCode::GET_MAX_OFFSET, &[("topic", "TBW102"), ("queueId", "0")])).code, 0);
        drop(vip);
        std::thread::sleep(Duration::from_millis(300));
        let list = main.call_past_requests(&req(
            RequestCode::GET_CONSUMER_LIST_BY_GROUP,
            &[("consumerGroup", "IDG")],
        ));
        assert_eq!(list.code, 0, "{:?}", list.remark);
        assert!(
            String::from_utf8_lossy(&list.body.to_bytes()).contains("main-1"),
            "the client-port consumer is still listed"
        );
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

/// While a server-side offset reset waits for the consumer's next pull, the consumer's own
/// (older) UPDATE_CONSUMER_OFFSET is ignored, as Java's broker does (else a periodic offset
/// persist undoes the reset and the queue is never re-delivered).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_reset_is_not_overwritten_by_the_consumers_offset() {
    let dir = tempfile::tempdir().unwrap();
    let broker = start(dir.path()).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, "RST", 1);
        for i in 0..5 {
            let r = send_v2(&mut c, "RST", 0, format!("m{i}").as_bytes(), "");
            assert_eq!(r.code, 0, "{:?}", r.remark);
        }
        let commit = |c: &mut RawClient, offset: &str| {
            c.call(&req(
                RequestCode::UPDATE_CONSUMER_OFFSET,
                &[
                    ("consumerGroup", "RG"),
                    ("topic", "RST"),
                    ("queueId", "0"),
                    ("commitOffset", offset),
                ],
            ))
        };
        let query = |c: &mut RawClient| {
            let r = c.call(&req(
                RequestCode::QUERY_CONSUMER_OFFSET,
                &[("consumerGroup", "RG"), ("topic", "RST"), ("queueId", "0")],
            ));
            r.ext("offset").map(str::to_string)
        };
        let body = r#"{"clientID":"r-1","consumerDataSet":[{"consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","consumeType":"CONSUME_PASSIVELY","groupName":"RG","messageModel":"CLUSTERING","subscriptionDataSet":[],"unitMode":false}],"producerDataSet":[]}"#;
        let mut hb = req(RequestCode::HEART_BEAT, &[]);
        hb.body = bytes::Bytes::from(body).into();
        assert_eq!(c.call_past_requests(&hb).code, 0);
        assert_eq!(commit(&mut c, "5").code, 0);
        let reset = c.call_past_requests(&req(
            RequestCode::INVOKE_BROKER_TO_RESET_OFFSET,
            &[
                ("group", "RG"),
                ("topic", "RST"),
                ("queueId", "0"),
                ("offset", "1"),
                ("timestamp", "0"),
                ("isForce", "true"),
            ],
        ));
        assert_eq!(reset.code, 0, "{:?}", reset.remark);
        assert_eq!(query(&mut c).as_deref(), Some("1"));
        let stale = commit(&mut c, "5");
        assert_eq!(
            (stale.code, stale.remark.as_deref()),
            (0, Some("Offset has been previously reset"))
        );
        assert_eq!(query(&mut c).as_deref(), Some("1"), "the reset stands");
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

/// QUERY_MESSAGE `indexType=T` (Java 5.5, `mqadmin queryMsgByKey -p T`): with `rmqdIndexTags`
/// the messages whose TAGS equal the key; without it the index holds no tag entries (Java 5.3.3's
/// files) and the answer is QUERY_NOT_FOUND. A plain key query never matches a tag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_by_tag_finds_the_tagged_messages_when_tags_are_indexed() {
    for on in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let on_s = on.to_string();
        let broker = support::start_broker(dir.path(), &[("rmqdIndexTags", on_s.as_str())]).await;
        let addr = broker.local_addr();
        tokio::task::spawn_blocking(move || {
            let mut c = RawClient::connect(addr);
            create_topic(&mut c, "TG", 1);
            for (i, tag) in ["tA", "tB", "tA"].iter().enumerate() {
                let props = format!("TAGS\u{1}{tag}\u{2}KEYS\u{1}k{i}\u{2}");
                let r = send_v2(&mut c, "TG", 0, format!("m{i}").as_bytes(), &props);
                assert_eq!(r.code, 0, "{:?}", r.remark);
            }
            let query = |c: &mut RawClient, key: &str, index_type: Option<&str>| {
                let mut ext = vec![
                    ("topic", "TG"),
                    ("key", key),
                    ("maxNum", "32"),
                    ("beginTimestamp", "0"),
                    ("endTimestamp", "9999999999999"),
                ];
                ext.extend(index_type.map(|t| ("indexType", t)));
                c.call(&req(RequestCode::QUERY_MESSAGE, &ext))
            };
            // the index follows the acknowledgement (dispatch): wait until the last key is in
            let deadline = Instant::now() + Duration::from_secs(10);
            while query(&mut c, "k2", None).code != 0 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            assert_eq!(query(&mut c, "k2", Some("K")).code, 0, "K is the key index");
            let a = query(&mut c, "tA", Some("T"));
            let b = query(&mut c, "tB", Some("T"));
            if on {
                assert_eq!(a.code, 0, "{:?}", a.remark);
                let mut bodies: Vec<Vec<u8>> = records(&a.body.to_bytes())
                    .into_iter()
                    .map(|r| r.1)
                    .collect();
                bodies.sort();
                assert_eq!(bodies, [b"m0".to_vec(), b"m2".to_vec()]);
                assert_eq!(records(&b.body.to_bytes())[0].1, b"m1");
            } else {
                assert_eq!(
                    a.code,
                    ResponseCode::QUERY_NOT_FOUND.code(),
                    "{:?}",
                    a.remark
                );
                assert_eq!(b.code, ResponseCode::QUERY_NOT_FOUND.code());
            }
            let as_key = query(&mut c, "tA", None);
            assert_eq!(
                as_key.code,
                ResponseCode::QUERY_NOT_FOUND.code(),
                "a tag is not a key"
            );
        })
        .await
        .unwrap();
        broker.shutdown().await;
    }
}
