//! NameServer request handling in process: registration (plain, compressed, CRC), routes in
//! both JSON dialects pinned to remoting-protocol.md §7.4/§7.5, cluster info, topic lists,
//! delete/register topic, write-permission changes, unknown codes.

mod namesrv_support;

use namesrv_support::*;
use rmqd::remoting::body::cluster_info::ClusterInfo;
use rmqd::remoting::body::register_broker::RegisterBrokerBody;
use rmqd::remoting::body::topic_list::TopicList;
use rmqd::remoting::body::topic_route::TopicRouteData;
use rmqd::remoting::header::namesrv::RegisterBrokerRequestHeader;
use rmqd::remoting::header::CommandHeader;

const ROUTE_LEGACY: &str = r#"{"brokerDatas":[{"brokerAddrs":{0:"192.168.1.10:10911",1:"192.168.1.11:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}"#;
const ROUTE_STANDARD: &str = r#"{"brokerDatas":[{"brokerAddrs":{"0":"192.168.1.10:10911","1":"192.168.1.11:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}"#;

fn master_and_slave(ns: &rmqd::namesrv::NameServer) {
    let m = broker_config("broker-a", 0, "192.168.1.10:10911");
    let s = broker_config("broker-a", 1, "192.168.1.11:10911");
    let r = ns.process(1, peer(), register(&m, 1, topics())).unwrap();
    assert_eq!(r.code, 0, "{:?}", r.remark);
    let r = ns.process(2, peer(), register(&s, 1, topics())).unwrap();
    assert_eq!(r.code, 0, "{:?}", r.remark);
    assert_eq!(r.ext("masterAddr"), Some("192.168.1.10:10911"));
    assert_eq!(r.ext("haServerAddr"), Some("192.168.1.10:10912"));
}

#[test]
fn route_json_depends_on_request_version() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    master_and_slave(&ns);

    let java = ns
        .process(9, peer(), route_request("TopicTest", 479))
        .unwrap();
    assert_eq!((java.code, java.opaque, java.flag & 1), (0, 0, 1));
    assert_eq!(body_text(&java), ROUTE_STANDARD);

    let go = ns
        .process(9, peer(), route_request("TopicTest", 317))
        .unwrap();
    assert_eq!(body_text(&go), ROUTE_LEGACY);

    let mut asks = route_request("TopicTest", 317);
    asks.ext_mut().insert("acceptStandardJsonOnly", "true");
    assert_eq!(
        body_text(&ns.process(9, peer(), asks).unwrap()),
        ROUTE_STANDARD
    );

    let tbw = TopicRouteData::decode(
        &ns.process(9, peer(), route_request("TBW102", 317))
            .unwrap()
            .body
            .to_bytes(),
    )
    .unwrap();
    assert_eq!(
        (tbw.queue_datas[0].perm, tbw.queue_datas[0].write_queue_nums),
        (7, 8)
    );
}

#[test]
fn missing_topic_is_topic_not_exist_with_java_remark() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    let r = ns.process(1, peer(), route_request("Nope", 479)).unwrap();
    assert_eq!(r.code, 17);
    assert_eq!(
        r.remark.as_deref(),
        Some("No topic route info in name server for the topic: Nope\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.")
    );
}

#[test]
fn cluster_info_is_fastjson_shaped() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    let m = broker_config("broker-a", 0, "192.168.1.10:10911");
    ns.process(1, peer(), register(&m, 1, topics())).unwrap();
    let r = ns.process(1, peer(), request(106, 479, &[])).unwrap();
    assert_eq!(
        body_text(&r),
        r#"{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"192.168.1.10:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}}"#
    );
    let info = ClusterInfo::decode(&r.body.to_bytes()).unwrap();
    assert_eq!(
        info.broker_addr_table["broker-a"].broker_addrs[&0],
        "192.168.1.10:10911"
    );
}

#[test]
fn compressed_bodies_register_with_or_without_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    let mut cfg = broker_config("broker-z", 0, "10.0.0.9:10911");
    cfg.compressed_register = true;
    let req = register(&cfg, 1, topics());
    assert_eq!(req.ext("compressed"), Some("true"));
    assert_eq!(ns.process(1, peer(), req.clone()).unwrap().code, 0);
    assert!(
        ns.process(1, peer(), route_request("TopicTest", 479))
            .unwrap()
            .code
            == 0
    );

    // Java 5.x deflates but leaves compressed=false; the body is still understood.
    let ns2 = name_server(dir.path(), |_| {});
    let mut quirk = req;
    quirk.ext_mut().insert("compressed", "false");
    assert_eq!(ns2.process(1, peer(), quirk).unwrap().code, 0);
    let route = ns2
        .process(1, peer(), route_request("TopicTest", 479))
        .unwrap();
    let route = TopicRouteData::decode(&route.body.to_bytes()).unwrap();
    assert_eq!(route.broker_datas[0].broker_addrs[&0], "10.0.0.9:10911");
}

