//! GET_TOPIC_CONFIG (351) request header; body `TopicConfigAndQueueMapping`.

use super::shared::TopicRequestHeader;

/// `GetTopicConfigRequestHeader`.
///
/// ```text
/// key    type     req
/// topic  String   Y
/// + rpc  bname ns nsd oway lo (RpcRequestHeader)
/// ```
pub type GetTopicConfigRequestHeader = TopicRequestHeader;
