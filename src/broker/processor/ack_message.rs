//! ACK_MESSAGE (200051), BATCH_ACK_MESSAGE (200151) and CHANGE_MESSAGE_INVISIBLETIME (200053), as
//! Java's `AckMessageProcessor` and `ChangeInvisibleTimeProcessor` on their default path: an ack
//! is an ack record in the revive queue the receipt names, due at the pop's revive time; a change
//! of invisible time is a new checkpoint for the one message (due at now + the new time) and an
//! ack of the old pop. Receipts of orderly pops (revive queue 999) act on the queue's order info
//! instead (`pop/order_info.rs`).

use std::sync::Arc;

use super::{ok, read_header, success_with, ProcessorResult};
use crate::broker::error::BrokerError;
use crate::broker::pop::records::{
    real_topic, AckMsg, PopCheckPoint, Receipt, ACK_TAG, ACK_TIME_INTERVAL, BATCH_ACK_TAG, CK_TAG,
    ORDER_REVIVE_QUEUE,
};
use crate::broker::put::stored::pop_revive_record;
use crate::broker::BrokerContext;
use crate::common::topic::lite_lmq_name;
use crate::remoting::body::pop::BatchAckMessageRequestBody;
use crate::remoting::header::ack_message::{
    AckMessageRequestHeader, ChangeInvisibleTimeRequestHeader, ChangeInvisibleTimeResponseHeader,
};
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::server::Connection;
use crate::store::message::PutMessageStatus;

#[allow(clippy::too_many_arguments)]
/// Java `ackOrderly`: marks the message acknowledged in the queue's order info and moves the
/// group's offset to the first message of the pop still out; `Err` (MESSAGE_ILLEGAL) when the
/// offset is not one of the last pop's.
async fn ack_orderly(
    ctx: &BrokerContext,
    conn: &Connection,
    topic: &str,
    group: &str,
    queue_id: i32,
    offset: i64,
    pop_time: i64,
    invisible: i64,
) -> Result<(), BrokerError> {
    let committed = || ctx.offsets.query(group, topic, queue_id).unwrap_or(-1);
    if offset < committed() {
        return Ok(());
    }
    let _lock = ctx.pop.lock(topic, group, queue_id).await;
    let old = committed();
    if offset < old {
        return Ok(());
    }
    let next = ctx
        .pop
        .order
        .commit_and_next(topic, group, queue_id, offset, pop_time);
    if next == -1 {
        let remark = format!(
            "offset is illegal, key:{topic}@{group}@{queue_id}, old:{old}, commit:{offset}, next:{next}, {}",
            conn.peer
        );
        return Err(BrokerError::refused(ResponseCode::MESSAGE_ILLEGAL, remark));
    }
    if next > -1 {
        if !ctx.offsets.has_reset(group, topic, queue_id) {
            ctx.offsets.commit(group, topic, queue_id, next);
        }
        let now = crate::broker::now_millis();
        if !ctx
            .pop
            .order
            .check_block(None, topic, group, queue_id, invisible, now)
        {
            ctx.pop.notify_arrival(topic, queue_id);
        }
    }
    Ok(())
}

/// The topic and queue-id checks both codes make first (a lite receipt is checked after them).
fn check_topic_queue(
    ctx: &BrokerContext,
    conn: &Connection,
    h: &AckMessageRequestHeader,
) -> Result<(), BrokerError> {
    let Some(tc) = ctx.topics.select(&h.topic) else {
        let remark = format!("topic[{}] not exist, apply first please!", h.topic);
        return Err(BrokerError::refused(ResponseCode::TOPIC_NOT_EXIST, remark));
    };
    if h.queue_id < 0 || h.queue_id >= tc.read_queue_nums {
        let remark = format!(
            "queueId[{}] is illegal, topic:[{}] topicConfig.readQueueNums:[{}] consumer:[{}]",
            h.queue_id, h.topic, tc.read_queue_nums, conn.peer
        );
        return Err(BrokerError::refused(ResponseCode::MESSAGE_ILLEGAL, remark));
    }
    Ok(())
}

/// The offset check; `max_inclusive` for ACK, exclusive for CHANGE.
fn check_offset(
    ctx: &BrokerContext,
    h: &AckMessageRequestHeader,
    max_inclusive: bool,
) -> Result<(), BrokerError> {
    let min = ctx.store.min_offset_in_queue(&h.topic, h.queue_id);
    let max = ctx.store.max_offset_in_queue(&h.topic, h.queue_id);
    let beyond = if max_inclusive {
        h.offset > max
    } else {
        h.offset >= max
    };
    if h.offset < min || beyond {
        let remark = format!(
            "offset is illegal, key:{}@{}, commit:{}, store:{}~{}",
            h.topic, h.queue_id, h.offset, min, max
        );
        return Err(BrokerError::refused(ResponseCode::NO_MESSAGE, remark));
    }
    Ok(())
}

