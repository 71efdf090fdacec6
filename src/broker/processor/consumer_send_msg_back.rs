//! CONSUMER_SEND_MSG_BACK (36): a consumer failed a message. The broker looks the original up by
//! commit-log offset and re-puts it to `%RETRY%<group>` through delay level `3 + reconsumeTimes`
//! (or the header's level), or to `%DLQ%<group>` once it was reconsumed `retryMaxTimes` times
//! (Java `AbstractSendMessageProcessor.consumerSendMsgBack`).

use std::sync::Arc;

use super::{ok, read_header, ProcessorResult};
use crate::broker::error::BrokerError;
use crate::broker::metadata::topics::SCHEDULE_TOPIC;
use crate::broker::put::check::group_not_exist;
use crate::broker::put::client::{create_send_back_topic, max_reconsume_times};
use crate::broker::put::stored::{self, SendBack};
use crate::broker::BrokerContext;
use crate::common::message::PROPERTY_RETRY_TOPIC;
use crate::common::topic::{self, is_writeable};
use crate::remoting::header::consumer_send_msg_back::ConsumerSendMsgBackRequestHeader;
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::server::Connection;
use crate::store::message::PutMessageStatus;
use crate::store::util::find_property;

pub async fn consumer_send_msg_back(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let header: ConsumerSendMsgBackRequestHeader = read_header(request)?;
    send_back(ctx, request, &header).await?;
    Ok(ok(request))
}

/// Java `consumerSendMsgBack`: the checks, then the put; any status but PUT_OK is SYSTEM_ERROR
/// with the status name (Java's remark).
async fn send_back(
    ctx: &BrokerContext,
    request: &RemotingCommand,
    header: &ConsumerSendMsgBackRequestHeader,
) -> Result<(), BrokerError> {
    let Ok(group) = ctx.groups.find_or_create(&header.group) else {
        return Err(group_not_exist(&header.group));
    };
    if !is_writeable(ctx.broker_permission()) {
        return Err(BrokerError::refused(
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
        return Err(BrokerError::refused(
            ResponseCode::NO_PERMISSION,
            format!("the topic[{retry_topic}] sending message is forbidden"),
        ));
    }
    let msg = stored::send_back(
        ctx,
        &SendBack {
            group: &header.group,
            offset: header.offset,
            delay_level: header.delay_level,
            retry_queue_nums: group.retry_queue_nums,
            max_reconsume_times: max_reconsume_times(
                group.retry_max_times,
                request,
                header.max_reconsume_times,
            ),
        },
    )?;
    let result = ctx.store.put_message(&msg).wait().await;
    if result.status == PutMessageStatus::PUT_OK {
        // Java: the stored message's topic counts only when it is the delay topic; the send-back
        // counts under the original topic (RETRY_TOPIC, which the send-back always carries)
        if let Some(a) = result
            .append
            .as_ref()
            .filter(|_| msg.topic == SCHEDULE_TOPIC)
        {
            ctx.stats
                .topic_put(&msg.topic, 1, a.wrote_bytes.max(0) as u64);
        }
        if msg.topic.starts_with(topic::DLQ_GROUP_TOPIC_PREFIX) {
            // a topic the broker has: the header's originTopic is the client's word
            if let Some(origin) = header
                .origin_topic
                .as_deref()
                .filter(|t| ctx.topics.contains(t))
            {
                ctx.metrics.sent_to_dlq(&header.group, origin);
            }
        }
        let props = msg.properties.as_bytes();
        if let Some(back) = find_property(props, PROPERTY_RETRY_TOPIC) {
            ctx.stats
                .sent_back(&header.group, &String::from_utf8_lossy(back));
        }
        Ok(())
    } else {
        Err(BrokerError::system(format!("{:?}", result.status)))
    }
}
