//! Re-puts of stored messages: a consumer's send-back (to `%RETRY%group` through a delay level,
//! or to `%DLQ%group`), a delay level or a timer coming due (back to REAL_TOPIC / REAL_QID), and
//! the transaction records (commit, op, put-back and discard of a half message).

use std::net::SocketAddr;

use bytes::Bytes;

use super::client::create_send_back_topic;
use super::{random_queue, Draft};
use crate::broker::error::BrokerError;
use crate::broker::schedule_message_service::transform_delay_level;
use crate::broker::transaction::{op_body, op_properties, StoredMessage};
use crate::broker::BrokerContext;
use crate::common::message::{
    reset_transaction_value, PROPERTY_DELAY_TIME_LEVEL, PROPERTY_ORIGIN_MESSAGE_ID,
    PROPERTY_REAL_QUEUE_ID, PROPERTY_REAL_TOPIC, PROPERTY_RETRY_TOPIC, PROPERTY_TIMER_DEQUEUE_MS,
    PROPERTY_TIMER_ENQUEUE_MS, PROPERTY_WAIT_STORE_MSG_OK,
};
use crate::common::properties::Properties;
use crate::common::topic::{self, RMQ_SYS_TRANS_OP_HALF_TOPIC};
use crate::store::message::{decode_record, offset_msg_id, sysflag, MessageInput, RecordView};
use crate::store::MessageStore;

/// Java `MixAll.DLQ_NUMS_PER_GROUP`.
const DLQ_NUMS_PER_GROUP: i32 = 1;

/// Decodes the record stored at `phys_offset` and hands it to `f` (`None`: no record there).
pub fn with_record<T>(
    store: &MessageStore,
    phys_offset: i64,
    f: impl FnOnce(&RecordView<'_>) -> T,
) -> Option<T> {
    let bytes = store.lookup_message_by_offset(phys_offset)?;
    decode_record(&bytes).map(|rec| f(&rec))
}

/// What CONSUMER_SEND_MSG_BACK decided before the message is looked up.
pub struct SendBack<'a> {
    pub group: &'a str,
    /// Java `commitLogOffset`: the message consumed.
    pub offset: i64,
    /// 0: `3 + reconsumeTimes`; < 0: straight to the DLQ.
    pub delay_level: i32,
    pub retry_queue_nums: i32,
    pub max_reconsume_times: i32,
}

/// Java `consumerSendMsgBack`'s message: the original at `offset` with RETRY_TOPIC, ORIGIN_MSG_ID
/// and WAIT=false, to the DLQ once reconsumed `max_reconsume_times` times (or asked to), else to
/// the retry topic through its delay level; reconsume times one more.
pub fn send_back(ctx: &BrokerContext, sb: &SendBack<'_>) -> Result<MessageInput, BrokerError> {
    let found = with_record(&ctx.store, sb.offset, |rec| {
        let origin_id = offset_msg_id(&rec.store_host, rec.phys_offset);
        let props = Properties::decode_bytes(rec.properties);
        (Draft::from_record(rec, ctx.store_host), props, origin_id)
    });
    let Some((mut msg, mut props, origin_id)) = found else {
        return Err(BrokerError::system(format!(
            "look message by offset failed, {}",
            sb.offset
        )));
    };
    if !props.contains(PROPERTY_RETRY_TOPIC) {
        props.insert(PROPERTY_RETRY_TOPIC, msg.topic.clone());
    }
    props.insert(PROPERTY_WAIT_STORE_MSG_OK, "false");
    if msg.reconsume_times >= sb.max_reconsume_times || sb.delay_level < 0 {
        let dlq = topic::dlq_topic(sb.group);
        create_send_back_topic(ctx, &dlq, DLQ_NUMS_PER_GROUP, 0)?;
        props.insert(PROPERTY_DELAY_TIME_LEVEL, "0");
        (msg.topic, msg.queue_id) = (dlq, 0);
        tracing::info!(group = %sb.group, topic = %msg.topic, "message sent back to DLQ");
    } else {
        let level = match sb.delay_level {
            0 => 3 + msg.reconsume_times,
            l => l,
        };
        props.insert(PROPERTY_DELAY_TIME_LEVEL, level.to_string());
        msg.topic = topic::retry_topic(sb.group);
        msg.queue_id = random_queue(sb.retry_queue_nums);
    }
    if props
        .get(PROPERTY_ORIGIN_MESSAGE_ID)
        .is_none_or(|v| v.trim().is_empty())
    {
        props.insert(PROPERTY_ORIGIN_MESSAGE_ID, origin_id);
    }
    msg.reconsume_times += 1;
    let max_level = ctx.schedule.max_level();
    if let Some(moved) = transform_delay_level(
        &mut props,
        &msg.topic,
        msg.queue_id,
        msg.sys_flag,
        max_level,
    ) {
        (msg.topic, msg.queue_id) = moved;
    }
    Ok(msg.with_properties(&props))
}

