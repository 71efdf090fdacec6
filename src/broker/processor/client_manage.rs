//! HEART_BEAT (34), UNREGISTER_CLIENT (35), CHECK_CLIENT_CONFIG (46): who is connected, in which
//! groups, subscribed to what.

use std::sync::Arc;

use super::{ok, read_header, ProcessorResult};
use crate::broker::client_registry::{ClientChannel, ConsumerRegistration};
use crate::broker::error::BrokerError;
use crate::broker::BrokerContext;
use crate::common::filter::{FilterError, SqlFilter, SQL92};
use crate::common::topic::{retry_topic, PERM_READ, PERM_WRITE};
use crate::remoting::body::fastjson;
use crate::remoting::body::heartbeat::HeartbeatData;
use crate::remoting::body::subscription_data::SubscriptionData;
use crate::remoting::header::unregister_client::UnregisterClientRequestHeader;
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::server::Connection;

pub fn heart_beat(
    ctx: &BrokerContext,
    conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let data = HeartbeatData::decode(&request.body.to_bytes())
        .map_err(|e| BrokerError::system(e.to_string()))?;
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
    let mut response = ok(request);
    // rmqd serves the classic heartbeat only; clients keep sending full subscriptions.
    response
        .ext_mut()
        .insert("IS_SUPPORT_HEART_BEAT_V2", "false");
    response.ext_mut().insert("IS_SUB_CHANGE", "true");
    Ok(response)
}

pub fn unregister_client(
    ctx: &BrokerContext,
    conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: UnregisterClientRequestHeader = read_header(request)?;
    ctx.clients.unregister(
        conn.id,
        h.producer_group.as_deref(),
        h.consumer_group.as_deref(),
    );
    Ok(ok(request))
}

/// CHECK_CLIENT_CONFIG (Java `checkClientConfig`): the consumer asks before subscribing whether
/// this broker accepts its filter. TAG always; other types only with `enablePropertyFilter`
/// (else SYSTEM_ERROR), and only when the expression compiles (else SUBSCRIPTION_PARSE_FAILED
/// with the reason). A body without a subscription is accepted.
pub fn check_client_config(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let body = request.body.to_bytes();
    let sub = match fastjson::from_slice::<CheckClientRequestBody>(&body) {
        Ok(CheckClientRequestBody {
            subscription_data: Some(sub),
        }) => sub,
        _ => return Ok(ok(request)),
    };
    if sub.is_tag_type() {
        return Ok(ok(request));
    }
    if !ctx.config.enable_property_filter {
        let remark = format!(
            "The broker does not support consumer to filter message by {}",
            sub.expression_type
        );
        return Err(BrokerError::system(remark));
    }
    let compiled = if sub.expression_type == SQL92 {
        SqlFilter::compile_cached(&sub.sub_string).map(|_| ())
    } else {
        Err(FilterError::Invalid(format!(
            "unknown expression type {}",
            sub.expression_type
        )))
    };
    compiled.map_err(|e| {
        BrokerError::refused(ResponseCode::SUBSCRIPTION_PARSE_FAILED, e.to_string())
    })?;
    Ok(ok(request))
}

/// `CheckClientRequestBody`: `{"clientId":..,"group":..,"subscriptionData":{..}}`; only the
/// subscription matters here.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct CheckClientRequestBody {
    subscription_data: Option<SubscriptionData>,
}
