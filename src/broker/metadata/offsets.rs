//! `ConsumerOffsetManager`: committed offsets per `topic@group` and queue, kept in memory and
//! written to `consumerOffset.json` periodically and at shutdown; plus the server-side reset
//! table that the next pull of a queue turns into PULL_OFFSET_MOVED.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use dashmap::DashMap;
use parking_lot::Mutex;

use super::kv::{self, KvMirror};
use super::persist::JsonFile;
use super::MetadataError;
use crate::common::data_version::DataVersion;
use crate::common::topic::is_lmq;
use crate::store::config_files::{self, ConsumerOffsetWrapper};

const SEP: char = '@';
/// Java `BrokerPathConfigHelper.getLmqConsumerOffsetPath`.
const LMQ_FILE: &str = "lmqConsumerOffset.json";

fn key(topic: &str, group: &str) -> String {
    format!("{topic}{SEP}{group}")
}

pub struct ConsumerOffsetManager {
    table: DashMap<String, HashMap<i32, i64>>,
    /// Offsets a reset asked for, consumed by the next pull of that queue.
    reset: DashMap<String, HashMap<i32, i64>>,
    /// Where each group's last pull of a queue ended (Java `pullOffsetTable`, in memory only).
    pull: DashMap<String, HashMap<i32, i64>>,
    /// `enableLmq` (Java `LmqConsumerOffsetManager`): the offsets of groups named `%LMQ%…`,
    /// `topic@group` -> offset (their one queue), and the file is `lmqConsumerOffset.json`.
    lmq: Option<DashMap<String, i64>>,
    file: JsonFile,
    dirty: Mutex<bool>,
    /// Java 5.5.0's consumer offset RocksDB (`storeType=defaultRocksDB`, LMQ groups included),
    /// written before the file.
    kv: Option<KvMirror>,
    /// The file's `dataVersion` (the RocksDB's `kvDataVersion` with `kv`): moves every
    /// [`VERSION_STEP`] commits, as Java's does.
    version: Mutex<DataVersion>,
    /// Commits so far (Java `versionChangeCounter`).
    commits: AtomicU64,
}

/// Java `BrokerConfig.consumerOffsetUpdateVersionStep` (default 500): the data version moves
/// once per this many offset commits, so another broker or a migration can tell newer offsets
/// from older ones without a version bump per commit.
pub const VERSION_STEP: u64 = 500;

/// The value of a `topic@group` key in the RocksDB (Java `RocksDBOffsetSerializeWrapper`).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct OffsetValue {
    pub offset_table: BTreeMap<i32, i64>,
}

impl ConsumerOffsetManager {
    /// Loads `consumerOffset.json` (or its `.bak`); fastjson's unquoted integer keys are accepted.
    pub fn load(path: PathBuf) -> Result<Self, MetadataError> {
        Self::load_file(path, false)
    }

    /// With `enableLmq` Java keeps every group's offsets in `lmqConsumerOffset.json` (next to
    /// `consumerOffset.json`, which it then neither reads nor writes), with `lmqOffsetTable`.
    pub fn load_lmq(config_dir: &std::path::Path) -> Result<Self, MetadataError> {
        let path = config_dir.join(LMQ_FILE);
        let plain = config_dir.join("consumerOffset.json");
        if !path.exists() && plain.exists() {
            tracing::warn!(
                file = %plain.display(),
                "enableLmq=true: consumer offsets are kept in {LMQ_FILE} (as the Java broker keeps                  them); this consumerOffset.json is not read — copy it to {LMQ_FILE} to keep its                  offsets, or turn enableLmq off"
            );
        }
        Self::load_file(path, true)
    }

