//! RouteInfoManager rules taken from Java's: DataVersion-gated topic updates, slave promoted to
//! master on the same address, deleteTopicWithBrokerRegistration, slave acting master.

mod namesrv_support;

use namesrv_support::*;
use rmqd::common::topic::TopicConfig;
use rmqd::remoting::body::topic_route::TopicRouteData;

fn route(ns: &rmqd::namesrv::NameServer, topic: &str) -> Option<TopicRouteData> {
    let r = ns.process(1, peer(), route_request(topic, 479)).unwrap();
    (r.code == 0).then(|| TopicRouteData::decode(&r.body.to_bytes()).unwrap())
}

#[test]
fn topic_changes_apply_only_with_a_new_data_version() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    let cfg = broker_config("broker-a", 0, "10.0.0.1:10911");
    ns.process(1, peer(), register(&cfg, 1, topics())).unwrap();
    let mut changed = topics();
    changed[1].write_queue_nums = 2;
    ns.process(1, peer(), register(&cfg, 1, changed.clone()))
        .unwrap();
    assert_eq!(
        route(&ns, "TopicTest").unwrap().queue_datas[0].write_queue_nums,
        4
    );
    ns.process(1, peer(), register(&cfg, 2, changed)).unwrap();
    assert_eq!(
        route(&ns, "TopicTest").unwrap().queue_datas[0].write_queue_nums,
        2
    );
}

#[test]
fn a_new_topic_with_the_same_version_is_still_added() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    let cfg = broker_config("broker-a", 0, "10.0.0.1:10911");
    ns.process(1, peer(), register(&cfg, 1, topics())).unwrap();
    let mut more = topics();
    more.push(TopicConfig::new("Fresh", 1, 1, 6));
    ns.process(1, peer(), register(&cfg, 1, more)).unwrap();
    assert!(route(&ns, "Fresh").is_some());
}

#[test]
fn slave_promoted_on_the_same_address_keeps_one_id() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    ns.process(
        1,
        peer(),
        register(&broker_config("broker-a", 1, "10.0.0.5:10911"), 1, topics()),
    )
    .unwrap();
    ns.process(
        1,
        peer(),
        register(&broker_config("broker-a", 0, "10.0.0.5:10911"), 2, topics()),
    )
    .unwrap();
    let r = route(&ns, "TopicTest").unwrap();
    assert_eq!(r.broker_datas[0].broker_addrs.len(), 1);
    assert_eq!(r.broker_datas[0].broker_addrs[&0], "10.0.0.5:10911");
}

#[test]
fn delete_topic_with_broker_registration_drops_missing_topics() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |c| {
        c.delete_topic_with_broker_registration = true
    });
    let cfg = broker_config("broker-a", 0, "10.0.0.1:10911");
    ns.process(1, peer(), register(&cfg, 1, topics())).unwrap();
    let only = vec![
        TopicConfig::new("TBW102", 8, 8, 7),
        TopicConfig::new("Other", 1, 1, 6),
    ];
    ns.process(1, peer(), register(&cfg, 2, only)).unwrap();
    assert!(route(&ns, "TopicTest").is_none());
    assert!(route(&ns, "Other").is_some());

    let keep = name_server(dir.path(), |_| {});
    keep.process(1, peer(), register(&cfg, 1, topics()))
        .unwrap();
    keep.process(
        1,
        peer(),
        register(
            &cfg,
            2,
            vec![
                TopicConfig::new("TBW102", 8, 8, 7),
                TopicConfig::new("Other", 1, 1, 6),
            ],
        ),
    )
    .unwrap();
    assert!(route(&keep, "TopicTest").is_some());
}

#[test]
fn slave_acting_master_when_the_master_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |c| c.support_acting_master = true);
    let mut m = broker_config("broker-a", 0, "10.0.0.1:10911");
    let mut s = broker_config("broker-a", 1, "10.0.0.2:10911");
    m.enable_slave_acting_master = true;
    s.enable_slave_acting_master = true;
    ns.process(1, peer(), register(&m, 1, topics())).unwrap();
    ns.process(2, peer(), register(&s, 1, topics())).unwrap();
    ns.on_connection_closed(1);
    let r = route(&ns, "TopicTest").unwrap();
    // The write bit is gone and the prime slave is presented as id 0.
    assert_eq!(r.queue_datas[0].perm, 4);
    assert_eq!(
        r.broker_datas[0].broker_addrs.get(&0).map(String::as_str),
        Some("10.0.0.2:10911")
    );
    assert!(r.broker_datas[0].enable_acting_master);
    // Registering again as the prime slave keeps the topics read-only.
    ns.process(2, peer(), register(&s, 2, topics())).unwrap();
    assert_eq!(route(&ns, "TopicTest").unwrap().queue_datas[0].perm, 4);
}

#[test]
fn route_switches_follow_update_namesrv_config() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    let cfg = broker_config("broker-a", 0, "10.0.0.1:10911");
    ns.process(1, peer(), register(&cfg, 1, topics())).unwrap();
    let mut up = request(318, 479, &[]);
    up.body = b"deleteTopicWithBrokerRegistration=true\n".to_vec().into();
    assert_eq!(ns.process(1, peer(), up).unwrap().code, 0);
    let only = vec![
        TopicConfig::new("TBW102", 8, 8, 7),
        TopicConfig::new("Other", 1, 1, 6),
    ];
    ns.process(1, peer(), register(&cfg, 2, only)).unwrap();
    assert!(route(&ns, "TopicTest").is_none());
}
