//! Lite topics (Java 5.5.0): LITE_SUBSCRIPTION_CTL (200071) and POP_LITE_MESSAGE (200070), as
//! Java's `LiteSubscriptionCtlProcessor` and `PopLiteMessageProcessor`. A lite topic is queue 0
//! of the LMQ `%LMQ%$<parent>$<lite>`; a client pops only the LMQs it was told have messages
//! (its events), each FIFO: one batch out per (group, LMQ) until acknowledged or its invisible
//! time ends, with no checkpoint and no retry topic (receipts name revive queue 999).

use std::sync::Arc;

use bytes::Bytes;

use super::{ok, read_header, success_with, ProcessorResult};
use crate::broker::error::BrokerError;
use crate::broker::pop::records::ORDER_REVIVE_QUEUE;
use crate::broker::BrokerContext;
use crate::common::subscription_group::SubscriptionGroupConfig;
use crate::common::topic::{is_readable, lite_lmq_name, TopicConfig};
use crate::remoting::body::lite::{LiteSubscriptionCtlRequestBody, OffsetOption};
use crate::remoting::command::Body;
use crate::remoting::header::pop_lite::{
    NotifyUnsubscribeLiteRequestHeader, PopLiteMessageRequestHeader, PopLiteMessageResponseHeader,
};
use crate::remoting::header::CommandHeader;
use crate::remoting::{RemotingCommand, RequestCode, ResponseCode};
use crate::server::Connection;
use crate::store::get::GetMessageStatus;

/// Topic attribute: the topic's message type (`LITE` for a lite parent).
pub const ATTR_MESSAGE_TYPE: &str = "message.type";
/// Topic attribute: minutes an idle lite topic lives (-1: forever).
pub const ATTR_LITE_EXPIRATION: &str = "lite.topic.expiration";
/// Group attributes (Java `SubscriptionGroupAttributes`).
pub const ATTR_LITE_BIND_TOPIC: &str = "lite.bind.topic";
pub const ATTR_LITE_SUB_MODEL: &str = "lite.sub.model";
pub const ATTR_LITE_RESET_EXCLUSIVE: &str = "lite.sub.reset.offset.exclusive";
pub const ATTR_LITE_RESET_UNSUBSCRIBE: &str = "lite.sub.reset.offset.unsubscribe";
pub const ATTR_LITE_MAX_EVENTS: &str = "lite.sub.client.max.event.cnt";

/// A topic or group attribute, stored with or without the `+` of the edit that set it.
fn attr<'a>(attrs: &'a std::collections::BTreeMap<String, String>, key: &str) -> Option<&'a str> {
    attrs
        .get(key)
        .or_else(|| attrs.get(&format!("+{key}")))
        .map(String::as_str)
}

pub fn is_lite_topic(tc: &TopicConfig) -> bool {
    attr(&tc.attributes, ATTR_MESSAGE_TYPE).is_some_and(|t| t.eq_ignore_ascii_case("LITE"))
}

/// The parent topic a lite group is bound to.
pub fn bind_topic(g: &SubscriptionGroupConfig) -> Option<&str> {
    attr(&g.attributes, ATTR_LITE_BIND_TOPIC).filter(|t| !t.is_empty())
}

