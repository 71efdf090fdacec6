//! Half messages per real topic, as Java's `TransactionMetrics` keeps them: `+1` when a half
//! message is stored, `-1` when END_TRANSACTION commits or rolls it back or the check service
//! discards it. The counts outlive restarts in `config/transactionMetrics` (fastjson:
//! `{"dataVersion":{..},"transactionCount":{"<topic>":{"count":n,"timeStamp":ms}}}`), written
//! every `transactionMetricFlushInterval` and at shutdown, so `rocketmq_half_messages` reports
//! what a Java broker on the same store would.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::broker::metadata::persist::JsonFile;
use crate::common::data_version::DataVersion;

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default)]
pub struct Metric {
    pub count: i64,
    pub time_stamp: i64,
}

impl Default for Metric {
    fn default() -> Self {
        Self {
            count: 0,
            time_stamp: crate::broker::now_millis(),
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Wrapper {
    data_version: DataVersion,
    transaction_count: BTreeMap<String, Metric>,
}

pub struct TransactionCounts {
    state: Mutex<Wrapper>,
    dirty: AtomicBool,
    file: Option<JsonFile>,
}

impl TransactionCounts {
    /// Counts kept in memory only (tests, tools).
    pub fn in_memory() -> Self {
        Self {
            state: Mutex::new(Wrapper::default()),
            dirty: AtomicBool::new(false),
            file: None,
        }
    }

    /// Loads `path` (or its `.bak`); a file that does not parse is logged and started over, as
    /// Java's `ConfigManager.load` does.
    pub fn load(path: PathBuf) -> Self {
        let file = JsonFile::new(path);
        let state = match file.load() {
            Some(text) => match serde_json::from_str::<serde_json::Value>(&text)
                .and_then(crate::common::lenient::from_value::<Wrapper>)
            {
                Ok(w) => w,
                Err(e) => {
                    tracing::error!(path = %file.path().display(), error = %e,
                        "transactionMetrics does not parse; half-message counts start at 0");
                    Wrapper::default()
                }
            },
            None => Wrapper::default(),
        };
        Self {
            state: Mutex::new(state),
            dirty: AtomicBool::new(false),
            file: Some(file),
        }
    }

    /// Java `addAndGet`: the topic's count moves by `delta`; the data version advances.
    pub fn add(&self, topic: &str, delta: i64) -> i64 {
        let mut s = self.state.lock();
        s.data_version.next_version();
        let m = s.transaction_count.entry(topic.to_string()).or_default();
        m.time_stamp = crate::broker::now_millis();
        m.count += delta;
        let n = m.count;
        drop(s);
        self.dirty.store(true, Ordering::Release);
        n
    }

    /// Every topic that had a half message, with its count (the `rocketmq_half_messages` gauge).
    pub fn snapshot(&self) -> Vec<(String, i64)> {
        self.state
            .lock()
            .transaction_count
            .iter()
            .map(|(t, m)| (t.clone(), m.count))
            .collect()
    }

    /// Writes the file when a count changed since the last write.
    pub fn persist(&self) {
        let Some(file) = &self.file else { return };
        if !self.dirty.swap(false, Ordering::AcqRel) {
            return;
        }
        let r = file.persist(|| {
            let s = self.state.lock();
            serde_json::to_string(&*s).unwrap_or_default()
        });
        if let Err(e) = r {
            self.dirty.store(true, Ordering::Release);
            tracing::error!(error = %e, "cannot write transactionMetrics");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_survive_a_reload_in_javas_shape() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("transactionMetrics");
        let c = TransactionCounts::load(path.clone());
        assert_eq!(c.add("Orders", 1), 1);
        assert_eq!(c.add("Orders", 1), 2);
        assert_eq!(c.add("Orders", -1), 1);
        c.add("Pay", 1);
        c.persist();
        let text = std::fs::read_to_string(&path).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["transactionCount"]["Orders"]["count"], 1);
        assert!(
            v["transactionCount"]["Orders"]["timeStamp"]
                .as_i64()
                .unwrap()
                > 0
        );
        assert_eq!(v["dataVersion"]["counter"], 4);
        let again = TransactionCounts::load(path);
        assert_eq!(
            again.snapshot(),
            [("Orders".to_string(), 1), ("Pay".to_string(), 1)]
        );
    }

    #[test]
    fn a_file_java_wrote_is_read_and_garbage_starts_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("transactionMetrics");
        std::fs::write(
            &path,
            r#"{"dataVersion":{"counter":7,"stateVersion":0,"timestamp":1700000000000},"transactionCount":{"T":{"count":"3","timeStamp":1700000000000},"U":{"count":0}},"extra":1}"#,
        )
        .unwrap();
        let c = TransactionCounts::load(path.clone());
        assert_eq!(c.snapshot(), [("T".to_string(), 3), ("U".to_string(), 0)]);
        std::fs::write(&path, "not json").unwrap();
        std::fs::remove_file(dir.path().join("transactionMetrics.bak")).ok();
        assert!(TransactionCounts::load(path).snapshot().is_empty());
    }
}
