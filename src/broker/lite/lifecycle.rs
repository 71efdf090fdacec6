//! The lite queues' lifecycle on the file consume queue (Java 5.5 `AbstractLiteLifecycleManager`
//! and `LiteLifecycleManager`): an idle lite queue is deleted once its parent's
//! `lite.topic.expiration` (minutes) has passed since its newest message, never before the
//! broker's `minLiteTTl`; deleting a LITE parent deletes all its lite queues.

use std::collections::HashMap;
use std::ops::ControlFlow;

use crate::broker::processor::lite::{bind_topic, is_lite_topic, ATTR_LITE_EXPIRATION};
use crate::broker::BrokerContext;
use crate::common::topic::{lite_parent_and_topic, LITE_TOPIC_PREFIX};

/// Scans in a row an empty lite queue must be seen before it is deleted (Java: more than 5).
const EMPTY_SCANS: u32 = 5;

/// Java `deleteLmq`: the queue, the offsets and FIFO state of the groups bound to its parent,
/// its subscriptions (no client is notified).
pub fn delete_lmq(ctx: &BrokerContext, lmq: &str, parent: &str) {
    for g in ctx.groups.all() {
        if bind_topic(&g) == Some(parent) {
            ctx.offsets.remove_offset(&g.group_name, lmq);
            ctx.lite.order.clear_block(lmq, &g.group_name, 0);
        }
    }
    if let Err(e) = ctx.store.delete_topics(&[lmq]) {
        tracing::warn!(lmq, error = %e, "lite queue not deleted");
    }
    ctx.lite.forget_lmq(lmq);
}

/// Java `cleanByParentTopic` (DELETE_TOPIC_IN_BROKER of a LITE topic): every lite queue of the
/// parent goes, expired or not.
pub fn delete_parent(ctx: &BrokerContext, parent: &str) -> usize {
    let prefix = format!("{LITE_TOPIC_PREFIX}{parent}$");
    let lmqs = ctx.store.queue_topics_with_prefix(&prefix);
    for lmq in &lmqs {
        delete_lmq(ctx, lmq, parent);
    }
    lmqs.len()
}

/// The TTL scan; `empty` counts each empty queue's scans in a row.
pub struct TtlScan {
    empty: HashMap<String, u32>,
}

impl Default for TtlScan {
    fn default() -> Self {
        Self::new()
    }
}

impl TtlScan {
    pub fn new() -> Self {
        Self {
            empty: HashMap::new(),
        }
    }

    /// One pass (Java `cleanExpiredLiteTopic`); the lite queues deleted.
    pub fn run(&mut self, ctx: &BrokerContext, now: i64) -> usize {
        if now - ctx.boot_timestamp < ctx.config.min_lite_ttl {
            return 0;
        }
        let mut ttl: HashMap<String, i64> = HashMap::new();
        for tc in ctx.topics.all() {
            if is_lite_topic(&tc) {
                let minutes = tc
                    .attributes
                    .get(ATTR_LITE_EXPIRATION)
                    .or_else(|| tc.attributes.get(&format!("+{ATTR_LITE_EXPIRATION}")))
                    .and_then(|v| v.parse::<i64>().ok())
                    .unwrap_or(-1);
                ttl.insert(tc.topic_name.clone(), minutes);
            }
        }
        // Find every expired queue first, then delete them (Java `cleanExpiredLiteTopic` too):
        // on the RocksDB consume queue each deletion is a range delete, and a read after one
        // rebuilds the range-tombstone list, so reads and deletes taken in turns cost
        // O(deleted²) (a million expired queues never finished). The walk copies the names of
        // empty and expired queues only.
        let mut expired_queues = Vec::new();
        let mut seen_empty = HashMap::new();
        let mut closed = false;
        ctx.store
            .for_each_topic_with_prefix(LITE_TOPIC_PREFIX, |lmq, max| {
                if ctx.pull_hold.is_closed() {
                    closed = true; // shutting down: the next start scans again
                    return ControlFlow::Break(());
                }
                let Some((parent, _)) = lite_parent_and_topic(lmq) else {
                    return ControlFlow::Continue(());
                };
                let expired = if max <= 0 {
                    let n = self.empty.get(lmq).copied().unwrap_or(0) + 1;
                    if n <= EMPTY_SCANS {
                        seen_empty.insert(lmq.to_string(), n);
                    }
                    n > EMPTY_SCANS
                } else {
                    let last = ctx.store.message_store_timestamp(lmq, 0, max - 1);
                    let inactive = now - last;
                    let minutes = ttl.get(parent).copied().unwrap_or(-1);
                    inactive >= ctx.config.min_lite_ttl
                        && minutes > 0
                        && inactive > minutes.saturating_mul(60_000)
                };
                if expired {
                    expired_queues.push((lmq.to_string(), parent.to_string()));
                }
                ControlFlow::Continue(())
            });
        if closed {
            return 0;
        }
        self.empty = seen_empty;
        let mut deleted = 0;
        for (lmq, parent) in &expired_queues {
            if ctx.pull_hold.is_closed() {
                break;
            }
            tracing::debug!(lmq = %lmq, "lite topic expired; deleting its queue and offsets");
            delete_lmq(ctx, lmq, parent);
            deleted += 1;
        }
        if deleted > 0 {
            tracing::info!(deleted, "expired lite topics deleted (queues and offsets)");
        }
        deleted
    }
}
