//! GET_TOPIC_STATS_INFO (202) request header; body `TopicStatsTable`.

use super::shared::TopicRequestHeader;

/// `GetTopicStatsInfoRequestHeader`.
///
/// ```text
/// key    type     req
/// topic  String   Y
/// + rpc  bname ns nsd oway lo (RpcRequestHeader)
/// ```
pub type GetTopicStatsInfoRequestHeader = TopicRequestHeader;
