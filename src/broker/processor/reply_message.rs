//! SEND_REPLY_MESSAGE (324) / SEND_REPLY_MESSAGE_V2 (325): a consumer answers a request
//! message. The broker pushes the reply at once (PUSH_REPLY_MESSAGE_TO_CLIENT, 326, awaited) to
//! the requesting producer named by the REPLY_TO_CLIENT property, adding PUSH_REPLY_TIME, and,
//! with `storeReplyMessageEnable`, also stores it in the reply topic it was sent to
//! (`<cluster>_REPLY_TOPIC`) with the properties as sent plus MSG_REGION / TRACE_ON, without
//! PUSH_REPLY_TIME (Java `ReplyMessageProcessor`). The
//! code says whether the push worked; the header says where the stored copy went.

use std::net::SocketAddr;
use std::time::Duration;

use super::send::{check_message, random_queue, stamp_region_and_trace, with_trace_keys};
use crate::broker::{now_millis, BrokerContext};
use crate::common::message::{
    PROPERTY_MESSAGE_REPLY_TO_CLIENT, PROPERTY_PUSH_REPLY_TIME, PROPERTY_TAGS,
};
use crate::common::properties::Properties;
use crate::common::tag::tag_hash;
use crate::remoting::header::reply_message::ReplyMessageRequestHeader;
use crate::remoting::header::send_message::SendMessageRequestHeader;
use crate::remoting::header::send_message_response::SendMessageResponseHeader;
use crate::remoting::header::CommandHeader;
use crate::remoting::{RemotingCommand, RequestCode, ResponseCode};
use crate::server::Connection;
use crate::store::message::{MessageInput, PutMessageStatus};

/// Java `Broker2Client.callClient` timeout.
const PUSH_TIMEOUT: Duration = Duration::from_secs(10);

pub async fn send_reply_message(
    ctx: &BrokerContext,
    conn: &std::sync::Arc<Connection>,
    request: &RemotingCommand,
) -> super::ProcessorResult {
    Ok(send_reply(ctx, conn, request).await)
}

async fn send_reply(
    ctx: &BrokerContext,
    conn: &Connection,
    request: &RemotingCommand,
) -> RemotingCommand {
    let mut header = match SendMessageRequestHeader::read_for_code(
        request.code,
        request.ext_fields.as_ref().unwrap_or(&Default::default()),
    ) {
        Ok(h) => h,
        Err(e) => {
            let r = crate::broker::error::BrokerError::from(e).into_response(request);
            return with_trace_keys(ctx, r);
        }
    };
    // Java's `buildMsgContext` writes these into the header's properties first, so both the
    // pushed and the stored reply carry them.
    stamp_region_and_trace(ctx, &mut header.properties);
    let tc = match check_message(ctx, conn, request, &header) {
        Ok(tc) => tc,
        Err(r) => return with_trace_keys(ctx, r),
    };
    let queue_id = if header.queue_id < 0 {
        random_queue(tc.write_queue_nums)
    } else {
        header.queue_id
    };
    let mut response = push_reply_message(ctx, conn.peer, request, &header).await;
    if ctx.config.store_reply_message_enable {
        let msg = reply_to_store(ctx, request, &header, queue_id, conn.peer);
        let result = ctx.store.put_message(&msg).wait().await;
        let stored = matches!(
            result.status,
            PutMessageStatus::PUT_OK
                | PutMessageStatus::FLUSH_DISK_TIMEOUT
                | PutMessageStatus::FLUSH_SLAVE_TIMEOUT
                | PutMessageStatus::SLAVE_NOT_AVAILABLE
        );
        match result.append.filter(|_| stored) {
            Some(a) => SendMessageResponseHeader {
                msg_id: a.msg_id,
                queue_id,
                queue_offset: a.logics_offset,
                ..Default::default()
            }
            .write_to(response.ext_mut()),
            None => {
                tracing::warn!(status = ?result.status, topic = %header.topic, "reply message not stored")
            }
        }
    }
    if response.code == ResponseCode::SUCCESS.code() && response.ext("msgId").is_none() {
        // Java answers msgId "0" and offset 0 when the reply was pushed but not stored.
        SendMessageResponseHeader {
            msg_id: "0".into(),
            queue_id,
            queue_offset: 0,
            ..Default::default()
        }
        .write_to(response.ext_mut());
    }
    with_trace_keys(ctx, response)
}

