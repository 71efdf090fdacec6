//! `storeType=defaultRocksDB`: the metadata tables kept where Java 5.5.0 keeps them, in its
//! config RocksDBs (`store::config_files::kv`), next to the JSON files.
//!
//! Contract (Java `RocksDB{TopicConfig,SubscriptionGroup,ConsumerOffset}Manager.merge`): at
//! start the JSON file is imported over the RocksDB content only when its `dataVersion` counter
//! is greater than the RocksDB's `kvDataVersion` counter (the version then becomes the JSON's,
//! plus one); otherwise the RocksDB wins. Every persist writes the RocksDB first (puts, deletes
//! of what is gone, the version) and then the JSON with the same version, so the JSON's counter
//! never exceeds the RocksDB's and a Java broker started next never imports a stale JSON over it.
//! Without the `rocksdb-cq` feature [`KvMirror`] has no values and nothing here runs.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;

use super::MetadataError;
use crate::common::data_version::DataVersion;
use crate::store::paths::StorePaths;

/// What a table's RocksDB holds, keys as strings (entries with non-UTF-8 keys are logged and
/// skipped).
#[derive(Debug, Default)]
pub struct KvRead {
    /// `kvDataVersion`, Java's `new DataVersion()` (counter 0) when absent.
    pub version: DataVersion,
    pub entries: Vec<(String, Vec<u8>)>,
    pub forbidden: Vec<(String, Vec<u8>)>,
}

impl KvRead {
    /// Java's merge rule: the JSON (its version) is imported when its counter is greater.
    pub fn json_wins(&self, json: Option<&DataVersion>) -> bool {
        json.is_some_and(|j| j.counter > self.version.counter)
    }

    /// Java 5.5.0 `migrateFromSeparateRocksDBs` (`useSingleRocksDBForAllConfigs` turned on over
    /// a store with the separate databases): this separate database's entries are imported over
    /// the table (loaded and merged with the JSON) when its counter is greater than the table's
    /// `current` version; the version then becomes this one's plus one. `None`: no import.
    pub fn migrates_over(&self, current: &DataVersion) -> Option<DataVersion> {
        (self.version.counter > current.counter).then(|| {
            let mut v = self.version;
            v.next_version();
            v
        })
    }

    /// The version after the load: the JSON's plus one when imported, else the RocksDB's.
    pub fn merged_version(&self, json: Option<&DataVersion>) -> DataVersion {
        match json {
            Some(j) if self.json_wins(Some(j)) => {
                let mut v = *j;
                v.next_version();
                v
            }
            _ => self.version,
        }
    }
}

/// Decodes the values of `entries` as `T` (fastjson's dialect); an entry that does not decode is
/// logged and skipped.
pub fn decode_entries<T: DeserializeOwned>(
    what: &str,
    entries: &[(String, Vec<u8>)],
) -> Vec<(String, T)> {
    entries
        .iter()
        .filter_map(|(k, v)| {
            let text = std::str::from_utf8(v).map_err(|e| e.to_string());
            match text.and_then(|t| crate::common::fastjson::from_str(t).map_err(|e| e.to_string())) {
                Ok(t) => Some((k.clone(), t)),
                Err(e) => {
                    tracing::warn!(key = %k, error = %e, "skipping a {what} entry of the config RocksDB that does not decode");
                    None
                }
            }
        })
        .collect()
}

/// Key -> value bytes of one column family, as written.
pub type KvValues = BTreeMap<String, Vec<u8>>;

#[cfg(feature = "rocksdb-cq")]
mod imp {
    use super::*;
    use crate::store::config_files::kv::{ConfigKvTable, ConfigKvTables, KvEntries};

    /// One table's RocksDB.
    pub struct KvMirror(ConfigKvTable);

    /// The three tables' RocksDBs of one store.
    pub struct KvMirrors {
        pub topics: KvMirror,
        pub groups: KvMirror,
        pub offsets: KvMirror,
    }

