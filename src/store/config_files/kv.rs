//! The config RocksDBs of Java 5.5.0's `storeType=defaultRocksDB` (`RocksDBConfigManager` over
//! `ConfigRocksDBStorage`): where that broker keeps topics, subscription groups and consumer
//! offsets instead of `config/*.json`.
//!
//! Layout (Java `rocksdbConfigFilePath`, `RocksDBConfigManager`):
//!
//! ```text
//! separate (default)           ROOT/config/topics              CF default: topic name -> TopicConfig JSON
//!                              ROOT/config/subscriptionGroups  CF default: group -> SubscriptionGroupConfig JSON
//!                                                              CF forbidden: group -> {"topic":bits}
//!                              ROOT/config/consumerOffsets     CF default: "topic@group" -> {"offsetTable":{q:off}}
//!                              each DB                         CF kvDataVersion: "kvDataVersionKey" -> DataVersion JSON
//! useSingleRocksDBForAllConfigs ROOT/config/metadata           CFs topic/topicVersion, subscriptionGroup/
//!                                                              subscriptionGroupVersion, forbidden,
//!                                                              consumerOffset/consumerOffsetVersion (+ default)
//! ```
//!
//! Keys and values are UTF-8. Writes go through the WAL (Java's `ableWalWriteOptions`) and each
//! sync ends with a synced WAL flush (Java `flushWAL`). Options are given explicitly (Java
//! `ConfigHelper.createConfig{DB,ColumnFamily}Options`), never loaded from `OPTIONS-*`; tables use
//! `format_version` 5, which RocksDB 8.4.4 (Java 5.5.0) reads. Java's `StringAppendOperator` is not
//! set: the config code never merges, and RocksDB checks no merge-operator name at open.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, ColumnFamilyDescriptor, DBCompactionStyle,
    DBCompressionType, DBRecoveryMode, DataBlockIndexType, IteratorMode, Options, WriteBatch,
    WriteOptions, DB,
};

use super::types::DataVersion;
use crate::store::error::{Result, StoreError};
use crate::store::paths::StorePaths;

/// Java `RocksDBConfigManager.KV_DATA_VERSION_COLUMN_FAMILY_NAME` (separate databases).
pub const KV_DATA_VERSION_CF: &str = "kvDataVersion";
/// Java `RocksDBConfigManager.KV_DATA_VERSION_KEY`.
pub const KV_DATA_VERSION_KEY: &[u8] = b"kvDataVersionKey";
/// Java `RocksDBSubscriptionGroupManager.FORBIDDEN_COLUMN_FAMILY_NAME` (both layouts).
pub const FORBIDDEN_CF: &str = "forbidden";
/// RocksDB's default column family.
pub const DEFAULT_CF: &str = "default";
/// `ROOT/config/metadata`: the one database of `useSingleRocksDBForAllConfigs`.
pub const SINGLE_DB: &str = "metadata";

/// The three tables Java 5.5.0 keeps in RocksDB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigTable {
    Topics,
    SubscriptionGroups,
    ConsumerOffsets,
}

impl ConfigTable {
    /// The database directory under `ROOT/config/` in the separate layout.
    pub fn separate_db(self) -> &'static str {
        match self {
            Self::Topics => "topics",
            Self::SubscriptionGroups => "subscriptionGroups",
            Self::ConsumerOffsets => "consumerOffsets",
        }
    }

    /// (data CF, version CF) of `useSingleRocksDBForAllConfigs`.
    fn single_cfs(self) -> (&'static str, &'static str) {
        match self {
            Self::Topics => ("topic", "topicVersion"),
            Self::SubscriptionGroups => ("subscriptionGroup", "subscriptionGroupVersion"),
            Self::ConsumerOffsets => ("consumerOffset", "consumerOffsetVersion"),
        }
    }

    /// (data CF, version CF, forbidden CF) in the given layout.
    fn cfs(self, single: bool) -> (&'static str, &'static str, Option<&'static str>) {
        let (data, version) = if single {
            self.single_cfs()
        } else {
            (DEFAULT_CF, KV_DATA_VERSION_CF)
        };
        let forbidden = (self == Self::SubscriptionGroups).then_some(FORBIDDEN_CF);
        (data, version, forbidden)
    }

    const ALL: [ConfigTable; 3] = [
        Self::Topics,
        Self::SubscriptionGroups,
        Self::ConsumerOffsets,
    ];
}

