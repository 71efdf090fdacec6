//! `RebalanceLockManager`: which client of an orderly consumer group owns which queue
//! (LOCK_BATCH_MQ / UNLOCK_BATCH_MQ). A lock lives `rebalanceLockMaxLiveTime` ms unless renewed by
//! the same client; it is dropped on unlock and when the connection that took it closes.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::common::topic::MessageQueue;

/// One queue's owner.
#[derive(Debug, Clone)]
struct LockEntry {
    client_id: String,
    conn_id: u64,
    last_update: Instant,
}

/// group -> queue -> owner (Java `mqLockTable`).
pub struct RebalanceLockManager {
    max_live: Duration,
    table: Mutex<HashMap<String, HashMap<MessageQueue, LockEntry>>>,
}

impl RebalanceLockManager {
    pub fn new(max_live: Duration) -> Self {
        Self {
            max_live,
            table: Mutex::new(HashMap::new()),
        }
    }

    /// Java `tryLockBatch`: the subset of `mqs` now held by `client_id` (newly taken, renewed, or
    /// taken over from an expired owner).
    pub fn try_lock_batch(
        &self,
        group: &str,
        mqs: &[MessageQueue],
        client_id: &str,
        conn_id: u64,
    ) -> Vec<MessageQueue> {
        let now = Instant::now();
        let mut table = self.table.lock();
        let group_table = table.entry(group.to_string()).or_default();
        let mut locked = Vec::with_capacity(mqs.len());
        for mq in mqs {
            let fresh = LockEntry {
                client_id: client_id.to_string(),
                conn_id,
                last_update: now,
            };
            match group_table.get_mut(mq) {
                None => {
                    group_table.insert(mq.clone(), fresh);
                }
                Some(e) if e.client_id == client_id || self.expired(e, now) => *e = fresh,
                Some(e) => {
                    tracing::info!(group, ?mq, owner = %e.client_id, requester = client_id, "queue locked by another client");
                    continue;
                }
            }
            locked.push(mq.clone());
        }
        locked
    }

    /// Java `unlockBatch`: releases the queues `client_id` holds.
    pub fn unlock_batch(&self, group: &str, mqs: &[MessageQueue], client_id: &str) {
        let mut table = self.table.lock();
        if let Some(group_table) = table.get_mut(group) {
            for mq in mqs {
                if group_table
                    .get(mq)
                    .is_some_and(|e| e.client_id == client_id)
                {
                    group_table.remove(mq);
                }
            }
        }
    }

    /// Releases every lock taken over a connection that closed.
    pub fn on_connection_closed(&self, conn_id: u64) {
        let mut table = self.table.lock();
        for group_table in table.values_mut() {
            group_table.retain(|_, e| e.conn_id != conn_id);
        }
        table.retain(|_, g| !g.is_empty());
    }

    /// Whether `client_id` holds an unexpired lock on `mq`.
    pub fn is_locked(&self, group: &str, mq: &MessageQueue, client_id: &str) -> bool {
        let now = Instant::now();
        self.table
            .lock()
            .get(group)
            .and_then(|g| g.get(mq))
            .is_some_and(|e| e.client_id == client_id && !self.expired(e, now))
    }

    /// Java `isLockAllExpired`: no unexpired lock in the group (it is not consuming orderly).
    pub fn is_lock_all_expired(&self, group: &str) -> bool {
        let now = Instant::now();
        self.table
            .lock()
            .get(group)
            .is_none_or(|g| g.values().all(|e| self.expired(e, now)))
    }

    fn expired(&self, e: &LockEntry, now: Instant) -> bool {
        now.saturating_duration_since(e.last_update) > self.max_live
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mq(q: i32) -> MessageQueue {
        MessageQueue::new("T", "b", q)
    }

    #[test]
    fn second_client_is_refused_until_the_owner_unlocks() {
        let m = RebalanceLockManager::new(Duration::from_secs(60));
        assert_eq!(m.try_lock_batch("G", &[mq(0), mq(1)], "a", 1).len(), 2);
        assert_eq!(m.try_lock_batch("G", &[mq(0), mq(2)], "b", 2), vec![mq(2)]);
        assert_eq!(m.try_lock_batch("G", &[mq(0)], "a", 1), vec![mq(0)]);
        m.unlock_batch("G", &[mq(0)], "b");
        assert!(m.is_locked("G", &mq(0), "a"));
        m.unlock_batch("G", &[mq(0)], "a");
        assert_eq!(m.try_lock_batch("G", &[mq(0)], "b", 2), vec![mq(0)]);
    }

    #[test]
    fn expired_lock_is_taken_over_and_closed_connection_releases() {
        let m = RebalanceLockManager::new(Duration::from_millis(0));
        m.try_lock_batch("G", &[mq(0)], "a", 1);
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(m.try_lock_batch("G", &[mq(0)], "b", 2), vec![mq(0)]);
        let m = RebalanceLockManager::new(Duration::from_secs(60));
        m.try_lock_batch("G", &[mq(0)], "a", 1);
        m.on_connection_closed(1);
        assert_eq!(m.try_lock_batch("G", &[mq(0)], "b", 2), vec![mq(0)]);
    }
}
