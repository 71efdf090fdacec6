//! The broker's dispatch table: one plain `match` from RequestCode to one processor function.
//! Every code in the table is decided here: served by a processor, or named in the one arm that
//! answers REQUEST_CODE_NOT_SUPPORTED with Java's remark. A code added to the table does not
//! compile until it is placed.

use std::sync::Arc;

use super::error::BrokerError;
use super::processor::{
    ack_message, admin_broker, admin_group, admin_topic, client_manage, consumer_manage,
    consumer_send_msg_back, end_transaction, lite, lock_batch, notification, pop_message, pull,
    query, query_assignment, recall, reply_message, respond, send, ProcessorResult,
};
use super::BrokerContext;
use crate::remoting::RequestCode::{self, *};
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::server::{Connection, RequestHandler};

/// Serves broker requests on the broker's listeners.
pub struct BrokerHandler {
    pub ctx: Arc<BrokerContext>,
}

impl RequestHandler for BrokerHandler {
    async fn handle(
        self: Arc<Self>,
        conn: Arc<Connection>,
        request: RemotingCommand,
    ) -> Option<RemotingCommand> {
        if !self.ctx.metrics.enabled() {
            let result = process(&self.ctx, &conn, &request).await;
            return respond(result, &request);
        }
        let started = std::time::Instant::now();
        let (result, long_polled) = crate::broker::metrics::LONG_POLLED
            .scope(std::cell::Cell::new(false), async {
                let r = process(&self.ctx, &conn, &request).await;
                (r, crate::broker::metrics::LONG_POLLED.with(|c| c.get()))
            })
            .await;
        let response = respond(result, &request);
        let response_code = response.as_ref().map(|r| r.code);
        // Java sends a found QUERY_MESSAGE or VIEW_MESSAGE_BY_ID as a FileRegion and records it
        // without the is_long_polling label
        let zero_copy = matches!(
            RequestCode::from_code(request.code),
            Some(QUERY_MESSAGE | VIEW_MESSAGE_BY_ID)
        ) && response_code == Some(ResponseCode::SUCCESS.code());
        let key = crate::broker::metrics::RpcKey {
            request_code: request.code,
            response_code,
            long_polling: (!zero_copy).then_some(long_polled),
            result: if request.is_oneway() {
                crate::broker::metrics::RpcResult::Oneway
            } else {
                crate::broker::metrics::RpcResult::Success
            },
        };
        // Java records whole milliseconds; a code with no processor gets no series (a client
        // cycling through numbers must not grow the table)
        // Java records an answer it writes (writeResponse); a request answered with nothing
        // (its processor returned null) has no series
        if let (Some(code), true) = (RequestCode::from_code(request.code), response.is_some()) {
            let ms = started.elapsed().as_millis() as u64;
            self.ctx.metrics.rpc(key, ms * 1000);
            let success = response_code == Some(ResponseCode::SUCCESS.code());
            match code {
                UPDATE_AND_CREATE_TOPIC => {
                    let topic = request.ext("topic").unwrap_or_default();
                    let system = crate::common::topic::is_system_topic(topic);
                    self.ctx.metrics.topic_created(success, system, ms);
                }
                // Java labels a list by its joined names ("T1;T2;"), which is no system topic
                UPDATE_AND_CREATE_TOPIC_LIST => self.ctx.metrics.topic_created(success, false, ms),
                UPDATE_AND_CREATE_SUBSCRIPTIONGROUP | UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST => {
                    self.ctx.metrics.group_created(success, ms)
                }
                _ => {}
            }
        }
        response
    }

    fn on_close(&self, conn: &Arc<Connection>) {
        self.ctx.clients.on_connection_closed(conn.id);
        self.ctx.locks.on_connection_closed(conn.id);
    }
}

