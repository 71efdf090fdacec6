//! Topic administration as mqadmin and the admin APIs use it: UPDATE_AND_CREATE_TOPIC (17),
//! UPDATE_AND_CREATE_TOPIC_LIST (18), DELETE_TOPIC_IN_BROKER (215), GET_ALL_TOPIC_CONFIG (21), GET_TOPIC_CONFIG (351),
//! GET_TOPIC_STATS_INFO (202), GET_SYSTEM_TOPIC_LIST_FROM_BROKER (305),
//! QUERY_TOPIC_CONSUME_BY_WHO (300).

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{ok, read_header, success_with, ProcessorResult};
use crate::broker::error::BrokerError;
use crate::broker::BrokerContext;
use crate::common::topic::{self, MessageQueue, TopicConfig};
use crate::remoting::body::group_list::GroupList;
use crate::remoting::body::topic_config_and_queue_mapping::TopicConfigAndQueueMapping;
use crate::remoting::body::topic_config_list::CreateTopicListRequestBody;
use crate::remoting::body::topic_config_wrapper::TopicConfigAndMappingSerializeWrapper;
use crate::remoting::body::topic_list::TopicList;
use crate::remoting::body::topic_stats_table::{TopicOffset, TopicStatsTable};
use crate::remoting::header::create_topic::CreateTopicRequestHeader;
use crate::remoting::header::delete_topic::DeleteTopicRequestHeader;
use crate::remoting::header::get_all_topic_config::GetAllTopicConfigResponseHeader;
use crate::remoting::header::get_topic_config::GetTopicConfigRequestHeader;
use crate::remoting::header::get_topic_stats_info::GetTopicStatsInfoRequestHeader;
use crate::remoting::header::query_topic_consume_by_who::QueryTopicConsumeByWhoRequestHeader;
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::server::Connection;

pub fn update_and_create_topic(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: CreateTopicRequestHeader = read_header(request)?;
    check_topic(ctx, &h.topic, &h.topic_filter_type)?;
    let mut tc = TopicConfig::new(&h.topic, h.read_queue_nums, h.write_queue_nums, h.perm);
    tc.topic_filter_type = h.topic_filter_type.clone();
    tc.topic_sys_flag = h.topic_sys_flag.unwrap_or(0);
    tc.order = h.order;
    if let Some(existing) = ctx.topics.select(&h.topic) {
        tc.attributes = existing.attributes.clone();
    }
    apply_attributes(&mut tc, h.attributes.as_deref().unwrap_or(""))?;
    ctx.topics.update(tc)?;
    ctx.register_to_namesrv_soon();
    Ok(ok(request))
}

/// UPDATE_AND_CREATE_TOPIC_LIST (18, `mqadmin updateTopicList`): every topic of the body is
/// checked as 17 checks one before any is written; then all are written with one persist and one
/// registration (Java 5.3.3 `updateAndCreateTopicList`). A topic whose config is unchanged is
/// left as it is; Java answers SUCCESS at the first such topic without writing the others.
pub fn update_and_create_topic_list(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let body = CreateTopicListRequestBody::decode(&request.body.to_bytes()).map_err(|e| {
        BrokerError::refused(
            ResponseCode::INVALID_PARAMETER,
            format!("the body is not a CreateTopicListRequestBody: {e}"),
        )
    })?;
    let mut changed = Vec::with_capacity(body.topic_config_list.len());
    for asked in body.topic_config_list {
        check_topic(ctx, &asked.topic_name, &asked.topic_filter_type)?;
        let existing = ctx.topics.select(&asked.topic_name);
        if existing.as_deref() == Some(&asked) {
            continue;
        }
        let mut tc = TopicConfig {
            attributes: existing.map(|e| e.attributes.clone()).unwrap_or_default(),
            ..asked.clone()
        };
        for (key, value) in &asked.attributes {
            apply_attribute(&mut tc, key, value)?;
        }
        changed.push(tc);
    }
    if !changed.is_empty() {
        ctx.topics.update_all(changed)?;
        ctx.register_to_namesrv_soon();
    }
    Ok(ok(request))
}

/// What 17 and 18 refuse: an illegal name, a system topic, a filter type Java has no constant for.
fn check_topic(ctx: &BrokerContext, name: &str, filter_type: &str) -> Result<(), BrokerError> {
    if let Err(e) = topic::validate_topic(name) {
        return Err(BrokerError::refused(
            ResponseCode::INVALID_PARAMETER,
            e.to_string(),
        ));
    }
    if ctx.is_system_topic(name) {
        return Err(BrokerError::refused(
            ResponseCode::INVALID_PARAMETER,
            format!("The topic[{name}] is conflict with system topic."),
        ));
    }
    if !matches!(filter_type, "SINGLE_TAG" | "MULTI_TAG") {
        let remark =
            format!("No enum constant org.apache.rocketmq.common.TopicFilterType.{filter_type}");
        return Err(BrokerError::system(remark));
    }
    Ok(())
}

/// Applies `+key=value,-key` attribute edits as Java's `AttributeParser` reads them.
fn apply_attributes(tc: &mut TopicConfig, spec: &str) -> Result<(), BrokerError> {
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if let Some(kv) = part.strip_prefix('+') {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| bad_attribute(part, "expected +key=value"))?;
            tc.attributes.insert(k.to_string(), v.to_string());
        } else if let Some(k) = part.strip_prefix('-') {
            tc.attributes.remove(k);
        } else {
            return Err(bad_attribute(part, "must start with + or -"));
        }
    }
    Ok(())
}

