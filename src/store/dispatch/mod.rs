//! Dispatch: turning commit-log records into consume-queue units and index entries, and telling
//! the broker which queues grew.

pub mod reput;

use std::sync::Arc;

use crate::store::commitlog::record::RecordView;
use crate::store::consumequeue::{ConsumeQueue, CqUnit};
use crate::store::error::{Result, StoreError};
use crate::store::lmq;
use crate::store::message::sysflag;
use crate::store::util::{find_property, java_hash_bytes};
use crate::store::StoreInner;

/// Topic whose tagsCode is the delivery time (delay levels).
pub const SCHEDULE_TOPIC: &str = "SCHEDULE_TOPIC_XXXX";

/// What the broker learns about each dispatched message (Java `MessageArrivingListener`).
#[derive(Debug)]
pub struct MessageArrival<'a> {
    pub topic: &'a str,
    pub queue_id: i32,
    /// Queue offset of this message.
    pub queue_offset: i64,
    /// Next queue offset (= max offset in queue after this message).
    pub max_offset: i64,
    pub tags_code: i64,
    pub store_timestamp: i64,
    /// Encoded properties of the record (borrowing the mapped bytes).
    pub properties: &'a [u8],
}

/// Called on the dispatch thread after each message reached its consume queue. Must not block.
pub type ArrivalListener = Arc<dyn Fn(&MessageArrival<'_>) + Send + Sync>;

/// The LMQ queues of a record and their units' offsets, found (or created, in [`Scope::All`]);
/// in [`Scope::ExistingQueues`] a missing queue is left out. `None` in [`Scope::NoNewFile`] when
/// one is missing or its last file is full.
fn lmq_queues(
    inner: &StoreInner,
    rec: &RecordView<'_>,
    topic: &str,
    scope: Scope,
) -> Option<Vec<(lmq::LmqTarget, Arc<ConsumeQueue>)>> {
    let targets = lmq::dispatch_targets(topic, rec.properties, rec.queue_id, inner.cfg.enable_lmq);
    let mut out = Vec::with_capacity(targets.len());
    for t in targets {
        let q = match scope {
            Scope::All => Some(inner.cqs.find_or_create(&t.queue, t.queue_id)),
            Scope::ExistingQueues => inner.cqs.find(&t.queue, t.queue_id),
            Scope::NoNewFile => match inner.cqs.find(&t.queue, t.queue_id) {
                Some(q) if q.has_room() => Some(q),
                _ => return None,
            },
        };
        if let Some(q) = q {
            out.push((t, q));
        }
    }
    Some(out)
}

/// How long dispatch retries an LMQ unit it cannot write (its file cannot be created: too many
/// open files or mappings, a full disk) before it drops that unit and goes on. Java's
/// `doDispatchLmqQueue` tries 30 times a second apart and drops it; without a bound, one lite
/// topic too many would stop every consume queue of the broker. The record's own topic unit is
/// never dropped: dispatch waits for it.
pub(crate) const LMQ_UNIT_RETRY: std::time::Duration = std::time::Duration::from_secs(30);

/// Whether the failing LMQ unit at `phy` in `queue` has failed for [`LMQ_UNIT_RETRY`]: then it
/// is logged as dropped and dispatch goes on.
fn lmq_unit_given_up(inner: &StoreInner, phy: i64, queue: &str, err: &StoreError) -> bool {
    let mut failing = inner.lmq_unit_failure.lock();
    match &*failing {
        Some((p, q, since)) if *p == phy && q == queue => {
            if since.elapsed() < LMQ_UNIT_RETRY {
                return false;
            }
            tracing::error!(queue, phy, error = %err,
                "LMQ unit dropped after {} s of failed writes (the queue misses this message)",
                LMQ_UNIT_RETRY.as_secs());
            *failing = None;
            true
        }
        _ => {
            tracing::warn!(queue, phy, error = %err, "LMQ unit not written; retrying");
            *failing = Some((phy, queue.to_string(), std::time::Instant::now()));
            false
        }
    }
}

/// `storeType=defaultRocksDB`: one write batch per record with its own unit, its LMQ units,
/// each queue's `max` and the checkpoint (Java `putMessagePosition`). A record its queue holds
/// already (re-dispatch) writes nothing: its batch was atomic, so its LMQ units are there too.
#[cfg(feature = "rocksdb-cq")]
fn put_rocks(
    inner: &StoreInner,
    rec: &RecordView<'_>,
    cq: &ConsumeQueue,
    unit: CqUnit,
    lmq_queues: &[(lmq::LmqTarget, Arc<ConsumeQueue>)],
) -> Result<()> {
    use crate::store::consumequeue::rocks_queue::db_error;
    use crate::store::consumequeue::rocksdb_codec::CqValue;
    use crate::store::consumequeue::rocksdb_table::DispatchEntry;
    let Some(db) = inner.cqs.rocks() else {
        return Ok(());
    };
    if !cq.accepts(rec.queue_offset) {
        return Ok(());
    }
    let (targets, queues): (Vec<lmq::LmqTarget>, Vec<&Arc<ConsumeQueue>>) = lmq_queues
        .iter()
        .filter(|(t, q)| q.accepts(t.queue_offset))
        .map(|(t, q)| (t.clone(), q))
        .unzip();
    let entry = DispatchEntry {
        topic: cq.topic(),
        queue_id: cq.queue_id(),
        queue_offset: rec.queue_offset,
        unit: CqValue {
            phy_offset: unit.phy_offset,
            size: unit.size,
            tags_code: unit.tags_code,
            store_timestamp: rec.store_timestamp,
        },
        lmq: &targets,
    };
    db.put_batch(&[entry]).map_err(db_error)?;
    cq.note_put(rec.queue_offset);
    for (t, q) in targets.iter().zip(queues) {
        q.note_put(t.queue_offset);
    }
    Ok(())
}

/// tagsCode of a record (store-format.md §4.1): TAGS hash, or delivery time for delay levels.
pub fn tags_code(rec: &RecordView<'_>, delay_levels: &[i64]) -> i64 {
    if rec.topic == SCHEDULE_TOPIC.as_bytes() {
        if let Some(level) = find_property(rec.properties, "DELAY")
            .and_then(|v| std::str::from_utf8(v).ok())
            .and_then(|v| v.parse::<i64>().ok())
        {
            if level > 0 {
                let idx = (level.min(delay_levels.len() as i64) - 1).max(0) as usize;
                let delay = delay_levels.get(idx).copied().unwrap_or(1000);
                return rec.store_timestamp + delay;
            }
        }
    }
    find_property(rec.properties, "TAGS").map_or(0, |t| java_hash_bytes(t) as i64)
}

/// How much of its work [`dispatch_record`] may do.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Scope {
    /// Everything, creating consume queues and their files as needed.
    All,
    /// Recovery: a missing consume queue is not created (one deleted by an admin command is not
    /// brought back by a restart).
    ExistingQueues,
    /// Only what creates and flushes no file (the put's own thread, see
    /// [`reput::dispatch_after_put`]): nothing at all when the record's consume queue is missing
    /// or its last file is full, or when its index keys do not fit the newest index file.
    NoNewFile,
}

