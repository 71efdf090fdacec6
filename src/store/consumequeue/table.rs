//! `ConsumeQueueTable`: every consume queue of the store, by topic and queue id.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use super::lmq_queues::LmqQueues;
use super::ConsumeQueue;
use crate::store::error::{Result, StoreError};
use crate::store::paths::StorePaths;

/// The queues, in two maps: an LMQ's queue 0 (a lite topic's only queue) in the flat
/// [`LmqQueues`], every other queue by topic and queue id.
#[derive(Default)]
struct Queues {
    topics: HashMap<String, HashMap<i32, Arc<ConsumeQueue>>>,
    lmqs: LmqQueues,
}

impl Queues {
    fn get(&self, topic: &str, queue_id: i32) -> Option<&Arc<ConsumeQueue>> {
        if is_flat(topic, queue_id) {
            return self.lmqs.get(topic);
        }
        self.topics.get(topic)?.get(&queue_id)
    }

    /// Whether `topic` has any queue.
    fn has_topic(&self, topic: &str) -> bool {
        self.topics.contains_key(topic) || (is_lmq(topic) && self.lmqs.contains(topic))
    }

    /// Adds a queue none of whose topic and id is there; whether its topic is new.
    fn insert(&mut self, q: Arc<ConsumeQueue>) -> bool {
        let new_topic = !self.has_topic(q.topic());
        if is_flat(q.topic(), q.queue_id()) {
            self.lmqs.insert(q);
        } else {
            let t = self.topics.entry(q.topic().to_string()).or_default();
            t.insert(q.queue_id(), q);
        }
        new_topic
    }

    fn all(&self) -> impl Iterator<Item = &Arc<ConsumeQueue>> {
        self.topics
            .values()
            .flat_map(|m| m.values())
            .chain(self.lmqs.iter())
    }
}

/// The queues as loaded, and their topics counted.
#[derive(Default)]
struct Loaded {
    queues: Queues,
    topics: usize,
    lmq_topics: usize,
}

impl Loaded {
    fn add(&mut self, cq: ConsumeQueue) {
        let lmq = is_lmq(cq.topic());
        if self.queues.insert(Arc::new(cq)) {
            self.topics += 1;
            self.lmq_topics += usize::from(lmq);
        }
    }
}

/// All consume queues.
pub struct ConsumeQueueTable {
    paths: StorePaths,
    file_size: usize,
    queues: RwLock<Queues>,
    /// Topics with a queue (Java `consumeQueueTable.size()`), kept under the write lock.
    topic_count: AtomicUsize,
    /// Topics named `%LMQ%…` with a queue (Java `getLmqNum`), kept under the write lock.
    lmq_topics: AtomicUsize,
    /// `storeType=defaultRocksDB`: the database every queue keeps its units in.
    #[cfg(feature = "rocksdb-cq")]
    rocks: Option<Arc<super::rocksdb_store::RocksCqStore>>,
}

fn is_lmq(topic: &str) -> bool {
    topic.starts_with(crate::common::topic::LMQ_PREFIX)
}

/// Whether the queue lives in the flat LMQ set.
fn is_flat(topic: &str, queue_id: i32) -> bool {
    crate::store::lmq::is_lmq_queue(topic, queue_id)
}

impl ConsumeQueueTable {
    fn with_queues(paths: &StorePaths, file_size: usize, loaded: Loaded) -> Self {
        ConsumeQueueTable {
            paths: paths.clone(),
            file_size,
            queues: RwLock::new(loaded.queues),
            topic_count: AtomicUsize::new(loaded.topics),
            lmq_topics: AtomicUsize::new(loaded.lmq_topics),
            #[cfg(feature = "rocksdb-cq")]
            rocks: None,
        }
    }

