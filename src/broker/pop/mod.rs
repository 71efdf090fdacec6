//! POP consumption (RocketMQ 5.x): the broker hands out messages and keeps each one invisible
//! until it is acknowledged or its invisible time passes. State lives where the Java broker keeps
//! it, so a store moves between the two with pops in flight: every pop writes a checkpoint (CK)
//! and every ack an ack record to the revive topic `rmq_sys_REVIVE_LOG_<cluster>` (through the
//! timer when their time is ahead), the group's consumer offset moves past what was popped, and
//! the revive service (`revive.rs`) pairs CKs with acks once their time has come and puts what
//! nobody acknowledged into the pop retry topic `%RETRY%<group>_<topic>`, from which later pops
//! read. Request modes (who pops) are in `config/messageRequestMode.json`.
//!
//! Memory only, as in Java: the per-queue pop locks, held POP requests and the CK counter.

pub mod order_info;
pub mod records;
pub mod request_mode;
pub mod revive;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use dashmap::DashMap;

use crate::broker::long_polling::PullRequestHoldService;
use order_info::ConsumerOrderInfoManager;
use request_mode::MessageRequestModeManager;

pub struct PopService {
    /// Java `ckMessageNumber`: picks the revive queue of each pop.
    ck_counter: AtomicU64,
    /// `topic@group@queueId` → held by a pop reading that queue now (Java `QueueLockManager`).
    locks: DashMap<String, Arc<AtomicBool>>,
    /// POP requests waiting for messages, by (topic, queueId), -1 for "every queue".
    pub hold: PullRequestHoldService,
    pub modes: MessageRequestModeManager,
    /// Orderly pops: `config/consumerOrderInfo.json`.
    pub order: ConsumerOrderInfoManager,
    /// `topic@group@queueId` → POP and NOTIFICATION requests held now (POLLING_INFO).
    polling: DashMap<String, usize>,
    polling_total: AtomicU64,
    /// Pop retry topic → its topic: a message dispatched to a retry topic wakes the pops of
    /// the topic (Java wakes them for V2 retry topics only, so a revived message waits for the
    /// next pop there).
    retry_of: DashMap<String, String>,
    /// Per revive queue, the revive time of the oldest checkpoint not revived yet (now when
    /// none; 0 before the first scan): Java's `currentReviveMessageTimestamp`, for the
    /// `rocketmq_pop_revive_*` gauges.
    pub revive_ts: Vec<std::sync::atomic::AtomicI64>,
    /// (topic, queueId) → when a wake-up is already scheduled (orderly queues unblocking): at
    /// most one pending per queue, as Java's one timeout per key.
    wakes: DashMap<(String, i32), i64>,
}

/// One held request, counted while alive.
pub struct Polling<'a> {
    svc: &'a PopService,
    key: String,
}