fn db_error(path: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError::ConfigDb(format!("config RocksDB {}: {e}", path.display()))
}

/// Java `ConfigHelper.createConfigColumnFamilyOptions` (every CF of a config database).
fn cf_options() -> Options {
    let mut t = BlockBasedOptions::default();
    t.set_format_version(5);
    t.set_index_type(BlockBasedIndexType::BinarySearch);
    t.set_data_block_index_type(DataBlockIndexType::BinarySearch);
    t.set_block_size(32 * 1024);
    t.set_bloom_filter(16.0, false);
    t.set_cache_index_and_filter_blocks(true);
    t.set_pin_top_level_index_and_filter(true);
    t.set_whole_key_filtering(true);
    let mut o = Options::default();
    o.set_block_based_table_factory(&t);
    o.set_max_write_buffer_number(4);
    o.set_write_buffer_size(64 << 20);
    o.set_min_write_buffer_number_to_merge(1);
    o.set_compression_type(DBCompressionType::None);
    o.set_num_levels(7);
    o.set_compaction_style(DBCompactionStyle::Level);
    o.set_level_zero_file_num_compaction_trigger(4);
    o.set_level_zero_slowdown_writes_trigger(8);
    o.set_level_zero_stop_writes_trigger(12);
    o.set_target_file_size_base(64 << 20);
    o.set_target_file_size_multiplier(2);
    o.set_max_bytes_for_level_base(256 << 20);
    o.set_max_bytes_for_level_multiplier(2.0);
    o.set_inplace_update_support(true);
    o
}

/// Java `ConfigHelper.createConfigDBOptions`: the settings with a meaning (manual WAL flush,
/// recovery that skips corrupted WAL records, paranoid checks, all files open). Direct I/O and
/// the rate limiter are tuning and are left out (direct I/O fails on tmpfs).
fn db_options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_manual_wal_flush(true);
    o.set_wal_recovery_mode(DBRecoveryMode::SkipAnyCorruptedRecord);
    o.set_db_write_buffer_size(128 << 20);
    o.set_bytes_per_sync(1 << 20);
    o.set_wal_bytes_per_sync(1 << 20);
    o.set_max_open_files(-1);
    o.set_max_log_file_size(1 << 30);
    o.set_keep_log_file_num(5);
    o.set_max_manifest_file_size(1 << 30);
    o.set_allow_concurrent_memtable_write(false);
    o.set_paranoid_checks(true);
    o
}

/// One config database, opened with every column family it has plus the ones asked for.
pub struct ConfigKvDb {
    db: DB,
    path: PathBuf,
}

impl ConfigKvDb {
    /// Opens (creating if missing) the database in `path` with its existing column families and
    /// `needed` (created when missing, as Java's `getOrCreateColumnFamily` would on first write).
    pub fn open(path: &Path, needed: &[&str]) -> Result<Self> {
        std::fs::create_dir_all(path).map_err(|e| StoreError::io(path, e))?;
        let mut names: Vec<String> = if super::super::paths::rocksdb_current(path).is_file() {
            DB::list_cf(&Options::default(), path).map_err(|e| db_error(path, e))?
        } else {
            Vec::new()
        };
        for n in std::iter::once(DEFAULT_CF).chain(needed.iter().copied()) {
            if !names.iter().any(|x| x == n) {
                names.push(n.to_string());
            }
        }
        let cfs = names
            .iter()
            .map(|n| ColumnFamilyDescriptor::new(n, cf_options()));
        let db =
            DB::open_cf_descriptors(&db_options(), path, cfs).map_err(|e| db_error(path, e))?;
        Ok(Self {
            db,
            path: path.to_path_buf(),
        })
    }