    /// Maps every `consumequeue/<topic>/<int>` directory.
    pub fn load(paths: &StorePaths, file_size: usize) -> Result<Self> {
        let root = paths.consume_queue_root();
        let mut queues = Loaded::default();
        if let Ok(rd) = std::fs::read_dir(&root) {
            for topic_entry in rd {
                let topic_entry = topic_entry.map_err(|e| StoreError::io(&root, e))?;
                if !topic_entry.path().is_dir() {
                    continue;
                }
                let topic = topic_entry.file_name().to_string_lossy().into_owned();
                let tdir = topic_entry.path();
                let rd2 = std::fs::read_dir(&tdir).map_err(|e| StoreError::io(&tdir, e))?;
                for q in rd2 {
                    let q = q.map_err(|e| StoreError::io(&tdir, e))?;
                    let Ok(qid) = q.file_name().to_string_lossy().parse::<i32>() else {
                        continue;
                    };
                    if !q.path().is_dir() {
                        continue;
                    }
                    queues.add(ConsumeQueue::load(&topic, qid, &q.path(), file_size)?);
                }
            }
        }
        Ok(Self::with_queues(paths, file_size, queues))
    }

    /// `storeType=defaultRocksDB`: opens the RocksDB consume queue (`ROOT/consumequeue`, or
    /// `ROOT/consumequeue_rocksdb` with `separate_path`) and a queue per `max` key in it (Java
    /// `loadMaxConsumeQueueOffsets`).
    #[cfg(feature = "rocksdb-cq")]
    pub fn load_rocks(paths: &StorePaths, separate_path: bool) -> Result<Self> {
        use super::rocks_queue::db_error;
        use super::rocksdb_store::RocksCqStore;
        let t0 = std::time::Instant::now();
        let db = Arc::new(RocksCqStore::open(paths, separate_path).map_err(db_error)?);
        // straight into the table: a start with a million lite queues leaves no list of them
        // behind as garbage (the allocator keeps freed pages of an idle thread resident)
        let mut queues = Loaded::default();
        db.for_each_max_offset(|topic, queue_id, max| {
            queues.add(ConsumeQueue::rocks(
                topic,
                queue_id,
                Arc::clone(&db),
                Some(max),
            ));
        })
        .map_err(db_error)?;
        let mut table = Self::with_queues(paths, 0, queues);
        table.rocks = Some(Arc::clone(&db));
        tracing::info!(path = %db.path().display(), topics = table.topic_count(), lmq = table.lmq_count(), ms = t0.elapsed().as_millis() as u64, "RocksDB consume queue loaded");
        Ok(table)
    }

    /// The RocksDB consume queue, under `storeType=defaultRocksDB`.
    #[cfg(feature = "rocksdb-cq")]
    pub(crate) fn rocks(&self) -> Option<&Arc<super::rocksdb_store::RocksCqStore>> {
        self.rocks.as_ref()
    }

    /// Whether the queues live in RocksDB (`storeType=defaultRocksDB`).
    pub fn is_rocks(&self) -> bool {
        #[cfg(feature = "rocksdb-cq")]
        if self.rocks.is_some() {
            return true;
        }
        false
    }

    fn new_queue(&self, topic: &str, queue_id: i32) -> ConsumeQueue {
        #[cfg(feature = "rocksdb-cq")]
        if let Some(db) = &self.rocks {
            return ConsumeQueue::rocks(topic, queue_id, Arc::clone(db), None);
        }
        let dir = self.paths.consume_queue_dir(topic, queue_id);
        ConsumeQueue::new(topic, queue_id, &dir, self.file_size)
    }

    /// The queue, if it exists.
    pub fn find(&self, topic: &str, queue_id: i32) -> Option<Arc<ConsumeQueue>> {
        self.queues.read().get(topic, queue_id).cloned()
    }

    /// The queue, created (empty) if missing.
    pub fn find_or_create(&self, topic: &str, queue_id: i32) -> Arc<ConsumeQueue> {
        if let Some(q) = self.find(topic, queue_id) {
            return q;
        }
        let mut w = self.queues.write();
        if let Some(q) = w.get(topic, queue_id) {
            return Arc::clone(q);
        }
        let q = Arc::new(self.new_queue(topic, queue_id));
        if w.insert(Arc::clone(&q)) {
            self.topic_count.fetch_add(1, Ordering::Relaxed);
            if is_lmq(topic) {
                self.lmq_topics.fetch_add(1, Ordering::Relaxed);
            }
        }
        q
    }

