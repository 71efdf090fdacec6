//! `ConsumerOffsetManager`: committed offsets per `topic@group` and queue, kept in memory and
//! written to `consumerOffset.json` periodically and at shutdown; plus the server-side reset
//! table that the next pull of a queue turns into PULL_OFFSET_MOVED.

use std::collections::HashMap;
use std::path::PathBuf;

use dashmap::DashMap;
use parking_lot::Mutex;

use super::persist::JsonFile;
use super::MetadataError;
use crate::common::data_version::DataVersion;
use crate::store::config_files::{self, ConsumerOffsetWrapper};

const SEP: char = '@';

fn key(topic: &str, group: &str) -> String {
    format!("{topic}{SEP}{group}")
}

pub struct ConsumerOffsetManager {
    table: DashMap<String, HashMap<i32, i64>>,
    /// Offsets a reset asked for, consumed by the next pull of that queue.
    reset: DashMap<String, HashMap<i32, i64>>,
    /// Where each group's last pull of a queue ended (Java `pullOffsetTable`, in memory only).
    pull: DashMap<String, HashMap<i32, i64>>,
    file: JsonFile,
    dirty: Mutex<bool>,
}

impl ConsumerOffsetManager {
    /// Loads `consumerOffset.json` (or its `.bak`); fastjson's unquoted integer keys are accepted.
    pub fn load(path: PathBuf) -> Result<Self, MetadataError> {
        let file = JsonFile::new(path);
        let table = DashMap::new();
        if let Some(text) = file.load() {
            for (k, queues) in parse_offset_table(&text)
                .map_err(|e| MetadataError::unreadable(file.path(), "consumerOffset.json", e))?
            {
                table.insert(k, queues);
            }
        }
        Ok(Self {
            table,
            reset: DashMap::new(),
            pull: DashMap::new(),
            file,
            dirty: Mutex::new(false),
        })
    }

    pub fn commit(&self, group: &str, topic: &str, queue_id: i32, offset: i64) {
        self.table
            .entry(key(topic, group))
            .or_default()
            .insert(queue_id, offset);
        *self.dirty.lock() = true;
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
        self.table
            .get(&key(topic, group))
            .and_then(|m| m.get(&queue_id).copied())
    }

    /// Every queue's offset of a group on a topic.
    pub fn queues(&self, group: &str, topic: &str) -> HashMap<i32, i64> {
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
        self.table
            .retain(|k, _| k.split_once(SEP).map(|(_, g)| g) != Some(group));
        self.pull
            .retain(|k, _| k.split_once(SEP).map(|(_, g)| g) != Some(group));
        *self.dirty.lock() = true;
    }

    pub fn remove_topic(&self, topic: &str) {
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
        self.file.persist(|| self.encode())
    }

    /// The Java shape, `{"dataVersion":…,"groupTopicMap":…,"offsetTable":{"topic@group":{"0":12}}}`
    /// (quoted integer keys: standard JSON, which Java's fastjson reads back).
    pub fn encode(&self) -> String {
        let mut w = ConsumerOffsetWrapper {
            data_version: DataVersion::default(),
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
}
