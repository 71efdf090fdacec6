//! QUERY_TOPIC_CONSUME_BY_WHO (300) request header; body `GroupList`.

use super::shared::TopicRequestHeader;

/// `QueryTopicConsumeByWhoRequestHeader`.
///
/// ```text
/// key    type     req
/// topic  String   Y
/// + rpc  bname ns nsd oway lo (RpcRequestHeader)
/// ```
pub type QueryTopicConsumeByWhoRequestHeader = TopicRequestHeader;