impl Drop for Polling<'_> {
    fn drop(&mut self) {
        if let Some(mut n) = self.svc.polling.get_mut(&self.key) {
            *n = n.saturating_sub(1);
        }
        self.svc.polling_total.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A queue's pop lock, released on drop.
pub struct QueueLock(Arc<AtomicBool>);

impl Drop for QueueLock {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl PopService {
    pub fn new(
        modes: MessageRequestModeManager,
        order: ConsumerOrderInfoManager,
        revive_queue_num: i32,
    ) -> Self {
        Self {
            ck_counter: AtomicU64::new(0),
            locks: DashMap::new(),
            hold: PullRequestHoldService::new(),
            modes,
            order,
            polling: DashMap::new(),
            polling_total: AtomicU64::new(0),
            retry_of: DashMap::new(),
            revive_ts: (0..revive_queue_num.max(1))
                .map(|_| std::sync::atomic::AtomicI64::new(0))
                .collect(),
            wakes: DashMap::new(),
        }
    }

    /// Counts a request about to be held; `None` (POLLING_FULL) when `per_key` requests are
    /// held for its key or `total` in all.
    pub fn start_polling(
        &self,
        topic: &str,
        group: &str,
        queue_id: i32,
        per_key: usize,
        total: usize,
    ) -> Option<Polling<'_>> {
        if self.polling_total.load(Ordering::Relaxed) as usize >= total {
            return None;
        }
        let key = format!("{topic}@{group}@{queue_id}");
        {
            let mut n = self.polling.entry(key.clone()).or_insert(0);
            if *n >= per_key {
                return None;
            }
            *n += 1;
        }
        self.polling_total.fetch_add(1, Ordering::Relaxed);
        Some(Polling { svc: self, key })
    }

    /// Requests held now for (topic, group, queueId) (POLLING_INFO's `pollingNum`).
    pub fn polling_num(&self, topic: &str, group: &str, queue_id: i32) -> usize {
        self.polling
            .get(&format!("{topic}@{group}@{queue_id}"))
            .map_or(0, |n| *n)
    }

    /// The revive queue of the next pop.
    pub fn next_revive_qid(&self, revive_queue_num: i32) -> i32 {
        let n = self.ck_counter.fetch_add(1, Ordering::Relaxed);
        (n % revive_queue_num.max(1) as u64) as i32
    }

    /// Java `QueueLockManager.tryLock`: `None` when another pop reads the queue now.
    pub fn try_lock(&self, topic: &str, group: &str, queue_id: i32) -> Option<QueueLock> {
        let key = format!("{topic}@{group}@{queue_id}");
        let flag = self.locks.entry(key).or_default().clone();
        flag.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .ok()
            .map(|_| QueueLock(flag))
    }

    /// A message arrived on `topic`/`queue_id`: wakes the pops held on that queue and on "every
    /// queue" of the topic.
    pub fn notify_arrival(&self, topic: &str, queue_id: i32) {
        self.hold.notify_arrival(topic, queue_id);
        self.hold.notify_arrival(topic, -1);
        if topic.starts_with(crate::common::topic::RETRY_GROUP_TOPIC_PREFIX) {
            if let Some(orig) = self.retry_of.get(topic) {
                self.hold.notify_arrival(&orig, -1);
            }
        }
    }

    /// Records that `retry_topic` holds the pop retries of `topic` (for the wake-ups).
    pub fn register_retry_topic(&self, retry_topic: &str, topic: &str) {
        if !self.retry_of.contains_key(retry_topic) {
            self.retry_of
                .insert(retry_topic.to_string(), topic.to_string());
        }
    }

    /// Waits for `topic`/`queue_id`'s pop lock (the orderly ack and change paths, as Java spins).
    pub async fn lock(&self, topic: &str, group: &str, queue_id: i32) -> QueueLock {
        loop {
            if let Some(l) = self.try_lock(topic, group, queue_id) {
                return l;
            }
            tokio::task::yield_now().await;
        }
    }

    /// Wakes the pops held on `topic`/`queue_id` at `at_ms` (an orderly queue unblocking).
    pub fn wake_at(self: &std::sync::Arc<Self>, topic: &str, queue_id: i32, at_ms: i64) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let now = crate::broker::now_millis();
        let key = (topic.to_string(), queue_id);
        {
            let mut slot = self.wakes.entry(key.clone()).or_insert(i64::MAX);
            if *slot > now && *slot <= at_ms {
                return;
            }
            *slot = at_ms;
        }
        let svc = std::sync::Arc::downgrade(self);
        let wait = at_ms.saturating_sub(now).clamp(0, 600_000) as u64;
        rt.spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(wait + 1)).await;
            if let Some(svc) = svc.upgrade() {
                svc.wakes.remove_if(&key, |_, t| *t == at_ms);
                svc.notify_arrival(&key.0, key.1);
            }
        });
    }

    /// Drops locks and hold entries nobody uses (periodically).
    pub fn prune(&self) {
        self.locks
            .retain(|_, l| Arc::strong_count(l) > 1 || l.load(Ordering::Acquire));
        self.polling.retain(|_, n| *n > 0);
        self.hold.prune();
    }
}
