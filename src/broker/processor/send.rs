//! SEND_MESSAGE (10), SEND_MESSAGE_V2 (310), SEND_BATCH_MESSAGE (320): check the topic, queue,
//! size and permissions as Java's `AbstractSendMessageProcessor.msgCheck` does, build the record
//! and append it; answer with the offset msgId, queue and queue offset.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use crate::broker::error::BrokerError;
use crate::broker::processor::consumer_send_msg_back::{create_send_back_topic, V3_4_9};
use crate::broker::schedule_message_service::transform_delay_level;
use crate::broker::timer_message_service::{transform_timer, TimerRefusal};
use crate::broker::transaction::to_half_message;
use crate::broker::BrokerContext;
use crate::common::message::{
    MULTI_TAGS_FLAG, PROPERTY_CLUSTER, PROPERTY_DELAY_TIME_LEVEL, PROPERTY_MSG_REGION,
    PROPERTY_TAGS, PROPERTY_TRACE_SWITCH, PROPERTY_TRANSACTION_PREPARED,
    PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
};
use crate::common::properties::Properties as MessageProperties;
use crate::common::tag::tag_hash;
use crate::common::topic::{self, is_writeable, TopicConfig, PERM_READ, PERM_WRITE};
use crate::remoting::header::send_message::SendMessageRequestHeader;
use crate::remoting::header::send_message_response::SendMessageResponseHeader;
use crate::remoting::header::CommandHeader;
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::server::Connection;
use crate::store::message::{MessageBatchInput, MessageInput, PutMessageStatus};
use crate::store::util::find_property;

/// Java's cap on the properties string (stored as int16).
const MAX_PROPERTIES_LENGTH: usize = i16::MAX as usize;
const FAQ_TOPIC_NOT_EXIST: &str =
    "\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.";