/// What a put knows of the record it dispatches itself, so the dispatch does not work it out of
/// the stored bytes again.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OwnRecord {
    pub phy: i64,
    /// The broker's TAGS hash ([`MessageInput::tags_code`](crate::store::message::MessageInput)).
    pub tags_code: i64,
}

/// Dispatches one record: consume queue (NOT/COMMIT types), index, arrival listener. False when
/// `scope` is [`Scope::NoNewFile`] and the record needs a file created: then nothing was done.
/// `known_tags` is the put's TAGS hash of this very record, if the put is dispatching it.
pub(crate) fn dispatch_record(
    inner: &StoreInner,
    rec: &RecordView<'_>,
    phy: i64,
    notify: bool,
    scope: Scope,
    known_tags: Option<i64>,
) -> Result<bool> {
    let tran = rec.tran_type();
    let mut arrival = None;
    let topic = rec.topic_str();
    let cq = if tran == sysflag::TRANSACTION_NOT_TYPE || tran == sysflag::TRANSACTION_COMMIT_TYPE {
        match scope {
            Scope::All => Some(inner.cqs.find_or_create(topic, rec.queue_id)),
            Scope::ExistingQueues => inner.cqs.find(topic, rec.queue_id),
            Scope::NoNewFile => match inner.cqs.find(topic, rec.queue_id) {
                Some(q) if q.has_room() => Some(q),
                _ => return Ok(false),
            },
        }
    } else {
        None
    };
    // enableMultiDispatch: the extra units of an LMQ message. Looked up before anything is
    // written, so a put's own thread (NoNewFile) leaves the whole record to the dispatch thread
    // when one of its queues needs a file.
    let lmq_queues = match &cq {
        Some(_) if inner.cfg.enable_multi_dispatch => match lmq_queues(inner, rec, topic, scope) {
            Some(q) => q,
            None => return Ok(false),
        },
        _ => Vec::new(),
    };
    // Recovery re-dispatch: a record its file queue already holds costs one comparison (a
    // RocksDB queue keeps no record offset: `put_rocks` compares queue offsets instead).
    let cq = cq.filter(|q| notify || phy + rec.total_size as i64 > q.max_physic_offset());
    // The index before the unit: in NoNewFile scope it is the last thing that may refuse, so a
    // refused record has nothing written (a record indexed already is skipped when it comes again).
    if let Some(index) = &inner.index {
        match index.build_index(rec, phy, scope != Scope::NoNewFile) {
            Ok(true) => {
                if index.failing.succeeded() {
                    tracing::warn!("indexing works again");
                }
            }
            Ok(false) => return Ok(false),
            // Java's CommitLogDispatcherBuildIndex: a record the index cannot take (no new file,
            // no space) goes unindexed and its consume-queue unit is still written, so reads
            // go on while the disk refuses; a put's own thread leaves it to the dispatch thread
            Err(e) if scope != Scope::NoNewFile => {
                if index.failing.failed() {
                    tracing::error!(error = %e, phy, "index entries not written; messages \
                        stay readable but not searchable by key until the disk takes writes");
                }
            }
            Err(e) => return Err(e),
        }
    }
    let tags = || match known_tags {
        Some(t) if rec.topic != SCHEDULE_TOPIC.as_bytes() => t,
        _ => tags_code(rec, &inner.delay_levels),
    };
    let rocks = inner.cqs.is_rocks();
    if let Some(cq) = cq {
        let tags = tags();
        let unit = CqUnit {
            phy_offset: phy,
            size: rec.total_size,
            tags_code: tags,
        };
        if rocks {
            #[cfg(feature = "rocksdb-cq")]
            put_rocks(inner, rec, &cq, unit, &lmq_queues)?;
        } else {
            cq.put_unit(unit, rec.queue_offset)?;
        }
        arrival = Some((tags, cq.max_offset_in_queue()));
    }
    if !lmq_queues.is_empty() {
        let tags = arrival.map_or_else(tags, |(t, _)| t);
        let unit = CqUnit {
            phy_offset: phy,
            size: rec.total_size,
            tags_code: tags,
        };
        // RocksDB: the LMQ units went in the record's batch (none when its own unit was there)
        for (target, q) in lmq_queues.iter().filter(|_| !rocks) {
            if let Err(e) = q.put_unit(unit, target.queue_offset) {
                if !lmq_unit_given_up(inner, phy, &target.queue, &e) {
                    return Err(e);
                }
            }
        }
        if let (true, Some(l)) = (notify, inner.listener.read().as_ref()) {
            for (target, q) in &lmq_queues {
                l(&MessageArrival {
                    topic: &target.queue,
                    queue_id: target.queue_id,
                    queue_offset: target.queue_offset,
                    max_offset: q.max_offset_in_queue(),
                    tags_code: tags,
                    store_timestamp: rec.store_timestamp,
                    properties: rec.properties,
                });
            }
        }
    }
    // the consume queues cover this record now, whether its unit was written here or was there
    // already (a recovery that re-dispatched nothing still moves logicsMsgTimestamp)
    inner
        .last_dispatched_ts
        .store(rec.store_timestamp, std::sync::atomic::Ordering::Release);
    if let (true, Some((tags, max)), Some(l)) = (notify, arrival, inner.listener.read().as_ref()) {
        l(&MessageArrival {
            topic: rec.topic_str(),
            queue_id: rec.queue_id,
            queue_offset: rec.queue_offset,
            max_offset: max,
            tags_code: tags,
            store_timestamp: rec.store_timestamp,
            properties: rec.properties,
        });
    }
    Ok(true)
}
