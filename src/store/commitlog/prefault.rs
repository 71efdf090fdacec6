//! `PrefaultService` (the role of Java's AllocateMappedFileService + warm-up): keeps the pages
//! ahead of the commit log's wrote position faulted in, and near the end of a file creates the
//! next one and faults in its head, so appends are plain memcpys and a roll only swaps files.
//! With `warmMapedFileEnable` it faults in whole files, in this thread rather than under the put
//! lock. Writers that find it behind fault in a little themselves, outside the lock
//! (`CommitLog::append_encoded`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::store::mapped_file::MappedFile;
use crate::store::service::ServiceThread;
use crate::store::StoreInner;

/// Bytes kept populated ahead of the writer (about 30 ms of appends at 500 MB/s).
pub(crate) const AHEAD: usize = 16 * 1024 * 1024;
/// Populate in steps of this size (the stop flag is checked between steps).
const STEP: usize = 1024 * 1024;

pub struct PrefaultService(ServiceThread);

impl PrefaultService {
    pub(crate) fn start(inner: Arc<StoreInner>) -> std::io::Result<Self> {
        ServiceThread::spawn("PrefaultService", inner, run).map(Self)
    }

    pub fn stop(&mut self) {
        self.0.stop();
    }
}

/// What one step of the service did.
enum Step {
    Worked,
    Idle,
    Unsupported,
}

fn run(inner: Arc<StoreInner>, stop: Arc<AtomicBool>) {
    let ahead = if inner.cfg.warm_maped_file_enable {
        usize::MAX
    } else {
        AHEAD
    };
    // The next file is created only once this process has appended: a store that was just
    // opened (or only read) gets no new file.
    let opened_at = inner.commitlog.max_offset();
    while !stop.load(Ordering::Acquire) {
        let appended = inner.commitlog.max_offset() > opened_at;
        match step(&inner, ahead, appended) {
            Step::Worked => {}
            Step::Idle => std::thread::park_timeout(Duration::from_millis(1)),
            Step::Unsupported => {
                tracing::debug!("MADV_POPULATE_WRITE unsupported; prefault service stops");
                return;
            }
        }
    }
}

/// Populates one step ahead of the writer in the last file, else in the pre-allocated next file
/// (created when the wanted range runs past the end of the last one).
fn step(inner: &StoreInner, ahead: usize, appended: bool) -> Step {
    let queue = &inner.commitlog.queue;
    let Some(file) = queue.last_file() else {
        return Step::Idle;
    };
    let want = file.wrote_position().saturating_add(ahead);
    if let Some(s) = populate_step(&file, want) {
        return s;
    }
    if want <= file.size() || !appended {
        return Step::Idle;
    }
    match queue.preallocate_next() {
        Ok(Some(next)) => populate_step(&next, want - file.size()).unwrap_or(Step::Idle),
        Ok(None) => Step::Idle,
        Err(e) => {
            // The writer will meet (and report) the same error when it rolls.
            tracing::warn!(error = %e, "cannot pre-allocate the next commit-log file");
            std::thread::sleep(Duration::from_millis(100));
            Step::Idle
        }
    }
}

/// Populates up to one STEP of `file` towards `want`; `None` when that much is populated.
fn populate_step(file: &MappedFile, want: usize) -> Option<Step> {
    let from = file.populated_position();
    let to = want.min(file.size());
    if from >= to {
        return None;
    }
    Some(match file.prefault_to(from.saturating_add(STEP).min(to)) {
        false => Step::Unsupported,
        // A writer was populating this range: wait rather than spin.
        true if file.populated_position() == from => Step::Idle,
        true => Step::Worked,
    })
}
