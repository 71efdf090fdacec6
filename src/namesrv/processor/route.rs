//! Route queries and route administration: GET_ROUTEINFO_BY_TOPIC, GET_BROKER_CLUSTER_INFO, the
//! topic lists, DELETE/REGISTER_TOPIC_IN_NAMESRV, WIPE/ADD_WRITE_PERM_OF_BROKER.

use super::{header, success, with_header, ProcessorResult, RequestContext};
use crate::namesrv::error::NamesrvError;
use crate::namesrv::kv_config::NAMESPACE_ORDER_TOPIC_CONFIG;
use crate::namesrv::NameServer;
use crate::remoting::body::topic_list::TopicList;
use crate::remoting::body::topic_route::TopicRouteData;
use crate::remoting::command::RemotingCommand;
use crate::remoting::header::namesrv::{
    AddWritePermOfBrokerRequestHeader, AddWritePermOfBrokerResponseHeader,
    DeleteTopicFromNamesrvRequestHeader, GetRouteInfoRequestHeader,
    GetTopicsByClusterRequestHeader, RegisterTopicRequestHeader,
    WipeWritePermOfBrokerRequestHeader, WipeWritePermOfBrokerResponseHeader,
};
use crate::remoting::response_code::ResponseCode;

/// `FAQUrl.suggestTodo(APPLY_TOPIC_URL)`.
const APPLY_TOPIC_TIP: &str =
    "\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.";

/// The route in the JSON dialect the client's version reads (standard from V4_9_4 = 401).
pub(super) fn get_route_info_by_topic(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    let h: GetRouteInfoRequestHeader = header(req)?;
    let config = ns.config();
    if config.need_wait_for_service
        && ns.started.elapsed().as_secs() < config.wait_seconds_for_service.max(0) as u64
    {
        return Err(NamesrvError::system("name server not ready"));
    }
    let Some(mut route) = ns.route.pickup_topic_route_data(&h.topic) else {
        let remark = format!(
            "No topic route info in name server for the topic: {}{APPLY_TOPIC_TIP}",
            h.topic
        );
        return Err(NamesrvError::refused(ResponseCode::TOPIC_NOT_EXIST, remark));
    };
    if config.order_message_enable {
        route.order_topic_conf = ns.kv.get(NAMESPACE_ORDER_TOPIC_CONFIG, &h.topic);
    }
    let body = route.encode_for_version(req.version, h.accept_standard_json_only.unwrap_or(false));
    Ok(success(req).with_body(body))
}

/// ClusterInfo, always in fastjson's bare-key form as the Java NameServer sends it.
pub(super) fn get_broker_cluster_info(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    Ok(success(req).with_body(ns.route.cluster_info().encode()))
}

pub(super) fn get_all_topic_list(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    if !ns.config().enable_all_topic_list {
        return Err(NamesrvError::system("disable"));
    }
    Ok(topic_list_response(req, ns.route.all_topic_list()))
}

pub(super) fn get_topics_by_cluster(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    if !ns.config().enable_topic_list {
        return Err(NamesrvError::system("disable"));
    }
    let h: GetTopicsByClusterRequestHeader = header(req)?;
    Ok(topic_list_response(
        req,
        ns.route.topics_by_cluster(&h.value),
    ))
}

pub(super) fn get_system_topic_list(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    Ok(topic_list_response(req, ns.route.system_topic_list()))
}

pub(super) fn get_unit_topic_list(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    unit_list(ns, req, ns.route.unit_topics())
}

pub(super) fn get_has_unit_sub_topic_list(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    unit_list(ns, req, ns.route.has_unit_sub_topics())
}

pub(super) fn get_has_unit_sub_un_unit_topic_list(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    unit_list(ns, req, ns.route.has_unit_sub_un_unit_topics())
}

fn unit_list(ns: &NameServer, req: &RemotingCommand, list: TopicList) -> ProcessorResult {
    if !ns.config().enable_topic_list {
        return Err(NamesrvError::system("disable"));
    }
    Ok(topic_list_response(req, list))
}

fn topic_list_response(req: &RemotingCommand, list: TopicList) -> RemotingCommand {
    success(req).with_body(list.encode())
}

pub(super) fn delete_topic_in_namesrv(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    let h: DeleteTopicFromNamesrvRequestHeader = header(req)?;
    match h.cluster_name.as_deref().filter(|c| !c.is_empty()) {
        Some(cluster) => ns.route.delete_topic_in_cluster(&h.topic, cluster),
        None => ns.route.delete_topic(&h.topic),
    }
    Ok(success(req))
}

/// Adds the body's `queueDatas` to the topic's route (brokers must be registered).
pub(super) fn register_topic_in_namesrv(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    let h: RegisterTopicRequestHeader = header(req)?;
    let body = req.body.to_bytes();
    if !body.is_empty() {
        let route = TopicRouteData::decode(&body)?;
        ns.route.register_topic(&h.value, &route.queue_datas);
    }
    Ok(success(req))
}

pub(super) fn wipe_write_perm_of_broker(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    let h: WipeWritePermOfBrokerRequestHeader = header(req)?;
    let count = ns.route.wipe_write_perm_of_broker(&h.value);
    tracing::info!(broker = %h.value, count, "wipe write perm of broker");
    Ok(with_header(
        success(req),
        &WipeWritePermOfBrokerResponseHeader {
            wipe_topic_count: count,
        },
    ))
}

pub(super) fn add_write_perm_of_broker(
    ns: &NameServer,
    _ctx: &RequestContext,
    req: &RemotingCommand,
) -> ProcessorResult {
    let h: AddWritePermOfBrokerRequestHeader = header(req)?;
    let count = ns.route.add_write_perm_of_broker(&h.value);
    tracing::info!(broker = %h.value, count, "add write perm of broker");
    Ok(with_header(
        success(req),
        &AddWritePermOfBrokerResponseHeader {
            add_topic_count: count,
        },
    ))
}
