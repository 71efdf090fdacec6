//! `storeType=defaultRocksDB` metadata: topics, subscription groups and consumer offsets in Java
//! 5.5.0's config RocksDBs (`store::config_files::kv`, `broker::metadata::kv`): round trips of the
//! store layer in both layouts, and the managers' JSON-vs-kvDataVersion precedence. The swap with
//! the real Java broker is `compat-tests/rocksdb-config/run.sh`.
#![cfg(feature = "rocksdb-cq")]

use rmqd::broker::metadata::groups::SubscriptionGroupManager;
use rmqd::broker::metadata::kv::KvMirrors;
use rmqd::broker::metadata::offsets::{ConsumerOffsetManager, VERSION_STEP};
use rmqd::broker::metadata::topics::TopicConfigManager;
use rmqd::broker::BrokerConfig;
use rmqd::common::data_version::DataVersion;
use rmqd::common::subscription_group::SubscriptionGroupConfig;
use rmqd::common::topic::TopicConfig;
use rmqd::store::config_files::kv::{ConfigKvTables, KvEntries};
use rmqd::store::paths::StorePaths;

fn version(counter: i64) -> DataVersion {
    DataVersion {
        counter,
        state_version: 0,
        timestamp: 1_700_000_000_000 + counter,
    }
}

fn entries(items: &[(&str, &str)]) -> KvEntries {
    items
        .iter()
        .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect()
}

/// What a sync wrote is what a reopened database reads: puts, deletions, the version, and the
/// forbidden column family of the groups; in both of Java's layouts.
#[test]
fn sync_then_reopen_reads_back_puts_deletes_and_version_in_both_layouts() {
    for single in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let paths = StorePaths::new(dir.path(), None);
        {
            let t = ConfigKvTables::open(&paths, single).unwrap();
            assert_eq!(t.topics.read().unwrap().version, None);
            t.topics
                .sync(
                    entries(&[("A", "{}"), ("B", "{}")]),
                    KvEntries::new(),
                    &version(3),
                )
                .unwrap();
            t.topics
                .sync(
                    entries(&[("B", "{\"perm\":6}"), ("C", "{}")]),
                    KvEntries::new(),
                    &version(4),
                )
                .unwrap();
            t.groups
                .sync(
                    entries(&[("G", "{}")]),
                    entries(&[("G", "{\"T\":1}")]),
                    &version(2),
                )
                .unwrap();
            t.offsets
                .sync(
                    entries(&[("T@G", "{\"offsetTable\":{\"0\":5}}")]),
                    KvEntries::new(),
                    &version(0),
                )
                .unwrap();
        }
        let t = ConfigKvTables::open(&paths, single).unwrap();
        let topics = t.topics.read().unwrap();
        assert_eq!(topics.version, Some(version(4)), "single={single}");
        assert_eq!(
            topics.entries,
            vec![
                (b"B".to_vec(), b"{\"perm\":6}".to_vec()),
                (b"C".to_vec(), b"{}".to_vec())
            ]
        );
        let groups = t.groups.read().unwrap();
        assert_eq!(groups.entries.len(), 1);
        assert_eq!(
            groups.forbidden,
            vec![(b"G".to_vec(), b"{\"T\":1}".to_vec())]
        );
        assert_eq!(t.offsets.read().unwrap().entries.len(), 1);
        let dbs: Vec<String> = std::fs::read_dir(dir.path().join("config"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        if single {
            assert_eq!(dbs, vec!["metadata".to_string()]);
        } else {
            for d in ["topics", "subscriptionGroups", "consumerOffsets"] {
                assert!(dbs.contains(&d.to_string()), "{dbs:?}");
            }
        }
    }
}

fn open(
    dir: &std::path::Path,
) -> (
    TopicConfigManager,
    SubscriptionGroupManager,
    ConsumerOffsetManager,
) {
    open_layout(dir, false)
}

/// The managers over the separate databases, or `config/metadata` with `single`.
fn open_layout(
    dir: &std::path::Path,
    single: bool,
) -> (
    TopicConfigManager,
    SubscriptionGroupManager,
    ConsumerOffsetManager,
) {
    let paths = StorePaths::new(dir, None);
    let kv = KvMirrors::open(&paths, single).unwrap();
    let config = BrokerConfig::default();
    let topics =
        TopicConfigManager::load_with(&config, paths.topics_json(), Some(kv.topics)).unwrap();
    let groups =
        SubscriptionGroupManager::load_with(paths.subscription_group_json(), true, Some(kv.groups))
            .unwrap();
    let offsets =
        ConsumerOffsetManager::load_with_kv(paths.consumer_offset_json(), kv.offsets).unwrap();
    groups.persist().unwrap();
    offsets.persist().unwrap();
    (topics, groups, offsets)
}

/// rmqd's creations, updates and deletions come back from the RocksDB even when the JSON files
/// are gone (Java writes no JSON), and the JSON files carry the RocksDB's version.
#[test]
fn managers_round_trip_through_the_rocksdb_alone() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (topics, groups, offsets) = open(dir.path());
        topics.update(TopicConfig::new("T1", 3, 3, 6)).unwrap();
        topics.update(TopicConfig::new("T2", 1, 1, 6)).unwrap();
        topics.delete("T2").unwrap();
        let mut g = SubscriptionGroupConfig::new("G1");
        g.retry_max_times = 7;
        groups.update(g).unwrap();
        groups.update(SubscriptionGroupConfig::new("G2")).unwrap();
        groups.delete("G2").unwrap();
        offsets.commit("G1", "T1", 2, 42);
        offsets.commit("%LMQ%q", "%LMQ%q", 0, 9);
        offsets.persist().unwrap();
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("config/topics.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            json["dataVersion"]["counter"],
            topics.data_version().counter
        );
    }
    for f in [
        "topics.json",
        "subscriptionGroup.json",
        "consumerOffset.json",
    ] {
        std::fs::remove_file(dir.path().join("config").join(f)).unwrap();
        let _ = std::fs::remove_file(dir.path().join("config").join(format!("{f}.bak")));
    }
    let (topics, groups, offsets) = open(dir.path());
    assert_eq!(topics.select("T1").unwrap().read_queue_nums, 3);
    assert!(topics.select("T2").is_none());
    assert_eq!(groups.find("G1").unwrap().retry_max_times, 7);
    assert!(groups.find("G2").is_none());
    assert_eq!(offsets.query("G1", "T1", 2), Some(42));
    assert_eq!(offsets.query("%LMQ%q", "%LMQ%q", 0), Some(9));
}

