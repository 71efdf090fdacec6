//! `CleanCommitLogService` + `CleanConsumeQueueService`: deletes expired commit-log files (by
//! mtime + `fileReservedTime`, at `deleteWhen` hours or under disk pressure), then the consume
//! queue and index files that only point below the new commit-log min offset (§11).

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

/// Whether the local hour is one of `deleteWhen`'s.
fn is_time_to_delete(when: &str) -> bool {
    let hour = local_time(now_ms()).hour;
    when.split(';')
        .any(|h| h.trim().parse::<u32>().ok() == Some(hour))
}

/// One cleanup pass. `force` = delete regardless of expiry (still never the last file).
pub(crate) fn run_pass(inner: &StoreInner, manual: bool, force_all: bool) -> CleanupReport {
    let cfg = &inner.cfg;
    let ratio = disk_used_ratio(inner.commitlog.queue.dir()).unwrap_or(0.0);
    let warning = cfg.disk_space_warning_level_ratio as f64 / 100.0;
    let forcibly = cfg.disk_space_clean_forcibly_ratio as f64 / 100.0;
    let max_used = cfg.disk_max_used_space_ratio as f64 / 100.0;
    let was_full = inner.disk_full.swap(ratio > warning, Ordering::AcqRel);
    if ratio > warning && !was_full {
        tracing::error!(ratio, "disk is full; puts are refused until space is freed");
    }
    let clean_now = ratio > forcibly || ratio > warning;
    let time = is_time_to_delete(&cfg.delete_when);
    let mut report = CleanupReport::default();
    if time || clean_now || manual || ratio > max_used || force_all {
        let force = force_all || (clean_now && cfg.clean_file_forcibly_enable);
        report.commit_log_files = delete_commit_log_files(inner, force);
    }
    let min = inner.commitlog.min_offset();
    for cq in inner.cqs.all() {
        match cq.delete_expired(min) {
            Ok(n) => report.consume_queue_files += n,
            Err(e) => tracing::warn!(error = %e, "consume-queue cleanup failed"),
        }
    }
    if let Some(index) = &inner.index {
        match index.delete_expired(min) {
            Ok(n) => report.index_files += n,
            Err(e) => tracing::warn!(error = %e, "index cleanup failed"),
        }
    }
    report
}

fn delete_commit_log_files(inner: &StoreInner, force: bool) -> usize {
    let cfg = &inner.cfg;
    let reserved_ms = cfg.file_reserved_time.max(0) as i64 * 3_600_000;
    let files = inner.commitlog.queue.files();
    let now = now_ms();
    let max_batch = cfg.delete_file_batch_max.max(1) as usize;
    let mut n = 0;
    for f in files.iter().take(files.len().saturating_sub(1)) {
        if n >= max_batch {
            break;
        }
        if !(force || now >= f.last_modified_ms() + reserved_ms) {
            break;
        }
        n += 1;
    }
    if n == 0 {
        return 0;
    }
    match inner.commitlog.queue.delete_first(n) {
        Ok(gone) => {
            for f in &gone {
                tracing::info!(file = %f.path().display(), "deleted expired commit-log file");
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
    run_every(&stop, Duration::from_millis(200), || {
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
