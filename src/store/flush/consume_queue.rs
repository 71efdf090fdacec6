//! `ConsumeQueueFlushService`: flushes consume queues every `flushIntervalConsumeQueue` (least
//! pages), thoroughly every `flushConsumeQueueThoroughInterval` (then the index too, and the
//! checkpoint's logics/index timestamps advance), and writes the checkpoint every second.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::store::service::{run_every, ServiceThread};
use crate::store::StoreInner;

pub struct ConsumeQueueFlushService(ServiceThread);

impl ConsumeQueueFlushService {
    pub(crate) fn start(inner: Arc<StoreInner>) -> std::io::Result<Self> {
        ServiceThread::spawn("FlushConsumeQueueService", inner, run).map(Self)
    }

    pub fn stop(&mut self) {
        self.0.stop();
    }
}

/// Flushes every consume queue and the index fully, then records the timestamps they cover in
/// the checkpoint and writes it.
pub(crate) fn flush_all_logics(inner: &StoreInner) {
    let logics_ts = inner.last_dispatched_ts.load(Ordering::Acquire);
    let mut ok = true;
    for cq in inner.cqs.all() {
        if let Err(e) = cq.flush(0) {
            tracing::error!(error = %e, "consume-queue flush failed");
            ok = false;
        }
    }
    let mut index_ts = None;
    if let Some(index) = &inner.index {
        match index.flush() {
            Ok(ts) => index_ts = Some(ts),
            Err(e) => {
                tracing::error!(error = %e, "index flush failed");
                ok = false;
            }
        }
    }
    if ok {
        if logics_ts > 0 {
            inner
                .checkpoint
                .logics_msg_timestamp
                .store(logics_ts, Ordering::Release);
        }
        if let Some(ts) = index_ts.filter(|&t| t > 0) {
            inner
                .checkpoint
                .index_msg_timestamp
                .store(ts, Ordering::Release);
        }
    }
    if let Err(e) = inner.checkpoint.flush() {
        tracing::error!(error = %e, "checkpoint flush failed");
    }
}

fn run(inner: Arc<StoreInner>, stop: Arc<AtomicBool>) {
    let cfg = &inner.cfg;
    let interval = Duration::from_millis(cfg.flush_interval_consume_queue.max(1) as u64);
    let thorough = Duration::from_millis(cfg.flush_consume_queue_thorough_interval.max(0) as u64);
    let least = cfg.flush_consume_queue_least_pages.max(0) as usize;
    let mut last_thorough = Instant::now();
    let mut last_ckpt = Instant::now();
    run_every(&stop, interval.min(Duration::from_secs(1)), || {
        if last_thorough.elapsed() >= thorough {
            last_thorough = Instant::now();
            flush_all_logics(&inner);
            last_ckpt = Instant::now();
            return;
        }
        for cq in inner.cqs.all() {
            if let Err(e) = cq.flush(least) {
                tracing::error!(error = %e, "consume-queue flush failed");
            }
        }
        if last_ckpt.elapsed() >= Duration::from_secs(1) {
            last_ckpt = Instant::now();
            if let Err(e) = inner.checkpoint.flush() {
                tracing::error!(error = %e, "checkpoint flush failed");
            }
        }
    });
}
