//! `RocksCqStore`: the RocksDB database of Java 5.5.0's `storeType=defaultRocksDB` consume
//! queue (`RocksDBConsumeQueueStore` + `ConsumeQueueRocksDBStorage`), opened with Java's on-disk
//! options so that either broker can open what the other wrote.
//!
//! Contract, as in Java: exactly the column families `default` (units) and `offset` (max/min
//! keys and the dispatch checkpoint); every write goes with the WAL off, so a crash loses what
//! was not flushed and recovery re-dispatches from the checkpoint; `atomic_flush` keeps the two
//! column families consistent on RocksDB's own flushes, and `flush` writes the units before the
//! offsets so a crash between the two never leaves a `max` or checkpoint ahead of its units.
//! Options are always given explicitly (never loaded from the `OPTIONS-*` file Java wrote), and
//! tables use `format_version` 5, which RocksDB 8.4.4 (Java 5.5.0) reads.

use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::sync::Arc;

use rocksdb::compaction_filter::{CompactionFilter, Decision};
use rocksdb::compaction_filter_factory::{CompactionFilterContext, CompactionFilterFactory};
use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, BottommostLevelCompaction, ColumnFamily,
    ColumnFamilyDescriptor, CompactOptions, DBCompactionStyle, DBCompressionType, DBRecoveryMode,
    DataBlockIndexType, Direction, FlushOptions, IteratorMode, Options, ReadOptions,
    UniversalCompactOptions, UniversalCompactionStopStyle, WriteBatch, WriteOptions, DB,
};

use super::rocksdb_codec::{
    checkpoint_key, decode_checkpoint_value, decode_cq_value, decode_offset_key,
    decode_offset_value, encode_cq_key, encode_offset_key, encode_offset_value, queue_range_bounds,
    CqValue, OffsetKind, PhyAndCqOffset, RocksCqCodecError, CF_DEFAULT, CF_OFFSET, CQ_VALUE_LEN,
    OFFSET_VALUE_LEN,
};
use super::rocksdb_table::{min_cq_offset, plan_batch, search_by_time, DispatchEntry};
use crate::common::topic::is_lmq;
use crate::store::get::BoundaryType;
use crate::store::paths::{self, StorePaths};

/// Errors of the RocksDB consume queue; each names the database directory.
#[derive(Debug, thiserror::Error)]
pub enum RocksCqError {
    #[error("RocksDB consume queue {path}: {source}")]
    Rocks {
        path: PathBuf,
        #[source]
        source: rocksdb::Error,
    },
    #[error("RocksDB consume queue {path}: {source}")]
    Codec {
        path: PathBuf,
        #[source]
        source: RocksCqCodecError,
    },
    #[error("RocksDB consume queue {path}: column family {name} is not open")]
    MissingColumnFamily { path: PathBuf, name: &'static str },
    #[error(
        "found a RocksDB consume queue at {other} while useSeparateStorePathForRocksdbCQ selects \
         {path}; maybe an incompatible config (Java refuses to start too)"
    )]
    OtherPathInUse { path: PathBuf, other: PathBuf },
    #[error("cannot create {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

pub type Result<T> = std::result::Result<T, RocksCqError>;

/// A queue's `max` key as loaded at start (Java `loadMaxConsumeQueueOffsets`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueMax {
    pub topic: String,
    pub queue_id: i32,
    /// Record start and cq offset (inclusive) of the queue's last unit.
    pub max: PhyAndCqOffset,
}

/// Every `max` key of the offset CF, and how many of them are LMQs (Java `lmqCounter`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MaxOffsets {
    pub queues: Vec<QueueMax>,
    pub lmq_count: usize,
}

/// The RocksDB consume queue database. `Send + Sync`.
pub struct RocksCqStore {
    db: DB,
    path: PathBuf,
    /// The commit log's min offset: compactions drop units of records before it.
    min_phy_offset: Arc<AtomicI64>,
    /// Moves on (from 1, never 0) each time `min_phy_offset` changes: a queue knows its min
    /// offset is corrected against the current one by the generation it was corrected at.
    min_generation: AtomicU32,
}