pub async fn ack_message(
    ctx: &BrokerContext,
    conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: AckMessageRequestHeader = read_header(request)?;
    check_topic_queue(ctx, conn, &h)?;
    if let Some(lite) = h.lite_topic.as_deref().filter(|l| !l.trim().is_empty()) {
        ack_lite(ctx, &h, lite).await?;
        return Ok(ok(request));
    }
    check_offset(ctx, &h, true)?;
    let receipt = parse_receipt(&h.extra_info)?;
    if receipt.revive_qid == ORDER_REVIVE_QUEUE {
        let (g, t) = (&h.consumer_group, &h.topic);
        let (pt, it) = (receipt.pop_time, receipt.invisible_time);
        ack_orderly(ctx, conn, t, g, h.queue_id, h.offset, pt, it).await?;
        return Ok(ok(request));
    }
    // Java answers SUCCESS whatever the write gave (failures are logged)
    ack_receipt(ctx, &h, &receipt).await;
    Ok(ok(request))
}

pub async fn batch_ack_message(
    ctx: &BrokerContext,
    conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let body = request.body.to_bytes();
    let parsed = if body.is_empty() {
        None
    } else {
        Some(BatchAckMessageRequestBody::decode(&body)?)
    };
    let Some(b) = parsed.filter(|b| !b.acks.is_empty()) else {
        return Ok(RemotingCommand::response_to(
            request,
            ResponseCode::NO_MESSAGE.code(),
            None,
        ));
    };
    let mut first_error = None;
    for a in &b.acks {
        let topic = real_topic(&a.topic, &a.consumer_group, &a.retry);
        let min = ctx.store.min_offset_in_queue(&topic, a.queue_id);
        let max = ctx.store.max_offset_in_queue(&topic, a.queue_id);
        if min < 0 || max < 0 || !ctx.topics.contains(&topic) {
            tracing::warn!(topic = %topic, queue = a.queue_id, "batch ack for an unknown topic or queue skipped");
            continue;
        }
        let offsets: Vec<i64> = a
            .offsets_up_to(max)
            .into_iter()
            .filter(|o| (min..=max).contains(o))
            .collect();
        if offsets.is_empty() {
            continue;
        }
        if a.revive_queue_id == ORDER_REVIVE_QUEUE {
            // an illegal offset is answered, and the other acks are still applied (Java)
            for o in offsets {
                let (g, pt, it) = (&a.consumer_group, a.pop_time, a.invisible_time);
                if let Err(e) = ack_orderly(ctx, conn, &topic, g, a.queue_id, o, pt, it).await {
                    first_error.get_or_insert(e);
                }
            }
            continue;
        }
        let ack = AckMsg {
            ack_offset: -1,
            ack_offset_list: Some(offsets),
            broker_name: Some(b.broker_name.clone()).filter(|n| !n.is_empty()),
            consumer_group: a.consumer_group.clone(),
            pop_time: a.pop_time,
            queue_id: a.queue_id,
            start_offset: a.start_offset,
            topic,
        };
        write_ack(
            ctx,
            &ack,
            a.revive_queue_id,
            a.pop_time.saturating_add(a.invisible_time),
        )
        .await;
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(ok(request)),
    }
}

pub async fn change_invisible_time(
    ctx: &BrokerContext,
    conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: ChangeInvisibleTimeRequestHeader = read_header(request)?;
    check_topic_queue(ctx, conn, &h.ack)?;
    if let Some(lite) = h.ack.lite_topic.as_deref().filter(|l| !l.trim().is_empty()) {
        return change_lite(ctx, request, &h, lite).await;
    }
    check_offset(ctx, &h.ack, false)?;
    let receipt = parse_receipt(&h.ack.extra_info)?;
    let now = crate::broker::now_millis();
    if receipt.revive_qid == ORDER_REVIVE_QUEUE {
        return Ok(change_orderly(ctx, request, &h, &receipt, now).await);
    }
    let ck = PopCheckPoint {
        num: 1,
        pop_time: now,
        invisible_time: h.invisible_time,
        start_offset: h.ack.offset,
        cid: h.ack.consumer_group.clone(),
        topic: h.ack.topic.clone(),
        queue_id: h.ack.queue_id,
        broker_name: Some(receipt.broker_name.clone()),
        queue_offset_diff: Some(vec![0]),
        ..Default::default()
    };
    let deliver = ck.revive_time().saturating_sub(ACK_TIME_INTERVAL);
    let msg = pop_revive_record(
        ctx,
        receipt.revive_qid,
        CK_TAG,
        ck.to_json(),
        ck.uniq_key(),
        deliver,
    )?;
    let result = ctx.store.put_message(&msg).wait().await;
    let status = format!("{:?}", result.status);
    ctx.metrics
        .pop_revive_put(&h.ack.consumer_group, &h.ack.topic, true, &status);
    if !result.status.is_stored() {
        return Err(BrokerError::system(status));
    }
    ack_receipt(ctx, &h.ack, &receipt).await;
    let mut r = success_with(
        request,
        ChangeInvisibleTimeResponseHeader {
            pop_time: now,
            invisible_time: h.invisible_time,
            revive_qid: receipt.revive_qid,
        },
    );
    // Java's answer keeps the default remark of a response made from a header class
    r.remark = Some("not set any response code".into());
    Ok(r)
}

