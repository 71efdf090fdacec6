//! `PrefaultService` (the role of Java's AllocateMappedFileService + warm-up): keeps the pages
//! ahead of the commit log's wrote position faulted in, and near the end of a file creates the
//! next one and faults in its head, so appends are plain memcpys and a roll only swaps files.
//! With `warmMapedFileEnable` it faults in whole files, in this thread rather than under the put
//! lock. Writers that find it behind fault in a little themselves, outside the lock
//! (`CommitLog::append_encoded`).
//!
//! It does not poll: when it has nothing to do it publishes the offset at which it wants to run
//! again (half its margin before the end of what is faulted in, or the next roll) and sleeps; the
//! put that passes that offset wakes it. So it runs about once per 8 MiB appended rather than
//! every millisecond.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::store::mapped_file::MappedFile;
use crate::store::service::{IdleWaker, ServiceThread};
use crate::store::StoreInner;

/// Bytes kept populated ahead of the writer (about 30 ms of appends at 500 MB/s).
pub(crate) const AHEAD: usize = 16 * 1024 * 1024;
/// Populate in steps of this size (the stop flag is checked between steps).
const STEP: usize = 1024 * 1024;
/// The longest idle sleep (puts wake it sooner; this bounds a missed registration at start).
const IDLE_PARK: Duration = Duration::from_millis(100);

pub struct PrefaultService(ServiceThread);

impl PrefaultService {
    pub(crate) fn start(inner: Arc<StoreInner>) -> std::io::Result<Self> {
        ServiceThread::spawn_woken_by("PrefaultService", inner, waker, run).map(Self)
    }

    pub fn stop(&mut self) {
        self.0.stop();
    }
}

/// What one step of the service did.
enum Step {
    Worked,
    /// Nothing to do until the commit log's max offset reaches this.
    Idle(i64),
    Unsupported,
}

/// What the put that passes `prefault_wake_at` wakes the thread through.
fn waker(inner: &StoreInner) -> &IdleWaker {
    &inner.commitlog.prefault_waker
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
        // a poisoned commit log takes no more appends: nothing to prepare for
        if inner.commitlog.is_poisoned() {
            std::thread::park_timeout(IDLE_PARK);
            continue;
        }
        let appended = inner.commitlog.max_offset() > opened_at;
        match step(&inner, ahead, appended) {
            Step::Worked => {}
            Step::Idle(at) => {
                let cl = &inner.commitlog;
                // A fresh store: the first append is what starts the pre-allocation. Never an
                // offset already reached (that would spin): at the latest, the next put.
                let at = if appended { at } else { opened_at + 1 };
                let at = at.max(cl.max_offset() + 1);
                cl.prefault_wake_at.store(at, Ordering::Relaxed);
                cl.prefault_waker.sleep_unless(IDLE_PARK, || {
                    stop.load(Ordering::Acquire) || cl.max_offset() >= at
                });
            }
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
        // An empty store: the first append creates the first file.
        return Step::Idle(inner.commitlog.max_offset() + 1);
    };
    let want = file.wrote_position().saturating_add(ahead);
    if let Some(s) = populate_step(&file, want) {
        return s;
    }
    let file_end = file.from_offset() + file.size() as i64;
    // Run again when the writer comes within half the margin of what is faulted in, and at the
    // latest at the roll (after which the file that follows the new one is due).
    let low = (ahead.min(AHEAD) / 2) as i64;
    let idle = |covered_end: i64| Step::Idle((covered_end - low).min(file_end));
    if want <= file.size() || !appended {
        return idle(file.from_offset() + file.populated_position() as i64);
    }
    let next = queue.preallocate_next();
    // The next file is where the disk fills in jumps: check it now, not only every second, so
    // that puts are refused (SERVICE_NOT_AVAILABLE) while the current file still has room
    // however fast it is written.
    crate::store::cleanup::check_disk(inner);
    match next {
        Ok(Some(next)) if inner.commitlog.prealloc_failing.succeeded() => {
            tracing::warn!("pre-allocating the next commit-log file works again");
            populate_step(&next, want - file.size())
                .unwrap_or_else(|| idle(next.from_offset() + next.populated_position() as i64))
        }
        Ok(Some(next)) => populate_step(&next, want - file.size())
            .unwrap_or_else(|| idle(next.from_offset() + next.populated_position() as i64)),
        Ok(None) => idle(file_end),
        Err(e) => {
            // The writer will meet (and report) the same error when it rolls.
            if inner.commitlog.prealloc_failing.failed() {
                tracing::warn!(error = %e, "cannot pre-allocate the next commit-log file; \
                    retried quietly until it works again");
            }
            std::thread::sleep(Duration::from_millis(100));
            Step::Idle(inner.commitlog.max_offset() + 1)
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
        // A writer was populating this range: let the next put wake us rather than spin.
        true if file.populated_position() == from => {
            Step::Idle(file.from_offset() + file.wrote_position() as i64 + 1)
        }
        true => Step::Worked,
    })
}
