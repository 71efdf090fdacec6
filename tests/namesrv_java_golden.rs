//! A REGISTER_BROKER frame captured from the real Java broker 5.3.3 (`BrokerStartup`, default
//! config, cluster `CapCluster`, broker `broker-cap`) and fed to our NameServer: the frame
//! decodes, the CRC our code computes equals the broker's `bodyCrc32`, the registration
//! succeeds, and our own broker side builds the same header keys and an equivalent body.

mod namesrv_support;

use bytes::{BufMut, BytesMut};
use namesrv_support::*;
use rmqd::remoting::body::register_broker::{body_crc32, RegisterBrokerBody};
use rmqd::remoting::body::topic_route::TopicRouteData;
use rmqd::remoting::codec::FrameCodec;
use rmqd::remoting::RemotingCommand;

/// The JSON header exactly as captured.
const JAVA_HEADER: &str = r#"{"code":103,"extFields":{"brokerId":"0","bodyCrc32":"229625399","clusterName":"CapCluster","brokerAddr":"127.0.0.1:13911","enableActingMaster":"false","haServerAddr":"192.0.2.2:13912","compressed":"false","brokerName":"broker-cap"},"flag":0,"language":"JAVA","opaque":0,"serializeTypeCurrentRPC":"JSON","version":479}"#;

/// The body exactly as captured (2667 bytes; Java's HashMap order).
const JAVA_BODY: &str = r#"{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":0,"stateVersion":0,"timestamp":1795960094562},"mappingDataVersion":{"counter":0,"stateVersion":0,"timestamp":1795960113925},"topicConfigTable":{"RMQ_SYS_TRANS_HALF_TOPIC":{"attributes":{},"order":false,"perm":6,"readQueueNums":1,"topicFilterType":"SINGLE_TAG","topicName":"RMQ_SYS_TRANS_HALF_TOPIC","topicSysFlag":0,"writeQueueNums":1},"BenchmarkTest":{"attributes":{},"order":false,"perm":6,"readQueueNums":1024,"topicFilterType":"SINGLE_TAG","topicName":"BenchmarkTest","topicSysFlag":0,"writeQueueNums":1024},"OFFSET_MOVED_EVENT":{"attributes":{},"order":false,"perm":6,"readQueueNums":1,"topicFilterType":"SINGLE_TAG","topicName":"OFFSET_MOVED_EVENT","topicSysFlag":0,"writeQueueNums":1},"TBW102":{"attributes":{},"order":false,"perm":7,"readQueueNums":8,"topicFilterType":"SINGLE_TAG","topicName":"TBW102","topicSysFlag":0,"writeQueueNums":8},"SELF_TEST_TOPIC":{"attributes":{},"order":false,"perm":6,"readQueueNums":1,"topicFilterType":"SINGLE_TAG","topicName":"SELF_TEST_TOPIC","topicSysFlag":0,"writeQueueNums":1},"rmq_sys_SYNC_BROKER_MEMBER_broker-cap":{"attributes":{},"order":false,"perm":1,"readQueueNums":1,"topicFilterType":"SINGLE_TAG","topicName":"rmq_sys_SYNC_BROKER_MEMBER_broker-cap","topicSysFlag":0,"writeQueueNums":1},"rmq_sys_REVIVE_LOG_CapCluster":{"attributes":{},"order":false,"perm":6,"readQueueNums":8,"topicFilterType":"SINGLE_TAG","topicName":"rmq_sys_REVIVE_LOG_CapCluster","topicSysFlag":0,"writeQueueNums":8},"SCHEDULE_TOPIC_XXXX":{"attributes":{},"order":false,"perm":6,"readQueueNums":18,"topicFilterType":"SINGLE_TAG","topicName":"SCHEDULE_TOPIC_XXXX","topicSysFlag":0,"writeQueueNums":18},"rmq_sys_wheel_timer":{"attributes":{},"order":false,"perm":6,"readQueueNums":1,"topicFilterType":"SINGLE_TAG","topicName":"rmq_sys_wheel_timer","topicSysFlag":0,"writeQueueNums":1},"CapCluster":{"attributes":{},"order":false,"perm":7,"readQueueNums":16,"topicFilterType":"SINGLE_TAG","topicName":"CapCluster","topicSysFlag":0,"writeQueueNums":16},"CapCluster_REPLY_TOPIC":{"attributes":{},"order":false,"perm":6,"readQueueNums":1,"topicFilterType":"SINGLE_TAG","topicName":"CapCluster_REPLY_TOPIC","topicSysFlag":0,"writeQueueNums":1},"broker-cap":{"attributes":{},"order":false,"perm":7,"readQueueNums":1,"topicFilterType":"SINGLE_TAG","topicName":"broker-cap","topicSysFlag":0,"writeQueueNums":1},"RMQ_SYS_TRANS_OP_HALF_TOPIC":{"attributes":{},"order":false,"perm":6,"readQueueNums":1,"topicFilterType":"SINGLE_TAG","topicName":"RMQ_SYS_TRANS_OP_HALF_TOPIC","topicSysFlag":0,"writeQueueNums":1}},"topicQueueMappingDetailMap":{},"topicQueueMappingInfoMap":{}}}"#;

