//! The NameServer's request dispatch: one plain `match` from RequestCode to one processor function
//! (Java's `DefaultRequestProcessor` and `ClientRequestProcessor`). Every code in the table is
//! decided here: served by a processor, or named in the one arm that answers
//! REQUEST_CODE_NOT_SUPPORTED with Java's remark. A code added to the table does not compile until
//! it is placed.

mod broker;
mod config;
mod kv;
mod route;

use std::net::SocketAddr;

use super::error::NamesrvError;
use super::NameServer;
use crate::remoting::command::RemotingCommand;
use crate::remoting::header::CommandHeader;
use crate::remoting::request_code::RequestCode::{self, *};
use crate::remoting::response_code::ResponseCode;

/// Where a request came from.
#[derive(Debug, Clone, Copy)]
pub struct RequestContext {
    pub conn_id: u64,
    pub peer: SocketAddr,
}

/// What every processor returns: `Ok` with the response Java sends (whatever its code, for the
/// outcomes the protocol expects), or the `NamesrvError` that `namesrv/error.rs` turns into
/// Java's code and remark.
///
/// Every processor has one signature:
/// `fn(ns: &NameServer, ctx: &RequestContext, req: &RemotingCommand) -> ProcessorResult`.
pub type ProcessorResult = Result<RemotingCommand, NamesrvError>;