    /// Whether `topic` has any queue.
    pub fn find_topic(&self, topic: &str) -> bool {
        self.queues.read().has_topic(topic)
    }

    /// How many `%LMQ%` topics have a queue.
    pub fn lmq_count(&self) -> usize {
        self.lmq_topics.load(Ordering::Relaxed)
    }

    /// How many `%LMQ%` topics have a queue or are named by a put whose dispatch has not made
    /// the queue yet: what the LMQ quota counts, so that it does not depend on how far dispatch
    /// is behind the puts.
    pub fn lmq_count_named(&self) -> usize {
        let r = self.queues.read();
        self.lmq_topics.load(Ordering::Relaxed) + r.lmqs.pending_len()
    }

    /// Whether LMQ `name` has a queue or is pending one (see [`Self::lmq_count_named`]).
    pub fn lmq_named(&self, name: &str) -> bool {
        let r = self.queues.read();
        r.has_topic(name) || r.lmqs.is_pending(name)
    }

    /// Snapshot of all queues.
    pub fn all(&self) -> Vec<Arc<ConsumeQueue>> {
        self.queues.read().all().cloned().collect()
    }

    /// How many topics have a consume queue (Java `consumeQueueTable.size()`).
    pub fn topic_count(&self) -> usize {
        self.topic_count.load(Ordering::Relaxed)
    }

    /// Topics with a queue.
    pub fn topics(&self) -> Vec<String> {
        let r = self.queues.read();
        let lmqs = r.lmqs.iter().map(|q| q.topic());
        let only_lmq = lmqs.filter(|t| !r.topics.contains_key(*t));
        r.topics
            .keys()
            .map(|t| t.as_str())
            .chain(only_lmq)
            .map(str::to_string)
            .collect()
    }

    /// Topics starting with `prefix`, for a walk that reads each one's queue 0 without holding
    /// the lock: an LMQ as its queue (a handle, not a copy of its name), any other topic by
    /// name (in the second list, once, whether or not it has a queue 0).
    pub fn with_prefix(&self, prefix: &str) -> (Vec<Arc<ConsumeQueue>>, Vec<String>) {
        let r = self.queues.read();
        let lmqs: Vec<_> = r
            .lmqs
            .iter()
            .filter(|q| q.topic().starts_with(prefix))
            .cloned()
            .collect();
        let others = r
            .topics
            .keys()
            .filter(|t| t.starts_with(prefix) && !r.lmqs.contains(t))
            .cloned()
            .collect();
        (lmqs, others)
    }

    /// Counts a topic that lost its last queue.
    fn note_topic_gone(&self, topic: &str) {
        self.topic_count.fetch_sub(1, Ordering::Relaxed);
        if is_lmq(topic) {
            self.lmq_topics.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Removes a topic and deletes its directory.
    pub fn remove_topic(&self, topic: &str) -> Result<()> {
        let removed = {
            let mut w = self.queues.write();
            let had = w.has_topic(topic);
            let mut removed: Vec<_> = w
                .topics
                .remove(topic)
                .into_iter()
                .flat_map(|m| m.into_values())
                .collect();
            if is_lmq(topic) {
                removed.extend(w.lmqs.remove(topic));
            }
            if had {
                self.note_topic_gone(topic);
            }
            removed
        };
        for q in &removed {
            q.destroy()?;
        }
        if self.is_rocks() {
            return Ok(()); // no directory per topic
        }
        let dir = self.paths.consume_queue_topic_dir(topic);
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StoreError::io(&dir, e)),
        }
    }