/// Java `processChangeInvisibleTimeForOrder`: the message becomes visible `invisibleTime` from
/// now; an offset below the group's answers with zeros, as Java's does.
async fn change_orderly(
    ctx: &BrokerContext,
    request: &RemotingCommand,
    h: &ChangeInvisibleTimeRequestHeader,
    receipt: &Receipt,
    now: i64,
) -> RemotingCommand {
    let a = &h.ack;
    let committed = || {
        ctx.offsets
            .query(&a.consumer_group, &a.topic, a.queue_id)
            .unwrap_or(-1)
    };
    let mut header = ChangeInvisibleTimeResponseHeader::default();
    if a.offset >= committed() {
        let _lock = ctx.pop.lock(&a.topic, &a.consumer_group, a.queue_id).await;
        if a.offset >= committed() {
            let next_visible = now.saturating_add(h.invisible_time);
            ctx.pop.order.update_next_visible_time(
                &a.topic,
                &a.consumer_group,
                a.queue_id,
                a.offset,
                receipt.pop_time,
                next_visible,
            );
            header = ChangeInvisibleTimeResponseHeader {
                pop_time: receipt.pop_time,
                invisible_time: next_visible.saturating_sub(receipt.pop_time),
                revive_qid: receipt.revive_qid,
            };
        }
    }
    let mut r = success_with(request, header);
    r.remark = Some("not set any response code".into());
    r
}

/// Java 5.5 `ackLite`: the offset is the lite queue's; acknowledged in the (group, LMQ) order
/// info, the group's offset moves to the first message still out, and the LMQ is offered to the
/// group again once its queue is no longer blocked.
async fn ack_lite(
    ctx: &BrokerContext,
    h: &AckMessageRequestHeader,
    lite: &str,
) -> Result<(), BrokerError> {
    let group = &h.consumer_group;
    let bound = ctx
        .groups
        .find(group)
        .is_some_and(|g| super::lite::bind_topic(&g) == Some(h.topic.as_str()));
    if !bound {
        return Err(BrokerError::refused(
            ResponseCode::INVALID_PARAMETER,
            "group type or bind topic not match.",
        ));
    }
    let lmq = lite_lmq_name(&h.topic, lite).unwrap_or_default();
    if h.offset > ctx.store.max_offset_in_queue(&lmq, 0) {
        return Err(BrokerError::refused(
            ResponseCode::NO_MESSAGE,
            "ack offset illegal.",
        ));
    }
    let receipt = Receipt::parse(&h.extra_info);
    let revive_qid = receipt.as_ref().map(|r| r.revive_qid);
    if h.queue_id != 0 || revive_qid != Some(ORDER_REVIVE_QUEUE) {
        return Err(BrokerError::refused(
            ResponseCode::INVALID_PARAMETER,
            "ack queue illegal.",
        ));
    }
    let receipt = receipt.expect("checked above");
    let committed = || ctx.offsets.query(group, &lmq, 0).unwrap_or(-1);
    if h.offset < committed() {
        return Ok(());
    }
    let _lock = ctx.pop.lock(&lmq, group, 0).await;
    if h.offset < committed() {
        return Ok(());
    }
    let next = ctx
        .lite
        .order
        .commit_and_next(&lmq, group, 0, h.offset, receipt.pop_time);
    if next > -1 {
        if !ctx.offsets.has_reset(group, &lmq, 0) {
            ctx.offsets.commit(group, &lmq, 0, next);
        }
        let now = crate::broker::now_millis();
        if !ctx
            .lite
            .order
            .check_block(None, &lmq, group, 0, receipt.invisible_time, now)
        {
            ctx.lite_dispatch(Some(group), &lmq, None);
        }
    }
    if next == -1 {
        return Err(BrokerError::refused(
            ResponseCode::MESSAGE_ILLEGAL,
            "ack offset illegal.",
        ));
    }
    Ok(())
}