pub async fn send_message(
    ctx: &BrokerContext,
    conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> super::ProcessorResult {
    let header = match SendMessageRequestHeader::read_for_code(
        request.code,
        request.ext_fields.as_ref().unwrap_or(&Default::default()),
    ) {
        Ok(h) => h,
        Err(e) => {
            return Ok(with_trace_keys(
                ctx,
                BrokerError::from(e).into_response(request),
            ))
        }
    };
    let response = match check_and_put(ctx, conn, request, &header).await {
        Ok(r) | Err(r) => r,
    };
    Ok(with_trace_keys(ctx, response))
}

/// Every response of the send processor carries MSG_REGION and TRACE_ON, as Java's does.
pub(crate) fn with_trace_keys(
    ctx: &BrokerContext,
    mut response: RemotingCommand,
) -> RemotingCommand {
    let ext = response.ext_mut();
    ext.insert(PROPERTY_MSG_REGION, ctx.region_id());
    ext.insert(PROPERTY_TRACE_SWITCH, ctx.trace_on());
    response
}

/// Java's `buildMsgContext` puts MSG_REGION and TRACE_ON into the properties of every message
/// sent (and of a batch's own properties, which it appends to each inner message), so consumers
/// read them back and the stored record carries them. Added where the properties are decoded
/// anyway, so a send decodes and encodes them once.
fn add_region_and_trace(ctx: &BrokerContext, props: &mut MessageProperties) {
    props.insert(PROPERTY_MSG_REGION, ctx.region_id());
    props.insert(PROPERTY_TRACE_SWITCH, ctx.trace_on());
}

/// [`add_region_and_trace`] on a header's properties string (a reply is pushed from it too).
pub(crate) fn stamp_region_and_trace(ctx: &BrokerContext, properties: &mut Option<String>) {
    let mut props = MessageProperties::decode(properties.as_deref().unwrap_or(""));
    add_region_and_trace(ctx, &mut props);
    *properties = Some(props.encode());
}

fn refuse(
    request: &RemotingCommand,
    code: ResponseCode,
    remark: impl Into<String>,
) -> RemotingCommand {
    BrokerError::refused(code, remark).into_response(request)
}

async fn check_and_put(
    ctx: &BrokerContext,
    conn: &Connection,
    request: &RemotingCommand,
    header: &SendMessageRequestHeader,
) -> Result<RemotingCommand, RemotingCommand> {
    let tc = check_message(ctx, conn, request, header)?;
    let mut queue_id = header.queue_id;
    if queue_id < 0 {
        queue_id = random_queue(tc.write_queue_nums);
    }
    let mut sys_flag = header.sys_flag;
    if tc.topic_filter_type == "MULTI_TAG" {
        sys_flag |= MULTI_TAGS_FLAG;
    }
    let born_host = conn.peer;
    let mut transaction_id = None;
    let handle = if header.is_batch() {
        if topic::is_retry_topic(&header.topic) {
            return Err(refuse(
                request,
                ResponseCode::MESSAGE_ILLEGAL,
                format!(
                    "batch request does not support retry group {}",
                    header.topic
                ),
            ));
        }
        let batch = MessageBatchInput {
            topic: header.topic.clone(),
            queue_id,
            sys_flag,
            body: request.body.to_bytes(),
            batch_properties: batch_properties(ctx, header),
            born_timestamp: header.born_timestamp,
            born_host,
            store_host: ctx.store_host,
            reconsume_times: header.reconsume_times.unwrap_or(0),
        };
        ctx.store.put_messages(&batch)
    } else {
        let msg = build_message(ctx, request, header, queue_id, sys_flag, born_host)?;
        transaction_id = find_property(
            msg.properties.as_bytes(),
            PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
        )
        .map(|v| String::from_utf8_lossy(v).into_owned());
        ctx.store.put_message(&msg)
    };
    let result = handle.wait().await;
    Ok(put_result_response(
        ctx,
        request,
        result,
        queue_id,
        transaction_id,
    ))
}

/// Java `msgCheck` plus the topic lookup/auto-creation; `Err` is the refusal to send back.
pub(crate) fn check_message(
    ctx: &BrokerContext,
    conn: &Connection,
    request: &RemotingCommand,
    header: &SendMessageRequestHeader,
) -> Result<Arc<TopicConfig>, RemotingCommand> {
    let broker_perm = ctx.broker_permission();
    if !is_writeable(broker_perm) {
        return Err(refuse(
            request,
            ResponseCode::NO_PERMISSION,
            format!(
                "the broker[{}] sending message is forbidden",
                ctx.config.broker_ip1
            ),
        ));
    }
    if let Err(e) = topic::validate_topic(&header.topic) {
        return Err(refuse(
            request,
            ResponseCode::INVALID_PARAMETER,
            e.to_string(),
        ));
    }
    if topic::is_not_allowed_send_topic(&header.topic) {
        return Err(refuse(
            request,
            ResponseCode::NO_PERMISSION,
            format!("Sending message to topic[{}] is forbidden.", header.topic),
        ));
    }
    let tc = lookup_or_create_topic(ctx, conn, header).map_err(|e| e.into_response(request))?;
    let Some(tc) = tc else {
        return Err(refuse(
            request,
            ResponseCode::TOPIC_NOT_EXIST,
            format!(
                "topic[{}] not exist, apply first please!{FAQ_TOPIC_NOT_EXIST}",
                header.topic
            ),
        ));
    };
    let limit = tc.write_queue_nums.max(tc.read_queue_nums);
    if header.queue_id >= limit {
        return Err(refuse(
            request,
            ResponseCode::INVALID_PARAMETER,
            format!(
                "request queueId[{}] is illegal, {:?} Producer: {}",
                header.queue_id, *tc, conn.peer
            ),
        ));
    }
    if !is_writeable(tc.perm) {
        return Err(refuse(
            request,
            ResponseCode::NO_PERMISSION,
            format!("the topic[{}] sending message is forbidden", header.topic),
        ));
    }
    Ok(tc)
}

fn lookup_or_create_topic(
    ctx: &BrokerContext,
    conn: &Connection,
    header: &SendMessageRequestHeader,
) -> Result<Option<Arc<TopicConfig>>, BrokerError> {
    if let Some(tc) = ctx.topics.select(&header.topic) {
        return Ok(Some(tc));
    }
    let created = if topic::is_retry_topic(&header.topic) {
        Some(
            ctx.topics
                .create_if_absent(&header.topic, 1, PERM_READ | PERM_WRITE, 0)?,
        )
    } else {
        let sys_flag = if header.unit_mode.unwrap_or(false) {
            1
        } else {
            0
        };
        ctx.topics.create_from_template(
            &header.topic,
            &header.default_topic,
            header.default_topic_queue_nums,
            sys_flag,
        )?
    };
    if let Some(tc) = &created {
        tracing::info!(topic = %tc.topic_name, queues = tc.write_queue_nums, producer = %conn.peer, "topic auto-created");
        ctx.register_to_namesrv_soon();
    }
    Ok(created)
}

/// The batch's own properties (the header's, plus CLUSTER), which Java 5.x appends to every
/// inner message's properties when it stores a classic batch.
fn batch_properties(ctx: &BrokerContext, header: &SendMessageRequestHeader) -> String {
    let mut props = MessageProperties::decode(header.properties.as_deref().unwrap_or(""));
    add_region_and_trace(ctx, &mut props);
    props.insert(PROPERTY_CLUSTER, ctx.config.broker_cluster_name.clone());
    props.encode()
}

fn build_message(
    ctx: &BrokerContext,
    request: &RemotingCommand,
    header: &SendMessageRequestHeader,
    queue_id: i32,
    sys_flag: i32,
    born_host: SocketAddr,
) -> Result<MessageInput, RemotingCommand> {
    let body = request.body.to_bytes();
    let max = ctx.store.config().max_message_size as usize;
    let mut props = MessageProperties::decode(header.properties.as_deref().unwrap_or(""));
    add_region_and_trace(ctx, &mut props);
    if !props.contains(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) {
        props.insert(
            PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
            new_uniq_id(ctx.store_host),
        );
    }
    props.insert(PROPERTY_CLUSTER, ctx.config.broker_cluster_name.clone());
    let (mut topic, mut queue_id) = (header.topic.clone(), queue_id);
    if topic::is_retry_topic(&topic) {
        if let Some(dlq) = retry_to_dlq(ctx, request, header, &mut props)? {
            (topic, queue_id) = (dlq, 0);
        }
    }
    let mut sys_flag = sys_flag;
    if is_prepared(&props, header) {
        if ctx.config.reject_transaction_message {
            return Err(refuse(
                request,
                ResponseCode::NO_PERMISSION,
                format!(
                    "the broker[{}] sending transaction message is forbidden",
                    ctx.config.broker_ip1
                ),
            ));
        }
        (topic, queue_id, sys_flag) = to_half_message(&mut props, &topic, queue_id, sys_flag);
    } else {
        // Java HookUtils.handleScheduleMessage: an accurate timer, else a delay level
        let timer = transform_timer(
            &mut props,
            &topic,
            queue_id,
            sys_flag,
            crate::broker::now_millis(),
            ctx.store.config(),
        );
        match timer {
            Ok(Some((t, q))) => (topic, queue_id) = (t, q),
            Ok(None) => {
                if let Some((t, q)) = transform_delay_level(
                    &mut props,
                    &topic,
                    queue_id,
                    sys_flag,
                    ctx.schedule.max_level(),
                ) {
                    (topic, queue_id) = (t, q);
                }
            }
            Err(refusal) => {
                let code = match refusal {
                    TimerRefusal::NotEnabled => ResponseCode::SYSTEM_ERROR,
                    TimerRefusal::Illegal { .. } => ResponseCode::MESSAGE_ILLEGAL,
                };
                return Err(refuse(request, code, refusal.remark()));
            }
        }
    }
    let properties = props.encode();
    if body.len() > max || properties.len() > MAX_PROPERTIES_LENGTH {
        return Err(refuse(
            request,
            ResponseCode::MESSAGE_ILLEGAL,
            format!(
                "the message is illegal, maybe msg body or properties length not matched. msg body length limit {max}B, msg properties length limit 32KB."
            ),
        ));
    }
    let tags_code = props.get(PROPERTY_TAGS).map(tag_hash).unwrap_or(0);
    Ok(MessageInput {
        topic,
        queue_id,
        flag: header.flag,
        sys_flag,
        body,
        properties,
        tags_code,
        born_timestamp: header.born_timestamp,
        born_host,
        store_host: ctx.store_host,
        reconsume_times: header.reconsume_times.unwrap_or(0),
        prepared_transaction_offset: 0,
    })
}

/// Java's test for a prepared (half) message: TRAN_MSG is `true` (any case), except for the
/// retry sends of clients before 4.6.1 that carried it along with a delay level.
fn is_prepared(props: &MessageProperties, header: &SendMessageRequestHeader) -> bool {
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
    props: &mut MessageProperties,
) -> Result<Option<String>, RemotingCommand> {
    let group = &header.topic[topic::RETRY_GROUP_TOPIC_PREFIX.len()..];
    let Ok(config) = ctx.groups.find_or_create(group) else {
        return Err(refuse(
            request,
            ResponseCode::SUBSCRIPTION_GROUP_NOT_EXIST,
            format!("subscription group not exist, {group} {FAQ_TOPIC_NOT_EXIST}"),
        ));
    };
    let mut max_times = config.retry_max_times;
    if request.version >= V3_4_9 {
        if let Some(t) = header.max_reconsume_times {
            max_times = t;
        }
    }
    let times = header.reconsume_times.unwrap_or(0);
    let orderly = !ctx.locks.is_lock_all_expired(group);
    if times <= max_times && !orderly {
        return Ok(None);
    }
    let dlq = topic::dlq_topic(group);
    create_send_back_topic(ctx, &dlq, 1, 0).map_err(|e| e.into_response(request))?;
    props.insert(PROPERTY_DELAY_TIME_LEVEL, "0");
    tracing::info!(%group, reconsume_times = times, max_times, orderly, "retry message sent to DLQ");
    Ok(Some(dlq))
}

/// Java `handlePutMessageResult`: the store's status as a response code and remark; the
/// header carries the offset msgId, the queue asked for (a half message's real queue) and,
/// as Java's `transactionId`, the message's UNIQ_KEY.
fn put_result_response(
    ctx: &BrokerContext,
    request: &RemotingCommand,
    result: crate::store::message::PutMessageResult,
    queue_id: i32,
    transaction_id: Option<String>,
) -> RemotingCommand {
    use PutMessageStatus::*;
    let (code, remark) = match result.status {
        PUT_OK => (ResponseCode::SUCCESS, None),
        FLUSH_DISK_TIMEOUT => (ResponseCode::FLUSH_DISK_TIMEOUT, None),
        FLUSH_SLAVE_TIMEOUT => (ResponseCode::FLUSH_SLAVE_TIMEOUT, None),
        SLAVE_NOT_AVAILABLE => (ResponseCode::SLAVE_NOT_AVAILABLE, None),
        CREATE_MAPPED_FILE_FAILED => (ResponseCode::SYSTEM_ERROR, Some("create mapped file failed, server is busy or broken.".to_string())),
        MESSAGE_ILLEGAL | PROPERTIES_SIZE_EXCEEDED => (
            ResponseCode::MESSAGE_ILLEGAL,
            Some(format!(
                "the message is illegal, maybe msg body or properties length not matched. msg body length limit {}B, msg properties length limit 32KB.",
                ctx.store.config().max_message_size
            )),
        ),
        SERVICE_NOT_AVAILABLE => (
            ResponseCode::SERVICE_NOT_AVAILABLE,
            Some("service not available now. It may be caused by one of the following reasons: the broker's disk is full, messages are put to the slave, message store has been shut down, etc.".to_string()),
        ),
        OS_PAGE_CACHE_BUSY => (ResponseCode::SYSTEM_BUSY, Some("[PC_SYNCHRONIZED]broker busy, start flow control for a while".to_string())),
        UNKNOWN_ERROR => (ResponseCode::SYSTEM_ERROR, Some("UNKNOWN_ERROR".to_string())),
    };
    let mut response = RemotingCommand::response_to(request, code.code(), remark);
    if let Some(append) = result.append.filter(|_| {
        matches!(
            code,
            ResponseCode::SUCCESS
                | ResponseCode::FLUSH_DISK_TIMEOUT
                | ResponseCode::FLUSH_SLAVE_TIMEOUT
                | ResponseCode::SLAVE_NOT_AVAILABLE
        )
    }) {
        let header = SendMessageResponseHeader {
            msg_id: append.msg_id,
            queue_id,
            queue_offset: append.logics_offset,
            transaction_id,
            ..Default::default()
        };
        header.write_to(response.ext_mut());
    }
    response
}

pub(crate) fn random_queue(write_queue_nums: i32) -> i32 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = write_queue_nums.max(1) as u32;
    (NEXT.fetch_add(1, Ordering::Relaxed) % n) as i32
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
