//! SEND_MESSAGE (10), SEND_MESSAGE_V2 (310), SEND_BATCH_MESSAGE (320): check the topic, queue,
//! size and permissions as Java's `AbstractSendMessageProcessor.msgCheck` does, build the record
//! and append it; answer with the offset msgId, queue and queue offset.

use std::sync::Arc;

use crate::broker::metrics::MessageType;
use crate::broker::put::check::{check_message, read_send_header, with_trace_keys};
use crate::broker::put::client::{self as put, Target};
use crate::broker::put::random_queue;
use crate::broker::BrokerContext;
use crate::common::message::MULTI_TAGS_FLAG;
use crate::remoting::header::send_message_response::SendMessageResponseHeader;
use crate::remoting::header::CommandHeader;
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::server::Connection;
use crate::store::message::{PutMessageResult, PutMessageStatus};

pub async fn send_message(
    ctx: &BrokerContext,
    conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> super::ProcessorResult {
    let response = match check_and_put(ctx, conn, request).await {
        Ok(r) => r,
        Err(e) => e.into_response(request),
    };
    Ok(with_trace_keys(ctx, response))
}

async fn check_and_put(
    ctx: &BrokerContext,
    conn: &Connection,
    request: &RemotingCommand,
) -> super::ProcessorResult {
    let header = read_send_header(request)?;
    let tc = check_message(ctx, conn, &header)?;
    let mut target = Target {
        queue_id: header.queue_id,
        sys_flag: header.sys_flag,
        born_host: conn.peer,
    };
    if target.queue_id < 0 {
        target.queue_id = random_queue(tc.write_queue_nums);
    }
    if tc.topic_filter_type == "MULTI_TAG" {
        target.sys_flag |= MULTI_TAGS_FLAG;
    }
    // Java types a send by the properties its header carries
    let ty = if ctx.metrics.enabled() {
        MessageType::of_properties(header.properties.as_deref().unwrap_or("").as_bytes())
    } else {
        MessageType::Normal
    };
    let (result, transaction_id, recall_handle) = if header.is_batch() {
        let batch = put::batch(ctx, request, &header, &target)?;
        let result = ctx.store.put_messages(&batch).wait().await;
        count_put(ctx, &batch.topic, &result, Some(ty));
        (result, None, None)
    } else {
        let put::Prepared {
            msg,
            uniq_key,
            recall_handle,
        } = put::send_message(ctx, request, &header, &target)?;
        let result = ctx.store.put_message(&msg).wait().await;
        count_put(ctx, &msg.topic, &result, Some(ty));
        if ty == MessageType::Transaction && result.is_ok() {
            // a half message stored for `header.topic` (Java's TransactionMetrics +1)
            ctx.tx_counts.add(&header.topic, 1);
        }
        (result, Some(uniq_key), recall_handle)
    };
    Ok(put_result_response(
        ctx,
        request,
        result,
        target.queue_id,
        transaction_id,
        recall_handle,
    ))
}

/// Java `handlePutMessageResult`'s stats: a put the client is told was stored (also after a
/// flush or slave timeout) counts for the topic it was stored under and for the broker; with a
/// message type it counts in the Prometheus families too (a client's send does, the commit of a
/// transaction does not).
pub(crate) fn count_put(
    ctx: &BrokerContext,
    topic: &str,
    result: &PutMessageResult,
    ty: Option<MessageType>,
) {
    use PutMessageStatus::*;
    if let (PUT_OK | FLUSH_DISK_TIMEOUT | FLUSH_SLAVE_TIMEOUT | SLAVE_NOT_AVAILABLE, Some(a)) =
        (result.status, result.append.as_ref())
    {
        let (msgs, bytes) = (a.msg_num.max(1) as u64, a.wrote_bytes.max(0) as u64);
        ctx.stats.put(topic, msgs, bytes);
        if let Some(ty) = ty {
            ctx.metrics.message_in(topic, ty, msgs, bytes);
        }
    }
}

/// SERVICE_NOT_AVAILABLE's remark: Java's text with its disk usage (`diskUtil()`), or, once a
/// failed fsync has poisoned the commit log (Java has no such state), what happened and what the
/// operator must do. Code 14 either way: the Java client retries it on another broker and
/// otherwise fails the send, where FLUSH_DISK_TIMEOUT would come back as a SendResult.
pub(crate) fn not_available_remark(ctx: &BrokerContext) -> String {
    if let Some(cause) = ctx.store.poisoned() {
        return format!(
            "service not available now: an fsync of the commit log failed ({cause}), so this \
             broker refuses all writes; messages stored before stay readable. Fix the disk, \
             then restart the broker."
        );
    }
    let [cl, cq, index] = ctx.store.disk_used_ratios();
    format!(
        "service not available now. It may be caused by one of the following reasons: the \
         broker's disk is full [CL: {cl:5.2} CQ: {cq:5.2} INDEX: {index:5.2}], messages are put \
         to the slave, message store has been shut down, etc."
    )
}

/// Java `handlePutMessageResult`: the store's status as a response code and remark; the
/// header carries the offset msgId, the queue asked for (a half message's real queue) and,
/// as Java's `transactionId`, the message's UNIQ_KEY, and a timer message's recall handle.
fn put_result_response(
    ctx: &BrokerContext,
    request: &RemotingCommand,
    result: PutMessageResult,
    queue_id: i32,
    transaction_id: Option<String>,
    recall_handle: Option<String>,
) -> RemotingCommand {
    use PutMessageStatus::*;
    let (code, remark) = match result.status {
        PUT_OK => (ResponseCode::SUCCESS, None),
        FLUSH_DISK_TIMEOUT => (ResponseCode::FLUSH_DISK_TIMEOUT, None),
        FLUSH_SLAVE_TIMEOUT => (ResponseCode::FLUSH_SLAVE_TIMEOUT, None),
        SLAVE_NOT_AVAILABLE => (ResponseCode::SLAVE_NOT_AVAILABLE, None),
        CREATE_MAPPED_FILE_FAILED => (ResponseCode::SYSTEM_ERROR, Some("create mapped file failed, server is busy or broken.".to_string())),
        MESSAGE_ILLEGAL | PROPERTIES_SIZE_EXCEEDED => (
            ResponseCode::MESSAGE_ILLEGAL,
            Some(format!(
                "the message is illegal, maybe msg body or properties length not matched. msg body length limit {}B, msg properties length limit 32KB.",
                ctx.store.config().max_message_size
            )),
        ),
        SERVICE_NOT_AVAILABLE => (
            ResponseCode::SERVICE_NOT_AVAILABLE,
            Some(not_available_remark(ctx)),
        ),
        OS_PAGE_CACHE_BUSY => (ResponseCode::SYSTEM_BUSY, Some("[PC_SYNCHRONIZED]broker busy, start flow control for a while".to_string())),
        UNKNOWN_ERROR => (ResponseCode::SYSTEM_ERROR, Some("UNKNOWN_ERROR".to_string())),
    };
    let mut response = RemotingCommand::response_to(request, code.code(), remark);
    if let Some(append) = result.append.filter(|_| {
        matches!(
            code,
            ResponseCode::SUCCESS
                | ResponseCode::FLUSH_DISK_TIMEOUT
                | ResponseCode::FLUSH_SLAVE_TIMEOUT
                | ResponseCode::SLAVE_NOT_AVAILABLE
        )
    }) {
        let header = SendMessageResponseHeader {
            msg_id: append.msg_id,
            queue_id,
            queue_offset: append.logics_offset,
            transaction_id,
            recall_handle,
            ..Default::default()
        };
        header.write_to(response.ext_mut());
    }
    response
}
