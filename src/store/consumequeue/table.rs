//! `ConsumeQueueTable`: every consume queue of the store, by topic and queue id.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use super::ConsumeQueue;
use crate::store::error::{Result, StoreError};
use crate::store::paths::StorePaths;

type Queues = HashMap<String, HashMap<i32, Arc<ConsumeQueue>>>;

/// All consume queues.
pub struct ConsumeQueueTable {
    paths: StorePaths,
    file_size: usize,
    queues: RwLock<Queues>,
    /// Topics named `%LMQ%…` with a queue (Java `getLmqNum`), kept under the write lock.
    lmq_topics: AtomicUsize,
    /// `storeType=defaultRocksDB`: the database every queue keeps its units in.
    #[cfg(feature = "rocksdb-cq")]
    rocks: Option<Arc<super::rocksdb_store::RocksCqStore>>,
}

fn is_lmq(topic: &str) -> bool {
    topic.starts_with(crate::common::topic::LMQ_PREFIX)
}

impl ConsumeQueueTable {
    /// Maps every `consumequeue/<topic>/<int>` directory.
    pub fn load(paths: &StorePaths, file_size: usize) -> Result<Self> {
        let root = paths.consume_queue_root();
        let mut queues: Queues = HashMap::new();
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
                    let cq = ConsumeQueue::load(&topic, qid, &q.path(), file_size)?;
                    queues
                        .entry(topic.clone())
                        .or_default()
                        .insert(qid, Arc::new(cq));
                }
            }
        }
        let lmq = queues.keys().filter(|t| is_lmq(t)).count();
        Ok(ConsumeQueueTable {
            paths: paths.clone(),
            file_size,
            queues: RwLock::new(queues),
            lmq_topics: AtomicUsize::new(lmq),
            #[cfg(feature = "rocksdb-cq")]
            rocks: None,
        })
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
        let maxes = db.load_max_offsets().map_err(db_error)?;
        let mut queues: Queues = HashMap::new();
        for q in maxes.queues {
            let cq = ConsumeQueue::rocks(&q.topic, q.queue_id, Arc::clone(&db), Some(q.max));
            queues
                .entry(q.topic)
                .or_default()
                .insert(q.queue_id, Arc::new(cq));
        }
        let lmq = queues.keys().filter(|t| is_lmq(t)).count();
        tracing::info!(path = %db.path().display(), topics = queues.len(), lmq, ms = t0.elapsed().as_millis() as u64, "RocksDB consume queue loaded");
        Ok(ConsumeQueueTable {
            paths: paths.clone(),
            file_size: 0,
            queues: RwLock::new(queues),
            lmq_topics: AtomicUsize::new(lmq),
            rocks: Some(db),
        })
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
        self.queues.read().get(topic)?.get(&queue_id).cloned()
    }

    /// The queue, created (empty) if missing.
    pub fn find_or_create(&self, topic: &str, queue_id: i32) -> Arc<ConsumeQueue> {
        if let Some(q) = self.find(topic, queue_id) {
            return q;
        }
        let mut w = self.queues.write();
        if is_lmq(topic) && !w.contains_key(topic) {
            self.lmq_topics.fetch_add(1, Ordering::Relaxed);
        }
        let t = w.entry(topic.to_string()).or_default();
        Arc::clone(
            t.entry(queue_id)
                .or_insert_with(|| Arc::new(self.new_queue(topic, queue_id))),
        )
    }

    /// Whether `topic` has any queue.
    pub fn find_topic(&self, topic: &str) -> bool {
        self.queues.read().contains_key(topic)
    }

    /// How many `%LMQ%` topics have a queue.
    pub fn lmq_count(&self) -> usize {
        self.lmq_topics.load(Ordering::Relaxed)
    }

    /// Snapshot of all queues.
    pub fn all(&self) -> Vec<Arc<ConsumeQueue>> {
        self.queues
            .read()
            .values()
            .flat_map(|m| m.values().cloned())
            .collect()
    }

    /// How many topics have a consume queue (Java `consumeQueueTable.size()`).
    pub fn topic_count(&self) -> usize {
        self.queues.read().len()
    }

    /// Topics and their queues.
    pub fn topics(&self) -> Vec<String> {
        self.queues.read().keys().cloned().collect()
    }

    /// Removes a topic and deletes its directory.
    pub fn remove_topic(&self, topic: &str) -> Result<()> {
        let removed = self.queues.write().remove(topic);
        if removed.is_some() && is_lmq(topic) {
            self.lmq_topics.fetch_sub(1, Ordering::Relaxed);
        }
        if let Some(m) = removed {
            for q in m.values() {
                q.destroy()?;
            }
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
            let q = w.get_mut(topic).and_then(|m| m.remove(&queue_id));
            if w.get(topic).is_some_and(|m| m.is_empty()) {
                w.remove(topic);
                if is_lmq(topic) {
                    self.lmq_topics.fetch_sub(1, Ordering::Relaxed);
                }
            }
            q
        };
        if let Some(q) = q {
            q.destroy()?;
        }
        Ok(())
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

    /// `topic -> queueId -> next queue offset` from the queues' max offsets.
    pub fn offset_table(&self) -> HashMap<String, HashMap<i32, i64>> {
        let r = self.queues.read();
        r.iter()
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