    /// With `storeType=defaultRocksDB` Java 5.5.0 keeps every group's offsets (LMQ groups too,
    /// per queue) in its RocksDB; `consumerOffset.json` is imported over them when its version
    /// is newer (`metadata::kv`).
    pub fn load_with_kv(path: PathBuf, kv: KvMirror) -> Result<Self, MetadataError> {
        let mut m = Self::load_file(path, false)?;
        let read = kv.read()?;
        let json_version = m.file.load().and_then(|text| {
            config_files::from_fastjson::<ConsumerOffsetWrapper>(&text)
                .ok()
                .map(|w| w.data_version)
        });
        let json_wins = read.json_wins(json_version.as_ref());
        let from_json = std::mem::take(&mut m.table);
        for (k, v) in kv::decode_entries::<OffsetValue>("consumer offset", &read.entries) {
            m.table.insert(k, v.offset_table.into_iter().collect());
        }
        if json_wins {
            tracing::info!(db = %kv.path().display(), "consumerOffset.json is newer than the config RocksDB: imported");
            for (k, v) in from_json {
                m.table.insert(k, v);
            }
        }
        let mut version = read.merged_version(json_version.as_ref());
        let separate = kv.read_separate()?;
        if let Some((sep, v)) = separate.and_then(|s| s.migrates_over(&version).map(|v| (s, v))) {
            tracing::info!(db = %kv.path().display(), version = ?v, "imported the consumer offsets of the separate config RocksDB (useSingleRocksDBForAllConfigs turned on)");
            for (k, o) in kv::decode_entries::<OffsetValue>("consumer offset", &sep.entries) {
                m.table.insert(k, o.offset_table.into_iter().collect());
            }
            version = v;
        }
        m.kv = Some(kv);
        *m.version.lock() = version;
        *m.dirty.lock() = true;
        Ok(m)
    }

    fn load_file(path: PathBuf, lmq: bool) -> Result<Self, MetadataError> {
        let file = JsonFile::new(path);
        let name = if lmq { LMQ_FILE } else { "consumerOffset.json" };
        let table = DashMap::new();
        let lmq_table = lmq.then(DashMap::new);
        let mut version = DataVersion::default();
        if let Some(text) = file.load() {
            let w: ConsumerOffsetWrapper = config_files::from_fastjson(&text)
                .map_err(|e| MetadataError::unreadable(file.path(), name, e))?;
            version = w.data_version;
            for (k, queues) in w.offset_table {
                table.insert(k, queues.into_iter().collect());
            }
            if let (Some(t), Some(l)) = (&lmq_table, w.lmq_offset_table) {
                for (k, v) in l {
                    t.insert(k, v);
                }
            }
        }
        Ok(Self {
            table,
            reset: DashMap::new(),
            pull: DashMap::new(),
            lmq: lmq_table,
            file,
            dirty: Mutex::new(false),
            kv: None,
            version: Mutex::new(version),
            commits: AtomicU64::new(0),
        })
    }

    /// The LMQ table, when `group` is an LMQ group under `enableLmq`.
    fn lmq_of(&self, group: &str) -> Option<&DashMap<String, i64>> {
        self.lmq.as_ref().filter(|_| is_lmq(group))
    }

    pub fn commit(&self, group: &str, topic: &str, queue_id: i32, offset: i64) {
        if self.commits.fetch_add(1, Ordering::Relaxed) % VERSION_STEP == VERSION_STEP - 1 {
            self.version.lock().next_version();
        }
        if let Some(l) = self.lmq_of(group) {
            l.insert(key(topic, group), offset);
            *self.dirty.lock() = true;
            return;
        }
        self.table
            .entry(key(topic, group))
            .or_default()
            .insert(queue_id, offset);
        *self.dirty.lock() = true;
    }

    /// The data version the next persist writes.
    pub fn data_version(&self) -> DataVersion {
        *self.version.lock()
    }

    /// Java `commitPullOffset`: the next offset a group's pull of a queue was told.
    pub fn commit_pull(&self, group: &str, topic: &str, queue_id: i32, offset: i64) {
        let k = key(topic, group);
        if let Some(mut m) = self.pull.get_mut(&k) {
            m.insert(queue_id, offset);
            return;
        }
        self.pull.entry(k).or_default().insert(queue_id, offset);
    }

    /// Java `queryPullOffset`: `None` when the group never pulled the queue since start.
    pub fn query_pull(&self, group: &str, topic: &str, queue_id: i32) -> Option<i64> {
        self.pull
            .get(&key(topic, group))
            .and_then(|m| m.get(&queue_id).copied())
    }

    /// The committed offset, `None` when the group never committed for this queue.
    pub fn query(&self, group: &str, topic: &str, queue_id: i32) -> Option<i64> {
        if let Some(l) = self.lmq_of(group) {
            return l.get(&key(topic, group)).map(|v| *v);
        }
        self.table
            .get(&key(topic, group))
            .and_then(|m| m.get(&queue_id).copied())
    }

