//! QUERY_ASSIGNMENT in a cluster of two broker groups (two rmqd processes, one NameServer):
//! the assignment covers every broker that has the topic, as Java's takes the topic's route from
//! the NameServer — a POP consumer assigned by one broker pops from both.

mod support;

use std::time::{Duration, Instant};

use rmqd::remoting::RequestCode;
use support::process::RmqdProcess;
use support::{create_topic, request, RawClient};

const TOPIC: &str = "POP_CLUSTER_T";
const GROUP: &str = "POP_CLUSTER_G";

#[test]
fn assignment_covers_every_broker_of_the_topic() {
    let work = tempfile::tempdir().unwrap();
    let (wa, wb) = (work.path().join("a"), work.path().join("b"));
    std::fs::create_dir_all(&wa).unwrap();
    std::fs::create_dir_all(&wb).unwrap();
    let a = RmqdProcess::start(&wa, &wa.join("store"), "");
    let b = RmqdProcess::start(
        &wb,
        &wb.join("store"),
        &format!(
            "brokerName=fault-b\nrmqdEmbeddedNamesrv=false\nnamesrvAddr={}",
            a.namesrv
        ),
    );
    let mut ca = RawClient::connect(a.addr);
    let mut cb = RawClient::connect(b.addr);
    create_topic(&mut ca, TOPIC, 2);
    create_topic(&mut cb, TOPIC, 2);
    let hb = format!(
        r#"{{"clientID":"127.0.0.1@cl","consumerDataSet":[{{"consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","consumeType":"CONSUME_PASSIVELY","groupName":"{GROUP}","messageModel":"CLUSTERING","subscriptionDataSet":[],"unitMode":false}}],"producerDataSet":[]}}"#
    );
    let mut h = request(RequestCode::HEART_BEAT, &[]);
    h.body = bytes::Bytes::from(hb).into();
    assert_eq!(ca.call_past_requests(&h).code, 0);
    let mut set = request(RequestCode::SET_MESSAGE_REQUEST_MODE, &[]);
    set.body = bytes::Bytes::from(format!(
        r#"{{"consumerGroup":"{GROUP}","mode":"POP","popShareQueueNum":0,"topic":"{TOPIC}"}}"#
    ))
    .into();
    assert_eq!(ca.call_past_requests(&set).code, 0);
    let mut q = request(RequestCode::QUERY_ASSIGNMENT, &[]);
    q.body = bytes::Bytes::from(format!(
        r#"{{"clientId":"127.0.0.1@cl","consumerGroup":"{GROUP}","messageModel":"CLUSTERING","strategyName":"AVG","topic":"{TOPIC}"}}"#
    ))
    .into();
    // the route is cached 30 s: the brokers register their new topic at once, so the first
    // query after both did sees both (a query before would keep a one-broker route for 30 s)
    let deadline = Instant::now() + Duration::from_secs(10);
    let both = loop {
        let mut r = request(RequestCode::GET_ROUTEINFO_BY_TOPIC, &[("topic", TOPIC)]);
        r.serialize_type = rmqd::remoting::SerializeType::Json;
        let route = RawClient::connect(a.namesrv).call(&r);
        let body = String::from_utf8_lossy(&route.body.to_bytes()).to_string();
        if route.code == 0 && body.contains("fault-b") && body.contains("\"fault\"") {
            break true;
        }
        if Instant::now() > deadline {
            break false;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(both, "both brokers registered {TOPIC}");
    let r = ca.call_past_requests(&q);
    assert_eq!(r.code, 0);
    let body = String::from_utf8(r.body.to_bytes().to_vec()).unwrap();
    assert!(
        body.contains(r#""brokerName":"fault","queueId":-1"#),
        "{body}"
    );
    assert!(
        body.contains(r#""brokerName":"fault-b","queueId":-1"#),
        "{body}"
    );
    drop(b);
    drop(a);
}
