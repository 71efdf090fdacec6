//! Commit-log flushing: `FlushRealTimeService` (ASYNC_FLUSH) and `GroupCommitService`
//! (SYNC_FLUSH), plus `ConsumeQueueFlushService` (consume queues, index, checkpoint).

pub mod consume_queue;
pub mod group_commit;
pub mod real_time;

use std::sync::atomic::Ordering;

use crate::store::error::StoreError;
use crate::store::StoreInner;

/// Flushes the commit log with `least_pages`; poisons the store on failure. Returns the flushed
/// offset. When everything up to `max` (the offset seen before flushing) is durable the
/// checkpoint's physicMsgTimestamp advances.
pub(crate) fn flush_commit_log(
    inner: &StoreInner,
    least_pages: usize,
    all: bool,
) -> Result<i64, ()> {
    let cl = &inner.commitlog;
    let ts = cl.last_store_timestamp();
    let max = cl.max_offset();
    let before = cl.flushed_offset();
    let t0 = std::time::Instant::now();
    let res = if all {
        cl.queue.flush_all()
    } else {
        cl.queue.flush(least_pages).map(|_| ())
    };
    if let Err(e) = res {
        let path = match &e {
            StoreError::Io { path, .. } => path.clone(),
            _ => cl.queue.dir().to_path_buf(),
        };
        cl.poison(path, &e);
        return Err(());
    }
    let flushed = cl.flushed_offset();
    if flushed > before {
        inner
            .stats
            .flush_latency
            .record(t0.elapsed().as_micros() as u64);
    }
    if flushed >= max && ts > 0 {
        inner
            .checkpoint
            .physic_msg_timestamp
            .store(ts, Ordering::Release);
    }
    Ok(flushed)
}