/// Java `ScheduleMessageService.messageTimeUp`: a delayed record put back to REAL_TOPIC /
/// REAL_QID, its properties exactly as stored. `None` without them.
pub fn delay_due(rec: &RecordView<'_>) -> Option<MessageInput> {
    let props = Properties::decode_bytes(rec.properties);
    let topic = props.get(PROPERTY_REAL_TOPIC)?.to_string();
    let queue_id = props.get(PROPERTY_REAL_QUEUE_ID)?.parse().ok()?;
    let mut msg = Draft::from_record(rec, rec.store_host);
    (msg.topic, msg.queue_id) = (topic, queue_id);
    Some(msg.with_raw_properties(String::from_utf8_lossy(rec.properties).into_owned()))
}

/// Java `TimerMessageStore.convert`: a timer record put back to REAL_TOPIC / REAL_QID with
/// TIMER_ENQUEUE_MS (its store time) and TIMER_DEQUEUE_MS (`now`). `None` without them. The stored
/// properties keep REAL_TOPIC and REAL_QID, as Java 5.3.3's `convertMessage` writes its
/// properties string before it clears them (seen in the revive records of its POP golden).
pub fn timer_due(rec: &RecordView<'_>, now: i64) -> Option<MessageInput> {
    let mut props = Properties::decode_bytes(rec.properties);
    let topic = props.get(PROPERTY_REAL_TOPIC)?.to_string();
    let queue_id = props.get(PROPERTY_REAL_QUEUE_ID)?.parse().ok()?;
    props.insert(PROPERTY_TIMER_ENQUEUE_MS, rec.store_timestamp.to_string());
    props.insert(PROPERTY_TIMER_DEQUEUE_MS, now.to_string());
    let mut msg = Draft::from_record(rec, rec.store_host);
    (msg.topic, msg.queue_id) = (topic, queue_id);
    Some(msg.with_properties(&props))
}

/// A transaction message put as it is to `topic`/`queue_id` (a half message put back to its
/// queue, or discarded to TRANS_CHECK_MAX_TIME_TOPIC).
pub fn transaction_copy(msg: &StoredMessage, topic: &str, queue_id: i32) -> MessageInput {
    Draft {
        topic: topic.to_string(),
        queue_id,
        flag: msg.flag,
        sys_flag: msg.sys_flag & !(sysflag::BORNHOST_V6 | sysflag::STOREHOST_V6),
        body: msg.body.clone(),
        born_timestamp: msg.born_timestamp,
        born_host: msg.born_host,
        store_host: msg.store_host,
        reconsume_times: msg.reconsume_times,
        prepared_transaction_offset: msg.prepared_transaction_offset,
    }
    .with_properties(&msg.props)
}

/// Java `endMessageTransaction`: the committed message for the real topic and queue. Its
/// stored properties are the half message's unchanged (Java clears REAL_TOPIC, REAL_QID and
/// TRAN_MSG only from the property map after the properties string was built, so its
/// committed records keep them); the transaction type becomes `commit_or_rollback` and the
/// prepared offset points at the half message.
pub fn transaction_commit(
    half: &StoredMessage,
    commit_or_rollback: i32,
    commit_log_offset: i64,
) -> MessageInput {
    let topic = half.props.get(PROPERTY_REAL_TOPIC).unwrap_or("");
    let queue_id = half
        .props
        .get(PROPERTY_REAL_QUEUE_ID)
        .and_then(|q| q.trim().parse::<i32>().ok())
        .unwrap_or(0);
    let mut msg = transaction_copy(half, topic, queue_id);
    msg.sys_flag = reset_transaction_value(msg.sys_flag, commit_or_rollback);
    msg.prepared_transaction_offset = commit_log_offset;
    msg
}

