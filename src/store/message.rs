//! The store's message model: what a put takes, what it answers, and the status values Java's
//! `PutMessageStatus` / `AppendMessageStatus` define.

use std::net::SocketAddr;

use bytes::Bytes;

use crate::store::commitlog::record::{self, Decoded};
pub use crate::store::commitlog::record::{RecordHeader, RecordView};

/// SYSFLAG bits the store looks at (Java `MessageSysFlag`).
pub mod sysflag {
    pub const COMPRESSED: i32 = 0x1;
    pub const MULTI_TAGS: i32 = 0x2;
    pub const TRANSACTION_MASK: i32 = 0xC;
    pub const TRANSACTION_NOT_TYPE: i32 = 0x0;
    pub const TRANSACTION_PREPARED_TYPE: i32 = 0x4;
    pub const TRANSACTION_COMMIT_TYPE: i32 = 0x8;
    pub const TRANSACTION_ROLLBACK_TYPE: i32 = 0xC;
    pub const BORNHOST_V6: i32 = 0x10;
    pub const STOREHOST_V6: i32 = 0x20;
}

/// One message to append (the broker has already validated topic, permissions and properties,
/// and tells the store what it learned from them, so the store does not scan them again).
#[derive(Debug, Clone)]
pub struct MessageInput {
    pub topic: String,
    pub queue_id: i32,
    /// User flag (FLAG field).
    pub flag: i32,
    /// SYSFLAG; the host-family bits 0x10/0x20 are set by the store from the addresses.
    pub sys_flag: i32,
    pub body: Bytes,
    /// Encoded properties (`k 0x01 v 0x02 ...`).
    pub properties: String,
    /// The TAGS hash (0 without TAGS). A put that dispatches its own record writes it into the
    /// consume-queue unit; the dispatch thread and recovery derive the same value from the stored
    /// record (and `SCHEDULE_TOPIC_XXXX` units hold the delivery time instead).
    pub tags_code: i64,
    /// WAIT is not `false`: under SYNC_FLUSH the put waits for the flush.
    pub wait_store_msg_ok: bool,
    pub born_timestamp: i64,
    pub born_host: SocketAddr,
    pub store_host: SocketAddr,
    pub reconsume_times: i32,
    pub prepared_transaction_offset: i64,
}

/// A classic batch (`SEND_BATCH_MESSAGE`): `body` is the client-encoded concatenation of inner
/// messages; each is stored as its own record sharing the header fields below.
#[derive(Debug, Clone)]
pub struct MessageBatchInput {
    pub topic: String,
    pub queue_id: i32,
    pub sys_flag: i32,
    pub body: Bytes,
    /// Batch-level properties appended to every inner record's properties (5.0–5.3.3 behaviour,
    /// e.g. `CLUSTER`); empty to store inner properties unchanged (Java dev head).
    pub batch_properties: String,
    pub born_timestamp: i64,
    pub born_host: SocketAddr,
    pub store_host: SocketAddr,
    pub reconsume_times: i32,
}

/// Java `PutMessageStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum PutMessageStatus {
    PUT_OK,
    FLUSH_DISK_TIMEOUT,
    FLUSH_SLAVE_TIMEOUT,
    SLAVE_NOT_AVAILABLE,
    SERVICE_NOT_AVAILABLE,
    CREATE_MAPPED_FILE_FAILED,
    MESSAGE_ILLEGAL,
    PROPERTIES_SIZE_EXCEEDED,
    OS_PAGE_CACHE_BUSY,
    UNKNOWN_ERROR,
}

impl PutMessageStatus {
    /// The record is in the commit log (a flush or replica that timed out leaves it there).
    pub fn is_stored(self) -> bool {
        use PutMessageStatus::*;
        matches!(
            self,
            PUT_OK | FLUSH_DISK_TIMEOUT | FLUSH_SLAVE_TIMEOUT | SLAVE_NOT_AVAILABLE
        )
    }
}

/// Java `AppendMessageStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum AppendMessageStatus {
    PUT_OK,
    END_OF_FILE,
    MESSAGE_SIZE_EXCEEDED,
    PROPERTIES_SIZE_EXCEEDED,
    UNKNOWN_ERROR,
}

/// Java `AppendMessageResult`: where the message (or batch) landed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppendMessageResult {
    pub status: AppendMessageStatus,
    /// Commit-log offset of the first record.
    pub wrote_offset: i64,
    /// Bytes of all records written.
    pub wrote_bytes: i32,
    /// Offset msgId(s): hex of store host + physical offset, comma-joined for batches.
    pub msg_id: String,
    pub store_timestamp: i64,
    /// Queue offset of the first record.
    pub logics_offset: i64,
    pub msg_num: i32,
}

/// Java `PutMessageResult`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PutMessageResult {
    pub status: PutMessageStatus,
    pub append: Option<AppendMessageResult>,
}

impl PutMessageResult {
    pub fn is_ok(&self) -> bool {
        self.status == PutMessageStatus::PUT_OK
    }
}

/// Java offset msgId: upper-case hex of store IP (4 or 16 bytes) + i32 port + i64 offset.
pub fn offset_msg_id(store_host: &SocketAddr, phys_offset: i64) -> String {
    crate::common::msg_id::encode_msg_id(*store_host, phys_offset)
}

/// The record at the start of `bytes` (a whole record, as a lookup or a pull returns it), decoded
/// without a CRC check; `None` when the bytes are not one.
pub fn decode_record(bytes: &[u8]) -> Option<RecordView<'_>> {
    match record::decode(bytes, false) {
        Ok(Decoded::Record(rec)) => Some(rec),
        _ => None,
    }
}

/// One record in the commit-log layout, as Java's `MessageDecoder.encode(msgExt, false)` makes
/// it for a message already stored: with its queue offset, physical offset and store timestamp.
/// `None` when the properties exceed 32767 bytes (such a message cannot have been stored).
#[allow(clippy::too_many_arguments)]
pub fn encode_record(
    header: &RecordHeader<'_>,
    body: &[u8],
    topic: &str,
    properties: &str,
    queue_offset: i64,
    phys_offset: i64,
    store_timestamp: i64,
) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    let v2 = topic.len() > i8::MAX as usize;
    let pp = record::encode_into(
        &mut buf,
        header,
        body,
        topic.as_bytes(),
        properties.as_bytes(),
        &[],
        v2,
    )
    .ok()?;
    record::patch(&mut buf, &pp, queue_offset, phys_offset, store_timestamp);
    Some(buf)
}

/// Appends the 8- or 20-byte host encoding (address bytes + i32 port).
pub fn push_host(buf: &mut Vec<u8>, addr: &SocketAddr) {
    match addr {
        SocketAddr::V4(a) => buf.extend_from_slice(&a.ip().octets()),
        SocketAddr::V6(a) => buf.extend_from_slice(&a.ip().octets()),
    }
    buf.extend_from_slice(&(addr.port() as i32).to_be_bytes());
}

/// Splits a client-encoded batch body (the one decoder lives in `common::batch`).
pub use crate::common::batch::decode_batch;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_msg_id_matches_reference() {
        let host: SocketAddr = "192.168.1.20:10911".parse().unwrap();
        assert_eq!(
            offset_msg_id(&host, 0x400000A0),
            "C0A8011400002A9F00000000400000A0"
        );
    }
}
