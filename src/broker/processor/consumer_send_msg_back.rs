//! CONSUMER_SEND_MSG_BACK (36): a consumer failed a message. The broker looks the original up by
//! commit-log offset and re-puts it to `%RETRY%<group>` through delay level `3 + reconsumeTimes`
//! (or the header's level), or to `%DLQ%<group>` once it was reconsumed `retryMaxTimes` times
//! (Java `AbstractSendMessageProcessor.consumerSendMsgBack`).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use super::{ok, read_header, ProcessorResult};
use crate::broker::error::BrokerError;
use crate::broker::schedule_message_service::{
    record_to_input, transform_delay_level, with_record,
};
use crate::broker::BrokerContext;
use crate::common::message::{
    PROPERTY_DELAY_TIME_LEVEL, PROPERTY_ORIGIN_MESSAGE_ID, PROPERTY_RETRY_TOPIC,
    PROPERTY_WAIT_STORE_MSG_OK,
};
use crate::common::properties::Properties;
use crate::common::topic::{self, is_writeable, TopicConfig, PERM_READ, PERM_WRITE};
use crate::remoting::header::consumer_send_msg_back::ConsumerSendMsgBackRequestHeader;
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::server::Connection;
use crate::store::message::{offset_msg_id, MessageInput, PutMessageStatus};

/// Java `MQVersion.Version.V3_4_9.ordinal()`: from this client version on, the header's
/// maxReconsumeTimes overrides the group's retryMaxTimes.
pub(crate) const V3_4_9: i32 = 121;
/// Java `MixAll.DLQ_NUMS_PER_GROUP`.
const DLQ_NUMS_PER_GROUP: i32 = 1;
const FAQ_SUBSCRIPTION_GROUP_NOT_EXIST: &str =
    "\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.";

fn refused(code: ResponseCode, remark: impl Into<String>) -> BrokerError {
    BrokerError::refused(code, remark)
}

pub async fn consumer_send_msg_back(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let header: ConsumerSendMsgBackRequestHeader = read_header(request)?;
    send_back(ctx, request, &header).await?;
    Ok(ok(request))
}

async fn send_back(
    ctx: &BrokerContext,
    request: &RemotingCommand,
    header: &ConsumerSendMsgBackRequestHeader,
) -> Result<(), BrokerError> {
    let group = ctx.groups.find_or_create(&header.group).map_err(|_| {
        refused(
            ResponseCode::SUBSCRIPTION_GROUP_NOT_EXIST,
            format!(
                "subscription group not exist, {} {FAQ_SUBSCRIPTION_GROUP_NOT_EXIST}",
                header.group
            ),
        )
    })?;
    if !is_writeable(ctx.broker_permission()) {
        return Err(refused(
            ResponseCode::NO_PERMISSION,
            format!(
                "the broker[{}] sending message is forbidden",
                ctx.config.broker_ip1
            ),
        ));
    }
    if group.retry_queue_nums <= 0 {
        return Ok(());
    }
    let retry_topic = topic::retry_topic(&header.group);
    let sys_flag = if header.unit_mode { 1 << 1 } else { 0 };
    let tc = create_send_back_topic(ctx, &retry_topic, group.retry_queue_nums, sys_flag)?;
    if !is_writeable(tc.perm) {
        return Err(refused(
            ResponseCode::NO_PERMISSION,
            format!("the topic[{retry_topic}] sending message is forbidden"),
        ));
    }
    let mut max_times = group.retry_max_times;
    if request.version >= V3_4_9 {
        if let Some(t) = header.max_reconsume_times {
            max_times = t;
        }
    }
    let msg = with_record(&ctx.store, header.offset, |rec| {
        let mut msg = record_to_input(rec, ctx.store_host);
        let origin_id = offset_msg_id(&rec.store_host, rec.phys_offset);
        msg.topic = rec.topic_str().to_string();
        (msg, origin_id)
    });
    let Some((mut msg, origin_id)) = msg else {
        return Err(refused(
            ResponseCode::SYSTEM_ERROR,
            format!("look message by offset failed, {}", header.offset),
        ));
    };
    let mut props = Properties::decode(&msg.properties);
    if !props.contains(PROPERTY_RETRY_TOPIC) {
        props.insert(PROPERTY_RETRY_TOPIC, msg.topic.clone());
    }
    props.insert(PROPERTY_WAIT_STORE_MSG_OK, "false");
    let to_dlq = msg.reconsume_times >= max_times || header.delay_level < 0;
    if to_dlq {
        let dlq = topic::dlq_topic(&header.group);
        create_send_back_topic(ctx, &dlq, DLQ_NUMS_PER_GROUP, 0)?;
        props.insert(PROPERTY_DELAY_TIME_LEVEL, "0");
        msg.topic = dlq;
        msg.queue_id = 0;
        tracing::info!(group = %header.group, topic = %msg.topic, "message sent back to DLQ");
    } else {
        let level = match header.delay_level {
            0 => 3 + msg.reconsume_times,
            l => l,
        };
        props.insert(PROPERTY_DELAY_TIME_LEVEL, level.to_string());
        msg.topic = retry_topic;
        msg.queue_id = random_queue(group.retry_queue_nums);
    }
    if props
        .get(PROPERTY_ORIGIN_MESSAGE_ID)
        .is_none_or(|v| v.trim().is_empty())
    {
        props.insert(PROPERTY_ORIGIN_MESSAGE_ID, origin_id);
    }
    msg.reconsume_times += 1;
    put_with_delay(ctx, &mut msg, props).await
}

/// Applies the delay-level transform, encodes the properties and puts `msg`; any status but
/// PUT_OK is SYSTEM_ERROR with the status name (Java's remark).
async fn put_with_delay(
    ctx: &BrokerContext,
    msg: &mut MessageInput,
    mut props: Properties,
) -> Result<(), BrokerError> {
    let max_level = ctx.schedule.max_level();
    if let Some((t, q)) = transform_delay_level(
        &mut props,
        &msg.topic,
        msg.queue_id,
        msg.sys_flag,
        max_level,
    ) {
        msg.topic = t;
        msg.queue_id = q;
    }
    msg.properties = props.encode();
    let result = ctx.store.put_message(msg).wait().await;
    if result.status == PutMessageStatus::PUT_OK {
        Ok(())
    } else {
        Err(refused(
            ResponseCode::SYSTEM_ERROR,
            format!("{:?}", result.status),
        ))
    }
}

/// Java `createTopicInSendMessageBackMethod`: retry and DLQ topics are made on first use (read and
/// write) and registered with the NameServers at once.
pub(crate) fn create_send_back_topic(
    ctx: &BrokerContext,
    name: &str,
    queue_nums: i32,
    sys_flag: i32,
) -> Result<Arc<TopicConfig>, BrokerError> {
    if let Some(tc) = ctx.topics.select(name) {
        return Ok(tc);
    }
    let tc = ctx
        .topics
        .create_if_absent(name, queue_nums, PERM_READ | PERM_WRITE, sys_flag)
        .map_err(|e| {
            refused(
                ResponseCode::SYSTEM_ERROR,
                format!("topic[{name}] not exist: {e}"),
            )
        })?;
    tracing::info!(topic = name, queues = queue_nums, "send-back topic created");
    ctx.register_to_namesrv_soon();
    Ok(tc)
}

fn random_queue(n: i32) -> i32 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    (NEXT.fetch_add(1, Ordering::Relaxed) % n.max(1) as u32) as i32
}
