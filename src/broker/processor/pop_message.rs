//! POP_MESSAGE (200050), as Java's `PopMessageProcessor` on its default path (file-based state,
//! pop buffer merge off): checks in Java's order, then per queue (every readable queue from a
//! random start when `queueId` < 0) under the queue's pop lock: the group's offset (or the init
//! rule), a filtered read, a checkpoint written to the revive topic, the offset moved past what
//! was read. The retry topic is read first one time in five, else after the topic when the pop
//! is not full. Nothing found: the request waits for an arrival until its poll time ends.
//! An orderly pop (`order=true`) writes no checkpoint: a queue whose last pop still has a message
//! out is skipped, and the group's offset stays at the pop's start until the acks move it
//! (`pop/order_info.rs`); retry topics are not read.

use std::sync::Arc;

use bytes::Bytes;

use super::pull::PullFilter;
use super::{read_header, ProcessorResult};
use crate::broker::error::BrokerError;
use crate::broker::pop::records::{
    pop_retry_topic, push_msg_offset_info, push_start_offset_info, PopCheckPoint, Receipt,
    ACK_TIME_INTERVAL, CK_TAG, ORDER_REVIVE_QUEUE,
};
use crate::broker::pop::QueueLock;
use crate::broker::put::stored::pop_revive_record;
use crate::broker::BrokerContext;
use crate::common::filter::{SqlFilter, SQL92};
use crate::common::message::PROPERTY_POP_CK;
use crate::common::properties::Properties;
use crate::common::tag::TagFilter;
use crate::common::topic::{is_readable, TopicConfig};
use crate::remoting::command::Body;
use crate::remoting::header::pop_message::{PopMessageRequestHeader, PopMessageResponseHeader};
use crate::remoting::header::CommandHeader;
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::server::Connection;
use crate::store::get::{GetMessageResult, GetMessageStatus, MessageFilter};
use crate::store::message::{decode_record, encode_record, RecordHeader};

pub async fn pop_message(
    ctx: &BrokerContext,
    conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let mut h: PopMessageRequestHeader = read_header(request)?;
    let now = crate::broker::now_millis();
    if h.born_time == 0 {
        h.born_time = now;
    }
    let (tc, filter) = check(ctx, conn, &h, now)?;
    // Java compensates the topic and its pop retry topic (named by enableRetryTopicV2 alone)
    ctx.clients
        .compensate_subscription(&h.consumer_group, &h.topic);
    ctx.clients.compensate_subscription(
        &h.consumer_group,
        &pop_retry_topic(
            &h.topic,
            &h.consumer_group,
            ctx.config.enable_retry_topic_v2,
        ),
    );
    let filter = filter.filter(PullFilter::filters_anything);
    let rand_q = random_percent();
    // with V2 retry topics, every other pop reads the V1 one (Java `needRetryV1`)
    let v2 = ctx.config.enable_retry_topic_v2
        && !(ctx.config.retrieve_message_from_pop_retry_topic_v1 && rand_q % 2 == 0);
    let retry_topic = pop_retry_topic(&h.topic, &h.consumer_group, v2);
    ctx.pop.register_retry_topic(&retry_topic, &h.topic);
    let revive_qid = if h.order {
        ORDER_REVIVE_QUEUE
    } else {
        ctx.pop.next_revive_qid(ctx.config.revive_queue_num)
    };
    let plan = Plan {
        h: &h,
        tc: &tc,
        filter: filter.as_ref(),
        retry_topic: &retry_topic,
        retry_first: !h.order && rand_q < ctx.config.pop_from_retry_probability,
        rand_q,
    };
    let mut round = read_round(ctx, &plan);
    if round.reads.is_empty() && h.poll_time > 0 {
        let wait_ms = h
            .born_time
            .saturating_add(h.poll_time)
            .saturating_sub(50 + now)
            .clamp(0, 300_000);
        let polling = ctx.pop.start_polling(
            &h.topic,
            &h.consumer_group,
            h.queue_id,
            ctx.config.pop_polling_size,
            ctx.config.max_pop_polling_size,
        );
        if polling.is_none() {
            let code = ResponseCode::POLLING_FULL;
            return Ok(empty_answer(request, &h, revive_qid, round.rest, code));
        }
        if wait_ms > 0 {
            crate::broker::metrics::mark_long_polled();
            let deadline =
                tokio::time::Instant::now() + std::time::Duration::from_millis(wait_ms as u64);
            round = ctx
                .pop
                .hold
                .hold(&h.topic, h.queue_id, deadline, || {
                    // a client gone while its pop was held gets nothing popped for it (Java
                    // skips a parked request whose channel is inactive)
                    if conn.is_closed() {
                        return Ok(Round::default());
                    }
                    let r = read_round(ctx, &plan);
                    if r.reads.is_empty() {
                        Err(r)
                    } else {
                        Ok(r)
                    }
                })
                .await;
        }
    }
    if conn.is_closed() {
        return Err(BrokerError::NoResponse);
    }
    if round.reads.is_empty() {
        return Ok(empty_answer(
            request,
            &h,
            revive_qid,
            round.rest,
            ResponseCode::POLLING_TIMEOUT,
        ));
    }
    answer(ctx, request, &h, revive_qid, round).await
}

