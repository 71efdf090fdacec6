//! What rocketmq-proxy 5.3.3 (cluster mode) asks the broker about a gRPC client's group before the
//! client's first POP (compat-tests `grpc` runs the real proxy): GET_SUBSCRIPTIONGROUP_CONFIG (352)
//! for the FIFO flag and the retry policy it puts into the client settings. As Java's
//! `findSubscriptionGroupConfig`, the broker auto-creates an unknown group there when
//! `autoCreateSubscriptionGroup` is on, and only then.

mod support;

use rmqd::remoting::{RequestCode, ResponseCode};
use support::{request as req, RawClient};

fn get_group(c: &mut RawClient, group: &str) -> (i32, String) {
    let r = c.call(&req(
        RequestCode::GET_SUBSCRIPTIONGROUP_CONFIG,
        &[("group", group)],
    ));
    (
        r.code,
        String::from_utf8_lossy(&r.body.to_bytes()).into_owned(),
    )
}

fn all_groups(c: &mut RawClient) -> String {
    let r = c.call(&req(RequestCode::GET_ALL_SUBSCRIPTIONGROUP_CONFIG, &[]));
    assert_eq!(r.code, 0, "{:?}", r.remark);
    String::from_utf8_lossy(&r.body.to_bytes()).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_group_is_auto_created_by_get_subscription_group_config() {
    let dir = tempfile::tempdir().unwrap();
    let broker = support::start_broker(dir.path(), &[]).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        assert!(!all_groups(&mut c).contains("\"GRPC_G\""));
        let (code, body) = get_group(&mut c, "GRPC_G");
        assert_eq!(code, 0, "{body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["groupName"], "GRPC_G");
        // Java's defaults, which the proxy turns into the client's settings
        assert_eq!(v["consumeMessageOrderly"], false);
        assert_eq!(v["retryMaxTimes"], 16);
        assert!(
            all_groups(&mut c).contains("\"GRPC_G\""),
            "the group is now listed"
        );
        // a name no client could register is never created (Java: TopicValidator, 255 chars)
        let (code, _) = get_group(&mut c, "bad group!");
        assert_eq!(code, ResponseCode::SUBSCRIPTION_GROUP_NOT_EXIST.code());
        let (code, _) = get_group(&mut c, &"g".repeat(256));
        assert_eq!(code, ResponseCode::SUBSCRIPTION_GROUP_NOT_EXIST.code());
        assert!(!all_groups(&mut c).contains("bad group!"));
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_auto_creation_an_unknown_group_does_not_exist() {
    let dir = tempfile::tempdir().unwrap();
    let broker =
        support::start_broker_with(dir.path(), &[("autoCreateSubscriptionGroup", "false")], &[])
            .await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        let (code, _) = get_group(&mut c, "GRPC_G");
        assert_eq!(code, ResponseCode::SUBSCRIPTION_GROUP_NOT_EXIST.code());
        assert!(!all_groups(&mut c).contains("\"GRPC_G\""));
        // the built-in groups are there regardless
        assert_eq!(get_group(&mut c, "TOOLS_CONSUMER").0, 0);
    })
    .await
    .unwrap();
    broker.shutdown().await;
}
