//! `ConsumeQueue`: per `topic/queueId` 20-byte units `i64 phyOffset | i32 size | i64 tagsCode`,
//! no header, unit k at queue byte k*20 (store-format.md §4). One writer at a time: whoever holds
//! `dispatch_lock` (the dispatch thread, or a put dispatching what it appended).

mod lmq_queues;
#[cfg(feature = "rocksdb-cq")]
pub(crate) mod rocks_queue;
pub mod rocksdb_codec;
#[cfg(feature = "rocksdb-cq")]
pub mod rocksdb_store;
pub mod rocksdb_table;
pub mod table;

use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use crate::store::error::Result;
use crate::store::mapped_file::{MappedFile, MappedFileQueue};

pub use table::ConsumeQueueTable;

pub const CQ_UNIT_SIZE: usize = 20;

/// One consume-queue unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CqUnit {
    pub phy_offset: i64,
    pub size: i32,
    pub tags_code: i64,
}

impl CqUnit {
    pub fn encode(&self) -> [u8; CQ_UNIT_SIZE] {
        let mut b = [0u8; CQ_UNIT_SIZE];
        b[..8].copy_from_slice(&self.phy_offset.to_be_bytes());
        b[8..12].copy_from_slice(&self.size.to_be_bytes());
        b[12..].copy_from_slice(&self.tags_code.to_be_bytes());
        b
    }

    /// Decodes the unit at the start of `b` (None if short).
    pub fn decode(b: &[u8]) -> Option<CqUnit> {
        let b = b.get(..CQ_UNIT_SIZE)?;
        let mut p = [0u8; 8];
        p.copy_from_slice(&b[..8]);
        let mut t = [0u8; 8];
        t.copy_from_slice(&b[12..20]);
        Some(CqUnit {
            phy_offset: i64::from_be_bytes(p),
            size: i32::from_be_bytes([b[8], b[9], b[10], b[11]]),
            tags_code: i64::from_be_bytes(t),
        })
    }

    /// `phyOffset + size`: where the record ends (saturating: a damaged unit may hold anything).
    pub fn end(&self) -> i64 {
        self.phy_offset.saturating_add(self.size as i64)
    }

    /// Java recovery's validity test.
    pub fn is_valid(&self) -> bool {
        self.phy_offset >= 0 && self.size > 0
    }
}

/// Filler written before the first unit of a queue that starts at a non-zero offset.
const FILLER: CqUnit = CqUnit {
    phy_offset: 0,
    size: i32::MAX,
    tags_code: 0,
};

/// How far past an invalid unit recovery looks for valid ones (damage inside a queue rather
/// than its end). Bounded so that a start-up with many queues does not read every queue's
/// unwritten (sparse) tail.
const DAMAGE_LOOKAHEAD_UNITS: usize = 256;

/// Whether a valid unit lies in `f` within [`pos`, `pos` + the look-ahead).
fn any_valid_unit(f: &MappedFile, pos: usize) -> bool {
    let len = f
        .size()
        .saturating_sub(pos)
        .min(DAMAGE_LOOKAHEAD_UNITS * CQ_UNIT_SIZE);
    let Some(rest) = f.read(pos, len) else {
        return false;
    };
    rest.iter().any(|&b| b != 0)
        && rest
            .chunks_exact(CQ_UNIT_SIZE)
            .any(|c| CqUnit::decode(c).is_some_and(|u| u.is_valid()))
}

/// Where a consume queue keeps its units.
enum Backend {
    /// `consumequeue/<topic>/<queueId>/` files (`storeType=default`); boxed so that a RocksDB
    /// queue (a million lite topics) does not carry the file queue's size.
    Files(Box<FileQueue>),
    /// Keys in the store's RocksDB (`storeType=defaultRocksDB`).
    #[cfg(feature = "rocksdb-cq")]
    Rocks(rocks_queue::RocksQueue),
}

