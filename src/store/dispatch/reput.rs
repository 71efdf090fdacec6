//! `ReputMessageService`: one thread tailing the commit log from the reput offset up to the
//! confirm offset and dispatching every record.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::store::commitlog::record::{self, Decoded};
use crate::store::error::Result;
use crate::store::service::ServiceThread;
use crate::store::StoreInner;

/// Dispatches records from `inner.reput_offset` up to `limit`. Returns the units dispatched.
/// Holds `inner.dispatch_lock`: consume queues and the index have exactly one writer at a time.
pub(crate) fn reput_until(inner: &StoreInner, limit: i64, notify: bool) -> Result<u64> {
    redispatch_until(inner, limit, notify, i64::MIN)
}

/// `reput_until` for recovery: records below `create_from` only complete consume queues that
/// exist (a queue deleted by an admin command is not brought back by a restart).
pub(crate) fn redispatch_until(
    inner: &StoreInner,
    limit: i64,
    notify: bool,
    create_from: i64,
) -> Result<u64> {
    let _single_writer = inner.dispatch_lock.lock();
    let cl = &inner.commitlog;
    let mut n = 0u64;
    loop {
        let mut reput = inner.reput_offset.load(Ordering::Acquire);
        if reput >= limit {
            return Ok(n);
        }
        let min = cl.min_offset();
        if reput < min {
            tracing::warn!(
                reput,
                min,
                "reput offset below the commit log's min offset; moving up"
            );
            reput = min;
            inner.reput_offset.store(reput, Ordering::Release);
        }
        let Some(file) = cl.queue.find_by_offset(reput) else {
            return Ok(n);
        };
        let pos = (reput - file.from_offset()) as usize;
        let Some(buf) = file.read_from(pos) else {
            return Ok(n);
        };
        let avail = buf.len().min((limit - reput) as usize);
        let buf = &buf[..avail];
        let mut at = 0usize;
        let mut roll = false;
        while at < buf.len() {
            match record::decode(&buf[at..], false) {
                Ok(Decoded::Record(rec)) => {
                    let phy = reput + at as i64;
                    super::dispatch_record(inner, &rec, phy, notify, phy >= create_from)?;
                    at += rec.total_size as usize;
                    n += 1;
                }
                Ok(Decoded::Blank) => {
                    roll = true;
                    break;
                }
                Ok(Decoded::End) | Err(_) => {
                    // A record not yet complete below the limit: wait for more bytes.
                    break;
                }
            }
        }
        let next = if roll {
            cl.roll_next_file(reput + at as i64)
        } else {
            reput + at as i64
        };
        inner.reput_offset.store(next, Ordering::Release);
        if next == reput {
            return Ok(n);
        }
    }
}

/// The dispatch thread.
pub struct ReputMessageService(ServiceThread);

impl ReputMessageService {
    /// Starts tailing from `inner.reput_offset`.
    pub(crate) fn start(inner: Arc<StoreInner>) -> std::io::Result<Self> {
        ServiceThread::spawn("ReputMessageService", inner, run).map(Self)
    }

    /// Stops after dispatching everything confirmed.
    pub fn stop(&mut self) {
        self.0.stop();
    }
}

fn run(inner: Arc<StoreInner>, stop: Arc<AtomicBool>) {
    loop {
        let stopping = stop.load(Ordering::Acquire);
        let limit = inner.confirm_offset();
        match reput_until(&inner, limit, true) {
            Ok(0) => {
                if stopping {
                    return;
                }
                // Polls like Java's ReputMessageService. A wake-up from every put was measured
                // (closed loop, 1 KiB): end-to-end p50 at 5,000 msgs/s fell from 1.17 to 0.44 ms,
                // but the thread then switched in once per message, costing 50 % more broker CPU
                // per message and a third of the sync throughput, so it was taken out.
                std::thread::park_timeout(Duration::from_millis(1));
            }
            Ok(_) => {}
            Err(e) => {
                tracing::error!(error = %e, "dispatch failed; retrying in 100 ms");
                if stopping {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}
