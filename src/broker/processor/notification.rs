//! NOTIFICATION (200054), POLLING_INFO (200055) and PEEK_MESSAGE (200052), as Java's processors:
//! whether a group has anything to pop (held up to `pollTime` until something arrives), how many
//! POP requests are held for a queue, and a look at what a pop would read, changing nothing.
//! An orderly notification (`order=true`) does not count a queue blocked by its last pop.

use std::sync::Arc;

use bytes::Bytes;

use super::pop_message::check_topic_and_group;
use super::{read_header, success_with, ProcessorResult};
use crate::broker::error::BrokerError;
use crate::broker::pop::records::pop_retry_topic;
use crate::broker::BrokerContext;
use crate::common::topic::is_readable;
use crate::remoting::command::Body;
use crate::remoting::header::notification::{
    NotificationRequestHeader, NotificationResponseHeader, PeekMessageRequestHeader,
    PollingInfoRequestHeader, PollingInfoResponseHeader,
};
use crate::remoting::header::pop_message::PopMessageResponseHeader;
use crate::remoting::header::CommandHeader;
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::server::Connection;
use crate::store::get::GetMessageStatus;

fn check_broker_readable(ctx: &BrokerContext) -> Result<(), BrokerError> {
    if is_readable(ctx.broker_permission()) {
        return Ok(());
    }
    let remark = format!(
        "the broker[{}] peeking message is forbidden",
        ctx.config.broker_ip1
    );
    Err(BrokerError::refused(ResponseCode::NO_PERMISSION, remark))
}

/// The topics a pop of `topic` reads: the retry topics (V2 and, when asked, V1) and the topic.
fn pop_topics(ctx: &BrokerContext, topic: &str, group: &str) -> Vec<String> {
    let mut v = vec![pop_retry_topic(
        topic,
        group,
        ctx.config.enable_retry_topic_v2,
    )];
    if ctx.config.enable_retry_topic_v2 && ctx.config.retrieve_message_from_pop_retry_topic_v1 {
        v.push(pop_retry_topic(topic, group, false));
    }
    v.push(topic.to_string());
    v
}

/// Java `getPopOffset` of the notification and peek paths: the committed offset, else the
/// queue's minimum (not committed).
fn offset_of(ctx: &BrokerContext, group: &str, topic: &str, queue_id: i32) -> i64 {
    ctx.offsets
        .query(group, topic, queue_id)
        .filter(|o| *o >= 0)
        .unwrap_or_else(|| ctx.store.min_offset_in_queue(topic, queue_id).max(0))
}

fn has_message(ctx: &BrokerContext, h: &NotificationRequestHeader) -> bool {
    pop_topics(ctx, &h.topic, &h.consumer_group)
        .iter()
        .any(|topic| {
            let queues: Vec<i32> = if topic == &h.topic && h.queue_id >= 0 {
                vec![h.queue_id]
            } else {
                let n = ctx.topics.select(topic).map_or(0, |tc| tc.read_queue_nums);
                (0..n).collect()
            };
            let now = crate::broker::now_millis();
            let attempt = h.attempt_id.as_deref();
            queues.into_iter().any(|q| {
                let blocked = h.order
                    && ctx
                        .pop
                        .order
                        .check_block(attempt, &h.topic, &h.consumer_group, q, 0, now);
                !blocked
                    && ctx.store.max_offset_in_queue(topic, q)
                        > offset_of(ctx, &h.consumer_group, topic, q)
            })
        })
}

