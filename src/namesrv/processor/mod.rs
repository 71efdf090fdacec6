//! The NameServer's request dispatch: one plain `match` from RequestCode to one handler function
//! (Java's `DefaultRequestProcessor` and `ClientRequestProcessor`).

mod broker;
mod config;
mod kv;
mod route;

use std::net::SocketAddr;

use super::NameServer;
use crate::remoting::command::RemotingCommand;
use crate::remoting::error::RemotingError;
use crate::remoting::header::CommandHeader;
use crate::remoting::request_code::RequestCode;
use crate::remoting::response_code::ResponseCode;

/// Where a request came from.
#[derive(Debug, Clone, Copy)]
pub struct RequestContext {
    pub conn_id: u64,
    pub peer: SocketAddr,
}

/// What a handler returns; a header or body error becomes SYSTEM_ERROR in `process`.
pub(crate) type HandlerResult = Result<RemotingCommand, RemotingError>;

/// The dispatch table.
pub(crate) fn dispatch(
    ns: &NameServer,
    ctx: &RequestContext,
    req: &RemotingCommand,
) -> HandlerResult {
    use RequestCode as C;
    let Some(code) = RequestCode::from_code(req.code) else {
        return Ok(not_supported(req));
    };
    match code {
        C::PUT_KV_CONFIG => kv::put_kv_config(ns, req),
        C::GET_KV_CONFIG => kv::get_kv_config(ns, req),
        C::DELETE_KV_CONFIG => kv::delete_kv_config(ns, req),
        C::GET_KVLIST_BY_NAMESPACE => kv::get_kv_list_by_namespace(ns, req),
        C::QUERY_DATA_VERSION => broker::query_data_version(ns, req),
        C::REGISTER_BROKER => broker::register_broker(ns, ctx, req),
        C::UNREGISTER_BROKER => broker::unregister_broker(ns, req),
        C::BROKER_HEARTBEAT => broker::broker_heartbeat(ns, req),
        C::GET_BROKER_MEMBER_GROUP => broker::get_broker_member_group(ns, req),
        C::GET_ROUTEINFO_BY_TOPIC => route::get_route_info_by_topic(ns, req),
        C::GET_BROKER_CLUSTER_INFO => route::get_broker_cluster_info(ns, req),
        C::WIPE_WRITE_PERM_OF_BROKER => route::wipe_write_perm_of_broker(ns, req),
        C::ADD_WRITE_PERM_OF_BROKER => route::add_write_perm_of_broker(ns, req),
        C::GET_ALL_TOPIC_LIST_FROM_NAMESERVER => route::get_all_topic_list(ns, req),
        C::DELETE_TOPIC_IN_NAMESRV => route::delete_topic_in_namesrv(ns, req),
        C::REGISTER_TOPIC_IN_NAMESRV => route::register_topic_in_namesrv(ns, req),
        C::GET_TOPICS_BY_CLUSTER => route::get_topics_by_cluster(ns, req),
        C::GET_SYSTEM_TOPIC_LIST_FROM_NS => route::get_system_topic_list(ns, req),
        C::GET_UNIT_TOPIC_LIST => route::get_unit_topic_list(ns, req),
        C::GET_HAS_UNIT_SUB_TOPIC_LIST => route::get_has_unit_sub_topic_list(ns, req),
        C::GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST => {
            route::get_has_unit_sub_un_unit_topic_list(ns, req)
        }
        C::UPDATE_NAMESRV_CONFIG => config::update_namesrv_config(ns, req),
        C::GET_NAMESRV_CONFIG => config::get_namesrv_config(ns, req),
        _ => Ok(not_supported(req)),
    }
}

/// `REQUEST_CODE_NOT_SUPPORTED` with Java's remark (leading space included).
pub(crate) fn not_supported(req: &RemotingCommand) -> RemotingCommand {
    let remark = format!(" request type {} not supported", req.code);
    RemotingCommand::response_to(
        req,
        ResponseCode::REQUEST_CODE_NOT_SUPPORTED.code(),
        Some(remark),
    )
}

/// A SUCCESS response without header or body.
pub(crate) fn success(req: &RemotingCommand) -> RemotingCommand {
    RemotingCommand::response_to(req, ResponseCode::SUCCESS.code(), None)
}

/// A response with `code` and `remark`.
pub(crate) fn failure(
    req: &RemotingCommand,
    code: ResponseCode,
    remark: impl Into<String>,
) -> RemotingCommand {
    RemotingCommand::response_to(req, code.code(), Some(remark.into()))
}

/// Attaches a response header (Java sends `extFields`, possibly empty, when a header class is set).
pub(crate) fn with_header(
    mut resp: RemotingCommand,
    header: &impl CommandHeader,
) -> RemotingCommand {
    header.write_to(resp.ext_mut());
    resp
}

/// Reads the request's custom header (an absent `extFields` reads as empty).
pub(crate) fn header<H: CommandHeader>(req: &RemotingCommand) -> Result<H, RemotingError> {
    match &req.ext_fields {
        Some(ext) => H::read_from(ext),
        None => H::read_from(&Default::default()),
    }
}