/// Runs the processor of `request`'s code. Laid out by hand: one arm per line, and the codes
/// that are not served grouped by what they are for.
#[rustfmt::skip]
async fn process(ctx: &BrokerContext, c: &Arc<Connection>, r: &RemotingCommand) -> ProcessorResult {
    match RequestCode::from_code(r.code).ok_or(BrokerError::NotSupported(r.code))? {
        SEND_MESSAGE | SEND_MESSAGE_V2 | SEND_BATCH_MESSAGE => send::send_message(ctx, c, r).await,
        PULL_MESSAGE | LITE_PULL_MESSAGE => pull::pull_message(ctx, c, r).await,
        QUERY_MESSAGE => query::query_message(ctx, c, r),
        VIEW_MESSAGE_BY_ID => query::view_message_by_id(ctx, c, r),
        CONSUMER_SEND_MSG_BACK => consumer_send_msg_back::consumer_send_msg_back(ctx, c, r).await,
        END_TRANSACTION => end_transaction::end_transaction(ctx, c, r).await,
        SEND_REPLY_MESSAGE | SEND_REPLY_MESSAGE_V2 => {
            reply_message::send_reply_message(ctx, c, r).await
        }
        RECALL_MESSAGE => recall::recall_message(ctx, c, r).await,
        LOCK_BATCH_MQ => lock_batch::lock_batch_mq(ctx, c, r),
        UNLOCK_BATCH_MQ => lock_batch::unlock_batch_mq(ctx, c, r),
        HEART_BEAT => client_manage::heart_beat(ctx, c, r),
        UNREGISTER_CLIENT => client_manage::unregister_client(ctx, c, r),
        CHECK_CLIENT_CONFIG => client_manage::check_client_config(ctx, c, r),
        QUERY_CONSUMER_OFFSET => consumer_manage::query_consumer_offset(ctx, c, r),
        UPDATE_CONSUMER_OFFSET => consumer_manage::update_consumer_offset(ctx, c, r),
        GET_CONSUMER_LIST_BY_GROUP => consumer_manage::get_consumer_list_by_group(ctx, c, r),
        SEARCH_OFFSET_BY_TIMESTAMP => consumer_manage::search_offset_by_timestamp(ctx, c, r),
        GET_MAX_OFFSET => consumer_manage::get_max_offset(ctx, c, r),
        GET_MIN_OFFSET => consumer_manage::get_min_offset(ctx, c, r),
        GET_EARLIEST_MSG_STORETIME => consumer_manage::get_earliest_msg_storetime(ctx, c, r),
        UPDATE_AND_CREATE_TOPIC => admin_topic::update_and_create_topic(ctx, c, r),
        UPDATE_AND_CREATE_TOPIC_LIST => admin_topic::update_and_create_topic_list(ctx, c, r),
        DELETE_TOPIC_IN_BROKER => admin_topic::delete_topic_in_broker(ctx, c, r),
        GET_ALL_TOPIC_CONFIG => admin_topic::get_all_topic_config(ctx, c, r),
        GET_TOPIC_CONFIG => admin_topic::get_topic_config(ctx, c, r),
        GET_TOPIC_STATS_INFO => admin_topic::get_topic_stats_info(ctx, c, r),
        GET_SYSTEM_TOPIC_LIST_FROM_BROKER => {
            admin_topic::get_system_topic_list_from_broker(ctx, c, r)
        }
        QUERY_TOPIC_CONSUME_BY_WHO => admin_topic::query_topic_consume_by_who(ctx, c, r),
        UPDATE_AND_CREATE_SUBSCRIPTIONGROUP => {
            admin_group::update_and_create_subscription_group(ctx, c, r)
        }
        UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST => {
            admin_group::update_and_create_subscription_group_list(ctx, c, r)
        }
        GET_ALL_SUBSCRIPTIONGROUP_CONFIG => {
            admin_group::get_all_subscription_group_config(ctx, c, r)
        }
        GET_SUBSCRIPTIONGROUP_CONFIG => admin_group::get_subscription_group_config(ctx, c, r),
        DELETE_SUBSCRIPTIONGROUP => admin_group::delete_subscription_group(ctx, c, r),
        GET_CONSUME_STATS => admin_group::get_consume_stats(ctx, c, r),
        GET_CONSUMER_CONNECTION_LIST => admin_group::get_consumer_connection_list(ctx, c, r),
        GET_PRODUCER_CONNECTION_LIST => admin_group::get_producer_connection_list(ctx, c, r),
        INVOKE_BROKER_TO_RESET_OFFSET => admin_group::invoke_broker_to_reset_offset(ctx, c, r),
        GET_CONSUMER_RUNNING_INFO => admin_group::get_consumer_running_info(ctx, c, r).await,
        CONSUME_MESSAGE_DIRECTLY => admin_group::consume_message_directly(ctx, c, r).await,
        GET_BROKER_CONFIG => admin_broker::get_broker_config(ctx, c, r),
        UPDATE_BROKER_CONFIG => admin_broker::update_broker_config(ctx, c, r),
        GET_BROKER_RUNTIME_INFO => admin_broker::get_broker_runtime_info(ctx, c, r),
        CLEAN_EXPIRED_CONSUMEQUEUE => admin_broker::clean_expired_consume_queue(ctx, c, r),
        DELETE_EXPIRED_COMMITLOG => admin_broker::delete_expired_commit_log(ctx, c, r),
        QUERY_CONSUME_QUEUE => admin_broker::query_consume_queue(ctx, c, r),
        VIEW_BROKER_STATS_DATA => admin_broker::view_broker_stats_data(ctx, c, r),
        GET_ALL_PRODUCER_INFO => admin_broker::get_all_producer_info(ctx, c, r),
        POP_MESSAGE => pop_message::pop_message(ctx, c, r).await,
        ACK_MESSAGE => ack_message::ack_message(ctx, c, r).await,
        BATCH_ACK_MESSAGE => ack_message::batch_ack_message(ctx, c, r).await,
        CHANGE_MESSAGE_INVISIBLETIME => ack_message::change_invisible_time(ctx, c, r).await,
        QUERY_ASSIGNMENT => query_assignment::query_assignment(ctx, c, r).await,
        SET_MESSAGE_REQUEST_MODE => query_assignment::set_message_request_mode(ctx, c, r),
        GET_ALL_MESSAGE_REQUEST_MODE => query_assignment::get_all_message_request_mode(ctx, c, r),
        PEEK_MESSAGE => notification::peek_message(ctx, c, r),
        NOTIFICATION => notification::notification(ctx, c, r).await,
        POLLING_INFO => notification::polling_info(ctx, c, r),
        POP_LITE_MESSAGE => lite::pop_lite_message(ctx, c, r).await,
        LITE_SUBSCRIPTION_CTL => lite::lite_subscription_ctl(ctx, c, r).await,
        GET_BROKER_LITE_INFO => lite::get_broker_lite_info(ctx, c, r),
        GET_PARENT_TOPIC_INFO => lite::get_parent_topic_info(ctx, c, r),
        GET_LITE_TOPIC_INFO => lite::get_lite_topic_info(ctx, c, r),
        GET_LITE_CLIENT_INFO => lite::get_lite_client_info(ctx, c, r),
        GET_LITE_GROUP_INFO => lite::get_lite_group_info(ctx, c, r),
        TRIGGER_LITE_DISPATCH => lite::trigger_lite_dispatch(ctx, c, r),
        // Not served (REQUEST_CODE_NOT_SUPPORTED). Sent by the broker to clients, not served:
        CHECK_TRANSACTION_STATE | NOTIFY_CONSUMER_IDS_CHANGED | RESET_CONSUMER_CLIENT_OFFSET
        | GET_CONSUMER_STATUS_FROM_CLIENT | PUSH_REPLY_MESSAGE_TO_CLIENT
        // NameServer codes (src/namesrv serves them).
        | PUT_KV_CONFIG | GET_KV_CONFIG | DELETE_KV_CONFIG | GET_KVLIST_BY_NAMESPACE
        | REGISTER_BROKER | UNREGISTER_BROKER | BROKER_HEARTBEAT | QUERY_DATA_VERSION
        | GET_BROKER_MEMBER_GROUP | GET_ROUTEINFO_BY_TOPIC | GET_BROKER_CLUSTER_INFO
        | WIPE_WRITE_PERM_OF_BROKER | ADD_WRITE_PERM_OF_BROKER | GET_ALL_TOPIC_LIST_FROM_NAMESERVER
        | DELETE_TOPIC_IN_NAMESRV | REGISTER_TOPIC_IN_NAMESRV | GET_TOPICS_BY_CLUSTER
        | GET_SYSTEM_TOPIC_LIST_FROM_NS | GET_UNIT_TOPIC_LIST | GET_HAS_UNIT_SUB_TOPIC_LIST
        | GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST | UPDATE_NAMESRV_CONFIG | GET_NAMESRV_CONFIG
        // POP: the KV pop store's rollback (rmqd keeps POP state in the revive topic only).
        | POP_ROLLBACK
        // Lite: Java registers no processor for ACK_LITE_MESSAGE (acks carry liteTopic instead);
        // NOTIFY_UNSUBSCRIBE_LITE goes to clients.
        | ACK_LITE_MESSAGE | NOTIFY_UNSUBSCRIBE_LITE
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
        | GET_BROKER_CONSUME_STATS
        | GET_TIMER_CHECK_POINT | GET_TIMER_METRICS | QUERY_CONSUME_TIME_SPAN | QUERY_BROKER_OFFSET
        | GET_TOPIC_CONFIG_LIST | GET_TOPIC_NAME_LIST
        | TRIGGER_DELETE_FILES | GET_ALL_CONSUMER_OFFSET | GET_ALL_DELAY_OFFSET | GET_CLIENT_CONFIG
        | SUSPEND_CONSUMER | RESUME_CONSUMER | RESET_CONSUMER_OFFSET_IN_CONSUMER
        | RESET_CONSUMER_OFFSET_IN_BROKER | ADJUST_CONSUMER_THREAD_POOL | WHO_CONSUME_THE_MESSAGE
        | INVOKE_BROKER_TO_GET_CONSUMER_STATUS
        | REGISTER_FILTER_SERVER | REGISTER_MESSAGE_FILTER_CLASS | QUERY_CORRECTION_OFFSET
        | CLONE_GROUP_OFFSET | CLEAN_UNUSED_TOPIC | RESUME_CHECK_HALF_MESSAGE
        | QUERY_TOPICS_BY_CONSUMER | QUERY_SUBSCRIPTION_BY_CONSUMER | UPDATE_AND_GET_GROUP_FORBIDDEN
        | CHECK_ROCKSDB_CQ_WRITE_PROGRESS | EXPORT_ROCKSDB_CONFIG_TO_JSON
        | UPDATE_AND_CREATE_STATIC_TOPIC | UPDATE_COLD_DATA_FLOW_CTR_CONFIG
        | REMOVE_COLD_DATA_FLOW_CTR_CONFIG | GET_COLD_DATA_FLOW_CTR_INFO | SET_COMMITLOG_READ_MODE
        => Err(BrokerError::NotSupported(r.code)),
    }
}
