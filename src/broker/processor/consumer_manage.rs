//! Offsets and group membership: QUERY_CONSUMER_OFFSET (14, with Java's first-query rule),
//! UPDATE_CONSUMER_OFFSET (15), GET_CONSUMER_LIST_BY_GROUP (38), SEARCH_OFFSET_BY_TIMESTAMP (29),
//! GET_MAX_OFFSET (30), GET_MIN_OFFSET (31), GET_EARLIEST_MSG_STORETIME (32).

use std::sync::Arc;

use super::{ok, read_header as header, reply, success_with, ProcessorResult};
use crate::broker::error::BrokerError;
use crate::broker::BrokerContext;
use crate::remoting::body::fastjson;
use crate::remoting::header::get_consumer_list_by_group::GetConsumerListByGroupRequestHeader;
use crate::remoting::header::get_earliest_msg_storetime::{
    GetEarliestMsgStoretimeRequestHeader, GetEarliestMsgStoretimeResponseHeader,
};
use crate::remoting::header::get_max_offset::{
    GetMaxOffsetRequestHeader, GetMaxOffsetResponseHeader,
};
use crate::remoting::header::get_min_offset::{
    GetMinOffsetRequestHeader, GetMinOffsetResponseHeader,
};
use crate::remoting::header::query_consumer_offset::{
    QueryConsumerOffsetRequestHeader, QueryConsumerOffsetResponseHeader,
};
use crate::remoting::header::search_offset::{
    SearchOffsetRequestHeader, SearchOffsetResponseHeader,
};
use crate::remoting::header::update_consumer_offset::UpdateConsumerOffsetRequestHeader;
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::server::Connection;
use crate::store::get::BoundaryType;

pub fn query_consumer_offset(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: QueryConsumerOffsetRequestHeader = header(request)?;
    if let Some(offset) = ctx.offsets.query(&h.consumer_group, &h.topic, h.queue_id) {
        return Ok(success_with(
            request,
            QueryConsumerOffsetResponseHeader { offset },
        ));
    }
    let min = ctx.store.min_offset_in_queue(&h.topic, h.queue_id);
    let not_found = |remark: &str| reply(request, ResponseCode::QUERY_NOT_FOUND, remark);
    Ok(if h.set_zero_if_not_found == Some(false) {
        not_found("Not found, do not set to zero, maybe this group boot first")
    } else if min <= 0
        && ctx
            .store
            .check_in_mem_by_consume_offset(&h.topic, h.queue_id, 0, 1)
    {
        success_with(request, QueryConsumerOffsetResponseHeader { offset: 0 })
    } else {
        not_found("Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first")
    })
}

pub fn update_consumer_offset(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: UpdateConsumerOffsetRequestHeader = header(request)?;
    if ctx.topics.select(&h.topic).is_none() {
        let remark = format!("Topic {} not exist!", h.topic);
        return Err(BrokerError::refused(ResponseCode::TOPIC_NOT_EXIST, remark));
    }
    // Java: while a server-side reset waits for the consumer's next pull, the consumer's own
    // (older) offset must not overwrite it
    if ctx.config.use_server_side_reset_offset
        && ctx
            .offsets
            .has_reset(&h.consumer_group, &h.topic, h.queue_id)
    {
        let mut response = ok(request);
        response.remark = Some("Offset has been previously reset".into());
        return Ok(response);
    }
    ctx.offsets
        .commit(&h.consumer_group, &h.topic, h.queue_id, h.commit_offset);
    Ok(ok(request))
}

pub fn get_consumer_list_by_group(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: GetConsumerListByGroupRequestHeader = header(request)?;
    let ids = ctx.clients.consumer_ids(&h.consumer_group);
    if ids.is_empty() {
        let remark = format!("no consumer for this group, {}", h.consumer_group);
        return Err(BrokerError::system(remark));
    }
    let body = fastjson::to_vec(&serde_json::json!({ "consumerIdList": ids })).unwrap_or_default();
    Ok(ok(request).with_body(body))
}

pub fn search_offset_by_timestamp(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: SearchOffsetRequestHeader = header(request)?;
    let boundary = match h
        .boundary_type
        .map(|b| format!("{b:?}").to_ascii_uppercase())
    {
        Some(b) if b == "UPPER" => BoundaryType::Upper,
        _ => BoundaryType::Lower,
    };
    let offset = ctx
        .store
        .offset_in_queue_by_time(&h.topic, h.queue_id, h.timestamp, boundary);
    Ok(success_with(request, SearchOffsetResponseHeader { offset }))
}

pub fn get_max_offset(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: GetMaxOffsetRequestHeader = header(request)?;
    let offset = ctx.store.max_offset_in_queue(&h.topic, h.queue_id);
    Ok(success_with(request, GetMaxOffsetResponseHeader { offset }))
}

pub fn get_min_offset(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: GetMinOffsetRequestHeader = header(request)?;
    let offset = ctx.store.min_offset_in_queue(&h.topic, h.queue_id);
    Ok(success_with(request, GetMinOffsetResponseHeader { offset }))
}

pub fn get_earliest_msg_storetime(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: GetEarliestMsgStoretimeRequestHeader = header(request)?;
    let timestamp = ctx.store.earliest_message_time(&h.topic, h.queue_id);
    Ok(success_with(
        request,
        GetEarliestMsgStoretimeResponseHeader { timestamp },
    ))
}