    /// Every queue's offset of a group on a topic.
    pub fn queues(&self, group: &str, topic: &str) -> HashMap<i32, i64> {
        if let Some(l) = self.lmq_of(group) {
            return l
                .get(&key(topic, group))
                .map(|v| HashMap::from([(0, *v)]))
                .unwrap_or_default();
        }
        self.table
            .get(&key(topic, group))
            .map(|m| m.clone())
            .unwrap_or_default()
    }

    /// Topics a group has offsets for.
    pub fn topics_of_group(&self, group: &str) -> Vec<String> {
        self.table
            .iter()
            .filter_map(|e| {
                e.key()
                    .split_once(SEP)
                    .filter(|(_, g)| *g == group)
                    .map(|(t, _)| t.to_string())
            })
            .collect()
    }

    /// Per consumer group, the messages a forced deletion took before the group consumed them:
    /// for each queue whose first offset moved from `old` to `new`, `new - max(committed, old)`
    /// when the group's committed offset was below `new`.
    pub fn unconsumed_dropped(&self, moved: &[(String, i32, i64, i64)]) -> Vec<(String, i64)> {
        let mut per_group: std::collections::BTreeMap<String, i64> = Default::default();
        for (topic, queue, old, new) in moved {
            for group in self.groups_of_topic(topic) {
                if let Some(committed) = self.query(&group, topic, *queue) {
                    let lost = new - committed.max(*old);
                    if lost > 0 {
                        *per_group.entry(group).or_default() += lost;
                    }
                }
            }
        }
        per_group.into_iter().collect()
    }

    /// Groups with offsets on a topic.
    pub fn groups_of_topic(&self, topic: &str) -> Vec<String> {
        self.table
            .iter()
            .filter_map(|e| {
                e.key()
                    .split_once(SEP)
                    .filter(|(t, _)| *t == topic)
                    .map(|(_, g)| g.to_string())
            })
            .collect()
    }

    pub fn remove_group(&self, group: &str) {
        if let Some(l) = self.lmq_of(group) {
            l.retain(|k, _| k.split_once(SEP).map(|(_, g)| g) != Some(group));
        }
        self.table
            .retain(|k, _| k.split_once(SEP).map(|(_, g)| g) != Some(group));
        self.pull
            .retain(|k, _| k.split_once(SEP).map(|(_, g)| g) != Some(group));
        *self.dirty.lock() = true;
    }

    /// `topic@group` entries (GET_BROKER_LITE_INFO's offsetTableSize).
    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// One group's offsets of one topic (Java `removeConsumerOffset("<topic>@<group>")`).
    pub fn remove_offset(&self, group: &str, topic: &str) {
        let k = key(topic, group);
        if let Some(l) = self.lmq_of(group) {
            l.remove(&k);
        }
        self.table.remove(&k);
        self.pull.remove(&k);
        *self.dirty.lock() = true;
    }

    pub fn remove_topic(&self, topic: &str) {
        if let Some(l) = &self.lmq {
            l.retain(|k, _| k.split_once(SEP).map(|(t, _)| t) != Some(topic));
        }
        self.table
            .retain(|k, _| k.split_once(SEP).map(|(t, _)| t) != Some(topic));
        self.pull
            .retain(|k, _| k.split_once(SEP).map(|(t, _)| t) != Some(topic));
        *self.dirty.lock() = true;
    }

    /// Records a server-side reset; also commits it so a restarted consumer starts there.
    pub fn request_reset(&self, group: &str, topic: &str, offsets: &HashMap<i32, i64>) {
        let k = key(topic, group);
        self.reset.insert(k.clone(), offsets.clone());
        let mut committed = self.table.entry(k).or_default();
        committed.extend(offsets.iter().map(|(q, o)| (*q, *o)));
        *self.dirty.lock() = true;
    }

    /// Whether a server-side reset of this queue waits for the consumer's next pull.
    pub fn has_reset(&self, group: &str, topic: &str, queue_id: i32) -> bool {
        !self.reset.is_empty()
            && self
                .reset
                .get(&key(topic, group))
                .is_some_and(|m| m.contains_key(&queue_id))
    }

