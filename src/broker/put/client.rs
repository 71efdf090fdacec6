//! Messages a client sends: SEND_MESSAGE (one message, made a half message, a timer, a delayed
//! or a DLQ message as Java's `SendMessageProcessor` decides), SEND_BATCH_MESSAGE and
//! SEND_REPLY_MESSAGE. The properties string is decoded once, here.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use super::check::group_not_exist;
use super::Draft;
use crate::broker::error::BrokerError;
use crate::broker::schedule_message_service::transform_delay_level;
use crate::broker::timer_message_service::{timer_delete_key, transform_timer, TimerRefusal};
use crate::broker::transaction::to_half_message;
use crate::broker::BrokerContext;
use crate::common::message::{
    PROPERTY_BORN_TIMESTAMP, PROPERTY_CLUSTER, PROPERTY_DELAY_TIME_LEVEL,
    PROPERTY_INNER_MULTI_DISPATCH, PROPERTY_LITE_TOPIC, PROPERTY_MSG_REGION,
    PROPERTY_PRODUCER_GROUP, PROPERTY_REAL_TOPIC, PROPERTY_TAGS, PROPERTY_TIMER_DELIVER_MS,
    PROPERTY_TIMER_DEL_UNIQKEY, PROPERTY_TIMER_OUT_MS, PROPERTY_TRACE_CONTEXT,
    PROPERTY_TRACE_SWITCH, PROPERTY_TRANSACTION_PREPARED, PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
};
use crate::common::properties::{Properties, MAX_PROPERTIES_LENGTH};
use crate::common::recall_handle::RecallHandle;
use crate::common::topic::{self, TopicConfig, PERM_READ, PERM_WRITE};
use crate::remoting::header::send_message::SendMessageRequestHeader;
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::store::message::{MessageBatchInput, MessageInput};

/// Java `MQVersion.Version.V3_4_9.ordinal()`: from this client version on, the header's
/// maxReconsumeTimes overrides the group's retryMaxTimes.
pub const V3_4_9: i32 = 121;

/// Where a send goes and with which sysflag, once the topic check chose the queue.
pub struct Target {
    pub queue_id: i32,
    pub sys_flag: i32,
    pub born_host: SocketAddr,
}

/// The message header, body and target as the client sent them (no properties yet).
fn draft(
    ctx: &BrokerContext,
    request: &RemotingCommand,
    header: &SendMessageRequestHeader,
    target: &Target,
) -> Draft {
    Draft {
        topic: header.topic.clone(),
        queue_id: target.queue_id,
        flag: header.flag,
        sys_flag: target.sys_flag,
        body: request.body.to_bytes(),
        born_timestamp: header.born_timestamp,
        born_host: target.born_host,
        store_host: ctx.store_host,
        reconsume_times: header.reconsume_times.unwrap_or(0),
        prepared_transaction_offset: 0,
    }
}

/// Java's `buildMsgContext` puts MSG_REGION and TRACE_ON into the properties of every message
/// sent (and of a batch's own properties, which it appends to each inner message), so consumers
/// read them back and the stored record carries them.
fn add_region_and_trace(ctx: &BrokerContext, props: &mut Properties) {
    props.insert(PROPERTY_MSG_REGION, ctx.region_id());
    props.insert(PROPERTY_TRACE_SWITCH, ctx.trace_on());
}

/// The header's properties with MSG_REGION and TRACE_ON (a reply is pushed and stored with them).
pub fn stamp_region_and_trace(ctx: &BrokerContext, properties: &mut Option<String>) {
    let mut props = Properties::decode(properties.as_deref().unwrap_or(""));
    add_region_and_trace(ctx, &mut props);
    *properties = Some(props.encode());
}

/// A message to store and what its send answers besides the offsets.
pub struct Prepared {
    pub msg: MessageInput,
    /// UNIQ_KEY (Java's `transactionId` in the answer).
    pub uniq_key: String,
    /// A timer message's recall handle (Java `attachRecallHandle`).
    pub recall_handle: Option<String>,
}

