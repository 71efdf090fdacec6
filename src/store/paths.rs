//! The one place on-disk paths and file names of the store are built and parsed.

use std::path::{Path, PathBuf};

/// Every path of one store directory (`ROOT`).
#[derive(Debug, Clone)]
pub struct StorePaths {
    root: PathBuf,
    commit_log: PathBuf,
}

impl StorePaths {
    /// Paths for `root`, with the commit log at `commit_log` or `ROOT/commitlog`.
    pub fn new(root: impl Into<PathBuf>, commit_log: Option<&str>) -> Self {
        let root = root.into();
        let commit_log = commit_log
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("commitlog"));
        StorePaths { root, commit_log }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
    pub fn commit_log_dir(&self) -> &Path {
        &self.commit_log
    }
    pub fn consume_queue_root(&self) -> PathBuf {
        self.root.join("consumequeue")
    }
    /// `ROOT/consumequeue_rocksdb`: the RocksDB consume queue when
    /// `useSeparateStorePathForRocksdbCQ` is on (Java `getStorePathRocksDBConsumeQueue`); by
    /// default the RocksDB lives in `consume_queue_root()` itself.
    pub fn consume_queue_rocksdb(&self) -> PathBuf {
        self.root.join("consumequeue_rocksdb")
    }
    pub fn consume_queue_topic_dir(&self, topic: &str) -> PathBuf {
        self.consume_queue_root().join(topic)
    }
    pub fn consume_queue_dir(&self, topic: &str, queue_id: i32) -> PathBuf {
        self.consume_queue_topic_dir(topic)
            .join(queue_id.to_string())
    }
    pub fn index_dir(&self) -> PathBuf {
        self.root.join("index")
    }
    pub fn checkpoint(&self) -> PathBuf {
        self.root.join("checkpoint")
    }
    pub fn abort(&self) -> PathBuf {
        self.root.join("abort")
    }
    pub fn lock(&self) -> PathBuf {
        self.root.join("lock")
    }
    pub fn config_dir(&self) -> PathBuf {
        self.root.join("config")
    }
    pub fn topics_json(&self) -> PathBuf {
        self.config_dir().join("topics.json")
    }
    pub fn consumer_offset_json(&self) -> PathBuf {
        self.config_dir().join("consumerOffset.json")
    }
    pub fn subscription_group_json(&self) -> PathBuf {
        self.config_dir().join("subscriptionGroup.json")
    }
    pub fn delay_offset_json(&self) -> PathBuf {
        self.config_dir().join("delayOffset.json")
    }
    /// `ROOT/config/<name>`: a config RocksDB of Java 5.5.0's `storeType=defaultRocksDB`
    /// (`topics`, `subscriptionGroups`, `consumerOffsets`, or `metadata` with
    /// `useSingleRocksDBForAllConfigs`; Java `rocksdbConfigFilePath`).
    pub fn config_rocksdb(&self, name: &str) -> PathBuf {
        self.config_dir().join(name)
    }
}

pub use crate::common::json_file::{bak_path, tmp_path};

/// The `CURRENT` file that marks a directory as a RocksDB database (Java's
/// `RocksDBConsumeQueueStore` refuses to start when the other consume-queue path has one).
pub fn rocksdb_current(db_dir: &Path) -> PathBuf {
    db_dir.join("CURRENT")
}

/// Java's `UtilAll.offset2FileName`: 20-digit zero-padded decimal.
pub fn offset_file_name(offset: i64) -> String {
    format!("{offset:020}")
}

/// Parses a 20-digit (any-length decimal, as `Long.parseLong`) file name.
pub fn parse_offset_file_name(name: &str) -> Option<i64> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    name.parse().ok()
}

/// Index file name: local time `yyyyMMddHHmmssSSS` of `ms`.
pub fn index_file_name(ms: i64) -> String {
    let t = crate::store::util::local_time(ms);
    format!(
        "{:04}{:02}{:02}{:02}{:02}{:02}{:03}",
        t.year, t.month, t.day, t.hour, t.minute, t.second, t.millis
    )
}