    /// Removes one queue (deleting its files).
    pub fn remove_queue(&self, topic: &str, queue_id: i32) -> Result<()> {
        let q = {
            let mut w = self.queues.write();
            let q = if is_flat(topic, queue_id) {
                w.lmqs.remove(topic)
            } else {
                let q = w.topics.get_mut(topic).and_then(|m| m.remove(&queue_id));
                if w.topics.get(topic).is_some_and(|m| m.is_empty()) {
                    w.topics.remove(topic);
                }
                q
            };
            if q.is_some() && !w.has_topic(topic) {
                self.note_topic_gone(topic);
            }
            q
        };
        if let Some(q) = q {
            q.destroy()?;
        }
        Ok(())
    }

    /// The next queue offset the put assigns to LMQ `name`'s queue 0 (called under the commit
    /// log's put lock, which is the only writer of it).
    pub(crate) fn lmq_put_offset(&self, name: &str) -> i64 {
        self.queues.read().lmqs.put_offset(name)
    }

    /// Sets the next put offset of LMQ `name`'s queue 0 (under the put lock).
    pub(crate) fn set_lmq_put_offset(&self, name: &str, next: i64) {
        if let Some(q) = self.queues.read().lmqs.get(name) {
            q.set_put_offset(next);
            return;
        }
        // no queue yet: the offset waits for dispatch to make it
        self.queues.write().lmqs.set_pending_put_offset(name, next);
    }

    /// Moves LMQ `name`'s put offset on by one (under the put lock).
    pub(crate) fn advance_lmq_put_offset(&self, name: &str) {
        if let Some(q) = self.queues.read().lmqs.get(name) {
            q.set_put_offset(q.put_offset() + 1);
            return;
        }
        let mut w = self.queues.write();
        let next = w.lmqs.put_offset(name) + 1;
        w.lmqs.set_pending_put_offset(name, next);
    }

    /// The earliest commit-log offset from which a queue needs re-dispatch to restore units
    /// recovery cut for damage inside it (files only).
    pub fn min_repair_from(&self) -> Option<i64> {
        self.queues
            .read()
            .all()
            .filter_map(|q| q.repair_from())
            .min()
    }

    /// After recovery: each LMQ's put offset is its queue's max offset.
    pub(crate) fn reset_lmq_put_offsets(&self) {
        self.queues.write().lmqs.reset_put_offsets();
    }

    /// Flushes every queue fully (RocksDB: the database's memtables, units before offsets).
    pub fn flush_all(&self) -> Result<()> {
        #[cfg(feature = "rocksdb-cq")]
        if let Some(db) = &self.rocks {
            return db.flush().map_err(super::rocks_queue::db_error);
        }
        let mut first = Ok(());
        for q in self.all() {
            if let Err(e) = q.flush(0) {
                if first.is_ok() {
                    first = Err(e);
                }
            }
        }
        first
    }

    /// The queues that may hold units of records at or past `phy_end`, for recovery's
    /// truncation: every one on files; on RocksDB those whose `max` key points at or past it
    /// (read in one pass over the keys: a queue keeps no record offset in memory).
    pub fn queues_past(&self, phy_end: i64) -> Result<Vec<Arc<ConsumeQueue>>> {
        #[cfg(feature = "rocksdb-cq")]
        if let Some(db) = &self.rocks {
            let mut past = Vec::new();
            db.for_each_max_offset(|topic, queue_id, max| {
                if max.phy_offset >= phy_end {
                    past.push((topic.to_string(), queue_id));
                }
            })
            .map_err(super::rocks_queue::db_error)?;
            return Ok(past
                .into_iter()
                .filter_map(|(t, q)| self.find(&t, q))
                .collect());
        }
        let _ = phy_end;
        Ok(self.all())
    }

