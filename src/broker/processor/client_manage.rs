//! HEART_BEAT (34), UNREGISTER_CLIENT (35), CHECK_CLIENT_CONFIG (46): who is connected, in which
//! groups, subscribed to what.

use crate::broker::client_registry::{ClientChannel, ConsumerRegistration};
use crate::broker::error::BrokerError;
use crate::broker::server::Connection;
use crate::broker::BrokerContext;
use crate::common::topic::{retry_topic, PERM_READ, PERM_WRITE};
use crate::remoting::body::heartbeat::HeartbeatData;
use crate::remoting::header::unregister_client::UnregisterClientRequestHeader;
use crate::remoting::header::CommandHeader;
use crate::remoting::{RemotingCommand, ResponseCode};

pub fn heart_beat(
    ctx: &BrokerContext,
    conn: &std::sync::Arc<Connection>,
    request: &RemotingCommand,
) -> RemotingCommand {
    let data = match HeartbeatData::decode(&request.body.to_bytes()) {
        Ok(d) => d,
        Err(e) => {
            return BrokerError::refused(ResponseCode::SYSTEM_ERROR, e.to_string())
                .into_response(request)
        }
    };
    let channel = || ClientChannel {
        conn: conn.clone(),
        client_id: data.client_id.clone(),
        language: request.language.clone(),
        version: request.version,
        last_update: std::time::Instant::now(),
    };
    for consumer in &data.consumer_data_set {
        let Ok(group) = ctx.groups.find_or_create(&consumer.group_name) else {
            continue;
        };
        let sys_flag = if consumer.unit_mode { 2 } else { 0 };
        let retry = retry_topic(&consumer.group_name);
        if !ctx.topics.contains(&retry) {
            match ctx.topics.create_if_absent(
                &retry,
                group.retry_queue_nums,
                PERM_READ | PERM_WRITE,
                sys_flag,
            ) {
                Ok(_) => ctx.register_to_namesrv_soon(),
                Err(e) => tracing::warn!(topic = %retry, error = %e, "cannot create retry topic"),
            }
        }
        let reg = ConsumerRegistration {
            group: consumer.group_name.clone(),
            consume_type: consumer.consume_type,
            message_model: consumer.message_model,
            consume_from_where: consumer.consume_from_where,
            subscriptions: consumer.subscription_data_set.clone(),
        };
        ctx.clients
            .register_consumer(reg, channel(), group.notify_consumer_ids_changed_enable);
    }
    for producer in &data.producer_data_set {
        ctx.clients
            .register_producer(&producer.group_name, channel());
    }
    let mut response = RemotingCommand::response_to(request, ResponseCode::SUCCESS.code(), None);
    // rmqd serves the classic heartbeat only; clients keep sending full subscriptions.
    response
        .ext_mut()
        .insert("IS_SUPPORT_HEART_BEAT_V2", "false");
    response.ext_mut().insert("IS_SUB_CHANGE", "true");
    response
}

pub fn unregister_client(
    ctx: &BrokerContext,
    conn: &Connection,
    request: &RemotingCommand,
) -> RemotingCommand {
    let ext = request.ext_fields.clone().unwrap_or_default();
    match UnregisterClientRequestHeader::read_from(&ext) {
        Ok(h) => {
            ctx.clients.unregister(
                conn.id,
                h.producer_group.as_deref(),
                h.consumer_group.as_deref(),
            );
            RemotingCommand::response_to(request, ResponseCode::SUCCESS.code(), None)
        }
        Err(e) => BrokerError::from(e).into_response(request),
    }
}

/// CHECK_CLIENT_CONFIG: TAG subscriptions are always fine; SQL92 needs a filter engine rmqd
/// does not have yet, so it is refused here — at subscription, not at delivery.
pub fn check_client_config(_ctx: &BrokerContext, request: &RemotingCommand) -> RemotingCommand {
    let body = request.body.to_bytes();
    let text = String::from_utf8_lossy(&body);
    let sql = text.contains("\"expressionType\":\"SQL92\"");
    if sql {
        let remark = "The broker does not support consumer to filter message by SQL92";
        return BrokerError::refused(ResponseCode::SYSTEM_ERROR, remark).into_response(request);
    }
    RemotingCommand::response_to(request, ResponseCode::SUCCESS.code(), None)
}