/// The state of a file-backed queue.
struct FileQueue {
    files: MappedFileQueue,
    queue_id: i32,
    /// `phyOffset + size` of the last unit (-1 if empty).
    max_physic_offset: AtomicI64,
    /// Queue byte offset of the first unit (Java `minLogicOffset`).
    min_logic_offset: AtomicI64,
    /// Set by recovery when damage inside the queue (an invalid unit or one past the commit-log
    /// end, followed by valid units) made it cut good units: the commit-log offset from which
    /// re-dispatch restores them (-1 = none).
    repair_from: AtomicI64,
}

/// The units from a queue offset on, as [`ConsumeQueue::units_from`] finds them.
pub enum Units {
    /// A consume-queue file and the position of the first unit in it.
    Mapped(Arc<MappedFile>, usize),
    /// Units read from RocksDB, encoded as 20-byte file units.
    Owned(Vec<u8>),
}

impl Units {
    /// The encoded units.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Units::Mapped(f, pos) => f.read_from(*pos).unwrap_or(&[]),
            Units::Owned(v) => v,
        }
    }
}

/// A consume queue.
///
/// Layout, 56 bytes (72 with its `Arc`'s counts, in mimalloc's 80-byte class; 8 bytes more
/// would take it to the 96-byte one): the name (16, its bytes in their own allocation), the put
/// offset of an LMQ (8, see the flat LMQ set in [`table`]) and the backend (32: a RocksDB
/// queue's offsets and queue id inline, with the database handle as the enum's niche; a file
/// queue boxed, its queue id in the box). A lite queue on RocksDB is this, its name and its slot
/// in the flat set: everything a million of them multiply.
pub struct ConsumeQueue {
    topic: Box<str>,
    /// `%LMQ%` queue 0 only: the next queue offset the put assigns (Java's LMQ topic-queue
    /// table entry), written under the commit log's put lock. Other queues keep theirs in the
    /// commit log's own table.
    put_offset: AtomicI64,
    backend: Backend,
}

impl ConsumeQueue {
    /// Maps the queue's files from `dir`.
    pub fn load(topic: &str, queue_id: i32, dir: &Path, file_size: usize) -> Result<Self> {
        Ok(Self::with_queue(
            topic,
            queue_id,
            MappedFileQueue::load(dir, file_size)?,
        ))
    }

    /// A new, empty queue.
    pub fn new(topic: &str, queue_id: i32, dir: &Path, file_size: usize) -> Self {
        Self::with_queue(topic, queue_id, MappedFileQueue::new(dir, file_size))
    }

    fn with_queue(topic: &str, queue_id: i32, queue: MappedFileQueue) -> Self {
        let files = FileQueue {
            files: queue.without_readahead().sparse_files(),
            queue_id,
            max_physic_offset: AtomicI64::new(-1),
            min_logic_offset: AtomicI64::new(0),
            repair_from: AtomicI64::new(-1),
        };
        Self::with_backend(topic, Backend::Files(Box::new(files)))
    }

    /// A queue of the RocksDB consume queue; `max` is its `max` key as loaded (None: no units).
    #[cfg(feature = "rocksdb-cq")]
    pub(crate) fn rocks(
        topic: &str,
        queue_id: i32,
        db: Arc<rocksdb_store::RocksCqStore>,
        max: Option<rocksdb_codec::PhyAndCqOffset>,
    ) -> Self {
        let q = rocks_queue::RocksQueue::new(db, queue_id, max);
        Self::with_backend(topic, Backend::Rocks(q))
    }

    fn with_backend(topic: &str, backend: Backend) -> Self {
        ConsumeQueue {
            topic: topic.into(),
            put_offset: AtomicI64::new(0),
            backend,
        }
    }

    /// The state of a `storeType=default` queue (None for a RocksDB one).
    fn file_queue(&self) -> Option<&FileQueue> {
        match &self.backend {
            Backend::Files(q) => Some(q),
            #[cfg(feature = "rocksdb-cq")]
            Backend::Rocks(_) => None,
        }
    }

    /// The files of a `storeType=default` queue (None for a RocksDB one).
    fn files(&self) -> Option<&MappedFileQueue> {
        self.file_queue().map(|f| &f.files)
    }

    /// An LMQ's next put offset (see [`ConsumeQueue::put_offset`]'s field).
    pub(crate) fn put_offset(&self) -> i64 {
        self.put_offset.load(Ordering::Acquire)
    }

