//! Typed headers read from whole frames shaped like the ones the Java and Go clients send, and
//! the module boundaries of `remoting` and `common`.

use bytes::{BufMut, BytesMut};
use rmqd::remoting::header::*;
use rmqd::remoting::{ExtFields, FrameCodec, RemotingCommand};

/// Wraps a JSON header text into a frame: `[len][0<<24|headerLen][header][body]`.
fn json_frame(header: &str, body: &[u8]) -> BytesMut {
    let mut buf = BytesMut::new();
    buf.put_i32((4 + header.len() + body.len()) as i32);
    buf.put_i32(header.len() as i32);
    buf.put_slice(header.as_bytes());
    buf.put_slice(body);
    buf
}

fn decode(header: &str) -> RemotingCommand {
    let mut buf = json_frame(header, b"");
    FrameCodec::default()
        .decode_frame(&mut buf)
        .unwrap()
        .unwrap()
}

fn ext(cmd: &RemotingCommand) -> &ExtFields {
    cmd.ext_fields.as_ref().unwrap()
}

#[test]
fn java_push_consumer_pull_request() {
    let cmd = decode(
        r#"{"code":11,"extFields":{"bname":"broker-a","commitOffset":"0","consumerGroup":"G1","expressionType":"TAG","maxMsgBytes":"262144","maxMsgNums":"32","queueId":"2","queueOffset":"118","subVersion":"1700000000000","suspendTimeoutMillis":"15000","sysFlag":"2","topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":7,"serializeTypeCurrentRPC":"JSON","version":479}"#,
    );
    let h = PullMessageRequestHeader::read_from(ext(&cmd)).unwrap();
    assert_eq!((h.queue_id, h.queue_offset, h.max_msg_nums), (2, 118, 32));
    assert_eq!((h.sys_flag, h.suspend_timeout_millis), (2, 15000));
    assert_eq!(h.subscription, None);
    assert_eq!(h.max_msg_bytes, Some(262144));
    assert_eq!(h.rpc.broker_name.as_deref(), Some("broker-a"));
}

#[test]
fn go_pull_request_with_subscription() {
    let cmd = decode(
        r#"{"code":11,"language":"GO","version":317,"opaque":9,"flag":0,"remark":"","extFields":{"consumerGroup":"G1","topic":"TopicTest","queueId":"0","queueOffset":"0","maxMsgNums":"32","sysFlag":"6","commitOffset":"0","suspendTimeoutMillis":"20000","subscription":"TagA || TagB","subVersion":"0","expressionType":"TAG"}}"#,
    );
    let h = PullMessageRequestHeader::read_from(ext(&cmd)).unwrap();
    assert_eq!(h.subscription.as_deref(), Some("TagA || TagB"));
    assert_eq!((h.sys_flag, h.sub_version), (6, 0));
}

#[test]
fn java_offset_and_admin_requests() {
    let cmd = decode(
        r#"{"code":14,"extFields":{"consumerGroup":"G1","queueId":"0","setZeroIfNotFound":"false","topic":"T"},"flag":0,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":479}"#,
    );
    let h = QueryConsumerOffsetRequestHeader::read_from(ext(&cmd)).unwrap();
    assert_eq!(h.set_zero_if_not_found, Some(false));

    let cmd = decode(
        r#"{"code":222,"extFields":{"group":"G1","isForce":"true","queueId":"-1","timestamp":"-1","topic":"T"},"flag":0,"language":"JAVA","opaque":2,"serializeTypeCurrentRPC":"JSON","version":479}"#,
    );
    let h = ResetOffsetRequestHeader::read_from(ext(&cmd)).unwrap();
    assert!(h.is_force);
    assert_eq!((h.queue_id, h.timestamp, h.offset), (-1, -1, None));

    let cmd = decode(
        r#"{"code":17,"extFields":{"attributes":"+message.type=NORMAL","defaultTopic":"TBW102","force":"false","order":"false","perm":"6","readQueueNums":"8","topic":"T","topicFilterType":"SINGLE_TAG","topicSysFlag":"0","writeQueueNums":"8"},"flag":0,"language":"JAVA","opaque":3,"serializeTypeCurrentRPC":"JSON","version":479}"#,
    );
    let h = CreateTopicRequestHeader::read_from(ext(&cmd)).unwrap();
    assert_eq!((h.read_queue_nums, h.perm, h.order), (8, 6, false));
    assert_eq!(h.attributes.as_deref(), Some("+message.type=NORMAL"));

    let cmd = decode(
        r#"{"code":35,"extFields":{"clientID":"10.0.0.5@1234","consumerGroup":"G1"},"flag":0,"language":"JAVA","opaque":4,"serializeTypeCurrentRPC":"JSON","version":479}"#,
    );
    let h = UnregisterClientRequestHeader::read_from(ext(&cmd)).unwrap();
    assert_eq!(h.client_id, "10.0.0.5@1234");
}

