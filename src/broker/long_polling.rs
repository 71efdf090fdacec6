//! Long polling: a pull at the end of a queue waits here until the store's dispatch reports new
//! units for that queue (woken at once) or the pull's suspend timeout passes. No timers poll.

use std::sync::Arc;
use std::time::Duration;

use dashmap::DashMap;
use tokio::sync::Notify;
use tokio::time::Instant;

/// Waiters per (topic, queueId). Dispatch calls `notify_arrival`; pulls call `wait_for_arrival`.
#[derive(Default)]
pub struct PullRequestHoldService {
    queues: DashMap<(String, i32), Arc<Notify>>,
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

    /// Wakes every waiting pull (shutdown, or a reset of offsets).
    pub fn notify_all(&self) {
        self.queues.iter().for_each(|e| e.value().notify_waiters());
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
        loop {
            let notified = notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let last = match attempt() {
                Ok(found) => return found,
                Err(nothing) => nothing,
            };
            if Instant::now() >= deadline {
                return last;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                // One more look at the deadline: a unit may have landed as the timer fired.
                return attempt().unwrap_or_else(|nothing| nothing);
            }
        }
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
    async fn timeout_returns_the_empty_answer() {
        let svc = PullRequestHoldService::new();
        let v = svc
            .hold("T", 1, deadline_after(50), || Err::<i32, i32>(7))
            .await;
        assert_eq!(v, 7);
    }
}
