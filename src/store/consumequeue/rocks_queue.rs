//! One consume queue of the RocksDB consume queue (`storeType=defaultRocksDB`, Java 5.5.0's
//! `RocksDBConsumeQueue`): no files, only its offsets in memory over the shared
//! [`RocksCqStore`]. A new queue costs this struct and a few keys, which is the point of lite
//! topics.
//!
//! Units are keyed by queue offset, so a unit is written at the offset its record names (Java's
//! `putMessagePosition`), never at "the current end". Re-dispatch of a record the queue already
//! holds (offset below `next`) writes nothing, so a queue's `max` key never moves back.

use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::sync::Arc;

use super::rocksdb_codec::{CqValue, PhyAndCqOffset};
use super::rocksdb_store::RocksCqStore;
use super::rocksdb_table::search_by_phy;
use super::CqUnit;
use crate::store::error::{Result, StoreError};

/// The in-memory state of one RocksDB-backed queue, 32 bytes (the database handle is the
/// niche that keeps the consume queue's backend enum this size). Where the last unit's record
/// starts is not kept: only recovery's truncation needs it, and reads it from the `max` key.
pub(crate) struct RocksQueue {
    pub(crate) db: Arc<RocksCqStore>,
    /// Next queue offset to write: the `max` key's cq offset + 1 (0 without units).
    next: AtomicI64,
    /// First queue offset, as corrected against the commit-log min offset of generation
    /// `min_checked`.
    min: AtomicI64,
    queue_id: i32,
    /// The generation of the commit log's min offset (`RocksCqStore::min_generation`) `min` was
    /// corrected at (0: never; corrected lazily, as Java's `getMinCqOffset` does, so a cleanup
    /// pass costs nothing per queue).
    min_checked: AtomicU32,
}

pub(crate) fn db_error(e: super::rocksdb_store::RocksCqError) -> StoreError {
    StoreError::ConsumeQueueDb(e.to_string())
}

impl RocksQueue {
    /// A queue whose `max` key was loaded at start (`None`: a queue without units yet).
    pub(crate) fn new(db: Arc<RocksCqStore>, queue_id: i32, max: Option<PhyAndCqOffset>) -> Self {
        RocksQueue {
            db,
            next: AtomicI64::new(max.map_or(0, |m| m.cq_offset + 1)),
            min: AtomicI64::new(0),
            queue_id,
            min_checked: AtomicU32::new(0),
        }
    }

    pub(crate) fn queue_id(&self) -> i32 {
        self.queue_id
    }

    pub(crate) fn next(&self) -> i64 {
        self.next.load(Ordering::Acquire)
    }

    /// Whether a unit at `queue_offset` is new to this queue (dispatch writes only those).
    pub(crate) fn accepts(&self, queue_offset: i64) -> bool {
        queue_offset >= 0 && queue_offset >= self.next()
    }

    /// After a batch holding this queue's unit at `queue_offset` was written.
    pub(crate) fn note_put(&self, queue_offset: i64) {
        if self.next() == 0 && queue_offset > 0 {
            // a queue that starts past 0 (Java writes no fillers in RocksDB)
            self.min.store(queue_offset, Ordering::Release);
        }
        self.next.store(queue_offset + 1, Ordering::Release);
    }

    /// First queue offset whose record is still in the commit log (from its min offset as
    /// the database last had it).
    pub(crate) fn min_offset(&self, topic: &str, queue_id: i32) -> i64 {
        let (generation, cl_min) = self.db.min_phy_offset_and_generation();
        if self.min_checked.load(Ordering::Acquire) == generation {
            return self.min.load(Ordering::Acquire);
        }
        self.correct_min(topic, queue_id, cl_min, generation);
        self.min.load(Ordering::Acquire)
    }

    /// Java `getMinCqOffset`: reads (and lazily stores) the queue's `min` key, for commit-log
    /// min offset `cl_min` of `generation`.
    fn correct_min(&self, topic: &str, queue_id: i32, cl_min: i64, generation: u32) {
        match self.db.min_offset_in_queue(topic, queue_id, cl_min.max(0)) {
            Ok(m) => {
                self.min.store(m.min(self.next()), Ordering::Release);
                self.min_checked.store(generation, Ordering::Release);
            }
            Err(e) => {
                tracing::warn!(topic, queue_id, error = %e, "min offset of a RocksDB consume queue not read")
            }
        }
    }

    pub(crate) fn get_unit(&self, topic: &str, queue_id: i32, index: i64) -> Option<CqUnit> {
        if index < 0 || index >= self.next() {
            return None;
        }
        match self.db.get_unit(topic, queue_id, index) {
            Ok(v) => v.map(unit_of),
            Err(e) => {
                tracing::warn!(topic, queue_id, index, error = %e, "consume-queue unit not read");
                None
            }
        }
    }

    /// Up to `limit` consecutive units from `index`, encoded as the file queue's 20-byte units.
    pub(crate) fn units_from(
        &self,
        topic: &str,
        queue_id: i32,
        index: i64,
        limit: usize,
    ) -> Option<Vec<u8>> {
        let n = (self.next() - index).clamp(0, limit.max(1) as i64) as usize;
        if index < 0 || n == 0 {
            return None;
        }
        match self.db.get_units(topic, queue_id, index, n) {
            Ok(v) if !v.is_empty() => {
                Some(v.into_iter().flat_map(|u| unit_of(u).encode()).collect())
            }
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(topic, queue_id, index, error = %e, "consume-queue units not read");
                None
            }
        }
    }

    /// Java `RocksDBConsumeQueueStore.truncateDirty` for one queue: units whose record starts at
    /// or past `phy_end` go; `max` becomes the last unit before it. Returns whether it cut.
    pub(crate) fn truncate(&self, topic: &str, queue_id: i32, phy_end: i64) -> Result<bool> {
        let max = self
            .db
            .max_phy_and_cq_offset(topic, queue_id)
            .map_err(db_error)?;
        if max.is_none_or(|m| m.phy_offset < phy_end) {
            return Ok(false);
        }
        let next = self.next();
        let low = self.min.load(Ordering::Acquire);
        let get = |i| self.db.get_unit(topic, queue_id, i);
        let keep = search_by_phy(low, next - 1, phy_end, false, get).map_err(db_error)?;
        let from = keep.map_or(low, |k| k.cq_offset + 1);
        tracing::info!(
            topic,
            queue_id,
            from,
            to = next,
            "truncating RocksDB consume queue past commit-log end"
        );
        self.db
            .truncate_queue(topic, queue_id, from, next, keep)
            .map_err(db_error)?;
        self.next.store(from, Ordering::Release);
        if keep.is_none() {
            self.min.store(from, Ordering::Release);
        }
        Ok(true)
    }

    pub(crate) fn destroy(&self, topic: &str, queue_id: i32) -> Result<()> {
        self.db.destroy_queue(topic, queue_id).map_err(db_error)?;
        self.next.store(0, Ordering::Release);
        self.min.store(0, Ordering::Release);
        Ok(())
    }
}

fn unit_of(v: CqValue) -> CqUnit {
    CqUnit {
        phy_offset: v.phy_offset,
        size: v.size,
        tags_code: v.tags_code,
    }
}