/// Java's checks, in its order, with its codes and remarks.
fn check(
    ctx: &BrokerContext,
    conn: &Connection,
    h: &PopMessageRequestHeader,
    now: i64,
) -> Result<(Arc<TopicConfig>, Option<PullFilter>), BrokerError> {
    let ip = &ctx.config.broker_ip1;
    if h.is_timeout_too_much(now) {
        let remark = format!("the broker[{ip}] pop message is timeout too much");
        return Err(BrokerError::refused(ResponseCode::POLLING_TIMEOUT, remark));
    }
    if !is_readable(ctx.broker_permission()) {
        let remark = format!("the broker[{ip}] pop message is forbidden");
        return Err(BrokerError::refused(ResponseCode::NO_PERMISSION, remark));
    }
    if h.max_msg_nums > 32 {
        let remark = format!("the broker[{ip}] pop message's num is greater than 32");
        return Err(BrokerError::refused(
            ResponseCode::INVALID_PARAMETER,
            remark,
        ));
    }
    if !ctx.store.config().timer_wheel_enable {
        let remark =
            format!("the broker[{ip}] pop message is forbidden because timerWheelEnable is false");
        return Err(BrokerError::system(remark));
    }
    let tc = check_topic_and_group(ctx, conn, &h.topic, h.queue_id, &h.consumer_group)?;
    let exp = h.exp.as_deref().unwrap_or("");
    if exp.is_empty() {
        return Ok((tc, None));
    }
    let exp_type = h.exp_type.as_deref().unwrap_or("TAG");
    let filter = if exp_type.is_empty() || exp_type == "TAG" {
        PullFilter::Tags(TagFilter::parse(exp))
    } else {
        let compiled = (exp_type == SQL92)
            .then(|| SqlFilter::compile_cached(exp).ok())
            .flatten();
        match compiled {
            Some(sql) => PullFilter::Sql(sql),
            None => {
                return Err(BrokerError::refused(
                    ResponseCode::SUBSCRIPTION_PARSE_FAILED,
                    "parse the consumer's subscription failed",
                ))
            }
        }
    };
    Ok((tc, Some(filter)))
}

/// The topic, queue and group checks POP, PEEK and NOTIFICATION share, in Java's order.
pub(crate) fn check_topic_and_group(
    ctx: &BrokerContext,
    conn: &Connection,
    topic: &str,
    queue_id: i32,
    group: &str,
) -> Result<Arc<TopicConfig>, BrokerError> {
    let Some(tc) = ctx.topics.select(topic) else {
        let remark = format!(
            "topic[{topic}] not exist, apply first please! consumer: {}",
            conn.peer
        );
        return Err(BrokerError::refused(ResponseCode::TOPIC_NOT_EXIST, remark));
    };
    if !is_readable(tc.perm) {
        let remark = format!("the topic[{topic}] peeking message is forbidden");
        return Err(BrokerError::refused(ResponseCode::NO_PERMISSION, remark));
    }
    if queue_id >= tc.read_queue_nums {
        let remark = format!(
            "queueId[{queue_id}] is illegal, topic:[{topic}] topicConfig.readQueueNums:[{}] consumer:[{}]",
            tc.read_queue_nums, conn.peer
        );
        return Err(BrokerError::refused(
            ResponseCode::INVALID_PARAMETER,
            remark,
        ));
    }
    let g = ctx.groups.find_or_create(group)?;
    if !g.consume_enable {
        let remark = format!("subscription group no permission, {group}");
        return Err(BrokerError::refused(ResponseCode::NO_PERMISSION, remark));
    }
    Ok(tc)
}