/// SEND_MESSAGE: the message to store, after Java's `handleRetryAndDLQ`, the transaction check
/// and `HookUtils.handleScheduleMessage` (accurate timer, else delay level), and its UNIQ_KEY
/// (the response's transactionId).
pub fn send_message(
    ctx: &BrokerContext,
    request: &RemotingCommand,
    header: &SendMessageRequestHeader,
    target: &Target,
) -> Result<Prepared, BrokerError> {
    let mut msg = draft(ctx, request, header, target);
    let mut props = Properties::decode(header.properties.as_deref().unwrap_or(""));
    add_region_and_trace(ctx, &mut props);
    if !props.contains(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) {
        props.insert(
            PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
            new_uniq_id(ctx.store_host),
        );
    }
    // Java 5.5 lite topics: a send naming `__LITE_TOPIC` is dispatched into the lite topic's LMQ
    // `%LMQ%$<topic>$<lite>` (whatever the topic's message type)
    if let Some(lmq) = props
        .get(PROPERTY_LITE_TOPIC)
        .and_then(|lite| topic::lite_lmq_name(&header.topic, lite))
    {
        props.insert(PROPERTY_INNER_MULTI_DISPATCH, lmq);
    }
    props.insert(PROPERTY_CLUSTER, ctx.config.broker_cluster_name.clone());
    if topic::is_retry_topic(&msg.topic) {
        if let Some(dlq) = retry_to_dlq(ctx, request, header, &mut props)? {
            (msg.topic, msg.queue_id) = (dlq, 0);
        }
    }
    if is_prepared(&props, header) {
        if ctx.config.reject_transaction_message {
            return Err(BrokerError::refused(
                ResponseCode::NO_PERMISSION,
                format!(
                    "the broker[{}] sending transaction message is forbidden",
                    ctx.config.broker_ip1
                ),
            ));
        }
        (msg.topic, msg.queue_id, msg.sys_flag) =
            to_half_message(&mut props, &msg.topic, msg.queue_id, msg.sys_flag);
    } else {
        schedule(ctx, &mut msg, &mut props)?;
    }
    let uniq_key = props
        .get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
        .unwrap_or_default()
        .to_string();
    let recall_handle = recall_handle(ctx, &props, &uniq_key);
    let input = msg.with_properties(&props);
    check_sizes(ctx, &input)?;
    check_lmq_quota(ctx, &input)?;
    Ok(Prepared {
        msg: input,
        uniq_key,
        recall_handle,
    })
}

/// Java `attachRecallHandle`: a message stored as a timer (`TIMER_OUT_MS` and `REAL_TOPIC`; not
/// a retry) is answered with the handle that recalls it. A `TIMER_OUT_MS` that is no number
/// gives none (Java fails the send on it after storing the message).
fn recall_handle(ctx: &BrokerContext, props: &Properties, uniq_key: &str) -> Option<String> {
    let out = props.get(PROPERTY_TIMER_OUT_MS)?.parse::<i64>().ok()?;
    let real_topic = props.get(PROPERTY_REAL_TOPIC)?;
    if topic::is_retry_topic(real_topic) {
        return None;
    }
    let handle = RecallHandle {
        topic: real_topic.to_string(),
        broker_name: ctx.config.broker_name.clone(),
        timestamp: out.saturating_add(1).to_string(), // rounds down into the same slot
        message_id: uniq_key.to_string(),
    };
    Some(handle.encode())
}

/// RECALL_MESSAGE: Java `RecallMessageProcessor.buildMessage`, a delete marker for the timer
/// message `handle` names. It carries the message's UNIQ_KEY and `TIMER_DEL_UNIQKEY` =
/// `<topic>+<UNIQ_KEY>` and is timed for the handle's timestamp, so it is stored in the timer
/// queue for the same slot. Refused as a timer (past or too far) when the time is not valid.
pub fn recall_marker(
    ctx: &BrokerContext,
    handle: &RecallHandle,
    producer_group: Option<&str>,
    born_host: SocketAddr,
) -> Result<MessageInput, BrokerError> {
    let now = crate::broker::now_millis();
    let mut msg = Draft {
        topic: handle.topic.clone(),
        queue_id: 0,
        flag: 0,
        sys_flag: 0,
        body: bytes::Bytes::from_static(b"0"),
        born_timestamp: now,
        born_host,
        store_host: ctx.store_host,
        reconsume_times: 0,
        prepared_transaction_offset: 0,
    };
    let mut props = Properties::new();
    props.insert(PROPERTY_TAGS, RECALL_TAG);
    props.insert(
        PROPERTY_TIMER_DEL_UNIQKEY,
        timer_delete_key(&handle.topic, &handle.message_id),
    );
    props.insert(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, &handle.message_id);
    props.insert(PROPERTY_TIMER_DELIVER_MS, &handle.timestamp);
    props.insert(PROPERTY_BORN_TIMESTAMP, now.to_string());
    props.insert(PROPERTY_TRACE_CONTEXT, "");
    if let Some(group) = producer_group {
        props.insert(PROPERTY_PRODUCER_GROUP, group);
    }
    schedule(ctx, &mut msg, &mut props)?;
    Ok(msg.with_properties(&props))
}

