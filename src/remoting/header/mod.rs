//! Typed custom headers. Each header converts to and from `extFields` with Java's rules: every
//! value a string; integers in decimal; booleans `"true"`/`"false"` (anything else reads as false);
//! absent fields stay `None`. Reading is lenient (surrounding whitespace, `+`), writing is exact.

pub mod ack_message;
pub mod check_transaction_state;
pub mod consume_message_directly;
pub mod consumer_send_msg_back;
pub mod create_topic;
pub mod delete_subscription_group;
pub mod delete_topic;
pub mod end_transaction;
pub mod get_all_subscription_group;
pub mod get_all_topic_config;
pub mod get_broker_config;
pub mod get_consume_stats;
pub mod get_consumer_connection_list;
pub mod get_consumer_list_by_group;
pub mod get_consumer_running_info;
pub mod get_earliest_msg_storetime;
pub mod get_max_offset;
pub mod get_min_offset;
pub mod get_producer_connection_list;
pub mod get_topic_config;
pub mod get_topic_stats_info;
pub mod namesrv;
pub mod notification;
pub mod notify_consumer_ids_changed;
pub mod pop_lite;
pub mod pop_message;
pub mod pull_message;
pub mod query_consume_queue;
pub mod query_consumer_offset;
pub mod query_message;
pub mod query_topic_consume_by_who;
pub mod recall_message;
pub mod reply_message;
pub mod reset_offset;
pub mod rpc;
pub mod search_offset;
pub mod send_message;
pub mod send_message_response;
pub mod shared;
pub mod unregister_client;
pub mod update_consumer_offset;
pub mod view_broker_stats_data;
pub mod view_message;

pub use check_transaction_state::CheckTransactionStateRequestHeader;
pub use consume_message_directly::ConsumeMessageDirectlyResultRequestHeader;
pub use consumer_send_msg_back::ConsumerSendMsgBackRequestHeader;
pub use create_topic::CreateTopicRequestHeader;
pub use delete_subscription_group::DeleteSubscriptionGroupRequestHeader;
pub use delete_topic::DeleteTopicRequestHeader;
pub use end_transaction::EndTransactionRequestHeader;
pub use get_all_subscription_group::{
    GetAllSubscriptionGroupRequestHeader, GetAllSubscriptionGroupResponseHeader,
};
pub use get_all_topic_config::{GetAllTopicConfigRequestHeader, GetAllTopicConfigResponseHeader};
pub use get_broker_config::GetBrokerConfigResponseHeader;
pub use get_consume_stats::GetConsumeStatsRequestHeader;
pub use get_consumer_connection_list::GetConsumerConnectionListRequestHeader;
pub use get_consumer_list_by_group::GetConsumerListByGroupRequestHeader;
pub use get_consumer_running_info::GetConsumerRunningInfoRequestHeader;
pub use get_earliest_msg_storetime::{
    GetEarliestMsgStoretimeRequestHeader, GetEarliestMsgStoretimeResponseHeader,
};
pub use get_max_offset::{GetMaxOffsetRequestHeader, GetMaxOffsetResponseHeader};
pub use get_min_offset::{GetMinOffsetRequestHeader, GetMinOffsetResponseHeader};
pub use get_producer_connection_list::GetProducerConnectionListRequestHeader;
pub use get_topic_config::GetTopicConfigRequestHeader;
pub use get_topic_stats_info::GetTopicStatsInfoRequestHeader;
pub use notify_consumer_ids_changed::NotifyConsumerIdsChangedRequestHeader;
pub use pull_message::{PullMessageRequestHeader, PullMessageResponseHeader};
pub use query_consume_queue::QueryConsumeQueueRequestHeader;
pub use query_consumer_offset::{
    QueryConsumerOffsetRequestHeader, QueryConsumerOffsetResponseHeader,
};
pub use query_message::{QueryMessageRequestHeader, QueryMessageResponseHeader};
pub use query_topic_consume_by_who::QueryTopicConsumeByWhoRequestHeader;
pub use reply_message::ReplyMessageRequestHeader;
pub use reset_offset::ResetOffsetRequestHeader;
pub use rpc::RpcRequestHeader;
pub use search_offset::{BoundaryType, SearchOffsetRequestHeader, SearchOffsetResponseHeader};
pub use send_message::{SendMessageRequestHeader, SendMessageRequestHeaderV2};
pub use send_message_response::SendMessageResponseHeader;
pub use shared::{
    ConsumerGroupRequestHeader, OffsetResponseHeader, QueueRequestHeader, TopicRequestHeader,
};
pub use unregister_client::UnregisterClientRequestHeader;
pub use update_consumer_offset::UpdateConsumerOffsetRequestHeader;
pub use view_message::ViewMessageRequestHeader;

