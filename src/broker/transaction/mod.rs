//! Transactional messages as the Java 5.x broker keeps them (`TransactionalMessageBridge`,
//! `TransactionalMessageUtil`): a half message is stored in `RMQ_SYS_TRANS_HALF_TOPIC` queue 0
//! with its real topic and queue in REAL_TOPIC / REAL_QID and its transaction bits cleared, so
//! no consumer of the real topic sees it. END_TRANSACTION re-puts a committed one to its real
//! topic; commit and rollback both write an op record to `RMQ_SYS_TRANS_OP_HALF_TOPIC` (same
//! queue id as the half queue) whose tag is `d` and whose body lists the finished half-queue
//! offsets, each followed by a comma. The check service (`check_service.rs`) reads both queues
//! with the consumer group `CID_RMQ_SYS_TRANS`, whose offsets live in `consumerOffset.json`,
//! so a Java broker started on the same store carries on with the same state.
//!
//! ```text
//! half record:  topic RMQ_SYS_TRANS_HALF_TOPIC, queue 0, sysflag & 0xC = 0,
//!               properties += REAL_TOPIC, REAL_QID, __transactionId__ (= UNIQ_KEY)
//! op record:    topic RMQ_SYS_TRANS_OP_HALF_TOPIC, queue = half queue, sysflag 0,
//!               properties TAGS=d WAIT=true, body "17,18,"
//! ```

mod check_listener;
pub mod check_service;
pub mod counts;

use std::net::SocketAddr;

use bytes::Bytes;

use crate::broker::put::stored::{transaction_op, with_record};
use crate::broker::BrokerContext;
use crate::common::message::{
    PROPERTY_REAL_QUEUE_ID, PROPERTY_REAL_TOPIC, PROPERTY_TAGS, PROPERTY_TRANSACTION_ID,
    PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, PROPERTY_WAIT_STORE_MSG_OK,
};
use crate::common::properties::Properties;
use crate::common::topic::RMQ_SYS_TRANS_HALF_TOPIC;
use crate::store::message::{
    decode_record, encode_record, offset_msg_id, sysflag, PutMessageResult, RecordHeader,
    RecordView,
};
use crate::store::MessageStore;

/// Java `TransactionalMessageUtil.REMOVE_TAG`: the tag of every op record.
pub const REMOVE_TAG: &str = "d";
/// Separates (and terminates) the half-queue offsets in an op record's body.
pub const OFFSET_SEPARATOR: char = ',';

/// Java `parseHalfMessageInner`: rewrites a prepared message into the half message to store.
/// Records the real topic and queue (and the transaction id = UNIQ_KEY) in the properties and
/// answers the half topic, queue 0 and the sysflag with its transaction bits cleared.
pub fn to_half_message(
    props: &mut Properties,
    topic: &str,
    queue_id: i32,
    sys_flag: i32,
) -> (String, i32, i32) {
    if let Some(uniq) = props
        .get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
        .filter(|u| !u.is_empty())
    {
        let uniq = uniq.to_string();
        props.insert(PROPERTY_TRANSACTION_ID, uniq);
    }
    props.insert(PROPERTY_REAL_TOPIC, topic);
    props.insert(PROPERTY_REAL_QUEUE_ID, queue_id.to_string());
    let flag = (sys_flag & !sysflag::TRANSACTION_MASK) | sysflag::TRANSACTION_NOT_TYPE;
    (RMQ_SYS_TRANS_HALF_TOPIC.to_string(), 0, flag)
}

/// The body of an op record finishing the half message at `half_queue_offset` (`"17,"`).
pub fn op_body(half_queue_offset: i64) -> String {
    format!("{half_queue_offset}{OFFSET_SEPARATOR}")
}

/// The half-queue offsets an op record's body lists; an entry that is not a number reads as -1,
/// as Java's `getLong` does. Empty entries (after the last comma) are not entries.
pub fn parse_op_body(body: &[u8]) -> Vec<i64> {
    String::from_utf8_lossy(body)
        .split(OFFSET_SEPARATOR)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim().parse::<i64>().unwrap_or(-1))
        .collect()
}

/// The properties Java stores on an op record (`new Message(opTopic, "d", body)`).
pub fn op_properties() -> String {
    let mut p = Properties::new();
    p.insert(PROPERTY_TAGS, REMOVE_TAG);
    p.insert(PROPERTY_WAIT_STORE_MSG_OK, "true");
    p.encode()
}

/// Java `TransactionalMessageUtil.getImmunityTime` (END_TRANSACTION's rule): the property in
/// seconds, never less than `transaction_timeout` ms.
pub fn immunity_time_for_end(check_immunity_secs: &str, transaction_timeout: i64) -> i64 {
    let ms = check_immunity_secs
        .trim()
        .parse::<i64>()
        .map(|s| s.saturating_mul(1000))
        .unwrap_or(0);
    ms.max(transaction_timeout)
}

/// Java `TransactionalMessageServiceImpl.getImmunityTime` (the check's rule): the property in
/// seconds, or `transaction_timeout` ms when it is not a number.
pub fn immunity_time_for_check(check_immunity_secs: &str, transaction_timeout: i64) -> i64 {
    match check_immunity_secs.trim().parse::<i64>() {
        Ok(-1) | Err(_) => transaction_timeout,
        Ok(s) => s.saturating_mul(1000),
    }
}