    /// Opens an existing database read-only with every column family it has (Java
    /// `RocksDBConfigManager.init(true)`), leaving its files as they are.
    pub fn open_read_only(path: &Path) -> Result<Self> {
        let names = DB::list_cf(&Options::default(), path).map_err(|e| db_error(path, e))?;
        let db = DB::open_cf_for_read_only(&Options::default(), path, names, false)
            .map_err(|e| db_error(path, e))?;
        Ok(Self {
            db,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every entry of one column family, in key order.
    fn entries(&self, cf: &str) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let Some(h) = self.db.cf_handle(cf) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for item in self.db.iterator_cf(h, IteratorMode::Start) {
            let (k, v) = item.map_err(|e| db_error(&self.path, e))?;
            out.push((k.into_vec(), v.into_vec()));
        }
        Ok(out)
    }

    fn get(&self, cf: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let Some(h) = self.db.cf_handle(cf) else {
            return Ok(None);
        };
        self.db.get_cf(h, key).map_err(|e| db_error(&self.path, e))
    }
}

/// What a table holds on disk, as read at start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KvContent {
    /// The `kvDataVersionKey` value, `None` when absent or unreadable (logged).
    pub version: Option<DataVersion>,
    /// The data column family: key -> value.
    pub entries: Vec<(Vec<u8>, Vec<u8>)>,
    /// The `forbidden` column family (subscription groups only).
    pub forbidden: Vec<(Vec<u8>, Vec<u8>)>,
}

/// Key -> value of one column family, as a sync writes it.
pub type KvEntries = BTreeMap<Vec<u8>, Vec<u8>>;

/// What the database holds since the last read or sync, so a sync writes only the difference.
#[derive(Default)]
struct Written {
    entries: KvEntries,
    forbidden: KvEntries,
    version: Option<Vec<u8>>,
}

/// One of the three tables in its database (shared by all three with the single layout).
pub struct ConfigKvTable {
    db: Arc<ConfigKvDb>,
    table: ConfigTable,
    data_cf: &'static str,
    version_cf: &'static str,
    forbidden_cf: Option<&'static str>,
    written: Mutex<Written>,
}

impl ConfigKvTable {
    pub fn table(&self) -> ConfigTable {
        self.table
    }

    pub fn path(&self) -> &Path {
        self.db.path()
    }

    /// With `useSingleRocksDBForAllConfigs`: this table's database of the separate layout
    /// (`ROOT/config/<table>`), opened read-only, when one exists: what Java 5.5.0's
    /// `migrateFromSeparateRocksDBs` imports from when that switch is turned on. `None` in the
    /// separate layout itself, or when there is no such database.
    pub fn separate_source(&self) -> Result<Option<ConfigKvTable>> {
        if self.data_cf == DEFAULT_CF {
            return Ok(None);
        }
        let Some(dir) = self.db.path.parent() else {
            return Ok(None);
        };
        let path = dir.join(self.table.separate_db());
        if !super::super::paths::rocksdb_current(&path).is_file() {
            return Ok(None);
        }
        let (data_cf, version_cf, forbidden_cf) = self.table.cfs(false);
        Ok(Some(ConfigKvTable {
            db: Arc::new(ConfigKvDb::open_read_only(&path)?),
            table: self.table,
            data_cf,
            version_cf,
            forbidden_cf,
            written: Mutex::new(Written::default()),
        }))
    }

    /// Reads the table (Java `loadDataVersion` + `loadData`), and remembers it as written.
    pub fn read(&self) -> Result<KvContent> {
        let entries = self.db.entries(self.data_cf)?;
        let forbidden = match self.forbidden_cf {
            Some(cf) => self.db.entries(cf)?,
            None => Vec::new(),
        };
        let raw = self.db.get(self.version_cf, KV_DATA_VERSION_KEY)?;
        let version = raw.as_deref().and_then(|b| {
            if b.iter().all(u8::is_ascii_whitespace) {
                return None; // Java: blank -> new DataVersion()
            }
            DataVersion::decode(b)
                .map_err(|e| {
                    tracing::warn!(db = %self.path().display(), error = %e,
                        "kvDataVersion does not parse; taken as counter 0")
                })
                .ok()
        });
        *self.written.lock() = Written {
            entries: entries.iter().cloned().collect(),
            forbidden: forbidden.iter().cloned().collect(),
            version: raw,
        };
        Ok(KvContent {
            version,
            entries,
            forbidden,
        })
    }

