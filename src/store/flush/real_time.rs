//! `FlushRealTimeService`: ASYNC_FLUSH background flushing (interval, least pages, thorough
//! interval).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::store::service::{run_every, ServiceThread};
use crate::store::StoreInner;

pub struct FlushRealTimeService(ServiceThread);

impl FlushRealTimeService {
    pub(crate) fn start(inner: Arc<StoreInner>) -> std::io::Result<Self> {
        ServiceThread::spawn("FlushRealTimeService", inner, run).map(Self)
    }

    pub fn stop(&mut self) {
        self.0.stop();
    }
}

fn run(inner: Arc<StoreInner>, stop: Arc<AtomicBool>) {
    let cfg = &inner.cfg;
    let interval = Duration::from_millis(cfg.flush_interval_commit_log.max(1) as u64);
    let thorough = Duration::from_millis(cfg.flush_commit_log_thorough_interval.max(0) as u64);
    let mut last_thorough = Instant::now();
    run_every(&stop, interval, || {
        let mut least = cfg.flush_commit_log_least_pages.max(0) as usize;
        if last_thorough.elapsed() >= thorough {
            last_thorough = Instant::now();
            least = 0;
        }
        if !inner.commitlog.is_poisoned() {
            let _ = super::flush_commit_log(&inner, least, false);
        }
    });
    for _ in 0..10 {
        if super::flush_commit_log(&inner, 0, true).is_ok() {
            break;
        }
    }
}
