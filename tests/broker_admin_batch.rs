//! The batch admin codes `mqadmin updateTopicList` and `updateSubGroupList` send:
//! UPDATE_AND_CREATE_TOPIC_LIST (18) and UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST (225). The
//! topics and groups are written as 17 and 200 write one each (attribute edits applied, names
//! checked), persisted to the Java files, and a list with one bad topic writes none of it.
//! compat-tests `mqadmin.sh` (M27, M28) runs the real mqadmin against Java 5.3.3 and rmqd.

mod support;

use rmqd::remoting::{RemotingCommand, RequestCode, ResponseCode};
use support::{request as req, RawClient};

fn call_with_body(c: &mut RawClient, code: RequestCode, body: &str) -> RemotingCommand {
    c.call(&req(code, &[]).with_body(body.as_bytes().to_vec()))
}

fn topic_config(c: &mut RawClient, topic: &str) -> Option<serde_json::Value> {
    let r = c.call(&req(RequestCode::GET_TOPIC_CONFIG, &[("topic", topic)]));
    (r.code == 0).then(|| {
        // TopicConfigAndQueueMapping: the topic's config fields at the top level
        serde_json::from_slice::<serde_json::Value>(&r.body.to_bytes()).unwrap()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topic_and_group_lists_are_created_as_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    let broker = support::start_broker(dir.path(), &[]).await;
    let addr = broker.local_addr();
    let config_dir = dir.path().join("config");
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        // numbers as strings and a field rmqd does not know are accepted, as fastjson does
        let list = r#"{"topicConfigList":[
            {"topicName":"BATCH_T1","readQueueNums":3,"writeQueueNums":"3","perm":6,
             "attributes":{"+message.type":"FIFO"},"topicMessageType":"FIFO"},
            {"topicName":"BATCH_T2","readQueueNums":2,"writeQueueNums":2,"perm":4}]}"#;
        let r = call_with_body(&mut c, RequestCode::UPDATE_AND_CREATE_TOPIC_LIST, list);
        assert_eq!(r.code, 0, "{:?}", r.remark);
        let t1 = topic_config(&mut c, "BATCH_T1").expect("BATCH_T1 created");
        assert_eq!(t1["readQueueNums"], 3);
        assert_eq!(t1["writeQueueNums"], 3);
        assert_eq!(t1["attributes"]["message.type"], "FIFO", "{t1}");
        let t2 = topic_config(&mut c, "BATCH_T2").expect("BATCH_T2 created");
        assert_eq!(t2["perm"], 4);
        assert_eq!(t2["readQueueNums"], 2);
        let file = std::fs::read_to_string(config_dir.join("topics.json")).unwrap();
        assert!(file.contains("\"BATCH_T1\"") && file.contains("\"BATCH_T2\""));

        // an edit of an existing topic keeps the attributes it does not name
        let edit = r#"{"topicConfigList":[{"topicName":"BATCH_T1","readQueueNums":4,
            "writeQueueNums":4,"perm":6,"attributes":{"+delete.policy":"COMPACTION"}}]}"#;
        let r = call_with_body(&mut c, RequestCode::UPDATE_AND_CREATE_TOPIC_LIST, edit);
        assert_eq!(r.code, 0, "{:?}", r.remark);
        let t1 = topic_config(&mut c, "BATCH_T1").unwrap();
        assert_eq!(t1["writeQueueNums"], 4);
        assert_eq!(t1["attributes"]["message.type"], "FIFO", "{t1}");
        assert_eq!(t1["attributes"]["delete.policy"], "COMPACTION", "{t1}");

        // one illegal name or system topic: refused, and nothing of the list is written
        for (bad, why) in [("bad topic!", "illegal"), ("SCHEDULE_TOPIC_XXXX", "system")] {
            let list = format!(
                r#"{{"topicConfigList":[{{"topicName":"BATCH_T3"}},{{"topicName":"{bad}"}}]}}"#
            );
            let r = call_with_body(&mut c, RequestCode::UPDATE_AND_CREATE_TOPIC_LIST, &list);
            assert_eq!(r.code, ResponseCode::INVALID_PARAMETER.code(), "{why}");
            assert!(r.remark.is_some(), "{why}: a refusal says why");
            assert!(topic_config(&mut c, "BATCH_T3").is_none(), "{why}");
        }
        for body in ["", "{\"topicConfigList\":7}", "[1,2"] {
            let r = call_with_body(&mut c, RequestCode::UPDATE_AND_CREATE_TOPIC_LIST, body);
            assert_eq!(r.code, ResponseCode::INVALID_PARAMETER.code(), "{body:?}");
        }

        let groups = r#"{"groupConfigList":[
            {"groupName":"BATCH_G1","retryMaxTimes":5,"attributes":{"+lite.bind.topic":"P"}},
            {"groupName":"BATCH_G2","consumeBroadcastEnable":"true"}]}"#;
        let r = call_with_body(
            &mut c,
            RequestCode::UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST,
            groups,
        );
        assert_eq!(r.code, 0, "{:?}", r.remark);
        let g = |c: &mut RawClient, g: &str| -> serde_json::Value {
            let r = c.call(&req(
                RequestCode::GET_SUBSCRIPTIONGROUP_CONFIG,
                &[("group", g)],
            ));
            assert_eq!(r.code, 0, "{g}: {:?}", r.remark);
            serde_json::from_slice(&r.body.to_bytes()).unwrap()
        };
        let g1 = g(&mut c, "BATCH_G1");
        assert_eq!(g1["retryMaxTimes"], 5);
        assert_eq!(g1["attributes"]["lite.bind.topic"], "P", "{g1}");
        let g2 = g(&mut c, "BATCH_G2");
        assert_eq!(g2["consumeBroadcastEnable"], true);
        assert_eq!(
            g2["retryMaxTimes"], 16,
            "Java's default for a field not sent"
        );
        let file = std::fs::read_to_string(config_dir.join("subscriptionGroup.json")).unwrap();
        assert!(file.contains("\"BATCH_G1\"") && file.contains("\"BATCH_G2\""));
        let r = call_with_body(
            &mut c,
            RequestCode::UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST,
            r#"{"groupConfigList":[{"groupName":"bad group!"}]}"#,
        );
        assert_eq!(r.code, ResponseCode::INVALID_PARAMETER.code());
    })
    .await
    .unwrap();
    broker.shutdown().await;
}
