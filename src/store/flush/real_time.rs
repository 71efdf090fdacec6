//! `FlushRealTimeService`: ASYNC_FLUSH background flushing (interval, least pages, thorough
//! interval).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::store::StoreInner;

pub struct FlushRealTimeService {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl FlushRealTimeService {
    pub(crate) fn start(inner: Arc<StoreInner>) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let s = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name("FlushRealTimeService".into())
            .spawn(move || run(inner, s))?;
        Ok(FlushRealTimeService {
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
    let cfg = &inner.cfg;
    let interval = Duration::from_millis(cfg.flush_interval_commit_log.max(1) as u64);
    let thorough = Duration::from_millis(cfg.flush_commit_log_thorough_interval.max(0) as u64);
    let mut last_thorough = Instant::now();
    while !stop.load(Ordering::Acquire) {
        std::thread::park_timeout(interval);
        let mut least = cfg.flush_commit_log_least_pages.max(0) as usize;
        if last_thorough.elapsed() >= thorough {
            last_thorough = Instant::now();
            least = 0;
        }
        if inner.commitlog.is_poisoned() {
            continue;
        }
        let _ = super::flush_commit_log(&inner, least, false);
    }
    for _ in 0..10 {
        if super::flush_commit_log(&inner, 0, true).is_ok() {
            break;
        }
    }
}