/// Drops units whose record lies before the commit log's min offset (the rocketmq-rocksdb
/// fork's `RemoveConsumeQueueCompactionFilter`); values shorter than a unit are kept.
struct ExpiredUnitFilter {
    min_phy_offset: i64,
}

impl CompactionFilter for ExpiredUnitFilter {
    fn filter(&mut self, _level: u32, key: &[u8], value: &[u8]) -> Decision {
        let phy = value
            .get(..8)
            .filter(|_| value.len() >= CQ_VALUE_LEN && !key.is_empty());
        match phy.and_then(|b| <[u8; 8]>::try_from(b).ok()) {
            Some(b) if i64::from_be_bytes(b) < self.min_phy_offset => Decision::Remove,
            _ => Decision::Keep,
        }
    }

    fn name(&self) -> &CStr {
        c"RemoveConsumeQueueCompactionFilter"
    }
}

/// Java `ConsumeQueueCompactionFilterFactory`: each compaction reads the min offset anew.
struct ExpiredUnitFilterFactory(Arc<AtomicI64>);

impl CompactionFilterFactory for ExpiredUnitFilterFactory {
    type Filter = ExpiredUnitFilter;

    fn create(&mut self, _context: CompactionFilterContext) -> ExpiredUnitFilter {
        ExpiredUnitFilter {
            min_phy_offset: self.0.load(Ordering::Acquire),
        }
    }

    fn name(&self) -> &CStr {
        c"ConsumeQueueCompactionFilterFactory"
    }
}

/// Java `RocksDBOptionsFactory.createCQCFOptions` (default compression settings: LZ4, ZSTD at
/// the bottom); the tuning values are Java's too.
fn unit_cf_options(min_phy_offset: &Arc<AtomicI64>) -> Options {
    let mut t = BlockBasedOptions::default();
    t.set_format_version(5);
    t.set_index_type(BlockBasedIndexType::BinarySearch);
    t.set_data_block_index_type(DataBlockIndexType::BinaryAndHash);
    t.set_data_block_hash_ratio(0.75);
    t.set_block_size(32 * 1024);
    t.set_metadata_block_size(4 * 1024);
    t.set_bloom_filter(16.0, false);
    t.set_whole_key_filtering(true);
    let mut u = UniversalCompactOptions::default();
    u.set_size_ratio(100);
    u.set_max_size_amplification_percent(25);
    u.set_min_merge_width(2);
    u.set_stop_style(UniversalCompactionStopStyle::Total);
    u.set_compression_size_percent(-1);
    let mut o = Options::default();
    o.set_block_based_table_factory(&t);
    o.set_compression_type(DBCompressionType::Lz4);
    o.set_bottommost_compression_type(DBCompressionType::Zstd);
    o.set_compaction_style(DBCompactionStyle::Universal);
    o.set_universal_compaction_options(&u);
    o.set_num_levels(7);
    o.set_level_zero_file_num_compaction_trigger(2);
    o.set_write_buffer_size(128 << 20);
    o.set_max_write_buffer_number(4);
    o.set_optimize_filters_for_hits(true);
    o.set_report_bg_io_stats(true);
    o.set_compaction_filter_factory(ExpiredUnitFilterFactory(Arc::clone(min_phy_offset)));
    o
}

/// Java `createOffsetCFOptions`: no compression, level compaction, in-place updates.
fn offset_cf_options() -> Options {
    let mut t = BlockBasedOptions::default();
    t.set_format_version(5);
    t.set_index_type(BlockBasedIndexType::BinarySearch);
    t.set_data_block_index_type(DataBlockIndexType::BinarySearch);
    t.set_block_size(32 * 1024);
    t.set_bloom_filter(16.0, false);
    t.set_whole_key_filtering(true);
    let mut o = Options::default();
    o.set_block_based_table_factory(&t);
    o.set_compression_type(DBCompressionType::None);
    o.set_compaction_style(DBCompactionStyle::Level);
    o.set_num_levels(7);
    o.set_level_zero_file_num_compaction_trigger(2);
    o.set_write_buffer_size(64 << 20);
    o.set_max_write_buffer_number(4);
    o.set_max_bytes_for_level_base(256 << 20);
    o.set_inplace_update_support(true);
    o
}

