//! The revive service (Java `PopReviveService`): per revive queue, reads the CK and ack records
//! in order, pairs acks with their CK, and once a CK's revive time (pop time + invisible time)
//! is more than two seconds behind what the queue has reached, puts every message of it nobody
//! acknowledged into the pop retry topic. Progress is the offset of group
//! `CID_RMQ_SYS_REVIVE_GROUP` on the revive queue, with Java's meaning: the revive-queue offset of
//! the last CK done (scanning resumes after it).
//!
//! Java rescans from its committed offset every round; rmqd keeps what it read since start in
//! memory and reads only new records, with the same outcome (on restart it rescans from the
//! committed offset, as Java does).

use std::collections::{BTreeMap, HashMap};

use super::records::{
    normal_topic, pop_retry_topic, AckMsg, PopCheckPoint, ACK_TAG, ACK_TIME_INTERVAL,
    BATCH_ACK_TAG, CK_TAG, REVIVE_GROUP,
};
use crate::broker::put::stored::{pop_retry, pop_revive_record};
use crate::broker::BrokerContext;
use crate::common::message::{PROPERTY_TAGS, PROPERTY_TIMER_DELIVER_MS};
use crate::common::properties::Properties;
use crate::common::topic::RETRY_GROUP_TOPIC_PREFIX;
use crate::store::message::{decode_record, PutMessageStatus};

/// How long a revive queue may stay quiet before its time is taken to be "now" (Java: 3 s, and
/// only when the timer has delivered everything due).
const IDLE_MS: i64 = 3_000;
/// Java `ckRewriteIntervalsInSeconds`: how much later a CK re-put after a failed revive comes.
const REWRITE_INTERVALS_S: [i64; 17] = [
    10, 20, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 1200, 1800, 3600, 7200,
];
/// Records read from one revive queue per tick at most.
const READ_PER_TICK: usize = 8_192;

#[derive(Default)]
struct QueueScan {
    /// Next revive-queue offset to read; `None` until loaded from the committed offset.
    next: Option<i64>,
    /// CKs read and not done, by their revive-queue offset.
    cks: BTreeMap<i64, PopCheckPoint>,
    /// Merge key → revive-queue offset of its CK.
    keys: HashMap<String, i64>,
    /// Latest TIMER_DELIVER_MS read (Java `endTime`).
    end_time: i64,
    /// When a record was last read (ms).
    last_read: i64,
    /// The progress this service committed last; another value in the offset table (an
    /// operator's reset) restarts the scan from there, as Java reads the table every round.
    committed: Option<i64>,
}

pub struct Reviver {
    queues: Vec<QueueScan>,
}

impl Reviver {
    pub fn new(revive_queue_num: i32) -> Self {
        Self {
            queues: (0..revive_queue_num.max(1))
                .map(|_| QueueScan::default())
                .collect(),
        }
    }

    /// One round over every revive queue.
    pub fn tick(&mut self, ctx: &BrokerContext) {
        if ctx.config.is_slave() || !ctx.store.config().timer_wheel_enable {
            return;
        }
        let topic = revive_topic(ctx);
        for (qid, scan) in self.queues.iter_mut().enumerate() {
            let qid = qid as i32;
            read_new(ctx, &topic, qid, scan);
            revive_due(ctx, &topic, qid, scan);
        }
    }
}

pub fn revive_topic(ctx: &BrokerContext) -> String {
    format!(
        "{}{}",
        crate::common::topic::REVIVE_LOG_PREFIX,
        ctx.config.broker_cluster_name
    )
}

