//! GET_MIN_OFFSET (31) request and response headers.

use super::shared::{OffsetResponseHeader, QueueRequestHeader};

/// `GetMinOffsetRequestHeader`.
///
/// ```text
/// key      type     req
/// topic    String   Y
/// queueId  Integer  Y
/// + rpc    bname ns nsd oway lo (RpcRequestHeader)
/// ```
pub type GetMinOffsetRequestHeader = QueueRequestHeader;

/// `GetMinOffsetResponseHeader`.
///
/// ```text
/// key     type     req
/// offset  Long     Y
/// ```
pub type GetMinOffsetResponseHeader = OffsetResponseHeader;
