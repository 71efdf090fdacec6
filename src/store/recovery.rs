//! Store start-up: lock, load, recover commit log / consume queues / index, rebuild the queue
//! offset table (store-format.md §7).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use super::checkpoint::StoreCheckpoint;
use super::commitlog::recovery as clr;
use super::commitlog::CommitLog;
use super::config::MessageStoreConfig;
use super::consumequeue::ConsumeQueueTable;
use super::dispatch::reput::redispatch_until;
use super::error::{Result, StoreError};
use super::flush::group_commit::GroupCommitQueue;
use super::index::IndexService;
use super::mapped_file::{os, MappedFile};
use super::paths::StorePaths;
use super::{FlushDiskType, StoreInner};

/// Takes the fcntl lock on `ROOT/lock` before anything else is touched.
pub(crate) fn lock_store(paths: &StorePaths) -> Result<File> {
    let root = paths.root();
    std::fs::create_dir_all(root).map_err(|e| StoreError::io(root, e))?;
    let path = paths.lock();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| StoreError::io(&path, e))?;
    if !os::try_lock_byte0(&file).map_err(|e| StoreError::io(&path, e))? {
        return Err(StoreError::Locked {
            path: root.to_path_buf(),
        });
    }
    file.write_all_at(b"lock", 0)
        .map_err(|e| StoreError::io(&path, e))?;
    file.sync_data().map_err(|e| StoreError::io(&path, e))?;
    Ok(file)
}

