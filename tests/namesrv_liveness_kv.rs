//! Broker liveness (expiry scan, connection close, unregister), KV config, order topic config
//! and the NameServer config requests.

mod namesrv_support;

use std::time::Duration;

use namesrv_support::*;
use rmqd::remoting::body::kv_table::KVTable;

#[test]
fn expired_broker_is_removed_by_the_scan() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |c| c.broker_channel_expired_time = 100);
    let a = broker_config("broker-a", 0, "10.0.0.1:10911");
    ns.process(7, peer(), register(&a, 1, topics())).unwrap();
    assert!(ns.scan_not_active_brokers().is_empty());
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(ns.scan_not_active_brokers(), vec![7]);
    assert_eq!(
        ns.process(1, peer(), route_request("TopicTest", 479))
            .unwrap()
            .code,
        17
    );
    assert!(ns.route_info().live_brokers().is_empty());
    let info = ns.process(1, peer(), request(106, 479, &[])).unwrap();
    assert_eq!(
        body_text(&info),
        r#"{"brokerAddrTable":{},"clusterAddrTable":{}}"#
    );
}

#[test]
fn heartbeat_timeout_from_the_header_and_heartbeat_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    let mut a = broker_config("broker-a", 0, "10.0.0.1:10911");
    a.enable_slave_acting_master = true;
    a.broker_not_active_timeout_millis = 120;
    let req = register(&a, 1, topics());
    assert_eq!(req.ext("heartbeatTimeoutMillis"), Some("120"));
    ns.process(7, peer(), req).unwrap();
    std::thread::sleep(Duration::from_millis(80));
    let hb = request(
        904,
        479,
        &[
            ("clusterName", "DefaultCluster"),
            ("brokerAddr", "10.0.0.1:10911"),
            ("brokerName", "broker-a"),
        ],
    );
    assert_eq!(ns.process(7, peer(), hb).unwrap().code, 0);
    std::thread::sleep(Duration::from_millis(80));
    assert!(ns.scan_not_active_brokers().is_empty());
    std::thread::sleep(Duration::from_millis(80));
    assert_eq!(ns.scan_not_active_brokers(), vec![7]);
}

#[test]
fn closing_the_connection_removes_only_its_brokers() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    ns.process(
        1,
        peer(),
        register(&broker_config("broker-a", 0, "10.0.0.1:10911"), 1, topics()),
    )
    .unwrap();
    ns.process(
        2,
        peer(),
        register(&broker_config("broker-b", 0, "10.0.0.2:10911"), 1, topics()),
    )
    .unwrap();
    ns.on_connection_closed(1);
    let route = ns
        .process(1, peer(), route_request("TopicTest", 479))
        .unwrap();
    let text = body_text(&route);
    assert!(
        text.contains("broker-b") && !text.contains("broker-a"),
        "{text}"
    );
    // A broker that re-registered on a new connection survives the old one closing.
    ns.process(
        3,
        peer(),
        register(&broker_config("broker-b", 0, "10.0.0.2:10911"), 1, topics()),
    )
    .unwrap();
    ns.on_connection_closed(2);
    assert_eq!(ns.route_info().live_brokers().len(), 1);
}

