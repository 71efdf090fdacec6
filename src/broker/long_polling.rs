//! Long polling: a pull at the end of a queue waits here until the store's dispatch reports new
//! units for that queue (woken at once) or the pull's suspend timeout passes. No timers poll.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use dashmap::DashMap;
use tokio::sync::Notify;
use tokio::time::Instant;

/// Waiters per (topic, queueId). Dispatch calls `notify_arrival`; pulls call `hold`.
#[derive(Default)]
pub struct PullRequestHoldService {
    queues: DashMap<(String, i32), Arc<Notify>>,
    /// Bumped by `release_all`: every hold that started before answers at once.
    epoch: AtomicU64,
    /// Set at shutdown: holds answer at once and new ones do not wait.
    closed: AtomicBool,
    /// Pulls being held now.
    held: AtomicU64,
}

/// Counts one held pull while alive.
struct Held<'a>(&'a AtomicU64);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl PullRequestHoldService {
    pub fn new() -> Self {
        Self::default()
    }

    /// Wakes every pull waiting on `topic`/`queue_id`. Cheap when nobody waits.
    pub fn notify_arrival(&self, topic: &str, queue_id: i32) {
        if self.queues.is_empty() {
            return;
        }
        if let Some(n) = self.queues.get(&(topic.to_string(), queue_id)) {
            n.notify_waiters();
        }
    }

    /// Answers every held pull now with what its queue holds (an offset reset: the client's
    /// next pull picks the reset up). Waking alone would not do: a woken pull whose queue did
    /// not grow goes back to waiting until its suspend timeout.
    pub fn release_all(&self) {
        self.epoch.fetch_add(1, Ordering::AcqRel);
        self.queues.iter().for_each(|e| e.value().notify_waiters());
    }

    /// Shutdown: releases every held pull and lets no new one wait, so in-flight requests
    /// finish at once instead of holding the server's grace period until their timeouts.
    /// Whether the broker is shutting down (`close` was called).
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.release_all();
    }

    /// Runs `attempt` until it yields a value or `deadline` passes; between attempts waits for
    /// an arrival on the queue. The waiter is registered before each attempt, so an arrival
    /// between the attempt and the wait is never missed. Returns the last attempt's value.
    pub async fn hold<T>(
        &self,
        topic: &str,
        queue_id: i32,
        deadline: Instant,
        mut attempt: impl FnMut() -> Result<T, T>,
    ) -> T {
        let notify = self
            .queues
            .entry((topic.to_string(), queue_id))
            .or_default()
            .clone();
        let epoch = self.epoch.load(Ordering::Acquire);
        self.held.fetch_add(1, Ordering::Relaxed);
        let _held = Held(&self.held);
        loop {
            let notified = notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let last = match attempt() {
                Ok(found) => return found,
                Err(nothing) => nothing,
            };
            if Instant::now() >= deadline || self.released_since(epoch) {
                return last;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                // One more look at the deadline: a unit may have landed as the timer fired.
                return attempt().unwrap_or_else(|nothing| nothing);
            }
            // Woken by the put that made the message (dispatched on the putting thread), this task
            // would run next, ahead of the put's own answer; going to the back of the run queue
            // lets that answer out first.
            tokio::task::yield_now().await;
        }
    }

    fn released_since(&self, epoch: u64) -> bool {
        self.closed.load(Ordering::Acquire) || self.epoch.load(Ordering::Acquire) != epoch
    }

    /// Pulls held now, waiting for a message or their suspend timeout.
    pub fn held(&self) -> u64 {
        self.held.load(Ordering::Relaxed)
    }

    /// Drops queue entries nobody waits on (called periodically).
    pub fn prune(&self) {
        self.queues.retain(|_, n| Arc::strong_count(n) > 1);
    }
}

/// The suspend deadline for a pull: now + `suspendTimeoutMillis` (Java caps nothing; we cap at 60 s).
pub fn deadline_after(millis: i64) -> Instant {
    Instant::now() + Duration::from_millis(millis.clamp(0, 60_000) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[tokio::test]
    async fn arrival_wakes_a_held_pull_at_once() {
        let svc = Arc::new(PullRequestHoldService::new());
        let ready = Arc::new(AtomicBool::new(false));
        let (s, r) = (svc.clone(), ready.clone());
        let started = Instant::now();
        let held = tokio::spawn(async move {
            s.hold("T", 0, deadline_after(10_000), || {
                if r.load(Ordering::SeqCst) {
                    Ok(1)
                } else {
                    Err(0)
                }
            })
            .await
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        ready.store(true, Ordering::SeqCst);
        svc.notify_arrival("T", 0);
        assert_eq!(held.await.unwrap(), 1);
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[tokio::test]
    async fn release_and_close_answer_held_pulls_at_once() {
        let svc = Arc::new(PullRequestHoldService::new());
        let started = Instant::now();
        let s = svc.clone();
        let held = tokio::spawn(async move {
            s.hold("T", 0, deadline_after(30_000), || Err::<i32, i32>(3))
                .await
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        svc.release_all();
        assert_eq!(held.await.unwrap(), 3);
        svc.close();
        let after_close = svc.hold("T", 0, deadline_after(30_000), || Err::<i32, i32>(4));
        assert_eq!(after_close.await, 4);
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[tokio::test]
    async fn timeout_returns_the_empty_answer() {
        let svc = PullRequestHoldService::new();
        let v = svc
            .hold("T", 1, deadline_after(50), || Err::<i32, i32>(7))
            .await;
        assert_eq!(v, 7);
    }
}
