//! LMQ over raw Remoting frames (issue #22): a message sent once to its parent topic with
//! `INNER_MULTI_DISPATCH` is read from every `%LMQ%` queue it names (pull, long polling, POP),
//! the offset codes answer for those queues, and offsets live in `lmqConsumerOffset.json` as
//! the Java broker keeps them under `enableLmq`. The real Java client's scenarios (and the same
//! on the Java broker) are in the compat suite `lmq`.

mod support;

use std::time::{Duration, Instant};

use rmqd::remoting::{RemotingCommand, RequestCode, ResponseCode};
use rmqd::store::config_files::{self, ConsumerOffsetWrapper};
use support::{create_topic, records, request as req, RawClient};

const PARENT: &str = "LMQ_PARENT";
const LMQ_ON: &[(&str, &str)] = &[("enableLmq", "true"), ("enableMultiDispatch", "true")];

fn send(c: &mut RawClient, body: &str, dispatch: &str) -> RemotingCommand {
    let props =
        format!("TAGS\u{1}A\u{2}WAIT\u{1}true\u{2}INNER_MULTI_DISPATCH\u{1}{dispatch}\u{2}");
    let mut cmd = req(
        RequestCode::SEND_MESSAGE_V2,
        &[
            ("a", "LMQ_PG"),
            ("b", PARENT),
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
    r
}

fn pull(
    c: &mut RawClient,
    group: &str,
    lmq: &str,
    queue: i32,
    offset: i64,
    suspend: u64,
) -> RemotingCommand {
    let (q, o, s) = (queue.to_string(), offset.to_string(), suspend.to_string());
    let sys_flag = if suspend > 0 { "6" } else { "4" };
    c.call_past_requests(&req(
        RequestCode::PULL_MESSAGE,
        &[
            ("consumerGroup", group),
            ("topic", lmq),
            ("queueId", &q),
            ("queueOffset", &o),
            ("maxMsgNums", "32"),
            ("sysFlag", sys_flag),
            ("commitOffset", "0"),
            ("suspendTimeoutMillis", &s),
            ("subscription", "*"),
            ("subVersion", "0"),
            ("expressionType", "TAG"),
        ],
    ))
}

fn prop<'a>(props: &'a str, key: &str) -> Option<&'a str> {
    props
        .split('\u{2}')
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('\u{1}'))
}

