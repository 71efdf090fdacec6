//! DELETE_TOPIC_IN_BROKER (215) request header.

use super::shared::TopicRequestHeader;

/// `DeleteTopicRequestHeader`.
///
/// ```text
/// key    type     req
/// topic  String   Y
/// + rpc  bname ns nsd oway lo (RpcRequestHeader)
/// ```
pub type DeleteTopicRequestHeader = TopicRequestHeader;