struct Plan<'a> {
    h: &'a PopMessageRequestHeader,
    tc: &'a TopicConfig,
    filter: Option<&'a PullFilter>,
    retry_topic: &'a str,
    retry_first: bool,
    rand_q: i32,
}

/// What one queue gave, still under its pop lock until the checkpoint is written.
struct QueueRead {
    topic: String,
    queue_id: i32,
    is_retry: bool,
    start_offset: i64,
    result: GetMessageResult,
    _lock: QueueLock,
}

/// One pass over the queues: the reads that found messages, and what is left behind them.
#[derive(Default)]
struct Round {
    reads: Vec<QueueRead>,
    found: usize,
    rest: i64,
}

fn read_round(ctx: &BrokerContext, p: &Plan<'_>) -> Round {
    let mut round = Round {
        reads: Vec::new(),
        found: 0,
        rest: 0,
    };
    if p.retry_first {
        read_topic(ctx, p, p.retry_topic, true, &mut round);
    }
    if p.h.queue_id < 0 {
        read_topic(ctx, p, &p.tc.topic_name, false, &mut round);
    } else {
        read_queue(ctx, p, &p.tc.topic_name, p.h.queue_id, false, &mut round);
    }
    if !p.h.order && !p.retry_first && round.found < p.h.max_msg_nums.max(1) as usize {
        read_topic(ctx, p, p.retry_topic, true, &mut round);
    }
    round
}

fn read_topic(ctx: &BrokerContext, p: &Plan<'_>, topic: &str, is_retry: bool, round: &mut Round) {
    let Some(tc) = ctx.topics.select(topic) else {
        return;
    };
    let n = tc.read_queue_nums.max(0);
    for i in 0..n {
        let q = (p.rand_q + i) % n;
        read_queue(ctx, p, topic, q, is_retry, round);
    }
}

fn read_queue(
    ctx: &BrokerContext,
    p: &Plan<'_>,
    topic: &str,
    queue_id: i32,
    is_retry: bool,
    round: &mut Round,
) {
    let group = &p.h.consumer_group;
    let max = ctx.store.max_offset_in_queue(topic, queue_id);
    let Some(lock) = ctx.pop.try_lock(topic, group, queue_id) else {
        let offset = ctx.offsets.query(group, topic, queue_id).unwrap_or(0);
        round.rest += (max - offset).max(0);
        return;
    };
    let mut offset = pop_offset(ctx, topic, group, queue_id, p.h.init_mode);
    if let Some(reset) = ctx.offsets.take_reset(group, topic, queue_id) {
        ctx.pop.order.clear_block(topic, group, queue_id);
        ctx.offsets.commit(group, topic, queue_id, reset);
        offset = reset;
    }
    if p.h.order {
        let now = crate::broker::now_millis();
        let attempt = p.h.attempt_id.as_deref();
        let inv = p.h.invisible_time;
        if ctx
            .pop
            .order
            .check_block(attempt, topic, group, queue_id, inv, now)
        {
            // a message of the last pop is still out: nothing from this queue; pops held on it
            // are woken when the block ends (Java's lock manager)
            if let Some(at) = ctx.pop.order.lock_free_at(topic, group, queue_id, now) {
                ctx.pop.wake_at(topic, queue_id, at);
            }
            return;
        }
    }
    let wanted = p.h.max_msg_nums.max(1) as usize;
    if round.found >= wanted {
        round.rest += (max - offset).max(0);
        return;
    }
    let filter = p.filter.map(|f| f as &dyn MessageFilter);
    let remaining = (wanted - round.found) as i32;
    let mut result = ctx
        .store
        .get_message(topic, queue_id, offset, remaining, i32::MAX, filter);
    use GetMessageStatus::*;
    if matches!(
        result.status,
        OFFSET_TOO_SMALL | OFFSET_OVERFLOW_BADLY | OFFSET_FOUND_NULL
    ) {
        // the group's offset is outside the queue: move it to where the store says
        offset = result.next_begin_offset;
        ctx.offsets.commit(group, topic, queue_id, offset);
        result = ctx
            .store
            .get_message(topic, queue_id, offset, remaining, i32::MAX, filter);
    }
    round.rest += (result.max_offset - result.next_begin_offset).max(0);
    if result.messages.is_empty() {
        // nothing matched, yet the read moved on: only the offset moves (Java's mock CK)
        if matches!(
            result.status,
            NO_MATCHED_MESSAGE | OFFSET_FOUND_NULL | MESSAGE_WAS_REMOVING | NO_MATCHED_LOGIC_QUEUE
        ) && result.next_begin_offset > offset
        {
            ctx.offsets
                .commit(group, topic, queue_id, result.next_begin_offset);
        }
        return;
    }
    round.found += result.messages.len();
    round.reads.push(QueueRead {
        topic: topic.to_string(),
        queue_id,
        is_retry,
        start_offset: offset,
        result,
        _lock: lock,
    });
}

