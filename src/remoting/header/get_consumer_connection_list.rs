//! GET_CONSUMER_CONNECTION_LIST (203) request header.

use super::shared::ConsumerGroupRequestHeader;

/// `GetConsumerConnectionListRequestHeader`.
///
/// ```text
/// key            type     req
/// consumerGroup  String   Y
/// + rpc          bname ns nsd oway lo (RpcRequestHeader)
/// ```
pub type GetConsumerConnectionListRequestHeader = ConsumerGroupRequestHeader;
