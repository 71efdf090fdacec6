//! Java `AbstractSendMessageProcessor`'s part before the put, shared by SEND_MESSAGE and
//! SEND_REPLY_MESSAGE: the send header, `msgCheck` (broker and topic permissions, topic name,
//! queue id) with the topic lookup or auto-creation, and the keys every answer carries.

use std::sync::Arc;

use crate::broker::error::BrokerError;
use crate::broker::BrokerContext;
use crate::common::message::{PROPERTY_MSG_REGION, PROPERTY_TRACE_SWITCH};
use crate::common::topic::{self, is_writeable, TopicConfig, PERM_READ, PERM_WRITE};
use crate::remoting::header::send_message::SendMessageRequestHeader;
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::server::Connection;

const FAQ_URL: &str =
    "\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.";

/// The send header of a SEND_MESSAGE (V1 or V2) or batch request.
pub fn read_send_header(
    request: &RemotingCommand,
) -> Result<SendMessageRequestHeader, BrokerError> {
    Ok(SendMessageRequestHeader::read_for_code(
        request.code,
        request.ext_fields.as_ref().unwrap_or(&Default::default()),
    )?)
}

/// Every response of a send (and of a reply) carries MSG_REGION and TRACE_ON, as Java's does.
pub fn with_trace_keys(ctx: &BrokerContext, mut response: RemotingCommand) -> RemotingCommand {
    let ext = response.ext_mut();
    ext.insert(PROPERTY_MSG_REGION, ctx.region_id());
    ext.insert(PROPERTY_TRACE_SWITCH, ctx.trace_on());
    response
}

/// Java `msgCheck` plus the topic lookup/auto-creation; `Err` is the refusal to send back.
pub fn check_message(
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

/// The subscription group is unknown (Java's remark for a send-back).
pub fn group_not_exist(group: &str) -> BrokerError {
    BrokerError::refused(
        ResponseCode::SUBSCRIPTION_GROUP_NOT_EXIST,
        format!("subscription group not exist, {group} {FAQ_URL}"),
    )
}