/// Java `getPopOffset` + `getInitOffset`: the committed offset, else MIN (initMode 0, and every
/// retry topic) or MAX (the last message; 0 when the queue still holds its first), committed.
pub(crate) fn pop_offset(
    ctx: &BrokerContext,
    topic: &str,
    group: &str,
    queue_id: i32,
    init_mode: i32,
) -> i64 {
    if let Some(o) = ctx.offsets.query(group, topic, queue_id) {
        if o >= 0 {
            return o;
        }
    }
    let min = ctx.store.min_offset_in_queue(topic, queue_id).max(0);
    let offset = if init_mode == 0 || crate::common::topic::is_retry_topic(topic) {
        min
    } else if min == 0
        && ctx
            .store
            .check_in_mem_by_consume_offset(topic, queue_id, 0, 1)
    {
        0
    } else {
        (ctx.store.max_offset_in_queue(topic, queue_id) - 1).max(0)
    };
    ctx.offsets.commit(group, topic, queue_id, offset);
    offset
}

async fn answer(
    ctx: &BrokerContext,
    request: &RemotingCommand,
    h: &PopMessageRequestHeader,
    revive_qid: i32,
    round: Round,
) -> ProcessorResult {
    let pop_time = crate::broker::now_millis();
    let broker = &ctx.config.broker_name;
    let mut rest = round.rest;
    let (mut start_info, mut msg_info, mut count_info) =
        (String::new(), String::new(), String::new());
    let mut body: Vec<Bytes> = Vec::new();
    let mut got = 0usize;
    for read in round.reads {
        let r = &read.result;
        let ck = PopCheckPoint {
            num: r.messages.len() as i32,
            pop_time,
            invisible_time: h.invisible_time,
            start_offset: read.start_offset,
            cid: h.consumer_group.clone(),
            topic: read.topic.clone(),
            queue_id: read.queue_id,
            broker_name: Some(broker.clone()),
            queue_offset_diff: Some(
                r.queue_offsets
                    .iter()
                    .map(|o| (o - read.start_offset) as i32)
                    .collect(),
            ),
            ..Default::default()
        };
        if h.order {
            // no checkpoint: the queue stays blocked and the offset stays at the pop's start
            // until its messages are acknowledged (Java's order info)
            ctx.pop.order.update(
                h.attempt_id.as_deref(),
                &read.topic,
                &h.consumer_group,
                read.queue_id,
                pop_time,
                h.invisible_time,
                &r.queue_offsets,
                pop_time,
                &mut count_info,
            );
            ctx.offsets.commit(
                &h.consumer_group,
                &read.topic,
                read.queue_id,
                read.start_offset,
            );
        } else {
            let deliver = ck.revive_time().saturating_sub(ACK_TIME_INTERVAL);
            let json = ck.to_json();
            let written =
                match pop_revive_record(ctx, revive_qid, CK_TAG, json, ck.uniq_key(), deliver) {
                    Ok(msg) => {
                        let status = ctx.store.put_message(&msg).wait().await.status;
                        let name = format!("{status:?}");
                        ctx.metrics
                            .pop_revive_put(&h.consumer_group, &read.topic, true, &name);
                        // stored even when its flush timed out (Java's putCkToStore): holding
                        // the messages back would pop them again under a second checkpoint
                        status.is_stored()
                    }
                    Err(_) => false,
                };
            if !written {
                // without its checkpoint the messages would never come back: not handed out
                tracing::warn!(topic = %read.topic, queue = read.queue_id, "pop: checkpoint not written; messages kept back");
                rest += r.messages.len() as i64;
                continue;
            }
            ctx.offsets.commit(
                &h.consumer_group,
                &read.topic,
                read.queue_id,
                r.next_begin_offset,
            );
        }
        push_start_offset_info(
            &mut start_info,
            &read.topic,
            read.queue_id,
            read.start_offset,
        );
        push_msg_offset_info(&mut msg_info, &read.topic, read.queue_id, &r.queue_offsets);
        got += r.messages.len();
        ctx.metrics.pop_message_out(
            &h.consumer_group,
            &h.topic,
            read.is_retry,
            r.messages.len() as u64,
            r.buffer_total_size as u64,
        );
        ctx.stats.got(
            &h.consumer_group,
            &read.topic,
            r.messages.len() as u64,
            r.buffer_total_size as u64,
            0,
        );
        for (bytes, offset) in r.messages.iter().zip(&r.queue_offsets) {
            if !read.is_retry {
                body.push(bytes.clone());
                continue;
            }
            let receipt = Receipt::build(
                read.start_offset,
                pop_time,
                h.invisible_time,
                revive_qid,
                &read.topic,
                broker,
                read.queue_id,
                *offset,
            );
            match as_original_topic(bytes, &h.topic, receipt) {
                Some(b) => body.push(b),
                None => {
                    tracing::warn!(topic = %read.topic, offset, "pop: a retry record that does not decode, skipped")
                }
            }
        }
        drop(read._lock);
    }
    if got == 0 {
        return Ok(empty_answer(
            request,
            h,
            revive_qid,
            rest,
            ResponseCode::POLLING_TIMEOUT,
        ));
    }
    if rest > 0 {
        ctx.pop.hold.notify_arrival(&h.topic, h.queue_id);
    }
    let header = PopMessageResponseHeader {
        pop_time,
        invisible_time: h.invisible_time,
        revive_qid,
        rest_num: rest,
        start_offset_info: Some(start_info),
        msg_offset_info: Some(msg_info),
        order_count_info: h.order.then_some(count_info),
    };
    let mut response =
        RemotingCommand::response_to(request, ResponseCode::SUCCESS.code(), Some("FOUND".into()));
    header.write_to(response.ext_mut());
    response.body = Body::from(body);
    Ok(response)
}

