//! SEND_REPLY_MESSAGE (324) / SEND_REPLY_MESSAGE_V2 (325): a consumer answers a request
//! message. The broker pushes the reply at once (PUSH_REPLY_MESSAGE_TO_CLIENT, 326, awaited) to
//! the requesting producer named by the REPLY_TO_CLIENT property, adding PUSH_REPLY_TIME, and,
//! with `storeReplyMessageEnable`, also stores it in the reply topic it was sent to
//! (`<cluster>_REPLY_TOPIC`) with the properties as sent plus MSG_REGION / TRACE_ON, without
//! PUSH_REPLY_TIME (Java `ReplyMessageProcessor`). The
//! code says whether the push worked; the header says where the stored copy went.

use std::net::SocketAddr;
use std::time::Duration;

use crate::broker::put::check::{check_message, read_send_header, with_trace_keys};
use crate::broker::put::client::{self as put, stamp_region_and_trace, Target};
use crate::broker::put::random_queue;
use crate::broker::{now_millis, BrokerContext};
use crate::common::message::{PROPERTY_MESSAGE_REPLY_TO_CLIENT, PROPERTY_PUSH_REPLY_TIME};
use crate::common::properties::Properties;
use crate::remoting::header::reply_message::ReplyMessageRequestHeader;
use crate::remoting::header::send_message::SendMessageRequestHeader;
use crate::remoting::header::send_message_response::SendMessageResponseHeader;
use crate::remoting::header::CommandHeader;
use crate::remoting::{RemotingCommand, RequestCode, ResponseCode};
use crate::server::Connection;
use crate::store::message::PutMessageStatus;

/// Java `Broker2Client.callClient` timeout.
const PUSH_TIMEOUT: Duration = Duration::from_secs(10);

pub async fn send_reply_message(
    ctx: &BrokerContext,
    conn: &std::sync::Arc<Connection>,
    request: &RemotingCommand,
) -> super::ProcessorResult {
    let response = match send_reply(ctx, conn, request).await {
        Ok(r) => r,
        Err(e) => e.into_response(request),
    };
    Ok(with_trace_keys(ctx, response))
}

async fn send_reply(
    ctx: &BrokerContext,
    conn: &Connection,
    request: &RemotingCommand,
) -> super::ProcessorResult {
    let mut header = read_send_header(request)?;
    // Java's `buildMsgContext` writes these into the header's properties first, so both the
    // pushed and the stored reply carry them.
    stamp_region_and_trace(ctx, &mut header.properties);
    let tc = check_message(ctx, conn, &header)?;
    let target = Target {
        queue_id: if header.queue_id < 0 {
            random_queue(tc.write_queue_nums)
        } else {
            header.queue_id
        },
        sys_flag: header.sys_flag,
        born_host: conn.peer,
    };
    let queue_id = target.queue_id;
    let mut response = push_reply_message(ctx, conn.peer, request, &header).await;
    if ctx.config.store_reply_message_enable {
        let msg = put::reply(ctx, request, &header, &target);
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
    Ok(response)
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
        super::reply(request, ResponseCode::SYSTEM_ERROR, remark)
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
        Ok(r) if r.code == ResponseCode::SUCCESS.code() => super::ok(request),
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