/// A stored record, owned, with its properties decoded (Java `MessageExt` as the transaction
/// code uses it).
#[derive(Debug, Clone)]
pub struct StoredMessage {
    pub topic: String,
    pub queue_id: i32,
    pub flag: i32,
    pub sys_flag: i32,
    pub queue_offset: i64,
    pub phys_offset: i64,
    pub born_timestamp: i64,
    pub born_host: SocketAddr,
    pub store_timestamp: i64,
    pub store_host: SocketAddr,
    pub reconsume_times: i32,
    pub prepared_transaction_offset: i64,
    pub body: Bytes,
    pub props: Properties,
}

impl StoredMessage {
    pub fn from_record(rec: &RecordView<'_>) -> Self {
        Self {
            topic: rec.topic_str().to_string(),
            queue_id: rec.queue_id,
            flag: rec.flag,
            sys_flag: rec.sys_flag,
            queue_offset: rec.queue_offset,
            phys_offset: rec.phys_offset,
            born_timestamp: rec.born_timestamp,
            born_host: rec.born_host,
            store_timestamp: rec.store_timestamp,
            store_host: rec.store_host,
            reconsume_times: rec.reconsume_times,
            prepared_transaction_offset: rec.prepared_transaction_offset,
            body: Bytes::copy_from_slice(rec.body),
            props: Properties::decode_bytes(rec.properties),
        }
    }

    /// The offset message id of this record (`MessageExt.getMsgId()` of a decoded record).
    pub fn offset_msg_id(&self) -> String {
        offset_msg_id(&self.store_host, self.phys_offset)
    }

    /// Java `MessageDecoder.encode(msgExt, false)` of the message as the check-back carries it:
    /// one record in the commit-log layout under `topic`/`queue_id`, with this message's queue
    /// offset, physical offset and store timestamp.
    pub fn encode_as(&self, topic: &str, queue_id: i32) -> Vec<u8> {
        let props = self.props.encode();
        let header = RecordHeader {
            queue_id,
            flag: self.flag,
            sys_flag: self.sys_flag,
            born_timestamp: self.born_timestamp,
            born_host: &self.born_host,
            store_host: &self.store_host,
            reconsume_times: self.reconsume_times,
            prepared_transaction_offset: self.prepared_transaction_offset,
        };
        // Properties over 32 KiB cannot have been stored in the first place.
        encode_record(
            &header,
            &self.body,
            topic,
            &props,
            self.queue_offset,
            self.phys_offset,
            self.store_timestamp,
        )
        .unwrap_or_default()
    }
}

/// One whole record (as a pull or a lookup returns it), decoded and owned.
pub fn decode_stored(bytes: &[u8]) -> Option<StoredMessage> {
    decode_record(bytes).map(|rec| StoredMessage::from_record(&rec))
}

/// Java `lookMessageByOffset`: the record at a commit-log offset.
pub fn look_message_by_offset(store: &MessageStore, phys_offset: i64) -> Option<StoredMessage> {
    with_record(store, phys_offset, StoredMessage::from_record)
}

/// Java `deletePrepareMessage`: writes the op record for a finished half message. Java queues
/// these and writes one record per `transactionOpBatchInterval`; rmqd writes it at once (the
/// same record format, one offset per record), so nothing finished is lost in a crash.
pub async fn delete_prepare_message(ctx: &BrokerContext, half: &StoredMessage) -> bool {
    let op = transaction_op(ctx.store_host, half.queue_id, half.queue_offset);
    let result: PutMessageResult = ctx.store.put_message(&op).wait().await;
    if !result.is_ok() {
        tracing::error!(
            half_queue = half.queue_id,
            half_offset = half.queue_offset,
            status = ?result.status,
            "transaction op record write failed"
        );
    }
    result.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_message_keeps_real_topic_queue_and_transaction_id() {
        let mut p = Properties::new();
        p.insert(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, "U1");
        p.insert("TRAN_MSG", "true");
        let (t, q, f) = to_half_message(&mut p, "Orders", 3, 0x4 | 0x2);
        assert_eq!((t.as_str(), q, f), (RMQ_SYS_TRANS_HALF_TOPIC, 0, 0x2));
        assert_eq!(p.get(PROPERTY_REAL_TOPIC), Some("Orders"));
        assert_eq!(p.get(PROPERTY_REAL_QUEUE_ID), Some("3"));
        assert_eq!(p.get(PROPERTY_TRANSACTION_ID), Some("U1"));
        assert_eq!(p.get("TRAN_MSG"), Some("true"));
    }

    #[test]
    fn op_body_round_trips_and_bad_entries_read_as_minus_one() {
        assert_eq!(op_body(17), "17,");
        assert_eq!(parse_op_body(b"17,18,"), vec![17, 18]);
        assert_eq!(parse_op_body(b"5,x,"), vec![5, -1]);
        assert_eq!(parse_op_body(b""), Vec::<i64>::new());
        assert_eq!(op_properties(), "TAGS\u{1}d\u{2}WAIT\u{1}true\u{2}");
    }

    #[test]
    fn immunity_rules_differ_between_end_transaction_and_check_as_in_java() {
        assert_eq!(immunity_time_for_end("1", 6000), 6000);
        assert_eq!(immunity_time_for_end("10", 6000), 10_000);
        assert_eq!(immunity_time_for_end("x", 6000), 6000);
        assert_eq!(immunity_time_for_check("1", 6000), 1000);
        assert_eq!(immunity_time_for_check("x", 6000), 6000);
    }
}