    pub(crate) fn set_put_offset(&self, next: i64) {
        self.put_offset.store(next, Ordering::Release);
    }

    pub fn topic(&self) -> &str {
        &self.topic
    }
    pub fn queue_id(&self) -> i32 {
        match &self.backend {
            Backend::Files(q) => q.queue_id,
            #[cfg(feature = "rocksdb-cq")]
            Backend::Rocks(r) => r.queue_id(),
        }
    }
    /// `phyOffset + size` of the last unit (-1 if empty). RocksDB: -1, not kept in memory:
    /// re-dispatch's filter on it lets every record through, and dispatch's queue-offset check
    /// skips those the queue holds.
    pub fn max_physic_offset(&self) -> i64 {
        match &self.backend {
            Backend::Files(q) => q.max_physic_offset.load(Ordering::Acquire),
            #[cfg(feature = "rocksdb-cq")]
            Backend::Rocks(_) => -1,
        }
    }
    /// Next queue offset (number of units including fillers).
    pub fn max_offset_in_queue(&self) -> i64 {
        match &self.backend {
            Backend::Files(q) => q.files.max_offset() / CQ_UNIT_SIZE as i64,
            #[cfg(feature = "rocksdb-cq")]
            Backend::Rocks(r) => r.next(),
        }
    }
    pub fn min_offset_in_queue(&self) -> i64 {
        #[cfg(feature = "rocksdb-cq")]
        if let Backend::Rocks(r) = &self.backend {
            return r.min_offset(&self.topic, r.queue_id());
        }
        self.file_queue()
            .map_or(0, |q| q.min_logic_offset.load(Ordering::Acquire))
            / CQ_UNIT_SIZE as i64
    }