/// Java `createDBOptions`: the settings with a meaning (atomic flush, manual WAL flush,
/// point-in-time recovery, paranoid checks, all files open).
fn db_options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_atomic_flush(true);
    o.set_manual_wal_flush(true);
    o.set_wal_recovery_mode(DBRecoveryMode::PointInTime);
    o.set_paranoid_checks(true);
    o.set_max_open_files(-1);
    o.set_allow_concurrent_memtable_write(false);
    o.set_keep_log_file_num(5);
    o
}

/// Java `AbstractRocksDBStorage.initWriteOptions`: no sync, no WAL.
fn write_options() -> WriteOptions {
    let mut w = WriteOptions::default();
    w.set_sync(false);
    w.disable_wal(true);
    w
}

impl RocksCqStore {
    /// Opens (creating if missing) `ROOT/consumequeue`, or `ROOT/consumequeue_rocksdb` with
    /// `separate_path`; refuses, as Java does, when the other directory holds a `CURRENT`.
    pub fn open(paths: &StorePaths, separate_path: bool) -> Result<Self> {
        let (path, other) = if separate_path {
            (paths.consume_queue_rocksdb(), paths.consume_queue_root())
        } else {
            (paths.consume_queue_root(), paths.consume_queue_rocksdb())
        };
        if paths::rocksdb_current(&other).is_file() {
            return Err(RocksCqError::OtherPathInUse { path, other });
        }
        Self::open_dir(&path)
    }

