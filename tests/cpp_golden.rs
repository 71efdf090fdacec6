//! Frames captured from the C++ SDK (rocketmq-client-cpp through the PyPI `rocketmq` 0.4.4 wheel,
//! `tests/golden/cpp/`, see `compat-tests/cpp/golden/README.md`) replayed to a broker: numbers
//! where Java sends strings, ordinal enums, a string `subVersion`, missing fields, empty group
//! names — each is served as the Java broker serves it.

mod support;

use rmqd::remoting::body::heartbeat::{ConsumeFromWhere, ConsumeType, HeartbeatData, MessageModel};
use rmqd::remoting::{LanguageCode, RemotingCommand, RequestCode};
use support::RawClient;

fn frame(name: &str) -> RemotingCommand {
    let cmd = support::golden_frame(&format!("cpp/{name}.bin"));
    assert_eq!(cmd.language, LanguageCode::Cpp, "{name}");
    cmd
}

#[test]
fn cpp_heartbeats_decode_with_ordinal_enums_and_string_sub_version() {
    let hb = HeartbeatData::decode(&frame("cpp-heart-beat-push").body.to_bytes()).unwrap();
    let c = &hb.consumer_data_set[0];
    assert_eq!(
        (c.consume_type, c.message_model, c.consume_from_where),
        (
            ConsumeType::ConsumePassively,
            MessageModel::Clustering,
            ConsumeFromWhere::ConsumeFromLastOffset
        )
    );
    assert!(c.subscription_data_set.iter().all(|s| s.sub_version > 0));
    let b = HeartbeatData::decode(&frame("cpp-heart-beat-broadcast").body.to_bytes()).unwrap();
    assert_eq!(
        b.consumer_data_set[0].message_model,
        MessageModel::Broadcasting
    );
    let p = HeartbeatData::decode(&frame("cpp-heart-beat-producer").body.to_bytes()).unwrap();
    assert!(p.consumer_data_set.is_empty() && !p.producer_data_set.is_empty());
}

/// Every captured request, in the order a C++ application sends them, answered as Java answers
/// it: never SYSTEM_ERROR (1) or REQUEST_CODE_NOT_SUPPORTED (3), never a closed connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cpp_frames_replayed_to_the_broker_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let broker = support::start_broker(dir.path(), &[]).await;
    let addr = broker.local_addr();
    let answers = tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        // the captures come from several scenarios: create the topics the pulls read and point
        // the group list and the send-back at what this replay registered and stored
        for topic in ["TCPP_07_gold", "%RETRY%GCPP_09_gold", "TCPP_11_gold"] {
            support::create_topic(&mut c, topic, 8);
        }
        let push_group = HeartbeatData::decode(&frame("cpp-heart-beat-push").body.to_bytes())
            .unwrap()
            .consumer_data_set[0]
            .group_name
            .clone();
        let mut answers = Vec::new();
        for name in [
            "cpp-heart-beat-producer",
            "cpp-send-message",
            "cpp-send-message-compressed",
            "cpp-send-message-delay",
            "cpp-send-message-batch",
            "cpp-send-message-oneway",
            "cpp-heart-beat-push",
            "cpp-heart-beat-orderly",
            "cpp-heart-beat-broadcast",
            "cpp-heart-beat-producer-consumer",
            "cpp-get-consumer-list-by-group",
            "cpp-get-max-offset",
            "cpp-query-consumer-offset",
            "cpp-lock-batch-mq",
            "cpp-pull-message-push",
            "cpp-pull-message-retry",
            "cpp-pull-message-pullconsumer",
            "cpp-update-consumer-offset",
            "cpp-consumer-send-msg-back",
            "cpp-unlock-batch-mq",
            "cpp-unregister-client-consumer",
            "cpp-unregister-client-producer",
        ] {
            let mut cmd = frame(name);
            // a held pull would wait for its suspend timeout
            if cmd.code == RequestCode::PULL_MESSAGE.code() {
                cmd.ext_mut().insert("suspendTimeoutMillis", "0");
            }
            if cmd.code == RequestCode::GET_CONSUMER_LIST_BY_GROUP.code() {
                cmd.ext_mut().insert("consumerGroup", push_group.as_str());
            }
            if cmd.code == RequestCode::CONSUMER_SEND_MSG_BACK.code() {
                cmd.ext_mut().insert("offset", "0");
            }
            let r = c.call_past_requests(&cmd);
            answers.push((name, r.code, r.remark.clone()));
        }
        answers
    })
    .await
    .unwrap();
    for (name, code, remark) in &answers {
        println!("{name}: {code} {remark:?}");
    }
    for (name, code, remark) in &answers {
        // a pull may find nothing in its queue (PULL_NOT_FOUND 19, PULL_OFFSET_MOVED 21)
        let expected: &[i32] = if name.starts_with("cpp-pull-message") {
            &[0, 19, 20, 21]
        } else {
            &[0]
        };
        assert!(expected.contains(code), "{name}: {code} {remark:?}");
    }
    broker.shutdown().await;
}
