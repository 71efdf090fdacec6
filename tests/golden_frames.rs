//! Frames captured from the real Java client (JSON and ROCKETMQ headers) and the real Go client
//! (`tests/golden/`, see its README) decode into the typed headers and bodies with the values the
//! clients sent; the JSON and binary captures of one Java request decode to the same command.

mod support;

use rmqd::remoting::body::heartbeat::HeartbeatData;
use rmqd::remoting::header::pull_message::PullMessageRequestHeader;
use rmqd::remoting::header::send_message::SendMessageRequestHeader;
use rmqd::remoting::header::CommandHeader;
use rmqd::remoting::{LanguageCode, RemotingCommand, SerializeType};

fn frame(name: &str) -> RemotingCommand {
    support::golden_frame(name)
}

#[test]
fn java_send_v2_both_serializations() {
    for (name, st) in [
        ("java-json-310-0.bin", SerializeType::Json),
        ("java-rocketmq-310-0.bin", SerializeType::RocketMq),
    ] {
        let cmd = frame(name);
        assert_eq!(cmd.serialize_type, st);
        assert_eq!(
            (cmd.code, cmd.version, cmd.language.clone()),
            (310, 479, LanguageCode::Java),
            "{name}"
        );
        let ext = cmd.ext_fields.clone().unwrap();
        let h = SendMessageRequestHeader::read_for_code(cmd.code, &ext).unwrap();
        assert_eq!(h.default_topic, "TBW102", "{name}");
        let props = h.properties.clone().unwrap();
        assert!(
            props.contains("color\u{1}blue") && props.contains("TAGS\u{1}TagA"),
            "{name}: {props:?}"
        );
        assert_eq!(&cmd.body.to_bytes()[..], b"golden body 0", "{name}");
    }
}

#[test]
fn java_json_and_binary_captures_agree() {
    for code in [11, 14, 15, 17, 34, 35, 38, 105, 106, 310] {
        let j = frame(&format!("java-json-{code}-0.bin"));
        let r = frame(&format!("java-rocketmq-{code}-0.bin"));
        assert_eq!(
            (j.code, j.flag, j.version),
            (r.code, r.flag, r.version),
            "code {code}"
        );
        let keys = |c: &RemotingCommand| {
            // The binary codec carries an empty value as absent (Java's rule), so compare the rest.
            let mut k: Vec<String> = c
                .ext_fields
                .iter()
                .flat_map(|e| {
                    e.iter()
                        .filter(|(_, v)| !v.is_empty())
                        .map(|(k, _)| k.to_string())
                })
                .collect();
            k.sort();
            k
        };
        assert_eq!(
            keys(&j),
            keys(&r),
            "code {code}: same header keys in both codecs"
        );
    }
}

#[test]
fn java_pull_and_oneway_offset_commit() {
    let pull = frame("java-json-11-0.bin");
    let h = PullMessageRequestHeader::read_from(pull.ext_fields.as_ref().unwrap()).unwrap();
    assert_eq!(h.suspend_timeout_millis, 15_000);
    // A push consumer does not post its subscription (sysFlag 2 = suspend only): the broker must
    // use the one its heartbeat registered.
    assert_eq!((h.sys_flag, h.subscription.as_deref()), (2, None));
    assert_eq!(h.expression_type.as_deref(), Some("TAG"));
    let commit = frame("java-json-15-0.bin");
    assert!(
        commit.is_oneway(),
        "UPDATE_CONSUMER_OFFSET is sent oneway by the Java client"
    );
}

#[test]
fn java_and_go_heartbeats_parse() {
    for name in [
        "java-json-34-0.bin",
        "java-rocketmq-34-0.bin",
        "go-heartbeat-1.bin",
    ] {
        let cmd = frame(name);
        let hb =
            HeartbeatData::decode(&cmd.body.to_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!hb.client_id.is_empty(), "{name}");
    }
    let go = HeartbeatData::decode(&frame("go-heartbeat-1.bin").body.to_bytes()).unwrap();
    assert!(go
        .consumer_data_set
        .iter()
        .any(|c| !c.subscription_data_set.is_empty()));
}

#[test]
fn go_frames_use_long_send_keys_and_version_317() {
    let send = frame("go-send-message-1.bin");
    assert_eq!(
        (send.code, send.version, send.language.clone()),
        (10, 317, LanguageCode::Go)
    );
    let h = SendMessageRequestHeader::read_for_code(send.code, send.ext_fields.as_ref().unwrap())
        .unwrap();
    assert_eq!(h.default_topic, "TBW102");
    assert_eq!(h.batch, Some(false));
    assert_eq!(&send.body.to_bytes()[..], b"go-body-0");
    let batch = frame("go-send-batch-message-1.bin");
    let hb =
        SendMessageRequestHeader::read_for_code(batch.code, batch.ext_fields.as_ref().unwrap())
            .unwrap();
    assert!(hb.is_batch());
    let body = batch.body.to_bytes();
    let inner = rmqd::common::batch::decode_batch(&body).unwrap();
    assert_eq!(inner.len(), 32);
    let route = frame("go-get-route-1.bin");
    assert_eq!(route.code, 105);
    assert!(route.ext("topic").is_some());
}