#[test]
fn unregister_removes_the_address_then_the_broker() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    ns.process(
        1,
        peer(),
        register(&broker_config("broker-a", 0, "10.0.0.1:10911"), 1, topics()),
    )
    .unwrap();
    ns.process(
        2,
        peer(),
        register(&broker_config("broker-a", 1, "10.0.0.3:10911"), 1, topics()),
    )
    .unwrap();
    let un = |addr: &str, id: &str| {
        request(
            104,
            479,
            &[
                ("brokerName", "broker-a"),
                ("brokerAddr", addr),
                ("clusterName", "DefaultCluster"),
                ("brokerId", id),
            ],
        )
    };
    assert_eq!(
        ns.process(1, peer(), un("10.0.0.3:10911", "1"))
            .unwrap()
            .code,
        0
    );
    let route = ns
        .process(1, peer(), route_request("TopicTest", 479))
        .unwrap();
    assert!(body_text(&route).contains(r#"{"0":"10.0.0.1:10911"}"#));
    ns.process(1, peer(), un("10.0.0.1:10911", "0")).unwrap();
    assert_eq!(
        ns.process(1, peer(), route_request("TopicTest", 479))
            .unwrap()
            .code,
        17
    );
}

#[test]
fn kv_config_requests_and_persistence() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    let put = request(
        100,
        479,
        &[("namespace", "ns1"), ("key", "k"), ("value", "v")],
    );
    assert_eq!(ns.process(1, peer(), put).unwrap().code, 0);
    let get = ns
        .process(
            1,
            peer(),
            request(101, 479, &[("namespace", "ns1"), ("key", "k")]),
        )
        .unwrap();
    assert_eq!((get.code, get.ext("value")), (0, Some("v")));
    let list = ns
        .process(1, peer(), request(219, 479, &[("namespace", "ns1")]))
        .unwrap();
    assert_eq!(body_text(&list), r#"{"table":{"k":"v"}}"#);
    assert_eq!(
        ns.process(
            1,
            peer(),
            request(102, 479, &[("namespace", "ns1"), ("key", "k")])
        )
        .unwrap()
        .code,
        0
    );
    let miss = ns
        .process(
            1,
            peer(),
            request(101, 479, &[("namespace", "ns1"), ("key", "k")]),
        )
        .unwrap();
    assert_eq!(
        (miss.code, miss.remark.as_deref()),
        (22, Some("No config item, Namespace: ns1 Key: k"))
    );
    let miss = ns
        .process(1, peer(), request(219, 479, &[("namespace", "none")]))
        .unwrap();
    assert_eq!(
        (miss.code, miss.remark.as_deref()),
        (22, Some("No config item, Namespace: none"))
    );
    let put = request(
        100,
        479,
        &[("namespace", "ns1"), ("key", "k2"), ("value", "v2")],
    );
    ns.process(1, peer(), put).unwrap();
    drop(ns);
    let again = name_server(dir.path(), |_| {});
    let get = again
        .process(
            1,
            peer(),
            request(101, 479, &[("namespace", "ns1"), ("key", "k2")]),
        )
        .unwrap();
    assert_eq!(get.ext("value"), Some("v2"));
}

#[test]
fn order_topic_config_goes_to_routes_and_brokers() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |c| c.order_message_enable = true);
    let put = request(
        100,
        479,
        &[
            ("namespace", "ORDER_TOPIC_CONFIG"),
            ("key", "TopicTest"),
            ("value", "broker-a:4"),
        ],
    );
    ns.process(1, peer(), put).unwrap();
    let reg = ns
        .process(
            1,
            peer(),
            register(&broker_config("broker-a", 0, "10.0.0.1:10911"), 1, topics()),
        )
        .unwrap();
    let kv = KVTable::decode(&reg.body.to_bytes()).unwrap();
    assert_eq!(kv.table["TopicTest"], "broker-a:4");
    let route = ns
        .process(1, peer(), route_request("TopicTest", 317))
        .unwrap();
    assert!(body_text(&route).contains(r#","orderTopicConf":"broker-a:4","queueDatas""#));
}

#[test]
fn namesrv_config_get_update_and_black_list() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    let r = ns.process(1, peer(), request(319, 479, &[])).unwrap();
    assert!(body_text(&r).contains("listenPort=9876\n"));
    assert!(body_text(&r).contains("orderMessageEnable=false\n"));
    let mut up = request(318, 479, &[]);
    up.body = b"orderMessageEnable=true\nenableAllTopicList=false\n"
        .to_vec()
        .into();
    assert_eq!(ns.process(1, peer(), up).unwrap().code, 0);
    assert!(ns.config().order_message_enable && !ns.config().enable_all_topic_list);
    let stored = std::fs::read_to_string(dir.path().join("namesrv.properties")).unwrap();
    assert!(stored.contains("orderMessageEnable=true"));
    let mut black = request(318, 479, &[]);
    black.body = b"kvConfigPath=/etc/passwd\n".to_vec().into();
    let r = ns.process(1, peer(), black).unwrap();
    assert_eq!(
        (r.code, r.remark.as_deref()),
        (16, Some("Can not update config in black list."))
    );
    let mut bad = request(318, 479, &[]);
    bad.body = b"waitSecondsForService=soon\n".to_vec().into();
    let r = ns.process(1, peer(), bad).unwrap();
    assert_eq!(r.code, 1);
    assert!(r.remark.unwrap().contains("waitSecondsForService"));
}

#[test]
fn need_wait_for_service_refuses_routes_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |c| c.need_wait_for_service = true);
    let r = ns
        .process(1, peer(), route_request("TopicTest", 479))
        .unwrap();
    assert_eq!(
        (r.code, r.remark.as_deref()),
        (1, Some("name server not ready"))
    );
}