fn group_flag(g: &SubscriptionGroupConfig, key: &str) -> bool {
    attr(&g.attributes, key).is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

fn is_exclusive(g: &SubscriptionGroupConfig) -> bool {
    attr(&g.attributes, ATTR_LITE_SUB_MODEL).is_some_and(|v| v == "Exclusive")
}

fn max_events(g: &SubscriptionGroupConfig) -> usize {
    attr(&g.attributes, ATTR_LITE_MAX_EVENTS)
        .and_then(|v| v.parse::<i64>().ok())
        .filter(|v| *v > 0)
        .map_or(crate::broker::lite::DEFAULT_MAX_CLIENT_EVENTS, |v| {
            v.min(1 << 20) as usize
        })
}

fn illegal(remark: impl Into<String>) -> BrokerError {
    BrokerError::refused(ResponseCode::ILLEGAL_OPERATION, remark)
}

pub async fn lite_subscription_ctl(
    ctx: &BrokerContext,
    conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let body = request.body.to_bytes();
    if body.is_empty() {
        return Err(illegal("Request body is null."));
    }
    let b = LiteSubscriptionCtlRequestBody::decode(&body)?;
    if b.subscription_set.is_empty() {
        return Err(illegal("LiteSubscriptionCtlRequestBody is empty."));
    }
    for e in &b.subscription_set {
        if e.client_id.trim().is_empty() || e.group.trim().is_empty() || e.topic.trim().is_empty() {
            tracing::warn!(client = %e.client_id, group = %e.group, topic = %e.topic, "lite subscription entry skipped: blank client, group or topic");
            continue;
        }
        let lmqs: Vec<String> = e
            .lite_topic_set
            .iter()
            .filter_map(|l| lite_lmq_name(&e.topic, l))
            .collect();
        match e.action.as_str() {
            "PARTIAL_ADD" | "COMPLETE_ADD" => {
                let complete = e.action == "COMPLETE_ADD";
                let g = consumable_group(ctx, &e.group)?;
                let max = ctx.config.max_lite_subscription_count;
                if !complete && ctx.lite.active() as i64 >= max {
                    return Err(BrokerError::refused(
                        ResponseCode::LITE_SUBSCRIPTION_QUOTA_EXCEEDED,
                        format!("LiteQuotaException: lite subscription quota exceeded {max}"),
                    ));
                }
                let exclusive = is_exclusive(&g);
                let reg = ctx.lite.subscribe(
                    &e.client_id,
                    &e.group,
                    &e.topic,
                    &lmqs,
                    conn,
                    max_events(&g),
                    exclusive,
                    complete,
                );
                for ev in reg.evicted {
                    if group_flag(&g, ATTR_LITE_RESET_EXCLUSIVE) {
                        reset_offset(ctx, &ev.lmq, &ev.group, Some(&min_policy()));
                    }
                    notify_unsubscribe(&ev);
                }
                if !complete {
                    for lmq in &lmqs {
                        reset_offset(ctx, lmq, &e.group, e.offset_option.as_ref());
                    }
                }
                for lmq in reg.added {
                    if ctx.store.max_offset_in_queue(&lmq, 0) > 0 {
                        ctx.lite_dispatch(Some(&e.group), &lmq, None);
                    }
                }
            }
            "PARTIAL_REMOVE" => {
                ctx.lite.unsubscribe(&e.client_id, &lmqs);
                let reset = ctx
                    .groups
                    .find(&e.group)
                    .is_some_and(|g| group_flag(&g, ATTR_LITE_RESET_UNSUBSCRIBE));
                if reset {
                    for lmq in &lmqs {
                        reset_offset(ctx, lmq, &e.group, Some(&min_policy()));
                    }
                }
            }
            "COMPLETE_REMOVE" => remove_client(ctx, &e.client_id),
            other => {
                return Err(BrokerError::refused(
                    ResponseCode::SYSTEM_ERROR,
                    format!("unknown lite subscription action {other:?}"),
                ))
            }
        }
    }
    Ok(ok(request))
}

/// Forgets a client; its pending events go to the other clients of its group (Java onRemoveAll).
pub fn remove_client(ctx: &BrokerContext, client_id: &str) {
    if let Some((group, events)) = ctx.lite.remove_client(client_id) {
        for lmq in events {
            ctx.lite_dispatch(Some(&group), &lmq, Some(client_id));
        }
    }
}

fn min_policy() -> OffsetOption {
    OffsetOption {
        kind: "POLICY".into(),
        value: 1,
    }
}

/// Java `LiteMetadataUtil.isConsumeEnable`: the group exists and may consume.
fn consumable_group(
    ctx: &BrokerContext,
    group: &str,
) -> Result<Arc<SubscriptionGroupConfig>, BrokerError> {
    match ctx.groups.find(group) {
        Some(g) if g.consume_enable => Ok(g),
        _ => Err(illegal(
            "java.lang.IllegalStateException: Consumer group is not allowed to consume.",
        )),
    }
}

/// Java `resetOffset`: POLICY 1 → 0, POLICY 2 → the queue's max, OFFSET → its value, TAIL_N →
/// that many before the committed offset (only when there is one); TIMESTAMP is ignored. A
/// change is applied at the next pop and drops the queue's FIFO state.
fn reset_offset(ctx: &BrokerContext, lmq: &str, group: &str, option: Option<&OffsetOption>) {
    let Some(o) = option else { return };
    let current = ctx.offsets.query(group, lmq, 0).unwrap_or(-1);
    let target = match o.kind.as_str() {
        "POLICY" if o.value == 1 => Some(0),
        "POLICY" if o.value == 2 => Some(ctx.store.max_offset_in_queue(lmq, 0)),
        "OFFSET" => Some(o.value),
        "TAIL_N" if current >= 0 => Some((current - o.value).max(0)),
        _ => None,
    };
    if let Some(t) = target.filter(|t| *t != current) {
        ctx.offsets
            .request_reset(group, lmq, &std::collections::HashMap::from([(0, t)]));
        ctx.lite.order.clear_block(lmq, group, 0);
    }
}

/// NOTIFY_UNSUBSCRIBE_LITE (oneway) to a client that lost a lite topic.
fn notify_unsubscribe(ev: &crate::broker::lite::Evicted) {
    let Some(conn) = &ev.conn else {
        tracing::warn!(client = %ev.client_id, lmq = %ev.lmq, "lite topic taken from a client with no channel: not notified");
        return;
    };
    let lite = crate::common::topic::lite_parent_and_topic(&ev.lmq)
        .map(|(_, l)| l.to_string())
        .unwrap_or_default();
    let mut cmd = RemotingCommand::request(RequestCode::NOTIFY_UNSUBSCRIBE_LITE.code());
    NotifyUnsubscribeLiteRequestHeader {
        lite_topic: lite,
        consumer_group: ev.group.clone(),
        client_id: ev.client_id.clone(),
    }
    .write_to(cmd.ext_mut());
    conn.invoke_oneway(cmd);
}

/// What one POP_LITE read.
#[derive(Default)]
struct LiteRound {
    messages: Vec<Bytes>,
    order_count_info: Vec<String>,
    /// The pop time the order info recorded for these messages: the response's `popTime`, which
    /// the client's acks carry back (a held request pops again, at a later time).
    pop_time: i64,
}

pub async fn pop_lite_message(
    ctx: &BrokerContext,
    conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let mut h: PopLiteMessageRequestHeader = read_header(request)?;
    let now = crate::broker::now_millis();
    if h.born_time == 0 {
        h.born_time = now;
    }
    check(ctx, &h, now)?;
    let pop_time = crate::broker::now_millis();
    let mut round = pop_round(ctx, &h, pop_time);
    if round.messages.is_empty() && h.poll_time > 0 {
        let wait_ms = h
            .born_time
            .saturating_add(h.poll_time)
            .saturating_sub(50 + now)
            .clamp(0, 300_000);
        if wait_ms > 0 {
            let deadline =
                tokio::time::Instant::now() + std::time::Duration::from_millis(wait_ms as u64);
            round = ctx
                .lite
                .hold
                .hold(&h.client_id, 0, deadline, || {
                    if conn.is_closed() {
                        return Ok(LiteRound {
                            pop_time,
                            ..LiteRound::default()
                        });
                    }
                    let r = pop_round(ctx, &h, crate::broker::now_millis());
                    if r.messages.is_empty() {
                        Err(r)
                    } else {
                        Ok(r)
                    }
                })
                .await;
        }
    }
    if conn.is_closed() {
        return Err(BrokerError::NoResponse);
    }
    let header = PopLiteMessageResponseHeader {
        pop_time: round.pop_time,
        invisible_time: h.invisible_time,
        revive_qid: ORDER_REVIVE_QUEUE,
        order_count_info: Some(round.order_count_info.join(";")),
    };
    if round.messages.is_empty() {
        let mut r = success_with(request, header);
        r.code = ResponseCode::POLLING_TIMEOUT.code();
        r.remark = Some("NO_MESSAGE_IN_QUEUE".to_string());
        return Ok(r);
    }
    let n = round.messages.len() as u64;
    let bytes: u64 = round.messages.iter().map(|m| m.len() as u64).sum();
    ctx.stats
        .got(&h.consumer_group, &h.topic, n, bytes, now_ms_since(now));
    ctx.metrics
        .message_out(&h.consumer_group, &h.topic, n, bytes);
    let mut r = success_with(request, header);
    r.remark = Some("FOUND".to_string());
    let mut body = Body::default();
    for m in round.messages {
        body.push(m);
    }
    r.body = body;
    Ok(r)
}

fn now_ms_since(t: i64) -> u64 {
    (crate::broker::now_millis() - t).max(0) as u64
}

/// Java's `preCheck`, in its order.
fn check(
    ctx: &BrokerContext,
    h: &PopLiteMessageRequestHeader,
    now: i64,
) -> Result<(), BrokerError> {
    let ip = &ctx.config.broker_ip1;
    if now - h.born_time.saturating_add(h.poll_time) > 500 {
        return Err(BrokerError::refused(
            ResponseCode::POLLING_TIMEOUT,
            format!("the broker[{ip}] pop message is timeout too much"),
        ));
    }
    if !is_readable(ctx.broker_permission()) {
        return Err(BrokerError::refused(
            ResponseCode::NO_PERMISSION,
            format!("the broker[{ip}] pop message is forbidden"),
        ));
    }
    if h.max_msg_num > 32 {
        return Err(BrokerError::refused(
            ResponseCode::INVALID_PARAMETER,
            format!("the broker[{ip}] pop message's num is greater than 32"),
        ));
    }
    let Some(tc) = ctx.topics.select(&h.topic) else {
        return Err(BrokerError::refused(
            ResponseCode::TOPIC_NOT_EXIST,
            format!(
                "topic [{}] not exist, apply first please! http://rocketmq.apache.org/docs/faq/",
                h.topic
            ),
        ));
    };
    if !is_readable(tc.perm) {
        return Err(BrokerError::refused(
            ResponseCode::NO_PERMISSION,
            format!("the topic [{}] peeking message is forbidden", h.topic),
        ));
    }
    if !is_lite_topic(&tc) {
        return Err(BrokerError::refused(
            ResponseCode::INVALID_PARAMETER,
            format!("the topic [{}] message type not match", h.topic),
        ));
    }
    let g = ctx.groups.find_or_create(&h.consumer_group)?;
    if !g.consume_enable {
        return Err(BrokerError::refused(
            ResponseCode::NO_PERMISSION,
            format!("subscription group no permission, {}", h.consumer_group),
        ));
    }
    if bind_topic(&g) != Some(h.topic.as_str()) {
        return Err(BrokerError::refused(
            ResponseCode::INVALID_PARAMETER,
            format!("subscription bind topic not match, {}", h.consumer_group),
        ));
    }
    Ok(())
}

/// Java `popByClientId`: the client's events, each LMQ once, until `maxMsgNum` are read.
fn pop_round(ctx: &BrokerContext, h: &PopLiteMessageRequestHeader, pop_time: i64) -> LiteRound {
    let mut round = LiteRound {
        pop_time,
        ..LiteRound::default()
    };
    let max = h.max_msg_num.max(1) as usize;
    let mut seen = std::collections::HashSet::new();
    while round.messages.len() < max {
        let Some(lmq) = ctx.lite.next_event(&h.client_id, pop_time) else {
            break;
        };
        if !seen.insert(lmq.clone()) {
            continue;
        }
        pop_lmq(
            ctx,
            h,
            &lmq,
            max - round.messages.len(),
            pop_time,
            &mut round,
        );
    }
    round
}

/// Java `popLiteTopic` for one LMQ: under its (group, LMQ) lock, unless FIFO-blocked, from the
/// group's offset (init MAX, a pending reset first).
fn pop_lmq(
    ctx: &BrokerContext,
    h: &PopLiteMessageRequestHeader,
    lmq: &str,
    max: usize,
    pop_time: i64,
    round: &mut LiteRound,
) {
    let group = &h.consumer_group;
    let Some(_lock) = ctx.pop.try_lock(lmq, group, 0) else {
        return;
    };
    let attempt = h.attempt_id.as_deref();
    if ctx
        .lite
        .order
        .check_block(attempt, lmq, group, 0, h.invisible_time, pop_time)
    {
        if let Some(at) = ctx.lite.order.lock_free_at(lmq, group, 0, pop_time) {
            ctx.lite.wake_when_free(group, lmq, at);
        }
        return;
    }
    let mut offset = super::pop_message::pop_offset(ctx, lmq, group, 0, 1);
    if let Some(reset) = ctx.offsets.take_reset(group, lmq, 0) {
        ctx.lite.order.clear_block(lmq, group, 0);
        ctx.offsets.commit(group, lmq, 0, reset);
        offset = reset;
    }
    let mut result = ctx
        .store
        .get_message(lmq, 0, offset, max as i32, i32::MAX, None);
    use GetMessageStatus::*;
    if matches!(
        result.status,
        OFFSET_TOO_SMALL
            | OFFSET_OVERFLOW_BADLY
            | OFFSET_FOUND_NULL
            | NO_MATCHED_MESSAGE
            | MESSAGE_WAS_REMOVING
            | NO_MATCHED_LOGIC_QUEUE
    ) {
        offset = result.next_begin_offset;
        ctx.offsets.commit(group, lmq, 0, offset);
        result = ctx
            .store
            .get_message(lmq, 0, offset, max as i32, i32::MAX, None);
    }
    if result.status != FOUND || result.messages.is_empty() {
        return;
    }
    let mut info = String::new();
    ctx.lite.order.update(
        h.attempt_id.as_deref(),
        lmq,
        group,
        0,
        pop_time,
        h.invisible_time,
        &result.queue_offsets,
        pop_time,
        &mut info,
    );
    // what is not acknowledged in time comes back: the group is told when the block ends
    ctx.lite
        .wake_when_free(group, lmq, pop_time.saturating_add(h.invisible_time));
    round
        .order_count_info
        .extend(per_message_counts(&info, result.messages.len()));
    round.messages.extend(result.messages);
}

/// Java `transformOrderCountInfo`: one consume count per message. The order info lists
/// `<mark> qo<q>%<offset> <n>` per redelivered offset and then `<mark> <q> <min>` for the queue;
/// the per-offset entries are kept, a lone queue entry gives its count to every message.
fn per_message_counts(info: &str, n: usize) -> Vec<String> {
    let parts: Vec<&str> = info.split(';').filter(|p| !p.is_empty()).collect();
    match parts.len() {
        0 => vec!["0".to_string(); n],
        1 => {
            let f: Vec<&str> = parts[0].split(' ').collect();
            let count = if f.len() == 3 { f[2] } else { "0" };
            vec![count.to_string(); n]
        }
        k => parts[..k - 1].iter().map(|p| p.to_string()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_counts_are_per_message_as_java_transforms_them() {
        assert_eq!(per_message_counts("", 3), ["0", "0", "0"]);
        assert_eq!(per_message_counts("0 0 0", 2), ["0", "0"]);
        assert_eq!(
            per_message_counts("0 qo0%5 1;0 qo0%6 1;0 0 1", 2),
            ["0 qo0%5 1", "0 qo0%6 1"]
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The lite admin codes (Java 5.5 `LiteManagerProcessor`, mqadmin's lite subcommands).

/// Java's `ClientGroup`.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ClientGroup {
    client_id: String,
    group: String,
}

fn body_answer(request: &RemotingCommand, v: &impl serde::Serialize) -> ProcessorResult {
    let bytes = crate::remoting::body::fastjson::to_vec(v)?;
    Ok(ok(request).with_body(bytes))
}

fn refused(code: ResponseCode, remark: String) -> BrokerError {
    BrokerError::refused(code, remark)
}

/// A LITE parent topic, or Java's 17 / 29 answers.
fn lite_parent(ctx: &BrokerContext, topic: &str) -> Result<Arc<TopicConfig>, BrokerError> {
    let tc = ctx.topics.select(topic).ok_or_else(|| {
        refused(
            ResponseCode::TOPIC_NOT_EXIST,
            format!("Topic [{topic}] not exist."),
        )
    })?;
    if !is_lite_topic(&tc) {
        return Err(refused(
            ResponseCode::INVALID_PARAMETER,
            format!("Topic [{topic}] type not match."),
        ));
    }
    Ok(tc)
}

/// A lite group, or Java's 26 / 29 answers.
fn lite_group(
    ctx: &BrokerContext,
    group: &str,
) -> Result<(Arc<SubscriptionGroupConfig>, String), BrokerError> {
    let g = ctx.groups.find(group).ok_or_else(|| {
        refused(
            ResponseCode::SUBSCRIPTION_GROUP_NOT_EXIST,
            format!("Group [{group}] not exist."),
        )
    })?;
    let bind = bind_topic(&g).map(str::to_string).ok_or_else(|| {
        refused(
            ResponseCode::INVALID_PARAMETER,
            format!("Group [{group}] is not a LITE group."),
        )
    })?;
    Ok((g, bind))
}

fn expiration(tc: &TopicConfig) -> i64 {
    attr(&tc.attributes, ATTR_LITE_EXPIRATION)
        .and_then(|v| v.parse().ok())
        .unwrap_or(-1)
}

/// LITE parent → its lite groups (Java `getSubscriberGroupMap`).
fn groups_by_parent(ctx: &BrokerContext) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut m: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for g in ctx.groups.all() {
        if let Some(t) = bind_topic(&g) {
            m.entry(t.to_string())
                .or_default()
                .push(g.group_name.clone());
        }
    }
    m
}

pub fn get_broker_lite_info(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let topic_meta: std::collections::BTreeMap<String, i64> = ctx
        .topics
        .all()
        .iter()
        .filter(|tc| is_lite_topic(tc))
        .map(|tc| (tc.topic_name.clone(), expiration(tc)))
        .collect();
    let (clients, _) = ctx.lite.sizes();
    let cfg = ctx.store.config();
    body_answer(
        request,
        &serde_json::json!({
            "storeType": cfg.store_type,
            "maxLmqNum": cfg.max_lmq_consume_queue_num,
            // with the LMQs named by puts not dispatched yet, as the quota counts them
            "currentLmqNum": ctx.store.lmq_count_named(),
            "liteSubscriptionCount": ctx.lite.active(),
            "orderInfoCount": ctx.lite.order.len(),
            "cqTableSize": ctx.store.queue_topic_count(),
            "offsetTableSize": ctx.offsets.len(),
            "eventMapSize": clients,
            "topicMeta": topic_meta,
            "groupMeta": groups_by_parent(ctx),
        }),
    )
}

pub fn get_parent_topic_info(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let topic = request.ext("topic").unwrap_or_default().to_string();
    let tc = lite_parent(ctx, &topic)?;
    let prefix = format!("{}{topic}$", crate::common::topic::LITE_TOPIC_PREFIX);
    let mut lite_topics = 0;
    ctx.store.for_each_topic_with_prefix(&prefix, |_, _| {
        lite_topics += 1;
        std::ops::ControlFlow::Continue(())
    });
    body_answer(
        request,
        &serde_json::json!({
            "topic": topic,
            "ttl": expiration(&tc),
            "groups": groups_by_parent(ctx).remove(&topic),
            "lmqNum": ctx.store.lmq_count(),
            "liteTopicCount": lite_topics,
        }),
    )
}

pub fn get_lite_topic_info(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let parent = request.ext("parentTopic").unwrap_or_default().to_string();
    let lite = request.ext("liteTopic").unwrap_or_default().to_string();
    lite_parent(ctx, &parent)?;
    let lmq = lite_lmq_name(&parent, &lite).unwrap_or_default();
    let max = ctx.store.max_offset_in_queue(&lmq, 0);
    let (min, last) = if max > 0 {
        (
            ctx.store.min_offset_in_queue(&lmq, 0).max(0),
            ctx.store.message_store_timestamp(&lmq, 0, max - 1),
        )
    } else {
        (0, 0)
    };
    let subscriber: Vec<ClientGroup> = ctx
        .lite
        .subscribers(&lmq)
        .into_iter()
        .map(|(client_id, group)| ClientGroup { client_id, group })
        .collect();
    body_answer(
        request,
        &serde_json::json!({
            "parentTopic": parent,
            "liteTopic": lite,
            "subscriber": subscriber,
            "topicOffset": {"minOffset": min, "maxOffset": max.max(0), "lastUpdateTimestamp": last},
            // one broker serves every lite topic of its parent's queues (rmqd does not shard)
            "shardingToBroker": true,
        }),
    )
}

pub fn get_lite_client_info(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let parent = request.ext("parentTopic").unwrap_or_default().to_string();
    let group = request.ext("group").unwrap_or_default().to_string();
    let client = request.ext("clientId").unwrap_or_default().to_string();
    let max_count = request
        .ext("maxCount")
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(1000)
        .min(10_000);
    lite_parent(ctx, &parent)?;
    let g = ctx.groups.find(&group).ok_or_else(|| {
        refused(
            ResponseCode::SUBSCRIPTION_GROUP_NOT_EXIST,
            format!("Group [{group}] not exist."),
        )
    })?;
    if bind_topic(&g) != Some(parent.as_str()) {
        return Err(refused(
            ResponseCode::INVALID_PARAMETER,
            format!("Subscription [{group}]-[{parent}] not match."),
        ));
    }
    let (count, set, last_access) = match ctx.lite.subscription(&client) {
        Some((_, _, lmqs, last)) => {
            let n = lmqs.len() as i64;
            (
                n,
                Some(lmqs.into_iter().take(max_count).collect::<Vec<_>>()),
                last,
            )
        }
        None => (-1, None, 0),
    };
    body_answer(
        request,
        &serde_json::json!({
            "parentTopic": parent,
            "group": group,
            "clientId": client,
            "lastAccessTime": last_access,
            "lastConsumeTime": 0,
            "liteTopicCount": count,
            "liteTopicSet": set,
        }),
    )
}

pub fn get_lite_group_info(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let group = request.ext("group").unwrap_or_default().to_string();
    let lite = request
        .ext("liteTopic")
        .map(str::to_string)
        .filter(|l| !l.is_empty());
    let (_, bind) = lite_group(ctx, &group)?;
    let mut body = serde_json::json!({
        "group": group,
        "parentTopic": bind,
        "liteTopic": lite,
        "earliestUnconsumedTimestamp": -1,
        "totalLagCount": 0,
    });
    match &lite {
        // the lag top-K needs the lite lag calculator (liteLagLatencyCollectEnable, off by
        // default in Java too): empty lists
        None => {
            body["lagCountTopK"] = serde_json::json!([]);
            body["lagTimestampTopK"] = serde_json::json!([]);
        }
        Some(lite) => {
            let lmq = lite_lmq_name(&bind, lite).unwrap_or_default();
            let max = ctx.store.max_offset_in_queue(&lmq, 0);
            if max > 0 {
                if let Some(committed) = ctx.offsets.query(&group, &lmq, 0).filter(|c| *c >= 0) {
                    body["totalLagCount"] = (max - committed).into();
                    body["earliestUnconsumedTimestamp"] =
                        ctx.store.message_store_timestamp(&lmq, 0, committed).into();
                    let last = if committed >= 1 {
                        ctx.store.message_store_timestamp(&lmq, 0, committed - 1)
                    } else {
                        0
                    };
                    body["liteTopicOffsetWrapper"] = serde_json::json!({
                        "brokerOffset": max, "consumerOffset": committed,
                        "pullOffset": 0, "lastTimestamp": last,
                    });
                }
            } else {
                body["totalLagCount"] = (-1).into();
            }
        }
    }
    body_answer(request, &body)
}

pub fn trigger_lite_dispatch(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let group = request.ext("group").unwrap_or_default().to_string();
    lite_group(ctx, &group)?;
    let clients = match request.ext("clientId").filter(|c| !c.is_empty()) {
        Some(c) => vec![c.to_string()],
        None => ctx.lite.clients_of(&group),
    };
    for client in clients {
        full_dispatch(ctx, &client, &group);
    }
    Ok(ok(request))
}

/// Java `doFullDispatchForClient`: every subscribed lite queue with messages the group has not
/// consumed is offered to the client.
fn full_dispatch(ctx: &BrokerContext, client: &str, group: &str) {
    let Some((_, _, lmqs, _)) = ctx.lite.subscription(client) else {
        return;
    };
    let mut offered = false;
    for lmq in lmqs {
        let max = ctx.store.max_offset_in_queue(&lmq, 0);
        let committed = ctx.offsets.query(group, &lmq, 0).unwrap_or(-1);
        if max > 0 && committed < max && ctx.lite.offer(client, &lmq) {
            offered = true;
        }
    }
    if offered {
        ctx.lite.hold.notify_arrival(client, 0);
    }
}