    /// `topic -> queueId -> next queue offset` from the queues' max offsets, LMQs' queue 0
    /// left out (their put offsets are the queues', [`Self::reset_lmq_put_offsets`]).
    pub fn offset_table(&self) -> HashMap<String, HashMap<i32, i64>> {
        let r = self.queues.read();
        r.topics
            .iter()
            .map(|(t, m)| {
                let inner = m
                    .iter()
                    .map(|(q, cq)| (*q, cq.max_offset_in_queue()))
                    .collect();
                (t.clone(), inner)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(dir: &std::path::Path) -> ConsumeQueueTable {
        ConsumeQueueTable::load(&StorePaths::new(dir, None), 20 * 100).unwrap()
    }

    #[test]
    fn an_lmq_put_offset_waits_for_its_queue_and_goes_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let t = table(dir.path());
        assert_eq!(t.lmq_put_offset("%LMQ%a"), 0);
        t.advance_lmq_put_offset("%LMQ%a");
        t.advance_lmq_put_offset("%LMQ%a");
        assert_eq!(t.lmq_put_offset("%LMQ%a"), 2, "no queue yet: pending");
        assert_eq!(t.lmq_count(), 0, "a put offset makes no queue");
        assert_eq!(t.lmq_count_named(), 1, "but the quota counts it");
        assert!(t.lmq_named("%LMQ%a") && !t.lmq_named("%LMQ%b"));
        let q = t.find_or_create("%LMQ%a", 0);
        assert_eq!(
            q.put_offset(),
            2,
            "dispatch made the queue: it takes the offset"
        );
        t.set_lmq_put_offset("%LMQ%a", 5);
        assert_eq!((q.put_offset(), t.lmq_put_offset("%LMQ%a")), (5, 5));
        t.remove_queue("%LMQ%a", 0).unwrap();
        assert_eq!(
            t.lmq_put_offset("%LMQ%a"),
            0,
            "deleting the queue forgets it"
        );
        t.advance_lmq_put_offset("%LMQ%b");
        t.remove_topic("%LMQ%b").unwrap();
        assert_eq!(t.lmq_put_offset("%LMQ%b"), 0, "and a pending one too");
    }

    #[test]
    fn an_lmq_with_other_queue_ids_counts_once() {
        let dir = tempfile::tempdir().unwrap();
        let t = table(dir.path());
        t.find_or_create("T", 1);
        t.find_or_create("%LMQ%a", 0);
        t.find_or_create("%LMQ%a", 3);
        t.find_or_create("%LMQ%b", 0);
        assert_eq!((t.topic_count(), t.lmq_count()), (3, 2));
        let mut topics = t.topics();
        topics.sort();
        assert_eq!(topics, ["%LMQ%a", "%LMQ%b", "T"]);
        assert_eq!(t.all().len(), 4);
        assert!(t.find("%LMQ%a", 3).is_some() && t.find("%LMQ%a", 0).is_some());
        t.remove_queue("%LMQ%a", 0).unwrap();
        assert!(t.find_topic("%LMQ%a"), "queue 3 is left");
        assert_eq!((t.topic_count(), t.lmq_count()), (3, 2));
        t.remove_queue("%LMQ%a", 3).unwrap();
        assert!(!t.find_topic("%LMQ%a"));
        assert_eq!((t.topic_count(), t.lmq_count()), (2, 1));
        t.remove_topic("%LMQ%b").unwrap();
        assert_eq!((t.topic_count(), t.lmq_count()), (1, 0));
        let offsets = t.offset_table();
        assert_eq!(
            offsets.len(),
            1,
            "LMQs' queue 0 keep their put offsets themselves"
        );
    }

    #[test]
    fn loading_puts_lmq_queues_in_the_flat_set() {
        let dir = tempfile::tempdir().unwrap();
        let t = table(dir.path());
        let unit = super::super::CqUnit {
            phy_offset: 0,
            size: 100,
            tags_code: 0,
        };
        t.find_or_create("%LMQ%a", 0).put_unit(unit, 0).unwrap();
        t.find_or_create("T", 0).put_unit(unit, 0).unwrap();
        t.flush_all().unwrap();
        drop(t);
        let t = table(dir.path());
        for q in t.all() {
            q.recover().unwrap();
        }
        assert_eq!((t.topic_count(), t.lmq_count()), (2, 1));
        assert_eq!(t.find("%LMQ%a", 0).unwrap().max_offset_in_queue(), 1);
        t.reset_lmq_put_offsets();
        assert_eq!(t.lmq_put_offset("%LMQ%a"), 1);
        assert_eq!(t.offset_table()["T"][&0], 1);
    }
}
