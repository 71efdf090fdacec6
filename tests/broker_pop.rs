//! POP over raw Remoting frames (issue #22): pop from every queue, the receipts and offset
//! strings, ack, change of invisible time, and the revive of what nobody acknowledged into
//! `%RETRY%<group>_<topic>`, from which the next pop reads it with one more reconsume time.
//! The Java client's scenarios (and the same on the Java broker) are in compat-tests `pop`.

mod support;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rmqd::remoting::body::consume_stats::ConsumeStats;
use rmqd::remoting::{RequestCode, ResponseCode};
use support::{create_topic, request as req, RawClient};

const TOPIC: &str = "POP_T";
const GROUP: &str = "POP_G";

fn send(c: &mut RawClient, body: &str) {
    let mut cmd = req(
        RequestCode::SEND_MESSAGE_V2,
        &[
            ("a", "POP_PG"),
            ("b", TOPIC),
            ("c", "TBW102"),
            ("d", "4"),
            ("e", "-1"),
            ("f", "0"),
            ("g", "1700000000000"),
            ("h", "0"),
            ("i", "TAGS\u{1}A\u{2}"),
        ],
    );
    cmd.body = bytes::Bytes::copy_from_slice(body.as_bytes()).into();
    let r = c.call(&cmd);
    assert_eq!(r.code, 0, "{:?}", r.remark);
}

struct Popped {
    body: String,
    topic: String,
    queue_id: i32,
    queue_offset: i64,
    reconsume_times: i32,
    receipt: String,
    props: String,
}

/// POP_MESSAGE of every queue; the messages with the receipts the Java client would build.
fn pop(c: &mut RawClient, invisible_ms: i64, poll_ms: i64) -> (i32, Vec<Popped>) {
    let now = rmqd::broker::now_millis().to_string();
    let (inv, poll) = (invisible_ms.to_string(), poll_ms.to_string());
    let r = c.call(&req(
        RequestCode::POP_MESSAGE,
        &[
            ("consumerGroup", GROUP),
            ("topic", TOPIC),
            ("queueId", "-1"),
            ("maxMsgNums", "32"),
            ("invisibleTime", &inv),
            ("pollTime", &poll),
            ("bornTime", &now),
            ("initMode", "0"),
            ("expType", "TAG"),
            ("exp", "*"),
            ("order", "false"),
        ],
    ));
    if r.code != 0 {
        assert!(r.ext("popTime").is_some(), "a refusal carries the header");
        return (r.code, Vec::new());
    }
    assert_eq!(r.remark.as_deref(), Some("FOUND"));
    let pop_time = r.ext("popTime").unwrap().to_string();
    let revive = r.ext("reviveQid").unwrap().to_string();
    // "<mark> <queueId> <start>;..." and "<mark> <queueId> <o1>,<o2>;..."
    let mut starts = HashMap::new();
    for e in r.ext("startOffsetInfo").unwrap().split(';') {
        let f: Vec<&str> = e.split(' ').collect();
        starts.insert(format!("{}@{}", f[0], f[1]), f[2].to_string());
    }
    let mut listed = HashMap::new();
    for e in r.ext("msgOffsetInfo").unwrap().split(';') {
        let f: Vec<&str> = e.split(' ').collect();
        let offs: Vec<i64> = f[2].split(',').map(|o| o.parse().unwrap()).collect();
        listed.insert(format!("{}@{}", f[0], f[1]), offs);
    }
    let recs = support::records(&r.body.to_bytes());
    let out = recs
        .into_iter()
        .map(|rec| {
            let ck = rec
                .properties
                .split('\u{2}')
                .find_map(|kv| kv.strip_prefix("POP_CK\u{1}"))
                .map(str::to_string);
            let mark = match &ck {
                Some(ck) => ck.split(' ').nth(4).unwrap().to_string(),
                None => "0".to_string(),
            };
            let key = format!("{mark}@{}", rec.queue_id);
            assert!(listed[&key].contains(&rec.queue_offset), "offset listed");
            let receipt = format!(
                "{} {pop_time} {invisible_ms} {revive} {mark} broker-t {} {}",
                starts[&key], rec.queue_id, rec.queue_offset
            );
            Popped {
                body: String::from_utf8(rec.body.clone()).unwrap(),
                topic: rec.topic.clone(),
                queue_id: rec.queue_id,
                queue_offset: rec.queue_offset,
                reconsume_times: rec.reconsume_times,
                receipt,
                props: rec.properties.clone(),
            }
        })
        .collect();
    (0, out)
}