/// The TAGS of a recall's delete marker (Java `RECALL_MESSAGE_TAG`).
pub const RECALL_TAG: &str = "_RECALL_TAG_";

/// Java 5.5 `HookUtils.handleLmqQuota`: with `enableLmqQuota` (and LMQ multi-dispatch on), a
/// message naming an LMQ that does not exist yet is refused once `maxLmqConsumeQueueNum` exist.
fn check_lmq_quota(ctx: &BrokerContext, msg: &MessageInput) -> Result<(), BrokerError> {
    let cfg = ctx.store.config();
    if !(cfg.enable_lmq_quota && cfg.enable_lmq && cfg.enable_multi_dispatch) {
        return Ok(());
    }
    let Some(names) = crate::store::lmq::dispatch_names(&msg.topic, msg.properties.as_bytes())
    else {
        return Ok(());
    };
    // Java counts the queues dispatch has made, so back-to-back sends pass its quota by as many
    // as dispatch is behind; rmqd also counts the LMQs named by puts not dispatched yet
    let full = ctx.store.lmq_count_named() as i64 >= cfg.max_lmq_consume_queue_num;
    if full
        && names
            .split(',')
            .any(|n| topic::is_lmq(n) && !ctx.store.lmq_named(n))
    {
        return Err(BrokerError::refused(
            ResponseCode::LMQ_QUOTA_EXCEEDED,
            "[LMQ_CONSUME_QUEUE_NUM_EXCEEDED]lmq consume queue num exceeded.",
        ));
    }
    Ok(())
}

/// Java `HookUtils.handleScheduleMessage`: an accurate timer, else a delay level, moves the
/// message to its system topic.
fn schedule(
    ctx: &BrokerContext,
    msg: &mut Draft,
    props: &mut Properties,
) -> Result<(), BrokerError> {
    let now = crate::broker::now_millis();
    let timer = transform_timer(
        props,
        &msg.topic,
        msg.queue_id,
        msg.sys_flag,
        now,
        ctx.store.config(),
    );
    let moved = match timer {
        Ok(Some(moved)) => Some(moved),
        Ok(None) => transform_delay_level(
            props,
            &msg.topic,
            msg.queue_id,
            msg.sys_flag,
            ctx.schedule.max_level(),
        ),
        Err(refusal) => {
            let code = match refusal {
                TimerRefusal::NotEnabled => ResponseCode::SYSTEM_ERROR,
                TimerRefusal::Illegal { .. } => ResponseCode::MESSAGE_ILLEGAL,
            };
            return Err(BrokerError::refused(code, refusal.remark()));
        }
    };
    if let Some((t, q)) = moved {
        (msg.topic, msg.queue_id) = (t, q);
    }
    Ok(())
}

/// Java `msgCheck`'s body and properties limits, with its remark.
fn check_sizes(ctx: &BrokerContext, msg: &MessageInput) -> Result<(), BrokerError> {
    let max = ctx.store.config().max_message_size as usize;
    if msg.body.len() > max || msg.properties.len() > MAX_PROPERTIES_LENGTH {
        return Err(BrokerError::refused(
            ResponseCode::MESSAGE_ILLEGAL,
            format!(
                "the message is illegal, maybe msg body or properties length not matched. msg body length limit {max}B, msg properties length limit 32KB."
            ),
        ));
    }
    Ok(())
}

/// SEND_BATCH_MESSAGE: the batch with its own properties (the header's, plus MSG_REGION,
/// TRACE_ON and CLUSTER), which Java 5.x appends to every inner message's properties.
pub fn batch(
    ctx: &BrokerContext,
    request: &RemotingCommand,
    header: &SendMessageRequestHeader,
    target: &Target,
) -> Result<MessageBatchInput, BrokerError> {
    if topic::is_retry_topic(&header.topic) {
        return Err(BrokerError::refused(
            ResponseCode::MESSAGE_ILLEGAL,
            format!(
                "batch request does not support retry group {}",
                header.topic
            ),
        ));
    }
    let mut props = Properties::decode(header.properties.as_deref().unwrap_or(""));
    add_region_and_trace(ctx, &mut props);
    props.insert(PROPERTY_CLUSTER, ctx.config.broker_cluster_name.clone());
    Ok(MessageBatchInput {
        topic: header.topic.clone(),
        queue_id: target.queue_id,
        sys_flag: target.sys_flag,
        body: request.body.to_bytes(),
        batch_properties: props.encode(),
        born_timestamp: header.born_timestamp,
        born_host: target.born_host,
        store_host: ctx.store_host,
        reconsume_times: header.reconsume_times.unwrap_or(0),
    })
}