    /// Takes the pending reset offset of one queue, if any.
    pub fn take_reset(&self, group: &str, topic: &str, queue_id: i32) -> Option<i64> {
        if self.reset.is_empty() {
            return None;
        }
        let k = key(topic, group);
        let mut entry = self.reset.get_mut(&k)?;
        let v = entry.remove(&queue_id);
        let empty = entry.is_empty();
        drop(entry);
        if empty {
            self.reset.remove(&k);
        }
        v
    }

    /// Writes `consumerOffset.json` when something changed since the last write.
    pub fn persist(&self) -> Result<(), MetadataError> {
        {
            let mut dirty = self.dirty.lock();
            if !*dirty {
                return Ok(());
            }
            *dirty = false;
        }
        let written = self.file.persist_with(|| {
            if let Some(kv) = &self.kv {
                let version = *self.version.lock();
                let values = self
                    .table
                    .iter()
                    .filter_map(|e| {
                        let v = OffsetValue {
                            offset_table: e.value().iter().map(|(q, o)| (*q, *o)).collect(),
                        };
                        serde_json::to_vec(&v).ok().map(|b| (e.key().clone(), b))
                    })
                    .collect();
                kv.write(values, Default::default(), &version)?;
            }
            Ok(self.encode())
        });
        if written.is_err() {
            *self.dirty.lock() = true; // the next tick retries
        }
        written
    }

    /// The Java shape, `{"dataVersion":…,"groupTopicMap":…,"offsetTable":{"topic@group":{"0":12}}}`
    /// (quoted integer keys: standard JSON, which Java's fastjson reads back).
    pub fn encode(&self) -> String {
        let mut w = ConsumerOffsetWrapper {
            data_version: *self.version.lock(),
            offset_table: self
                .table
                .iter()
                .map(|e| {
                    (
                        e.key().clone(),
                        e.value().iter().map(|(q, o)| (*q, *o)).collect(),
                    )
                })
                .collect(),
            lmq_offset_table: self
                .lmq
                .as_ref()
                .map(|l| l.iter().map(|e| (e.key().clone(), *e.value())).collect()),
            ..Default::default()
        };
        w.derive_group_topic_map();
        config_files::to_fastjson_pretty(&w)
    }
}

/// Reads `offsetTable` from consumerOffset.json text, with or without quoted integer keys.
pub fn parse_offset_table(
    text: &str,
) -> Result<HashMap<String, HashMap<i32, i64>>, serde_json::Error> {
    let w: ConsumerOffsetWrapper = config_files::from_fastjson(text)?;
    Ok(w.offset_table
        .into_iter()
        .map(|(k, m)| (k, m.into_iter().collect()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fastjson_unquoted_keys_and_writes_them_back() {
        let text = "{\"offsetTable\":{\"T@G\":{0:12,1:7},\"%RETRY%G@G\":{0:0}}}";
        let t = parse_offset_table(text).unwrap();
        assert_eq!(t["T@G"][&1], 7);
        assert_eq!(t["%RETRY%G@G"][&0], 0);
        let quoted = parse_offset_table("{\"offsetTable\":{\"T@G\":{\"3\":5}}}").unwrap();
        assert_eq!(quoted["T@G"][&3], 5);
    }

    #[test]
    fn encodes_the_java_shape_and_reads_it_back() {
        let dir = tempfile::tempdir().unwrap();
        let m = ConsumerOffsetManager::load(dir.path().join("consumerOffset.json")).unwrap();
        m.commit("G", "T", 3, 42);
        let text = m.encode();
        assert!(
            text.contains("\"offsetTable\"") && text.contains("\"groupTopicMap\""),
            "{text}"
        );
        assert_eq!(parse_offset_table(&text).unwrap()["T@G"][&3], 42);
    }

    /// Java `versionChangeCounter`: the data version moves on every 500th commit, is written to
    /// the file, and is read back at the next start.
    #[test]
    fn data_version_moves_once_per_step_and_survives_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("consumerOffset.json");
        let m = ConsumerOffsetManager::load(path.clone()).unwrap();
        for i in 0..VERSION_STEP as i64 - 1 {
            m.commit("G", "T", 0, i);
        }
        assert_eq!(m.data_version().counter, 0);
        m.commit("G", "T", 0, 1000);
        assert_eq!(m.data_version().counter, 1);
        m.persist().unwrap();
        let again = ConsumerOffsetManager::load(path).unwrap();
        assert_eq!(again.data_version().counter, 1);
        assert_eq!(again.query("G", "T", 0), Some(1000));
    }
}