/// Java 5.5.0 keeps no JSON beside its config RocksDBs: removes rmqd's, so only the RocksDBs
/// speak at the next open.
fn remove_json(dir: &std::path::Path) {
    for f in [
        "topics.json",
        "subscriptionGroup.json",
        "consumerOffset.json",
    ] {
        let _ = std::fs::remove_file(dir.join("config").join(f));
        let _ = std::fs::remove_file(dir.join("config").join(format!("{f}.bak")));
    }
}

/// Java 5.5.0 `migrateFromSeparateRocksDBs`: turning `useSingleRocksDBForAllConfigs` on over a
/// store with the separate databases imports their entries into `config/metadata` (version: the
/// separate one's plus one), once; what is written in the single layout afterwards stands, and
/// the separate databases are only read.
#[test]
fn single_layout_imports_the_separate_databases_once() {
    let dir = tempfile::tempdir().unwrap();
    let separate_counter = {
        let (topics, groups, offsets) = open_layout(dir.path(), false);
        topics.update(TopicConfig::new("SEP", 2, 2, 6)).unwrap();
        let mut g = SubscriptionGroupConfig::new("GS");
        g.retry_max_times = 5;
        groups.update(g).unwrap();
        // Java moves the offsets' version once per consumerOffsetUpdateVersionStep commits, and
        // migrates them only when the separate counter is greater
        for i in 0..VERSION_STEP as i64 {
            offsets.commit("GS", "SEP", 1, i);
        }
        assert_eq!(offsets.data_version().counter, 1);
        offsets.commit("GS", "SEP", 1, 77);
        offsets.persist().unwrap();
        topics.data_version().counter
    };
    assert!(separate_counter > 0);
    remove_json(dir.path());
    {
        let (topics, groups, offsets) = open_layout(dir.path(), true);
        assert!(dir.path().join("config/metadata/CURRENT").is_file());
        assert_eq!(topics.select("SEP").unwrap().read_queue_nums, 2);
        assert_eq!(topics.data_version().counter, separate_counter + 1);
        assert_eq!(groups.find("GS").unwrap().retry_max_times, 5);
        assert_eq!(offsets.query("GS", "SEP", 1), Some(77));
        assert_eq!(offsets.data_version().counter, 2);
        topics.update(TopicConfig::new("SEP", 4, 4, 6)).unwrap();
        offsets.commit("GS", "SEP", 1, 88);
        offsets.persist().unwrap();
    }
    remove_json(dir.path());
    let (topics, _, offsets) = open_layout(dir.path(), true);
    assert_eq!(topics.select("SEP").unwrap().read_queue_nums, 4);
    assert_eq!(offsets.query("GS", "SEP", 1), Some(88));
    // the separate databases are as the separate layout left them
    remove_json(dir.path());
    let (topics, _, offsets) = open_layout(dir.path(), false);
    assert_eq!(topics.select("SEP").unwrap().read_queue_nums, 2);
    assert_eq!(offsets.query("GS", "SEP", 1), Some(77));
}

