//! Consumer-group administration: UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200),
//! UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST (225),
//! GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201), GET_SUBSCRIPTIONGROUP_CONFIG (352),
//! DELETE_SUBSCRIPTIONGROUP (207), GET_CONSUME_STATS (208), GET_CONSUMER_CONNECTION_LIST (203),
//! GET_PRODUCER_CONNECTION_LIST (204), INVOKE_BROKER_TO_RESET_OFFSET (222, server-side reset),
//! and the admin→client relays GET_CONSUMER_RUNNING_INFO (307) and CONSUME_MESSAGE_DIRECTLY (309).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::{ok, read_header, ProcessorResult};
use crate::broker::client_registry::ClientChannel;
use crate::broker::error::BrokerError;
use crate::broker::stats::{Period, GROUP_GET_NUMS};
use crate::broker::BrokerContext;
use crate::common::msg_id::decode_msg_id;
use crate::common::topic::{validate_group, MessageQueue};
use crate::remoting::body::connection::{Connection as ConnectionBody, ProducerConnection};
use crate::remoting::body::consume_stats::{ConsumeStats, OffsetWrapper};
use crate::remoting::body::consumer_connection::ConsumerConnection;
use crate::remoting::body::reset_offset_body::ResetOffsetBody;
use crate::remoting::body::subscription_group::SubscriptionGroupConfig;
use crate::remoting::body::topic_config_list::SubscriptionGroupList;
use crate::remoting::header::consume_message_directly::ConsumeMessageDirectlyResultRequestHeader;
use crate::remoting::header::delete_subscription_group::DeleteSubscriptionGroupRequestHeader;
use crate::remoting::header::get_consume_stats::GetConsumeStatsRequestHeader;
use crate::remoting::header::get_consumer_connection_list::GetConsumerConnectionListRequestHeader;
use crate::remoting::header::get_consumer_running_info::GetConsumerRunningInfoRequestHeader;
use crate::remoting::header::get_producer_connection_list::GetProducerConnectionListRequestHeader;
use crate::remoting::header::reset_offset::ResetOffsetRequestHeader;
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::server::Connection;
use crate::store::get::BoundaryType;

/// How long a relayed admin request waits for the client.
const RELAY_TIMEOUT: Duration = Duration::from_secs(5);

pub fn update_and_create_subscription_group(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let config = SubscriptionGroupConfig::decode(&request.body.to_bytes())
        .map_err(|e| BrokerError::system(e.to_string()))?;
    let config = with_attributes(ctx, config)?;
    ctx.groups.update(config)?;
    Ok(ok(request))
}

/// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST (225, `mqadmin updateSubGroupList`): the groups of
/// the body as 200 writes each, with one persist (Java 5.3.3
/// `updateAndCreateSubscriptionGroupList`); an empty list writes nothing.
pub fn update_and_create_subscription_group_list(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let list = SubscriptionGroupList::decode(&request.body.to_bytes()).map_err(|e| {
        BrokerError::refused(
            ResponseCode::INVALID_PARAMETER,
            format!("the body is not a SubscriptionGroupList: {e}"),
        )
    })?;
    let configs = list
        .group_config_list
        .into_iter()
        .map(|config| with_attributes(ctx, config))
        .collect::<Result<Vec<_>, _>>()?;
    if !configs.is_empty() {
        ctx.groups.update_all(configs)?;
    }
    Ok(ok(request))
}

/// A group to write: its name checked, its attribute edits applied to the group's current ones
/// (Java AttributeUtil.alterCurrentAttributes: `+key` sets, `-key` removes; they are kept
/// without the sign: `lite.bind.topic`, ...).
fn with_attributes(
    ctx: &BrokerContext,
    mut config: SubscriptionGroupConfig,
) -> Result<SubscriptionGroupConfig, BrokerError> {
    validate_group(&config.group_name)
        .map_err(|e| BrokerError::refused(ResponseCode::INVALID_PARAMETER, e.to_string()))?;
    let mut attributes = ctx
        .groups
        .find(&config.group_name)
        .map(|g| g.attributes.clone())
        .unwrap_or_default();
    for (k, v) in std::mem::take(&mut config.attributes) {
        if let Some(k) = k.strip_prefix('+') {
            attributes.insert(k.to_string(), v);
        } else if let Some(k) = k.strip_prefix('-') {
            attributes.remove(k);
        } else {
            attributes.insert(k, v);
        }
    }
    config.attributes = attributes;
    Ok(config)
}

