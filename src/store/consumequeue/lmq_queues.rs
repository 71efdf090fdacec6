//! `LmqQueues`: queue 0 of every `%LMQ%` topic (each lite topic is one) in one flat set, and
//! the put offsets of LMQs that have no consume queue yet.
//!
//! A lite queue costs, at rest on the RocksDB consume queue, its [`ConsumeQueue`] in an `Arc`
//! (72 bytes, mimalloc's 80-byte class), its name (a 32-byte block for `%LMQ%$<parent>$<lite>`
//! names of up to 32 bytes) and one 8-byte slot of this set plus its control byte (hashbrown
//! keeps the set between 7/16 and 7/8 full: 12 B per queue at 100 000 queues, 19 at 1 000 000):
//! 124-131 bytes; measured (RssAnon, mimalloc) 133-139 B for the store alone and 136-144 B for
//! the broker after a restart, at 100 000 and 1 000 000 lite queues (was 737-781). The set
//! needs no key of its own (a queue is found by its name through [`Borrow`]), there is no
//! per-topic inner map for the one queue id an LMQ has, and the put offset the commit log
//! assigns from is a field of the queue, not a second table of names.
//! `tests/store_lite_memory.rs` measures it (benches/README.md has the runs).

use std::borrow::Borrow;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::ConsumeQueue;

/// An LMQ's queue, hashed and compared by its name.
struct ByName(Arc<ConsumeQueue>);

impl Borrow<str> for ByName {
    fn borrow(&self) -> &str {
        self.0.topic()
    }
}

impl Hash for ByName {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.topic().hash(state)
    }
}

impl PartialEq for ByName {
    fn eq(&self, other: &Self) -> bool {
        self.0.topic() == other.0.topic()
    }
}

impl Eq for ByName {}

/// Queue 0 of the `%LMQ%` topics, by name.
#[derive(Default)]
pub(super) struct LmqQueues {
    queues: HashSet<ByName>,
    /// Next put offset of LMQs the put has named but dispatch has not made a queue for yet (the
    /// commit log counts an LMQ's offsets apart from its consume queue, as Java's
    /// `lmqTopicQueueTable` does); moved into the queue when dispatch makes it. Empty at rest.
    pending: HashMap<Box<str>, i64>,
}

impl LmqQueues {
    pub(super) fn get(&self, name: &str) -> Option<&Arc<ConsumeQueue>> {
        self.queues.get(name).map(|q| &q.0)
    }

    pub(super) fn contains(&self, name: &str) -> bool {
        self.queues.contains(name)
    }

    /// Adds a queue (none of its name may be there); it takes over the put offset kept for its
    /// name, if any.
    pub(super) fn insert(&mut self, q: Arc<ConsumeQueue>) {
        if let Some(next) = self.pending.remove(q.topic()) {
            q.set_put_offset(next);
        }
        self.queues.insert(ByName(q));
    }

    /// Removes the queue and the put offset of `name`.
    pub(super) fn remove(&mut self, name: &str) -> Option<Arc<ConsumeQueue>> {
        self.pending.remove(name);
        self.queues.take(name).map(|q| q.0)
    }

    /// Whether the put has named `name` and dispatch has not made its queue yet.
    pub(super) fn is_pending(&self, name: &str) -> bool {
        self.pending.contains_key(name)
    }

    /// How many LMQs are pending (see [`Self::pending`]).
    pub(super) fn pending_len(&self) -> usize {
        self.pending.len()
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &Arc<ConsumeQueue>> {
        self.queues.iter().map(|q| &q.0)
    }

    /// The next put offset of `name` (0 for an LMQ never put to).
    pub(super) fn put_offset(&self, name: &str) -> i64 {
        match self.get(name) {
            Some(q) => q.put_offset(),
            None => self.pending.get(name).copied().unwrap_or(0),
        }
    }

    /// Sets the next put offset of `name` when it has no queue (see [`Self::pending`]).
    pub(super) fn set_pending_put_offset(&mut self, name: &str, next: i64) {
        match self.get(name) {
            Some(q) => q.set_put_offset(next),
            None => {
                self.pending.insert(name.into(), next);
            }
        }
    }

    /// After recovery: every LMQ goes on from its queue's max offset; nothing is pending.
    pub(super) fn reset_put_offsets(&mut self) {
        self.pending = HashMap::new();
        for q in self.iter() {
            q.set_put_offset(q.max_offset_in_queue());
        }
    }
}