    /// Recovery (§4.2): scans from the third-from-last file to the first invalid unit, sets
    /// positions there and deletes later files. Valid units after that one mean damage inside
    /// the queue, not its end: Java drops them; rmqd notes where re-dispatch must restore them.
    pub fn recover(&self) -> Result<()> {
        let Some(fq) = self.file_queue() else {
            return Ok(()); // RocksDB: recovered by the database itself
        };
        let queue = &fq.files;
        let files = queue.files();
        if files.is_empty() {
            return Ok(());
        }
        let start = files.len().saturating_sub(3);
        let mut end = files[start].from_offset();
        let mut max_phy = -1;
        'files: for (i, f) in files.iter().enumerate().skip(start) {
            let mut pos = 0;
            while let Some(u) = f.read(pos, CQ_UNIT_SIZE).and_then(CqUnit::decode) {
                if !u.is_valid() {
                    end = f.from_offset() + pos as i64;
                    let later = files.get(i + 1..).unwrap_or(&[]);
                    if any_valid_unit(f, pos + CQ_UNIT_SIZE)
                        || later.iter().any(|g| any_valid_unit(g, 0))
                    {
                        tracing::warn!(topic = %self.topic, queue = self.queue_id(), file = %f.path().display(), pos, "invalid consume-queue unit followed by valid ones; they are rebuilt from the commit log");
                        fq.note_repair(max_phy);
                    }
                    break 'files;
                }
                if u != FILLER {
                    max_phy = u.end();
                }
                pos += CQ_UNIT_SIZE;
            }
            end = f.from_offset() + pos as i64;
            if pos < f.size() {
                break;
            }
        }
        queue.truncate_dirty(end)?;
        fq.max_physic_offset.store(max_phy, Ordering::Release);
        Ok(())
    }

    /// Where re-dispatch must start to restore units recovery cut for damage (None if none).
    pub fn repair_from(&self) -> Option<i64> {
        let v = self.file_queue()?.repair_from.load(Ordering::Acquire);
        (v >= 0).then_some(v)
    }

    /// Truncates units from the first one whose phyOffset >= `phy_end` (after commit-log
    /// recovery; Java `truncateDirtyLogicFiles`): newest files whose first unit is past the end
    /// are deleted, then the last remaining file is scanned unit by unit. A unit past the end
    /// with units inside the commit log after it is damage, not a tail: those later units are
    /// cut as Java cuts them and marked for re-dispatch.
    pub fn truncate_dirty_logic_files(&self, phy_end: i64) -> Result<()> {
        #[cfg(feature = "rocksdb-cq")]
        if let Backend::Rocks(r) = &self.backend {
            r.truncate(&self.topic, self.queue_id(), phy_end)?;
            return Ok(());
        }
        let Some(fq) = self.file_queue() else {
            return Ok(());
        };
        let queue = &fq.files;
        let files = queue.files();
        let past = |u: &CqUnit| *u != FILLER && u.phy_offset >= phy_end;
        let mut cut = None;
        for f in files.iter().rev() {
            let unit = |k: usize| {
                f.read(k * CQ_UNIT_SIZE, CQ_UNIT_SIZE)
                    .and_then(CqUnit::decode)
            };
            if unit(0).is_some_and(|u| past(&u)) {
                cut = Some(f.from_offset());
                continue;
            }
            let n = f.wrote_position() / CQ_UNIT_SIZE;
            if let Some(k) = (1..n).find(|&k| unit(k).is_some_and(|u| past(&u))) {
                cut = Some(f.from_offset() + (k * CQ_UNIT_SIZE) as i64);
                if (k + 1..n).any(|j| unit(j).is_some_and(|u| u.is_valid() && !past(&u))) {
                    tracing::warn!(topic = %self.topic, queue = self.queue_id(), file = %f.path().display(), pos = k * CQ_UNIT_SIZE, "consume-queue unit points past the commit-log end amid valid units; rebuilding from there");
                    let before = k.checked_sub(1).and_then(unit);
                    fq.note_repair(before.map_or(0, |u| u.end()));
                }
            }
            break;
        }
        let Some(end) = cut else { return Ok(()) };
        tracing::info!(topic = %self.topic, queue = self.queue_id(), end, "truncating consume queue past commit-log end");
        queue.truncate_dirty(end)?;
        let last = (end / CQ_UNIT_SIZE as i64)
            .checked_sub(1)
            .and_then(|i| self.get_unit(i));
        let max_phy = match last {
            Some(u) if u != FILLER => u.end(),
            _ => -1,
        };
        fq.max_physic_offset.store(max_phy, Ordering::Release);
        if queue.is_empty() {
            fq.min_logic_offset.store(0, Ordering::Release);
        }
        Ok(())
    }

    /// True when the next unit goes into a file that already exists (no file to create).
    pub fn has_room(&self) -> bool {
        let Some(queue) = self.files() else {
            return true; // RocksDB: no file to create
        };
        queue
            .last_file()
            .is_some_and(|f| !f.is_full() && f.is_reserved(f.wrote_position() + CQ_UNIT_SIZE))
    }

    /// RocksDB: whether a unit at `queue_offset` is new to this queue (dispatch batches only
    /// those). Always true for a file queue, whose `put_unit` decides.
    #[cfg(feature = "rocksdb-cq")]
    pub(crate) fn accepts(&self, queue_offset: i64) -> bool {
        match &self.backend {
            Backend::Files(_) => true,
            #[cfg(feature = "rocksdb-cq")]
            Backend::Rocks(r) => r.accepts(queue_offset),
        }
    }

    /// RocksDB: after dispatch wrote this queue's unit at `queue_offset` in its batch.
    #[cfg(feature = "rocksdb-cq")]
    pub(crate) fn note_put(&self, queue_offset: i64) {
        if let Backend::Rocks(r) = &self.backend {
            r.note_put(queue_offset);
        }
    }

    /// Appends a unit for `queue_offset` (Java `putMessagePositionInfo`): repeats and units already
    /// covered by `maxPhysicOffset` are skipped; a gap is logged and written at the current end.
    pub fn put_unit(&self, unit: CqUnit, queue_offset: i64) -> Result<()> {
        let Some(fq) = self.file_queue() else {
            // RocksDB queues are written by dispatch in one batch per record
            return Err(crate::store::error::StoreError::ConsumeQueueDb(format!(
                "{}:{}: a RocksDB consume queue takes units in dispatch batches",
                self.topic,
                self.queue_id()
            )));
        };
        if unit.end() <= self.max_physic_offset() {
            return Ok(());
        }
        // A record's queue offset is not covered by its CRC: one a damaged file gives may be
        // negative or past any position a file can hold. Such a unit is dropped, not written.
        let Some(expect) = queue_offset
            .checked_mul(CQ_UNIT_SIZE as i64)
            .filter(|_| queue_offset >= 0)
        else {
            tracing::error!(topic = %self.topic, queue = self.queue_id(), queue_offset, phy = unit.phy_offset, "queue offset out of range; unit not written");
            return Ok(());
        };
        let queue = &fq.files;
        if queue.is_empty() && expect > 0 {
            fill_pre_blank(fq, expect)?;
        }
        let file = queue.last_file_or_create(expect)?;
        let current = file.from_offset() + file.wrote_position() as i64;
        if expect < current {
            return Ok(());
        }
        if expect > current {
            tracing::error!(topic = %self.topic, queue = self.queue_id(), expect, current, "[BUG] consume queue gap; writing at the current end");
        }
        file.reserve(file.wrote_position() + CQ_UNIT_SIZE)?;
        file.append(&unit.encode());
        fq.max_physic_offset.store(unit.end(), Ordering::Release);
        Ok(())
    }

    /// The unit at `index`, if written.
    pub fn get_unit(&self, index: i64) -> Option<CqUnit> {
        #[cfg(feature = "rocksdb-cq")]
        if let Backend::Rocks(r) = &self.backend {
            return r.get_unit(&self.topic, self.queue_id(), index);
        }
        let off = index.checked_mul(CQ_UNIT_SIZE as i64)?;
        let f = self.files()?.find_by_offset(off)?;
        CqUnit::decode(f.read((off - f.from_offset()) as usize, CQ_UNIT_SIZE)?)
    }

    /// The units from `index` on: the rest of the file holding it (published bytes), or at most
    /// `limit` units read from RocksDB.
    pub fn units_from(&self, index: i64, limit: usize) -> Option<Units> {
        #[cfg(feature = "rocksdb-cq")]
        if let Backend::Rocks(r) = &self.backend {
            return r
                .units_from(&self.topic, self.queue_id(), index, limit)
                .map(Units::Owned);
        }
        let _ = limit;
        let off = index.checked_mul(CQ_UNIT_SIZE as i64)?;
        let f = self.files()?.find_by_offset(off)?;
        let pos = (off - f.from_offset()) as usize;
        (pos < f.wrote_position()).then_some(Units::Mapped(f, pos))
    }

    /// First queue offset of the file after the one holding `index` (RocksDB: the next one).
    pub fn roll_next_file(&self, index: i64) -> i64 {
        let Some(queue) = self.files() else {
            return index.saturating_add(1).max(self.min_offset_in_queue());
        };
        let per_file = (queue.file_size() / CQ_UNIT_SIZE) as i64;
        index + per_file - index % per_file
    }

    /// Java `correctMinOffset`: the first unit pointing at or past the commit log's min offset.
    pub fn correct_min_offset(&self, commit_log_min: i64) {
        #[cfg(feature = "rocksdb-cq")]
        if let Backend::Rocks(r) = &self.backend {
            // against the database's min offset, which cleanup sets to the commit log's
            let _ = (commit_log_min, r.min_offset(&self.topic, r.queue_id()));
            return;
        }
        let Some(fq) = self.file_queue() else {
            return;
        };
        let queue = &fq.files;
        let max = self.max_offset_in_queue();
        let min_now = self.min_offset_in_queue();
        let Some(last) = max.checked_sub(1).and_then(|i| self.get_unit(i)) else {
            return;
        };
        if last.phy_offset < commit_log_min {
            fq.min_logic_offset
                .store(max * CQ_UNIT_SIZE as i64, Ordering::Release);
            return;
        }
        if let Some(u) = self.get_unit(min_now) {
            if u.phy_offset >= commit_log_min && min_now * CQ_UNIT_SIZE as i64 >= queue.min_offset()
            {
                return;
            }
        }
        let Some(first) = queue.first_file() else {
            return;
        };
        let n = first.wrote_position() / CQ_UNIT_SIZE;
        let (mut lo, mut hi) = (0usize, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match first
                .read(mid * CQ_UNIT_SIZE, CQ_UNIT_SIZE)
                .and_then(CqUnit::decode)
            {
                Some(u) if u.phy_offset >= commit_log_min => hi = mid,
                _ => lo = mid + 1,
            }
        }
        let new_min = first.from_offset() + (lo * CQ_UNIT_SIZE) as i64;
        fq.min_logic_offset.store(new_min, Ordering::Release);
    }

    /// Deletes files (never the last) whose last unit points below `commit_log_min`.
    pub fn delete_expired(&self, commit_log_min: i64) -> Result<usize> {
        let Some(queue) = self.files() else {
            // RocksDB: the store-wide compaction drops expired units; the min is read lazily
            return Ok(0);
        };
        let files = queue.files();
        let mut n = 0;
        for f in files.iter().take(files.len().saturating_sub(1)) {
            let last_pos = f.wrote_position().saturating_sub(CQ_UNIT_SIZE);
            match f.read(last_pos, CQ_UNIT_SIZE).and_then(CqUnit::decode) {
                Some(u) if u.phy_offset < commit_log_min => n += 1,
                _ => break,
            }
        }
        if n > 0 {
            queue.delete_first(n)?;
        }
        self.correct_min_offset(commit_log_min);
        Ok(n)
    }

    /// Flushes with `least_pages` (0 = everything).
    pub fn flush(&self, least_pages: usize) -> Result<()> {
        let Some(queue) = self.files() else {
            return Ok(()); // RocksDB: flushed store-wide
        };
        if least_pages == 0 {
            queue.flush_all()
        } else {
            queue.flush(least_pages).map(|_| ())
        }
    }

    /// Deletes all files (RocksDB: all keys) of the queue.
    pub fn destroy(&self) -> Result<()> {
        match &self.backend {
            Backend::Files(q) => {
                q.files.destroy()?;
                q.max_physic_offset.store(-1, Ordering::Release);
                q.min_logic_offset.store(0, Ordering::Release);
            }
            #[cfg(feature = "rocksdb-cq")]
            Backend::Rocks(r) => r.destroy(&self.topic, r.queue_id())?,
        }
        Ok(())
    }
}

