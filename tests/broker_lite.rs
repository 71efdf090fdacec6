//! Lite topics (Java 5.5, issue #23) over raw Remoting frames: a LITE parent topic and a group
//! bound to it, sends naming `__LITE_TOPIC`, LITE_SUBSCRIPTION_CTL, POP_LITE_MESSAGE (FIFO per
//! lite topic, receipts on revive queue 999), ACK and CHANGE_MESSAGE_INVISIBLETIME with
//! `liteTopic`, the held POP_LITE woken by a send, and Java's refusals. The same exchanges run
//! against the Java 5.5.0 broker in the compat suite `lite` (LITE-07, LITE-08).

mod support;

use std::time::{Duration, Instant};

use rmqd::remoting::{RemotingCommand, RequestCode, ResponseCode};
use support::{records, request as req, RawClient};

const P: &str = "LITE_P";
const G: &str = "LITE_G";
const LMQ_ON: &[(&str, &str)] = &[("enableLmq", "true"), ("enableMultiDispatch", "true")];

fn setup(c: &mut RawClient) {
    let r = c.call(&req(
        RequestCode::UPDATE_AND_CREATE_TOPIC,
        &[
            ("topic", P),
            ("defaultTopic", "TBW102"),
            ("readQueueNums", "2"),
            ("writeQueueNums", "2"),
            ("perm", "6"),
            ("topicFilterType", "SINGLE_TAG"),
            ("order", "false"),
            (
                "attributes",
                "+message.type=LITE,+lite.topic.expiration=1440",
            ),
        ],
    ));
    assert_eq!(r.code, 0, "{:?}", r.remark);
    for (group, attrs) in [
        (G, format!(r#"{{"+lite.bind.topic":"{P}"}}"#)),
        ("LITE_UNBOUND", "{}".to_string()),
    ] {
        let mut cmd = req(RequestCode::UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, &[]);
        let body = format!(r#"{{"groupName":"{group}","attributes":{attrs}}}"#);
        cmd.body = bytes::Bytes::from(body).into();
        let r = c.call(&cmd);
        assert_eq!(r.code, 0, "{:?}", r.remark);
    }
}

fn send(c: &mut RawClient, lite: &str, body: &str) {
    let props = format!("__LITE_TOPIC\u{1}{lite}\u{2}WAIT\u{1}true\u{2}");
    let mut cmd = req(
        RequestCode::SEND_MESSAGE_V2,
        &[
            ("a", "LITE_PG"),
            ("b", P),
            ("c", "TBW102"),
            ("d", "4"),
            ("e", "-1"),
            ("f", "0"),
            ("g", "1700000000000"),
            ("h", "0"),
            ("i", &props),
        ],
    );
    cmd.body = bytes::Bytes::copy_from_slice(body.as_bytes()).into();
    let r = c.call(&cmd);
    assert_eq!(r.code, 0, "{:?}", r.remark);
}

/// Dispatch into the `%LMQ%` queues follows the acknowledgement (in Java too), so a test that
/// pops right after its sends first waits until the lite queue holds them.
fn wait_dispatched(c: &mut RawClient, lite: &str, count: i64) {
    let lmq = format!("%LMQ%${P}${lite}");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let max = c.call(&req(
            RequestCode::GET_MAX_OFFSET,
            &[("topic", &lmq), ("queueId", "0")],
        ));
        let got = max.ext("offset").and_then(|o| o.parse::<i64>().ok());
        if got == Some(count) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{lmq} holds {got:?}, not {count}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn ctl(c: &mut RawClient, action: &str, client: &str, lites: &[&str]) -> RemotingCommand {
    let set: Vec<String> = lites.iter().map(|l| format!("\"{l}\"")).collect();
    let body = format!(
        r#"{{"subscriptionSet":[{{"action":"{action}","clientId":"{client}","group":"{G}","topic":"{P}","liteTopicSet":[{}],"version":1}}]}}"#,
        set.join(",")
    );
    let mut cmd = req(RequestCode::LITE_SUBSCRIPTION_CTL, &[]);
    cmd.body = bytes::Bytes::from(body).into();
    c.call(&cmd)
}

fn pop_lite(
    c: &mut RawClient,
    client: &str,
    group: &str,
    topic: &str,
    poll: i64,
) -> RemotingCommand {
    let now = rmqd::broker::now_millis().to_string();
    let poll = poll.to_string();
    c.call_past_requests(&req(
        RequestCode::POP_LITE_MESSAGE,
        &[
            ("clientId", client),
            ("consumerGroup", group),
            ("topic", topic),
            ("maxMsgNum", "32"),
            ("invisibleTime", "3000"),
            ("pollTime", &poll),
            ("bornTime", &now),
        ],
    ))
}

fn prop<'a>(props: &'a str, key: &str) -> Option<&'a str> {
    props
        .split('\u{2}')
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('\u{1}'))
}

/// The lite queue offset of each popped message.
fn lite_offsets(r: &RemotingCommand) -> Vec<i64> {
    records(&r.body.to_bytes())
        .iter()
        .map(|rec| {
            prop(&rec.properties, "INNER_MULTI_QUEUE_OFFSET")
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect()
}

fn ack(c: &mut RawClient, r: &RemotingCommand, offset: i64) -> i32 {
    let extra = format!(
        "0 {} {} 999 0 broker-t 0 {offset}",
        r.ext("popTime").unwrap(),
        r.ext("invisibleTime").unwrap()
    );
    let o = offset.to_string();
    c.call(&req(
        RequestCode::ACK_MESSAGE,
        &[
            ("consumerGroup", G),
            ("topic", P),
            ("queueId", "0"),
            ("extraInfo", &extra),
            ("offset", &o),
            ("liteTopic", "l1"),
        ],
    ))
    .code
}

fn committed(c: &mut RawClient) -> Option<String> {
    let r = c.call(&req(
        RequestCode::QUERY_CONSUMER_OFFSET,
        &[
            ("consumerGroup", G),
            ("topic", &format!("%LMQ%${P}$l1")),
            ("queueId", "0"),
        ],
    ));
    r.ext("offset").map(str::to_string)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lite_topic_is_popped_fifo_by_its_subscriber() {
    let dir = tempfile::tempdir().unwrap();
    let broker = support::start_broker(dir.path(), LMQ_ON).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        setup(&mut c);
        for i in 0..3 {
            send(&mut c, "l1", &format!("m{i}"));
        }
        send(&mut c, "other", "not subscribed");
        wait_dispatched(&mut c, "l1", 3);
        wait_dispatched(&mut c, "other", 1);
        // Java's refusals
        let r = ctl(&mut c, "PARTIAL_ADD", "c1", &[]);
        assert_eq!(r.code, 0);
        let mut empty = req(RequestCode::LITE_SUBSCRIPTION_CTL, &[]);
        assert_eq!(c.call(&empty).code, ResponseCode::ILLEGAL_OPERATION.code());
        empty.body = bytes::Bytes::from_static(br#"{"subscriptionSet":[]}"#).into();
        assert_eq!(c.call(&empty).code, ResponseCode::ILLEGAL_OPERATION.code());
        let r = pop_lite(&mut c, "c1", "LITE_UNBOUND", P, 0);
        assert_eq!(
            r.code,
            ResponseCode::INVALID_PARAMETER.code(),
            "{:?}",
            r.remark
        );
        let r = pop_lite(&mut c, "c1", G, "TBW102", 0);
        assert_eq!(
            r.code,
            ResponseCode::INVALID_PARAMETER.code(),
            "{:?}",
            r.remark
        );
        let r = pop_lite(&mut c, "c1", G, "NO_SUCH_TOPIC", 0);
        assert_eq!(r.code, ResponseCode::TOPIC_NOT_EXIST.code());

        // subscribing to a lite topic with messages tells the client (an event)
        let r = ctl(&mut c, "PARTIAL_ADD", "c1", &["l1"]);
        assert_eq!(r.code, 0, "{:?}", r.remark);
        let deadline = Instant::now() + Duration::from_secs(5);
        let r = loop {
            let r = pop_lite(&mut c, "c1", G, P, 0);
            if r.code == 0 || Instant::now() > deadline {
                break r;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert_eq!(r.code, 0, "{:?}", r.remark);
        assert_eq!(r.remark.as_deref(), Some("FOUND"));
        assert_eq!(r.ext("reviveQid"), Some("999"));
        assert_eq!(r.ext("orderCountInfo"), Some("0;0;0"));
        assert_eq!(r.ext("startOffsetInfo"), None);
        assert_eq!(lite_offsets(&r), [0, 1, 2]);
        let bodies: Vec<Vec<u8>> = records(&r.body.to_bytes())
            .into_iter()
            .map(|x| x.body)
            .collect();
        assert_eq!(bodies, [b"m0".to_vec(), b"m1".to_vec(), b"m2".to_vec()]);
        // while they are out, nothing more
        let again = pop_lite(&mut c, "c1", G, P, 0);
        assert_eq!(again.code, ResponseCode::POLLING_TIMEOUT.code());

        // ack the first; the other two come back after the invisible time, counted once
        assert_eq!(ack(&mut c, &r, 0), 0);
        assert_eq!(committed(&mut c).as_deref(), Some("1"));
        // the end of the block offers the queue again (Java notifyLockIsFree): no send needed
        let deadline = Instant::now() + Duration::from_secs(8);
        let back = loop {
            let b = pop_lite(&mut c, "c1", G, P, 0);
            if b.code == 0 || Instant::now() > deadline {
                break b;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert_eq!(back.code, 0, "{:?}", back.remark);
        assert_eq!(lite_offsets(&back), [1, 2]);
        assert_eq!(back.ext("orderCountInfo"), Some("0 qo0%1 1;0 qo0%2 1"));
        for o in [1, 2] {
            assert_eq!(ack(&mut c, &back, o), 0);
        }
        assert_eq!(committed(&mut c).as_deref(), Some("3"));
        send(&mut c, "l1", "m3");
        let deadline = Instant::now() + Duration::from_secs(5);
        let next = loop {
            let b = pop_lite(&mut c, "c1", G, P, 0);
            if b.code == 0 || Instant::now() > deadline {
                break b;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert_eq!(lite_offsets(&next), [3]);
        assert_eq!(ack(&mut c, &next, 3), 0);
        assert_eq!(committed(&mut c).as_deref(), Some("4"));
        // an ack naming another queue than 0 is refused
        let extra = format!("0 {} 3000 999 0 broker-t 0 3", next.ext("popTime").unwrap());
        let bad = c.call(&req(
            RequestCode::ACK_MESSAGE,
            &[
                ("consumerGroup", G),
                ("topic", P),
                ("queueId", "1"),
                ("extraInfo", &extra),
                ("offset", "3"),
                ("liteTopic", "l1"),
            ],
        ));
        assert_eq!(bad.code, ResponseCode::INVALID_PARAMETER.code());

        // a held POP_LITE is answered when its lite topic gets a message
        let mut waiter = RawClient::connect(addr);
        let t0 = Instant::now();
        let held = std::thread::spawn(move || pop_lite(&mut waiter, "c1", G, P, 10_000));
        std::thread::sleep(Duration::from_millis(500));
        let sent_at = rmqd::broker::now_millis();
        send(&mut c, "l1", "late");
        let r = held.join().unwrap();
        assert_eq!(r.code, 0, "{:?}", r.remark);
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        assert_eq!(lite_offsets(&r), [4]);
        // its popTime is the pop's own (taken when the send woke it), so its ack commits
        assert!(r.ext("popTime").unwrap().parse::<i64>().unwrap() >= sent_at);
        assert_eq!(ack(&mut c, &r, 4), 0);
        assert_eq!(committed(&mut c).as_deref(), Some("5"));

        // the admin codes mqadmin's lite subcommands send
        let json = |r: &RemotingCommand| -> serde_json::Value {
            assert_eq!(r.code, 0, "{:?}", r.remark);
            serde_json::from_slice(&r.body.to_bytes()).unwrap()
        };
        let info = json(&c.call(&req(
            RequestCode::GET_LITE_TOPIC_INFO,
            &[("parentTopic", P), ("liteTopic", "l1")],
        )));
        assert_eq!(info["topicOffset"]["maxOffset"], 5);
        assert_eq!(info["subscriber"][0]["clientId"], "c1");
        assert_eq!(info["subscriber"][0]["group"], G);
        let parent = json(&c.call(&req(RequestCode::GET_PARENT_TOPIC_INFO, &[("topic", P)])));
        assert_eq!(parent["ttl"], 1440);
        assert_eq!(parent["liteTopicCount"], 2, "l1 and other");
        assert_eq!(parent["groups"][0], G);
        let not_lite = c.call(&req(
            RequestCode::GET_PARENT_TOPIC_INFO,
            &[("topic", "TBW102")],
        ));
        assert_eq!(not_lite.code, ResponseCode::INVALID_PARAMETER.code());
        assert_eq!(
            not_lite.remark.as_deref(),
            Some("Topic [TBW102] type not match.")
        );
        let client = json(&c.call(&req(
            RequestCode::GET_LITE_CLIENT_INFO,
            &[
                ("parentTopic", P),
                ("group", G),
                ("clientId", "c1"),
                ("maxCount", "10"),
            ],
        )));
        assert_eq!(client["liteTopicCount"], 1);
        assert_eq!(client["liteTopicSet"][0], format!("%LMQ%${P}$l1"));
        let unknown = json(&c.call(&req(
            RequestCode::GET_LITE_CLIENT_INFO,
            &[("parentTopic", P), ("group", G), ("clientId", "nobody")],
        )));
        assert_eq!(unknown["liteTopicCount"], -1);
        let group = json(&c.call(&req(
            RequestCode::GET_LITE_GROUP_INFO,
            &[("group", G), ("liteTopic", "l1"), ("topK", "10")],
        )));
        assert_eq!(group["totalLagCount"], 0, "\"late\" is acknowledged");
        assert_eq!(group["liteTopicOffsetWrapper"]["brokerOffset"], 5);
        let broker = json(&c.call(&req(RequestCode::GET_BROKER_LITE_INFO, &[])));
        assert_eq!(broker["currentLmqNum"], 2);
        assert_eq!(broker["topicMeta"][P], 1440);
        let t = c.call(&req(
            RequestCode::TRIGGER_LITE_DISPATCH,
            &[("group", G), ("clientId", "c1")],
        ));
        assert_eq!(t.code, 0);

        // deleting the LITE parent deletes its lite queues and the bound group's offsets
        let del = c.call(&req(RequestCode::DELETE_TOPIC_IN_BROKER, &[("topic", P)]));
        assert_eq!(del.code, 0, "{:?}", del.remark);
        let lmq = format!("%LMQ%${P}$l1");
        let max = c.call(&req(
            RequestCode::GET_MAX_OFFSET,
            &[("topic", &lmq), ("queueId", "0")],
        ));
        assert_eq!(max.ext("offset"), Some("0"));
        let q = c.call(&req(
            RequestCode::QUERY_CONSUMER_OFFSET,
            &[("consumerGroup", G), ("topic", &lmq), ("queueId", "0")],
        ));
        assert_eq!(q.code, ResponseCode::QUERY_NOT_FOUND.code());
    })
    .await
    .unwrap();
    broker.shutdown().await;
}
