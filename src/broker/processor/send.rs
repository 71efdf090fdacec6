//! SEND_MESSAGE (10), SEND_MESSAGE_V2 (310), SEND_BATCH_MESSAGE (320): check the topic, queue,
//! size and permissions as Java's `AbstractSendMessageProcessor.msgCheck` does, build the record
//! and append it; answer with the offset msgId, queue and queue offset.

use std::sync::Arc;

use crate::broker::error::BrokerError;
use crate::broker::put::client::{self as put, Target, FAQ_URL};
use crate::broker::put::random_queue;
use crate::broker::BrokerContext;
use crate::common::message::{MULTI_TAGS_FLAG, PROPERTY_MSG_REGION, PROPERTY_TRACE_SWITCH};
use crate::common::topic::{self, is_writeable, TopicConfig, PERM_READ, PERM_WRITE};
use crate::remoting::header::send_message::SendMessageRequestHeader;
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

/// Every response of the send processor carries MSG_REGION and TRACE_ON, as Java's does.
pub(crate) fn with_trace_keys(
    ctx: &BrokerContext,
    mut response: RemotingCommand,
) -> RemotingCommand {
    let ext = response.ext_mut();
    ext.insert(PROPERTY_MSG_REGION, ctx.region_id());
    ext.insert(PROPERTY_TRACE_SWITCH, ctx.trace_on());
    response
}

/// The send header of a SEND_MESSAGE (V1 or V2) or batch request.
pub(crate) fn read_send_header(
    request: &RemotingCommand,
) -> Result<SendMessageRequestHeader, BrokerError> {
    Ok(SendMessageRequestHeader::read_for_code(
        request.code,
        request.ext_fields.as_ref().unwrap_or(&Default::default()),
    )?)
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
    let (handle, transaction_id) = if header.is_batch() {
        let batch = put::batch(ctx, request, &header, &target)?;
        (ctx.store.put_messages(&batch), None)
    } else {
        let (msg, uniq_key) = put::send_message(ctx, request, &header, &target)?;
        (ctx.store.put_message(&msg), Some(uniq_key))
    };
    let result = handle.wait().await;
    Ok(put_result_response(
        ctx,
        request,
        result,
        target.queue_id,
        transaction_id,
    ))
}

/// Java `msgCheck` plus the topic lookup/auto-creation; `Err` is the refusal to send back.
pub(crate) fn check_message(
    ctx: &BrokerContext,
    conn: &Connection,
    header: &SendMessageRequestHeader,
) -> Result<Arc<TopicConfig>, BrokerError> {
    let broker_perm = ctx.broker_permission();
    if !is_writeable(broker_perm) {
        return Err(BrokerError::refused(
            ResponseCode::NO_PERMISSION,
            format!(
                "the broker[{}] sending message is forbidden",
                ctx.config.broker_ip1
            ),
        ));
    }
    if let Err(e) = topic::validate_topic(&header.topic) {
        return Err(BrokerError::refused(
            ResponseCode::INVALID_PARAMETER,
            e.to_string(),
        ));
    }
    if topic::is_not_allowed_send_topic(&header.topic) {
        return Err(BrokerError::refused(
            ResponseCode::NO_PERMISSION,
            format!("Sending message to topic[{}] is forbidden.", header.topic),
        ));
    }
    let tc = lookup_or_create_topic(ctx, conn, header)?;
    let Some(tc) = tc else {
        return Err(BrokerError::refused(
            ResponseCode::TOPIC_NOT_EXIST,
            format!(
                "topic[{}] not exist, apply first please!{FAQ_URL}",
                header.topic
            ),
        ));
    };
    let limit = tc.write_queue_nums.max(tc.read_queue_nums);
    if header.queue_id >= limit {
        return Err(BrokerError::refused(
            ResponseCode::INVALID_PARAMETER,
            format!(
                "request queueId[{}] is illegal, {:?} Producer: {}",
                header.queue_id, *tc, conn.peer
            ),
        ));
    }
    if !is_writeable(tc.perm) {
        return Err(BrokerError::refused(
            ResponseCode::NO_PERMISSION,
            format!("the topic[{}] sending message is forbidden", header.topic),
        ));
    }
    Ok(tc)
}

fn lookup_or_create_topic(
    ctx: &BrokerContext,
    conn: &Connection,
    header: &SendMessageRequestHeader,
) -> Result<Option<Arc<TopicConfig>>, BrokerError> {
    if let Some(tc) = ctx.topics.select(&header.topic) {
        return Ok(Some(tc));
    }
    let created = if topic::is_retry_topic(&header.topic) {
        Some(
            ctx.topics
                .create_if_absent(&header.topic, 1, PERM_READ | PERM_WRITE, 0)?,
        )
    } else {
        let sys_flag = if header.unit_mode.unwrap_or(false) {
            1
        } else {
            0
        };
        ctx.topics.create_from_template(
            &header.topic,
            &header.default_topic,
            header.default_topic_queue_nums,
            sys_flag,
        )?
    };
    if let Some(tc) = &created {
        tracing::info!(topic = %tc.topic_name, queues = tc.write_queue_nums, producer = %conn.peer, "topic auto-created");
        ctx.register_to_namesrv_soon();
    }
    Ok(created)
}

/// Java `handlePutMessageResult`: the store's status as a response code and remark; the
/// header carries the offset msgId, the queue asked for (a half message's real queue) and,
/// as Java's `transactionId`, the message's UNIQ_KEY.
fn put_result_response(
    ctx: &BrokerContext,
    request: &RemotingCommand,
    result: PutMessageResult,
    queue_id: i32,
    transaction_id: Option<String>,
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
            Some("service not available now. It may be caused by one of the following reasons: the broker's disk is full, messages are put to the slave, message store has been shut down, etc.".to_string()),
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
            ..Default::default()
        };
        header.write_to(response.ext_mut());
    }
    response
}