#[test]
fn wrong_body_crc_is_rejected_and_zero_crc_is_not_checked() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    let cfg = broker_config("broker-a", 0, "10.0.0.1:10911");
    let good = register(&cfg, 1, topics());
    let h = RegisterBrokerRequestHeader::read_from(good.ext_fields.as_ref().unwrap()).unwrap();
    assert_eq!(
        h.body_crc32,
        (crc32fast::hash(&good.body.to_bytes()) & 0x7fff_ffff) as i32
    );
    assert_eq!(h.enable_acting_master, Some(false));
    assert_eq!(good.version, 479);

    let mut bad = good.clone();
    bad.ext_mut()
        .insert("bodyCrc32", (h.body_crc32 ^ 1).to_string());
    let r = ns.process(1, peer(), bad).unwrap();
    assert_eq!((r.code, r.remark.as_deref()), (1, Some("crc32 not match")));
    assert_eq!(
        ns.process(1, peer(), route_request("TopicTest", 479))
            .unwrap()
            .code,
        17
    );

    let mut unchecked = good;
    unchecked.ext_mut().insert("bodyCrc32", "0");
    assert_eq!(ns.process(1, peer(), unchecked).unwrap().code, 0);
}

#[test]
fn missing_header_field_and_bad_body_are_system_errors() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    let mut req = register(&broker_config("b", 0, "1.1.1.1:10911"), 1, topics());
    req.ext_mut().remove("brokerName");
    assert_eq!(ns.process(1, peer(), req).unwrap().code, 1);
    let mut req = register(&broker_config("b", 0, "1.1.1.1:10911"), 1, topics());
    req.body = b"{not json".to_vec().into();
    req.ext_mut().insert("bodyCrc32", "0");
    assert_eq!(ns.process(1, peer(), req).unwrap().code, 1);
}

#[test]
fn old_broker_body_and_absent_body_register() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    let cfg = broker_config("old", 0, "10.0.0.2:10911");
    let mut req = register(&cfg, 1, vec![]);
    req.body = Default::default();
    req.ext_mut().insert("bodyCrc32", "0");
    assert_eq!(ns.process(1, peer(), req).unwrap().code, 0);
    // A V3_0_10 broker sends a bare TopicConfigSerializeWrapper.
    let body = RegisterBrokerBody::new(version(2), topics());
    let wrapper = serde_json::to_vec(&body.topic_config_serialize_wrapper).unwrap();
    let mut req = register(&cfg, 2, vec![]);
    req.version = 36;
    req.body = wrapper.into();
    req.ext_mut().insert("bodyCrc32", "0");
    assert_eq!(ns.process(1, peer(), req).unwrap().code, 0);
    assert_eq!(
        ns.process(1, peer(), route_request("TopicTest", 36))
            .unwrap()
            .code,
        0
    );
}

#[test]
fn topic_lists() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    master_and_slave(&ns);
    let all = TopicList::decode(
        &ns.process(1, peer(), request(206, 479, &[]))
            .unwrap()
            .body
            .to_bytes(),
    )
    .unwrap();
    assert_eq!(all.topic_list, vec!["TBW102", "TopicTest"]);
    let r = ns.process(1, peer(), request(206, 479, &[])).unwrap();
    assert_eq!(body_text(&r), r#"{"topicList":["TBW102","TopicTest"]}"#);
    let by = ns
        .process(
            1,
            peer(),
            request(224, 479, &[("cluster", "DefaultCluster")]),
        )
        .unwrap();
    assert_eq!(
        TopicList::decode(&by.body.to_bytes())
            .unwrap()
            .topic_list
            .len(),
        2
    );
    let sys = ns.process(1, peer(), request(304, 479, &[])).unwrap();
    let sys = TopicList::decode(&sys.body.to_bytes()).unwrap();
    assert_eq!(sys.topic_list, vec!["DefaultCluster", "broker-a"]);
    assert_eq!(sys.broker_addr.as_deref(), Some("192.168.1.10:10911"));
    for code in [311, 312, 313] {
        let r = ns.process(1, peer(), request(code, 479, &[])).unwrap();
        assert_eq!(body_text(&r), r#"{"topicList":[]}"#);
    }
    let disabled = name_server(dir.path(), |c| c.enable_all_topic_list = false);
    let r = disabled.process(1, peer(), request(206, 479, &[])).unwrap();
    assert_eq!((r.code, r.remark.as_deref()), (1, Some("disable")));
}

#[test]
fn delete_topic_with_and_without_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    master_and_slave(&ns);
    let r = ns
        .process(
            1,
            peer(),
            request(
                216,
                479,
                &[("topic", "TopicTest"), ("clusterName", "Other")],
            ),
        )
        .unwrap();
    assert_eq!(r.code, 0);
    assert_eq!(
        ns.process(1, peer(), route_request("TopicTest", 479))
            .unwrap()
            .code,
        0
    );
    ns.process(
        1,
        peer(),
        request(
            216,
            479,
            &[("topic", "TopicTest"), ("clusterName", "DefaultCluster")],
        ),
    )
    .unwrap();
    assert_eq!(
        ns.process(1, peer(), route_request("TopicTest", 479))
            .unwrap()
            .code,
        17
    );
    ns.process(1, peer(), request(216, 479, &[("topic", "TBW102")]))
        .unwrap();
    assert_eq!(
        ns.process(1, peer(), route_request("TBW102", 479))
            .unwrap()
            .code,
        17
    );
}