fn write_json(dir: &std::path::Path, name: &str, text: &str) {
    std::fs::create_dir_all(dir.join("config")).unwrap();
    std::fs::write(dir.join("config").join(name), text).unwrap();
}

/// Java's merge rule: a JSON whose counter is greater than kvDataVersion's is imported (over
/// the RocksDB's entries, version = JSON's + 1); an equal or smaller one is ignored.
#[test]
fn json_is_imported_only_when_its_counter_is_greater() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (topics, _, offsets) = open(dir.path());
        topics.update(TopicConfig::new("KV", 1, 1, 6)).unwrap(); // counter 1
        offsets.commit("G", "KV", 0, 1);
        offsets.persist().unwrap();
    }
    let kv_counter = 1;
    // not greater: ignored
    write_json(
        dir.path(),
        "topics.json",
        &format!(
            "{{\"dataVersion\":{{\"counter\":{kv_counter},\"timestamp\":1}},\"topicConfigTable\":{{\"OLD\":{{\"topicName\":\"OLD\",\"readQueueNums\":1,\"writeQueueNums\":1,\"perm\":6}}}}}}"
        ),
    );
    write_json(
        dir.path(),
        "consumerOffset.json",
        "{\"dataVersion\":{\"counter\":0},\"offsetTable\":{\"KV@G\":{0:500}}}",
    );
    {
        let (topics, _, offsets) = open(dir.path());
        assert!(topics.select("OLD").is_none());
        assert!(topics.select("KV").is_some());
        assert_eq!(topics.data_version().counter, kv_counter);
        assert_eq!(offsets.query("G", "KV", 0), Some(1));
    }
    // greater: imported over the RocksDB's entries
    write_json(
        dir.path(),
        "topics.json",
        "{\"dataVersion\":{\"counter\":9,\"timestamp\":1},\"topicConfigTable\":{\"NEW\":{\"topicName\":\"NEW\",\"readQueueNums\":2,\"writeQueueNums\":2,\"perm\":6}}}",
    );
    write_json(
        dir.path(),
        "consumerOffset.json",
        "{\"dataVersion\":{\"counter\":5},\"offsetTable\":{\"KV@G\":{0:500}}}",
    );
    let (topics, _, offsets) = open(dir.path());
    assert_eq!(topics.select("NEW").unwrap().read_queue_nums, 2);
    assert!(topics.select("KV").is_some());
    assert_eq!(topics.data_version().counter, 10);
    assert_eq!(offsets.query("G", "KV", 0), Some(500));
}

/// An entry or version Java could not have written is logged and skipped; the rest loads.
#[test]
fn malformed_entries_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    {
        let paths = StorePaths::new(dir.path(), None);
        let t = ConfigKvTables::open(&paths, false).unwrap();
        let mut topics = entries(&[
            (
                "GOOD",
                "{\"topicName\":\"GOOD\",\"readQueueNums\":4,\"writeQueueNums\":4,\"perm\":6}",
            ),
            ("BAD", "{not json"),
        ]);
        topics.insert(vec![0xff, 0xfe], b"{}".to_vec());
        t.topics
            .sync(topics, KvEntries::new(), &version(2))
            .unwrap();
        t.offsets
            .sync(
                entries(&[("T@G", "[1,2]"), ("T@H", "{\"offsetTable\":{\"1\":3}}")]),
                KvEntries::new(),
                &version(0),
            )
            .unwrap();
    }
    let (topics, _, offsets) = open(dir.path());
    assert_eq!(topics.select("GOOD").unwrap().read_queue_nums, 4);
    assert!(topics.select("BAD").is_none());
    assert_eq!(offsets.query("H", "T", 1), Some(3));
    assert_eq!(offsets.query("G", "T", 0), None);
}
