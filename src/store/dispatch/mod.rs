//! Dispatch: turning commit-log records into consume-queue units and index entries, and telling
//! the broker which queues grew.

pub mod reput;

use std::sync::Arc;

use crate::store::commitlog::record::RecordView;
use crate::store::consumequeue::CqUnit;
use crate::store::error::Result;
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
    // Recovery re-dispatch: a record its queue already holds costs one comparison, not a
    // properties scan.
    let cq = cq.filter(|q| notify || phy + rec.total_size as i64 > q.max_physic_offset());
    // The index before the unit: in NoNewFile scope it is the last thing that may refuse, so a
    // refused record has nothing written (a record indexed already is skipped when it comes again).
    if let Some(index) = &inner.index {
        if !index.build_index(rec, phy, scope != Scope::NoNewFile)? {
            return Ok(false);
        }
    }
    if let Some(cq) = cq {
        let tags = match known_tags {
            Some(t) if rec.topic != SCHEDULE_TOPIC.as_bytes() => t,
            _ => tags_code(rec, &inner.delay_levels),
        };
        let unit = CqUnit {
            phy_offset: phy,
            size: rec.total_size,
            tags_code: tags,
        };
        cq.put_unit(unit, rec.queue_offset, rec.store_timestamp)?;
        arrival = Some((tags, cq.max_offset_in_queue()));
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
