//! `CleanCommitLogService` + `CleanConsumeQueueService`: deletes expired commit-log files (by
//! mtime + `fileReservedTime`, at `deleteWhen` hours or under disk pressure), then the consume
//! queue and index files that only point below the new commit-log min offset (§11).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::store::mapped_file::os::disk_used_ratio;
use crate::store::service::{run_every, ServiceThread};
use crate::store::util::{local_time, now_ms};
use crate::store::StoreInner;

/// Outcome of one pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CleanupReport {
    pub commit_log_files: usize,
    pub consume_queue_files: usize,
    pub index_files: usize,
}

/// Commit-log files deleted before their `fileReservedTime` because the disk was over
/// `diskSpaceCleanForciblyRatio` (or `diskSpaceWarningLevelRatio`) with
/// `cleanFileForciblyEnable`: what went with them, for the broker to count per consumer group.
#[derive(Debug, Clone, Default)]
pub struct ForcedDeletion {
    /// Each file: its path and the commit-log offsets it held, `[from, to)`.
    pub files: Vec<(PathBuf, i64, i64)>,
    /// The disk's used ratio that forced it.
    pub disk_ratio: f64,
    /// Queues whose first offset moved in this pass: (topic, queue id, old min, new min).
    pub queues: Vec<(String, i32, i64, i64)>,
}

/// Told of every forced deletion (after the consume queues' min offsets moved).
pub type CleanupListener = Arc<dyn Fn(&ForcedDeletion) + Send + Sync>;

/// Whether the local hour is one of `deleteWhen`'s.
fn is_time_to_delete(when: &str) -> bool {
    let hour = local_time(now_ms()).hour;
    when.split(';')
        .any(|h| h.trim().parse::<u32>().ok() == Some(hour))
}

/// One cleanup pass. `force` = delete regardless of expiry (still never the last file).
pub(crate) fn run_pass(inner: &StoreInner, manual: bool, force_all: bool) -> CleanupReport {
    let cfg = &inner.cfg;
    let ratio = check_disk(inner);
    let warning = cfg.disk_space_warning_level_ratio as f64 / 100.0;
    let forcibly = cfg.disk_space_clean_forcibly_ratio as f64 / 100.0;
    let max_used = cfg.disk_max_used_space_ratio as f64 / 100.0;
    let clean_now = ratio > forcibly || ratio > warning;
    let time = is_time_to_delete(&cfg.delete_when);
    let mut report = CleanupReport::default();
    let mut forced = ForcedDeletion {
        disk_ratio: ratio,
        ..Default::default()
    };
    if time || clean_now || manual || ratio > max_used || force_all {
        let force = force_all || (clean_now && cfg.clean_file_forcibly_enable);
        // expired files first and their queues' first offsets moved, so that what an early
        // deletion takes is counted alone
        report.commit_log_files = delete_commit_log_files(inner, false, &mut forced.files);
        if force {
            clean_queues(inner, &mut report, None);
            report.commit_log_files += delete_commit_log_files(inner, true, &mut forced.files);
        }
    }
    let moved = (!forced.files.is_empty()).then_some(&mut forced.queues);
    let min = clean_queues(inner, &mut report, moved);
    if !forced.files.is_empty() {
        report_forced(inner, &forced);
    }
    if let Some(index) = &inner.index {
        match index.delete_expired(min) {
            Ok(n) => report.index_files += n,
            Err(e) => tracing::warn!(error = %e, "index cleanup failed"),
        }
    }
    report
}

/// Deletes consume-queue files below the commit log's first offset and moves each queue's first
/// offset; `moved` collects the queues whose first offset moved. Returns that commit-log offset.
fn clean_queues(
    inner: &StoreInner,
    report: &mut CleanupReport,
    mut moved: Option<&mut Vec<(String, i32, i64, i64)>>,
) -> i64 {
    let min = inner.commitlog.min_offset();
    #[cfg(feature = "rocksdb-cq")]
    if let Some(db) = inner.cqs.rocks() {
        if min > db.min_phy_offset() {
            clean_rocks(inner, db, min, moved);
        }
        return min;
    }
    for cq in inner.cqs.all() {
        let old_min = cq.min_offset_in_queue();
        match cq.delete_expired(min) {
            Ok(n) => report.consume_queue_files += n,
            Err(e) => tracing::warn!(error = %e, "consume-queue cleanup failed"),
        }
        let new_min = cq.min_offset_in_queue();
        if let Some(moved) = moved.as_deref_mut().filter(|_| new_min > old_min) {
            moved.push((cq.topic().to_string(), cq.queue_id(), old_min, new_min));
        }
    }
    min
}

/// RocksDB consume queue: a compaction drops the units below the commit log's new min offset
/// (Java `cleanExpired`); queue mins are corrected lazily, or here when a forced deletion needs
/// to know which moved.
#[cfg(feature = "rocksdb-cq")]
fn clean_rocks(
    inner: &StoreInner,
    db: &crate::store::consumequeue::rocksdb_store::RocksCqStore,
    min: i64,
    moved: Option<&mut Vec<(String, i32, i64, i64)>>,
) {
    let before: Vec<_> = match &moved {
        Some(_) => inner
            .cqs
            .all()
            .into_iter()
            .map(|q| {
                let m = q.min_offset_in_queue();
                (q, m)
            })
            .collect(),
        None => Vec::new(),
    };
    if let Err(e) = db.clean_expired(min) {
        tracing::warn!(error = %e, "RocksDB consume-queue cleanup failed");
    }
    if let Some(moved) = moved {
        for (q, old_min) in before {
            let new_min = q.min_offset_in_queue();
            if new_min > old_min {
                moved.push((q.topic().to_string(), q.queue_id(), old_min, new_min));
            }
        }
    }
}

