//! The broker's dispatch table: one plain `match` from RequestCode to one processor function.
//! Codes without a processor answer REQUEST_CODE_NOT_SUPPORTED with Java's remark.

use std::sync::Arc;

use super::error::not_supported;
use super::processor::{
    admin_broker, admin_group, admin_topic, client_manage, consumer_manage, consumer_send_msg_back,
    end_transaction, lock_batch, pull, query, reply_message, send,
};
use super::BrokerContext;
use crate::remoting::{RemotingCommand, RequestCode};
use crate::server::{Connection, RequestHandler};

/// Serves broker requests on the broker's listener.
pub struct BrokerHandler {
    pub ctx: Arc<BrokerContext>,
}

impl RequestHandler for BrokerHandler {
    async fn handle(
        self: Arc<Self>,
        conn: Arc<Connection>,
        request: RemotingCommand,
    ) -> Option<RemotingCommand> {
        let ctx = &*self.ctx;
        let Some(code) = RequestCode::from_code(request.code) else {
            return Some(not_supported(&request));
        };
        use RequestCode::*;
        let response = match code {
            SEND_MESSAGE | SEND_MESSAGE_V2 | SEND_BATCH_MESSAGE => {
                send::send_message(ctx, &conn, request).await
            }
            PULL_MESSAGE | LITE_PULL_MESSAGE => pull::pull_message(ctx, &conn, request).await,
            QUERY_MESSAGE => query::query_message(ctx, &request),
            VIEW_MESSAGE_BY_ID => query::view_message_by_id(ctx, &request),
            CONSUMER_SEND_MSG_BACK => {
                consumer_send_msg_back::consumer_send_msg_back(ctx, &request).await
            }
            END_TRANSACTION => {
                return end_transaction::end_transaction(ctx, conn.peer, &request).await
            }
            SEND_REPLY_MESSAGE | SEND_REPLY_MESSAGE_V2 => {
                reply_message::send_reply_message(ctx, &conn, &request).await
            }
            LOCK_BATCH_MQ => lock_batch::lock_batch_mq(ctx, &conn, &request),
            UNLOCK_BATCH_MQ => lock_batch::unlock_batch_mq(ctx, &request),
            HEART_BEAT => client_manage::heart_beat(ctx, &conn, &request),
            UNREGISTER_CLIENT => client_manage::unregister_client(ctx, &conn, &request),
            CHECK_CLIENT_CONFIG => client_manage::check_client_config(ctx, &request),
            QUERY_CONSUMER_OFFSET => consumer_manage::query_consumer_offset(ctx, &request),
            UPDATE_CONSUMER_OFFSET => consumer_manage::update_consumer_offset(ctx, &request),
            GET_CONSUMER_LIST_BY_GROUP => {
                consumer_manage::get_consumer_list_by_group(ctx, &request)
            }
            SEARCH_OFFSET_BY_TIMESTAMP => {
                consumer_manage::search_offset_by_timestamp(ctx, &request)
            }
            GET_MAX_OFFSET => consumer_manage::get_max_offset(ctx, &request),
            GET_MIN_OFFSET => consumer_manage::get_min_offset(ctx, &request),
            GET_EARLIEST_MSG_STORETIME => {
                consumer_manage::get_earliest_msg_storetime(ctx, &request)
            }
            UPDATE_AND_CREATE_TOPIC => admin_topic::update_and_create_topic(ctx, &request),
            DELETE_TOPIC_IN_BROKER => admin_topic::delete_topic_in_broker(ctx, &request),
            GET_ALL_TOPIC_CONFIG => admin_topic::get_all_topic_config(ctx, &request),
            GET_TOPIC_CONFIG => admin_topic::get_topic_config(ctx, &request),
            GET_TOPIC_STATS_INFO => admin_topic::get_topic_stats_info(ctx, &request),
            GET_SYSTEM_TOPIC_LIST_FROM_BROKER => {
                admin_topic::get_system_topic_list_from_broker(ctx, &request)
            }
            QUERY_TOPIC_CONSUME_BY_WHO => admin_topic::query_topic_consume_by_who(ctx, &request),
            UPDATE_AND_CREATE_SUBSCRIPTIONGROUP => {
                admin_group::update_and_create_subscription_group(ctx, &request)
            }
            GET_ALL_SUBSCRIPTIONGROUP_CONFIG => {
                admin_group::get_all_subscription_group_config(ctx, &request)
            }
            GET_SUBSCRIPTIONGROUP_CONFIG => {
                admin_group::get_subscription_group_config(ctx, &request)
            }
            DELETE_SUBSCRIPTIONGROUP => admin_group::delete_subscription_group(ctx, &request),
            GET_CONSUME_STATS => admin_group::get_consume_stats(ctx, &request),
            GET_CONSUMER_CONNECTION_LIST => {
                admin_group::get_consumer_connection_list(ctx, &request)
            }
            GET_PRODUCER_CONNECTION_LIST => {
                admin_group::get_producer_connection_list(ctx, &request)
            }
            INVOKE_BROKER_TO_RESET_OFFSET => {
                admin_group::invoke_broker_to_reset_offset(ctx, &request)
            }
            GET_CONSUMER_RUNNING_INFO => {
                admin_group::get_consumer_running_info(ctx, &request).await
            }
            CONSUME_MESSAGE_DIRECTLY => admin_group::consume_message_directly(ctx, &request).await,
            GET_BROKER_CONFIG => admin_broker::get_broker_config(ctx, &request),
            UPDATE_BROKER_CONFIG => admin_broker::update_broker_config(ctx, &request),
            GET_BROKER_RUNTIME_INFO => admin_broker::get_broker_runtime_info(ctx, &request),
            CLEAN_EXPIRED_CONSUMEQUEUE => admin_broker::clean_expired_consume_queue(ctx, &request),
            DELETE_EXPIRED_COMMITLOG => admin_broker::delete_expired_commit_log(ctx, &request),
            QUERY_CONSUME_QUEUE => admin_broker::query_consume_queue(ctx, &request),
            _ => not_supported(&request),
        };
        Some(response)
    }

    fn on_close(&self, conn: &Arc<Connection>) {
        self.ctx.clients.on_connection_closed(conn.id);
        self.ctx.locks.on_connection_closed(conn.id);
    }
}