/// NOTIFICATION for every queue, held up to `poll_ms`: whether there is anything to pop.
fn notification(c: &mut RawClient, poll_ms: i64) -> bool {
    let now = rmqd::broker::now_millis().to_string();
    let poll = poll_ms.to_string();
    let r = c.call(&req(
        RequestCode::NOTIFICATION,
        &[
            ("consumerGroup", GROUP),
            ("topic", TOPIC),
            ("queueId", "-1"),
            ("pollTime", &poll),
            ("bornTime", &now),
        ],
    ));
    assert_eq!(r.code, 0, "{:?}", r.remark);
    r.ext("hasMsg") == Some("true")
}

fn real_topic(p: &Popped) -> String {
    match p.receipt.split(' ').nth(4) {
        Some("1") => format!("%RETRY%{GROUP}_{TOPIC}"),
        _ => TOPIC.to_string(),
    }
}

fn ack(c: &mut RawClient, p: &Popped) -> i32 {
    let (q, o) = (p.queue_id.to_string(), p.queue_offset.to_string());
    c.call(&req(
        RequestCode::ACK_MESSAGE,
        &[
            ("consumerGroup", GROUP),
            ("topic", &real_topic(p)),
            ("queueId", &q),
            ("extraInfo", &p.receipt),
            ("offset", &o),
        ],
    ))
    .code
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn popped_messages_come_back_unless_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let broker = support::start_broker(dir.path(), &[]).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, TOPIC, 4);
        // nothing yet: a pop that does not wait answers POLLING_TIMEOUT
        let (code, none) = pop(&mut c, 60_000, 0);
        assert_eq!(code, ResponseCode::POLLING_TIMEOUT.code());
        assert!(none.is_empty());
        assert!(!notification(&mut c, 0), "nothing to pop yet");
        for i in 0..8 {
            send(&mut c, &format!("m{i}"));
        }
        assert!(
            notification(&mut c, 3_000),
            "the sends are seen (a held one is woken)"
        );
        // PEEK shows what a pop would read and changes nothing
        let peek = |c: &mut RawClient| {
            c.call(&req(
                RequestCode::PEEK_MESSAGE,
                &[
                    ("consumerGroup", GROUP),
                    ("topic", TOPIC),
                    ("queueId", "-1"),
                    ("maxMsgNums", "32"),
                ],
            ))
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut peeked = peek(&mut c);
        while support::records(&peeked.body.to_bytes()).len() < 8 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            peeked = peek(&mut c);
        }
        assert_eq!(peeked.code, 0);
        assert_eq!(support::records(&peeked.body.to_bytes()).len(), 8);
        assert_eq!(support::records(&peek(&mut c).body.to_bytes()).len(), 8);
        let r = c.call(&req(
            RequestCode::POLLING_INFO,
            &[
                ("consumerGroup", GROUP),
                ("topic", TOPIC),
                ("queueId", "-1"),
            ],
        ));
        assert_eq!((r.code, r.ext("pollingNum")), (0, Some("0")));
        // a pop that waits is answered when the messages are dispatched
        let mut got = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(5);
        while got.len() < 8 && Instant::now() < deadline {
            got.extend(pop(&mut c, 2_000, 1_000).1);
        }
        let mut bodies: Vec<String> = got.iter().map(|p| p.body.clone()).collect();
        bodies.sort();
        assert_eq!(bodies, (0..8).map(|i| format!("m{i}")).collect::<Vec<_>>());
        // popped messages are invisible: another pop finds nothing
        assert_eq!(
            pop(&mut c, 2_000, 0).0,
            ResponseCode::POLLING_TIMEOUT.code()
        );
        // ack the first four; m4 is asked back in 1 s (a new checkpoint); m5..m7 are left
        for p in got
            .iter()
            .filter(|p| ["m0", "m1", "m2", "m3"].contains(&p.body.as_str()))
        {
            assert_eq!(ack(&mut c, p), 0);
        }
        let m4 = got.iter().find(|p| p.body == "m4").unwrap();
        let (q, o) = (m4.queue_id.to_string(), m4.queue_offset.to_string());
        let r = c.call(&req(
            RequestCode::CHANGE_MESSAGE_INVISIBLETIME,
            &[
                ("consumerGroup", GROUP),
                ("topic", TOPIC),
                ("queueId", &q),
                ("extraInfo", &m4.receipt),
                ("offset", &o),
                ("invisibleTime", "1000"),
            ],
        ));
        assert_eq!(r.code, 0, "{:?}", r.remark);
        assert_eq!(r.ext("invisibleTime"), Some("1000"));
        // an ack for a queue that does not exist
        let bad = Popped {
            queue_id: 9,
            ..got.into_iter().next().unwrap()
        };
        assert_eq!(ack(&mut c, &bad), ResponseCode::MESSAGE_ILLEGAL.code());

        // m4..m7 come back from the retry topic, once each, reconsumed once
        let mut back: Vec<Popped> = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        while back.len() < 4 && Instant::now() < deadline {
            let (_, more) = pop(&mut c, 60_000, 1_000);
            back.extend(more);
        }
        let mut bodies: Vec<String> = back.iter().map(|p| p.body.clone()).collect();
        bodies.sort();
        assert_eq!(bodies, vec!["m4", "m5", "m6", "m7"]);
        for p in &back {
            assert_eq!(
                p.topic, TOPIC,
                "a retried message is handed out under its topic"
            );
            assert_eq!(p.reconsume_times, 1);
            assert!(p.props.contains("1ST_POP_TIME\u{1}"), "{:?}", p.props);
            assert!(p.props.contains("POP_CK\u{1}"), "{:?}", p.props);
            assert_eq!(ack(&mut c, p), 0);
        }
        // acknowledged: nothing more comes back
        std::thread::sleep(Duration::from_secs(4));
        assert_eq!(
            pop(&mut c, 60_000, 0).0,
            ResponseCode::POLLING_TIMEOUT.code()
        );
        // with a member online whose heartbeat subscribes the topic and %RETRY%<group> (the Java
        // client in POP mode), the consume stats still list the pop retry topic: Java finds it in
        // the subscriptions its pops compensated
        let sub = |t: &str| {
            format!(
                r#"{{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*","subVersion":1,"tagsSet":[],"topic":"{t}"}}"#
            )
        };
        let hb = format!(
            r#"{{"clientID":"127.0.0.1@pop","consumerDataSet":[{{"consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","consumeType":"CONSUME_PASSIVELY","groupName":"{GROUP}","messageModel":"CLUSTERING","subscriptionDataSet":[{},{}],"unitMode":false}}],"producerDataSet":[]}}"#,
            sub(TOPIC),
            sub(&format!("%RETRY%{GROUP}"))
        );
        let mut h = req(RequestCode::HEART_BEAT, &[]);
        h.body = bytes::Bytes::from(hb).into();
        assert_eq!(c.call_past_requests(&h).code, 0);
        let r = c.call(&req(
            RequestCode::GET_CONSUME_STATS,
            &[("consumerGroup", GROUP)],
        ));
        assert_eq!(r.code, 0, "{:?}", r.remark);
        let cs = ConsumeStats::decode(&r.body.to_bytes()).unwrap();
        let retry = format!("%RETRY%{GROUP}_{TOPIC}");
        let rows: Vec<(i64, i64)> = cs
            .offset_table
            .iter()
            .filter(|(mq, _)| mq.topic == retry)
            .map(|(_, w)| (w.broker_offset, w.consumer_offset))
            .collect();
        assert_eq!(rows, vec![(4, 4)], "{:?}", cs.offset_table.keys());
        assert_eq!(
            cs.offset_table.keys().filter(|mq| mq.topic == TOPIC).count(),
            4
        );
    })
    .await
    .unwrap();
    broker.shutdown().await;
    // the retry topic and the request-mode-less state are Java's files
    let topics = std::fs::read_to_string(dir.path().join("config/topics.json")).unwrap();
    assert!(topics.contains(&format!("%RETRY%{GROUP}_{TOPIC}")));
    let offsets = std::fs::read_to_string(dir.path().join("config/consumerOffset.json")).unwrap();
    assert!(offsets.contains("CID_RMQ_SYS_REVIVE_GROUP"), "{offsets}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn assignment_follows_the_request_mode() {
    let dir = tempfile::tempdir().unwrap();
    let broker = support::start_broker(dir.path(), &[]).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, TOPIC, 4);
        let hb = format!(
            r#"{{"clientID":"127.0.0.1@pop","consumerDataSet":[{{"consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","consumeType":"CONSUME_PASSIVELY","groupName":"{GROUP}","messageModel":"CLUSTERING","subscriptionDataSet":[],"unitMode":false}}],"producerDataSet":[]}}"#
        );
        let mut h = req(RequestCode::HEART_BEAT, &[]);
        h.body = bytes::Bytes::from(hb).into();
        assert_eq!(c.call_past_requests(&h).code, 0);
        let query = |c: &mut RawClient| {
            let mut q = req(RequestCode::QUERY_ASSIGNMENT, &[]);
            q.body = bytes::Bytes::from(format!(
                r#"{{"clientId":"127.0.0.1@pop","consumerGroup":"{GROUP}","messageModel":"CLUSTERING","strategyName":"AVG","topic":"{TOPIC}"}}"#
            ))
            .into();
            let r = c.call_past_requests(&q);
            assert_eq!(r.code, 0);
            String::from_utf8(r.body.to_bytes().to_vec()).unwrap()
        };
        let pull = query(&mut c);
        assert_eq!(pull.matches("\"mode\":\"PULL\"").count(), 4, "{pull}");
        let mut set = req(RequestCode::SET_MESSAGE_REQUEST_MODE, &[]);
        set.body = bytes::Bytes::from(format!(
            r#"{{"consumerGroup":"{GROUP}","mode":"POP","popShareQueueNum":0,"topic":"{TOPIC}"}}"#
        ))
        .into();
        assert_eq!(c.call_past_requests(&set).code, 0);
        let popped = query(&mut c);
        assert_eq!(
            popped,
            format!(r#"{{"messageQueueAssignments":[{{"messageQueue":{{"brokerName":"broker-t","queueId":-1,"topic":"{TOPIC}"}},"mode":"POP"}}]}}"#)
        );
        set.body = bytes::Bytes::from(format!(
            r#"{{"consumerGroup":"{GROUP}","mode":"POP","topic":"%RETRY%{GROUP}"}}"#
        ))
        .into();
        assert_eq!(c.call_past_requests(&set).code, ResponseCode::NO_PERMISSION.code());
    })
    .await
    .unwrap();
    broker.shutdown().await;
    let modes = std::fs::read_to_string(dir.path().join("config/messageRequestMode.json")).unwrap();
    assert!(modes.contains("\"POP\""), "{modes}");
}