pub fn get_all_subscription_group_config(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let wrapper = ctx.groups.wrapper();
    let total = wrapper.subscription_group_table.len();
    let mut r = ok(request).with_body(wrapper.encode());
    r.ext_mut().insert("totalGroupNum", total.to_string());
    Ok(r)
}

pub fn get_subscription_group_config(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let group = request.ext("group").unwrap_or_default().to_string();
    // Java's findSubscriptionGroupConfig: an unknown group is auto-created here too (when
    // autoCreateSubscriptionGroup is on). rocketmq-proxy asks for a gRPC consumer's group before
    // its first POP and, without one, sends the client settings with no subscription part (no FIFO
    // flag, batch size, long-polling timeout or retry policy).
    match ctx.groups.find_or_create(&group) {
        Ok(c) => Ok(ok(request).with_body(c.encode())),
        Err(_) => Err(BrokerError::refused(
            ResponseCode::SUBSCRIPTION_GROUP_NOT_EXIST,
            format!("No group in this broker. group: {group}"),
        )),
    }
}

pub fn delete_subscription_group(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: DeleteSubscriptionGroupRequestHeader = read_header(request)?;
    ctx.groups.delete(&h.group_name)?;
    ctx.stats.group_deleted(&h.group_name);
    ctx.metrics.group_deleted(&h.group_name);
    if h.clean_offset {
        ctx.offsets.remove_group(&h.group_name);
    }
    Ok(ok(request))
}

pub fn get_consume_stats(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: GetConsumeStatsRequestHeader = read_header(request)?;
    let group = &h.consumer_group;
    let topics: Vec<String> = match (&h.topic, &h.topic_list) {
        (Some(t), _) if !t.is_empty() => vec![t.clone()],
        (_, Some(list)) if !list.is_empty() => list
            .split(';')
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect(),
        _ => ctx.offsets.topics_of_group(group),
    };
    let live = ctx.clients.consumer_group(group);
    let mut stats = ConsumeStats::default();
    for topic in topics {
        let Some(tc) = ctx.topics.select(&topic) else {
            continue;
        };
        // Java: skipped when the group has members with subscriptions and findSubscriptionData
        // (members, then the compensation table of pulls and pops) knows nothing of the topic
        if live.as_ref().is_some_and(|g| !g.subscriptions.is_empty())
            && !ctx.clients.finds_subscription(group, &topic)
        {
            continue;
        }
        for qid in 0..tc.read_queue_nums {
            let broker_offset = ctx.store.max_offset_in_queue(&topic, qid).max(0);
            let consumer_offset = ctx.offsets.query(group, &topic, qid).unwrap_or(0).max(0);
            let last_timestamp = if consumer_offset > 0 {
                ctx.store
                    .message_store_timestamp(&topic, qid, consumer_offset - 1)
            } else {
                0
            };
            let mq = MessageQueue::new(&topic, &ctx.config.broker_name, qid);
            let w = OffsetWrapper {
                broker_offset,
                consumer_offset,
                last_timestamp,
                pull_offset: consumer_offset,
            };
            stats.offset_table.insert(mq, w);
        }
        // Java adds BrokerStatsManager.tpsGroupGetNums(group, topic): GROUP_GET_NUMS "topic@group"
        // over the last minute, 0 when nothing was pulled (rocketmq-dashboard's group TPS column)
        stats.consume_tps += ctx
            .stats
            .item(GROUP_GET_NUMS, &format!("{topic}@{group}"))
            .map_or(0.0, |i| i.snapshot(Period::Minute).tps);
    }
    Ok(ok(request).with_body(stats.encode()))
}

fn connection_body(c: &ClientChannel) -> ConnectionBody {
    ConnectionBody {
        client_addr: c.conn.peer.to_string(),
        client_id: c.client_id.clone(),
        language: c.language.name().to_string(),
        version: c.version,
    }
}

pub fn get_consumer_connection_list(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: GetConsumerConnectionListRequestHeader = read_header(request)?;
    let Some(g) = ctx.clients.consumer_group(&h.consumer_group) else {
        return Err(BrokerError::refused(
            ResponseCode::CONSUMER_NOT_ONLINE,
            format!("the consumer group[{}] not online", h.consumer_group),
        ));
    };
    let body = ConsumerConnection {
        connection_set: g.channels.values().map(connection_body).collect(),
        consume_from_where: g.consume_from_where,
        consume_type: g.consume_type,
        message_model: g.message_model,
        subscription_table: g
            .subscriptions
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    };
    Ok(ok(request).with_body(body.encode()))
}

