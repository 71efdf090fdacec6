//! Issue-7 transactions and request/reply over real TCP with a raw Remoting client: half
//! messages stored in RMQ_SYS_TRANS_HALF_TOPIC with Java's properties and invisible in their
//! real topic; END_TRANSACTION commit/rollback with Java's op records, codes and remarks; the
//! check service's CHECK_TRANSACTION_STATE to a producer of the group, answered with
//! `fromTransactionCheck`; discarding after transactionCheckMax checks; SEND_REPLY_MESSAGE_V2
//! pushed to the requester (PUSH_REPLY_MESSAGE_TO_CLIENT) and stored in the reply topic.

mod support;

use std::time::{Duration, Instant};

use rmqd::broker::BrokerController;
use rmqd::remoting::{RemotingCommand, RequestCode};
use support::{create_topic, request as req, RawClient, Record};

const HALF: &str = "RMQ_SYS_TRANS_HALF_TOPIC";
const OP: &str = "RMQ_SYS_TRANS_OP_HALF_TOPIC";

async fn start(dir: &std::path::Path, broker_keys: &[(&str, &str)]) -> BrokerController {
    support::start_broker_with(dir, broker_keys, &[]).await
}

fn props(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}\u{1}{v}\u{2}"))
        .collect()
}

fn half_props(uniq: &str) -> String {
    props(&[
        ("TRAN_MSG", "true"),
        ("PGROUP", "PG"),
        ("UNIQ_KEY", uniq),
        ("TAGS", "t"),
    ])
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn send_v2(
    c: &mut RawClient,
    code: RequestCode,
    topic: &str,
    queue: i32,
    properties: &str,
    sys_flag: i32,
) -> RemotingCommand {
    // A real born time: half messages born before fileReservedTime are discarded unchecked.
    send_v2_born(c, code, topic, queue, properties, sys_flag, now_ms())
}

fn send_v2_born(
    c: &mut RawClient,
    code: RequestCode,
    topic: &str,
    queue: i32,
    properties: &str,
    sys_flag: i32,
    born: i64,
) -> RemotingCommand {
    let now = born.to_string();
    let (q, f) = (queue.to_string(), sys_flag.to_string());
    let mut cmd = req(
        code,
        &[
            ("a", "PG"),
            ("b", topic),
            ("c", "TBW102"),
            ("d", "4"),
            ("e", &q),
            ("f", &f),
            ("g", &now),
            ("h", "0"),
            ("i", properties),
            ("j", "0"),
        ],
    );
    cmd.body = bytes::Bytes::from_static(b"payload").into();
    c.call(&cmd)
}

fn send_half(c: &mut RawClient, topic: &str, queue: i32, uniq: &str) -> RemotingCommand {
    let r = send_v2(
        c,
        RequestCode::SEND_MESSAGE_V2,
        topic,
        queue,
        &half_props(uniq),
        4,
    );
    assert_eq!(r.code, 0, "{:?}", r.remark);
    r
}

/// Every record of a queue from `offset`, waiting up to `within` for at least one.
fn pull(c: &mut RawClient, topic: &str, queue: i32, offset: i64, within: Duration) -> Vec<Record> {
    let deadline = Instant::now() + within;
    loop {
        let r = c.call(&support::pull_request(topic, queue, offset));
        if r.code == 0 {
            return support::records(&r.body.to_bytes());
        }
        if Instant::now() > deadline {
            return Vec::new();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn end_transaction(
    c: &mut RawClient,
    group: &str,
    queue_offset: i64,
    commit_log_offset: i64,
    action: i32,
    from_check: bool,
) -> RemotingCommand {
    c.call(&end_transaction_request(
        group,
        queue_offset,
        commit_log_offset,
        action,
        from_check,
    ))
}

fn end_transaction_request(
    group: &str,
    queue_offset: i64,
    commit_log_offset: i64,
    action: i32,
    from_check: bool,
) -> RemotingCommand {
    let (qo, po, a, fc) = (
        queue_offset.to_string(),
        commit_log_offset.to_string(),
        action.to_string(),
        from_check.to_string(),
    );
    req(
        RequestCode::END_TRANSACTION,
        &[
            ("producerGroup", group),
            ("tranStateTableOffset", &qo),
            ("commitLogOffset", &po),
            ("commitOrRollback", &a),
            ("fromTransactionCheck", &fc),
            ("msgId", "ignored"),
        ],
    )
}

fn heartbeat(c: &mut RawClient, client_id: &str, producer_group: &str) {
    let body = format!(
        r#"{{"clientID":"{client_id}","consumerDataSet":[],"heartbeatFingerprint":0,"producerDataSet":[{{"groupName":"{producer_group}"}}],"withoutSub":false}}"#
    );
    let mut cmd = req(RequestCode::HEART_BEAT, &[]);
    cmd.body = bytes::Bytes::from(body).into();
    let r = c.call(&cmd);
    assert_eq!(r.code, 0, "{:?}", r.remark);
}

fn ext(r: &RemotingCommand, key: &str) -> String {
    r.ext(key).unwrap_or_default().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_message_is_stored_in_the_half_topic_and_invisible_until_commit() {
    let dir = tempfile::tempdir().unwrap();
    let broker = start(dir.path(), &[]).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, "TX", 4);
        let r = send_half(&mut c, "TX", 2, "U-COMMIT");
        assert_eq!(ext(&r, "queueId"), "2", "the real queue is answered");
        assert_eq!(
            ext(&r, "queueOffset"),
            "0",
            "the half queue offset is answered"
        );
        assert_eq!(ext(&r, "transactionId"), "U-COMMIT");
        assert!(
            pull(&mut c, "TX", 2, 0, Duration::ZERO).is_empty(),
            "half message visible"
        );

        let half = pull(&mut c, HALF, 0, 0, Duration::from_secs(5));
        assert_eq!(half.len(), 1);
        let h = &half[0];
        assert_eq!(
            (h.topic.as_str(), h.queue_id, h.sys_flag & 0xC),
            (HALF, 0, 0)
        );
        for p in [
            "REAL_TOPIC\u{1}TX\u{2}",
            "REAL_QID\u{1}2\u{2}",
            "__transactionId__\u{1}U-COMMIT\u{2}",
            "TRAN_MSG\u{1}true\u{2}",
        ] {
            assert!(
                h.properties.contains(p),
                "{p:?} missing in {:?}",
                h.properties
            );
        }

        let r = end_transaction(&mut c, "PG", 0, h.phys_offset, 8, false);
        assert_eq!(r.code, 0, "{:?}", r.remark);
        let committed = pull(&mut c, "TX", 2, 0, Duration::from_secs(5));
        assert_eq!(committed.len(), 1);
        let m = &committed[0];
        assert_eq!(m.sys_flag & 0xC, 8, "transaction type COMMIT");
        assert_eq!(m.prepared_transaction_offset, h.phys_offset);
        assert_eq!(m.body, b"payload");
        assert!(m.properties.contains("UNIQ_KEY\u{1}U-COMMIT\u{2}"));

        let ops = pull(&mut c, OP, 0, 0, Duration::from_secs(5));
        assert_eq!(ops.len(), 1);
        assert_eq!(ops[0].body, b"0,");
        assert!(
            ops[0].properties.contains("TAGS\u{1}d\u{2}"),
            "{:?}",
            ops[0].properties
        );
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollback_writes_only_the_op_record_and_bad_requests_get_java_codes_and_remarks() {
    let dir = tempfile::tempdir().unwrap();
    let broker = start(dir.path(), &[]).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, "TR", 1);
        send_half(&mut c, "TR", 0, "U-RB");
        let h = pull(&mut c, HALF, 0, 0, Duration::from_secs(5)).remove(0);

        let r = end_transaction(&mut c, "PG", 0, 999_999_999, 8, false);
        assert_eq!(
            (r.code, r.remark.as_deref()),
            (1, Some("Find prepared transaction message failed"))
        );
        let r = end_transaction(&mut c, "OTHER", 0, h.phys_offset, 8, false);
        assert_eq!(
            (r.code, r.remark.as_deref()),
            (1, Some("The producer group wrong"))
        );
        let r = end_transaction(&mut c, "PG", 7, h.phys_offset, 12, false);
        assert_eq!(
            (r.code, r.remark.as_deref()),
            (1, Some("The transaction state table offset wrong"))
        );

        // UNKNOW gets no response at all: the next answer is the next request's.
        let mut unknown = end_transaction_request("PG", 0, h.phys_offset, 0, false);
        unknown.opaque = 100;
        c.send(&unknown);
        let mut rb = end_transaction_request("PG", 0, h.phys_offset, 12, false);
        rb.opaque = 101;
        let r = c.call(&rb);
        assert_eq!(r.opaque, rb.opaque, "UNKNOW was answered");
        assert_eq!(r.code, 0, "{:?}", r.remark);

        assert!(
            pull(&mut c, "TR", 0, 0, Duration::from_millis(300)).is_empty(),
            "rolled back message visible"
        );
        let ops = pull(&mut c, OP, 0, 0, Duration::from_secs(5));
        assert_eq!(
            ops.iter().map(|o| o.body.clone()).collect::<Vec<_>>(),
            vec![b"0,".to_vec()]
        );
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reject_transaction_message_refuses_half_messages() {
    let dir = tempfile::tempdir().unwrap();
    let broker = start(dir.path(), &[("rejectTransactionMessage", "true")]).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        let r = send_v2(
            &mut c,
            RequestCode::SEND_MESSAGE_V2,
            "TJ",
            0,
            &half_props("U"),
            4,
        );
        assert_eq!(r.code, 16, "NO_PERMISSION");
        assert_eq!(
            r.remark.as_deref(),
            Some("the broker[127.0.0.1] sending transaction message is forbidden")
        );
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unanswered_half_message_is_checked_back_then_committed_from_the_check() {
    let dir = tempfile::tempdir().unwrap();
    let keys = [
        ("transactionTimeOut", "200"),
        ("transactionCheckInterval", "300"),
    ];
    let broker = start(dir.path(), &keys).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        c.stream
            .set_read_timeout(Some(Duration::from_secs(15)))
            .unwrap();
        create_topic(&mut c, "TC", 2);
        heartbeat(&mut c, "127.0.0.1@p1", "PG");
        send_half(&mut c, "TC", 1, "U-CHECK");
        let check = c.recv().expect("CHECK_TRANSACTION_STATE");
        assert_eq!(check.code, RequestCode::CHECK_TRANSACTION_STATE.code());
        assert!(check.is_oneway());
        assert_eq!(ext(&check, "msgId"), "U-CHECK");
        assert_eq!(ext(&check, "transactionId"), "U-CHECK");
        assert_eq!(
            ext(&check, "tranStateTableOffset"),
            "1",
            "the re-put copy's offset"
        );
        assert_eq!(ext(&check, "bname"), "broker-t");
        let body = support::records(&check.body.to_bytes()).remove(0);
        assert_eq!(
            (body.topic.as_str(), body.queue_id),
            ("TC", 1),
            "real topic and queue"
        );
        assert!(
            body.properties
                .contains("TRANSACTION_CHECK_TIMES\u{1}1\u{2}"),
            "{:?}",
            body.properties
        );
        let commit_log_offset: i64 = ext(&check, "commitLogOffset").parse().unwrap();
        assert_eq!(body.phys_offset, commit_log_offset);

        let commit = end_transaction_request("PG", 1, commit_log_offset, 8, true);
        let r = c.call_past_requests(&commit);
        assert_eq!(r.code, 0, "{:?}", r.remark);
        let mut reader = RawClient::connect(addr);
        let committed = pull(&mut reader, "TC", 1, 0, Duration::from_secs(5));
        assert_eq!(committed.len(), 1);
        assert_eq!(committed[0].prepared_transaction_offset, commit_log_offset);
    })
    .await
    .unwrap();
    broker.shutdown().await;
    let offsets = std::fs::read_to_string(dir.path().join("config/consumerOffset.json")).unwrap();
    assert!(
        offsets.contains("RMQ_SYS_TRANS_HALF_TOPIC@CID_RMQ_SYS_TRANS"),
        "{offsets}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_message_checked_transaction_check_max_times_goes_to_trans_check_max_time_topic() {
    let dir = tempfile::tempdir().unwrap();
    let keys = [
        ("transactionTimeOut", "100"),
        ("transactionCheckInterval", "200"),
        ("transactionCheckMax", "2"),
    ];
    let broker = start(dir.path(), &keys).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, "TM", 1);
        // The producer's connection receives the check-backs and never answers them.
        let mut producer = RawClient::connect(addr);
        heartbeat(&mut producer, "127.0.0.1@p2", "PG");
        send_half(&mut c, "TM", 0, "U-MAX");
        let deadline = Instant::now() + Duration::from_secs(20);
        let discarded = loop {
            let d = pull(&mut c, "TRANS_CHECK_MAX_TIME_TOPIC", 0, 0, Duration::ZERO);
            if !d.is_empty() || Instant::now() > deadline {
                break d;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        assert_eq!(discarded.len(), 1, "not discarded");
        let d = &discarded[0];
        assert!(
            d.properties.contains("TRANSACTION_CHECK_TIMES\u{1}2\u{2}"),
            "{:?}",
            d.properties
        );
        assert!(d.properties.contains("REAL_TOPIC\u{1}TM\u{2}"));
        let checks: Vec<RemotingCommand> = std::iter::from_fn(|| producer.recv()).take(2).collect();
        assert!(checks
            .iter()
            .all(|c| c.code == RequestCode::CHECK_TRANSACTION_STATE.code()));
        assert!(pull(&mut c, "TM", 0, 0, Duration::ZERO).is_empty());
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reply_is_pushed_to_the_requesting_client_and_stored_in_the_reply_topic() {
    let dir = tempfile::tempdir().unwrap();
    let broker = start(dir.path(), &[]).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut requester = RawClient::connect(addr);
        heartbeat(&mut requester, "127.0.0.1@req", "QPG");
        let pushed = std::thread::spawn(move || {
            let push = requester.recv().expect("PUSH_REPLY_MESSAGE_TO_CLIENT");
            requester.send(&RemotingCommand::response_to(&push, 0, None));
            push
        });
        let mut replier = RawClient::connect(addr);
        let reply_props = props(&[
            ("CORRELATION_ID", "c-1"),
            ("REPLY_TO_CLIENT", "127.0.0.1@req"),
            ("MSG_TYPE", "reply"),
        ]);
        let topic = "DefaultCluster_REPLY_TOPIC";
        let r = send_v2(
            &mut replier,
            RequestCode::SEND_REPLY_MESSAGE_V2,
            topic,
            0,
            &reply_props,
            0,
        );
        assert_eq!(r.code, 0, "{:?}", r.remark);
        assert_eq!(ext(&r, "queueOffset"), "0");
        let push = pushed.join().unwrap();
        assert_eq!(push.code, RequestCode::PUSH_REPLY_MESSAGE_TO_CLIENT.code());
        assert_eq!(ext(&push, "topic"), topic);
        assert_eq!(ext(&push, "storeHost"), addr.to_string());
        let pushed_props = ext(&push, "properties");
        for p in [
            "CORRELATION_ID\u{1}c-1\u{2}",
            "PUSH_REPLY_TIME\u{1}",
            "MSG_REGION\u{1}DefaultRegion\u{2}",
        ] {
            assert!(
                pushed_props.contains(p),
                "{p:?} missing in {pushed_props:?}"
            );
        }
        assert_eq!(push.body.to_bytes().as_ref(), b"payload");

        let stored = pull(&mut replier, topic, 0, 0, Duration::from_secs(5));
        assert_eq!(stored.len(), 1);
        assert!(
            !stored[0].properties.contains("PUSH_REPLY_TIME"),
            "{:?}",
            stored[0].properties
        );

        // SEND_REPLY_MESSAGE (324) carries the long header keys.
        let nobody = props(&[("REPLY_TO_CLIENT", "127.0.0.1@gone")]);
        let mut v1 = req(
            RequestCode::SEND_REPLY_MESSAGE,
            &[
                ("producerGroup", "RPG"),
                ("topic", topic),
                ("defaultTopic", "TBW102"),
                ("defaultTopicQueueNums", "4"),
                ("queueId", "0"),
                ("sysFlag", "0"),
                ("bornTimestamp", "1700000000000"),
                ("flag", "0"),
                ("properties", &nobody),
            ],
        );
        v1.body = bytes::Bytes::from_static(b"late").into();
        let r = replier.call(&v1);
        assert_eq!(r.code, 1);
        assert_eq!(
            r.remark.as_deref(),
            Some("push reply message fail, channel of <127.0.0.1@gone> not found.")
        );
        assert_eq!(ext(&r, "queueOffset"), "1", "stored all the same");
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn producer_answer_after_the_check_immunity_time_is_refused_with_illegal_operation() {
    let dir = tempfile::tempdir().unwrap();
    let broker = start(dir.path(), &[("transactionTimeOut", "1000")]).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, "TI", 1);
        let p = format!(
            "{}CHECK_IMMUNITY_TIME_IN_SECONDS\u{1}2\u{2}",
            half_props("U-IMM")
        );
        let born = now_ms() - 5_000;
        let r = send_v2_born(&mut c, RequestCode::SEND_MESSAGE_V2, "TI", 0, &p, 4, born);
        assert_eq!(r.code, 0, "{:?}", r.remark);
        let h = pull(&mut c, HALF, 0, 0, Duration::from_secs(5)).remove(0);
        let r = end_transaction(&mut c, "PG", 0, h.phys_offset, 8, false);
        assert_eq!(
            (r.code, r.remark.as_deref()),
            (604, None),
            "ILLEGAL_OPERATION"
        );
        // The check-back's answer is not subject to it.
        let r = end_transaction(&mut c, "PG", 0, h.phys_offset, 8, true);
        assert_eq!(r.code, 0, "{:?}", r.remark);
        assert_eq!(pull(&mut c, "TI", 0, 0, Duration::from_secs(5)).len(), 1);
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_half_message_is_checked_back_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let keys = [
        ("transactionTimeOut", "200"),
        ("transactionCheckInterval", "300"),
    ];
    let broker = start(dir.path(), &[]).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, "TS", 1);
        send_half(&mut c, "TS", 0, "U-RESTART");
    })
    .await
    .unwrap();
    broker.shutdown().await;

    let broker = start(dir.path(), &keys).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut p = RawClient::connect(addr);
        p.stream
            .set_read_timeout(Some(Duration::from_secs(15)))
            .unwrap();
        heartbeat(&mut p, "127.0.0.1@p3", "PG");
        let check = p.recv().expect("CHECK_TRANSACTION_STATE after restart");
        assert_eq!(check.code, RequestCode::CHECK_TRANSACTION_STATE.code());
        assert_eq!(ext(&check, "msgId"), "U-RESTART");
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reply_topic_exists_at_start_as_a_system_topic() {
    let dir = tempfile::tempdir().unwrap();
    let broker = start(dir.path(), &[]).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        let r = c.call(&req(
            RequestCode::GET_TOPIC_CONFIG,
            &[("topic", "DefaultCluster_REPLY_TOPIC")],
        ));
        assert_eq!(r.code, 0, "{:?}", r.remark);
        let body = String::from_utf8(r.body.to_bytes().to_vec()).unwrap();
        for f in ["\"readQueueNums\":1", "\"writeQueueNums\":1", "\"perm\":6"] {
            assert!(body.contains(f), "{f} in {body}");
        }
        let r = c.call(&req(RequestCode::GET_SYSTEM_TOPIC_LIST_FROM_BROKER, &[]));
        let body = String::from_utf8(r.body.to_bytes().to_vec()).unwrap();
        assert!(body.contains("DefaultCluster_REPLY_TOPIC"), "{body}");
        let r = c.call(&req(
            RequestCode::UPDATE_AND_CREATE_TOPIC,
            &[
                ("topic", "DefaultCluster_REPLY_TOPIC"),
                ("defaultTopic", "TBW102"),
                ("readQueueNums", "4"),
                ("writeQueueNums", "4"),
                ("perm", "6"),
                ("topicFilterType", "SINGLE_TAG"),
            ],
        ));
        assert_eq!(
            r.remark.as_deref(),
            Some("The topic[DefaultCluster_REPLY_TOPIC] is conflict with system topic.")
        );
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

/// `rocketmq_half_messages` follows the half messages of a topic (two stored, one committed, one
/// rolled back) and `rocketmq_finish_message_latency` counts the commit, as Java's
/// TransactionMetrics and EndTransactionProcessor record them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_message_metrics_follow_commit_and_rollback() {
    let dir = tempfile::tempdir().unwrap();
    let keys = [
        ("metricsExporterType", "PROM"),
        ("metricsPromExporterHost", "127.0.0.1"),
        ("metricsPromExporterPort", "0"),
    ];
    let broker = start(dir.path(), &keys).await;
    let (addr, metrics) = (broker.local_addr(), broker.metrics_addr().unwrap());
    tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let scrape = || {
            // scrapes within a second share one render
            std::thread::sleep(Duration::from_millis(1100));
            let mut s = std::net::TcpStream::connect(metrics).unwrap();
            write!(s, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).unwrap();
            out
        };
        let sample = |text: &str, name: &str| -> Option<f64> {
            text.lines()
                .find(|l| l.starts_with(&format!("{name}{{")) && l.contains("topic=\"TXM\""))
                .map(|l| l.rsplit(' ').nth(1).unwrap().parse().unwrap())
        };
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, "TXM", 1);
        send_half(&mut c, "TXM", 0, "U-M1");
        send_half(&mut c, "TXM", 0, "U-M2");
        let text = scrape();
        assert_eq!(sample(&text, "rocketmq_half_messages"), Some(2.0));
        let half = pull(&mut c, HALF, 0, 0, Duration::from_secs(5));
        assert_eq!(half.len(), 2);
        let r = end_transaction(&mut c, "PG", 0, half[0].phys_offset, 8, false);
        assert_eq!(r.code, 0, "commit: {:?}", r.remark);
        let r = end_transaction(&mut c, "PG", 1, half[1].phys_offset, 12, false);
        assert_eq!(r.code, 0, "rollback: {:?}", r.remark);
        let text = scrape();
        assert_eq!(sample(&text, "rocketmq_half_messages"), Some(0.0));
        assert_eq!(sample(&text, "rocketmq_commit_messages_total"), Some(1.0));
        assert_eq!(sample(&text, "rocketmq_rollback_messages_total"), Some(1.0));
        assert_eq!(
            sample(&text, "rocketmq_finish_message_latency_milliseconds_count"),
            Some(1.0)
        );
        send_half(&mut c, "TXM", 0, "U-M3");
    })
    .await
    .unwrap();
    broker.shutdown().await;
    // the count outlives a restart in Java's config/transactionMetrics
    let text = std::fs::read_to_string(dir.path().join("config/transactionMetrics")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["transactionCount"]["TXM"]["count"], 1, "{text}");
    let broker = start(dir.path(), &keys).await;
    let metrics = broker.metrics_addr().unwrap();
    let text = tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(metrics).unwrap();
        write!(s, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    })
    .await
    .unwrap();
    assert!(
        text.lines()
            .any(|l| l.starts_with("rocketmq_half_messages{") && l.contains("topic=\"TXM\"} 1.0 ")),
        "{text}"
    );
    broker.shutdown().await;
}