/// A broker stopped with messages popped and not acknowledged hands them out again after a
/// restart, once their invisible time is over; the acknowledged ones stay consumed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unacknowledged_pops_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let broker = support::start_broker(dir.path(), &[]).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, TOPIC, 2);
        for i in 0..6 {
            send(&mut c, &format!("r{i}"));
        }
        let mut got = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(5);
        while got.len() < 6 && Instant::now() < deadline {
            got.extend(pop(&mut c, 3_000, 500).1);
        }
        assert_eq!(got.len(), 6);
        for p in got
            .iter()
            .filter(|p| ["r0", "r1", "r2"].contains(&p.body.as_str()))
        {
            assert_eq!(ack(&mut c, p), 0);
        }
    })
    .await
    .unwrap();
    broker.shutdown().await;
    let broker = support::start_broker(dir.path(), &[]).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        let mut back: Vec<Popped> = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        while back.len() < 3 && Instant::now() < deadline {
            back.extend(pop(&mut c, 60_000, 1_000).1);
        }
        let mut bodies: Vec<String> = back.iter().map(|p| p.body.clone()).collect();
        bodies.sort();
        assert_eq!(bodies, vec!["r3", "r4", "r5"]);
        for p in &back {
            assert_eq!(ack(&mut c, p), 0);
        }
        std::thread::sleep(Duration::from_secs(2));
        assert_eq!(
            pop(&mut c, 60_000, 0).0,
            ResponseCode::POLLING_TIMEOUT.code()
        );
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

