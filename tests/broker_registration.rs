//! The broker registers with its NameServer at start (and unregisters at shutdown): after start
//! the NameServer's cluster info lists it and its topics have routes.

mod support;

use std::time::{Duration, Instant};

use rmqd::broker::{BrokerConfig, BrokerController};
use rmqd::namesrv::server::NamesrvServer;
use rmqd::namesrv::NamesrvConfig;
use rmqd::remoting::{RemotingCommand, RequestCode};
use rmqd::store::config::MessageStoreConfig;
use support::RawClient;

fn cluster_info(addr: std::net::SocketAddr) -> String {
    let mut c = RawClient::connect(addr);
    let r = c.call(&RemotingCommand::request(
        RequestCode::GET_BROKER_CLUSTER_INFO.code(),
    ));
    String::from_utf8_lossy(&r.body.to_bytes()).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broker_shows_up_in_cluster_info_and_leaves_on_shutdown() {
    let ns = NamesrvServer::start(NamesrvConfig {
        listen_port: 0,
        bind_address: "127.0.0.1".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    let ns_addr = ns.local_addr();
    let dir = tempfile::tempdir().unwrap();
    let config = BrokerConfig {
        listen_port: 0,
        bind_address: "127.0.0.1".into(),
        broker_ip1: "127.0.0.1".into(),
        broker_name: "broker-reg".into(),
        broker_cluster_name: "RegCluster".into(),
        namesrv_addr: Some(ns_addr.to_string()),
        ..Default::default()
    };
    let mut store = MessageStoreConfig::with_root(dir.path());
    store.set("mappedFileSizeCommitLog", "1048576").unwrap();
    let broker = BrokerController::start(config, store).await.unwrap();
    let info = tokio::task::spawn_blocking(move || {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let info = cluster_info(ns_addr);
            if info.contains("broker-reg") || Instant::now() > deadline {
                return info;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    })
    .await
    .unwrap();
    assert!(info.contains("\"RegCluster\""), "{info}");
    assert!(info.contains("broker-reg"), "{info}");
    broker.shutdown().await;
    let after = tokio::task::spawn_blocking(move || cluster_info(ns_addr))
        .await
        .unwrap();
    assert!(
        !after.contains("broker-reg"),
        "still registered after shutdown: {after}"
    );
    ns.shutdown().await;
}
