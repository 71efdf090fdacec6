//! config/*.json: fastjson dialect in, fastjson pretty layout out, durable persist with `.bak`.

use rmqd::store::config_files::*;

const CONSUMER_OFFSET_JAVA: &str = "{\n\t\"dataVersion\":{\n\t\t\"counter\":7,\n\t\t\"stateVersion\":0,\n\t\t\"timestamp\":1726000000000\n\t},\n\t\"groupTopicMap\":{\n\t\t\"group_a\":[\"TopicTest\",\"%RETRY%group_a\"]\n\t},\n\t\"offsetTable\":{\n\t\t\"%RETRY%group_a@group_a\":{0:0\n\t\t},\n\t\t\"TopicTest@group_a\":{0:250,1:248,3:12\n\t\t}\n\t}\n}";

#[test]
fn reads_fastjson_consumer_offsets() {
    let w: ConsumerOffsetWrapper = from_fastjson(CONSUMER_OFFSET_JAVA).unwrap();
    assert_eq!(w.data_version.counter, 7);
    assert_eq!(w.offset_table["TopicTest@group_a"][&1], 248);
    assert_eq!(w.offset_table["%RETRY%group_a@group_a"][&0], 0);
    assert!(w.group_topic_map.is_empty());
}

#[test]
fn writes_topics_json_like_fastjson() {
    let mut w = TopicConfigSerializeWrapper {
        data_version: DataVersion {
            counter: 12,
            state_version: 0,
            timestamp: 1_726_000_000_000,
        },
        ..Default::default()
    };
    let mut t = TopicConfig::new("TopicTest", 16, 16, 6);
    t.read_queue_nums = 4;
    t.write_queue_nums = 4;
    w.topic_config_table.insert("TopicTest".into(), t);
    let expected = "{\n\t\"dataVersion\":{\n\t\t\"counter\":12,\n\t\t\"stateVersion\":0,\n\t\t\"timestamp\":1726000000000\n\t},\n\t\"topicConfigTable\":{\n\t\t\"TopicTest\":{\n\t\t\t\"attributes\":{},\n\t\t\t\"order\":false,\n\t\t\t\"perm\":6,\n\t\t\t\"readQueueNums\":4,\n\t\t\t\"topicFilterType\":\"SINGLE_TAG\",\n\t\t\t\"topicName\":\"TopicTest\",\n\t\t\t\"topicSysFlag\":0,\n\t\t\t\"writeQueueNums\":4\n\t\t}\n\t}\n}";
    assert_eq!(to_fastjson_pretty(&w), expected);
    let back: TopicConfigSerializeWrapper = from_fastjson(expected).unwrap();
    assert_eq!(back, w);
}

#[test]
fn subscription_group_defaults_and_missing_fields() {
    let s = "{\"subscriptionGroupTable\":{\"g\":{\"groupName\":\"g\",\"retryMaxTimes\":3,\"unknownField\":1}}}";
    let w: SubscriptionGroupWrapper = from_fastjson(s).unwrap();
    let g = &w.subscription_group_table["g"];
    assert_eq!(g.retry_max_times, 3);
    assert!(g.consume_enable);
    assert_eq!(g.group_retry_policy.kind, "CUSTOMIZED");
    let out = to_fastjson_pretty(&w);
    assert!(
        out.contains("\"groupRetryPolicy\":{\n\t\t\t\t\"type\":\"CUSTOMIZED\"\n\t\t\t}"),
        "{out}"
    );
    assert!(!out.contains("subscriptionDataSet"));
    let d: DelayOffsetWrapper = from_fastjson("{\"offsetTable\":{1:10,3:2,18:0}}").unwrap();
    assert_eq!(d.offset_table[&18], 0);
}

#[test]
fn persist_keeps_bak_and_load_falls_back() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("config/consumerOffset.json");
    persist(&p, "{\"a\":1}").unwrap();
    persist(&p, "{\"a\":2}").unwrap();
    assert_eq!(load(&p).unwrap(), "{\"a\":2}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("config/consumerOffset.json.bak")).unwrap(),
        "{\"a\":1}"
    );
    std::fs::write(&p, "").unwrap();
    assert_eq!(load(&p).unwrap(), "{\"a\":1}");
    // typed: corrupt main falls back to .bak
    let mut w = ConsumerOffsetWrapper::default();
    w.offset_table.entry("T@g".into()).or_default().insert(0, 5);
    w.derive_group_topic_map();
    persist_typed(&p, &w).unwrap();
    let mut w2 = w.clone();
    w2.offset_table.get_mut("T@g").unwrap().insert(0, 6);
    persist_typed(&p, &w2).unwrap();
    std::fs::write(&p, "{not json").unwrap();
    let got: ConsumerOffsetWrapper = load_typed(&p).unwrap().unwrap();
    assert_eq!(got.offset_table["T@g"][&0], 5);
    assert!(
        load_typed::<ConsumerOffsetWrapper>(&dir.path().join("none.json"))
            .unwrap()
            .is_none()
    );
}

/// The Java broker's own files (tests/fixtures/java-store-clean/config, written by 5.3.3) read and
/// written back by rmqd: the same lines, in fastjson's layout (tabs, bare integer keys on the
/// opening line, inline arrays). Java keeps its maps in hash order, rmqd sorts them, so lines are
/// compared as a multiset, without the commas that depend on order.
#[test]
fn java_config_files_round_trip_in_fastjson_layout() {
    use std::io::Read;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/java-store-clean/config");
    let java = |name: &str| {
        let gz = std::fs::File::open(dir.join(format!("{name}.gz"))).unwrap();
        let mut s = String::new();
        flate2::read::GzDecoder::new(gz)
            .read_to_string(&mut s)
            .unwrap();
        s
    };
    let lines = |s: &str| {
        let mut v: Vec<String> = s
            .lines()
            .map(|l| l.trim_end_matches(',').to_string())
            .collect();
        v.sort();
        v
    };
    let check = |name: &str, ours: String| {
        let theirs = java(name);
        assert_eq!(
            lines(&ours),
            lines(&theirs),
            "{name}: rmqd wrote\n{ours}\nJava wrote\n{theirs}"
        );
        assert!(
            !ours.ends_with('\n'),
            "{name}: fastjson writes no final newline"
        );
    };
    let t: TopicConfigSerializeWrapper = from_fastjson(&java("topics.json")).unwrap();
    check("topics.json", to_fastjson_pretty(&t));
    let o: ConsumerOffsetWrapper = from_fastjson(&java("consumerOffset.json")).unwrap();
    let mut o2 = o.clone();
    o2.derive_group_topic_map();
    check("consumerOffset.json", to_fastjson_pretty(&o2));
    let d: DelayOffsetWrapper = from_fastjson(&java("delayOffset.json")).unwrap();
    check("delayOffset.json", to_fastjson_pretty(&d));
    let g: rmqd::remoting::body::subscription_group::SubscriptionGroupWrapper =
        from_fastjson(&java("subscriptionGroup.json")).unwrap();
    check("subscriptionGroup.json", to_fastjson_pretty(&g));
}
