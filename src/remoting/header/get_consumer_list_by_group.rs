//! GET_CONSUMER_LIST_BY_GROUP (38) request header.

use super::shared::ConsumerGroupRequestHeader;

/// `GetConsumerListByGroupRequestHeader`.
///
/// ```text
/// key            type     req
/// consumerGroup  String   Y
/// + rpc          bname ns nsd oway lo (RpcRequestHeader)
/// ```
pub type GetConsumerListByGroupRequestHeader = ConsumerGroupRequestHeader;