/// Writes `abort` with the process id (Java creates it at the end of start()).
pub(crate) fn create_abort(paths: &StorePaths) -> Result<()> {
    let path = paths.abort();
    let mut f = File::create(&path).map_err(|e| StoreError::io(&path, e))?;
    f.write_all(os::pid().to_string().as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(|e| StoreError::io(&path, e))
}

pub(crate) fn load_and_recover(cfg: MessageStoreConfig) -> Result<(StoreInner, File)> {
    let paths = StorePaths::new(
        &cfg.store_path_root_dir,
        cfg.store_path_commit_log.as_deref(),
    );
    let lock = lock_store(&paths)?;
    let abnormal = paths.abort().exists();
    tracing::info!(root = %paths.root().display(), abnormal, "loading message store");
    let commitlog = CommitLog::load(&cfg, paths.commit_log_dir())?;
    let checkpoint = Arc::new(StoreCheckpoint::open(&paths.checkpoint())?);
    let (index, index_rebuild_from) = if cfg.message_index_enable {
        let l = IndexService::load(
            &paths.index_dir(),
            cfg.max_hash_slot_num as usize,
            cfg.max_index_num as usize,
            abnormal,
            Arc::clone(&checkpoint),
        )?;
        (
            Some(l.service.with_index_tags(cfg.index_tags)),
            l.rebuild_from,
        )
    } else {
        (None, None)
    };
    let cqs = load_consume_queues(&cfg, &paths)?;
    if !cqs.is_rocks() {
        // RocksDB queues are recovered by the database itself
        for cq in cqs.all() {
            cq.recover()?;
        }
    }
    let inner = StoreInner {
        delay_levels: cfg.delay_levels_ms(),
        group_commit: (cfg.flush_disk_type == FlushDiskType::SyncFlush)
            .then(GroupCommitQueue::default),
        cfg,
        paths,
        commitlog,
        cqs,
        index,
        checkpoint,
        reput_offset: AtomicI64::new(0),
        reput_waker: Default::default(),
        last_dispatched_ts: AtomicI64::new(0),
        lmq_unit_failure: parking_lot::Mutex::new(None),
        listener: RwLock::new(None),
        disk_full: AtomicBool::new(false),
        forced_deletions: Default::default(),
        forced_deleted_messages: Default::default(),
        cleanup_listener: Default::default(),
        manual_delete_passes: AtomicI32::new(0),
        shutdown: AtomicBool::new(false),
        group_commit_requests: AtomicU64::new(0),
        stats: super::stats::StoreStats::new(super::util::now_ms()),
        total_memory: os::total_physical_memory(),
        dispatch_lock: parking_lot::Mutex::new(()),
    };
    recover(&inner, abnormal, index_rebuild_from)?;
    Ok((inner, lock))
}

/// The consume queues: files, or the RocksDB consume queue under `storeType=defaultRocksDB`.
fn load_consume_queues(cfg: &MessageStoreConfig, paths: &StorePaths) -> Result<ConsumeQueueTable> {
    #[cfg(feature = "rocksdb-cq")]
    if cfg.is_rocksdb_store() {
        return ConsumeQueueTable::load_rocks(paths, cfg.use_separate_store_path_for_rocksdb_cq);
    }
    ConsumeQueueTable::load(paths, cfg.mapped_file_size_consume_queue as usize)
}

/// Recovers the commit log's valid end, truncates what lies past it and re-dispatches what the
/// consume queues and the index miss (store-format.md §7).
fn recover(inner: &StoreInner, abnormal: bool, index_rebuild_from: Option<i64>) -> Result<()> {
    let t0 = std::time::Instant::now();
    let r = recover_timed(inner, abnormal, index_rebuild_from);
    inner
        .stats
        .recovery_ms
        .store(t0.elapsed().as_millis() as u64, Ordering::Relaxed);
    r
}

fn recover_timed(
    inner: &StoreInner,
    abnormal: bool,
    index_rebuild_from: Option<i64>,
) -> Result<()> {
    let files = inner.commitlog.queue.files();
    if files.is_empty() {
        return clear_logics(inner);
    }
    let dispatch_from = dispatched_until(inner)?;
    let start_idx = scan_start_index(inner, &files, abnormal, dispatch_from);
    let index_lag = index_resume_offset(inner, index_rebuild_from, dispatch_from);
    let (process, last_ts) = scan_commit_log(inner, start_idx);
    let index_cut = truncate_dirty(inner, process)?;
    let scan_start = files.get(start_idx).map(|f| f.from_offset()).unwrap_or(0);
    let lagging = index_lag.into_iter().chain(index_cut);
    let reput_start = reput_start(inner, scan_start, dispatch_from, process, lagging);
    redispatch(inner, reput_start, process, abnormal, dispatch_from)?;
    restore_offsets(inner, process, last_ts);
    Ok(())
}

/// End of the furthest record the consume queues hold (-1: none). RocksDB: the checkpoint
/// key, written in each dispatch batch (Java `getMaxPhyOffsetInConsumeQueue`).
fn dispatched_until(inner: &StoreInner) -> Result<i64> {
    #[cfg(feature = "rocksdb-cq")]
    if let Some(db) = inner.cqs.rocks() {
        db.set_min_phy_offset(inner.commitlog.min_offset());
        let ck = db
            .checkpoint()
            .map_err(super::consumequeue::rocks_queue::db_error)?;
        return Ok(if ck > 0 { ck } else { -1 });
    }
    Ok(inner
        .cqs
        .all()
        .iter()
        .map(|q| q.max_physic_offset())
        .max()
        .unwrap_or(-1))
}

/// No commit log: consume queues and index point at nothing.
fn clear_logics(inner: &StoreInner) -> Result<()> {
    for cq in inner.cqs.all() {
        inner.cqs.remove_queue(cq.topic(), cq.queue_id())?;
    }
    #[cfg(feature = "rocksdb-cq")]
    if let Some(db) = inner.cqs.rocks() {
        // a new commit log starts at 0: Java re-dispatches only past the checkpoint
        db.lower_checkpoint(0)
            .map_err(super::consumequeue::rocks_queue::db_error)?;
    }
    if let Some(index) = &inner.index {
        index.destroy()?;
    }
    inner.commitlog.set_queue_offsets(Default::default(), 0);
    inner.cqs.reset_lmq_put_offsets();
    Ok(())
}

/// The commit-log file the validation scan starts in. It starts where Java's does; a lagging
/// index only moves the re-dispatch start back (scanning more with CRC checks would truncate at
/// damage Java never looks at).
fn scan_start_index(
    inner: &StoreInner,
    files: &[Arc<MappedFile>],
    abnormal: bool,
    dispatch_from: i64,
) -> usize {
    let check_crc = inner.cfg.check_crc_on_recover;
    if abnormal {
        let min_ts = if inner.cfg.message_index_safe {
            inner.checkpoint.min_timestamp_index()
        } else {
            inner.checkpoint.min_timestamp()
        };
        clr::abnormal_start_index(files, min_ts, check_crc)
    } else {
        clr::normal_start_index(files, dispatch_from, check_crc)
    }
}

/// Scans the commit log from file `start_idx`: the end of its last valid record and that
/// record's store timestamp.
fn scan_commit_log(inner: &StoreInner, start_idx: usize) -> (i64, i64) {
    let check_crc = inner.cfg.check_crc_on_recover;
    let t0 = std::time::Instant::now();
    let mut last_ts = 0;
    let scan = clr::scan(&inner.commitlog, start_idx, check_crc, |_, r| {
        last_ts = r.store_timestamp
    });
    let secs = t0.elapsed().as_secs_f64();
    inner
        .stats
        .recovery_scanned_bytes
        .store(scan.bytes, Ordering::Relaxed);
    tracing::info!(
        process_offset = scan.process_offset,
        records = scan.records,
        mb = scan.bytes / (1 << 20),
        mb_per_s = (scan.bytes as f64 / (1 << 20) as f64 / secs.max(1e-9)) as u64,
        "commit-log scan done"
    );
    (scan.process_offset, last_ts)
}

/// Cuts commit log, consume queues and index at `process`; where the index was cut, if it was.
fn truncate_dirty(inner: &StoreInner, process: i64) -> Result<Option<i64>> {
    inner.commitlog.queue.truncate_dirty(process)?;
    for cq in inner.cqs.queues_past(process)? {
        cq.truncate_dirty_logic_files(process)?;
    }
    #[cfg(feature = "rocksdb-cq")]
    if let Some(db) = inner.cqs.rocks() {
        db.lower_checkpoint(process)
            .map_err(super::consumequeue::rocks_queue::db_error)?;
    }
    match &inner.index {
        Some(index) => index.drop_files_past(process),
        None => Ok(None),
    }
}

/// Where dispatch must restart to make consume queues and index complete. Java re-dispatches
/// from the first scanned file (abnormal) or only records past the consume queues' max
/// (normal, 5.3.2+). rmqd re-dispatches every scanned record in both modes: units and index
/// entries already present are skipped, and a consume queue whose tail units were lost (cut
/// or torn units, or a torn unit of the newest record, which Java's `>` test misses) gets
/// them back. With no consume queue at all, everything is rebuilt (Java only does that on a
/// normal start). `lagging`: where the index needs records from.
fn reput_start(
    inner: &StoreInner,
    scan_start: i64,
    dispatch_from: i64,
    process: i64,
    lagging: impl Iterator<Item = i64>,
) -> i64 {
    let cl = &inner.commitlog;
    let mut reput_start = if dispatch_from < 0 {
        cl.min_offset()
    } else {
        scan_start
    };
    // Queues that cut good units for damage inside them are restored from their last good unit.
    let repair = inner.cqs.min_repair_from();
    for off in lagging.chain(repair) {
        reput_start = reput_start.min(off);
    }
    reput_start.clamp(cl.min_offset(), process)
}

/// Dispatches `[reput_start, process)` again, then leaves the reput offset at `process`.
fn redispatch(
    inner: &StoreInner,
    reput_start: i64,
    process: i64,
    abnormal: bool,
    dispatch_from: i64,
) -> Result<()> {
    inner.reput_offset.store(reput_start, Ordering::Release);
    if reput_start < process {
        tracing::info!(
            from = reput_start,
            to = process,
            "re-dispatching commit log to consume queues and index"
        );
        // Normal stop: records Java would not re-dispatch (at or below the queues' old max) only
        // complete queues that exist, so a topic deleted before the stop stays deleted.
        let create_from = if abnormal || dispatch_from < 0 {
            i64::MIN
        } else {
            dispatch_from
        };
        let n = redispatch_until(inner, process, false, create_from)?;
        tracing::info!(units = n, "re-dispatch done");
    }
    inner.reput_offset.store(process, Ordering::Release);
    Ok(())
}

/// After re-dispatch: the queue offset table, each queue's min offset, the store time and the
/// flushed position the commit log continues from.
fn restore_offsets(inner: &StoreInner, process: i64, last_ts: i64) {
    let cl = &inner.commitlog;
    if let Some(index) = &inner.index {
        if index.file_count() == 0 && process > cl.min_offset() {
            tracing::debug!("no indexable keys in the commit log");
        }
    }
    let table = inner.cqs.offset_table();
    let min = cl.min_offset();
    // RocksDB: each queue's min is corrected on first use (Java `getMinCqOffset`), so a start
    // with a million lite queues reads none of them here
    if !inner.cqs.is_rocks() {
        for cq in inner.cqs.all() {
            cq.correct_min_offset(min);
        }
    }
    // STORETIMESTAMP stays non-decreasing across the restart, but a checkpoint time in the future
    // (garbage) must not become the store time of every new message.
    let ckpt_ts = inner.checkpoint.values()[0];
    let ckpt_ts = if ckpt_ts <= super::util::now_ms() {
        ckpt_ts
    } else {
        0
    };
    cl.set_queue_offsets(table, last_ts.max(ckpt_ts));
    inner.cqs.reset_lmq_put_offsets();
    cl.queue.set_flushed_where(process);
    // every record up to `process` is in the consume queues now: the next consume-queue flush
    // writes its time as logicsMsgTimestamp, even when recovery had nothing to re-dispatch
    if process > min {
        inner
            .last_dispatched_ts
            .fetch_max(last_ts, Ordering::AcqRel);
    }
}

/// Where the index must be rebuilt from, if it lags the consume queues.
fn index_resume_offset(
    inner: &StoreInner,
    deleted_from: Option<i64>,
    dispatch_from: i64,
) -> Option<i64> {
    let index = inner.index.as_ref()?;
    if let Some(off) = deleted_from {
        return Some(off);
    }
    if index.file_count() == 0 {
        let has_index_dir_files = std::fs::read_dir(inner.paths.index_dir())
            .map(|mut d| d.next().is_some())
            .unwrap_or(false);
        // Missing index with data present: rebuild everything (once).
        return (!has_index_dir_files && dispatch_from > inner.commitlog.min_offset())
            .then(|| inner.commitlog.min_offset());
    }
    let end = index.end_phy_offset();
    (end >= 0 && end < dispatch_from).then_some(end)
}
