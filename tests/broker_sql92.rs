//! SQL92 property filters end to end over TCP: CHECK_CLIENT_CONFIG accepts or refuses the
//! expression with Java's codes, a pull delivers only the records whose properties match, and
//! `enablePropertyFilter=false` refuses SQL92 as Java does.

mod support;

use rmqd::broker::{BrokerConfig, BrokerController};
use rmqd::remoting::{RemotingCommand, RequestCode, ResponseCode};
use rmqd::store::config::MessageStoreConfig;
use support::{create_topic, RawClient};

async fn start(dir: &std::path::Path, enable_property_filter: bool) -> BrokerController {
    let config = BrokerConfig {
        listen_port: 0,
        bind_address: "127.0.0.1".into(),
        broker_ip1: "127.0.0.1".into(),
        broker_name: "broker-sql".into(),
        enable_property_filter,
        ..Default::default()
    };
    let mut store = MessageStoreConfig::with_root(dir);
    store.set("mappedFileSizeCommitLog", "1048576").unwrap();
    store.set("mappedFileSizeConsumeQueue", "6000").unwrap();
    BrokerController::start(config, store).await.unwrap()
}

fn req(code: RequestCode, pairs: &[(&str, &str)]) -> RemotingCommand {
    let mut cmd = RemotingCommand::request(code.code());
    for (k, v) in pairs {
        cmd.ext_mut().insert(*k, *v);
    }
    cmd
}

fn send(c: &mut RawClient, topic: &str, props: &str) {
    let mut cmd = req(
        RequestCode::SEND_MESSAGE_V2,
        &[
            ("a", "PG"),
            ("b", topic),
            ("c", "TBW102"),
            ("d", "1"),
            ("e", "0"),
            ("f", "0"),
            ("g", "1700000000000"),
            ("h", "0"),
            ("i", props),
        ],
    );
    cmd.body = bytes::Bytes::from_static(b"sql").into();
    assert_eq!(c.call(&cmd).code, 0);
}

fn pull_sql(c: &mut RawClient, topic: &str, sql: &str) -> RemotingCommand {
    c.call(&req(
        RequestCode::PULL_MESSAGE,
        &[
            ("consumerGroup", "CG"),
            ("topic", topic),
            ("queueId", "0"),
            ("queueOffset", "0"),
            ("maxMsgNums", "32"),
            ("sysFlag", "4"),
            ("commitOffset", "0"),
            ("suspendTimeoutMillis", "0"),
            ("subscription", sql),
            ("subVersion", "0"),
            ("expressionType", "SQL92"),
        ],
    ))
}

fn check_client_config(c: &mut RawClient, sql: &str) -> RemotingCommand {
    let body = serde_json::json!({
        "clientId": "127.0.0.1@1",
        "group": "CG",
        "subscriptionData": {
            "classFilterMode": false, "codeSet": [], "expressionType": "SQL92",
            "subString": sql, "subVersion": 1, "tagsSet": [], "topic": "T"
        }
    });
    let mut cmd = req(RequestCode::CHECK_CLIENT_CONFIG, &[]);
    cmd.body = bytes::Bytes::from(serde_json::to_vec(&body).unwrap()).into();
    c.call(&cmd)
}

/// Sends are acknowledged before the consume queue is built: wait until every record is visible.
fn wait_dispatched(c: &mut RawClient, topic: &str, count: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while pull_sql(c, topic, "TRUE").ext("nextBeginOffset") != Some(count) {
        assert!(
            std::time::Instant::now() < deadline,
            "dispatch of {count} records"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The value of property `a` in each record of a pull body (layout: store-format.md §2.1).
fn a_values(body: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut pos = 0;
    let i32_at = |p: usize| i32::from_be_bytes(body[p..p + 4].try_into().unwrap());
    while pos < body.len() {
        let total = i32_at(pos) as usize;
        let sys_flag = i32_at(pos + 36);
        let born = if sys_flag & 0x10 != 0 { 20 } else { 8 };
        let store = if sys_flag & 0x20 != 0 { 20 } else { 8 };
        let mut p = pos + 48 + born + 8 + store + 4 + 8;
        p += 4 + i32_at(p) as usize;
        p += 1 + body[p] as usize;
        let plen = u16::from_be_bytes([body[p], body[p + 1]]) as usize;
        let props = String::from_utf8_lossy(&body[p + 2..p + 2 + plen]).into_owned();
        let a = props
            .split('\u{2}')
            .find_map(|kv| kv.strip_prefix("a\u{1}"))
            .map(str::to_string);
        out.extend(a);
        pos += total;
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql92_pull_delivers_only_matching_properties() {
    let dir = tempfile::tempdir().unwrap();
    let broker = start(dir.path(), true).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, "S", 1);
        for i in 0..10 {
            send(&mut c, "S", &format!("a\u{1}{i}\u{2}TAGS\u{1}s\u{2}"));
        }
        send(&mut c, "S", "b\u{1}7\u{2}");
        send(&mut c, "S", "a\u{1}seven\u{2}");
        wait_dispatched(&mut c, "S", "12");
        let r = pull_sql(&mut c, "S", "a > 5");
        assert_eq!(r.code, 0, "{:?}", r.remark);
        assert_eq!(a_values(&r.body.to_bytes()), ["6", "7", "8", "9"]);
        assert_eq!(r.ext("nextBeginOffset"), Some("12"));

        // "seven" meets an integer: Java's NumberFormatException fails the whole evaluation,
        // so the IN must come first for it to match
        let r = pull_sql(&mut c, "S", "a BETWEEN 2 AND 3 OR a IN ('seven')");
        assert_eq!(a_values(&r.body.to_bytes()), ["2", "3"]);
        let r = pull_sql(&mut c, "S", "a IN ('seven') OR a BETWEEN 2 AND 3");
        assert_eq!(a_values(&r.body.to_bytes()), ["2", "3", "seven"]);

        let none = pull_sql(&mut c, "S", "a > 100");
        assert_eq!(none.code, ResponseCode::PULL_RETRY_IMMEDIATELY.code());

        let bad = pull_sql(&mut c, "S", "a >");
        assert_eq!(bad.code, ResponseCode::SUBSCRIPTION_PARSE_FAILED.code());

        assert_eq!(check_client_config(&mut c, "a > 5").code, 0);
        let refused = check_client_config(&mut c, "a > 'x'");
        assert_eq!(refused.code, ResponseCode::SUBSCRIPTION_PARSE_FAILED.code());
        assert!(refused
            .remark
            .unwrap_or_default()
            .contains("Invalid MessageSelector"));
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql92_is_refused_when_property_filter_is_disabled() {
    let dir = tempfile::tempdir().unwrap();
    let broker = start(dir.path(), false).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        create_topic(&mut c, "S", 1);
        let check = check_client_config(&mut c, "a > 5");
        assert_eq!(check.code, ResponseCode::SYSTEM_ERROR.code());
        assert_eq!(
            check.remark.as_deref(),
            Some("The broker does not support consumer to filter message by SQL92")
        );
        let pull = pull_sql(&mut c, "S", "a > 5");
        assert_eq!(pull.code, ResponseCode::SYSTEM_ERROR.code());
    })
    .await
    .unwrap();
    broker.shutdown().await;
}