use super::command::ExtFields;
use super::error::RemotingError;

/// A typed header carried in `extFields`.
pub trait CommandHeader: Sized {
    /// Writes every non-null field under its Java field name.
    fn write_to(&self, ext: &mut ExtFields);
    /// Reads the header; a missing required field or an unparsable number is an error.
    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError>;
}

/// Checked reads of `extFields` values, naming the field on failure.
pub trait ExtRead {
    fn str_opt(&self, key: &'static str) -> Option<&str>;

    fn string(&self, key: &'static str) -> Result<String, RemotingError> {
        self.str_opt(key)
            .map(str::to_string)
            .ok_or_else(|| missing(key))
    }

    fn string_opt(&self, key: &'static str) -> Option<String> {
        self.str_opt(key).map(str::to_string)
    }

    fn i32(&self, key: &'static str) -> Result<i32, RemotingError> {
        self.i32_opt(key)?.ok_or_else(|| missing(key))
    }

    fn i32_opt(&self, key: &'static str) -> Result<Option<i32>, RemotingError> {
        self.str_opt(key).map(|v| parse_num(key, v)).transpose()
    }

    fn i64(&self, key: &'static str) -> Result<i64, RemotingError> {
        self.i64_opt(key)?.ok_or_else(|| missing(key))
    }

    fn i64_opt(&self, key: &'static str) -> Result<Option<i64>, RemotingError> {
        self.str_opt(key).map(|v| parse_num(key, v)).transpose()
    }

    /// Java's `Boolean.parseBoolean`: true only for a case-insensitive `"true"`.
    fn bool_opt(&self, key: &'static str) -> Option<bool> {
        self.str_opt(key)
            .map(|v| v.trim().eq_ignore_ascii_case("true"))
    }

    fn bool_or(&self, key: &'static str, default: bool) -> bool {
        self.bool_opt(key).unwrap_or(default)
    }
}

impl ExtRead for ExtFields {
    fn str_opt(&self, key: &'static str) -> Option<&str> {
        self.get(key)
    }
}

fn missing(key: &'static str) -> RemotingError {
    RemotingError::Header {
        field: key,
        what: "missing".to_string(),
    }
}

fn parse_num<T: std::str::FromStr>(key: &'static str, v: &str) -> Result<T, RemotingError> {
    let t = v.trim();
    let t = t.strip_prefix('+').unwrap_or(t);
    t.parse().map_err(|_| RemotingError::Header {
        field: key,
        what: format!("{v:?} is not a number"),
    })
}

/// Writes optional fields into `extFields` with Java's `toString()` forms.
pub trait ExtWrite {
    fn put<V: ToString>(&mut self, key: &str, value: V);

    fn put_opt<V: ToString>(&mut self, key: &str, value: &Option<V>) {
        if let Some(v) = value {
            self.put(key, v.to_string());
        }
    }
}

impl ExtWrite for ExtFields {
    fn put<V: ToString>(&mut self, key: &str, value: V) {
        self.insert(key, value.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_numbers_and_java_booleans() {
        let ext: ExtFields = [("q", " 7"), ("o", "+12"), ("b", "TRUE"), ("x", "yes")]
            .into_iter()
            .collect();
        assert_eq!(ext.i32("q").unwrap(), 7);
        assert_eq!(ext.i64("o").unwrap(), 12);
        assert_eq!(ext.bool_opt("b"), Some(true));
        assert_eq!(ext.bool_opt("x"), Some(false));
        assert!(ext.i32("missing").is_err());
    }
}