/// Orderly POP (the proxy's FIFO groups): a queue is handed out again only when its last pop is
/// acknowledged or visible again; the group's offset follows the oldest message still out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orderly_pop_blocks_the_queue_until_acknowledged() {
    const T: &str = "POP_FIFO";
    let dir = tempfile::tempdir().unwrap();
    let broker = support::start_broker(dir.path(), &[]).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, T, 1);
        for i in 0..3 {
            let mut cmd = req(
                RequestCode::SEND_MESSAGE_V2,
                &[
                    ("a", "PG"),
                    ("b", T),
                    ("c", "TBW102"),
                    ("d", "1"),
                    ("e", "0"),
                    ("f", "0"),
                    ("g", "1700000000000"),
                    ("h", "0"),
                    ("i", ""),
                ],
            );
            cmd.body = bytes::Bytes::from(format!("f{i}")).into();
            assert_eq!(c.call(&cmd).code, 0);
        }
        let pop = |c: &mut RawClient, attempt: &str, poll: &str| {
            let now = rmqd::broker::now_millis().to_string();
            c.call(&req(
                RequestCode::POP_MESSAGE,
                &[
                    ("consumerGroup", GROUP),
                    ("topic", T),
                    ("queueId", "0"),
                    ("maxMsgNums", "32"),
                    ("invisibleTime", "2000"),
                    ("pollTime", poll),
                    ("bornTime", &now),
                    ("initMode", "0"),
                    ("order", "true"),
                    ("attemptId", attempt),
                ],
            ))
        };
        let offset = |c: &mut RawClient| {
            let r = c.call(&req(
                RequestCode::QUERY_CONSUMER_OFFSET,
                &[("consumerGroup", GROUP), ("topic", T), ("queueId", "0")],
            ));
            r.ext("offset").unwrap_or("-1").parse::<i64>().unwrap()
        };
        let mut first = pop(&mut c, "a1", "3000");
        let deadline = Instant::now() + Duration::from_secs(5);
        while support::records(&first.body.to_bytes()).len() < 3 && Instant::now() < deadline {
            first = pop(&mut c, "a1", "500");
        }
        assert_eq!(first.code, 0, "{:?}", first.remark);
        assert_eq!(first.ext("reviveQid"), Some("999"));
        assert_eq!(first.ext("orderCountInfo"), Some("0 0 0"));
        let pt = first.ext("popTime").unwrap().to_string();
        assert_eq!(support::records(&first.body.to_bytes()).len(), 3);
        // blocked for another attempt; the same attempt gets the same messages again
        assert_eq!(
            pop(&mut c, "a2", "0").code,
            ResponseCode::POLLING_TIMEOUT.code()
        );
        let ack = |c: &mut RawClient, off: i64| {
            let receipt = format!("0 {pt} 2000 999 0 broker-t 0 {off}");
            let o = off.to_string();
            c.call(&req(
                RequestCode::ACK_MESSAGE,
                &[
                    ("consumerGroup", GROUP),
                    ("topic", T),
                    ("queueId", "0"),
                    ("extraInfo", &receipt),
                    ("offset", &o),
                ],
            ))
            .code
        };
        assert_eq!(offset(&mut c), 0);
        assert_eq!(ack(&mut c, 1), 0);
        assert_eq!(offset(&mut c), 0, "f0 is still out");
        assert_eq!(ack(&mut c, 0), 0);
        assert_eq!(offset(&mut c), 2, "f2 is the oldest still out");
        assert_eq!(
            pop(&mut c, "a2", "0").code,
            ResponseCode::POLLING_TIMEOUT.code()
        );
        // f2 becomes visible again after its 2 s: a held pop gets it, handed out once before
        let again = pop(&mut c, "a3", "5000");
        assert_eq!(again.code, 0, "{:?}", again.remark);
        let recs = support::records(&again.body.to_bytes());
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].body, b"f2");
        assert_eq!(again.ext("orderCountInfo"), Some("0 qo0%2 1;0 0 1"));
    })
    .await
    .unwrap();
    broker.shutdown().await;
    let info = std::fs::read_to_string(dir.path().join("config/consumerOrderInfo.json")).unwrap();
    assert!(info.contains("POP_FIFO@POP_G"), "{info}");
}

/// An extreme invisible time (Java accepts any) puts the checkpoint straight into the revive
/// queue: its messages come back at once, and the revive queue goes on (no overflow stalls it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extreme_invisible_time_neither_stalls_revive_nor_panics() {
    let dir = tempfile::tempdir().unwrap();
    let broker = support::start_broker(dir.path(), &[]).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, TOPIC, 1);
        send(&mut c, "x0");
        send(&mut c, "x1");
        let mut got = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(5);
        while got.len() < 2 && Instant::now() < deadline {
            got.extend(pop(&mut c, i64::MIN + 1, 500).1);
        }
        assert_eq!(got.len(), 2);
        let mut back = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(15);
        while back.len() < 2 && Instant::now() < deadline {
            back.extend(pop(&mut c, 60_000, 1_000).1);
        }
        let mut bodies: Vec<String> = back.iter().map(|p| p.body.clone()).collect();
        bodies.sort();
        assert_eq!(bodies, vec!["x0", "x1"]);
    })
    .await
    .unwrap();
    broker.shutdown().await;
}