#[test]
fn register_topic_uses_queue_datas_of_known_brokers() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    master_and_slave(&ns);
    let body = ROUTE_LEGACY.replace("\"perm\":6", "\"perm\":4");
    let mut req = request(217, 479, &[("topic", "NewTopic")]);
    req.body = body.into_bytes().into();
    assert_eq!(ns.process(1, peer(), req).unwrap().code, 0);
    let r = ns
        .process(1, peer(), route_request("NewTopic", 479))
        .unwrap();
    assert!(body_text(&r).contains(r#""perm":4"#));
    let mut unknown = request(217, 479, &[("topic", "Ghost")]);
    unknown.body = ROUTE_LEGACY
        .replace(
            "\"brokerName\":\"broker-a\",\"perm\"",
            "\"brokerName\":\"nobody\",\"perm\"",
        )
        .into_bytes()
        .into();
    ns.process(1, peer(), unknown).unwrap();
    assert_eq!(
        ns.process(1, peer(), route_request("Ghost", 479))
            .unwrap()
            .code,
        17
    );
}

#[test]
fn wipe_and_add_write_perm_report_counts() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    master_and_slave(&ns);
    let r = ns
        .process(1, peer(), request(205, 479, &[("brokerName", "broker-a")]))
        .unwrap();
    assert_eq!((r.code, r.ext("wipeTopicCount")), (0, Some("2")));
    let route = ns.process(1, peer(), route_request("TBW102", 479)).unwrap();
    assert!(body_text(&route).contains(r#""perm":5"#));
    let r = ns
        .process(1, peer(), request(327, 479, &[("brokerName", "broker-a")]))
        .unwrap();
    assert_eq!(r.ext("addTopicCount"), Some("2"));
    let route = ns.process(1, peer(), route_request("TBW102", 479)).unwrap();
    assert!(body_text(&route).contains(r#""perm":6"#));
    let r = ns
        .process(1, peer(), request(205, 479, &[("brokerName", "nobody")]))
        .unwrap();
    assert_eq!(r.ext("wipeTopicCount"), Some("0"));
}

#[test]
fn member_group_and_data_version() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    master_and_slave(&ns);
    let r = ns
        .process(
            1,
            peer(),
            request(
                901,
                479,
                &[
                    ("clusterName", "DefaultCluster"),
                    ("brokerName", "broker-a"),
                ],
            ),
        )
        .unwrap();
    assert_eq!(
        body_text(&r),
        r#"{"brokerMemberGroup":{"brokerAddrs":{0:"192.168.1.10:10911",1:"192.168.1.11:10911"},"brokerName":"broker-a","cluster":"DefaultCluster"}}"#
    );
    let ident = [
        ("brokerName", "broker-a"),
        ("brokerAddr", "192.168.1.10:10911"),
        ("clusterName", "DefaultCluster"),
        ("brokerId", "0"),
    ];
    let mut same = request(322, 479, &ident);
    same.body = version(1).encode().into();
    let r = ns.process(1, peer(), same).unwrap();
    assert_eq!(r.ext("changed"), Some("false"));
    assert_eq!(
        body_text(&r),
        String::from_utf8(version(1).encode()).unwrap()
    );
    let mut newer = request(322, 479, &ident);
    newer.body = version(2).encode().into();
    assert_eq!(
        ns.process(1, peer(), newer).unwrap().ext("changed"),
        Some("true")
    );
}

#[test]
fn unknown_codes_are_not_supported_and_oneway_gets_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    for code in [10, 9999] {
        let r = ns.process(1, peer(), request(code, 479, &[])).unwrap();
        assert_eq!(r.code, 3);
        assert_eq!(
            r.remark,
            Some(format!(" request type {code} not supported"))
        );
    }
    let mut oneway = register(&broker_config("b", 0, "1.1.1.1:10911"), 1, topics());
    oneway.mark_oneway();
    assert!(ns.process(1, peer(), oneway).is_none());
    assert_eq!(
        ns.process(1, peer(), route_request("TopicTest", 479))
            .unwrap()
            .code,
        0
    );
}