/// The commit log's disk usage; over `diskSpaceWarningLevelRatio` puts are refused (Java's
/// SERVICE_NOT_AVAILABLE) until it is back under. Called every second, not only with the
/// cleanup passes, and whenever the next commit-log file is allocated or cannot be created, so
/// a fast fill is caught before the disk is full.
pub(crate) fn check_disk(inner: &StoreInner) -> f64 {
    let ratio = disk_used_ratio(inner.commitlog.queue.dir()).unwrap_or(0.0);
    let warning = inner.cfg.disk_space_warning_level_ratio as f64 / 100.0;
    let was_full = inner.disk_full.swap(ratio > warning, Ordering::AcqRel);
    if ratio > warning && !was_full {
        tracing::error!(ratio, "disk is full; puts are refused until space is freed");
    } else if was_full && ratio <= warning {
        tracing::warn!(
            ratio,
            "disk usage back under diskSpaceWarningLevelRatio; puts resume"
        );
    }
    ratio
}

/// Logs a forced deletion plainly, counts it, and tells the listener (the broker).
fn report_forced(inner: &StoreInner, forced: &ForcedDeletion) {
    let messages: i64 = forced.queues.iter().map(|(_, _, old, new)| new - old).sum();
    for (path, from, to) in &forced.files {
        tracing::warn!(
            file = %path.display(),
            from,
            to,
            disk_used = format!("{:.1}%", forced.disk_ratio * 100.0),
            "deleted a commit-log file BEFORE its fileReservedTime because the disk is over \
             diskSpaceCleanForciblyRatio (cleanFileForciblyEnable=true); its messages are gone \
             whether consumed or not"
        );
    }
    tracing::warn!(
        files = forced.files.len(),
        queues = forced.queues.len(),
        messages,
        "forced cleanup moved the first offset of these queues; per-group unconsumed counts follow"
    );
    inner
        .forced_deletions
        .fetch_add(forced.files.len() as u64, Ordering::AcqRel);
    inner
        .forced_deleted_messages
        .fetch_add(messages.max(0) as u64, Ordering::AcqRel);
    if let Some(l) = inner.cleanup_listener.read().as_ref() {
        l(forced);
    }
}

fn delete_commit_log_files(
    inner: &StoreInner,
    force: bool,
    forced: &mut Vec<(PathBuf, i64, i64)>,
) -> usize {
    let cfg = &inner.cfg;
    let reserved_ms = cfg.file_reserved_time.max(0) as i64 * 3_600_000;
    let files = inner.commitlog.queue.files();
    let now = now_ms();
    let max_batch = cfg.delete_file_batch_max.max(1) as usize;
    // whether each file to delete has expired, read before it is gone
    let mut expired = Vec::new();
    for f in files.iter().take(files.len().saturating_sub(1)) {
        if expired.len() >= max_batch {
            break;
        }
        let is_expired = now >= f.last_modified_ms() + reserved_ms;
        if !(force || is_expired) {
            break;
        }
        expired.push(is_expired);
    }
    let n = expired.len();
    if n == 0 {
        return 0;
    }
    match inner.commitlog.queue.delete_first(n) {
        Ok(gone) => {
            for (f, is_expired) in gone.iter().zip(expired) {
                let range = (f.from_offset(), f.from_offset() + f.size() as i64);
                if !is_expired {
                    forced.push((f.path().to_path_buf(), range.0, range.1));
                } else {
                    tracing::info!(file = %f.path().display(), "deleted expired commit-log file");
                }
            }
            gone.len()
        }
        Err(e) => {
            tracing::warn!(error = %e, "commit-log cleanup failed");
            0
        }
    }
}

pub struct CleanupService(ServiceThread);

impl CleanupService {
    pub(crate) fn start(inner: Arc<StoreInner>) -> std::io::Result<Self> {
        ServiceThread::spawn("CleanCommitLogService", inner, run).map(Self)
    }

    pub fn stop(&mut self) {
        self.0.stop();
    }
}

fn run(inner: Arc<StoreInner>, stop: Arc<AtomicBool>) {
    let interval = Duration::from_millis(inner.cfg.clean_resource_interval.max(100) as u64);
    let start = Instant::now();
    let mut last = Instant::now();
    let mut last_disk_check = Instant::now();
    run_every(&stop, Duration::from_millis(200), || {
        if last_disk_check.elapsed() >= Duration::from_secs(1) {
            last_disk_check = Instant::now();
            check_disk(&inner);
        }
        if start.elapsed() < Duration::from_secs(60).min(interval * 6) || last.elapsed() < interval
        {
            return;
        }
        last = Instant::now();
        let manual = inner
            .manual_delete_passes
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
                (v > 0).then(|| v - 1)
            })
            .is_ok();
        run_pass(&inner, manual, false);
    });
}