/// The reply as stored: the properties string exactly as sent.
fn reply_to_store(
    ctx: &BrokerContext,
    request: &RemotingCommand,
    header: &SendMessageRequestHeader,
    queue_id: i32,
    born_host: SocketAddr,
) -> MessageInput {
    let properties = header.properties.clone().unwrap_or_default();
    let tags_code = Properties::decode(&properties)
        .get(PROPERTY_TAGS)
        .map(tag_hash)
        .unwrap_or(0);
    MessageInput {
        topic: header.topic.clone(),
        queue_id,
        flag: header.flag,
        sys_flag: header.sys_flag,
        body: request.body.to_bytes(),
        properties,
        tags_code,
        born_timestamp: header.born_timestamp,
        born_host,
        store_host: ctx.store_host,
        reconsume_times: header.reconsume_times.unwrap_or(0),
        prepared_transaction_offset: 0,
    }
}

/// Java `pushReplyMessage` + `handlePushReplyResult`: SUCCESS when the requester took it,
/// SYSTEM_ERROR with Java's remark otherwise.
async fn push_reply_message(
    ctx: &BrokerContext,
    born: SocketAddr,
    request: &RemotingCommand,
    header: &SendMessageRequestHeader,
) -> RemotingCommand {
    let fail = |remark: String| {
        tracing::warn!(%remark, "reply message not pushed");
        RemotingCommand::response_to(request, ResponseCode::SYSTEM_ERROR.code(), Some(remark))
    };
    let mut props = Properties::decode(header.properties.as_deref().unwrap_or(""));
    let Some(sender) = props
        .get(PROPERTY_MESSAGE_REPLY_TO_CLIENT)
        .map(str::to_string)
    else {
        return fail(format!(
            "reply message properties[{PROPERTY_MESSAGE_REPLY_TO_CLIENT}] is null"
        ));
    };
    let Some(channel) = ctx.clients.find_producer_by_client_id(&sender) else {
        return fail(format!(
            "push reply message fail, channel of <{sender}> not found."
        ));
    };
    props.insert(PROPERTY_PUSH_REPLY_TIME, now_millis().to_string());
    let push_header = ReplyMessageRequestHeader {
        producer_group: header.producer_group.clone(),
        topic: header.topic.clone(),
        default_topic: header.default_topic.clone(),
        default_topic_queue_nums: header.default_topic_queue_nums,
        queue_id: header.queue_id,
        sys_flag: header.sys_flag,
        born_timestamp: header.born_timestamp,
        flag: header.flag,
        properties: Some(props.encode()),
        reconsume_times: header.reconsume_times,
        unit_mode: header.unit_mode.unwrap_or(false),
        born_host: born.to_string(),
        store_host: ctx.store_host.to_string(),
        store_timestamp: now_millis(),
    };
    let mut push = RemotingCommand::request(RequestCode::PUSH_REPLY_MESSAGE_TO_CLIENT.code());
    push_header.write_to(push.ext_mut());
    push.body = request.body.to_bytes().into();
    match channel.conn.invoke(push, PUSH_TIMEOUT).await {
        Ok(r) if r.code == ResponseCode::SUCCESS.code() => {
            RemotingCommand::response_to(request, ResponseCode::SUCCESS.code(), None)
        }
        Ok(r) => {
            tracing::warn!(%sender, remark = ?r.remark, "requester refused the reply");
            fail(format!("push reply message to {sender}fail."))
        }
        Err(e) => {
            tracing::warn!(%sender, error = %e, "push reply message failed");
            fail(format!("push reply message to {sender}fail."))
        }
    }
}
