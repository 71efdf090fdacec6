//! `ReputMessageService`: one thread tailing the commit log from the reput offset up to the
//! confirm offset and dispatching every record.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::{OwnRecord, Scope};
use crate::store::commitlog::record::{self, Decoded};
use crate::store::error::Result;
use crate::store::service::{FailureLatch, IdleWaker, ServiceThread};
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
    // Nothing to do: do not take the lock (a put dispatching on its own thread would find it
    // taken and leave its record to this thread).
    if inner.reput_offset.load(Ordering::Acquire) >= limit {
        return Ok(0);
    }
    let _single_writer = inner.dispatch_lock.lock();
    dispatch_locked(inner, limit, notify, create_from, None).map(|(n, _)| n)
}

/// Dispatches on the calling thread what a put just made readable, unless another thread is
/// dispatching (then the dispatch thread is woken for it). A put that finds no one dispatching
/// thus delivers to a held pull without a thread switch: the arrival wakes the pull's task on
/// the putting worker (less CPU and latency per message: `benches/README.md`).
///
/// Contract: the calling thread is a network worker, so this never creates, grows or flushes a
/// file, for the consume queue and the index alike ([`Scope::NoNewFile`]). A record that would
/// need one (its consume queue is missing or its last file full; its index keys do not fit the
/// newest index file) ends the inline dispatch before anything of it is written, and the
/// dispatch thread, woken here, dispatches it and everything after. `own` is what the put
/// knows of its own record; the consume-queue unit takes its TAGS hash from it.
pub(crate) fn dispatch_after_put(inner: &StoreInner, own: Option<OwnRecord>) {
    let Some(_single_writer) = inner.dispatch_lock.try_lock() else {
        inner.reput_waker.wake();
        return;
    };
    match dispatch_locked(inner, inner.confirm_offset(), true, i64::MIN, Some(own)) {
        Ok((_, false)) => {}
        Ok((_, true)) => inner.reput_waker.wake(),
        Err(e) => {
            tracing::warn!(error = %e, "dispatch after a put failed; the dispatch thread retries");
            inner.reput_waker.wake();
        }
    }
}

/// `redispatch_until` with `inner.dispatch_lock` held by the caller. `inline` (a put's own
/// thread, with what it knows of its record) dispatches in [`Scope::NoNewFile`]: it stops before
/// the first record that needs a file created and says so (`true`).
fn dispatch_locked(
    inner: &StoreInner,
    limit: i64,
    notify: bool,
    create_from: i64,
    inline: Option<Option<OwnRecord>>,
) -> Result<(u64, bool)> {
    let cheap_only = inline.is_some();
    let own = inline.flatten();
    let cl = &inner.commitlog;
    let mut n = 0u64;
    loop {
        let mut reput = inner.reput_offset.load(Ordering::Acquire);
        if reput >= limit {
            return Ok((n, false));
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
            return Ok((n, false));
        };
        let pos = (reput - file.from_offset()) as usize;
        let Some(buf) = file.read_from(pos) else {
            return Ok((n, false));
        };
        let avail = buf.len().min((limit - reput) as usize);
        let buf = &buf[..avail];
        let mut at = 0usize;
        let mut roll = false;
        let mut deferred = false;
        while at < buf.len() {
            match record::decode(&buf[at..], false) {
                Ok(Decoded::Record(rec)) => {
                    let phy = reput + at as i64;
                    let scope = if cheap_only {
                        Scope::NoNewFile
                    } else if phy >= create_from {
                        Scope::All
                    } else {
                        Scope::ExistingQueues
                    };
                    let known_tags = own.filter(|o| o.phy == phy).map(|o| o.tags_code);
                    if !super::dispatch_record(inner, &rec, phy, notify, scope, known_tags)? {
                        deferred = true;
                        break;
                    }
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
        if deferred || next == reput {
            return Ok((n, deferred));
        }
    }
}

// Puts wake the idle dispatch thread through `inner.reput_waker` (a `service::IdleWaker`; Java's
// reput thread polls every 1 ms). Once woken, the thread does not go back to being wakeable until
// a pass finds nothing: after every pass that dispatched records it naps [`BUSY_NAP`], unwakeable,
// so that under load it dispatches in batches at no more than one switch per nap, however many
// puts arrive, rather than being switched in once per message.

/// The idle dispatch thread's longest sleep. Puts wake it, so this only bounds how long a
/// record appended before the thread registered with the waker (at start) can wait.
const IDLE_PARK: Duration = Duration::from_millis(100);

/// How long the dispatch thread naps after a pass that dispatched records, before the next pass.
/// Bounds its switches under load to one per nap; adds at most this much to a delivery then.
const BUSY_NAP: Duration = Duration::from_micros(200);

/// The dispatch thread.
pub struct ReputMessageService(ServiceThread);

impl ReputMessageService {
    /// Starts tailing from `inner.reput_offset`.
    pub(crate) fn start(inner: Arc<StoreInner>) -> std::io::Result<Self> {
        // Until the thread is registered, puts cannot wake it; it still polls every IDLE_PARK.
        ServiceThread::spawn_woken_by("ReputMessageService", inner, waker, run).map(Self)
    }

    /// Stops after dispatching everything confirmed.
    pub fn stop(&mut self) {
        self.0.stop();
    }
}

/// What puts wake the thread through.
fn waker(inner: &StoreInner) -> &IdleWaker {
    &inner.reput_waker
}

fn run(inner: Arc<StoreInner>, stop: Arc<AtomicBool>) {
    let failing = FailureLatch::default();
    loop {
        let stopping = stop.load(Ordering::Acquire);
        let limit = inner.confirm_offset();
        let res = reput_until(&inner, limit, true);
        if res.is_ok() && failing.succeeded() {
            tracing::warn!("dispatch works again");
        }
        match res {
            Ok(0) => {
                if stopping {
                    return;
                }
                let reput = &inner.reput_offset;
                inner.reput_waker.sleep_unless(IDLE_PARK, || {
                    inner.confirm_offset() > reput.load(Ordering::Acquire)
                });
            }
            Ok(_) => std::thread::sleep(BUSY_NAP),
            Err(e) => {
                if failing.failed() {
                    tracing::error!(error = %e, "dispatch failed; retried every 100 ms, quietly \
                        until it works again (new messages are not readable until then)");
                }
                if stopping {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}