impl FileQueue {
    fn note_repair(&self, from: i64) {
        let from = from.max(0);
        let old = self.repair_from.load(Ordering::Acquire);
        if old < 0 || from < old {
            self.repair_from.store(from, Ordering::Release);
        }
    }
}

/// Writes fillers up to queue byte `expect` into an empty queue whose first unit starts there.
fn fill_pre_blank(fq: &FileQueue, expect: i64) -> Result<()> {
    let file = fq.files.last_file_or_create(expect)?;
    file.reserve(((expect - file.from_offset()).max(0) as usize).min(file.size()))?;
    let filler = FILLER.encode();
    while file.from_offset() + (file.wrote_position() as i64) < expect {
        file.append(&filler);
    }
    fq.min_logic_offset.store(expect, Ordering::Release);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_fits_the_layout_its_doc_gives() {
        assert!(std::mem::size_of::<ConsumeQueue>() <= 56);
    }

    fn queue_with(dir: &Path, n: i64) -> ConsumeQueue {
        let q = ConsumeQueue::new("T", 0, dir, 20 * 100);
        for i in 0..n {
            let u = CqUnit {
                phy_offset: i * 100,
                size: 100,
                tags_code: 0,
            };
            q.put_unit(u, i).unwrap();
        }
        q.flush(0).unwrap();
        q
    }

    fn write_unit(dir: &Path, k: u64, b: &[u8]) {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join("00000000000000000000"))
            .unwrap();
        f.write_all_at(b, k * CQ_UNIT_SIZE as u64).unwrap();
    }

    #[test]
    fn recover_notes_a_zeroed_unit_followed_by_valid_ones_for_repair() {
        let dir = tempfile::tempdir().unwrap();
        drop(queue_with(dir.path(), 6));
        write_unit(dir.path(), 2, &[0u8; 20]);
        let q = ConsumeQueue::load("T", 0, dir.path(), 20 * 100).unwrap();
        q.recover().unwrap();
        assert_eq!(
            q.max_offset_in_queue(),
            2,
            "Java's recover ends the queue there"
        );
        assert_eq!(
            q.repair_from(),
            Some(200),
            "re-dispatch from the last good unit's end"
        );
    }

    #[test]
    fn recover_of_a_queue_that_just_ends_needs_no_repair() {
        let dir = tempfile::tempdir().unwrap();
        drop(queue_with(dir.path(), 6));
        let q = ConsumeQueue::load("T", 0, dir.path(), 20 * 100).unwrap();
        q.recover().unwrap();
        assert_eq!((q.max_offset_in_queue(), q.repair_from()), (6, None));
    }

    #[test]
    fn truncate_cuts_at_the_first_unit_past_the_end_and_notes_damage_amid_valid_units() {
        let dir = tempfile::tempdir().unwrap();
        drop(queue_with(dir.path(), 6));
        write_unit(dir.path(), 2, &9_999_999_i64.to_be_bytes());
        let q = ConsumeQueue::load("T", 0, dir.path(), 20 * 100).unwrap();
        q.recover().unwrap();
        q.truncate_dirty_logic_files(600).unwrap();
        assert_eq!(q.max_offset_in_queue(), 2);
        assert_eq!(q.max_physic_offset(), 200);
        assert_eq!(q.repair_from(), Some(200));
    }

    #[test]
    fn truncate_of_a_tail_past_the_end_is_no_damage() {
        let dir = tempfile::tempdir().unwrap();
        drop(queue_with(dir.path(), 6));
        let q = ConsumeQueue::load("T", 0, dir.path(), 20 * 100).unwrap();
        q.recover().unwrap();
        q.truncate_dirty_logic_files(350).unwrap();
        assert_eq!((q.max_offset_in_queue(), q.max_physic_offset()), (4, 400));
        assert_eq!(q.repair_from(), None);
    }

    #[test]
    fn units_are_read_back_through_the_mapping_and_from_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let q = queue_with(dir.path(), 3);
        assert_eq!(q.get_unit(1).map(|u| u.phy_offset), Some(100));
        let units = q.units_from(0, 1).unwrap();
        assert_eq!(units.bytes().len(), 3 * CQ_UNIT_SIZE);
        let on_disk = std::fs::read(dir.path().join("00000000000000000000")).unwrap();
        assert_eq!(
            CqUnit::decode(&on_disk[40..60]).map(|u| u.phy_offset),
            Some(200)
        );
    }

    #[test]
    fn a_unit_whose_queue_offset_no_file_can_hold_is_dropped() {
        // found by the store_recovery fuzz target: a damaged record's queue offset overflowed
        // `queue_offset * 20` (a panic in a debug build, a wrapped position in release)
        let dir = tempfile::tempdir().unwrap();
        let q = ConsumeQueue::new("T", 0, dir.path(), 20 * 10);
        for (i, bad) in [i64::MAX / 4, -1, i64::MIN].into_iter().enumerate() {
            let u = CqUnit {
                phy_offset: 100 * i as i64,
                size: 100,
                tags_code: 0,
            };
            q.put_unit(u, bad).unwrap();
        }
        assert_eq!(q.max_offset_in_queue(), 0);
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    }

    #[test]
    fn a_queue_whose_first_message_has_a_high_offset_is_filled_with_blank_units_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let q = ConsumeQueue::new("T", 0, dir.path(), 20 * 10_000);
        let u = CqUnit {
            phy_offset: 0,
            size: 100,
            tags_code: 0,
        };
        q.put_unit(u, 9_000).unwrap();
        assert_eq!(
            (q.min_offset_in_queue(), q.max_offset_in_queue()),
            (9_000, 9_001)
        );
        assert_eq!(q.get_unit(4_500), Some(FILLER));
        assert_eq!(q.get_unit(9_000), Some(u));
        assert_eq!(
            q.files().unwrap().last_file().unwrap().wrote_position(),
            9_001 * CQ_UNIT_SIZE
        );
    }
}