pub fn get_producer_connection_list(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: GetProducerConnectionListRequestHeader = read_header(request)?;
    let channels = ctx.clients.producer_channels(&h.producer_group);
    if channels.is_empty() {
        return Err(BrokerError::refused(
            ResponseCode::SYSTEM_ERROR,
            format!("the producer group[{}] not exist", h.producer_group),
        ));
    }
    let body = ProducerConnection {
        connection_set: channels.iter().map(connection_body).collect(),
    };
    Ok(ok(request).with_body(body.encode()))
}

/// Server-side reset (5.x default): compute each queue's target, remember it for the next pull
/// (which answers PULL_OFFSET_MOVED), and return the table.
pub fn invoke_broker_to_reset_offset(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: ResetOffsetRequestHeader = read_header(request)?;
    let Some(tc) = ctx.topics.select(&h.topic) else {
        return Err(BrokerError::refused(
            ResponseCode::TOPIC_NOT_EXIST,
            format!(
                "[reset-offset] reset offset failed, no topic in this broker. topic={}",
                h.topic
            ),
        ));
    };
    if ctx.groups.find(&h.group).is_none() {
        return Err(BrokerError::refused(
            ResponseCode::SUBSCRIPTION_GROUP_NOT_EXIST,
            format!(
                "[reset-offset] reset offset failed, no group in this broker. group={}",
                h.group
            ),
        ));
    }
    let queues: Vec<i32> = if h.queue_id >= 0 {
        vec![h.queue_id]
    } else {
        (0..tc.read_queue_nums).collect()
    };
    let mut targets = HashMap::new();
    let mut body = ResetOffsetBody::default();
    for qid in queues {
        let target = match h.offset.filter(|_| h.queue_id >= 0) {
            Some(o) => o,
            None if h.timestamp < 0 => ctx.store.max_offset_in_queue(&h.topic, qid),
            None => {
                ctx.store
                    .offset_in_queue_by_time(&h.topic, qid, h.timestamp, BoundaryType::Lower)
            }
        };
        targets.insert(qid, target);
        body.offset_table.insert(
            MessageQueue::new(&h.topic, &ctx.config.broker_name, qid),
            target,
        );
    }
    ctx.offsets.request_reset(&h.group, &h.topic, &targets);
    ctx.pull_hold.release_all();
    Ok(ok(request).with_body(body.encode()))
}

pub async fn get_consumer_running_info(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: GetConsumerRunningInfoRequestHeader = read_header(request)?;
    relay(ctx, request, &h.consumer_group, &h.client_id, None).await
}

pub async fn consume_message_directly(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: ConsumeMessageDirectlyResultRequestHeader = read_header(request)?;
    let record = h
        .msg_id
        .as_deref()
        .and_then(|id| decode_msg_id(id).ok())
        .and_then(|id| ctx.store.lookup_message_by_offset(id.commit_log_offset));
    let Some(record) = record else {
        return Err(BrokerError::refused(
            ResponseCode::SYSTEM_ERROR,
            format!("can not find message by msgId {:?}", h.msg_id),
        ));
    };
    relay(
        ctx,
        request,
        &h.consumer_group,
        h.client_id.as_deref().unwrap_or(""),
        Some(record),
    )
    .await
}

/// Forwards an admin request to one consumer and returns its answer to the admin.
async fn relay(
    ctx: &BrokerContext,
    request: &RemotingCommand,
    group: &str,
    client_id: &str,
    body: Option<bytes::Bytes>,
) -> ProcessorResult {
    let Some(channel) = ctx.clients.find_consumer_channel(group, client_id) else {
        return Err(BrokerError::refused(
            ResponseCode::SYSTEM_ERROR,
            format!("The Consumer <{client_id}> <{group}> not online"),
        ));
    };
    let mut forward = RemotingCommand::request(request.code);
    forward.ext_fields = request.ext_fields.clone();
    if request.code == crate::remoting::RequestCode::CONSUME_MESSAGE_DIRECTLY.code() {
        forward
            .ext_mut()
            .insert("brokerName", ctx.config.broker_name.clone());
    }
    forward.body = body.map(Into::into).unwrap_or_else(|| request.body.clone());
    match channel.conn.invoke(forward, RELAY_TIMEOUT).await {
        Ok(mut answer) => {
            answer.opaque = request.opaque;
            answer.flag = crate::remoting::command::FLAG_RESPONSE;
            Ok(answer)
        }
        Err(e) => Err(BrokerError::refused(
            ResponseCode::CONSUME_MSG_TIMEOUT,
            format!("consumer <{client_id}> <{group}> gave no answer: {e}"),
        )),
    }
}
