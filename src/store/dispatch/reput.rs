//! `ReputMessageService`: one thread tailing the commit log from the reput offset up to the
//! confirm offset and dispatching every record.

use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::Thread;
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

/// Lets a put wake the dispatch thread when it is idle, instead of leaving the record for its next
/// 1 ms poll (Java's reput thread only polls). The put side costs one relaxed atomic load; the
/// unpark happens at most once per idle spell. Without a fence on the put side a wake-up can rarely
/// be missed (the put's store and the flag's load reorder); the thread then finds the record at its
/// 1 ms poll, as Java's does.
///
/// Once woken, the thread does not go back to being wakeable until a pass finds nothing: after
/// every pass that dispatched records it naps [`BUSY_NAP`], unwakeable, so that under load it
/// dispatches in batches at no more than one switch per nap, however many puts arrive. (A wake-up
/// from every put, tried before, switched the thread in once per message: +50 % broker CPU per
/// message and -30 % sync throughput.)
#[derive(Default)]
pub(crate) struct ReputWaker {
    idle: AtomicBool,
    thread: OnceLock<Thread>,
}

impl ReputWaker {
    /// Called after records became readable (appended under ASYNC_FLUSH, flushed under SYNC).
    pub(crate) fn wake(&self) {
        if self.idle.load(Ordering::Relaxed) && self.idle.swap(false, Ordering::AcqRel) {
            if let Some(t) = self.thread.get() {
                t.unpark();
            }
        }
    }

    /// The dispatch thread, idle: sleeps up to 1 ms unless `more` (re-checked after announcing
    /// the sleep, so a put in between is never missed for longer than that 1 ms bound).
    fn sleep_unless(&self, more: impl Fn() -> bool) {
        self.idle.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if !more() {
            std::thread::park_timeout(Duration::from_millis(1));
        }
        self.idle.store(false, Ordering::Relaxed);
    }
}

/// How long the dispatch thread naps after a pass that dispatched records, before the next pass.
/// Bounds its switches under load to one per nap; adds at most this much to a delivery then.
const BUSY_NAP: Duration = Duration::from_micros(200);

/// The dispatch thread.
pub struct ReputMessageService(ServiceThread);

impl ReputMessageService {
    /// Starts tailing from `inner.reput_offset`.
    pub(crate) fn start(inner: Arc<StoreInner>) -> std::io::Result<Self> {
        let service = ServiceThread::spawn("ReputMessageService", Arc::clone(&inner), run)?;
        // Until this is set, puts cannot wake the thread; it still polls every 1 ms.
        if let Some(t) = service.thread() {
            let _ = inner.reput_waker.thread.set(t.clone());
        }
        Ok(Self(service))
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
                let reput = &inner.reput_offset;
                inner
                    .reput_waker
                    .sleep_unless(|| inner.confirm_offset() > reput.load(Ordering::Acquire));
            }
            Ok(_) => std::thread::sleep(BUSY_NAP),
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