/// SEND_REPLY_MESSAGE with `storeReplyMessageEnable`: the reply as stored, its properties exactly
/// as sent (already stamped with MSG_REGION / TRACE_ON).
pub fn reply(
    ctx: &BrokerContext,
    request: &RemotingCommand,
    header: &SendMessageRequestHeader,
    target: &Target,
) -> MessageInput {
    draft(ctx, request, header, target)
        .with_raw_properties(header.properties.clone().unwrap_or_default())
}

/// Java's test for a prepared (half) message: TRAN_MSG is `true` (any case), except for the
/// retry sends of clients before 4.6.1 that carried it along with a delay level.
fn is_prepared(props: &Properties, header: &SendMessageRequestHeader) -> bool {
    let tran = props
        .get(PROPERTY_TRANSACTION_PREPARED)
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let delay = props
        .get(PROPERTY_DELAY_TIME_LEVEL)
        .and_then(|l| l.trim().parse::<i32>().ok())
        .unwrap_or(0);
    tran && !(header.reconsume_times.unwrap_or(0) > 0 && delay > 0)
}

/// Java `handleRetryAndDLQ`: a send to `%RETRY%group` whose reconsume times exceed the group's
/// (or the header's) maximum, or of an orderly group holding queue locks, goes to `%DLQ%group`.
/// `Some(dlq topic)` when redirected.
fn retry_to_dlq(
    ctx: &BrokerContext,
    request: &RemotingCommand,
    header: &SendMessageRequestHeader,
    props: &mut Properties,
) -> Result<Option<String>, BrokerError> {
    let group = &header.topic[topic::RETRY_GROUP_TOPIC_PREFIX.len()..];
    let Ok(config) = ctx.groups.find_or_create(group) else {
        return Err(group_not_exist(group));
    };
    let max_times =
        max_reconsume_times(config.retry_max_times, request, header.max_reconsume_times);
    let times = header.reconsume_times.unwrap_or(0);
    let orderly = !ctx.locks.is_lock_all_expired(group);
    if times <= max_times && !orderly {
        return Ok(None);
    }
    // Java counts it here, labelled with the producer group and the retry topic
    ctx.metrics
        .sent_to_dlq(&header.producer_group, &header.topic);
    let dlq = topic::dlq_topic(group);
    create_send_back_topic(ctx, &dlq, 1, 0)?;
    props.insert(PROPERTY_DELAY_TIME_LEVEL, "0");
    tracing::info!(%group, reconsume_times = times, max_times, orderly, "retry message sent to DLQ");
    Ok(Some(dlq))
}

/// The group's retryMaxTimes, or the header's maxReconsumeTimes from client V3_4_9 on.
pub fn max_reconsume_times(
    group_max: i32,
    request: &RemotingCommand,
    header_max: Option<i32>,
) -> i32 {
    match header_max {
        Some(t) if request.version >= V3_4_9 => t,
        _ => group_max,
    }
}

/// Java `createTopicInSendMessageBackMethod`: retry and DLQ topics are made on first use (read and
/// write) and registered with the NameServers at once.
pub fn create_send_back_topic(
    ctx: &BrokerContext,
    name: &str,
    queue_nums: i32,
    sys_flag: i32,
) -> Result<Arc<TopicConfig>, BrokerError> {
    if let Some(tc) = ctx.topics.select(name) {
        return Ok(tc);
    }
    let tc = ctx
        .topics
        .create_if_absent(name, queue_nums, PERM_READ | PERM_WRITE, sys_flag)
        .map_err(|e| BrokerError::system(format!("topic[{name}] not exist: {e}")))?;
    tracing::info!(topic = name, queues = queue_nums, "send-back topic created");
    ctx.register_to_namesrv_soon();
    Ok(tc)
}

/// A unique message id in the shape of Java's `MessageClientIDSetter` (32 hex digits: host,
/// process id, start time, counter) for messages that arrive without UNIQ_KEY.
fn new_uniq_id(host: SocketAddr) -> String {
    static START: OnceLock<(u32, u128)> = OnceLock::new();
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let (pid, start) = *START.get_or_init(|| {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        (std::process::id(), now)
    });
    let ip: [u8; 4] = match host {
        SocketAddr::V4(a) => a.ip().octets(),
        SocketAddr::V6(a) => {
            let o = a.ip().octets();
            [o[12], o[13], o[14], o[15]]
        }
    };
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(
        "{:08X}{:04X}{:08X}{:08X}{:04X}",
        u32::from_be_bytes(ip),
        pid as u16,
        start as u32,
        (start >> 32) as u32 ^ n,
        n as u16
    )
}