fn offset_call(c: &mut RawClient, code: RequestCode, pairs: &[(&str, &str)]) -> Option<String> {
    let r = c.call(&req(code, pairs));
    assert_eq!(r.code, 0, "{code:?}: {:?}", r.remark);
    r.ext("offset").map(str::to_string)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lmq_queues_are_read_and_their_offsets_kept_as_java_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let broker = support::start_broker(dir.path(), LMQ_ON).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, PARENT, 2);
        for i in 0..5 {
            let d = if i < 3 { "%LMQ%a,%LMQ%b" } else { "%LMQ%a" };
            send(&mut c, &format!("m{i}"), d);
        }
        // every message of %LMQ%a from its queue 0, as the parent's stored records (a put is
        // acknowledged before its dispatch, as in Java)
        let q = [("topic", "%LMQ%a"), ("queueId", "0")];
        let deadline = Instant::now() + Duration::from_secs(5);
        while offset_call(&mut c, RequestCode::GET_MAX_OFFSET, &q).as_deref() != Some("5") {
            assert!(Instant::now() < deadline, "LMQ not dispatched");
            std::thread::sleep(Duration::from_millis(20));
        }
        let r = pull(&mut c, "CG", "%LMQ%a", 0, 0, 0);
        assert_eq!(r.code, 0, "{:?}", r.remark);
        assert_eq!(r.ext("nextBeginOffset"), Some("5"));
        let recs = records(&r.body.to_bytes());
        let bodies: Vec<String> = recs
            .iter()
            .map(|r| String::from_utf8_lossy(&r.body).into_owned())
            .collect();
        assert_eq!(bodies, ["m0", "m1", "m2", "m3", "m4"]);
        for (i, rec) in recs.iter().enumerate() {
            assert_eq!(rec.topic, PARENT, "the record is the parent's");
            let want = if i < 3 {
                format!("{i},{i}")
            } else {
                i.to_string()
            };
            assert_eq!(
                prop(&rec.properties, "INNER_MULTI_QUEUE_OFFSET"),
                Some(want.as_str())
            );
            assert_eq!(prop(&rec.properties, "WAIT"), Some("true"));
        }
        let b = pull(&mut c, "CG", "%LMQ%b", 0, 0, 0);
        assert_eq!(records(&b.body.to_bytes()).len(), 3);
        // an LMQ has one queue
        let bad = pull(&mut c, "CG", "%LMQ%a", 1, 0, 0);
        assert_eq!(
            bad.code,
            ResponseCode::INVALID_PARAMETER.code(),
            "{:?}",
            bad.remark
        );

        assert_eq!(
            offset_call(&mut c, RequestCode::GET_MAX_OFFSET, &q).as_deref(),
            Some("5")
        );
        assert_eq!(
            offset_call(&mut c, RequestCode::GET_MIN_OFFSET, &q).as_deref(),
            Some("0")
        );
        // an LMQ group's offset ignores the queue id; a normal group's is per queue
        let commit = |c: &mut RawClient, g: &str, q: &str, o: &str| {
            let r = c.call(&req(
                RequestCode::UPDATE_CONSUMER_OFFSET,
                &[
                    ("consumerGroup", g),
                    ("topic", "%LMQ%a"),
                    ("queueId", q),
                    ("commitOffset", o),
                ],
            ));
            assert_eq!(r.code, 0, "{:?}", r.remark);
        };
        commit(&mut c, "%LMQ%g", "0", "3");
        commit(&mut c, "CG", "0", "2");
        let query = |c: &mut RawClient, g: &str, q: &str| {
            offset_call(
                c,
                RequestCode::QUERY_CONSUMER_OFFSET,
                &[("consumerGroup", g), ("topic", "%LMQ%a"), ("queueId", q)],
            )
        };
        assert_eq!(query(&mut c, "%LMQ%g", "0").as_deref(), Some("3"));
        assert_eq!(query(&mut c, "%LMQ%g", "7").as_deref(), Some("3"));
        assert_eq!(query(&mut c, "CG", "0").as_deref(), Some("2"));

        // a held pull of an LMQ is woken by a send to its parent
        let mut waiter = RawClient::connect(addr);
        let t0 = Instant::now();
        let held = std::thread::spawn(move || pull(&mut waiter, "CG", "%LMQ%c", 0, 0, 10_000));
        std::thread::sleep(Duration::from_millis(500));
        send(&mut c, "late", "%LMQ%c");
        let r = held.join().unwrap();
        assert_eq!(r.code, 0, "{:?}", r.remark);
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        assert_eq!(records(&r.body.to_bytes())[0].body, b"late");
    })
    .await
    .unwrap();
    broker.shutdown().await;

    // Java's LmqConsumerOffsetManager file; no consumerOffset.json, no LMQ in topics.json
    let config = dir.path().join("config");
    let text = std::fs::read_to_string(config.join("lmqConsumerOffset.json")).unwrap();
    let w: ConsumerOffsetWrapper = config_files::from_fastjson(&text).unwrap();
    assert_eq!(w.lmq_offset_table.unwrap()["%LMQ%a@%LMQ%g"], 3, "{text}");
    assert_eq!(w.offset_table["%LMQ%a@CG"][&0], 2, "{text}");
    assert!(!config.join("consumerOffset.json").exists());
    let topics = std::fs::read_to_string(config.join("topics.json")).unwrap();
    assert!(!topics.contains("%LMQ%"), "{topics}");

    // after a restart the LMQs continue and the offsets are back
    let broker = support::start_broker(dir.path(), LMQ_ON).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        send(&mut c, "m5", "%LMQ%a,%LMQ%b");
        let r = pull(&mut c, "CG", "%LMQ%b", 0, 3, 0);
        let r = if r.code == ResponseCode::PULL_NOT_FOUND.code() {
            std::thread::sleep(Duration::from_millis(200));
            pull(&mut c, "CG", "%LMQ%b", 0, 3, 0)
        } else {
            r
        };
        let recs = records(&r.body.to_bytes());
        assert_eq!(recs.len(), 1);
        assert_eq!(
            prop(&recs[0].properties, "INNER_MULTI_QUEUE_OFFSET"),
            Some("5,3")
        );
        let o = offset_call(
            &mut c,
            RequestCode::QUERY_CONSUMER_OFFSET,
            &[
                ("consumerGroup", "%LMQ%g"),
                ("topic", "%LMQ%a"),
                ("queueId", "0"),
            ],
        );
        assert_eq!(o.as_deref(), Some("3"));
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_lmq_pops_like_a_topic_of_one_queue() {
    let dir = tempfile::tempdir().unwrap();
    let broker = support::start_broker(dir.path(), LMQ_ON).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, PARENT, 2);
        for i in 0..4 {
            send(&mut c, &format!("p{i}"), "%LMQ%pop");
        }
        // dispatch into the LMQ follows the acknowledgement (in Java too)
        wait_max(&mut c, "%LMQ%pop", "4");
        let deadline = Instant::now() + Duration::from_secs(5);
        let r = loop {
            let now = rmqd::broker::now_millis().to_string();
            let r = c.call(&req(
                RequestCode::POP_MESSAGE,
                &[
                    ("consumerGroup", "LMQ_POP_G"),
                    ("topic", "%LMQ%pop"),
                    ("queueId", "-1"),
                    ("maxMsgNums", "32"),
                    ("invisibleTime", "60000"),
                    ("pollTime", "0"),
                    ("bornTime", &now),
                    ("initMode", "0"),
                    ("expType", "TAG"),
                    ("exp", "*"),
                    ("order", "false"),
                ],
            ));
            if r.code == 0 || Instant::now() > deadline {
                break r;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert_eq!(r.code, 0, "{:?}", r.remark);
        // the offsets are the LMQ's, keyed as for any topic ("<retry mark> <queue id>"); the
        // client builds receipts from INNER_MULTI_QUEUE_OFFSET
        assert_eq!(r.ext("startOffsetInfo"), Some("0 0 0"));
        assert_eq!(r.ext("msgOffsetInfo"), Some("0 0 0,1,2,3"));
        let recs = records(&r.body.to_bytes());
        assert_eq!(recs.len(), 4);
        assert_eq!(recs[3].body, b"p3");
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

fn send_props(c: &mut RawClient, body: &str, props: &str) -> RemotingCommand {
    let mut cmd = req(
        RequestCode::SEND_MESSAGE_V2,
        &[
            ("a", "LMQ_PG"),
            ("b", PARENT),
            ("c", "TBW102"),
            ("d", "4"),
            ("e", "-1"),
            ("f", "0"),
            ("g", "1700000000000"),
            ("h", "0"),
            ("i", props),
        ],
    );
    cmd.body = bytes::Bytes::copy_from_slice(body.as_bytes()).into();
    c.call(&cmd)
}

fn wait_max(c: &mut RawClient, lmq: &str, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    let q = [("topic", lmq), ("queueId", "0")];
    while offset_call(c, RequestCode::GET_MAX_OFFSET, &q).as_deref() != Some(want) {
        assert!(Instant::now() < deadline, "{lmq} never reached {want}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lite_topic_send_lands_in_its_lmq_within_the_quota() {
    let dir = tempfile::tempdir().unwrap();
    let keys = [
        ("enableLmq", "true"),
        ("enableMultiDispatch", "true"),
        ("enableLmqQuota", "true"),
        ("maxLmqConsumeQueueNum", "2"),
    ];
    let broker = support::start_broker(dir.path(), &keys).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, PARENT, 2);
        // Java 5.5: __LITE_TOPIC names the LMQ %LMQ%$<topic>$<lite>
        for lite in ["l1", "l2"] {
            let r = send_props(&mut c, lite, &format!("__LITE_TOPIC\u{1}{lite}\u{2}"));
            assert_eq!(r.code, 0, "{:?}", r.remark);
            wait_max(&mut c, &format!("%LMQ%${PARENT}${lite}"), "1");
        }
        let r = pull(&mut c, "CG", &format!("%LMQ%${PARENT}$l1"), 0, 0, 0);
        let recs = records(&r.body.to_bytes());
        assert_eq!(recs[0].body, b"l1");
        assert_eq!(
            prop(&recs[0].properties, "INNER_MULTI_DISPATCH"),
            Some(format!("%LMQ%${PARENT}$l1").as_str())
        );
        // the quota is full: a new LMQ is refused, an existing one still takes messages
        let r = send_props(&mut c, "l3", "__LITE_TOPIC\u{1}l3\u{2}");
        assert_eq!(r.code, ResponseCode::LMQ_QUOTA_EXCEEDED.code());
        assert_eq!(
            r.remark.as_deref(),
            Some("[LMQ_CONSUME_QUEUE_NUM_EXCEEDED]lmq consume queue num exceeded.")
        );
        let r = send_props(&mut c, "l1 again", "__LITE_TOPIC\u{1}l1\u{2}");
        assert_eq!(r.code, 0, "{:?}", r.remark);
        wait_max(&mut c, &format!("%LMQ%${PARENT}$l1"), "2");
        // a plain send is not counted against it
        let r = send_props(&mut c, "plain", "TAGS\u{1}A\u{2}");
        assert_eq!(r.code, 0, "{:?}", r.remark);
    })
    .await
    .unwrap();
    broker.shutdown().await;
}