/// A retry-topic record as Java hands it out: under the requested topic, with the broker's
/// receipt in POP_CK (unless it has one), re-encoded.
fn as_original_topic(bytes: &[u8], topic: &str, receipt: String) -> Option<Bytes> {
    let rec = decode_record(bytes)?;
    let mut props = Properties::decode_bytes(rec.properties);
    if !props.contains(PROPERTY_POP_CK) {
        props.insert(PROPERTY_POP_CK, receipt);
    }
    let header = RecordHeader {
        queue_id: rec.queue_id,
        flag: rec.flag,
        sys_flag: rec.sys_flag,
        born_timestamp: rec.born_timestamp,
        born_host: &rec.born_host,
        store_host: &rec.store_host,
        reconsume_times: rec.reconsume_times,
        prepared_transaction_offset: rec.prepared_transaction_offset,
    };
    encode_record(
        &header,
        rec.body,
        topic,
        &props.encode(),
        rec.queue_offset,
        rec.phys_offset,
        rec.store_timestamp,
    )
    .map(Bytes::from)
}

/// Nothing popped: `code` (POLLING_TIMEOUT or POLLING_FULL) with the header Java fills.
fn empty_answer(
    request: &RemotingCommand,
    h: &PopMessageRequestHeader,
    revive_qid: i32,
    rest: i64,
    code: ResponseCode,
) -> RemotingCommand {
    let header = PopMessageResponseHeader {
        pop_time: crate::broker::now_millis(),
        invisible_time: h.invisible_time,
        revive_qid,
        rest_num: rest,
        start_offset_info: Some(String::new()),
        msg_offset_info: Some(String::new()),
        order_count_info: h.order.then(String::new),
    };
    let mut r =
        RemotingCommand::response_to(request, code.code(), Some("NO_MESSAGE_IN_QUEUE".into()));
    header.write_to(r.ext_mut());
    r
}

/// 0..100 for the retry-first draw and the first queue (Java `random.nextInt(100)`).
fn random_percent() -> i32 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static STATE: AtomicU64 = AtomicU64::new(0x9E37_79B9_7F4A_7C15);
    let mut x = STATE.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
    x ^= x >> 30;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 27;
    (x % 100) as i32
}