#[test]
fn end_transaction_and_send_back() {
    let cmd = decode(
        r#"{"code":37,"extFields":{"commitLogOffset":"4096","commitOrRollback":"8","fromTransactionCheck":"false","msgId":"AC1100010000","producerGroup":"PG","tranStateTableOffset":"3","transactionId":"AC1100010000"},"flag":2,"language":"JAVA","opaque":5,"serializeTypeCurrentRPC":"JSON","version":479}"#,
    );
    assert!(cmd.is_oneway());
    let h = EndTransactionRequestHeader::read_from(ext(&cmd)).unwrap();
    assert_eq!((h.commit_log_offset, h.commit_or_rollback), (4096, 8));

    let cmd = decode(
        r#"{"code":36,"extFields":{"delayLevel":"0","group":"G1","maxReconsumeTimes":"16","offset":"8192","originMsgId":"X","originTopic":"T","unitMode":"false"},"flag":0,"language":"JAVA","opaque":6,"serializeTypeCurrentRPC":"JSON","version":479}"#,
    );
    let h = ConsumerSendMsgBackRequestHeader::read_from(ext(&cmd)).unwrap();
    assert_eq!(
        (h.offset, h.delay_level, h.max_reconsume_times),
        (8192, 0, Some(16))
    );
}

#[test]
fn send_and_pull_responses_carry_every_key_clients_unbox() {
    let mut ext = ExtFields::new();
    SendMessageResponseHeader {
        msg_id: "C0A8010A00002A9F0000000000001A2B".into(),
        queue_id: 1,
        queue_offset: 7,
        msg_region: Some("DefaultRegion".into()),
        trace_on: Some("true".into()),
        ..Default::default()
    }
    .write_to(&mut ext);
    let keys: Vec<&str> = ext.iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        ["msgId", "queueId", "queueOffset", "MSG_REGION", "TRACE_ON"]
    );

    let mut ext = ExtFields::new();
    PullMessageResponseHeader::default().write_to(&mut ext);
    let keys: Vec<&str> = ext.iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        [
            "suggestWhichBrokerId",
            "nextBeginOffset",
            "minOffset",
            "maxOffset"
        ]
    );
}

/// ARCHITECTURE.md: `remoting` never imports `store`, `broker`, `namesrv`; `common` imports
/// nothing of the crate but itself.
#[test]
fn remoting_and_common_respect_module_boundaries() {
    fn scan(dir: &std::path::Path, banned: &[&str]) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                scan(&path, banned);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                for b in banned {
                    assert!(!text.contains(b), "{} mentions {b}", path.display());
                }
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    scan(
        &root.join("remoting"),
        &["crate::store", "crate::broker", "crate::namesrv"],
    );
    scan(
        &root.join("common"),
        &[
            "crate::remoting",
            "crate::store",
            "crate::broker",
            "crate::namesrv",
        ],
    );
}