/// The op record (Java `makeOpMessageInner`) finishing the half message at
/// `half_queue_offset` of half queue `half_queue_id`.
pub fn transaction_op(
    store_host: SocketAddr,
    half_queue_id: i32,
    half_queue_offset: i64,
) -> MessageInput {
    Draft {
        topic: RMQ_SYS_TRANS_OP_HALF_TOPIC.to_string(),
        queue_id: half_queue_id,
        flag: 0,
        sys_flag: 0,
        body: Bytes::from(op_body(half_queue_offset)),
        born_timestamp: crate::broker::now_millis(),
        born_host: store_host,
        store_host,
        reconsume_times: 0,
        prepared_transaction_offset: 0,
    }
    .with_raw_properties(op_properties())
}

/// A POP checkpoint or ack record for revive queue `revive_qid` (Java `buildCkMsg` / the ack
/// processor's message): tag `tag`, the JSON `body`, UNIQ_KEY `uniq_key`, TIMER_DELIVER_MS
/// `deliver_ms`, so that it reaches the revive queue through the timer when that time is ahead.
pub fn pop_revive_record(
    ctx: &BrokerContext,
    revive_qid: i32,
    tag: &str,
    body: String,
    uniq_key: String,
    deliver_ms: i64,
) -> Result<MessageInput, BrokerError> {
    use crate::broker::timer_message_service::transform_timer;
    use crate::common::message::{
        PROPERTY_TAGS, PROPERTY_TIMER_DELIVER_MS, PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
    };
    let now = crate::broker::now_millis();
    let mut props = Properties::default();
    props.insert(PROPERTY_TAGS, tag);
    props.insert(PROPERTY_TIMER_DELIVER_MS, deliver_ms.to_string());
    props.insert(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, uniq_key);
    let mut msg = Draft {
        topic: crate::common::topic::REVIVE_LOG_PREFIX.to_string()
            + &ctx.config.broker_cluster_name,
        queue_id: revive_qid,
        flag: 0,
        sys_flag: 0,
        body: Bytes::from(body),
        born_timestamp: now,
        born_host: ctx.store_host,
        store_host: ctx.store_host,
        reconsume_times: 0,
        prepared_transaction_offset: 0,
    };
    match transform_timer(
        &mut props,
        &msg.topic,
        revive_qid,
        0,
        now,
        ctx.store.config(),
    ) {
        Ok(Some(moved)) => (msg.topic, msg.queue_id) = moved,
        Ok(None) => {}
        Err(refusal) => return Err(BrokerError::system(refusal.remark())),
    }
    Ok(msg.with_properties(&props))
}

/// Java `PopReviveService.reviveRetry`: a popped message nobody acknowledged, put to queue 0 of
/// `retry_topic` with one more reconsume time and `1ST_POP_TIME` (the checkpoint's pop time)
/// when it is the first retry; every original property kept.
pub fn pop_retry(
    rec: &RecordView<'_>,
    retry_topic: &str,
    pop_time: i64,
    store_host: SocketAddr,
) -> MessageInput {
    use crate::common::message::PROPERTY_FIRST_POP_TIME;
    let mut props = Properties::decode_bytes(rec.properties);
    if rec.reconsume_times == 0 || !props.contains(PROPERTY_FIRST_POP_TIME) {
        props.insert(PROPERTY_FIRST_POP_TIME, pop_time.to_string());
    }
    let mut msg = Draft::from_record(rec, store_host);
    msg.topic = retry_topic.to_string();
    msg.queue_id = 0;
    msg.born_host = store_host;
    msg.reconsume_times = rec.reconsume_times + 1;
    msg.with_properties(&props)
}