fn read_new(ctx: &BrokerContext, topic: &str, qid: i32, scan: &mut QueueScan) {
    let local = &ctx.config.broker_name;
    let stored = ctx.offsets.query(REVIVE_GROUP, topic, qid);
    if scan.next.is_some() && stored != scan.committed {
        tracing::info!(
            qid,
            ?stored,
            "revive progress changed outside the revive service; rescanning"
        );
        *scan = QueueScan::default();
    }
    scan.committed = stored;
    let mut next = *scan
        .next
        .get_or_insert_with(|| stored.map_or(0, |done| done + 1));
    let now = crate::broker::now_millis();
    let mut read = 0;
    loop {
        let r = ctx.store.get_message(topic, qid, next, 32, i32::MAX, None);
        if r.messages.is_empty() {
            // below the queue's minimum (cleaned up): continue from where the store says
            if r.next_begin_offset > next {
                next = r.next_begin_offset;
                continue;
            }
            break;
        }
        for (bytes, offset) in r.messages.iter().zip(&r.queue_offsets) {
            next = offset + 1;
            read += 1;
            let Some(rec) = decode_record(bytes) else {
                continue;
            };
            let props = Properties::decode_bytes(rec.properties);
            let deliver = props
                .get(PROPERTY_TIMER_DELIVER_MS)
                .and_then(|v| v.parse::<i64>().ok())
                .unwrap_or(0);
            scan.end_time = scan.end_time.max(deliver);
            match props.get(PROPERTY_TAGS) {
                Some(CK_TAG) => {
                    let Ok(mut ck) =
                        crate::remoting::body::fastjson::from_slice::<PopCheckPoint>(rec.body)
                    else {
                        tracing::warn!(
                            qid,
                            offset,
                            "revive queue: a CK that does not parse, skipped"
                        );
                        continue;
                    };
                    if ck.topic.is_empty() || ck.cid.is_empty() {
                        continue;
                    }
                    ck.revive_offset = *offset;
                    ck.bit_map = 0;
                    ctx.metrics.pop_revive_get(&ck.cid, &ck.topic, qid, true);
                    scan.keys.insert(ck.merge_key(local), *offset);
                    scan.cks.insert(*offset, ck);
                }
                Some(ACK_TAG) | Some(BATCH_ACK_TAG) => {
                    let Ok(ack) = crate::remoting::body::fastjson::from_slice::<AckMsg>(rec.body)
                    else {
                        continue;
                    };
                    ctx.metrics
                        .pop_revive_get(&ack.consumer_group, &ack.topic, qid, false);
                    let Some(ck) = scan
                        .keys
                        .get(&ack.merge_key(local))
                        .and_then(|ro| scan.cks.get_mut(ro))
                    else {
                        // an ack whose CK is done or was never read (Java drops it too)
                        continue;
                    };
                    for off in ack.offsets() {
                        if let Some(i) = ck.index_of_ack(off) {
                            if i < 32 {
                                ck.bit_map |= 1 << i;
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        if read >= READ_PER_TICK {
            break;
        }
    }
    if read > 0 {
        scan.last_read = now;
    } else if scan.end_time != 0
        && now.saturating_sub(scan.end_time.max(scan.last_read)) > IDLE_MS
        && ctx.timer.caught_up(now)
    {
        scan.end_time = now;
    }
    scan.next = Some(next);
}

fn revive_due(ctx: &BrokerContext, topic: &str, qid: i32, scan: &mut QueueScan) {
    let local = ctx.config.broker_name.clone();
    let mut done = None;
    while let Some((&ro, ck)) = scan.cks.first_key_value() {
        if scan.end_time.saturating_sub(ck.revive_time()) <= ACK_TIME_INTERVAL + 1_000 {
            break;
        }
        let ck = ck.clone();
        revive_one(ctx, &ck, qid);
        scan.cks.remove(&ro);
        let key = ck.merge_key(&local);
        if scan.keys.get(&key) == Some(&ro) {
            scan.keys.remove(&key);
        }
        done = Some(ro);
    }
    if let Some(ro) = done {
        ctx.offsets.commit(REVIVE_GROUP, topic, qid, ro);
        scan.committed = Some(ro);
    }
    let oldest = scan.cks.first_key_value().map(|(_, ck)| ck.revive_time());
    if let Some(ts) = ctx.pop.revive_ts.get(qid as usize) {
        let v = oldest.unwrap_or_else(crate::broker::now_millis);
        ts.store(v, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Puts every message of `ck` nobody acknowledged into its retry topic; a message that cannot
/// be put comes back later in a new CK (Java `rePutCK`).
fn revive_one(ctx: &BrokerContext, ck: &PopCheckPoint, qid: i32) {
    let normal = normal_topic(&ck.topic, &ck.cid).to_string();
    if ctx.topics.select(&normal).is_none() {
        tracing::warn!(topic = %normal, "revive: the topic is gone; its checkpoint is skipped");
        return;
    }
    // Java's findSubscriptionGroupConfig creates the group when autoCreateSubscriptionGroup is on
    if ctx.groups.find_or_create(&ck.cid).is_err() {
        tracing::warn!(group = %ck.cid, "revive: the group is gone; its checkpoint is skipped");
        return;
    }
    let retry_topic = if ck.topic.starts_with(RETRY_GROUP_TOPIC_PREFIX) {
        ck.topic.clone()
    } else {
        pop_retry_topic(&ck.topic, &ck.cid, ctx.config.enable_retry_topic_v2)
    };
    for i in 0..ck.num.clamp(0, 32) as usize {
        if ck.bit_map & (1 << i) != 0 {
            continue;
        }
        let offset = ck.offset_at(i);
        let r = ctx
            .store
            .get_message(&ck.topic, ck.queue_id, offset, 1, i32::MAX, None);
        let found = r
            .messages
            .first()
            .filter(|_| r.queue_offsets.first() == Some(&offset));
        let Some(bytes) = found else {
            // gone from the store (cleaned up): nothing to revive, as Java
            tracing::info!(topic = %ck.topic, queue = ck.queue_id, offset,
                "revive: the message is no longer in the store");
            continue;
        };
        let Some(rec) = decode_record(bytes) else {
            continue;
        };
        if let Err(e) = ensure_retry_topic(ctx, &retry_topic, &ck.cid) {
            tracing::error!(topic = %retry_topic, error = %e, "revive: cannot create the retry topic");
            re_put_ck(ctx, ck, offset, qid);
            continue;
        }
        let msg = pop_retry(&rec, &retry_topic, ck.pop_time, ctx.store_host);
        let handle = ctx.store.put_message(&msg);
        let result = handle.result();
        let status = format!("{:?}", result.status);
        ctx.metrics.pop_retry_put(&ck.cid, &ck.topic, &status);
        if result.status != PutMessageStatus::PUT_OK {
            tracing::error!(topic = %retry_topic, status = ?result.status, "revive: retry put failed");
            re_put_ck(ctx, ck, offset, qid);
            continue;
        }
        let bytes = result.append.as_ref().map_or(0, |a| a.wrote_bytes);
        ctx.stats.put(&retry_topic, 1, bytes.max(0) as u64);
        // the dispatch of the retry message wakes the pops of the topic (PopService::notify_arrival)
        ctx.pop.register_retry_topic(&retry_topic, &normal);
    }
}

/// Java `addRetryTopicIfNotExist`: one queue, perm 6; the group starts at offset 0 on it.
fn ensure_retry_topic(ctx: &BrokerContext, topic: &str, group: &str) -> Result<(), String> {
    if ctx.topics.select(topic).is_some() {
        return Ok(());
    }
    ctx.topics
        .create_if_absent(topic, 1, 6, 0)
        .map_err(|e| e.to_string())?;
    if ctx.offsets.query(group, topic, 0).is_none() {
        ctx.offsets.commit(group, topic, 0, 0);
    }
    ctx.register_to_namesrv_soon();
    Ok(())
}

fn re_put_ck(ctx: &BrokerContext, old: &PopCheckPoint, offset: i64, qid: i32) {
    let times: usize = old
        .re_put_times
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut ck = PopCheckPoint {
        bit_map: 0,
        num: 1,
        pop_time: old.pop_time,
        invisible_time: old.invisible_time,
        start_offset: offset,
        cid: old.cid.clone(),
        topic: old.topic.clone(),
        queue_id: old.queue_id,
        broker_name: old.broker_name.clone(),
        queue_offset_diff: Some(vec![0]),
        re_put_times: Some((times + 1).to_string()),
        ..Default::default()
    };
    if old.revive_time() <= crate::broker::now_millis() {
        let i = times.min(REWRITE_INTERVALS_S.len() - 1);
        ck.invisible_time += REWRITE_INTERVALS_S[i] * 1000;
    }
    let deliver = ck.revive_time().saturating_sub(ACK_TIME_INTERVAL);
    match pop_revive_record(ctx, qid, CK_TAG, ck.to_json(), ck.uniq_key(), deliver) {
        Ok(msg) => {
            let handle = ctx.store.put_message(&msg);
            let _ = handle.result();
        }
        Err(e) => tracing::error!(error = ?e, "revive: cannot re-put a checkpoint"),
    }
}