/// The dispatch table. Laid out by hand: one arm per line, and the codes that are not served
/// grouped by what they are for.
#[rustfmt::skip]
pub(crate) fn dispatch(
    ns: &NameServer,
    ctx: &RequestContext,
    r: &RemotingCommand,
) -> ProcessorResult {
    match RequestCode::from_code(r.code).ok_or(NamesrvError::NotSupported(r.code))? {
        PUT_KV_CONFIG => kv::put_kv_config(ns, ctx, r),
        GET_KV_CONFIG => kv::get_kv_config(ns, ctx, r),
        DELETE_KV_CONFIG => kv::delete_kv_config(ns, ctx, r),
        GET_KVLIST_BY_NAMESPACE => kv::get_kv_list_by_namespace(ns, ctx, r),
        QUERY_DATA_VERSION => broker::query_data_version(ns, ctx, r),
        REGISTER_BROKER => broker::register_broker(ns, ctx, r),
        UNREGISTER_BROKER => broker::unregister_broker(ns, ctx, r),
        BROKER_HEARTBEAT => broker::broker_heartbeat(ns, ctx, r),
        GET_BROKER_MEMBER_GROUP => broker::get_broker_member_group(ns, ctx, r),
        GET_ROUTEINFO_BY_TOPIC => route::get_route_info_by_topic(ns, ctx, r),
        GET_BROKER_CLUSTER_INFO => route::get_broker_cluster_info(ns, ctx, r),
        WIPE_WRITE_PERM_OF_BROKER => route::wipe_write_perm_of_broker(ns, ctx, r),
        ADD_WRITE_PERM_OF_BROKER => route::add_write_perm_of_broker(ns, ctx, r),
        GET_ALL_TOPIC_LIST_FROM_NAMESERVER => route::get_all_topic_list(ns, ctx, r),
        DELETE_TOPIC_IN_NAMESRV => route::delete_topic_in_namesrv(ns, ctx, r),
        REGISTER_TOPIC_IN_NAMESRV => route::register_topic_in_namesrv(ns, ctx, r),
        GET_TOPICS_BY_CLUSTER => route::get_topics_by_cluster(ns, ctx, r),
        GET_SYSTEM_TOPIC_LIST_FROM_NS => route::get_system_topic_list(ns, ctx, r),
        GET_UNIT_TOPIC_LIST => route::get_unit_topic_list(ns, ctx, r),
        GET_HAS_UNIT_SUB_TOPIC_LIST => route::get_has_unit_sub_topic_list(ns, ctx, r),
        GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST => {
            route::get_has_unit_sub_un_unit_topic_list(ns, ctx, r)
        }
        UPDATE_NAMESRV_CONFIG => config::update_namesrv_config(ns, ctx, r),
        GET_NAMESRV_CONFIG => config::get_namesrv_config(ns, ctx, r),
        // Not served (REQUEST_CODE_NOT_SUPPORTED). Broker codes (src/broker serves them).
        SEND_MESSAGE | SEND_MESSAGE_V2 | SEND_BATCH_MESSAGE | PULL_MESSAGE | LITE_PULL_MESSAGE
        | QUERY_MESSAGE | VIEW_MESSAGE_BY_ID | CONSUMER_SEND_MSG_BACK | END_TRANSACTION
        | SEND_REPLY_MESSAGE | SEND_REPLY_MESSAGE_V2 | LOCK_BATCH_MQ | UNLOCK_BATCH_MQ | HEART_BEAT
        | UNREGISTER_CLIENT | CHECK_CLIENT_CONFIG | QUERY_CONSUMER_OFFSET | UPDATE_CONSUMER_OFFSET
        | GET_CONSUMER_LIST_BY_GROUP | SEARCH_OFFSET_BY_TIMESTAMP | GET_MAX_OFFSET | GET_MIN_OFFSET
        | GET_EARLIEST_MSG_STORETIME | UPDATE_AND_CREATE_TOPIC | DELETE_TOPIC_IN_BROKER
        | GET_ALL_TOPIC_CONFIG | GET_TOPIC_CONFIG | GET_TOPIC_STATS_INFO
        | GET_SYSTEM_TOPIC_LIST_FROM_BROKER | QUERY_TOPIC_CONSUME_BY_WHO
        | UPDATE_AND_CREATE_SUBSCRIPTIONGROUP | GET_ALL_SUBSCRIPTIONGROUP_CONFIG
        | GET_SUBSCRIPTIONGROUP_CONFIG | DELETE_SUBSCRIPTIONGROUP | GET_CONSUME_STATS
        | GET_CONSUMER_CONNECTION_LIST | GET_PRODUCER_CONNECTION_LIST
        | INVOKE_BROKER_TO_RESET_OFFSET | GET_CONSUMER_RUNNING_INFO | CONSUME_MESSAGE_DIRECTLY
        | GET_BROKER_CONFIG | UPDATE_BROKER_CONFIG | GET_BROKER_RUNTIME_INFO
        | CLEAN_EXPIRED_CONSUMEQUEUE | DELETE_EXPIRED_COMMITLOG | QUERY_CONSUME_QUEUE
        // Sent by the broker to clients, not served:
        | CHECK_TRANSACTION_STATE | NOTIFY_CONSUMER_IDS_CHANGED | RESET_CONSUMER_CLIENT_OFFSET
        | GET_CONSUMER_STATUS_FROM_CLIENT | PUSH_REPLY_MESSAGE_TO_CLIENT
        // POP consumption and message request modes.
        | POP_MESSAGE | ACK_MESSAGE | BATCH_ACK_MESSAGE | PEEK_MESSAGE
        | CHANGE_MESSAGE_INVISIBLETIME | NOTIFICATION | POLLING_INFO | POP_ROLLBACK
        | POP_LITE_MESSAGE | LITE_SUBSCRIPTION_CTL | ACK_LITE_MESSAGE | NOTIFY_UNSUBSCRIBE_LITE
        | GET_BROKER_LITE_INFO | GET_PARENT_TOPIC_INFO | GET_LITE_TOPIC_INFO | GET_LITE_CLIENT_INFO
        | GET_LITE_GROUP_INFO | TRIGGER_LITE_DISPATCH
        | QUERY_ASSIGNMENT | SET_MESSAGE_REQUEST_MODE | GET_ALL_MESSAGE_REQUEST_MODE
        // ACL and authentication.
        | UPDATE_AND_CREATE_ACL_CONFIG | DELETE_ACL_CONFIG | GET_BROKER_CLUSTER_ACL_INFO
        | UPDATE_GLOBAL_WHITE_ADDRS_CONFIG | AUTH_CREATE_USER | AUTH_UPDATE_USER | AUTH_DELETE_USER
        | AUTH_GET_USER | AUTH_LIST_USER | AUTH_CREATE_ACL | AUTH_UPDATE_ACL | AUTH_DELETE_ACL
        | AUTH_GET_ACL | AUTH_LIST_ACL
        // Replication, controller and broker membership.
        | ADD_BROKER | REMOVE_BROKER | NOTIFY_MIN_BROKER_ID_CHANGE | EXCHANGE_BROKER_HA_INFO
        | GET_BROKER_HA_STATUS | RESET_MASTER_FLUSH_OFFSET | CONTROLLER_ALTER_SYNC_STATE_SET
        | CONTROLLER_ELECT_MASTER | CONTROLLER_REGISTER_BROKER | CONTROLLER_GET_REPLICA_INFO
        | CONTROLLER_GET_METADATA_INFO | CONTROLLER_GET_SYNC_STATE_DATA | GET_BROKER_EPOCH_CACHE
        | NOTIFY_BROKER_ROLE_CHANGED | UPDATE_CONTROLLER_CONFIG | GET_CONTROLLER_CONFIG
        | CLEAN_BROKER_DATA | CONTROLLER_GET_NEXT_BROKER_ID | CONTROLLER_APPLY_BROKER_ID
        | BROKER_CLOSE_CHANNEL_REQUEST | CHECK_NOT_ACTIVE_BROKER_REQUEST
        | GET_BROKER_LIVE_INFO_REQUEST | GET_SYNC_STATE_DATA_REQUEST
        | RAFT_BROKER_HEART_BEAT_EVENT_REQUEST
        // Statistics, other administration, filter servers, static topics, RocksDB, cold data.
        | VIEW_BROKER_STATS_DATA | GET_ALL_PRODUCER_INFO | GET_BROKER_CONSUME_STATS
        | GET_TIMER_CHECK_POINT | GET_TIMER_METRICS | QUERY_CONSUME_TIME_SPAN | QUERY_BROKER_OFFSET
        | UPDATE_AND_CREATE_TOPIC_LIST | GET_TOPIC_CONFIG_LIST | GET_TOPIC_NAME_LIST
        | TRIGGER_DELETE_FILES | GET_ALL_CONSUMER_OFFSET | GET_ALL_DELAY_OFFSET | GET_CLIENT_CONFIG
        | SUSPEND_CONSUMER | RESUME_CONSUMER | RESET_CONSUMER_OFFSET_IN_CONSUMER
        | RESET_CONSUMER_OFFSET_IN_BROKER | ADJUST_CONSUMER_THREAD_POOL | WHO_CONSUME_THE_MESSAGE
        | INVOKE_BROKER_TO_GET_CONSUMER_STATUS | UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST
        | REGISTER_FILTER_SERVER | REGISTER_MESSAGE_FILTER_CLASS | QUERY_CORRECTION_OFFSET
        | CLONE_GROUP_OFFSET | CLEAN_UNUSED_TOPIC | RESUME_CHECK_HALF_MESSAGE
        | QUERY_TOPICS_BY_CONSUMER | QUERY_SUBSCRIPTION_BY_CONSUMER | UPDATE_AND_GET_GROUP_FORBIDDEN
        | CHECK_ROCKSDB_CQ_WRITE_PROGRESS | EXPORT_ROCKSDB_CONFIG_TO_JSON | RECALL_MESSAGE
        | UPDATE_AND_CREATE_STATIC_TOPIC | UPDATE_COLD_DATA_FLOW_CTR_CONFIG
        | REMOVE_COLD_DATA_FLOW_CTR_CONFIG | GET_COLD_DATA_FLOW_CTR_INFO | SET_COMMITLOG_READ_MODE
        => Err(NamesrvError::NotSupported(r.code)),
    }
}

/// A SUCCESS response without header or body.
pub(crate) fn success(req: &RemotingCommand) -> RemotingCommand {
    RemotingCommand::response_to(req, ResponseCode::SUCCESS.code(), None)
}

/// A response with `code` and `remark` that is not a failure of the request (a status the
/// client reads, such as QUERY_NOT_FOUND).
pub(crate) fn reply(
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

/// Reads the request's custom header (an absent `extFields` reads as empty); a missing or bad
/// field is `BadRequest` naming it.
pub(crate) fn header<H: CommandHeader>(req: &RemotingCommand) -> Result<H, NamesrvError> {
    let header = match &req.ext_fields {
        Some(ext) => H::read_from(ext),
        None => H::read_from(&Default::default()),
    };
    Ok(header?)
}