    /// Makes the table hold exactly `entries` (and `forbidden`) at `version`: puts what changed,
    /// deletes what is gone, in one WAL-logged batch, then a synced WAL flush.
    pub fn sync(
        &self,
        entries: KvEntries,
        forbidden: KvEntries,
        version: &DataVersion,
    ) -> Result<()> {
        let mut written = self.written.lock();
        let version_bytes = version.encode();
        let mut batch = WriteBatch::default();
        let db = &self.db.db;
        let handle = |cf: &str| {
            db.cf_handle(cf)
                .ok_or_else(|| db_error(self.path(), format!("column family {cf} is not open")))
        };
        diff_into(
            &mut batch,
            handle(self.data_cf)?,
            &written.entries,
            &entries,
        );
        if let Some(cf) = self.forbidden_cf {
            diff_into(&mut batch, handle(cf)?, &written.forbidden, &forbidden);
        }
        if written.version.as_deref() != Some(&version_bytes[..]) {
            batch.put_cf(
                handle(self.version_cf)?,
                KV_DATA_VERSION_KEY,
                &version_bytes,
            );
        }
        if batch.is_empty() {
            return Ok(());
        }
        let mut w = WriteOptions::default();
        w.set_sync(false);
        w.disable_wal(false);
        db.write_opt(batch, &w)
            .map_err(|e| db_error(self.path(), e))?;
        db.flush_wal(true).map_err(|e| db_error(self.path(), e))?;
        *written = Written {
            entries,
            forbidden: if self.forbidden_cf.is_some() {
                forbidden
            } else {
                KvEntries::new()
            },
            version: Some(version_bytes),
        };
        Ok(())
    }
}

fn diff_into(batch: &mut WriteBatch, cf: &rocksdb::ColumnFamily, old: &KvEntries, new: &KvEntries) {
    for (k, v) in new {
        if old.get(k) != Some(v) {
            batch.put_cf(cf, k, v);
        }
    }
    for k in old.keys().filter(|k| !new.contains_key(*k)) {
        batch.delete_cf(cf, k);
    }
}

/// The three tables of one store, opened as Java 5.5.0 opens them.
pub struct ConfigKvTables {
    pub topics: ConfigKvTable,
    pub groups: ConfigKvTable,
    pub offsets: ConfigKvTable,
}

impl ConfigKvTables {
    /// Opens `ROOT/config/{topics,subscriptionGroups,consumerOffsets}`, or `ROOT/config/metadata`
    /// with `single` (`useSingleRocksDBForAllConfigs`).
    pub fn open(paths: &StorePaths, single: bool) -> Result<Self> {
        let open_one = |t: ConfigTable, db: Arc<ConfigKvDb>| {
            let (data_cf, version_cf, forbidden_cf) = t.cfs(single);
            ConfigKvTable {
                db,
                table: t,
                data_cf,
                version_cf,
                forbidden_cf,
                written: Mutex::new(Written::default()),
            }
        };
        let dbs: Vec<Arc<ConfigKvDb>> = if single {
            let mut needed = vec![FORBIDDEN_CF];
            for t in ConfigTable::ALL {
                let (d, v) = t.single_cfs();
                needed.extend([d, v]);
            }
            let db = Arc::new(ConfigKvDb::open(&paths.config_rocksdb(SINGLE_DB), &needed)?);
            vec![db.clone(), db.clone(), db]
        } else {
            ConfigTable::ALL
                .iter()
                .map(|t| {
                    let (_, v, f) = t.cfs(false);
                    let needed: Vec<&str> = std::iter::once(v).chain(f).collect();
                    ConfigKvDb::open(&paths.config_rocksdb(t.separate_db()), &needed).map(Arc::new)
                })
                .collect::<Result<_>>()?
        };
        let mut dbs = dbs.into_iter();
        let mut next = || dbs.next().expect("three databases");
        Ok(Self {
            topics: open_one(ConfigTable::Topics, next()),
            groups: open_one(ConfigTable::SubscriptionGroups, next()),
            offsets: open_one(ConfigTable::ConsumerOffsets, next()),
        })
    }
}
