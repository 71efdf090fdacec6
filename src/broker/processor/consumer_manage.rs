//! Offsets and group membership: QUERY_CONSUMER_OFFSET (14, with Java's first-query rule),
//! UPDATE_CONSUMER_OFFSET (15), GET_CONSUMER_LIST_BY_GROUP (38), SEARCH_OFFSET_BY_TIMESTAMP (29),
//! GET_MAX_OFFSET (30), GET_MIN_OFFSET (31), GET_EARLIEST_MSG_STORETIME (32).

use super::{read_header as header, success_with};
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
use crate::store::get::BoundaryType;

pub fn query_consumer_offset(ctx: &BrokerContext, request: &RemotingCommand) -> RemotingCommand {
    let h: QueryConsumerOffsetRequestHeader = match header(request) {
        Ok(h) => h,
        Err(r) => return r,
    };
    if let Some(offset) = ctx.offsets.query(&h.consumer_group, &h.topic, h.queue_id) {
        return success_with(request, QueryConsumerOffsetResponseHeader { offset });
    }
    let min = ctx.store.min_offset_in_queue(&h.topic, h.queue_id);
    let not_found = |remark: &str| {
        RemotingCommand::response_to(
            request,
            ResponseCode::QUERY_NOT_FOUND.code(),
            Some(remark.to_string()),
        )
    };
    if h.set_zero_if_not_found == Some(false) {
        not_found("Not found, do not set to zero, maybe this group boot first")
    } else if min <= 0
        && ctx
            .store
            .check_in_mem_by_consume_offset(&h.topic, h.queue_id, 0, 1)
    {
        success_with(request, QueryConsumerOffsetResponseHeader { offset: 0 })
    } else {
        not_found("Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first")
    }
}

pub fn update_consumer_offset(ctx: &BrokerContext, request: &RemotingCommand) -> RemotingCommand {
    let h: UpdateConsumerOffsetRequestHeader = match header(request) {
        Ok(h) => h,
        Err(r) => return r,
    };
    if ctx.topics.select(&h.topic).is_none() {
        let remark = format!("Topic {} not exist!", h.topic);
        return BrokerError::refused(ResponseCode::TOPIC_NOT_EXIST, remark).into_response(request);
    }
    ctx.offsets
        .commit(&h.consumer_group, &h.topic, h.queue_id, h.commit_offset);
    RemotingCommand::response_to(request, ResponseCode::SUCCESS.code(), None)
}

pub fn get_consumer_list_by_group(
    ctx: &BrokerContext,
    request: &RemotingCommand,
) -> RemotingCommand {
    let h: GetConsumerListByGroupRequestHeader = match header(request) {
        Ok(h) => h,
        Err(r) => return r,
    };
    let ids = ctx.clients.consumer_ids(&h.consumer_group);
    if ids.is_empty() {
        let remark = format!("no consumer for this group, {}", h.consumer_group);
        return RemotingCommand::response_to(
            request,
            ResponseCode::SYSTEM_ERROR.code(),
            Some(remark),
        );
    }
    let body = fastjson::to_vec(&serde_json::json!({ "consumerIdList": ids })).unwrap_or_default();
    RemotingCommand::response_to(request, ResponseCode::SUCCESS.code(), None).with_body(body)
}

pub fn search_offset_by_timestamp(
    ctx: &BrokerContext,
    request: &RemotingCommand,
) -> RemotingCommand {
    let h: SearchOffsetRequestHeader = match header(request) {
        Ok(h) => h,
        Err(r) => return r,
    };
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
    success_with(request, SearchOffsetResponseHeader { offset })
}

pub fn get_max_offset(ctx: &BrokerContext, request: &RemotingCommand) -> RemotingCommand {
    let h: GetMaxOffsetRequestHeader = match header(request) {
        Ok(h) => h,
        Err(r) => return r,
    };
    let offset = ctx.store.max_offset_in_queue(&h.topic, h.queue_id);
    success_with(request, GetMaxOffsetResponseHeader { offset })
}

pub fn get_min_offset(ctx: &BrokerContext, request: &RemotingCommand) -> RemotingCommand {
    let h: GetMinOffsetRequestHeader = match header(request) {
        Ok(h) => h,
        Err(r) => return r,
    };
    let offset = ctx.store.min_offset_in_queue(&h.topic, h.queue_id);
    success_with(request, GetMinOffsetResponseHeader { offset })
}

pub fn get_earliest_msg_storetime(
    ctx: &BrokerContext,
    request: &RemotingCommand,
) -> RemotingCommand {
    let h: GetEarliestMsgStoretimeRequestHeader = match header(request) {
        Ok(h) => h,
        Err(r) => return r,
    };
    let timestamp = ctx.store.earliest_message_time(&h.topic, h.queue_id);
    success_with(request, GetEarliestMsgStoretimeResponseHeader { timestamp })
}