    /// Opens the database in `path` itself.
    pub fn open_dir(path: &Path) -> Result<Self> {
        std::fs::create_dir_all(path).map_err(|source| RocksCqError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let min_phy_offset = Arc::new(AtomicI64::new(0));
        let cfs = [
            ColumnFamilyDescriptor::new(CF_DEFAULT, unit_cf_options(&min_phy_offset)),
            ColumnFamilyDescriptor::new(CF_OFFSET, offset_cf_options()),
        ];
        let db = DB::open_cf_descriptors(&db_options(), path, cfs).map_err(|source| {
            RocksCqError::Rocks {
                path: path.to_path_buf(),
                source,
            }
        })?;
        let store = RocksCqStore {
            db,
            path: path.to_path_buf(),
            min_phy_offset,
            min_generation: AtomicU32::new(1),
        };
        store.cf(CF_DEFAULT)?;
        store.cf(CF_OFFSET)?;
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn cf(&self, name: &'static str) -> Result<&ColumnFamily> {
        self.db
            .cf_handle(name)
            .ok_or_else(|| RocksCqError::MissingColumnFamily {
                path: self.path.clone(),
                name,
            })
    }

    fn rocks(&self, source: rocksdb::Error) -> RocksCqError {
        RocksCqError::Rocks {
            path: self.path.clone(),
            source,
        }
    }

    fn codec(&self, source: RocksCqCodecError) -> RocksCqError {
        RocksCqError::Codec {
            path: self.path.clone(),
            source,
        }
    }

    fn write(&self, batch: WriteBatch) -> Result<()> {
        self.db
            .write_opt(batch, &write_options())
            .map_err(|e| self.rocks(e))
    }

    /// Writes one dispatch group in one batch: every unit (LMQ copies included), each touched
    /// queue's `max` and the checkpoint. An empty group writes nothing.
    pub fn put_batch(&self, entries: &[DispatchEntry<'_>]) -> Result<()> {
        let plan = plan_batch(entries).map_err(|e| self.codec(e))?;
        let Some((ck, cv)) = plan.checkpoint else {
            return Ok(());
        };
        let (units, offsets) = (self.cf(CF_DEFAULT)?, self.cf(CF_OFFSET)?);
        let mut batch = WriteBatch::default();
        for (k, v) in &plan.units {
            batch.put_cf(units, k, v);
        }
        for (k, v) in &plan.maxes {
            batch.put_cf(offsets, k, v);
        }
        batch.put_cf(offsets, ck, cv);
        self.write(batch)
    }

    /// The unit at `cq_offset`, if present.
    pub fn get_unit(&self, topic: &str, queue_id: i32, cq_offset: i64) -> Result<Option<CqValue>> {
        let key = encode_cq_key(topic, queue_id, cq_offset).map_err(|e| self.codec(e))?;
        let v = self
            .db
            .get_pinned_cf(self.cf(CF_DEFAULT)?, key)
            .map_err(|e| self.rocks(e))?;
        v.map(|v| decode_cq_value(&v).map_err(|e| self.codec(e)))
            .transpose()
    }

    /// Up to `num` consecutive units from `start`, stopping at the first missing one (Java
    /// `RocksDBConsumeQueueTable.rangeQuery`). One iterator seek and `num - 1` steps: a
    /// multi-get searches the memtable once per key, which a pull of 32 from a deep queue felt.
    pub fn get_units(
        &self,
        topic: &str,
        queue_id: i32,
        start: i64,
        num: usize,
    ) -> Result<Vec<CqValue>> {
        let cf = self.cf(CF_DEFAULT)?;
        let first = encode_cq_key(topic, queue_id, start).map_err(|e| self.codec(e))?;
        let end = encode_cq_key(topic, queue_id, start.saturating_add(num as i64))
            .map_err(|e| self.codec(e))?;
        let mut ro = ReadOptions::default();
        ro.set_iterate_upper_bound(end);
        let mut out = Vec::with_capacity(num);
        let it = self
            .db
            .iterator_cf_opt(cf, ro, IteratorMode::From(&first, Direction::Forward));
        for item in it {
            let (k, v) = item.map_err(|e| self.rocks(e))?;
            let want = encode_cq_key(topic, queue_id, start.saturating_add(out.len() as i64))
                .map_err(|e| self.codec(e))?;
            if *k != *want {
                break; // a hole: the units stop here
            }
            out.push(decode_cq_value(&v).map_err(|e| self.codec(e))?);
            if out.len() == num {
                break;
            }
        }
        Ok(out)
    }

    fn get_offset(
        &self,
        topic: &str,
        kind: OffsetKind,
        queue_id: i32,
    ) -> Result<Option<PhyAndCqOffset>> {
        let key = encode_offset_key(topic, kind, queue_id).map_err(|e| self.codec(e))?;
        let v = self
            .db
            .get_pinned_cf(self.cf(CF_OFFSET)?, key)
            .map_err(|e| self.rocks(e))?;
        v.map(|v| decode_offset_value(&v).map_err(|e| self.codec(e)))
            .transpose()
    }

    /// A queue's `max` key: its last unit's record start and cq offset.
    pub fn max_phy_and_cq_offset(
        &self,
        topic: &str,
        queue_id: i32,
    ) -> Result<Option<PhyAndCqOffset>> {
        self.get_offset(topic, OffsetKind::Max, queue_id)
    }

    /// The next cq offset to write: `max + 1`, or 0 for a queue without units.
    pub fn max_offset_in_queue(&self, topic: &str, queue_id: i32) -> Result<i64> {
        let max = self.max_phy_and_cq_offset(topic, queue_id)?;
        Ok(max.map_or(0, |m| m.cq_offset + 1))
    }

    /// The first cq offset whose record is still in the commit log (which starts at
    /// `commit_log_min_offset`), corrected and stored lazily as Java's `getMinCqOffset` does.
    pub fn min_offset_in_queue(
        &self,
        topic: &str,
        queue_id: i32,
        commit_log_min_offset: i64,
    ) -> Result<i64> {
        let stored = self.get_offset(topic, OffsetKind::Min, queue_id)?;
        let max = self.max_phy_and_cq_offset(topic, queue_id)?;
        let get = |i| self.get_unit(topic, queue_id, i);
        let m = min_cq_offset(stored, max, commit_log_min_offset, get)?;
        if let Some(v) = m.write {
            let key =
                encode_offset_key(topic, OffsetKind::Min, queue_id).map_err(|e| self.codec(e))?;
            let mut batch = WriteBatch::default();
            batch.put_cf(self.cf(CF_OFFSET)?, key, encode_offset_value(&v));
            self.write(batch)?;
        }
        Ok(m.cq_offset)
    }

    /// The dispatch checkpoint: end offset of the furthest dispatched record, 0 if none.
    pub fn checkpoint(&self) -> Result<i64> {
        let v = self
            .db
            .get_pinned_cf(self.cf(CF_OFFSET)?, checkpoint_key())
            .map_err(|e| self.rocks(e))?;
        v.map_or(Ok(0), |v| {
            decode_checkpoint_value(&v).map_err(|e| self.codec(e))
        })
    }

    /// Java `getOffsetInQueueByTime`: a binary search on the units' store timestamps between
    /// the (corrected) min and the max; 0 for a queue without a `max`.
    pub fn offset_in_queue_by_time(
        &self,
        topic: &str,
        queue_id: i32,
        timestamp: i64,
        commit_log_min_offset: i64,
        boundary: BoundaryType,
    ) -> Result<i64> {
        let low = self.min_offset_in_queue(topic, queue_id, commit_log_min_offset)?;
        let Some(max) = self.max_phy_and_cq_offset(topic, queue_id)? else {
            return Ok(0);
        };
        if max.cq_offset == -1 {
            return Ok(0);
        }
        let get = |i| self.get_unit(topic, queue_id, i);
        search_by_time(
            low,
            max.cq_offset,
            timestamp,
            commit_log_min_offset,
            boundary,
            get,
        )
    }

    /// Removes a queue in one batch: a range delete over its units and its `min`/`max` keys
    /// (Java `RocksDBConsumeQueueStore.destroy`).
    pub fn destroy_queue(&self, topic: &str, queue_id: i32) -> Result<()> {
        let (start, end) = queue_range_bounds(topic, queue_id).map_err(|e| self.codec(e))?;
        let offsets = self.cf(CF_OFFSET)?;
        let mut batch = WriteBatch::default();
        batch.delete_range_cf(self.cf(CF_DEFAULT)?, start, end);
        for kind in [OffsetKind::Min, OffsetKind::Max] {
            let key = encode_offset_key(topic, kind, queue_id).map_err(|e| self.codec(e))?;
            batch.delete_cf(offsets, key);
        }
        self.write(batch)
    }

    /// Deletes a queue's units `[from, to)` and sets its `max` to `keep` (deleted with `None`),
    /// in one batch: truncation past the commit log's recovered end.
    pub fn truncate_queue(
        &self,
        topic: &str,
        queue_id: i32,
        from: i64,
        to: i64,
        keep: Option<PhyAndCqOffset>,
    ) -> Result<()> {
        let units = self.cf(CF_DEFAULT)?;
        let offsets = self.cf(CF_OFFSET)?;
        let mut batch = WriteBatch::default();
        if from < to {
            let start = encode_cq_key(topic, queue_id, from).map_err(|e| self.codec(e))?;
            let end = encode_cq_key(topic, queue_id, to).map_err(|e| self.codec(e))?;
            batch.delete_range_cf(units, start, end);
        }
        let key = encode_offset_key(topic, OffsetKind::Max, queue_id).map_err(|e| self.codec(e))?;
        match keep {
            Some(v) => batch.put_cf(offsets, key, encode_offset_value(&v)),
            None => batch.delete_cf(offsets, key),
        }
        self.write(batch)
    }

    /// Moves the dispatch checkpoint back to `end` if it lies past it (after truncation).
    pub fn lower_checkpoint(&self, end: i64) -> Result<()> {
        if self.checkpoint()? <= end {
            return Ok(());
        }
        let mut batch = WriteBatch::default();
        batch.put_cf(
            self.cf(CF_OFFSET)?,
            checkpoint_key(),
            super::rocksdb_codec::encode_checkpoint_value(end),
        );
        self.write(batch)
    }

    /// Every `max` key of the offset CF (Java `loadMaxConsumeQueueOffsets`): 16-byte values
    /// only (the checkpoint's 8 bytes are skipped, as in Java); a malformed key is logged and
    /// skipped.
    pub fn load_max_offsets(&self) -> Result<MaxOffsets> {
        let mut out = MaxOffsets::default();
        self.for_each_max_offset(|topic, queue_id, max| {
            out.lmq_count += usize::from(is_lmq(topic));
            out.queues.push(QueueMax {
                topic: topic.to_string(),
                queue_id,
                max,
            });
        })?;
        Ok(out)
    }

    /// Calls `f` with each `max` key of the offset CF. Reads keys in place (a raw iterator):
    /// a start with a million lite queues allocates nothing per key but what `f` keeps. The
    /// scan does not fill the block cache: it reads each block once, and caching them all
    /// would hold memory per lite queue, up to the cache's size, that no later read needs.
    pub fn for_each_max_offset(&self, mut f: impl FnMut(&str, i32, PhyAndCqOffset)) -> Result<()> {
        let mut once = ReadOptions::default();
        once.fill_cache(false);
        let mut it = self.db.raw_iterator_cf_opt(self.cf(CF_OFFSET)?, once);
        it.seek_to_first();
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            if v.len() == OFFSET_VALUE_LEN {
                match (decode_offset_key(k), decode_offset_value(v)) {
                    (Ok(key), Ok(max)) if key.kind == OffsetKind::Max => {
                        f(key.topic, key.queue_id, max)
                    }
                    (Ok(_), Ok(_)) => {}
                    (Err(e), _) | (_, Err(e)) => {
                        tracing::warn!(path = %self.path.display(), error = %e, "skipping a malformed offset-CF entry");
                    }
                }
            }
            it.next();
        }
        it.status().map_err(|e| self.rocks(e))
    }

    /// Sets the commit log's min offset that compactions expire units against.
    pub fn set_min_phy_offset(&self, min_phy_offset: i64) {
        if self.min_phy_offset.swap(min_phy_offset, Ordering::AcqRel) != min_phy_offset {
            let next = |g: u32| Some(g.wrapping_add(1).max(1));
            let _ = self
                .min_generation
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, next);
        }
    }

    /// The commit log's min offset as last set, and its generation (read in that order: a
    /// change between the two reads only makes the next reader correct again).
    pub fn min_phy_offset_and_generation(&self) -> (u32, i64) {
        let generation = self.min_generation.load(Ordering::Acquire);
        (generation, self.min_phy_offset.load(Ordering::Acquire))
    }

    /// The commit log's min offset as last set.
    pub fn min_phy_offset(&self) -> i64 {
        self.min_phy_offset.load(Ordering::Acquire)
    }

    /// Java `cleanExpired`: a forced full compaction of the units with the filter at
    /// `min_phy_offset` (synchronous here; Java runs it on a one-slot executor).
    pub fn clean_expired(&self, min_phy_offset: i64) -> Result<()> {
        self.set_min_phy_offset(min_phy_offset);
        let mut o = CompactOptions::default();
        o.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
        o.set_change_level(true);
        o.set_target_level(-1);
        o.set_exclusive_manual_compaction(false);
        let cf = self.cf(CF_DEFAULT)?;
        self.db
            .compact_range_cf_opt(cf, None::<&[u8]>, None::<&[u8]>, &o);
        Ok(())
    }

    /// Flushes the memtables and waits: units first, then the offsets (see the module doc).
    pub fn flush(&self) -> Result<()> {
        let mut o = FlushOptions::default();
        o.set_wait(true);
        for name in [CF_DEFAULT, CF_OFFSET] {
            self.db
                .flush_cf_opt(self.cf(name)?, &o)
                .map_err(|e| self.rocks(e))?;
        }
        Ok(())
    }
}

impl Drop for RocksCqStore {
    /// Java's shutdown: flush with wait (the WAL is off, so unflushed writes would be lost),
    /// then stop background work before the database closes.
    fn drop(&mut self) {
        if let Err(e) = self.flush() {
            tracing::error!(error = %e, "RocksDB consume queue flush at close failed");
        }
        self.db.cancel_all_background_work(true);
    }
}
