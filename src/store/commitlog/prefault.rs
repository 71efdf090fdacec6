//! `PrefaultService` (the role of Java's AllocateMappedFileService + warm-up): keeps the pages
//! just ahead of the commit log's wrote position faulted in, so appends are plain memcpys.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::store::StoreInner;

/// Bytes kept populated ahead of the writer.
const AHEAD: usize = 8 * 1024 * 1024;
/// Populate in steps of this size.
const STEP: usize = 2 * 1024 * 1024;

pub struct PrefaultService {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl PrefaultService {
    pub(crate) fn start(inner: Arc<StoreInner>) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let s = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name("PrefaultService".into())
            .spawn(move || run(inner, s))?;
        Ok(PrefaultService {
            stop,
            handle: Some(handle),
        })
    }

    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(h) = self.handle.take() {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

fn run(inner: Arc<StoreInner>, stop: Arc<AtomicBool>) {
    let mut current: Option<(i64, usize)> = None; // (file start, populated up to)
    while !stop.load(Ordering::Acquire) {
        let Some(file) = inner.commitlog.queue.last_file() else {
            std::thread::park_timeout(Duration::from_millis(10));
            continue;
        };
        let wrote = file.wrote_position();
        let done = match current {
            Some((from, upto)) if from == file.from_offset() => upto,
            _ => wrote,
        };
        let target = (wrote + AHEAD).min(file.size());
        if done < target {
            let upto = (done + STEP).min(file.size());
            if !file.populate(done, upto - done) {
                tracing::debug!("MADV_POPULATE_WRITE unsupported; prefault service stops");
                return;
            }
            current = Some((file.from_offset(), upto));
        } else {
            current = Some((file.from_offset(), done));
            std::thread::park_timeout(Duration::from_millis(1));
        }
    }
}
