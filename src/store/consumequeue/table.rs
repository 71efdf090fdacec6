//! `ConsumeQueueTable`: every consume queue of the store, by topic and queue id.

use std::collections::HashMap;
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
        Ok(ConsumeQueueTable {
            paths: paths.clone(),
            file_size,
            queues: RwLock::new(queues),
        })
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
        let t = w.entry(topic.to_string()).or_default();
        Arc::clone(t.entry(queue_id).or_insert_with(|| {
            let dir = self.paths.consume_queue_dir(topic, queue_id);
            Arc::new(ConsumeQueue::new(topic, queue_id, &dir, self.file_size))
        }))
    }

    /// Whether `topic` has any queue.
    pub fn find_topic(&self, topic: &str) -> bool {
        self.queues.read().contains_key(topic)
    }

    /// Snapshot of all queues.
    pub fn all(&self) -> Vec<Arc<ConsumeQueue>> {
        self.queues
            .read()
            .values()
            .flat_map(|m| m.values().cloned())
            .collect()
    }

    /// Topics and their queues.
    pub fn topics(&self) -> Vec<String> {
        self.queues.read().keys().cloned().collect()
    }

    /// Removes a topic and deletes its directory.
    pub fn remove_topic(&self, topic: &str) -> Result<()> {
        let removed = self.queues.write().remove(topic);
        if let Some(m) = removed {
            for q in m.values() {
                q.destroy()?;
            }
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
            }
            q
        };
        if let Some(q) = q {
            q.destroy()?;
        }
        Ok(())
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
