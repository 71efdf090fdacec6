//! RECALL_MESSAGE (370, RocketMQ 5.3.2+): cancels a timer message before it is due, by the
//! handle its send answered (`DefaultMQProducer.recallMessage`, the gRPC `RecallMessage` through
//! the proxy). As Java's `RecallMessageProcessor`: the checks, then a delete marker stored in the
//! timer queue for the message's slot; the timer service drops the message it names when the
//! slot comes (`TimerMessageService`). Off unless `recallMessageEnable`.

use std::sync::Arc;

use super::send::count_put;
use super::ProcessorResult;
use crate::broker::put::client::recall_marker;
use crate::broker::BrokerContext;
use crate::common::message::PROPERTY_MSG_REGION;
use crate::common::recall_handle::RecallHandle;
use crate::common::topic::is_writeable;
use crate::remoting::header::recall_message::{
    RecallMessageRequestHeader, RecallMessageResponseHeader,
};
use crate::remoting::header::CommandHeader;
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::server::Connection;
use crate::store::message::PutMessageStatus;

pub async fn recall_message(
    ctx: &BrokerContext,
    conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: RecallMessageRequestHeader = super::read_header(request)?;
    let (code, remark, msg_id) = match recall(ctx, conn, &h).await {
        Ok(msg_id) => (ResponseCode::SUCCESS, None, Some(msg_id)),
        Err((code, remark)) => (code, Some(remark), None),
    };
    let mut response = RemotingCommand::response_to(request, code.code(), remark);
    // Java adds the region to every answer, and the msgId to a success
    response
        .ext_mut()
        .insert(PROPERTY_MSG_REGION, ctx.region_id());
    if let Some(msg_id) = msg_id {
        RecallMessageResponseHeader { msg_id }.write_to(response.ext_mut());
    }
    Ok(response)
}

/// The recalled message's UNIQ_KEY, or the code and remark Java answers.
async fn recall(
    ctx: &BrokerContext,
    conn: &Connection,
    h: &RecallMessageRequestHeader,
) -> Result<String, (ResponseCode, String)> {
    let refuse = |code: ResponseCode, remark: &str| Err((code, remark.to_string()));
    let not_available = "recall failed, broker service not available";
    if !ctx.config.recall_message_enable {
        return refuse(
            ResponseCode::NO_PERMISSION,
            "recall failed, operation is forbidden",
        );
    }
    if ctx.config.is_slave() {
        return refuse(ResponseCode::SLAVE_NOT_AVAILABLE, not_available);
    }
    if !is_writeable(ctx.broker_permission()) && !ctx.config.allow_recall_when_broker_not_writeable
    {
        return refuse(ResponseCode::SERVICE_NOT_AVAILABLE, not_available);
    }
    if ctx.topics.select(&h.topic).is_none() {
        let remark = format!("recall failed, the topic[{}] not exist", h.topic);
        return Err((ResponseCode::TOPIC_NOT_EXIST, remark));
    }
    let handle = RecallHandle::decode(&h.recall_handle)
        .map_err(|e| (ResponseCode::ILLEGAL_OPERATION, e.to_string()))?;
    if handle.topic != h.topic {
        return refuse(
            ResponseCode::ILLEGAL_OPERATION,
            "recall failed, topic not match",
        );
    }
    if handle.broker_name != ctx.config.broker_name {
        return refuse(ResponseCode::ILLEGAL_OPERATION, not_available);
    }
    // Java NumberUtils.toLong(…, -1): a timestamp that is no number is "in the past"
    let timestamp = handle.timestamp.trim().parse::<i64>().unwrap_or(-1);
    let left = timestamp.saturating_sub(crate::broker::now_millis());
    let max_delay_ms = ctx.store.config().timer_max_delay_sec.saturating_mul(1000);
    if left <= 0 || left >= max_delay_ms {
        return refuse(
            ResponseCode::ILLEGAL_OPERATION,
            "recall failed, timestamp invalid",
        );
    }
    let execute_error = (
        ResponseCode::SYSTEM_ERROR,
        "recall failed, execute error".to_string(),
    );
    let marker = recall_marker(ctx, &handle, h.producer_group.as_deref(), conn.peer)
        .map_err(|_| execute_error.clone())?;
    let result = ctx.store.put_message(&marker).wait().await;
    count_put(ctx, &marker.topic, &result, None);
    use PutMessageStatus::*;
    match result.status {
        PUT_OK | FLUSH_DISK_TIMEOUT | FLUSH_SLAVE_TIMEOUT | SLAVE_NOT_AVAILABLE => {
            Ok(handle.message_id)
        }
        _ => Err(execute_error),
    }
}