fn java_frame() -> RemotingCommand {
    let mut buf = BytesMut::new();
    buf.put_i32((4 + JAVA_HEADER.len() + JAVA_BODY.len()) as i32);
    buf.put_i32(JAVA_HEADER.len() as i32);
    buf.put_slice(JAVA_HEADER.as_bytes());
    buf.put_slice(JAVA_BODY.as_bytes());
    assert_eq!(buf.len(), 2992);
    FrameCodec::default()
        .decode_frame(&mut buf)
        .unwrap()
        .unwrap()
}

#[test]
fn java_broker_registration_is_accepted() {
    let req = java_frame();
    assert_eq!((req.code, req.version), (103, 479));
    assert_eq!(body_crc32(&req.body.to_bytes()), 229625399);
    assert_eq!(req.ext("bodyCrc32"), Some("229625399"));

    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    let r = ns.process(1, peer(), req).unwrap();
    assert_eq!((r.code, r.remark.as_deref()), (0, None));
    let route = ns.process(1, peer(), route_request("TBW102", 479)).unwrap();
    assert_eq!(
        body_text(&route),
        r#"{"brokerDatas":[{"brokerAddrs":{"0":"127.0.0.1:13911"},"brokerName":"broker-cap","cluster":"CapCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-cap","perm":7,"readQueueNums":8,"topicSysFlag":0,"writeQueueNums":8}]}"#
    );
    let bench = TopicRouteData::decode(
        &ns.process(1, peer(), route_request("BenchmarkTest", 317))
            .unwrap()
            .body
            .to_bytes(),
    )
    .unwrap();
    assert_eq!(bench.queue_datas[0].write_queue_nums, 1024);
}

#[test]
fn our_broker_side_builds_what_java_sends() {
    let java = java_frame();
    let decoded = RegisterBrokerBody::decode(JAVA_BODY.as_bytes(), false, 479).unwrap();
    let wrapper = &decoded.topic_config_serialize_wrapper;
    let mut cfg = broker_config("broker-cap", 0, "127.0.0.1:13911");
    cfg.broker_cluster_name = "CapCluster".into();
    cfg.ha_server_addr = "192.0.2.2:13912".into();
    let ours = rmqd::broker::namesrv_registration::build_register_request(
        &cfg,
        wrapper.data_version,
        wrapper.topic_config_table.values().cloned().collect(),
    );
    let keys = |c: &RemotingCommand| {
        let mut k: Vec<String> = c
            .ext_fields
            .iter()
            .flat_map(|e| e.iter().map(|(k, _)| k.to_string()))
            .collect();
        k.sort();
        k
    };
    assert_eq!(keys(&ours), keys(&java));
    for k in [
        "brokerId",
        "clusterName",
        "brokerAddr",
        "enableActingMaster",
        "haServerAddr",
        "compressed",
        "brokerName",
    ] {
        assert_eq!(ours.ext(k), java.ext(k), "{k}");
    }
    // Same document up to map order (mappingDataVersion aside, which we stamp ourselves).
    let mut theirs: serde_json::Value = serde_json::from_str(JAVA_BODY).unwrap();
    let mut mine: serde_json::Value = serde_json::from_slice(&ours.body.to_bytes()).unwrap();
    for v in [&mut theirs, &mut mine] {
        v["topicConfigSerializeWrapper"]
            .as_object_mut()
            .unwrap()
            .remove("mappingDataVersion");
    }
    assert_eq!(mine, theirs);
}