pub async fn notification(
    ctx: &BrokerContext,
    conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let mut h: NotificationRequestHeader = read_header(request)?;
    let now = crate::broker::now_millis();
    if h.born_time == 0 {
        h.born_time = now;
    }
    check_broker_readable(ctx)?;
    check_topic_and_group(ctx, conn, &h.topic, h.queue_id, &h.consumer_group)?;
    let mut answer = NotificationResponseHeader {
        has_msg: has_message(ctx, &h),
        polling_full: false,
    };
    let wait_ms = h
        .born_time
        .saturating_add(h.poll_time)
        .saturating_sub(50 + now)
        .clamp(0, 300_000);
    if !answer.has_msg && wait_ms > 0 {
        let polling = ctx.pop.start_polling(
            &h.topic,
            &h.consumer_group,
            h.queue_id,
            ctx.config.pop_polling_size,
            ctx.config.max_pop_polling_size,
        );
        match polling {
            None => answer.polling_full = true,
            Some(_held) => {
                crate::broker::metrics::mark_long_polled();
                let deadline =
                    tokio::time::Instant::now() + std::time::Duration::from_millis(wait_ms as u64);
                answer.has_msg = ctx
                    .pop
                    .hold
                    .hold(&h.topic, h.queue_id, deadline, || {
                        if has_message(ctx, &h) {
                            Ok(true)
                        } else {
                            Err(false)
                        }
                    })
                    .await;
            }
        }
    }
    Ok(success_with(request, answer))
}

pub fn polling_info(
    ctx: &BrokerContext,
    conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: PollingInfoRequestHeader = read_header(request)?;
    check_broker_readable(ctx)?;
    check_topic_and_group(ctx, conn, &h.topic, h.queue_id, &h.consumer_group)?;
    let n = ctx.pop.polling_num(&h.topic, &h.consumer_group, h.queue_id);
    Ok(success_with(
        request,
        PollingInfoResponseHeader {
            polling_num: n as i32,
        },
    ))
}

pub fn peek_message(
    ctx: &BrokerContext,
    conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: PeekMessageRequestHeader = read_header(request)?;
    let q = &h.queue;
    check_broker_readable(ctx)?;
    if h.max_msg_nums > 32 {
        let remark = format!(
            "the broker[{}] peek message's num is greater than 32",
            ctx.config.broker_ip1
        );
        return Err(BrokerError::refused(
            ResponseCode::INVALID_PARAMETER,
            remark,
        ));
    }
    check_topic_and_group(ctx, conn, &q.topic, q.queue_id, &q.consumer_group)?;
    let wanted = h.max_msg_nums.max(1) as usize;
    let (mut rest, mut body): (i64, Vec<Bytes>) = (0, Vec::new());
    for topic in pop_topics(ctx, &q.topic, &q.consumer_group) {
        let queues: Vec<i32> = if topic == q.topic && q.queue_id >= 0 {
            vec![q.queue_id]
        } else {
            let n = ctx.topics.select(&topic).map_or(0, |tc| tc.read_queue_nums);
            (0..n).collect()
        };
        for queue in queues {
            let mut offset = offset_of(ctx, &q.consumer_group, &topic, queue);
            rest += (ctx.store.max_offset_in_queue(&topic, queue) - offset).max(0);
            if body.len() >= wanted {
                continue;
            }
            let left = (wanted - body.len()) as i32;
            let mut r = ctx
                .store
                .get_message(&topic, queue, offset, left, i32::MAX, None);
            if matches!(
                r.status,
                GetMessageStatus::OFFSET_TOO_SMALL | GetMessageStatus::OFFSET_OVERFLOW_BADLY
            ) {
                offset = r.next_begin_offset;
                r = ctx
                    .store
                    .get_message(&topic, queue, offset, left, i32::MAX, None);
            }
            body.extend(r.messages);
        }
    }
    let header = PopMessageResponseHeader {
        rest_num: rest,
        ..Default::default()
    };
    let (code, remark) = if body.is_empty() {
        (ResponseCode::PULL_NOT_FOUND, "NO_MESSAGE_IN_QUEUE")
    } else {
        (ResponseCode::SUCCESS, "FOUND")
    };
    let mut r = RemotingCommand::response_to(request, code.code(), Some(remark.into()));
    header.write_to(r.ext_mut());
    if !body.is_empty() {
        r.body = Body::from(body);
    }
    Ok(r)
}