/// Java 5.5 `processChangeInvisibleTimeForLite`: the message (or with `suspend` the whole pop)
/// becomes visible `invisibleTime` from now; no checkpoint is written.
async fn change_lite(
    ctx: &BrokerContext,
    request: &RemotingCommand,
    h: &ChangeInvisibleTimeRequestHeader,
    lite: &str,
) -> ProcessorResult {
    let a = &h.ack;
    let lmq = lite_lmq_name(&a.topic, lite).unwrap_or_default();
    if a.offset > ctx.store.max_offset_in_queue(&lmq, 0) {
        let mut r = success_with(request, ChangeInvisibleTimeResponseHeader::default());
        r.code = ResponseCode::NO_MESSAGE.code();
        r.remark = None;
        return Ok(r);
    }
    let group = &a.consumer_group;
    let receipt = Receipt::parse(&a.extra_info);
    let (pop_time, revive_qid) = receipt
        .as_ref()
        .map_or((0, 0), |r| (r.pop_time, r.revive_qid));
    let committed = || ctx.offsets.query(group, &lmq, 0).unwrap_or(-1);
    let mut header = ChangeInvisibleTimeResponseHeader::default();
    if a.offset >= committed() {
        let _lock = ctx.pop.lock(&lmq, group, 0).await;
        if a.offset >= committed() {
            let visible_at = crate::broker::now_millis().saturating_add(h.invisible_time);
            if h.suspend {
                ctx.lite
                    .order
                    .suspend_queue(&lmq, group, 0, pop_time, visible_at);
            } else {
                ctx.lite
                    .order
                    .update_next_visible_time(&lmq, group, 0, a.offset, pop_time, visible_at);
            }
            ctx.lite.wake_when_free(group, &lmq, visible_at);
            header = ChangeInvisibleTimeResponseHeader {
                pop_time,
                invisible_time: visible_at.saturating_sub(pop_time),
                revive_qid,
            };
        }
    }
    let mut r = success_with(request, header);
    r.remark = Some("not set any response code".into());
    Ok(r)
}

fn parse_receipt(extra_info: &str) -> Result<Receipt, BrokerError> {
    Receipt::parse(extra_info).ok_or_else(|| {
        BrokerError::refused(
            ResponseCode::INVALID_PARAMETER,
            format!("extraInfo is not a POP receipt: {extra_info:?}"),
        )
    })
}

/// Acknowledges the message `h` names under its receipt: an ack record in the receipt's revive
/// queue, due when the pop's invisible time ends.
async fn ack_receipt(ctx: &BrokerContext, h: &AckMessageRequestHeader, receipt: &Receipt) {
    let ack = AckMsg {
        ack_offset: h.offset,
        ack_offset_list: None,
        broker_name: Some(receipt.broker_name.clone()),
        consumer_group: h.consumer_group.clone(),
        pop_time: receipt.pop_time,
        queue_id: h.queue_id,
        start_offset: receipt.ck_start_offset,
        topic: h.topic.clone(),
    };
    let due = receipt.pop_time.saturating_add(receipt.invisible_time);
    write_ack(ctx, &ack, receipt.revive_qid, due).await;
}

/// Writes an ack record to `revive_qid`, due at `deliver_ms`; a failure is logged (Java).
async fn write_ack(ctx: &BrokerContext, ack: &AckMsg, revive_qid: i32, deliver_ms: i64) {
    // a batch ack's UNIQ_KEY ends up in the single ack's form (`ao` -1): Java sets the batch
    // form, then overwrites it with genAckUniqueId
    let tag = match &ack.ack_offset_list {
        Some(_) => BATCH_ACK_TAG,
        None => ACK_TAG,
    };
    if revive_qid < 0 {
        tracing::error!(revive_qid, topic = %ack.topic, "ack record not written: a negative revive queue in the receipt");
        return;
    }
    // the receipt's queue, as given (Java): an ack must land where its checkpoint is
    match pop_revive_record(
        ctx,
        revive_qid,
        tag,
        ack.to_json(),
        ack.uniq_key(),
        deliver_ms,
    ) {
        Ok(msg) => {
            let r = ctx.store.put_message(&msg).wait().await;
            let status = format!("{:?}", r.status);
            ctx.metrics
                .pop_revive_put(&ack.consumer_group, &ack.topic, false, &status);
            if r.status != PutMessageStatus::PUT_OK {
                tracing::error!(status = ?r.status, topic = %ack.topic, "ack record not written");
            }
        }
        Err(e) => tracing::error!(error = ?e, topic = %ack.topic, "ack record not written"),
    }
}
