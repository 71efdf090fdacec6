//! `GroupCommitService`: SYNC_FLUSH. Appends waiting for durability queue a request; one thread
//! flushes once for everything queued and releases the whole group.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use tokio::sync::oneshot;

use crate::store::message::PutMessageStatus;
use crate::store::service::ServiceThread;
use crate::store::StoreInner;

/// One waiting append.
pub(crate) struct FlushRequest {
    pub next_offset: i64,
    pub deadline: Instant,
    /// When the put began (its elapsed time goes to the store's stats when it completes).
    pub started: Instant,
    pub tx: oneshot::Sender<PutMessageStatus>,
}

/// The request list shared by putters and the service thread.
#[derive(Default)]
pub(crate) struct GroupCommitQueue {
    requests: Mutex<Vec<FlushRequest>>,
    cv: Condvar,
}

impl GroupCommitQueue {
    /// Queues a request and wakes the service.
    pub fn submit(&self, req: FlushRequest) {
        self.requests.lock().push(req);
        self.cv.notify_one();
    }

    /// Wakes the service (puts that do not wait).
    pub fn wake(&self) {
        self.cv.notify_one();
    }

    fn take(&self, wait: Duration, into: &mut Vec<FlushRequest>) {
        let mut g = self.requests.lock();
        if g.is_empty() {
            self.cv.wait_for(&mut g, wait);
        }
        into.append(&mut g);
    }
}

pub struct GroupCommitService(ServiceThread);

impl GroupCommitService {
    pub(crate) fn start(inner: Arc<StoreInner>) -> std::io::Result<Self> {
        ServiceThread::spawn("GroupCommitService", inner, run).map(Self)
    }

    /// The loop waits on `queue`, not in a park: wake it there.
    pub(crate) fn stop(&mut self, queue: &GroupCommitQueue) {
        self.0.stop_and_wake(|| queue.wake());
    }
}

fn run(inner: Arc<StoreInner>, stop: Arc<AtomicBool>) {
    let Some(queue) = inner.group_commit.as_ref() else {
        return;
    };
    let mut pending: Vec<FlushRequest> = Vec::new();
    let mut last_flushed = i64::MIN;
    loop {
        let stopping = stop.load(Ordering::Acquire);
        queue.take(Duration::from_millis(10), &mut pending);
        let flushed = if inner.commitlog.is_poisoned() {
            None
        } else {
            super::flush_commit_log(&inner, 0, true).ok()
        };
        if let Some(f) = flushed.filter(|&f| f > last_flushed) {
            // under SYNC_FLUSH dispatch reads only what is flushed
            last_flushed = f;
            inner.reput_waker.wake();
        }
        let now = Instant::now();
        // after a failed fsync what reached disk before it is still acknowledged; the rest is
        // refused, not FLUSH_DISK_TIMEOUT, which the Java client returns as a SendResult
        let durable = flushed.unwrap_or_else(|| inner.commitlog.flushed_offset());
        pending.retain_mut(|r| {
            let done = match flushed {
                _ if durable >= r.next_offset => Some(PutMessageStatus::PUT_OK),
                None => Some(PutMessageStatus::SERVICE_NOT_AVAILABLE),
                _ if now >= r.deadline || stopping => Some(PutMessageStatus::FLUSH_DISK_TIMEOUT),
                _ => None,
            };
            match done {
                Some(st) => {
                    let tx = std::mem::replace(&mut r.tx, oneshot::channel().0);
                    let _ = tx.send(st);
                    // Java's `isOk()`: a flush timeout still stored the message
                    let ok = matches!(
                        st,
                        PutMessageStatus::PUT_OK | PutMessageStatus::FLUSH_DISK_TIMEOUT
                    );
                    inner.stats.put_done(now.duration_since(r.started), ok);
                    false
                }
                None => true,
            }
        });
        if stopping && pending.is_empty() {
            return;
        }
    }
}
