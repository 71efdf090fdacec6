//! Broker-facing requests: REGISTER_BROKER, UNREGISTER_BROKER, BROKER_HEARTBEAT,
//! QUERY_DATA_VERSION, GET_BROKER_MEMBER_GROUP.

use super::{header, success, with_header, ProcessorResult, RequestContext};
use crate::namesrv::error::NamesrvError;
use crate::namesrv::kv_config::NAMESPACE_ORDER_TOPIC_CONFIG;
use crate::namesrv::route_info::{BrokerIdentity, BrokerRegistration};
use crate::namesrv::NameServer;
use crate::remoting::body::data_version::DataVersion;
use crate::remoting::body::register_broker::{body_crc32, RegisterBrokerBody, VERSION_V3_0_11};
use crate::remoting::command::RemotingCommand;
use crate::remoting::header::namesrv::{
    BrokerHeartbeatRequestHeader, GetBrokerMemberGroupRequestHeader, QueryDataVersionRequestHeader,
    QueryDataVersionResponseHeader, RegisterBrokerRequestHeader, RegisterBrokerResponseHeader,
    UnRegisterBrokerRequestHeader,
};

/// `MixAll.ZONE_NAME`: a plain ext key some brokers add.
const ZONE_NAME_KEY: &str = "__ZONE_NAME";

pub(super) fn register_broker(
    ns: &NameServer,
    ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    let h: RegisterBrokerRequestHeader = header(req)?;
    let body = req.body.to_bytes();
    if h.body_crc32 != 0 && body_crc32(&body) != h.body_crc32 {
        tracing::warn!(peer = %ctx.peer, "register broker: crc32 not match");
        return Err(NamesrvError::system("crc32 not match"));
    }
    let decoded = RegisterBrokerBody::decode(&body, h.compressed, req.version)?;
    let filter_server_list = (req.version >= VERSION_V3_0_11).then_some(decoded.filter_server_list);
    let reg = BrokerRegistration {
        cluster_name: h.cluster_name,
        broker_addr: h.broker_addr,
        broker_name: h.broker_name,
        broker_id: h.broker_id,
        ha_server_addr: h.ha_server_addr,
        zone_name: req.ext(ZONE_NAME_KEY).map(str::to_string),
        heartbeat_timeout_millis: h.heartbeat_timeout_millis,
        enable_acting_master: h.enable_acting_master,
        topic_config_wrapper: decoded.topic_config_serialize_wrapper,
        filter_server_list,
        conn_id: ctx.conn_id,
        peer: Some(ctx.peer),
    };
    let Some(result) = ns.route.register_broker(reg) else {
        return Err(NamesrvError::system("register broker failed"));
    };
    let resp_header = RegisterBrokerResponseHeader {
        ha_server_addr: result.ha_server_addr,
        master_addr: result.master_addr,
    };
    let mut resp = with_header(success(req), &resp_header);
    if ns.config().return_order_topic_config_to_broker {
        if let Some(table) = ns.kv.kv_list(NAMESPACE_ORDER_TOPIC_CONFIG) {
            resp = resp.with_body(table.encode());
        }
    }
    Ok(resp)
}

pub(super) fn unregister_broker(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    let h: UnRegisterBrokerRequestHeader = header(req)?;
    ns.route.unregister_broker(&BrokerIdentity {
        cluster_name: h.cluster_name,
        broker_addr: h.broker_addr,
        broker_name: h.broker_name,
        broker_id: h.broker_id,
    });
    Ok(success(req))
}

pub(super) fn broker_heartbeat(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    let h: BrokerHeartbeatRequestHeader = header(req)?;
    ns.route
        .update_broker_info_update_timestamp(&h.cluster_name, &h.broker_addr);
    Ok(success(req))
}

/// Answers `changed` (the broker's DataVersion differs from the one registered) and refreshes
/// the broker's liveness; the body is the NameServer's stored DataVersion, if any.
pub(super) fn query_data_version(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    let h: QueryDataVersionRequestHeader = header(req)?;
    let theirs = DataVersion::decode(&req.body.to_bytes()).ok();
    let changed = match theirs {
        Some(v) => ns
            .route
            .is_broker_topic_config_changed(&h.cluster_name, &h.broker_addr, &v),
        None => true,
    };
    ns.route
        .update_broker_info_update_timestamp(&h.cluster_name, &h.broker_addr);
    let mut resp = with_header(success(req), &QueryDataVersionResponseHeader { changed });
    if let Some(ours) = ns
        .route
        .query_broker_topic_config(&h.cluster_name, &h.broker_addr)
    {
        resp = resp.with_body(ours.encode());
    }
    Ok(resp)
}

pub(super) fn get_broker_member_group(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    let h: GetBrokerMemberGroupRequestHeader = header(req)?;
    let group = ns
        .route
        .broker_member_group(&h.cluster_name, &h.broker_name);
    // Java sets only the code here, so the remark of `createResponseCommand` stays.
    let resp = success(req).with_remark("not set any response code");
    Ok(resp.with_body(group.encode_response_body()))
}
