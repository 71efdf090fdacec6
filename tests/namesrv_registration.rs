//! The broker side over TCP: RemotingClient and NamesrvRegistrationService against NameServers
//! served by a small test front end; one dead address in the list must not block the others.

mod namesrv_support;

use std::sync::Arc;
use std::time::Duration;

use namesrv_support::*;
use rmqd::broker::namesrv_registration::{NamesrvRegistrationService, TopicConfigSource};
use rmqd::broker::remoting_client::{ClientError, RemotingClient};
use rmqd::namesrv::NameServer;

fn source() -> TopicConfigSource {
    Arc::new(|| (version(1), topics()))
}

#[tokio::test]
async fn registers_with_every_namesrv_and_unregisters_on_stop() {
    let dir = tempfile::tempdir().unwrap();
    let ns1 = Arc::new(name_server(&dir.path().join("1"), |_| {}));
    let ns2 = Arc::new(name_server(&dir.path().join("2"), |_| {}));
    let (a1, a2) = (serve(ns1.clone()).await, serve(ns2.clone()).await);
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let mut cfg = broker_config("broker-a", 0, "127.0.0.1:10911");
    cfg.namesrv_addr = format!("{a1};{a2};{dead}");
    cfg.register_broker_timeout_mills = 2000;
    let svc = NamesrvRegistrationService::new(
        cfg,
        RemotingClient::new(Duration::from_millis(500)),
        source(),
    );

    let results = svc.register_now().await;
    assert_eq!(results.len(), 3);
    let ok = results.iter().filter(|(_, r)| r.is_ok()).count();
    assert_eq!(ok, 2, "{results:?}");
    assert_eq!(svc.last_result().unwrap().master_addr, None);
    for ns in [&ns1, &ns2] {
        let r = ns
            .process(0, peer(), route_request("TopicTest", 479))
            .unwrap();
        assert_eq!(r.code, 0);
        assert_eq!(ns.route_info().live_brokers().len(), 1);
    }

    svc.start();
    svc.trigger();
    tokio::time::sleep(Duration::from_millis(100)).await;
    svc.stop().await;
    for ns in [&ns1, &ns2] {
        assert_eq!(
            ns.process(0, peer(), route_request("TopicTest", 479))
                .unwrap()
                .code,
            17
        );
        assert!(ns.route_info().live_brokers().is_empty());
    }
}

#[tokio::test]
async fn client_reconnects_and_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let ns = Arc::new(NameServer::new(rmqd::namesrv::NamesrvConfig {
        kv_config_path: dir.path().join("kv.json"),
        ..Default::default()
    }));
    let addr = serve(ns.clone()).await.to_string();
    let client = RemotingClient::default();
    let r = client
        .invoke(&addr, route_request("X", 479), Duration::from_secs(2))
        .await
        .unwrap();
    assert_eq!(r.code, 17);
    client.close(&addr).await;
    let r = client
        .invoke(&addr, request(106, 479, &[]), Duration::from_secs(2))
        .await
        .unwrap();
    assert_eq!(r.code, 0);

    // A server that accepts and never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_addr = silent.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = silent.accept().await {
            held.push(s);
        }
    });
    let err = client
        .invoke(
            &silent_addr,
            request(106, 479, &[]),
            Duration::from_millis(100),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Timeout { .. }), "{err}");
    client
        .invoke_oneway(&silent_addr, request(106, 479, &[]))
        .await
        .unwrap();
}

#[tokio::test]
async fn connection_close_drops_the_broker_at_the_namesrv() {
    let dir = tempfile::tempdir().unwrap();
    let ns = Arc::new(name_server(dir.path(), |_| {}));
    let addr = serve(ns.clone()).await;
    let mut cfg = broker_config("broker-a", 0, "127.0.0.1:10911");
    cfg.namesrv_addr = addr.to_string();
    let client = RemotingClient::default();
    let svc = NamesrvRegistrationService::new(cfg, client.clone(), source());
    assert!(svc.register_now().await[0].1.is_ok());
    assert_eq!(ns.route_info().live_brokers().len(), 1);
    client.close(&addr.to_string()).await;
    for _ in 0..50 {
        if ns.route_info().live_brokers().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(ns.route_info().live_brokers().is_empty());
}