/// One edit: `+key` sets `key` to `value`, `-key` removes it (Java `AttributeUtil`).
fn apply_attribute(tc: &mut TopicConfig, key: &str, value: &str) -> Result<(), BrokerError> {
    if let Some(k) = key.strip_prefix('+') {
        tc.attributes.insert(k.to_string(), value.to_string());
    } else if let Some(k) = key.strip_prefix('-') {
        tc.attributes.remove(k);
    } else {
        return Err(bad_attribute(key, "must start with + or -"));
    }
    Ok(())
}

fn bad_attribute(part: &str, what: &str) -> BrokerError {
    BrokerError::refused(
        ResponseCode::INVALID_PARAMETER,
        format!("bad attribute {part:?}: {what}"),
    )
}

pub fn delete_topic_in_broker(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: DeleteTopicRequestHeader = read_header(request)?;
    if h.topic.trim().is_empty() {
        return Err(BrokerError::refused(
            ResponseCode::INVALID_PARAMETER,
            "The specified topic is blank.",
        ));
    }
    if ctx.is_system_topic(&h.topic) {
        return Err(BrokerError::refused(
            ResponseCode::INVALID_PARAMETER,
            format!("The topic[{}] is conflict with system topic.", h.topic),
        ));
    }
    // a LITE parent takes its lite queues with it (Java cleanByParentTopic)
    if ctx
        .topics
        .select(&h.topic)
        .is_some_and(|tc| super::lite::is_lite_topic(&tc))
    {
        let n = crate::broker::lite::lifecycle::delete_parent(ctx, &h.topic);
        tracing::info!(topic = %h.topic, lite_queues = n, "LITE parent deleted with its lite queues");
    }
    ctx.topics.delete(&h.topic)?;
    ctx.stats.topic_deleted(&h.topic);
    ctx.metrics.topic_deleted(&h.topic);
    ctx.offsets.remove_topic(&h.topic);
    if let Err(e) = ctx.store.delete_topics(&[h.topic.as_str()]) {
        return Err(BrokerError::system(format!(
            "topic config deleted, but its queues could not be: {e}"
        )));
    }
    ctx.register_to_namesrv_soon();
    Ok(ok(request))
}

pub fn get_all_topic_config(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let topics = ctx.topics.all();
    let wrapper = TopicConfigAndMappingSerializeWrapper {
        data_version: ctx.topics.data_version(),
        topic_config_table: topics
            .iter()
            .map(|t| (t.topic_name.clone(), (**t).clone()))
            .collect(),
        ..Default::default()
    };
    let header = GetAllTopicConfigResponseHeader {
        total_topic_num: Some(topics.len() as i32),
    };
    Ok(success_with(request, header).with_body(wrapper.encode()))
}

pub fn get_topic_config(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: GetTopicConfigRequestHeader = read_header(request)?;
    match ctx.topics.select(&h.topic) {
        Some(tc) => {
            let body = TopicConfigAndQueueMapping {
                topic_config: (*tc).clone(),
                mapping_detail: None,
            };
            Ok(ok(request).with_body(body.encode()))
        }
        None => Err(BrokerError::refused(
            ResponseCode::TOPIC_NOT_EXIST,
            format!("No topic in this broker. topic: {}", h.topic),
        )),
    }
}

pub fn get_topic_stats_info(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: GetTopicStatsInfoRequestHeader = read_header(request)?;
    let Some(tc) = ctx.topics.select(&h.topic) else {
        return Err(BrokerError::refused(
            ResponseCode::TOPIC_NOT_EXIST,
            format!("topic[{}] not exist", h.topic),
        ));
    };
    let mut table = TopicStatsTable::default();
    for qid in 0..tc.write_queue_nums.max(tc.read_queue_nums) {
        let min_offset = ctx.store.min_offset_in_queue(&h.topic, qid).max(0);
        let max_offset = ctx.store.max_offset_in_queue(&h.topic, qid).max(0);
        let last_update_timestamp = if max_offset > 0 {
            ctx.store
                .message_store_timestamp(&h.topic, qid, max_offset - 1)
        } else {
            0
        };
        let mq = MessageQueue::new(&h.topic, &ctx.config.broker_name, qid);
        table.offset_table.insert(
            mq,
            TopicOffset {
                last_update_timestamp,
                max_offset,
                min_offset,
            },
        );
    }
    Ok(ok(request).with_body(table.encode()))
}

pub fn get_system_topic_list_from_broker(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let topics: BTreeSet<String> = ctx
        .topics
        .names()
        .into_iter()
        .filter(|t| ctx.is_system_topic(t))
        .collect();
    let body = TopicList {
        broker_addr: None,
        topic_list: topics.into_iter().collect(),
    };
    Ok(ok(request).with_body(body.encode()))
}

pub fn query_topic_consume_by_who(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: QueryTopicConsumeByWhoRequestHeader = read_header(request)?;
    let mut groups: BTreeSet<String> = ctx.clients.groups_of_topic(&h.topic).into_iter().collect();
    groups.extend(ctx.offsets.groups_of_topic(&h.topic));
    let body = GroupList {
        group_list: groups.into_iter().collect(),
    };
    Ok(ok(request).with_body(body.encode()))
}
