//! NOTIFY_CONSUMER_IDS_CHANGED (40) header, broker → client, oneway.

use super::shared::ConsumerGroupRequestHeader;

/// `NotifyConsumerIdsChangedRequestHeader`.
///
/// ```text
/// key            type     req
/// consumerGroup  String   Y
/// + rpc          bname ns nsd oway lo (RpcRequestHeader)
/// ```
pub type NotifyConsumerIdsChangedRequestHeader = ConsumerGroupRequestHeader;