    impl KvMirrors {
        /// Opens them as Java 5.5.0 does (`single`: `useSingleRocksDBForAllConfigs`).
        pub fn open(paths: &StorePaths, single: bool) -> Result<Self, MetadataError> {
            let db = if single { "metadata" } else { "topics" };
            let t = ConfigKvTables::open(paths, single)
                .map_err(|e| MetadataError::persist(&paths.config_rocksdb(db), e))?;
            Ok(Self {
                topics: KvMirror(t.topics),
                groups: KvMirror(t.groups),
                offsets: KvMirror(t.offsets),
            })
        }
    }

    fn utf8_keys(path: &std::path::Path, raw: Vec<(Vec<u8>, Vec<u8>)>) -> Vec<(String, Vec<u8>)> {
        raw.into_iter()
            .filter_map(|(k, v)| match String::from_utf8(k) {
                Ok(k) => Some((k, v)),
                Err(e) => {
                    tracing::warn!(db = %path.display(), key = ?e.as_bytes(), "skipping a config RocksDB entry whose key is not UTF-8");
                    None
                }
            })
            .collect()
    }

    fn read_table(t: &ConfigKvTable) -> Result<KvRead, MetadataError> {
        let c = t
            .read()
            .map_err(|e| MetadataError::unreadable(t.path(), "config RocksDB", e))?;
        Ok(KvRead {
            version: c.version.unwrap_or_default(),
            entries: utf8_keys(t.path(), c.entries),
            forbidden: utf8_keys(t.path(), c.forbidden),
        })
    }

    fn bytes(v: KvValues) -> KvEntries {
        v.into_iter().map(|(k, v)| (k.into_bytes(), v)).collect()
    }

    impl KvMirror {
        pub fn path(&self) -> &std::path::Path {
            self.0.path()
        }

        pub fn read(&self) -> Result<KvRead, MetadataError> {
            read_table(&self.0)
        }

        /// With `useSingleRocksDBForAllConfigs`, what the separate database of this table holds,
        /// when there is one (see [`KvRead::migrates_over`]).
        pub fn read_separate(&self) -> Result<Option<KvRead>, MetadataError> {
            let source = self
                .0
                .separate_source()
                .map_err(|e| MetadataError::unreadable(self.path(), "config RocksDB", e))?;
            source.as_ref().map(read_table).transpose()
        }

        /// Makes the RocksDB hold exactly these entries at `version`.
        pub fn write(
            &self,
            entries: KvValues,
            forbidden: KvValues,
            version: &DataVersion,
        ) -> Result<(), MetadataError> {
            self.0
                .sync(bytes(entries), bytes(forbidden), version)
                .map_err(|e| MetadataError::persist(self.path(), e))
        }
    }
}

#[cfg(not(feature = "rocksdb-cq"))]
mod imp {
    use super::*;

    /// Without the `rocksdb-cq` feature there is no RocksDB: no value of this type exists.
    pub enum KvMirror {}

    pub struct KvMirrors {
        pub topics: KvMirror,
        pub groups: KvMirror,
        pub offsets: KvMirror,
    }

    impl KvMirrors {
        /// Never reached: `storeType=defaultRocksDB` is refused at config time without the feature.
        pub fn open(paths: &StorePaths, _single: bool) -> Result<Self, MetadataError> {
            Err(MetadataError::unreadable(
                &paths.config_dir(),
                "config RocksDB",
                "rmqd was built without the rocksdb-cq feature",
            ))
        }
    }

    impl KvMirror {
        pub fn path(&self) -> &std::path::Path {
            match *self {}
        }

        pub fn read(&self) -> Result<KvRead, MetadataError> {
            match *self {}
        }

        pub fn read_separate(&self) -> Result<Option<KvRead>, MetadataError> {
            match *self {}
        }

        pub fn write(
            &self,
            _entries: KvValues,
            _forbidden: KvValues,
            _version: &DataVersion,
        ) -> Result<(), MetadataError> {
            match *self {}
        }
    }
}

pub use imp::{KvMirror, KvMirrors};

/// Encodes each value as compact JSON (Java writes `JSON.toJSONBytes(value)`).
pub fn encode_values<'a, T: serde::Serialize + 'a>(
    items: impl IntoIterator<Item = (&'a String, &'a T)>,
) -> KvValues {
    items
        .into_iter()
        .filter_map(|(k, v)| serde_json::to_vec(v).ok().map(|b| (k.clone(), b)))
        .collect()
}
