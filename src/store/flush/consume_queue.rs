//! `ConsumeQueueFlushService`: flushes consume queues every `flushIntervalConsumeQueue` (least
//! pages), thoroughly every `flushConsumeQueueThoroughInterval` (then the index too, and the
//! checkpoint's logics/index timestamps advance), and writes the checkpoint every second.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::store::error::StoreError;
use crate::store::service::{run_every, FailureLatch, ServiceThread};
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
/// the checkpoint and writes it. Returns the first failure; the caller logs it.
pub(crate) fn flush_all_logics(inner: &StoreInner) -> Result<(), StoreError> {
    let logics_ts = inner.last_dispatched_ts.load(Ordering::Acquire);
    let mut first_err = None;
    if let Err(e) = inner.cqs.flush_all() {
        first_err.get_or_insert(e);
    }
    let mut index_ts = None;
    if let Some(index) = &inner.index {
        match index.flush() {
            Ok(ts) => index_ts = Some(ts),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    if first_err.is_none() {
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
    let ckpt = inner.checkpoint.flush();
    match first_err {
        Some(e) => Err(e),
        None => ckpt,
    }
}

/// Logs a failing periodic flush once when it starts failing and once when it works again, not
/// every second in between (a disk that went read-only would fill the log).
#[derive(Default)]
struct FailureLog(FailureLatch);

impl FailureLog {
    fn report(&mut self, res: Result<(), StoreError>) {
        match res {
            Err(e) if self.0.failed() => {
                tracing::error!(error = %e, "consume-queue/index/checkpoint flush failed; retried \
                    quietly until it works again (recovery rebuilds these from the commit log)");
            }
            Ok(()) if self.0.succeeded() => {
                tracing::warn!("consume-queue/index/checkpoint flush works again");
            }
            _ => {}
        }
    }
}

fn run(inner: Arc<StoreInner>, stop: Arc<AtomicBool>) {
    let cfg = &inner.cfg;
    let interval = Duration::from_millis(cfg.flush_interval_consume_queue.max(1) as u64);
    let thorough = Duration::from_millis(cfg.flush_consume_queue_thorough_interval.max(0) as u64);
    let least = cfg.flush_consume_queue_least_pages.max(0) as usize;
    let mut last_thorough = Instant::now();
    let mut last_ckpt = Instant::now();
    let mut log = FailureLog::default();
    run_every(&stop, interval.min(Duration::from_secs(1)), || {
        // a poisoned store writes nothing more; what the consume queues hold past the durable
        // commit log is dropped by recovery anyway
        if inner.commitlog.is_poisoned() {
            return;
        }
        if last_thorough.elapsed() >= thorough {
            last_thorough = Instant::now();
            log.report(flush_all_logics(&inner));
            last_ckpt = Instant::now();
            return;
        }
        let mut res = Ok(());
        // RocksDB queues have nothing to flush one by one (the database is flushed thoroughly)
        let queues = if inner.cqs.is_rocks() {
            Vec::new()
        } else {
            inner.cqs.all()
        };
        for cq in queues {
            if let Err(e) = cq.flush(least) {
                res = res.and(Err(e));
            }
        }
        if last_ckpt.elapsed() >= Duration::from_secs(1) {
            last_ckpt = Instant::now();
            res = res.and(inner.checkpoint.flush());
        }
        log.report(res);
    });
}
